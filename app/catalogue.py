"""The algorithm catalogue of the dashboard: the widgets the page shows for each estimator's
constructor parameters, and the order in which a task lists its estimators.

What an estimator is -- its task, label, class, non-private baseline -- is described once, in
the algorithm registry :mod:`privclust.core.algorithms`; every registry entry with a task is
offered here (an entry the page does not order comes last in its task). The rest is read from
the estimator itself, so each fact has one home: whether it is private (a
:class:`~privclust.core.PrivateEstimator`), its privacy kind for given settings (the kind of
:meth:`~privclust.core.PrivateEstimator.public_plan`, e.g. "none" for a Gibbs chain started from
a non-private solution), the attributes a release carries
(:meth:`~privclust.core.PrivateEstimator.released_attributes`), and whether it takes epsilon,
delta, a public box or a task parameter (its constructor's signature).
"""

import inspect
from dataclasses import dataclass, field
from functools import cached_property

import param

from privclust.core import algorithms as registry
from privclust.core.estimator import PrivateEstimator

TASKS = {
    "subspace": "Subspace clustering",
    "kmeans": "k-means",
    "onecluster": "Small cluster (1-cluster)",
    "cocluster": "Co-clustering",
}

# the task-level settings the sidebar shows once for every algorithm of a task
TASK_PARAMS = ("n_clusters", "subspace_dim", "n_row_clusters", "n_col_clusters", "n_points")

KIND_TEXT = {
    "pure": "pure ε-DP: any one record changes the probability of any output by at most a "
    "factor e^ε.",
    "approx": "(ε, δ)-DP: like pure ε-DP, except with a small probability δ.",
    "asymptotic": "asymptotic only: ε-DP holds for the sampler's limit distribution, not exactly "
    "after a finite number of iterations.",
    "cell": "cell-level ε-DP: protects one cell (one count) of the matrix, not a whole row.",
    "none": "not private: a baseline computed on the raw data.",
}

KIND_LABEL = {"cell": "cell-level", "none": "non-private"}

# each task's default private algorithm (else the first private one listed): the one that
# visibly works on the task's demo preset at the default epsilon (tests/app/test_defaults.py)
DEFAULT_ALGORITHM = {"subspace": "sulq"}

# the shape a kind is planned for when no data is loaded (the kind does not depend on it)
NOMINAL_SHAPE = (1000, 10)


@dataclass(frozen=True)
class AlgorithmSpec:
    """One estimator as the page offers it: ``params`` maps constructor names to ``param``
    Parameters (the widgets); ``fixed`` are constructor values the page does not show."""

    key: str
    label: str
    task: str
    estimator: type
    params: dict = field(default_factory=dict, hash=False, compare=False)
    fixed: dict = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def registered(cls, key, params=None):
        """The spec of registry entry ``key`` (:mod:`privclust.core.algorithms`) with the
        widgets ``params``."""
        entry = registry.get(key)
        return cls(
            key,
            entry.label,
            entry.task,
            entry.cls,
            params=dict(params or {}),
            fixed=dict(entry.fixed),
        )

    @cached_property
    def _signature(self):
        return set(inspect.signature(self.estimator).parameters)

    @property
    def private(self):
        return issubclass(self.estimator, PrivateEstimator)

    @property
    def task_params(self):
        return tuple(p for p in TASK_PARAMS if p in self._signature)

    @property
    def uses_epsilon(self):
        return "epsilon" in self._signature

    @property
    def uses_delta(self):
        return "delta" in self._signature

    @property
    def uses_box(self):
        """Does the estimator take a public box ``bounds=(lower, upper)``?"""
        return "bounds" in self._signature

    def build(self, settings, random_state=None, ledger=None):
        """The estimator for a flat settings dict (a missing setting raises KeyError)."""
        kwargs = dict(self.fixed)
        kwargs.update({name: settings[name] for name in self.task_params + tuple(self.params)})
        if self.uses_epsilon:
            kwargs["epsilon"] = settings["epsilon"]
        if self.uses_delta:
            kwargs["delta"] = settings["delta"]
        if self.uses_box:
            kwargs["bounds"] = (settings["lower"], settings["upper"])
        kwargs["random_state"] = random_state
        if self.private:
            kwargs["ledger"] = ledger
        return self.estimator(**kwargs)

    def kind(self, settings, shape=NOMINAL_SHAPE):
        """The privacy kind of these settings, from the estimator's plan ("cell" for a
        cell-level relation, "none" when a setting voids the guarantee). Raises ValueError
        when the settings are invalid for data of ``shape``."""
        if not self.private:
            return "none"
        plan = self.build(settings).public_plan(shape)
        return "cell" if plan.neighbouring == "cell" else plan.kind

    def title(self, kind):
        """The label with its privacy kind, as the algorithm list shows it."""
        return f"{self.label} ({KIND_LABEL.get(kind, kind)})"

    def parameterized(self):
        """A fresh ``param.Parameterized`` holding this estimator's widget parameters."""
        cls = param.parameterized_class(
            f"{self.key}_params", {name: _copy_parameter(p) for name, p in self.params.items()}
        )
        return cls()


def _copy_parameter(p):
    """Parameters cannot be shared between classes: rebuild one from its spec."""
    kw = {"default": p.default, "doc": p.doc, "label": p.label, "allow_None": p.allow_None}
    if isinstance(p, param.Selector):
        return type(p)(objects=list(p.objects), **kw)
    if isinstance(p, param.Number):
        return type(p)(bounds=p.bounds, softbounds=p.softbounds, step=p.step, **kw)
    return type(p)(**kw)


def _int(default, lo, hi, label, doc=""):
    return param.Integer(default, bounds=(lo, hi), label=label, doc=doc)


def _preset(doc):
    """The named solver settings (privclust.core.subspace.solvers.PRESETS); None: general."""
    return param.Selector(
        default=None, objects=[None, "faces", "motion"], label="preset (None: general)", doc=doc
    )


def _grid_step():
    """Empty (None): the estimator's default, the box's largest side / 2^16 (raised to what
    float64 resolves), so a box per column of any scale works without touching it."""
    return param.Number(
        None,
        bounds=(1e-12, None),
        allow_None=True,
        label="public grid step (empty: box side / 2^16)",
    )


# the widgets of each registry entry's constructor parameters (none: only the task's settings)
WIDGETS = {
    "ssc": {
        "preset": _preset(
            "SSC: faces = sparse errors (Elhamifar & Vidal 2013, faces); motion = affine subspaces"
        )
    },
    "lrr": {"preset": _preset("LRR: the lambda of Liu et al. 2013 for faces or motion")},
    "sample_aggregate": {
        "solver": param.Selector(
            default="tsc", objects=["tsc", "ssc", "lrr", "kplanes"], label="solver on each subset"
        )
    },
    "gibbs": {
        "n_iter": _int(200, 10, 20000, "iterations"),
        "n_chains": _int(3, 1, 8, "chains"),
        "record_every": _int(10, 1, 1000, "record every"),
        "init": param.Selector(
            default="random",
            objects=["random", "ssc", "lrr", "tsc", "kplanes"],
            label="initialisation",
        ),
    },
    "sulq": {"n_iter": _int(10, 1, 100, "iterations")},
    "compressive": {
        "sketch_size": _int(500, 10, 20000, "sketch size m"),
        "mechanism": param.Selector(
            default="laplace", objects=["laplace", "gaussian"], label="noise (gaussian: uses δ)"
        ),
        "signature": param.Selector(
            default="complex_exp", objects=["complex_exp", "quantized"], label="signature"
        ),
        "n_replicates": _int(3, 1, 10, "decoder replicates"),
    },
    "dplloyd": {
        "init": param.Selector(
            default="private_box",
            objects=["private_box", "sphere_packing", "uniform"],
            label="initialisation",
        )
    },
    "onecluster": {"grid_step": _grid_step()},
    "kballs": {"grid_step": _grid_step()},
    "dptaucc": {
        "n_iter": _int(4, 1, 50, "iterations I"),
        "row_cap": param.Integer(
            None,
            bounds=(1, 10**9),
            allow_None=True,
            label="public cap L on a row's total count",
            doc="rows are clipped to total count L; a record-level ledger needs it (one "
            "record costs 2L ceil(1/c) x ε) and refuses the release without it",
        ),
    },
}

# the order in which the page lists a task's estimators (the non-private reference first)
ORDER = {
    "subspace": ["kplanes", "tsc", "ssc", "lrr", "sample_aggregate", "gibbs", "sulq"],
    "kmeans": ["kmeans", "compressive", "dplloyd", "lsh_kmeans", "balcan_kmeans"],
    "onecluster": ["smallest_ball", "onecluster", "kballs"],
    "cocluster": ["fasttaucc", "dptaucc"],
}


def _ordered(task):
    order = ORDER.get(task, [])
    return sorted(
        registry.for_task(task), key=lambda a: order.index(a.key) if a.key in order else len(order)
    )


SPECS = [
    AlgorithmSpec.registered(a.key, WIDGETS.get(a.key)) for task in TASKS for a in _ordered(task)
]


def by_key(key, specs=None):
    for spec in SPECS if specs is None else specs:
        if spec.key == key:
            return spec
    raise KeyError(f"unknown algorithm {key!r}")


def for_task(task, specs=None):
    return [s for s in (SPECS if specs is None else specs) if s.task == task]


def for_estimator(name, specs=None):
    """The spec whose estimator class is called ``name`` (a stored release names its class),
    or None."""
    for spec in SPECS if specs is None else specs:
        if spec.estimator.__name__ == name:
            return spec
    return None


def private_classes(specs=None):
    """The private estimator classes of the catalogue (the operator's code, which the Curator
    may run besides privclust.core's own)."""
    return tuple({s.estimator for s in (SPECS if specs is None else specs) if s.private})
