"""OneCluster, PrivateKBalls, the aggregator, screening and the baseline: budget, failures, API."""

import importlib
import math

import numpy as np
import pytest
from sklearn.base import clone

from privclust.core import OneCluster, PrivateKBalls
from privclust.core.data import make_planted_ball
from privclust.core.onecluster import (
    OneClusterAggregator,
    inside_ball,
    one_cluster_aggregate,
    screen_outliers,
    smallest_ball_2approx,
)
from privclust.core.privacy import (
    BudgetAccountant,
    BudgetExceeded,
    Guarantee,
    Ledger,
    PrivacyWarning,
)

gc_mod = importlib.import_module("privclust.core.onecluster.good_center")


@pytest.fixture(scope="module")
def planted():
    return make_planted_ball(3000, 2, n_inliers=1000, std=0.01, random_state=5)


def assert_total(guarantee, eps, delta):
    total_eps = math.fsum(m.epsilon for m in guarantee.mechanisms)
    total_delta = math.fsum(m.delta for m in guarantee.mechanisms)
    assert total_eps == pytest.approx(eps, rel=0, abs=1e-12)
    assert total_delta == pytest.approx(delta, rel=0, abs=1e-12)
    assert guarantee.epsilon == pytest.approx(eps, abs=1e-12)
    assert guarantee.delta == pytest.approx(delta, abs=1e-12)
    assert guarantee.kind == "approx" and guarantee.neighbouring == "replace"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"refine_steps": 0},
        {"refine_steps": 1},
        {"refine_steps": 3},
        {"radius_variant": "above_threshold"},
        {"axis_choice": "stable_hist", "epsilon": 8.0},
        {"box_side": "paper"},
        {"axis_choice": "box_ball"},
    ],
)
def test_budget_total_is_exactly_epsilon_delta(planted, options):
    params = {"epsilon": 1.0, "delta": 1e-6, **options}
    m = OneCluster(1000, bounds=(0, 1), random_state=1, **params).fit(planted.X)
    assert_total(m.privacy_, params["epsilon"], params["delta"])
    names = [s.name for s in m.privacy_.mechanisms]
    assert any("GoodRadius" in n for n in names)
    if m.success_:
        assert any("NoisyAVG" in n for n in names)
        assert sum("re-centring" in n for n in names) == params.get("refine_steps", 2)
    else:
        assert any("unused after failure" in n for n in names)


def test_box_ball_alternative_finds_the_cluster_with_a_smaller_centre_ball(planted):
    a = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=7, axis_choice="box_ball").fit(
        planted.X
    )
    b = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=7).fit(planted.X)
    assert a.reliable_ and np.linalg.norm(a.center_ - planted.truth["center"]) < 0.1
    assert (
        a.center_radius_ < b.center_radius_ / 2
    )  # ~3 r against ~13 r (docs/algorithms.md, section 5)
    names = [s.name for s in a.privacy_.mechanisms]
    assert not any("per-axis" in n for n in names)


def test_spec_43a_budget_split(planted):
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=2).fit(planted.X)
    spends = {s.name: (s.epsilon, s.delta) for s in m.privacy_.mechanisms}
    radius = sum(e for n, (e, _) in spends.items() if "GoodRadius" in n)
    center = [(e, d) for n, (e, d) in spends.items() if n.startswith("GoodCenter")]
    steps = [(e, d) for n, (e, d) in spends.items() if n.startswith("re-centring")]
    assert radius == pytest.approx(0.25)
    assert math.fsum(e for e, _ in center) == pytest.approx(0.25)
    assert math.fsum(d for _, d in center) == pytest.approx(0.5e-6)
    assert steps == [pytest.approx((0.25, 0.25e-6))] * 2


def test_fit_is_reproducible_and_sklearn_compatible(planted):
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), grid_step=2**-16, random_state=3)
    a = clone(m).fit(planted.X)
    b = clone(m).fit(planted.X)
    np.testing.assert_array_equal(a.center_, b.center_)
    assert a.radius_ == b.radius_
    assert m.get_params()["n_points"] == 1000
    assert not hasattr(m, "center_")  # constructor stores parameters only
    assert np.linalg.norm(a.center_ - planted.truth["center"]) < 0.1 and a.reliable_


def test_ledger_charged_once_before_release_and_refusal(planted):
    ledger = Ledger(1.5, 1e-5)
    OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=0, ledger=ledger).fit(planted.X)
    assert ledger.spent[0] == pytest.approx(1.0) and len(ledger.history) == 1
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=0, ledger=ledger)
    with pytest.raises(BudgetExceeded):
        m.fit(planted.X)
    assert not hasattr(m, "center_")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"bounds": None}, "bounds"),
        ({"n_points": 5000}, "n_points"),
        ({"delta": 0.0}, "delta"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"grid_step": -0.1}, "grid_step"),
        ({"refine_steps": -1}, "refine_steps"),
        ({"radius_variant": "recconcave"}, "radius_variant"),
        ({"bounds": (1, 0)}, "bounds"),
    ],
)
def test_invalid_parameters_raise_naming_them(planted, kwargs, match):
    params = {"n_points": 1000, "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1), **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        OneCluster(**params).fit(planted.X)


def test_nan_input_and_weak_delta():
    X = np.random.default_rng(0).random((50, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        OneCluster(10, bounds=(0, 1)).fit(X)
    with pytest.warns(PrivacyWarning):
        OneCluster(10, 1.0, 0.1, bounds=(0, 1), random_state=0).fit(np.nan_to_num(X))


def test_records_outside_the_box_are_clipped_not_trusted(planted):
    X = planted.X.copy()
    X[:5] = 1e6  # outliers far outside the public box
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=4).fit(X)
    assert np.all(np.isfinite(m.center_)) and m.radius_ < 1.0


def test_failure_above_threshold_never_fires(planted, monkeypatch):
    monkeypatch.setattr(gc_mod, "above_threshold", lambda *a, **k: np.int64(-1))
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=0).fit(planted.X)
    assert not m.success_ and not m.reliable_ and "AboveThreshold" in m.failure_
    np.testing.assert_allclose(m.center_, [0.5, 0.5])
    assert m.radius_ == pytest.approx(math.sqrt(2) / 2)  # the ball around the whole box
    assert_total(m.privacy_, 1.0, 1e-6)
    assert any("failed" in w for w in m.privacy_.warnings)


def test_failure_heavy_box_not_found_on_tiny_data():
    X = np.random.default_rng(1).random((20, 2))
    m = OneCluster(10, 0.5, 1e-6, bounds=(0, 1), random_state=0).fit(X)
    assert not m.success_ and m.failure_ is not None
    assert_total(m.privacy_, 0.5, 1e-6)


def test_above_threshold_radius_that_never_fires_gives_the_largest_grid_radius(
    planted, monkeypatch
):
    gr_mod = importlib.import_module("privclust.core.onecluster.good_radius")
    monkeypatch.setattr(gr_mod, "above_threshold", lambda *a, **k: np.int64(-1))
    m = OneCluster(
        1000, 1.0, 1e-6, bounds=(0, 1), radius_variant="above_threshold", random_state=0
    ).fit(planted.X)
    assert m.good_radius_ >= math.sqrt(2)  # the whole box: a documented, useless answer
    assert np.all(np.isfinite(m.center_)) and not m.reliable_
    assert_total(m.privacy_, 1.0, 1e-6)


def test_k_balls_on_points_all_removed_after_a_failed_round():
    X = np.random.default_rng(0).random((20, 2))  # too few points: round 1 fails, covers the box
    m = PrivateKBalls(2, 1.0, 1e-6, bounds=(0, 1), random_state=0).fit(X)
    assert not m.success_.any() and len(m.failures_) == 2  # round 2 ran on an empty set
    assert_total(m.privacy_, 1.0, 1e-6)


def test_good_center_reports_failure_without_exception():
    X = np.random.default_rng(2).random((500, 2))
    acc = BudgetAccountant(1.0, 1e-6)
    res = gc_mod.good_center(
        X, 1e-4, 500, 1.0, 1e-6, (0, 1), np.random.default_rng(0), acc, max_rounds=5
    )
    assert res.center is None and "AboveThreshold" in res.failure
    assert acc.spent[0] == pytest.approx(0.25)


def test_k_balls_finds_two_clusters_and_spends_exactly():
    a = make_planted_ball(3000, 2, n_inliers=1500, std=0.01, center=[0.25, 0.3], random_state=1).X
    b = make_planted_ball(3000, 2, n_inliers=1500, std=0.01, center=[0.7, 0.75], random_state=2).X
    X = np.vstack([a[:2000], b[:2000]])  # keeps ~1000 planted points of each
    m = PrivateKBalls(2, 4.0, 1e-6, bounds=(0, 1), n_points=900, random_state=0).fit(X)
    assert m.centers_.shape == (2, 2) and m.radii_.shape == (2,)
    found = sorted(np.round(m.centers_[m.success_], 1).tolist())
    assert (
        found == [[0.2, 0.3], [0.7, 0.7]]
        or found == [[0.2, 0.3], [0.7, 0.8]]
        or found == [[0.3, 0.3], [0.7, 0.8]]
        or found == [[0.3, 0.3], [0.7, 0.7]]
    )
    assert_total(m.privacy_, 4.0, 1e-6)
    assert all(s.name.startswith("ball ") for s in m.privacy_.mechanisms)


def test_aggregator_interface_and_utility():
    rng = np.random.default_rng(0)
    Y = np.vstack([0.3 + 0.005 * rng.standard_normal((1800, 2)), rng.random((200, 2))])
    agg = OneClusterAggregator()
    center, guarantee = agg(Y, 2.0, 1e-6, (0.0, 1.0), rng)
    assert isinstance(guarantee, Guarantee) and center.shape == (2,)
    assert_total(guarantee, 2.0, 1e-6)
    assert np.linalg.norm(center - 0.3) < 0.05 and agg.result_.reliable
    c2, g2 = one_cluster_aggregate(Y[:40], 1.0, 1e-6, (0.0, 1.0), rng)  # too few blocks
    assert c2.shape == (2,) and np.all((c2 >= 0) & (c2 <= 1)) and g2.warnings
    with pytest.raises(TypeError, match="rng"):
        agg(Y, 1.0, 1e-6, (0.0, 1.0), 3)


def test_screening_predicate(planted):
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=6).fit(planted.X)
    mask = inside_ball(planted.X, m.center_, m.radius_)
    assert mask[planted.truth["inliers"]].mean() >= 0.9
    kept = screen_outliers(planted.X, m)
    assert len(kept) == mask.sum()
    np.testing.assert_array_equal(inside_ball(np.zeros((2, 2)), [0.0, 0.0], 0.0), [True, True])
    with pytest.raises(ValueError, match="radius"):
        inside_ball(planted.X, m.center_, -1.0)


def test_baseline_is_exact_and_2_approximate(planted):
    X = planted.X[:400]
    t = 100
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    kth = np.sort(D, axis=1)[:, t - 1]
    center, radius = smallest_ball_2approx(X, t)
    assert radius == pytest.approx(kth.min())
    assert np.sum(np.linalg.norm(X - center, axis=1) <= radius + 1e-12) >= t
    c2, r2 = smallest_ball_2approx(planted.X, 1000)
    assert r2 <= 2 * planted.truth["radius"]
