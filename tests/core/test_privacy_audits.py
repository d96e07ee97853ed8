"""Seeded Clopper-Pearson audits of every DP primitive on adversarial neighbouring inputs
(the method of Ding, Wang, Wang, Zhang & Kifer, CCS 2018, with Clopper-Pearson intervals).

Each correct mechanism must give epsilon_lower_bound <= claimed epsilon (false alarm <= alpha =
1e-3 per audit; seeds fixed so CI is deterministic). Each planted bug, implemented here in the
test and never in production code, must give a bound > claimed epsilon.
"""

import numpy as np
import pytest

from privclust.core import privacy as P
from privclust.core.privacy.audit import epsilon_lower_bound

pytestmark = pytest.mark.audit

N = 200_000
EPS = 1.0


def rng(seed):
    return np.random.default_rng(seed)


# -- Laplace (real, vector, complex) ----------------------------------------------------------
def test_laplace_scalar():
    g = rng(10)
    assert (
        epsilon_lower_bound(
            P.laplace(0.0, 1.0, EPS, g, size=N), P.laplace(1.0, 1.0, EPS, g, size=N)
        )
        <= EPS
    )


def test_laplace_scalar_planted_half_noise():
    g = rng(11)
    bug = epsilon_lower_bound(
        P.laplace(0.0, 0.5, EPS, g, size=N), P.laplace(1.0, 0.5, EPS, g, size=N)
    )
    assert bug > EPS


def test_laplace_vector_l1_sensitivity():
    """A 3-vector whose L1 sensitivity 1 is spread over the coordinates; the attacker uses min."""
    g = rng(12)
    a = P.laplace(np.zeros(3), 1.0, EPS, g, size=N).min(axis=1)
    b = P.laplace(np.full(3, 1 / 3), 1.0, EPS, g, size=N).min(axis=1)
    assert epsilon_lower_bound(a, b) <= EPS


def test_laplace_vector_planted_l2_sensitivity():
    """Bug: calibrating Laplace noise with the L2 norm of the change (1/sqrt 3) instead of L1."""
    g = rng(13)
    l2 = np.linalg.norm(np.full(3, 1 / 3))
    a = P.laplace(np.zeros(3), l2, EPS, g, size=N).min(axis=1)
    b = P.laplace(np.full(3, 1 / 3), l2, EPS, g, size=N).min(axis=1)
    assert epsilon_lower_bound(a, b) > EPS


def _cmin(z):
    return np.minimum(z.real, z.imag)


def test_complex_laplace():
    """Change (0.5 + 0.5i) has L1 norm 1 over both parts; {re > t and im > t} is the tight event."""
    g = rng(14)
    a = _cmin(P.complex_laplace(0j, 1.0, EPS, g, size=N))
    b = _cmin(P.complex_laplace(0.5 + 0.5j, 1.0, EPS, g, size=N))
    assert epsilon_lower_bound(a, b) <= EPS


def test_complex_laplace_planted_per_part_sensitivity():
    """Bug: using the per-part change (0.5) as the sensitivity of the complex release."""
    g = rng(15)
    a = _cmin(P.complex_laplace(0j, 0.5, EPS, g, size=N))
    b = _cmin(P.complex_laplace(0.5 + 0.5j, 0.5, EPS, g, size=N))
    assert epsilon_lower_bound(a, b) > EPS


# -- Gaussian ---------------------------------------------------------------------------------
DELTA = 1e-5


@pytest.mark.parametrize(
    "calibration, eps", [("analytic", 1.0), ("analytic", 3.0), ("classic", 0.5)]
)
def test_gaussian(calibration, eps):
    g = rng(16)
    a = P.gaussian(0.0, 1.0, eps, DELTA, g, size=2 * N, calibration=calibration)
    b = P.gaussian(1.0, 1.0, eps, DELTA, g, size=2 * N, calibration=calibration)
    assert epsilon_lower_bound(a, b, delta=DELTA) <= eps


def test_gaussian_planted_half_noise():
    g = rng(17)
    a = P.gaussian(0.0, 0.5, EPS, DELTA, g, size=2 * N)
    b = P.gaussian(1.0, 0.5, EPS, DELTA, g, size=2 * N)
    assert epsilon_lower_bound(a, b, delta=DELTA) > EPS


# -- exponential mechanism --------------------------------------------------------------------
K = 20
U = np.zeros(K)
U_STD = np.r_[1.0, -np.ones(K - 1)]  # every utility moves by <= 1: Delta_u = 1
U_RANGE = np.r_[1.0, np.zeros(K - 1)]  # differences range over [0, 1]: Delta~ = 1


def _em(u, sens, g, range_based):
    return P.exponential_mechanism(u, EPS, sens, g, size=N, range_based=range_based)


def test_exponential_standard():
    g = rng(18)
    assert (
        epsilon_lower_bound(_em(U, 1.0, g, False), _em(U_STD, 1.0, g, False), categorical=True)
        <= EPS
    )


def test_exponential_standard_planted_range_formula():
    """Bug: the range-based scaling eps*u/Delta applied with the standard sensitivity."""
    g = rng(19)
    assert (
        epsilon_lower_bound(_em(U, 1.0, g, True), _em(U_STD, 1.0, g, True), categorical=True) > EPS
    )


def test_exponential_range_based():
    g = rng(20)
    assert (
        epsilon_lower_bound(_em(U, 1.0, g, True), _em(U_RANGE, 1.0, g, True), categorical=True)
        <= EPS
    )


def test_exponential_range_based_planted_half_sensitivity():
    g = rng(21)
    assert (
        epsilon_lower_bound(_em(U, 0.5, g, True), _em(U_RANGE, 0.5, g, True), categorical=True)
        > EPS
    )


def test_exponential_batched_rows_are_independent_selections():
    """(n, k) utilities: auditing one row of a batched selection behaves like a single selection."""
    g = rng(22)
    a = P.exponential_mechanism(np.stack([U, U]), EPS, 1.0, g, size=N // 2)[:, 1]
    b = P.exponential_mechanism(np.stack([U, U_STD]), EPS, 1.0, g, size=N // 2)[:, 1]
    assert epsilon_lower_bound(a, b, categorical=True) <= EPS


# -- AboveThreshold ---------------------------------------------------------------------------
M = 8


def _first_above(out, m):
    return np.where(out < 0, m, out)  # "none above" encoded as m, so threshold events make sense


def _above_threshold_without_threshold_noise(q, threshold, eps, g, size):
    noisy = q + g.laplace(0.0, 4.0 / eps, size=(size, len(q)))
    above = noisy >= threshold
    return np.where(above.any(axis=1), above.argmax(axis=1), -1)


@pytest.mark.parametrize("pair", ["all_shift", "cross_shift"])
def test_above_threshold(pair):
    g = rng(23)
    if pair == "all_shift":
        q1, q2 = np.zeros(M), np.ones(M)
    else:
        q1, q2 = np.r_[np.ones(M - 1), 0.0], np.r_[np.zeros(M - 1), 1.0]
    a = _first_above(P.above_threshold(q1, 0.0, EPS, g, size=N), M)
    b = _first_above(P.above_threshold(q2, 0.0, EPS, g, size=N), M)
    assert epsilon_lower_bound(a, b) <= EPS
    assert epsilon_lower_bound(a, b, categorical=True) <= EPS


def test_above_threshold_planted_no_threshold_noise():
    """Bug: T^ = T (no threshold noise): each 'below' answer then leaks eps/4 and they add up."""
    g = rng(24)
    a = _first_above(_above_threshold_without_threshold_noise(np.zeros(M), 0.0, EPS, g, N), M)
    b = _first_above(_above_threshold_without_threshold_noise(np.ones(M), 0.0, EPS, g, N), M)
    assert epsilon_lower_bound(a, b) > EPS


# -- stable histogram -------------------------------------------------------------------------
H_DELTA = 1e-6


def _released_key(keys, counts):
    return np.where(np.isnan(counts), -1, keys[:, 0])  # "nothing kept" encoded as -1


def _histogram_without_threshold(cell_keys, eps, g, size):
    cells, counts = np.unique(cell_keys, axis=0, return_counts=True)
    noisy = counts + g.laplace(0.0, 2.0 / eps, size=(size, len(counts)))
    best = noisy.argmax(axis=1)
    return cells[best], noisy[np.arange(size), best]


def test_stable_histogram_single_record_moved():
    """The record's cell exists in only one dataset: its release must be delta-rare."""
    g = rng(25)
    a = _released_key(*P.stable_histogram(np.array([[0]]), EPS, H_DELTA, g, size=N))
    b = _released_key(*P.stable_histogram(np.array([[1]]), EPS, H_DELTA, g, size=N))
    assert epsilon_lower_bound(a, b, delta=H_DELTA, categorical=True) <= EPS


def test_stable_histogram_planted_no_threshold():
    g = rng(26)
    a = _released_key(*_histogram_without_threshold(np.array([[0]]), EPS, g, N))
    b = _released_key(*_histogram_without_threshold(np.array([[1]]), EPS, g, N))
    assert epsilon_lower_bound(a, b, delta=H_DELTA, categorical=True) > EPS


def test_stable_histogram_common_support():
    """One record moves between two heavy cells: key (categorical) and noisy count (scalar)."""
    g = rng(27)
    d1 = np.r_[np.zeros(40, int), np.ones(40, int)][:, None]
    d2 = np.r_[np.zeros(39, int), np.ones(41, int)][:, None]
    k1, c1 = P.stable_histogram(d1, EPS, H_DELTA, g, size=N)
    k2, c2 = P.stable_histogram(d2, EPS, H_DELTA, g, size=N)
    assert (
        epsilon_lower_bound(
            _released_key(k1, c1), _released_key(k2, c2), delta=H_DELTA, categorical=True
        )
        <= EPS
    )
    assert (
        epsilon_lower_bound(np.nan_to_num(c1, nan=-1), np.nan_to_num(c2, nan=-1), delta=H_DELTA)
        <= EPS
    )
