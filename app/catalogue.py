"""The algorithm catalogue of the dashboard: which estimator each task offers, under which label,
and which of its constructor parameters the page shows as widgets.

Everything else is read from the estimator itself, so each fact has one home: whether it is
private (a :class:`~privclust.core.PrivateEstimator`), its privacy kind for given settings (the
kind of :meth:`~privclust.core.PrivateEstimator.public_plan`, e.g. "none" for a Gibbs chain
started from a non-private solution), the attributes a release carries
(:meth:`~privclust.core.PrivateEstimator.released_attributes`), and whether it takes epsilon,
delta, a public box or a task parameter (its constructor's signature).
"""
from dataclasses import dataclass, field
from functools import cached_property
import inspect

import param
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans

from privclust import core
from privclust.core.privacy.estimator import PrivateEstimator

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


class SmallestBall(BaseEstimator):
    """The non-private reference of the 1-cluster task: the smallest ball holding ``n_points``
    records, to within a factor of 2 (Nissim, Stemmer & Vadhan, PODS 2016, Sec. 1). An
    estimator, so that the Curator's data owner path can clone it."""

    def __init__(self, n_points, random_state=None):
        self.n_points = n_points
        self.random_state = random_state

    def fit(self, X):
        from privclust.core.onecluster import smallest_ball_2approx
        self.center_, self.radius_ = smallest_ball_2approx(X, self.n_points)
        return self


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
        cls = param.parameterized_class(f"{self.key}_params", {
            name: _copy_parameter(p) for name, p in self.params.items()})
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
    return param.Selector(default=None, objects=[None, "faces", "motion"],
                          label="preset (None: general)", doc=doc)


def _grid_step():
    """Empty (None): the estimator's default, the box's largest side / 2^16 (raised to what
    float64 resolves), so a box per column of any scale works without touching it."""
    return param.Number(None, bounds=(1e-12, None), allow_None=True,
                        label="public grid step (empty: box side / 2^16)")


SPECS = [
    # subspace clustering (Wang, Wang & Singh, NIPS 2015)
    AlgorithmSpec("kplanes", "k-plane clustering", "subspace", core.KPlanes),
    AlgorithmSpec("tsc", "Thresholding subspace clustering", "subspace",
                  core.ThresholdSubspaceClustering),
    AlgorithmSpec("ssc", "Sparse subspace clustering", "subspace", core.SparseSubspaceClustering,
                  params={"preset": _preset("SSC: faces = sparse errors (Elhamifar & Vidal "
                                            "2013, faces); motion = affine subspaces")}),
    AlgorithmSpec("lrr", "Low-rank representation", "subspace", core.LowRankRepresentation,
                  params={"preset": _preset("LRR: the lambda of Liu et al. 2013 for faces or "
                                            "motion")}),
    AlgorithmSpec("sample_aggregate", "Sample-and-aggregate", "subspace",
                  core.SampleAggregateSubspaceClustering,
                  params={"solver": param.Selector(default="tsc",
                                                   objects=["tsc", "ssc", "lrr", "kplanes"],
                                                   label="solver on each subset")}),
    AlgorithmSpec("gibbs", "Gibbs sampler", "subspace", core.GibbsSubspaceClustering,
                  params={"n_iter": _int(200, 10, 20000, "iterations"),
                          "n_chains": _int(3, 1, 8, "chains"),
                          "record_every": _int(10, 1, 1000, "record every"),
                          "init": param.Selector(default="random",
                                                 objects=["random", "ssc", "lrr", "tsc",
                                                          "kplanes"],
                                                 label="initialisation")}),
    AlgorithmSpec("sulq", "SuLQ k-planes", "subspace", core.SuLQSubspaceClustering,
                  params={"n_iter": _int(10, 1, 100, "iterations")}),
    # k-means (Schellekens et al., SPARS 2019)
    AlgorithmSpec("kmeans", "Lloyd k-means (scikit-learn)", "kmeans", KMeans,
                  fixed={"n_init": 3}),
    AlgorithmSpec("compressive", "Compressive k-means (DP sketch)", "kmeans",
                  core.CompressiveKMeans,
                  params={"sketch_size": _int(500, 10, 20000, "sketch size m"),
                          "mechanism": param.Selector(default="laplace",
                                                      objects=["laplace", "gaussian"],
                                                      label="noise (gaussian: uses δ)"),
                          "signature": param.Selector(default="complex_exp",
                                                      objects=["complex_exp", "quantized"],
                                                      label="signature"),
                          "n_replicates": _int(3, 1, 10, "decoder replicates")}),
    AlgorithmSpec("dplloyd", "DPLloyd", "kmeans", core.DPLloyd,
                  params={"n_iter": _int(5, 1, 50, "iterations"),
                          "init": param.Selector(default="uniform",
                                                 objects=["uniform", "sphere_packing"],
                                                 label="initialisation")}),
    # a small cluster (Nissim, Stemmer & Vadhan, PODS 2016)
    AlgorithmSpec("smallest_ball", "smallest ball holding t points (2-approx.)", "onecluster",
                  SmallestBall),
    AlgorithmSpec("onecluster", "1-cluster (GoodRadius + GoodCenter)", "onecluster",
                  core.OneCluster, params={"grid_step": _grid_step()}),
    AlgorithmSpec("kballs", "k balls (repeated 1-cluster)", "onecluster", core.PrivateKBalls,
                  params={"grid_step": _grid_step()}),
    # co-clustering (Battaglia & Pensa, SDM 2025)
    AlgorithmSpec("fasttaucc", "Fast-τCC", "cocluster", core.TauCoClustering),
    AlgorithmSpec("dptaucc", "DP-τCC", "cocluster", core.DPTauCoClustering,
                  params={"n_iter": _int(4, 1, 50, "iterations I"),
                          "row_cap": param.Integer(
                              None, bounds=(1, 10**9), allow_None=True,
                              label="public cap L on a row's total count",
                              doc="rows are clipped to total count L; a record-level ledger "
                                  "needs it (one record costs 2L ceil(1/c) x ε) and refuses "
                                  "the release without it")}),
]

BASELINE = {"subspace": "kplanes", "kmeans": "kmeans", "onecluster": "smallest_ball",
            "cocluster": "fasttaucc"}


def by_key(key, specs=None):
    for spec in (SPECS if specs is None else specs):
        if spec.key == key:
            return spec
    raise KeyError(f"unknown algorithm {key!r}")


def for_task(task, specs=None):
    return [s for s in (SPECS if specs is None else specs) if s.task == task]


def for_estimator(name, specs=None):
    """The spec whose estimator class is called ``name`` (a stored release names its class),
    or None."""
    for spec in (SPECS if specs is None else specs):
        if spec.estimator.__name__ == name:
            return spec
    return None


def private_classes(specs=None):
    """The private estimator classes of the catalogue (the operator's code, which the Curator
    may run besides privclust.core's own)."""
    return tuple({s.estimator for s in (SPECS if specs is None else specs) if s.private})
