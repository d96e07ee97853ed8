"""The algorithm registry describes every estimator once, and the release door, the planner and
the baselines can rely on it."""

import inspect
import subprocess
import sys

import pytest

import privclust.core as core
from privclust.core import algorithms as registry
from privclust.core.estimator import PrivateEstimator
from privclust.core.experiments.planner import PublicFacts, makers


def _exported_private_classes():
    return [
        obj
        for name in core.__all__
        if isinstance(obj := getattr(core, name, None), type)
        and issubclass(obj, PrivateEstimator)
        and obj is not PrivateEstimator
    ]


def test_every_private_class_exported_by_core_is_registered_exactly_once():
    exported = _exported_private_classes()
    assert exported, "privclust.core exports private estimators"
    for cls in exported:
        entries = [a.key for a in registry.REGISTRY if a.cls is cls]
        assert len(entries) == 1, f"{cls.__name__} is registered as {entries}"
    assert registry.private_classes() == frozenset(exported)


def test_every_registered_class_is_importable_and_named_by_its_path():
    for a in registry.REGISTRY:
        assert isinstance(a.cls, type) and a.cls.__name__ == a.class_name, a.key
        assert registry.for_class_name(a.class_name) is a
        assert a.private == issubclass(a.cls, PrivateEstimator)


def test_every_baseline_exists_is_non_private_and_serves_the_same_task():
    for a in registry.REGISTRY:
        if a.private and a.task is not None:
            assert a.baseline is not None, f"{a.key} has no non-private baseline"
        if a.baseline is None:
            continue
        base = registry.baseline_of(a.key)
        assert base is registry.get(a.baseline)
        assert not base.private, f"{a.key}'s baseline {base.key} is private"
        assert base.task == a.task and base.baseline is None
    for task in registry.TASKS:
        base = registry.task_baseline(task)
        assert base is not None and base.task == task and not base.private


def test_private_bounds_is_a_helper_without_a_task():
    entry = registry.for_class_name("PrivateBounds")
    assert entry.key == "private_bounds" and entry.task is None and entry.family == "bounds"
    assert entry.private and registry.baseline_of("private_bounds") is None


def test_parameter_classes_are_the_subspace_solvers_and_the_aggregator():
    from privclust.core.onecluster import OneClusterAggregator
    from privclust.core.subspace.solvers import SOLVERS

    assert registry.parameter_classes() == frozenset(SOLVERS.values()) | {OneClusterAggregator}
    assert not registry.parameter_classes() & registry.private_classes()


def test_the_release_door_and_the_registry_trust_the_same_classes():
    from privclust.core.release.curator import core_parameter_classes, core_private_classes

    assert registry.private_classes() == core_private_classes()
    assert registry.parameter_classes() == core_parameter_classes()


def test_lookups_and_build():
    assert [a.key for a in registry.for_task("kmeans")] == [
        "kmeans",
        "compressive",
        "dplloyd",
        "lsh_kmeans",
        "balcan_kmeans",
    ]
    km = registry.build("kmeans", n_clusters=4)
    assert type(km).__name__ == "KMeans" and km.n_init == 3 and km.n_clusters == 4
    assert registry.build("kmeans", n_clusters=2, n_init=1).n_init == 1
    est = registry.build("dplloyd", n_clusters=2, epsilon=0.5, bounds=(0.0, 1.0))
    assert isinstance(est, core.DPLloyd) and est.epsilon == 0.5
    assert registry.baseline_of("onecluster").cls is core.onecluster.SmallestBall
    assert registry.for_class_name("NoSuchEstimator") is None
    with pytest.raises(KeyError, match="unknown algorithm 'nope'"):
        registry.get("nope")
    with pytest.raises(KeyError, match="unknown planner algorithm 'nope'"):
        registry.planner_variant("nope")
    with pytest.raises(KeyError, match="unknown planner algorithm 'kplanes'"):
        registry.planner_variant("kplanes")  # a baseline's twin settings, not compared
    assert core.algorithms is registry


def test_entries_are_checked_when_written():
    with pytest.raises(ValueError, match="family must be one of"):
        registry.Algorithm("x", ".sketch:DPLloyd", "graphs", "kmeans", "X")
    with pytest.raises(ValueError, match="task must be None or one of"):
        registry.Algorithm("x", ".sketch:DPLloyd", "kmeans", "graphs", "X")
    with pytest.raises(ValueError, match="selects"):
        registry.PlannerVariant("x", {}, selects=("init",))


def test_importing_the_registry_imports_no_estimator():
    code = (
        "import sys, privclust.core.algorithms as r; r.get('dplloyd').label; "
        "print(sorted(m for m in sys.modules if m.startswith(('privclust.core.sketch', "
        "'privclust.core.subspace', 'privclust.core.onecluster', 'privclust.core.cocluster',"
        " 'sklearn'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_planner_variants_build_the_twins_estimators():
    facts = PublicFacts("kmeans", n_samples=500, n_features=3, n_clusters=4, bounds=(-1.0, 1.0))
    table = makers("kmeans")
    assert list(table) == ["ckm", "dplloyd", "dplloyd_improved", "lsh_kmeans", "balcan_kmeans"]
    # the coreset and DPHD take the public delta (Gaussian noise) and are planned like the others
    for name in ("lsh_kmeans", "balcan_kmeans"):
        est = table[name](facts, 1.0, 0)
        assert (est.delta, est.n_clusters, est.bounds) == (facts.delta, 4, (-1.0, 1.0))
        assert est.public_plan(facts.shape).epsilon == pytest.approx(1.0)
    plain, improved = table["dplloyd"](facts, 0.5, 3), table["dplloyd_improved"](facts, 0.5, 3)
    assert (plain.init, improved.init) == ("uniform", "sphere_packing")
    assert (improved.n_clusters, improved.epsilon, improved.bounds, improved.random_state) == (
        4,
        0.5,
        (-1.0, 1.0),
        3,
    )
    # the planner's settings override a variant's parameters
    assert table["dplloyd"](facts, 1.0, 0, init="sphere_packing").init == "sphere_packing"
    # CKM takes the public delta, so its Gaussian mechanism can be planned
    ckm = table["ckm"](facts, 1.0, 0, mechanism="gaussian")
    assert ckm.delta == facts.delta and ckm.public_plan(facts.shape).delta > 0

    sub = PublicFacts("subspace", n_samples=200, n_features=5, n_clusters=2, subspace_dim=1)
    gibbs = makers("subspace")["gibbs"](sub, 1.0, None)
    assert (gibbs.n_iter, gibbs.n_chains, gibbs.release, gibbs.record_every) == (
        100,
        1,
        "first",
        100,
    )
    assert makers("subspace")["gibbs"](sub, 1.0, None, n_iter=40).record_every == 40
    sa = makers("subspace")["sample_aggregate"](sub, 1.0, None)
    assert sa.solver == "tsc" and sa.delta == sub.delta

    one = PublicFacts("onecluster", n_samples=300, n_features=2, bounds=(0.0, 1.0))
    oc = makers("onecluster")["onecluster"](one, 1.0, None)
    assert (oc.n_points, oc.delta) == (150, one.delta)
    co = PublicFacts("cocluster", n_samples=40, n_features=30, n_clusters=3, n_col_clusters=2)
    tau = makers("cocluster")["dp_taucc"](co, 1.0, None)
    assert (tau.n_row_clusters, tau.n_col_clusters) == (3, 2)


def test_every_planner_variant_is_a_private_entry_of_its_task():
    for task in registry.TASKS:
        for entry, variant in registry.planner_variants(task):
            assert entry.private and entry.task == task
            assert variant.label
            params = set(inspect.signature(entry.cls).parameters)
            assert set(variant.params) | set(variant.own) <= params, variant.name


def test_the_planner_baselines_are_the_registry_baselines_with_their_twin_settings():
    from sklearn.cluster import KMeans

    from privclust.core import metrics
    from privclust.core.experiments.planner import build_twin
    from privclust.core.experiments.planner.scoring import _baseline
    from privclust.core.onecluster import smallest_ball_2approx
    from privclust.core.subspace import KPlanes

    facts = PublicFacts("kmeans", n_samples=300, n_features=2, n_clusters=3, bounds=(-1.0, 1.0))
    twin = build_twin(facts, random_state=1)
    km = KMeans(3, n_init=3, random_state=5).fit(twin.X)
    assert _baseline(facts, twin, 5)["sse"] == float(metrics.sse(twin.X, km.cluster_centers_))

    facts = PublicFacts("subspace", n_samples=120, n_features=4, n_clusters=2, subspace_dim=1)
    twin = build_twin(facts, random_state=1)
    kp = KPlanes(2, 1, n_init=3, random_state=5).fit(twin.X)
    assert _baseline(facts, twin, 5)["wasserstein"] == float(
        metrics.wasserstein_subspaces(kp.subspaces_, twin.truth["subspaces"])
    )

    facts = PublicFacts("onecluster", n_samples=200, n_features=2, bounds=(0.0, 1.0))
    twin = build_twin(facts, random_state=1)
    assert _baseline(facts, twin, 5)["radius"] == smallest_ball_2approx(twin.X, 100)[1]
