"""The algorithm registry: every estimator of privclust described once.

An :class:`Algorithm` entry says what an estimator is -- its family, the dashboard task it
serves, a human label, its non-private baseline, the constructor arguments every build uses and
the planner's variants of it (:class:`PlannerVariant`: the settings the planner's twins run) --
and names its class by module path, so that ``import privclust.core`` stays cheap: a class is
imported only when it is used. Whether an entry is private is read from its class (a
:class:`~privclust.core.estimator.PrivateEstimator`), never restated.

The planner (:mod:`privclust.core.experiments.planner`), the dashboard's catalogue and the
release door read this table: adding an estimator is adding one entry to :data:`REGISTRY`, e.g.::

    Algorithm("lsh_kmeans", ".sketch:LSHCoresetKMeans", "kmeans", "kmeans",
              "LSH-coreset k-means", baseline="kmeans", planner=(_variant("lsh_kmeans"),))

(the page then offers it in its task, without widgets until the catalogue gives some; the
planner compares it; the release door trusts it when its class is private). A variant of an
existing estimator is one more :class:`PlannerVariant` of its entry, e.g.
``PlannerVariant("onecluster_recconcave", {"radius_variant": "rec_concave"},
selects=("radius_variant",))``.
"""

from dataclasses import dataclass, field, replace
from importlib import import_module
from types import MappingProxyType

__all__ = [
    "Algorithm",
    "PlannerVariant",
    "REGISTRY",
    "FAMILIES",
    "TASKS",
    "get",
    "for_task",
    "for_class_name",
    "private_classes",
    "parameter_classes",
    "baseline_of",
    "task_baseline",
    "build",
    "planner_variants",
    "planner_variant",
]

FAMILIES = ("subspace", "kmeans", "onecluster", "cocluster", "bounds")
TASKS = ("subspace", "kmeans", "onecluster", "cocluster")


def _frozen(mapping):
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)
class PlannerVariant:
    """One algorithm as the planner runs it on its twins.

    Parameters
    ----------
    name : str
        The planner's name of the variant (unique in the registry), e.g. ``"dplloyd_improved"``.
    params : mapping
        Constructor arguments of the twins' runs, beyond the public facts (the planner's
        ``settings`` override them), e.g. ``{"init": "sphere_packing"}``.
    selects : tuple of str
        Names in ``params`` that select this variant among the entry's variants in a form (the
        dashboard's sidebar sets them when a plan is applied and does not pass its own value).
    own : tuple of str
        Further constructor parameters that a form does not pass to the twins (the planner's own
        choices, e.g. short Gibbs chains so that a plan takes seconds).
    same_as : mapping
        A parameter left unset takes the value of another one, e.g. ``{"record_every":
        "n_iter"}`` (one record per chain).
    label : str, optional
        The variant's label; default: the entry's (filled in by :class:`Algorithm`).
    """

    name: str
    params: MappingProxyType = field(default_factory=dict)
    selects: tuple = ()
    own: tuple = ()
    same_as: MappingProxyType = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "same_as", _frozen(self.same_as))
        missing = [p for p in self.selects if p not in self.params]
        if missing:
            raise ValueError(f"variant {self.name!r}: selects {missing} have no value in params")

    @property
    def not_passed(self):
        """The form's parameters the twins do not take over (``selects`` and ``own``)."""
        return tuple(self.selects) + tuple(p for p in self.own if p not in self.selects)

    def arguments(self, settings=None):
        """``params`` updated by ``settings``, then the ``same_as`` parameters still unset."""
        out = {**self.params, **(settings or {})}
        for name, source in self.same_as.items():
            if name not in out and source in out:
                out[name] = out[source]
        return out


@dataclass(frozen=True, eq=False)
class Algorithm:
    """One estimator of the registry.

    Parameters
    ----------
    key : str
        Short stable name (the dashboard's key), e.g. ``"dplloyd"``.
    path : str
        ``"module:Class"``; a module starting with ``.`` is relative to ``privclust.core``.
    family : str
        One of :data:`FAMILIES`.
    task : str or None
        The dashboard task it serves (:data:`TASKS`); None for a helper (public bounds, an
        aggregation rule).
    label : str
        Human label.
    baseline : str, optional
        Key of the non-private reference entry a private estimator is compared with.
    fixed : mapping
        Constructor arguments every build uses unless given (e.g. scikit-learn KMeans' n_init).
    parameter : bool
        The class is accepted as an estimator parameter by the release door (a non-private
        solver run on blocks inside sample-and-aggregate, an aggregation rule).
    planner : tuple of PlannerVariant
        How the planner runs it on twins: a private entry's variants are the algorithms a plan
        compares; a baseline's first variant gives the settings of the twins' reference run.
    """

    key: str
    path: str
    family: str
    task: str | None
    label: str
    baseline: str | None = None
    fixed: MappingProxyType = field(default_factory=dict)
    parameter: bool = False
    planner: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "fixed", _frozen(self.fixed))
        object.__setattr__(
            self, "planner", tuple(replace(v, label=v.label or self.label) for v in self.planner)
        )
        if self.family not in FAMILIES:
            raise ValueError(f"{self.key}: family must be one of {FAMILIES}, got {self.family!r}")
        if self.task is not None and self.task not in TASKS:
            raise ValueError(f"{self.key}: task must be None or one of {TASKS}, got {self.task!r}")

    @property
    def class_name(self):
        return self.path.rpartition(":")[2]

    @property
    def cls(self):
        """The estimator class (imported on first use)."""
        module, _, name = self.path.rpartition(":")
        return getattr(import_module(module, package="privclust.core"), name)

    @property
    def private(self):
        """Is it a :class:`~privclust.core.estimator.PrivateEstimator`?"""
        from .estimator import PrivateEstimator

        return issubclass(self.cls, PrivateEstimator)

    def build(self, **params):
        """``cls(**{**fixed, **params})``."""
        return self.cls(**{**self.fixed, **params})


def _variant(name, label=None, **params):
    return PlannerVariant(name, params, label=label)


REGISTRY = (
    # subspace clustering (Wang, Wang & Singh, NIPS 2015)
    Algorithm(
        "kplanes",
        ".subspace:KPlanes",
        "subspace",
        "subspace",
        "k-plane clustering",
        parameter=True,
        planner=(_variant("kplanes", n_init=3),),
    ),
    Algorithm(
        "tsc",
        ".subspace:ThresholdSubspaceClustering",
        "subspace",
        "subspace",
        "Thresholding subspace clustering",
        parameter=True,
    ),
    Algorithm(
        "ssc",
        ".subspace:SparseSubspaceClustering",
        "subspace",
        "subspace",
        "Sparse subspace clustering",
        parameter=True,
    ),
    Algorithm(
        "lrr",
        ".subspace:LowRankRepresentation",
        "subspace",
        "subspace",
        "Low-rank representation",
        parameter=True,
    ),
    Algorithm(
        "gibbs",
        ".subspace:GibbsSubspaceClustering",
        "subspace",
        "subspace",
        "Gibbs sampler",
        baseline="kplanes",
        planner=(
            PlannerVariant(
                "gibbs",
                {"n_iter": 100, "n_chains": 1, "release": "first"},
                own=("n_iter", "n_chains", "record_every", "init"),
                same_as={"record_every": "n_iter"},
            ),
        ),
    ),
    Algorithm(
        "sulq",
        ".subspace:SuLQSubspaceClustering",
        "subspace",
        "subspace",
        "SuLQ k-planes",
        baseline="kplanes",
        planner=(_variant("sulq"),),
    ),
    Algorithm(
        "sample_aggregate",
        ".subspace:SampleAggregateSubspaceClustering",
        "subspace",
        "subspace",
        "Sample-and-aggregate",
        baseline="kplanes",
        planner=(_variant("sample_aggregate", solver="tsc"),),
    ),
    # k-means (Schellekens et al., SPARS 2019; Su et al., 2016)
    Algorithm(
        "kmeans",
        "sklearn.cluster:KMeans",
        "kmeans",
        "kmeans",
        "Lloyd k-means (scikit-learn)",
        fixed={"n_init": 3},
    ),
    Algorithm(
        "compressive",
        ".sketch:CompressiveKMeans",
        "kmeans",
        "kmeans",
        "Compressive k-means (DP sketch)",
        baseline="kmeans",
        planner=(_variant("ckm", label="Compressive k-means"),),
    ),
    Algorithm(
        "dplloyd",
        ".sketch:DPLloyd",
        "kmeans",
        "kmeans",
        "DPLloyd",
        baseline="kmeans",
        planner=(
            PlannerVariant(
                "dplloyd", {"init": "uniform"}, selects=("init",), label="DPLloyd (uniform init)"
            ),
            PlannerVariant(
                "dplloyd_improved",
                {"init": "sphere_packing"},
                selects=("init",),
                label="DPLloyd (sphere-packing init)",
            ),
        ),
    ),
    # private coresets (Chang & Kamath 2021) and DPHD (Balcan, Dick, Liang, Mou & Zhang, 2017)
    Algorithm(
        "lsh_kmeans",
        ".sketch:LSHCoresetKMeans",
        "kmeans",
        "kmeans",
        "LSH-coreset k-means",
        baseline="kmeans",
        planner=(_variant("lsh_kmeans", label="LSH-coreset k-means"),),
    ),
    Algorithm(
        "balcan_kmeans",
        ".sketch:BalcanKMeans",
        "kmeans",
        "kmeans",
        "DPHD k-means (Balcan et al.)",
        baseline="kmeans",
        planner=(_variant("balcan_kmeans", label="DPHD k-means (Balcan et al.)"),),
    ),
    # a small cluster (Nissim, Stemmer & Vadhan, PODS 2016)
    Algorithm(
        "smallest_ball",
        ".onecluster.baseline:SmallestBall",
        "onecluster",
        "onecluster",
        "smallest ball holding t points (2-approx.)",
    ),
    Algorithm(
        "onecluster",
        ".onecluster:OneCluster",
        "onecluster",
        "onecluster",
        "1-cluster (GoodRadius + GoodCenter)",
        baseline="smallest_ball",
        planner=(_variant("onecluster", label="1-cluster"),),
    ),
    Algorithm(
        "kballs",
        ".onecluster:PrivateKBalls",
        "onecluster",
        "onecluster",
        "k balls (repeated 1-cluster)",
        baseline="smallest_ball",
    ),
    Algorithm(
        "onecluster_aggregator",
        ".onecluster:OneClusterAggregator",
        "onecluster",
        None,
        "1-cluster aggregation rule (sample-and-aggregate)",
        parameter=True,
    ),
    # co-clustering (Battaglia & Pensa, SDM 2025)
    Algorithm("fasttaucc", ".cocluster:TauCoClustering", "cocluster", "cocluster", "Fast-τCC"),
    Algorithm(
        "dptaucc",
        ".cocluster:DPTauCoClustering",
        "cocluster",
        "cocluster",
        "DP-τCC",
        baseline="fasttaucc",
        planner=(_variant("dp_taucc"),),
    ),
    # a benchmark competitor of DP-tauCC, not private as a whole (Saha & Imtiaz, TKDD 2024)
    Algorithm("dpnmf", ".cocluster:DPNMF", "cocluster", None, "DPNMF (Saha & Imtiaz 2024)"),
    # public bounds from private quantiles (Smith, STOC 2011)
    Algorithm(
        "private_bounds",
        ".bounds:PrivateBounds",
        "bounds",
        None,
        "Private bounds (quantiles)",
    ),
    # a public box from a noisy histogram over power-of-two buckets per column
    Algorithm(
        "geometric_bounds",
        ".bounds:GeometricBounds",
        "bounds",
        None,
        "Geometric-bucket bounds",
    ),
)

_BY_KEY = {a.key: a for a in REGISTRY}
_VARIANTS = {v.name: (a, v) for a in REGISTRY for v in a.planner}
if len(_BY_KEY) != len(REGISTRY) or len(_VARIANTS) != sum(len(a.planner) for a in REGISTRY):
    raise RuntimeError("registry keys and planner variant names must be unique")


def get(key):
    """The entry named ``key``; KeyError naming the known keys otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown algorithm {key!r}; known: {sorted(_BY_KEY)}") from None


def for_task(task):
    """The entries serving dashboard task ``task``, in registry order."""
    return [a for a in REGISTRY if a.task == task]


def for_class_name(name):
    """The entry whose class is called ``name`` (a stored release names its class), or None."""
    for a in REGISTRY:
        if a.class_name == name:
            return a
    return None


def private_classes():
    """The registry's private estimator classes (exact classes): the estimators the release
    door trusts."""
    return frozenset(a.cls for a in REGISTRY if a.private)


def parameter_classes():
    """The exact privclust classes accepted as estimator parameters: the non-private subspace
    solvers (run on blocks inside sample-and-aggregate) and the 1-cluster aggregation rule."""
    return frozenset(a.cls for a in REGISTRY if a.parameter)


def baseline_of(key):
    """The entry of ``key``'s non-private baseline, or None."""
    base = get(key).baseline
    return None if base is None else get(base)


def task_baseline(task):
    """The non-private baseline of a dashboard task (the one its private entries share), or
    None."""
    keys = {a.baseline for a in for_task(task) if a.baseline is not None}
    if len(keys) > 1:
        raise ValueError(f"the {task} task's entries name several baselines: {sorted(keys)}")
    return get(keys.pop()) if keys else None


def build(key, **params):
    """An unfitted estimator of entry ``key``: its ``fixed`` arguments updated by ``params``."""
    return get(key).build(**params)


def planner_variants(task):
    """[(entry, variant)] the planner compares for ``task`` (the variants of its private
    entries), in registry order."""
    return [(a, v) for a in for_task(task) if a.private for v in a.planner]


def planner_variant(name):
    """(entry, variant) of the planner's algorithm ``name`` (a private entry's variant);
    KeyError otherwise."""
    found = _VARIANTS.get(name)
    if found is None or not found[0].private:
        raise KeyError(f"unknown planner algorithm {name!r}")
    return found
