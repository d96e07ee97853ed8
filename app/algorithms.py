"""Algorithm registry of the dashboard: for each task, its estimators (private and baseline), their
privacy kind and the parameters the page shows as widgets (named exactly as
the estimators' constructor parameters).

No algorithm code lives here: a spec names a class of :mod:`privclust.core` (or scikit-learn for
the k-means baseline) and declares the widget parameters with the exact constructor names. A spec
whose class is not importable yet is simply reported unavailable, so families plug in as they land.
"""
from dataclasses import dataclass, field
from importlib import import_module
import inspect

import param
from sklearn.base import BaseEstimator

TASKS = {
    "subspace": "Subspace clustering",
    "kmeans": "k-means",
    "onecluster": "Small cluster (1-cluster)",
    "cocluster": "Co-clustering",
}

KIND_TEXT = {
    "pure": "pure ε-DP: any one record changes the probability of any output by at most a "
            "factor e^ε.",
    "approx": "(ε, δ)-DP: like pure ε-DP, except with a small probability δ.",
    "asymptotic": "asymptotic only: ε-DP holds for the sampler's limit distribution, not exactly "
                  "after a finite number of iterations.",
    "cell": "cell-level ε-DP: protects one cell (one count) of the matrix, not a whole row.",
    "none": "not private: a baseline computed on the raw data.",
}


@dataclass(frozen=True)
class AlgorithmSpec:
    """One estimator as the page offers it.

    ``params`` maps constructor names to ``param`` Parameters (the widget specs); ``task_params``
    lists the shared task-level names the estimator takes (``n_clusters``...); ``bounds`` names
    the public-bound convention it takes ("box" -> ``bounds=(lo, hi)``).
    """

    key: str
    label: str
    task: str
    class_path: str
    kind: str
    params: dict = field(default_factory=dict)
    task_params: tuple = ()
    uses_epsilon: bool = True
    uses_delta: bool = False
    bounds: str = ""
    fixed: dict = field(default_factory=dict)
    private_values: dict = field(default_factory=dict)

    @property
    def private(self):
        return self.kind != "none"

    @property
    def kind_text(self):
        return KIND_TEXT[self.kind]

    def effective_kind(self, values):
        """The kind for these parameter values: "none" when a setting voids the guarantee
        (e.g. a Gibbs chain initialised by a non-private solver)."""
        for name, allowed in self.private_values.items():
            if name in values and values[name] not in allowed:
                return "none"
        return self.kind

    @property
    def title(self):
        kind = {"cell": "cell-level"}.get(self.kind, self.kind)
        return f"{self.label} ({kind})" if self.private else f"{self.label} (non-private)"

    def load_class(self):
        """The estimator class, or raise ImportError/AttributeError when not written yet."""
        module, _, name = self.class_path.rpartition(".")
        return getattr(import_module(module), name)

    def available(self):
        try:
            self.load_class()
        except (ImportError, AttributeError):
            return False
        return True

    def parameterized(self):
        """A fresh ``param.Parameterized`` holding this estimator's widget parameters."""
        cls = param.parameterized_class(f"{self.key}_params", {
            name: _copy_parameter(p) for name, p in self.params.items()})
        return cls()

    def build(self, settings, random_state=None, ledger=None):
        """Instantiate the estimator from a settings dict; keys it does not accept are dropped."""
        cls = self.load_class()
        kwargs = dict(self.fixed)
        for name in self.task_params:
            kwargs[name] = settings[name]
        for name in self.params:
            kwargs[name] = settings[name]
        if self.uses_epsilon:
            kwargs["epsilon"] = settings["epsilon"]
        if self.uses_delta:
            kwargs["delta"] = settings["delta"]
        if self.bounds == "box":
            kwargs["bounds"] = (settings["lower"], settings["upper"])
        kwargs["random_state"] = random_state
        if self.private:
            kwargs["ledger"] = ledger
        accepted = _accepted(cls)
        if accepted is not None:
            kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        return cls(**kwargs)


def _accepted(cls):
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return set(sig.parameters) - {"self"}


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


CORE = "privclust.core"
SUBSPACE_TASK = ("n_clusters", "subspace_dim")

SPECS = [
    # --- subspace clustering (WWS15)
    AlgorithmSpec("kplanes", "k-plane clustering", "subspace", f"{CORE}.KPlanes", "none",
                  task_params=SUBSPACE_TASK, uses_epsilon=False),
    AlgorithmSpec("tsc", "Thresholding subspace clustering", "subspace",
                  f"{CORE}.ThresholdSubspaceClustering", "none", task_params=SUBSPACE_TASK,
                  uses_epsilon=False),
    AlgorithmSpec("ssc", "Sparse subspace clustering", "subspace",
                  f"{CORE}.SparseSubspaceClustering", "none",
                  params={"preset": _preset("SSC: faces = sparse errors (Elhamifar & Vidal "
                                            "2013, faces); motion = affine subspaces")},
                  task_params=SUBSPACE_TASK, uses_epsilon=False),
    AlgorithmSpec("lrr", "Low-rank representation", "subspace",
                  f"{CORE}.LowRankRepresentation", "none",
                  params={"preset": _preset("LRR: the lambda of Liu et al. 2013 for faces or "
                                            "motion")},
                  task_params=SUBSPACE_TASK, uses_epsilon=False),
    AlgorithmSpec("sample_aggregate", "Sample-and-aggregate", "subspace",
                  f"{CORE}.SampleAggregateSubspaceClustering", "approx",
                  params={"solver": param.Selector(default="tsc",
                                                   objects=["tsc", "ssc", "lrr", "kplanes"],
                                                   label="solver on each subset")},
                  task_params=SUBSPACE_TASK, uses_delta=True),
    AlgorithmSpec("gibbs", "Gibbs sampler", "subspace", f"{CORE}.GibbsSubspaceClustering",
                  "asymptotic",
                  params={"n_iter": _int(200, 10, 20000, "iterations"),
                          "n_chains": _int(3, 1, 8, "chains"),
                          "record_every": _int(10, 1, 1000, "record every"),
                          "init": param.Selector(default="random",
                                                 objects=["random", "ssc", "lrr", "tsc",
                                                          "kplanes"],
                                                 label="initialisation")},
                  task_params=SUBSPACE_TASK, private_values={"init": ("random",)}),
    AlgorithmSpec("sulq", "SuLQ k-planes", "subspace", f"{CORE}.SuLQSubspaceClustering",
                  "approx", params={"n_iter": _int(10, 1, 100, "iterations")},
                  task_params=SUBSPACE_TASK, uses_delta=True),
    # --- k-means (SCH19)
    AlgorithmSpec("kmeans", "Lloyd k-means (scikit-learn)", "kmeans",
                  "sklearn.cluster.KMeans", "none", task_params=("n_clusters",),
                  uses_epsilon=False, fixed={"n_init": 3}),
    AlgorithmSpec("compressive", "Compressive k-means (DP sketch)", "kmeans",
                  f"{CORE}.CompressiveKMeans", "pure",
                  params={"sketch_size": _int(500, 10, 20000, "sketch size m"),
                          "signature": param.Selector(default="complex_exp",
                                                      objects=["complex_exp", "quantized"],
                                                      label="signature"),
                          "n_replicates": _int(3, 1, 10, "decoder replicates")},
                  task_params=("n_clusters",), bounds="box"),
    AlgorithmSpec("dplloyd", "DPLloyd", "kmeans", f"{CORE}.DPLloyd", "pure",
                  params={"n_iter": _int(5, 1, 50, "iterations"),
                          "init": param.Selector(default="uniform",
                                                 objects=["uniform", "sphere_packing"],
                                                 label="initialisation")},
                  task_params=("n_clusters",), bounds="box"),
    # --- small cluster (NSV16)
    AlgorithmSpec("smallest_ball", "smallest ball holding t points (2-approx.)", "onecluster",
                  f"{__name__}.SmallestBall", "none", task_params=("n_points",),
                  uses_epsilon=False),
    AlgorithmSpec("onecluster", "1-cluster (GoodRadius + GoodCenter)", "onecluster",
                  f"{CORE}.OneCluster", "approx",
                  params={"grid_step": param.Number(2.0 ** -16, bounds=(1e-12, 1.0),
                                                    label="public grid step")},
                  task_params=("n_points",), uses_delta=True, bounds="box"),
    AlgorithmSpec("kballs", "k balls (repeated 1-cluster)", "onecluster",
                  f"{CORE}.PrivateKBalls", "approx",
                  params={"grid_step": param.Number(2.0 ** -16, bounds=(1e-12, 1.0),
                                                    label="public grid step")},
                  task_params=("n_clusters",), uses_delta=True, bounds="box"),
    # --- co-clustering (BP25)
    AlgorithmSpec("fasttaucc", "Fast-τCC", "cocluster", f"{CORE}.TauCoClustering", "none",
                  task_params=("n_row_clusters", "n_col_clusters"), uses_epsilon=False),
    AlgorithmSpec("dptaucc", "DP-τCC", "cocluster", f"{CORE}.DPTauCoClustering", "cell",
                  params={"n_iter": _int(4, 1, 50, "iterations I"),
                          "row_cap": param.Integer(
                              None, bounds=(1, 10**9), allow_None=True,
                              label="public cap L on a row's total count",
                              doc="rows are clipped to total count L; a record-level ledger "
                                  "needs it (one record costs 2L ceil(1/c) x ε) and refuses "
                                  "the release without it")},
                  task_params=("n_row_clusters", "n_col_clusters")),
]

BASELINE = {"subspace": "kplanes", "kmeans": "kmeans", "onecluster": "smallest_ball",
            "cocluster": "fasttaucc"}


class SmallestBall(BaseEstimator):
    """Estimator wrapper of the non-private reference ``smallest_ball_2approx`` (the
    2-approximation baseline of Nissim, Stemmer & Vadhan, PODS 2016). A scikit-learn estimator,
    so the Curator's data owner path can clone it."""

    def __init__(self, n_points, random_state=None):
        self.n_points = n_points
        self.random_state = random_state

    def fit(self, X):
        from privclust.core.onecluster import smallest_ball_2approx
        self.center_, self.radius_ = smallest_ball_2approx(X, self.n_points)
        return self


def by_key(key, specs=None):
    for spec in (SPECS if specs is None else specs):
        if spec.key == key:
            return spec
    raise KeyError(f"unknown algorithm {key!r}")


def for_task(task, specs=None, available_only=True):
    out = [s for s in (SPECS if specs is None else specs) if s.task == task]
    return [s for s in out if s.available()] if available_only else out


def status(specs=None):
    """{task: {key: available}} — what the page can offer right now."""
    out = {}
    for spec in (SPECS if specs is None else specs):
        out.setdefault(spec.task, {})[spec.key] = spec.available()
    return out
