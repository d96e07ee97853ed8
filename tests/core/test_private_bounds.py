"""PrivateBounds: per-feature bounds from private quantiles (Smith, STOC 2011, Sec. 3).

* exact privacy: on tiny neighbouring datasets (replace-one and add/remove) the exact output
  densities of one quantile release never differ by more than e^epsilon; a planted sensitivity
  of 0.5 violates it;
* the sampler follows the exact interval probabilities (chi-square), and a planted doubled
  epsilon does not;
* seeded Clopper-Pearson audits (privclust.core.privacy.audit, alpha = 1e-3) of the primitive
  and of the estimator's whole computation, each with a planted bug that must fail it (a
  sensitivity of 0.5; an outer range widened to the data instead of clipping the records);
* utility on 2000 Gaussian records, plan before data, the Curator's charge, parameter errors,
  and the owner-only outside_share.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import privclust.core as core
from privclust.core import Curator, Ledger, PrivateBounds, outside_share
from privclust.core.bounds import quantile_bounds as bounds_module
from privclust.core.bounds.quantile_bounds import private_bounds
from privclust.core.data import Dataset
from privclust.core.estimator import DataAccessError
from privclust.core.privacy import BudgetExceeded
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.privacy.mechanisms import quantile as quantile_module
from privclust.core.privacy.mechanisms.quantile import (
    exponential_quantile_probabilities,
    exponential_quantiles,
)

N_AUDIT = 200_000


class Unreadable:
    """Private data stand-in: a public ``.shape``; any read of a value raises DataAccessError."""

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.reads = []

    def _read(self, *args, **kwargs):
        self.reads.append("read")
        raise DataAccessError("the data were read before the charge")

    __array__ = __array_function__ = __array_ufunc__ = __getitem__ = __iter__ = _read
    astype = copy = tocsr = toarray = _read

    def __len__(self):
        return self.shape[0]


# ---- exact distribution -----------------------------------------------------------------------
def _density(values, q, eps, lo, hi, points):
    edges, probs = exponential_quantile_probabilities(values, [q], eps, lo, hi)
    widths = np.diff(edges)
    idx = np.clip(np.searchsorted(edges, points, side="right") - 1, 0, len(widths) - 1)
    return np.where(widths[idx] > 0, probs[0][idx] / np.where(widths[idx] > 0, widths[idx], 1), 0)


def _exact_loss(x, y, q, eps, lo=0.0, hi=1.0):
    """sup_v |ln p_x(v) / p_y(v)| of the two piecewise-constant output densities."""
    cuts = np.unique(np.concatenate([[lo, hi], np.clip(x, lo, hi), np.clip(y, lo, hi)]))
    mids = (cuts[:-1] + cuts[1:]) / 2
    a, b = _density(x, q, eps, lo, hi, mids), _density(y, q, eps, lo, hi, mids)
    return float(np.max(np.abs(np.log(a / b))))


def _neighbours(seed=0, count=400):
    """Random replace-one and add/remove pairs of tiny datasets on [0, 1], with ties and
    records outside the range (clipped)."""
    rng = np.random.default_rng(seed)
    grid = np.array([-3.0, 0.0, 0.001, 0.1, 0.5, 0.9, 0.999, 1.0, 4.0])
    for _ in range(count):
        x = rng.choice(grid, size=rng.integers(1, 7))
        y = x.copy()
        y[rng.integers(x.size)] = rng.choice(grid)
        yield x, y
        yield x, np.append(x, rng.choice(grid))


@pytest.mark.parametrize("q", [0.0, 0.01, 0.3, 0.5, 0.99])
def test_exact_density_ratio_within_epsilon_on_neighbours(q):
    eps = 1.0
    worst = max(_exact_loss(x, y, q, eps) for x, y in _neighbours())
    assert worst <= eps * (1 + 1e-9)
    if q == 0.5:
        assert worst > 0.9 * eps  # the factor 2 of the exponential mechanism is needed


def test_exact_planted_sensitivity_half_violates(monkeypatch):
    monkeypatch.setattr(quantile_module, "SENSITIVITY", 0.5)
    worst = max(_exact_loss(x, y, 0.5, 1.0) for x, y in _neighbours())
    assert worst > 1.5


def _interval_counts(values, q, eps, lo, hi, released):
    edges, _ = exponential_quantile_probabilities(values, [q], eps, lo, hi)
    idx = np.searchsorted(edges, released, side="right") - 1
    return np.bincount(np.minimum(idx, len(edges) - 2), minlength=len(edges) - 1)


def test_sampler_follows_the_exact_probabilities():
    x = np.array([0.2, 0.25, 0.25, 0.6, 0.9, 3.0])
    rng = np.random.default_rng(5)
    edges, probs = exponential_quantile_probabilities(x, [0.3], 2.0, 0.0, 1.0)
    keep = probs[0] > 0
    counts = _interval_counts(
        x, 0.3, 2.0, 0.0, 1.0, exponential_quantiles(x, 0.3, 2.0, 0.0, 1.0, rng, size=100_000)[:, 0]
    )
    assert counts[~keep].sum() == 0
    p = stats.chisquare(counts[keep], 100_000 * probs[0][keep]).pvalue
    assert p > 1e-6
    bad = _interval_counts(
        x, 0.3, 2.0, 0.0, 1.0, exponential_quantiles(x, 0.3, 4.0, 0.0, 1.0, rng, size=100_000)[:, 0]
    )
    assert stats.chisquare(bad[keep], 100_000 * probs[0][keep]).pvalue < 1e-6


def test_released_values_stay_in_the_outer_range_and_follow_the_rng():
    x = np.array([-50.0, 0.5, 80.0])
    a = exponential_quantiles(
        x, [0.0, 0.5, 1.0], 5.0, -1.0, 2.0, np.random.default_rng(1), size=5000
    )
    assert a.shape == (5000, 3) and a.min() >= -1.0 and a.max() <= 2.0
    b = exponential_quantiles(
        x, [0.0, 0.5, 1.0], 5.0, -1.0, 2.0, np.random.default_rng(1), size=5000
    )
    np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="rng"):
        exponential_quantiles(x, 0.5, 1.0, 0.0, 1.0, 0)


# ---- statistical audits -----------------------------------------------------------------------
# Pairs found by maximising the exact loss over tiny datasets (events of probability >= 2 %):
# the q = 0.5 primitive reaches about 0.9 epsilon and the estimator at q = 0.45 (lower_ = the
# smaller of the two quantiles, both pushed the same way) about 0.87 epsilon, so doubling the
# logits (sensitivity 0.5) gives about 1.7-1.8 epsilon. Measured over 60 seeds at 200 000 runs
# per side: correct 0.57-0.86 (none above 1; alpha = 1e-3 bounds the false failures), planted
# 1.35-1.74 (all above 1); the outlier pair: correct <= 0.05, range from the data 5.8-6.2.
PRIM_X, PRIM_Y = np.array([0.0, 0.9]), np.array([1.0, 0.9])
EST_X = np.array([[1.0], [0.9], [0.0], [0.9], [0.5]])
EST_Y = np.array([[1.0], [0.9], [5.0], [0.9], [0.5]])  # 0.0 replaced by an outlier (clipped)


def _audit_primitive(eps_used, seed):
    rng = np.random.default_rng(seed)
    a = exponential_quantiles(PRIM_X, 0.5, eps_used, 0.0, 1.0, rng, size=N_AUDIT)[:, 0]
    b = exponential_quantiles(PRIM_Y, 0.5, eps_used, 0.0, 1.0, rng, size=N_AUDIT)[:, 0]
    return epsilon_lower_bound(a, b)


def _audit_estimator(X, Y, quantile, seed, side=0):
    rng = np.random.default_rng(seed)
    a = private_bounds(X, 1.0, (0.0, 1.0), quantile, rng=rng, size=N_AUDIT)[side][:, 0]
    b = private_bounds(Y, 1.0, (0.0, 1.0), quantile, rng=rng, size=N_AUDIT)[side][:, 0]
    return epsilon_lower_bound(a, b)


@pytest.mark.audit
def test_audit_quantile_primitive():
    assert _audit_primitive(1.0, seed=20) <= 1.0


@pytest.mark.audit
def test_audit_quantile_primitive_planted_doubled_logits():
    assert _audit_primitive(2.0, seed=21) > 1.0  # = sensitivity 0.5 at epsilon 1


@pytest.mark.audit
def test_audit_private_bounds_whole_computation():
    assert _audit_estimator(EST_X, EST_Y, 0.45, seed=22) <= 1.0


@pytest.mark.audit
def test_audit_private_bounds_planted_sensitivity_half(monkeypatch):
    monkeypatch.setattr(quantile_module, "SENSITIVITY", 0.5)
    assert _audit_estimator(EST_X, EST_Y, 0.45, seed=23) > 1.0


OUT_X = np.array([[0.5], [0.5], [0.5]])
OUT_Y = np.array([[0.5], [0.5], [5.0]])  # one record far above the outer range


@pytest.mark.audit
def test_audit_private_bounds_outlier_at_the_default_quantile():
    assert _audit_estimator(OUT_X, OUT_Y, 0.01, seed=24, side=1) <= 1.0


@pytest.mark.audit
def test_audit_planted_range_from_the_data_fails(monkeypatch):
    """Bug: the records are not clipped; the range is widened to contain them."""
    monkeypatch.setattr(
        quantile_module, "_into_range", lambda x, lo, hi: (x, min(lo, x.min()), max(hi, x.max()))
    )
    assert _audit_estimator(OUT_X, OUT_Y, 0.01, seed=25, side=1) > 1.0


# ---- the estimator ----------------------------------------------------------------------------
def test_fit_equals_the_batched_computation_with_the_same_generator():
    X = np.random.default_rng(0).normal(size=(300, 3))
    est = PrivateBounds(
        epsilon=0.3, outer_bounds=(-5, 5), quantile=0.02, margin=0.1, random_state=4
    ).fit(X)
    lower, upper = private_bounds(X, 0.3, (-5, 5), 0.02, 0.1, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(est.lower_, lower)
    np.testing.assert_array_equal(est.upper_, upper)
    np.testing.assert_array_equal(est.bounds_, np.column_stack([lower, upper]))
    assert est.n_features_in_ == 3


def test_plan_is_two_quantiles_per_feature_pure_epsilon():
    plan = PrivateBounds(epsilon=0.1, outer_bounds=(-10, 10)).plan(2000, 4)
    assert (plan.epsilon, plan.delta, plan.kind, plan.neighbouring) == (
        pytest.approx(0.1, rel=1e-12),
        0.0,
        "pure",
        "replace",
    )
    assert len(plan.mechanisms) == 8
    assert all(
        m.epsilon == pytest.approx(0.1 / 8) and m.sensitivity == 1.0 for m in plan.mechanisms
    )
    add_remove = PrivateBounds(epsilon=0.1, outer_bounds=(-10, 10), neighbouring="add_remove")
    assert add_remove.plan(None, 4).neighbouring == "add_remove"


UTILITY_Q = 0.01
UTILITY_TOL = 0.15  # share of records beyond a bound; exact failure probability < 1e-3 each


def test_utility_on_2000_gaussian_records():
    """eps 0.1 over d = 2 features (0.025 per quantile), outer range [-10, 10]. Each lower bound
    leaves at most 15 % of the records below it (each upper bound 15 % above); the exact
    probability of leaving more is below 1e-3 per bound on this sample (checked below). The
    error is lopsided: most of the time the bound lies between the outer end and the extreme
    record (the box is too wide rather than too narrow)."""
    X = np.random.default_rng(1).normal(size=(2000, 2))
    for j in range(2):
        _, probs = exponential_quantile_probabilities(
            X[:, j], [UTILITY_Q, 1 - UTILITY_Q], 0.1 / 4, -10, 10
        )
        assert probs[0][int(UTILITY_TOL * 2000) + 1 :].sum() < 1e-3
        assert probs[1][: int((1 - UTILITY_TOL) * 2000)].sum() < 1e-3
    lower, upper = private_bounds(
        X, 0.1, (-10, 10), UTILITY_Q, rng=np.random.default_rng(2), size=200
    )
    below = (X[None, :, :] < lower[:, None, :]).mean(axis=1)  # (200 runs, 2 features)
    above = (X[None, :, :] > upper[:, None, :]).mean(axis=1)
    assert below.max() <= UTILITY_TOL and above.max() <= UTILITY_TOL
    assert np.median(below) <= 0.03 and np.median(above) <= 0.03
    assert lower.min() >= -10 and upper.max() <= 10 and np.all(upper > lower)
    # with a public range close to the data, the bounds are close in value as well
    est = PrivateBounds(epsilon=0.1, outer_bounds=(-4, 4), random_state=3).fit(X)
    true_lo, true_hi = np.quantile(X, [UTILITY_Q, 1 - UTILITY_Q], axis=0)
    assert np.all(np.abs(est.lower_ - true_lo) < 1.7) and np.all(np.abs(est.upper_ - true_hi) < 1.7)
    assert outside_share(X, est.lower_, est.upper_) <= 2 * 2 * UTILITY_TOL


def test_margin_widens_and_the_box_is_ordered_and_strict():
    X = np.zeros((50, 2))
    X[:, 1] = 1.0
    lower, upper = private_bounds(
        X, 50.0, ([-1, 0], [1, 1]), 0.3, rng=np.random.default_rng(0), size=2000
    )
    assert np.all(upper > lower) and np.all(lower >= [-1, 0]) and np.all(upper <= [1, 1])
    wide = private_bounds(
        X, 50.0, ([-1, 0], [1, 1]), 0.3, margin=0.5, rng=np.random.default_rng(0), size=2000
    )
    assert np.all(wide[0] <= lower) and np.all(wide[1] >= upper)
    # post-processing of a tie: lower == upper at the outer low end still gives lower < upper
    lo, hi = bounds_module._post_process(
        np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 0.0]), np.array([1.0, 1.0]), 0.0
    )
    assert np.all(hi > lo) and np.all(lo >= 0.0) and np.all(hi <= 1.0)


@pytest.mark.parametrize("epsilon", [1e-300, 1e300])
def test_extreme_valid_parameters_and_records_never_fail_after_the_charge(epsilon):
    """Anything the plan accepts runs: a huge epsilon (every interval but the best one has
    weight exp(-inf)), a tiny one, records at +-float64 max, ties, one record."""
    big = np.finfo(np.float64).max
    for X in (
        np.array([[big, -big], [0.0, 0.0], [-big, big]]),
        np.zeros((1, 2)),
        np.full((40, 2), 0.25),
    ):
        est = PrivateBounds(
            epsilon=epsilon,
            outer_bounds=(-1e300, 1e300),
            quantile=0.0,
            margin=1e300,
            random_state=0,
        ).fit(X)
        assert np.all(est.lower_ < est.upper_)
        assert np.all(est.lower_ >= -1e300) and np.all(est.upper_ <= 1e300)


def test_direct_fit_with_a_ledger_charges_before_reading():
    ledger = Ledger(1.0)
    X = Unreadable((100, 3))
    est = PrivateBounds(epsilon=0.1, outer_bounds=(-1, 1), ledger=ledger, random_state=0)
    with pytest.raises(DataAccessError):
        est.fit(X)
    assert ledger.spent[0] == pytest.approx(0.1) and len(X.reads) >= 1
    spent = Ledger(0.05)
    X = Unreadable((100, 3))
    with pytest.raises(BudgetExceeded):
        PrivateBounds(epsilon=0.1, outer_bounds=(-1, 1), ledger=spent).fit(X)
    assert X.reads == []


BAD = [
    (dict(outer_bounds=None), "outer_bounds"),
    (dict(outer_bounds=(1.0, -1.0)), "outer_bounds"),
    (dict(outer_bounds=(0.0, float("inf"))), "outer_bounds"),
    (dict(outer_bounds=([0.0, 0.0], [1.0, 1.0])), "outer_bounds"),  # 2 ranges for 3 features
    (dict(outer_bounds="wide"), "outer_bounds"),
    (dict(outer_bounds=(-1e308, 1e308)), "outer_bounds"),  # the width overflows
    (dict(quantile=0.5), "quantile"),
    (dict(quantile=-0.01), "quantile"),
    (dict(quantile="low"), "quantile"),
    (dict(margin=-0.1), "margin"),
    (dict(margin=float("nan")), "margin"),
    (dict(neighbouring="cell"), "neighbouring"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=float("inf")), "epsilon"),
    (dict(epsilon=None), "epsilon"),
]


@pytest.mark.parametrize("bad, name", BAD, ids=[f"{n}={list(b.values())[0]!r}" for b, n in BAD])
def test_parameter_errors_name_the_parameter_before_charge_and_read(bad, name):
    ledger = Ledger(10.0)
    X = Unreadable((100, 3))
    params = {**dict(epsilon=0.1, outer_bounds=(-1.0, 1.0), ledger=ledger), **bad}
    with pytest.raises((ValueError, TypeError), match=name):
        PrivateBounds(**params).fit(X)
    assert X.reads == [] and ledger.history == []


def test_nan_data_is_refused_after_the_charge_without_quoting_values():
    """As every private estimator: the data are read (and checked) only after the charge."""
    X = np.random.default_rng(0).normal(size=(20, 2))
    X[3, 1] = np.nan
    ledger = Ledger(1.0)
    with pytest.raises(ValueError, match="contains NaN or infinite values$"):
        PrivateBounds(outer_bounds=(-3, 3), ledger=ledger).fit(X)
    assert len(ledger.history) == 1


# ---- the Curator ------------------------------------------------------------------------------
def test_release_through_the_curator_charges_exactly_the_plan():
    X = np.random.default_rng(3).normal(size=(500, 3))
    ledger = Ledger(1.0)
    curator = Curator(Dataset(X, name="private"), ledger)
    request = PrivateBounds(epsilon=0.1, outer_bounds=(-10, 10), quantile=0.02)
    prepared = curator.prepare(request)
    plan, cost = prepared.plan, prepared.cost
    assert cost == (pytest.approx(0.1), 0.0) and plan.epsilon == pytest.approx(0.1)
    assert ledger.history == []
    release = curator.release(request)
    assert ledger.spent[0] == pytest.approx(0.1) and len(ledger.history) == 1
    assert release.estimator == "PrivateBounds" and release.cost == (pytest.approx(0.1), 0.0)
    assert set(release.attributes) == {"lower_", "upper_", "bounds_"}
    assert release.lower_.shape == (3,) and np.all(release.upper_ > release.lower_)
    # the same request again is answered from the store, free
    assert curator.release(request).from_store and len(ledger.history) == 1
    # the owner's check of the suggested box (NOT PRIVATE, nothing charged)
    result = curator.owner_evaluate(lambda ds: outside_share(ds, release.lower_, release.upper_))
    assert "NOT PRIVATE" in result.label and 0.0 <= result.value <= 1.0
    assert len(ledger.history) == 1


def test_add_remove_release_on_an_add_remove_ledger_costs_epsilon():
    X = np.random.default_rng(3).normal(size=(200, 2))
    ledger = Ledger(1.0, unit="add_remove")
    curator = Curator(X, ledger)
    curator.release(PrivateBounds(epsilon=0.2, outer_bounds=(-5, 5), neighbouring="add_remove"))
    assert ledger.spent[0] == pytest.approx(0.2)
    with pytest.raises(ValueError):  # a replace-one release cannot be counted there
        curator.release(PrivateBounds(epsilon=0.2, outer_bounds=(-5, 5)))


def test_exported_and_trusted_by_the_curator():
    from privclust.core.release.curator import core_private_classes

    assert core.PrivateBounds is PrivateBounds and PrivateBounds in core_private_classes()
    assert core.outside_share is outside_share


# ---- outside_share ----------------------------------------------------------------------------
def test_outside_share_dense_sparse_and_dataset():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, -3.0], [5.0, 5.0], [1.0, 1.0]])
    share, per = outside_share(X, [-1, -1], [1, 1], per_feature=True)
    assert share == pytest.approx(3 / 5)
    np.testing.assert_allclose(per, [2 / 5, 2 / 5])
    assert outside_share(Dataset(X), -1, 1) == pytest.approx(3 / 5)
    assert outside_share(X, -10, 10) == 0.0 and outside_share(X, 1, 1) == pytest.approx(4 / 5)
    # sparse: implicit zeros are outside a box that excludes 0
    for lo, hi in (([-1, -1], [1, 1]), ([0.5, -4], [6, 6]), ([-5, 0.5], [6, 6])):
        s, p = outside_share(sp.csr_matrix(X), lo, hi, per_feature=True)
        d, q = outside_share(X, lo, hi, per_feature=True)
        assert s == pytest.approx(d) and np.allclose(p, q)
    with pytest.raises(ValueError, match="NaN"):
        outside_share(np.array([[np.nan]]), 0, 1)
    with pytest.raises(ValueError, match="lower"):
        outside_share(X, [0, 0, 0], 1)
    assert math.isclose(outside_share(np.array([[np.inf, 0.0]]), -1, 1), 1.0)
