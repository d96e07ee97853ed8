"""The dashboard's catalogue and Plan tab describe no estimator themselves: every key they use is
a key of the algorithm registry (privclust.core.algorithms), and what an estimator is comes from
there."""

from types import SimpleNamespace

from privclust.app import catalogue
from privclust.app.state import plan as plan_state
from privclust.app.state.settings import SettingsModel
from privclust.core import algorithms as registry
from privclust.core.experiments.planner import FAMILIES, makers


def test_the_catalogue_uses_only_registry_keys_and_facts():
    for spec in catalogue.SPECS:
        entry = registry.get(spec.key)
        assert (spec.label, spec.task, spec.estimator) == (entry.label, entry.task, entry.cls)
        assert spec.private == entry.private and spec.fixed == dict(entry.fixed)
    assert set(catalogue.WIDGETS) <= {s.key for s in catalogue.SPECS}
    for task, keys in catalogue.ORDER.items():
        assert all(registry.get(k).task == task for k in keys)
    assert list(catalogue.TASKS) == list(registry.TASKS)


def test_the_catalogue_offers_every_registry_entry_with_a_task():
    offered = {s.key for s in catalogue.SPECS}
    assert offered == {a.key for a in registry.REGISTRY if a.task is not None}


def test_the_sidebar_baseline_is_the_registry_baseline():
    for task in registry.TASKS:
        settings = SettingsModel(task=task)
        assert settings.baseline_spec.key == registry.task_baseline(task).key
        assert not settings.baseline_spec.private


def test_the_planner_and_the_plan_tab_use_only_registry_variants():
    for family in FAMILIES:
        for name in makers(family):
            entry, variant = registry.planner_variant(name)
            assert entry.task == family
            assert plan_state.algorithm_label(name) == variant.label
            # the sidebar entry a plan is applied to exists and offers the variant's selectors
            spec = catalogue.by_key(entry.key)
            assert set(variant.selects) <= set(spec.params)
    assert plan_state.algorithm_label("nope") is None


def _sidebar(key, **values):
    spec = catalogue.by_key(key)
    algo = spec.parameterized()
    for name, value in values.items():
        setattr(algo, name, value)
    return SimpleNamespace(spec=spec, algo=algo)


def test_planner_settings_take_over_the_sidebar_except_what_a_variant_sets():
    # DPLloyd's iterations follow Su et al.'s rule (no widget); the variant sets the init
    got = plan_state.planner_settings(_sidebar("dplloyd", init="sphere_packing"), "kmeans")
    assert got == {"dplloyd": {}, "dplloyd_improved": {}}
    got = plan_state.planner_settings(_sidebar("gibbs", n_iter=500, init="ssc"), "subspace")
    assert got == {"gibbs": {}}  # short chains from a random start
    got = plan_state.planner_settings(_sidebar("sample_aggregate", solver="lrr"), "subspace")
    assert got == {"sample_aggregate": {"solver": "lrr"}}
    got = plan_state.planner_settings(_sidebar("dptaucc", row_cap=None, n_iter=3), "cocluster")
    assert got == {"dp_taucc": {"n_iter": 3}}
    assert plan_state.planner_settings(_sidebar("kmeans"), "kmeans") == {}
    assert plan_state.planner_settings(_sidebar("dplloyd"), "subspace") == {}
