"""OneCluster and PrivateKBalls on the release protocol: every parameter is checked from the
parameters and the public shape before the ledger is charged; the data are read only after it;
a failed run spends exactly its plan; a release carries only the released attributes."""

import importlib
import math

import numpy as np
import pytest

from privclust.core import Curator, OneCluster, PrivateKBalls
from privclust.core.data import make_planted_ball
from privclust.core.estimator import PrivateEstimator
from privclust.core.onecluster.ball_counts import min_grid_step
from privclust.core.onecluster.one_cluster import default_grid_step
from privclust.core.privacy import Ledger

gc_mod = importlib.import_module("privclust.core.onecluster.good_center")


@pytest.fixture(scope="module")
def planted():
    return make_planted_ball(3000, 2, n_inliers=1000, std=0.01, random_state=5)


ESTIMATORS = {
    "one": lambda **kw: OneCluster(**{"n_points": 100, "bounds": (0, 1), **kw}),
    "kballs": lambda **kw: PrivateKBalls(**{"n_clusters": 2, "bounds": (0, 1), **kw}),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid_step": 1e-12}, "grid_step"),  # below the public minimum
        ({"grid_step": 0.0}, "grid_step"),
        ({"grid_step": float("nan")}, "grid_step"),
        (
            {"epsilon": 1000.0, "axis_choice": "stable_hist"},
            "stable_hist",
        ),  # GoodCenter composition
        ({"delta": 0.0}, "delta"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"bounds": None}, "bounds"),
        ({"bounds": (1, 0)}, "bounds"),
        ({"refine_steps": -1}, "refine_steps"),
        ({"radius_variant": "recconcave"}, "radius_variant"),
        ({"box_side": "huge"}, "box_side"),
        ({"beta": 1.5}, "beta"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_parameters_are_refused_before_the_charge_and_before_reading(name, kwargs, match, sealed):
    ledger = Ledger(5000.0, 0.5)
    est = ESTIMATORS[name](ledger=ledger, **kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(sealed((500, 3)))
    assert ledger.history == [] and not hasattr(est, "privacy_")


def test_n_points_and_n_clusters_are_checked_against_the_public_n(sealed):
    ledger = Ledger(10.0, 0.1)
    for est, match in (
        (OneCluster(501, bounds=(0, 1), ledger=ledger), "n_points"),
        (OneCluster(0, bounds=(0, 1), ledger=ledger), "n_points"),
        (PrivateKBalls(501, bounds=(0, 1), ledger=ledger), "n_clusters"),
        (PrivateKBalls(2, bounds=(0, 1), n_points=600, ledger=ledger), "n_points"),
    ):
        with pytest.raises(ValueError, match=match):
            est.fit(sealed((500, 2)))
    assert ledger.history == []


@pytest.mark.parametrize("est", [OneCluster(100, bounds=(0, 1)), PrivateKBalls(2, bounds=(0, 1))])
def test_both_are_private_estimators_with_a_plan_of_exactly_epsilon_delta(est):
    assert isinstance(est, PrivateEstimator) and est.neighbouring_relation() == "replace"
    plan = est.plan(500, 2)
    assert (plan.epsilon, plan.delta, plan.kind, plan.neighbouring) == (
        1.0,
        1e-6,
        "approx",
        "replace",
    )
    assert math.fsum(m.epsilon for m in plan.mechanisms) == pytest.approx(1.0, abs=1e-12)
    assert math.fsum(m.delta for m in plan.mechanisms) == pytest.approx(1e-6, abs=1e-18)
    names = " ".join(m.name for m in plan.mechanisms)
    assert "GoodRadius" in names and "GoodCenter" in names and "re-centring" in names
    with pytest.raises(ValueError, match="public shape"):
        est.plan(None, 2)


def test_the_default_grid_step_is_never_below_the_public_minimum():
    lo, hi = np.full(3, 1e8), np.full(3, 1e8 + 1.0)  # a box far from the origin
    assert default_grid_step(lo, hi) >= min_grid_step(lo, hi) > 1.0 / 2**16
    OneCluster(10, bounds=(1e8, 1e8 + 1.0)).plan(100, 3)  # the default is accepted


def test_a_failed_run_spends_exactly_the_plan_on_the_ledger(planted, monkeypatch):
    monkeypatch.setattr(gc_mod, "above_threshold", lambda *a, **k: np.int64(-1))
    ledger = Ledger(2.0, 1e-5)
    m = OneCluster(1000, 1.0, 1e-6, bounds=(0, 1), random_state=0, ledger=ledger).fit(planted.X)
    assert not m.success_
    assert [(c.epsilon, c.delta, c.relation) for c in ledger.history] == [(1.0, 1e-6, "replace")]
    assert m.privacy_.epsilon == pytest.approx(1.0, abs=1e-12)
    assert m.privacy_.delta == pytest.approx(1e-6, abs=1e-18)


@pytest.mark.parametrize(
    "make, attrs",
    [
        (
            lambda: OneCluster(1000, 1.0, 1e-6, bounds=(0, 1)),
            {
                "center_",
                "radius_",
                "success_",
                "failure_",
                "reliable_",
                "ball_count_",
                "good_radius_",
                "center_radius_",
            },
        ),
        (
            lambda: PrivateKBalls(2, 2.0, 1e-6, bounds=(0, 1), n_points=900),
            {"centers_", "radii_", "success_", "reliable_", "failures_"},
        ),
    ],
)
def test_a_curator_release_carries_only_the_released_attributes(planted, make, attrs):
    ledger = Ledger(10.0, 1e-4)
    release = Curator(planted.X, ledger).release(make())
    assert set(release.attributes) == attrs
    assert [c.relation for c in ledger.history] == ["replace"]
    with pytest.raises(AttributeError):
        release.privacy_  # noqa: B018 -- the guarantee travels as release.guarantee
