"""Statistical DP audits of GoodRadius's release and of NoisyAVG, with planted bugs that must fail.

Pattern (Ding, Wang, Wang, Zhang & Kifer, CCS 2018): run the batched release N times on D and on a
neighbour D', reduce to a scalar/category and compare the Clopper-Pearson lower bound on epsilon
with the claim. The neighbour pairs were chosen (by an exact-distribution search) to make the
release move as much as possible.
"""

import importlib
import math

import numpy as np
import onecluster_pairs as pairs
import pytest

from privclust.core.privacy import audit, exponential_probabilities

gr = importlib.import_module("privclust.core.onecluster.good_radius")
na = importlib.import_module("privclust.core.onecluster.noisy_avg")

N = 200_000
# neighbouring data sets: see onecluster_pairs
GR_X, GR_XP = pairs.X, pairs.XP
GR_T = 30
GRID = 2.0**-6 * 2.0 ** np.arange(7)


# a second pair (found the same way) where L(r)/2 straddles AboveThreshold's threshold
_AT_IDX = [
    24,
    47,
    10,
    13,
    46,
    23,
    27,
    3,
    36,
    39,
    40,
    7,
    30,
    0,
    41,
    14,
    42,
    38,
    21,
    28,
    31,
    33,
    11,
    29,
    35,
    43,
    6,
    2,
]
AT_X = np.array(_AT_IDX, dtype=float)[:, None] / 64
AT_XP = AT_X.copy()
AT_XP[16] = 54 / 64
AT_T = 28


def gr_releases(epsilon, variant, seed):
    rng = np.random.default_rng(seed)
    pair, t = ((GR_X, GR_XP), GR_T) if variant == "em_geometric" else ((AT_X, AT_XP), AT_T)
    out = []
    for X in pair:
        L0, L = gr.count_profile(X, t, GRID)
        out.append(gr.release_index(L0, L, t, epsilon, rng, variant=variant, size=N))
    return out


def exact_em_distribution(X, epsilon, beta=0.05):
    """Exact output law of the em_geometric release: P(-1) (zero test), then the grid indices."""
    L0, L = gr.count_profile(X, GR_T, GRID)
    gamma = gr.em_gamma(epsilon, len(GRID), beta)
    z = L0 - (GR_T - 2 * gamma - 4 / epsilon * math.log(1 / (2 * beta)))
    b = 4 / epsilon
    p_zero = 1 - 0.5 * math.exp(-z / b) if z >= 0 else 0.5 * math.exp(z / b)
    p = exponential_probabilities(gr.quality(L, L0, GR_T, gamma), epsilon / 2, 1.0)
    return np.concatenate([[p_zero], (1 - p_zero) * p])


@pytest.mark.audit
def test_good_radius_exact_distribution_ratio_within_epsilon():
    eps = 4.0
    P, Q = exact_em_distribution(GR_X, eps), exact_em_distribution(GR_XP, eps)
    ratio = np.max(np.abs(np.log(P) - np.log(Q)))
    assert ratio <= eps
    assert ratio > 0.1 * eps  # the pair is informative


@pytest.mark.audit
@pytest.mark.parametrize("variant", ["em_geometric", "above_threshold"])
def test_good_radius_release_audit(variant):
    eps = 4.0
    a, b = gr_releases(eps, variant, seed=11)
    assert audit.epsilon_lower_bound(a, b, categorical=True) <= eps
    assert len(np.unique(a)) > 1  # the release is not degenerate on this pair


@pytest.mark.audit
def test_planted_bug_quality_not_divided_by_t_fails_audit(monkeypatch):
    """Planted bug: Q on summed (not averaged) counts has sensitivity t, not 1."""
    eps = 4.0
    original = gr.quality
    monkeypatch.setattr(gr, "quality", lambda L, L0, t, gamma: t * original(L, L0, t, gamma))
    a, b = gr_releases(eps, "em_geometric", seed=11)
    assert audit.epsilon_lower_bound(a, b, categorical=True) > eps


@pytest.mark.audit
def test_planted_bug_above_threshold_unscaled_queries_fails_audit(monkeypatch):
    """Planted bug: AboveThreshold fed t * L (the sum of counts, sensitivity 2t) with a scaled threshold."""
    eps = 4.0
    original = gr.above_threshold
    monkeypatch.setattr(
        gr,
        "above_threshold",
        lambda q, thr, e, rng, size=None: original(
            AT_T * np.asarray(q), AT_T * thr, e, rng, size=size
        ),
    )
    a, b = gr_releases(eps, "above_threshold", seed=11)
    assert audit.epsilon_lower_bound(a, b, categorical=True) > eps


RHO, M, NA_EPS, NA_DELTA = 50.0, 200, 2.0, 1e-6


def na_releases(X, Xp, seed, what=0):
    rng = np.random.default_rng(seed)
    out = []
    for data in (X, Xp):
        rel = na.noisy_avg(data, [0.0], RHO, NA_EPS, NA_DELTA, rng, size=N)
        vals = rel[0][:, 0] if what == 0 else rel[1]
        out.append(np.nan_to_num(vals, nan=1e9))  # "no output" as a sentinel value
    return out


def edge_pair():
    X = np.full((M, 1), -RHO)
    Xp = X.copy()
    Xp[0] = RHO
    return X, Xp


@pytest.mark.audit
def test_noisy_avg_audit_edge_to_edge():
    a, b = na_releases(*edge_pair(), seed=3)
    assert audit.epsilon_lower_bound(a, b, delta=NA_DELTA) <= NA_EPS


@pytest.mark.audit
def test_noisy_avg_audit_inside_to_outside_noise_scale():
    """Replacing an inside point by an outside one moves the count; the released sigma shows it."""
    X = np.zeros((M, 1))
    Xp = X.copy()
    Xp[0] = 3 * RHO
    a, b = na_releases(X, Xp, seed=4, what=1)
    bound = audit.epsilon_lower_bound(a, b, delta=NA_DELTA)
    assert 0.3 < bound <= NA_EPS


@pytest.mark.audit
def test_planted_bug_noisy_avg_sensitivity_without_ball_size_fails_audit(monkeypatch):
    """Planted bug: the Gaussian calibrated without the ball diameter (sigma / rho)."""
    original = na.analytic_gaussian_sigma
    monkeypatch.setattr(na, "analytic_gaussian_sigma", lambda e, d, s: original(e, d, s) / RHO)
    a, b = na_releases(*edge_pair(), seed=3)
    assert audit.epsilon_lower_bound(a, b, delta=NA_DELTA) > NA_EPS


@pytest.mark.audit
def test_noisy_avg_batched_matches_single_release_law():
    X = np.linspace(-1, 1, 100)[:, None]
    means, sigmas, counts = na.noisy_avg(
        X, [0.0], 1.0, 1.0, 1e-6, np.random.default_rng(0), size=20_000
    )
    ok = ~np.isnan(sigmas)
    assert ok.mean() > 0.99
    assert abs(np.mean(means[ok, 0])) < 0.05
    assert np.std(counts) == pytest.approx(math.sqrt(2) * 2.0, rel=0.05)  # Lap(2/eps) std
