"""RecConcave (Beimel, Nissim & Stemmer 2013) and GoodRadius with it (Nissim, Stemmer & Vadhan
2016, Sec. 3.1): the sampled release against a brute-force evaluation of the recursion's output
law, and DP audits on neighbouring data sets (exact law and sampled releases)."""

import math

import numpy as np
import onecluster_pairs as pairs
import pytest
from scipy.stats import chisquare

from privclust.core.onecluster import rec_concave as rc
from privclust.core.onecluster.good_radius import count_profile, good_radius
from privclust.core.privacy import BudgetAccountant, audit


def _em(q, eps):
    w = np.exp(eps * (np.asarray(q, float) - np.max(q)) / 2.0)
    return w / w.sum()


def _p_laplace_at_least(x, scale):
    """P(Lap(scale) >= x)."""
    return 0.5 * math.exp(-x / scale) if x >= 0 else 1.0 - 0.5 * math.exp(x / scale)


def brute_law(q, promise, eps, delta, alpha=0.5):
    """Output law of rec_concave by direct evaluation of its recursion: P(i) for i in [T], then
    P(-1). Windows, interval maxima and the two partitions enumerated with plain loops."""
    q = [float(v) for v in q]
    T = len(q)
    if T <= rc.BASE_SIZE:
        return np.append(_em(q, eps), 0.0)
    J = math.ceil(math.log2(T))
    Tp = 2**J
    pad = q + [min(0.0, q[-1])] * (Tp - T)
    L = [max(min(pad[a : a + 2**j]) for a in range(Tp - 2**j + 1)) for j in range(J + 1)]
    L.append(min(0.0, L[J]))
    q_exp = [min(L[j] - (1 - alpha) * promise, promise - L[j + 1]) for j in range(J + 1)]
    law_k = brute_law(q_exp, alpha * promise / 2, eps, delta, alpha=0.25)
    out = np.zeros(T + 1)
    out[T] += law_k[-1]
    thr = 2.0 + 2.0 / eps * math.log(1.0 / (2.0 * delta))
    for k, pk in enumerate(law_k[:-1]):
        W = 8 * 2**k
        options = []
        for offset in (0, W // 2):
            intervals = [list(range(s, min(s + W, Tp))) for s in range(offset, Tp, W)]
            if not intervals:
                options.append([(1.0, [])])
                continue
            quals = [max(pad[i] for i in iv) for iv in intervals]
            if len(intervals) == 1:
                options.append([(1.0, intervals[0])])
                continue
            best = int(np.argmax(quals))
            gap = quals[best] - max(v for i, v in enumerate(quals) if i != best)
            p = _p_laplace_at_least(thr - gap, 2.0 / eps)
            options.append([(p, intervals[best]), (1.0 - p, [])])
        for pa, A in options[0]:
            for pb, B in options[1]:
                cand = sorted({i for i in A + B if i < T})
                if not cand:
                    out[T] += pk * pa * pb
                else:
                    out[cand] += pk * pa * pb * _em([q[i] for i in cand], eps)
    return out


def _quasi_concave(T, peak, slope_up, slope_down, top):
    i = np.arange(T)
    return np.minimum(np.minimum(slope_up * (i - peak) + top, slope_down * (peak - i) + top), top)


def test_exponent_quality_matches_brute_force_windows():
    rng = np.random.default_rng(0)
    for T in (33, 50, 64, 100):
        q = _quasi_concave(T, rng.integers(T), 0.7, 1.3, 20.0) + rng.normal(0, 0.3, T)
        got, padded = rc.exponent_quality(q, 12.0, 0.5)
        J = math.ceil(math.log2(T))
        pad = list(q) + [min(0.0, q[-1])] * (2**J - T)
        L = [max(min(pad[a : a + 2**j]) for a in range(2**J - 2**j + 1)) for j in range(J + 1)]
        L.append(min(0.0, L[J]))
        want = [min(L[j] - 6.0, 12.0 - L[j + 1]) for j in range(J + 1)]
        np.testing.assert_allclose(got, want)
        np.testing.assert_array_equal(padded, pad)


def test_levels_and_promise():
    assert rc.levels(20) == [20]
    assert rc.levels(1024) == [1024, 11]
    assert rc.levels(2**40) == [2**40, 41, 7]
    assert rc.log_star(1024) == 4 and rc.log_star(2) == 1 and rc.log_star(1) == 0
    # the paper's promise is astronomically large for a practical budget
    assert rc.rec_concave_promise(1024, 1 / 8, 5e-7, 0.05) > 1e8


@pytest.mark.slow
@pytest.mark.parametrize("promise,delta", [(10.0, 0.05), (30.0, 0.01)])
def test_release_law_matches_brute_force_recursion(promise, delta):
    """20,000 runs of rec_concave on a 100-point domain (one recursion level) against the exact
    law of the brute-force recursion (chi-square, bins with >= 5 expected counts, -1 included)."""
    eps, N = 1.0, 20_000
    q = _quasi_concave(100, 61, 0.9, 0.6, promise)
    law = brute_law(q, promise, eps, delta)
    assert abs(law.sum() - 1) < 1e-12
    assert law[-1] > 0.01 and np.count_nonzero(law[:-1] > 0.01) >= 3  # informative
    rng = np.random.default_rng(5)
    out = np.array([rc.rec_concave(q, promise, eps, delta, rng) for _ in range(N)])
    counts = np.bincount(np.where(out < 0, 100, out), minlength=101)
    big = law * N >= 5
    f_obs = np.append(counts[big], counts[~big].sum())
    f_exp = np.append(law[big] * N, law[~big].sum() * N)
    keep = f_exp > 0
    assert chisquare(f_obs[keep], f_exp[keep] * f_obs.sum() / f_exp[keep].sum()).pvalue > 1e-3
    # planted bug: the promise halved in the brute force (a different recursion) is rejected
    wrong = brute_law(q, promise / 2, eps, delta)
    f_wrong = np.append(wrong[big] * N, wrong[~big].sum() * N)
    ok = f_wrong > 0
    assert chisquare(f_obs[ok], f_wrong[ok] * f_obs[ok].sum() / f_wrong[ok].sum()).pvalue < 1e-6


# neighbouring data sets: see onecluster_pairs
X, XP = pairs.X, pairs.XP
T_PTS, EPS, DELTA, PROMISE, BETA = 30, 4.0, 0.05, 4.0, 0.05
STEP = 1 / 40  # 40 radii: one recursion level


def _qualities(data, gamma=PROMISE):
    grid = STEP * np.arange(1, 41)
    L0, Lh = count_profile(data, T_PTS, grid[0] / 2 * np.arange(1, 81), bounds=(0.0, 1.0))
    return L0, 0.5 * np.minimum(Lh[1::2] - T_PTS + 4 * gamma, T_PTS - Lh[:40])


def _exact_release_law(data):
    """P(zero test), then P(index), then P(stability failed): the exact law of
    release_rec_concave."""
    L0, q = _qualities(data)
    eps_m, delta_m, D = rc.budget_split(EPS, DELTA, len(q))
    p_zero = _p_laplace_at_least(
        T_PTS - 2 * PROMISE - 4 / EPS * math.log(1 / (2 * BETA)) - L0, 4 / EPS
    )  # P(L0 + Lap(4/eps) > threshold)
    law = brute_law(q, PROMISE, eps_m, delta_m)
    return np.concatenate([[p_zero], (1 - p_zero) * law])


def _hockey_stick(P, Q, eps):
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


@pytest.mark.audit
def test_exact_law_on_neighbours_is_eps_delta_dp():
    P, Q = _exact_release_law(X), _exact_release_law(XP)
    assert max(_hockey_stick(P, Q, EPS), _hockey_stick(Q, P, EPS)) <= DELTA
    # informative: the laws differ (each mechanism runs at eps / 8 here, so by less than eps)
    assert np.max(np.abs(np.log(P[P > 1e-12]) - np.log(Q[P > 1e-12]))) > 0.2
    assert np.count_nonzero(P > 0.01) >= 4


@pytest.mark.audit
@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-3), (4.0, 0.05)])
def test_stability_choice_worst_neighbours_exact(eps, delta):
    """choose_stable on the worst neighbouring qualities (sensitivity 1): q = (g, g - 2) and
    q' = (g - 1, g - 1 + eps') with the argmax moved; releasing index 0 under q must have
    probability <= delta (it is 0 under q'), for every gap the neighbours allow. Planted bug:
    the textbook noise Lap(1/eps) with threshold 1 + ln(1/(2 delta))/eps (a gap of
    sensitivity 1) releases it with probability delta e^eps."""
    thr = 2.0 + 2.0 / eps * math.log(1.0 / (2.0 * delta))
    p_release = _p_laplace_at_least(thr - 2.0, 2.0 / eps)  # gap 2: the largest possible
    assert p_release <= delta * (1 + 1e-12)
    rng = np.random.default_rng(0)
    hits = sum(rc.choose_stable([thr + 12.0 / eps, 0.0], eps, delta, rng) == 0 for _ in range(2000))
    assert hits > 1950  # a clear winner is released
    thr_bug = 1.0 + 1.0 / eps * math.log(1.0 / (2.0 * delta))
    assert _p_laplace_at_least(thr_bug - 2.0, 1.0 / eps) > delta


@pytest.mark.slow
@pytest.mark.audit
def test_sampled_release_audit_on_neighbours():
    """Sampled releases of release_rec_concave on the neighbouring pair: the Clopper-Pearson
    lower bound on epsilon (at the run's delta) stays below epsilon, and the sampled law
    matches the exact one."""
    rng = np.random.default_rng(3)
    outs = []
    for data in (X, XP):
        L0, q = _qualities(data)
        outs.append(
            np.array(
                [
                    rc.release_rec_concave(L0, q, T_PTS, PROMISE, EPS, DELTA, rng, beta=BETA)
                    for _ in range(20_000)
                ]
            )
        )
    assert audit.epsilon_lower_bound(outs[0], outs[1], delta=DELTA, categorical=True) <= EPS
    law = _exact_release_law(X)
    freq = (
        np.bincount(
            np.where(outs[0] == -1, 0, np.where(outs[0] == -2, 41, outs[0] + 1)), minlength=42
        )
        / 20_000
    )
    assert np.max(np.abs(freq - law)) < 5 * np.sqrt(0.25 / 20_000)


def test_good_radius_variant_charges_before_reading_and_needs_delta():
    data = np.random.default_rng(0).uniform(0, 1, (200, 2))
    acc = BudgetAccountant(1.0, 1e-4)
    with pytest.raises(ValueError, match="delta"):
        good_radius(
            data,
            100,
            1.0,
            (0.0, 1.0),
            2.0**-10,
            np.random.default_rng(1),
            acc,
            variant="rec_concave",
        )
    assert acc.spent == (0.0, 0.0)
    res = good_radius(
        data,
        100,
        1.0,
        (0.0, 1.0),
        2.0**-10,
        np.random.default_rng(1),
        acc,
        variant="rec_concave",
        delta=1e-4,
    )
    assert acc.spent[0] == pytest.approx(1.0) and acc.spent[1] == pytest.approx(1e-4)
    assert res.gamma > 1e8 and res.radius == 0.0  # the paper's promise: zero test fires
    with pytest.raises(ValueError, match="variant"):
        good_radius(
            data, 100, 1.0, (0.0, 1.0), 2.0**-10, np.random.default_rng(1), acc, variant="nope"
        )
