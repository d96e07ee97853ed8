"""GeometricBounds: per-feature bounds from a noisy histogram over power-of-two buckets.

* seeded Clopper-Pearson audits (alpha = 1e-3) of the whole computation on replace-one and
  add/remove neighbours, built so that one event reaches about 0.9 epsilon, and a planted
  halved sensitivity that must fail;
* the forecast from public facts, and the real-data target on scikit-learn's wine
  (178 x 13): at epsilon = 1 per feature every feature keeps at least 90 % of its records inside
  a box at most 10 times wider than its range, and at epsilon = 1 in total the forecast says
  before any spend that it cannot;
* the bound rule (gaps, not found), the estimator, the Curator, parameter errors.
"""

import numpy as np
import pytest
from sklearn.datasets import load_wine

import privclust.core as core
from privclust.core import Curator, GeometricBounds, Ledger, forecast_geometric_bounds
from privclust.core.bounds import geometric_bounds as gb
from privclust.core.bounds.geometric_bounds import (
    bucket_edges,
    exponents_for_range,
    geometric_bounds,
)
from privclust.core.estimator import DataAccessError
from privclust.core.privacy.audit import epsilon_lower_bound

N_AUDIT = 200_000
AUDIT_EXPONENTS = (0, 1)  # buckets [-4,-2) [-2,-1) (-1,1) [1,2) [2,4)


def _pair(moved_to):
    """40 records in the mode bucket [1, 2), 3 in the zero bucket, 5 in [2, 4); the neighbour
    moves a zero-bucket record to ``moved_to`` (None: removes it). At epsilon = 1 (b = 2,
    extension threshold 4.6: both counts of each side bucket on the same side of it) the event
    'the zero bucket is in the box and [2, 4) is not' has probability ratio e^(1/2) per bucket,
    e^1 in all under replace-one (e^(1/2) under add/remove, where b = 1 and the ratio is e^1
    for the zero bucket alone)."""
    x = np.array([1.5] * 40 + [0.5] * 3 + [3.0] * 5)[:, None]
    y = x.copy()
    if moved_to is None:
        return x, y[np.arange(len(y)) != 40]
    y[40, 0] = moved_to
    return x, y


def _audit(x, y, seed, neighbouring="replace", epsilon=1.0):
    rng = np.random.default_rng(seed)
    edges = bucket_edges(AUDIT_EXPONENTS)

    def category(data):
        lower, upper, found = geometric_bounds(
            data, epsilon, AUDIT_EXPONENTS, neighbouring=neighbouring, rng=rng, size=N_AUDIT
        )
        lo = np.searchsorted(edges, lower[:, 0])
        hi = np.searchsorted(edges, upper[:, 0])
        return (lo * len(edges) + hi) * 2 + found[:, 0]

    return epsilon_lower_bound(category(x), category(y), categorical=True)


@pytest.mark.audit
def test_audit_replace_one_whole_computation():
    x, y = _pair(3.0)
    assert _audit(x, y, seed=30) <= 1.0


@pytest.mark.audit
def test_audit_add_remove_whole_computation():
    x, y = _pair(None)
    assert _audit(x, y, seed=31, neighbouring="add_remove") <= 1.0


@pytest.mark.audit
def test_audit_the_pair_is_tight_enough_to_matter():
    """The audit reaches most of epsilon (so the planted bug below is not a lucky catch)."""
    x, y = _pair(3.0)
    assert _audit(x, y, seed=32) > 0.75  # measured 0.90-0.94


@pytest.mark.audit
def test_audit_planted_halved_noise_fails(monkeypatch):
    """Bug: the counts get noise of half the scale the privacy claim (and thresholds) assume,
    i.e. the add/remove sensitivity 1 used for a replace-one release."""
    right = gb.thresholds
    monkeypatch.setattr(gb, "thresholds", lambda *a: (right(*a)[0] / 2,) + right(*a)[1:])
    x, y = _pair(3.0)
    assert _audit(x, y, seed=33) > 1.0


# ---- the forecast and the real-data target ----------------------------------------------------
WINE = load_wine().data  # bundled with scikit-learn: no download


def test_forecast_from_public_facts():
    one_per_feature = forecast_geometric_bounds(13.0, 13, 178)
    assert one_per_feature.reliable and one_per_feature.epsilon_per_feature == pytest.approx(1)
    assert one_per_feature.noise_scale == pytest.approx(2.0)
    assert one_per_feature.outside_share <= 0.1 and "expect at most" in one_per_feature.message()
    total_one = forecast_geometric_bounds(1.0, 13, 178)
    assert total_one.reliable is False and "unreliable" in total_one.message()
    assert total_one.records_to_find > 178
    # the smallest epsilon the forecast calls reliable, and just below it
    needed = total_one.epsilon_needed
    assert 1.0 < needed < 13.0 and "reliable from ε ≈" in total_one.message()
    assert forecast_geometric_bounds(needed * 1.001, 13, 178).reliable
    assert not forecast_geometric_bounds(needed * 0.99, 13, 178).reliable
    unknown = forecast_geometric_bounds(1.0, 13)
    assert unknown.reliable is None and "not public" in unknown.message()
    # add/remove: half the noise, and n is not used by the estimator's forecast
    ar = GeometricBounds(epsilon=13.0, neighbouring="add_remove").forecast(178, 13)
    assert ar.noise_scale == pytest.approx(1.0) and ar.reliable is None
    # more epsilon, fewer records needed
    needs = [forecast_geometric_bounds(e, 13, 178).records_to_find for e in (1, 5, 13, 50)]
    assert needs == sorted(needs, reverse=True)


def test_wine_at_epsilon_one_per_feature_covers_90_percent_with_a_box_under_10x():
    """500 seeded releases at epsilon = 13 (1 per feature): in at least 95 % of them every one of
    the 13 features keeps >= 90 % of its records inside a box <= 10 x its range (measured:
    98.8 % over 2000 runs; per feature 99.9 %)."""
    X = WINE
    lower, upper, found = geometric_bounds(X, 13.0, rng=np.random.default_rng(7), size=500)
    inside = ((X[None] >= lower[:, None]) & (X[None] <= upper[:, None])).mean(axis=1)
    ratio = (upper - lower) / np.ptp(X, axis=0)
    good = (inside >= 0.9) & (ratio <= 10)
    assert found.all()
    assert good.all(axis=1).mean() >= 0.95
    assert good.mean() >= 0.99
    assert np.median(ratio) <= 3


def test_wine_at_epsilon_one_in_total_the_forecast_says_it_cannot():
    """epsilon = 1 over 13 features: the forecast (before any spend) says unreliable, and it is
    (most features are not found and get the whole search range)."""
    assert not GeometricBounds(epsilon=1.0).forecast(*WINE.shape).reliable
    _, _, found = geometric_bounds(WINE, 1.0, rng=np.random.default_rng(8), size=200)
    assert found.mean() < 0.5


# ---- the bound rule ---------------------------------------------------------------------------
def test_zeros_and_large_values_across_a_gap_are_both_kept():
    x = np.concatenate([np.zeros(300), np.full(300, 50.0)])[:, None]
    lower, upper, found = geometric_bounds(x, 2.0, rng=np.random.default_rng(0), size=200)
    assert found.all() and np.all(lower <= 0) and np.all(upper >= 64) and np.all(upper <= 128)


def test_negative_values_and_the_edges():
    x = np.column_stack([np.linspace(-30, -3, 400), np.linspace(-0.7, 0.9, 400)])
    lower, upper, _ = geometric_bounds(
        x, 20.0, exponents=(-4, 10), rng=np.random.default_rng(1), size=100
    )
    # the tightest bucket edges, except where an empty neighbour bucket's noise clears the
    # extension threshold (5 % per side)
    assert np.all(lower <= [-32, -1]) and np.all(upper >= [-2, 1])
    assert np.mean(lower[:, 0] == -32) > 0.85 and np.mean(upper[:, 0] == -2) > 0.85
    assert np.mean(lower[:, 1] == -1) > 0.85 and np.mean(upper[:, 1] == 1) > 0.85


def test_a_feature_not_found_gets_the_whole_range():
    x = np.random.default_rng(0).uniform(-1e4, 1e4, size=(30, 1))  # spread over many buckets
    lower, upper, found = geometric_bounds(x, 0.5, rng=np.random.default_rng(2), size=200)
    edges = bucket_edges((-8, 16))
    assert np.all(lower[~found] == edges[0]) and np.all(upper[~found] == edges[-1])
    assert (~found).mean() > 0.9


def test_exponents_for_range():
    assert exponents_for_range(2000, 0.01) == (-7, 10)
    assert exponents_for_range(1.0, 1.0) == (0, 0)
    with pytest.raises(ValueError, match="largest"):
        exponents_for_range(0, 1)


# ---- the estimator ----------------------------------------------------------------------------
class Unreadable:
    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.reads = []

    def _read(self, *args, **kwargs):
        self.reads.append("read")
        raise DataAccessError("read before the charge")

    __array__ = __array_function__ = __array_ufunc__ = __getitem__ = __iter__ = _read
    astype = copy = tocsr = toarray = _read

    def __len__(self):
        return self.shape[0]


def test_fit_equals_the_batched_computation_and_plans_pure_epsilon():
    X = np.random.default_rng(0).normal(size=(300, 3))
    est = GeometricBounds(epsilon=3.0, random_state=4).fit(X)
    lower, upper, found = geometric_bounds(X, 3.0, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(est.lower_, lower)
    np.testing.assert_array_equal(est.upper_, upper)
    np.testing.assert_array_equal(est.found_, found)
    assert np.all(est.lower_ < est.upper_) and est.n_features_in_ == 3
    plan = GeometricBounds(epsilon=0.3).plan(300, 3)
    assert (plan.epsilon, plan.delta, plan.kind) == (pytest.approx(0.3), 0.0, "pure")
    assert [m.sensitivity for m in plan.mechanisms] == [2.0] * 3
    assert est.privacy_.epsilon == pytest.approx(3.0)


@pytest.mark.parametrize("epsilon", [1e-300, 1e300])
def test_extreme_epsilon_never_fails_after_the_charge(epsilon):
    big = np.finfo(np.float64).max
    for X in (np.array([[big, -big], [0.0, 0.0]]), np.zeros((1, 2))):
        est = GeometricBounds(epsilon=epsilon, exponents=(-1000, 1000), random_state=0).fit(X)
        assert np.all(est.lower_ < est.upper_) and np.all(np.isfinite(est.bounds_))


BAD = [
    (dict(exponents=(3, 1)), "exponents"),
    (dict(exponents=(0.5, 2)), "exponents"),
    (dict(exponents=(-2000, 0)), "exponents"),
    (dict(exponents="wide"), "exponents"),
    (dict(failure_probability=0.0), "failure_probability"),
    (dict(failure_probability=1.0), "failure_probability"),
    (dict(neighbouring="cell"), "neighbouring"),
    (dict(epsilon=0.0), "epsilon"),
]


@pytest.mark.parametrize("bad, name", BAD, ids=[n + str(i) for i, (_, n) in enumerate(BAD)])
def test_parameter_errors_name_the_parameter_before_charge_and_read(bad, name):
    ledger = Ledger(10.0)
    X = Unreadable((100, 3))
    with pytest.raises((ValueError, TypeError), match=name):
        GeometricBounds(**{**dict(epsilon=0.5, ledger=ledger), **bad}).fit(X)
    assert X.reads == [] and ledger.history == []


def test_release_through_the_curator_and_exported():
    from privclust.core.release.curator import core_private_classes

    ledger = Ledger(20.0)
    release = Curator(WINE, ledger).release(GeometricBounds(epsilon=13.0))
    assert ledger.spent[0] == pytest.approx(13.0)
    assert set(release.attributes) == {"lower_", "upper_", "bounds_", "found_"}
    assert release.lower_.shape == (13,)
    assert core.GeometricBounds is GeometricBounds and GeometricBounds in core_private_classes()
