"""Sample-and-aggregate (spec 2.3): smooth bound on adversarial neighbours, audit of the noise
step, projector representation, warnings, ledger and utility."""
import math
import warnings

import numpy as np
import pytest

from privclust.core.data import make_union_of_subspaces
from privclust.core.metrics import wasserstein_subspaces
from privclust.core.privacy import Ledger, PrivacyWarning
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.subspace import KPlanes, SampleAggregateSubspaceClustering
from privclust.core.subspace.sample_aggregate import (noisy_release, projector_vectors,
                                                      vectors_to_bases, wasserstein_matrix)
from privclust.core.subspace.smooth_bound import centre_index, smooth_bound


def _line_dist(points):
    return np.abs(points[:, None] - points[None, :])


def _neighbours(rng, B, s, centre):
    """Adversarial neighbours in the metric space [0, 1]: move at most s outputs to an
    endpoint, onto one common spot, onto another output, or remove the centre's support."""
    m = len(B)
    order = np.argsort(np.abs(B - B[centre]))
    for _ in range(40):
        kind = rng.integers(5)
        idx = order[:s] if kind == 4 else rng.choice(m, size=rng.integers(1, s + 1), replace=False)
        B2 = B.copy()
        if kind == 0:
            B2[idx] = rng.choice([0.0, 1.0])
        elif kind == 1:
            B2[idx] = rng.random()
        elif kind == 2:
            B2[idx] = B[rng.integers(m)]
        elif kind == 3:
            B2[idx] = rng.random(len(idx))
        else:
            B2[idx] = 1.0 - B[centre] if B[centre] < 0.5 else 0.0
        yield B2


def _configurations(rng, m, count):
    for _ in range(count):
        kind = rng.integers(3)
        if kind == 0:
            yield rng.random(m)
        elif kind == 1:                       # two clusters of nearly equal size
            B = np.where(rng.random(m) < 0.5, 0.2, 0.8) + 0.01 * rng.standard_normal(m)
            yield np.clip(B, 0, 1)
        else:                                 # tight majority cluster plus outliers
            B = 0.5 + 0.002 * rng.standard_normal(m)
            out = rng.random(m) < rng.uniform(0.2, 0.45)
            B[out] = rng.random(out.sum())
            yield np.clip(B, 0, 1)


def _violations(bound_fn, m=30, beta=0.3, count=150, seed=0):
    """Count adversarial pairs breaking S >= local sensitivity or beta-smoothness."""
    rng = np.random.default_rng(seed)
    s = math.ceil(math.sqrt(m))
    bad_ls = bad_smooth = 0
    for B in _configurations(rng, m, count):
        D = _line_dist(B)
        c, _ = centre_index(D, s, 1.0)
        S = bound_fn(D, s, beta)
        for B2 in _neighbours(rng, B, s, c):
            D2 = _line_dist(B2)
            c2, _ = centre_index(D2, s, 1.0)
            S2 = bound_fn(D2, s, beta)
            bad_ls += abs(B[c] - B2[c2]) > S * (1 + 1e-12)
            bad_smooth += S2 < math.exp(-beta) * S * (1 - 1e-12)
    return bad_ls, bad_smooth


def test_order_statistic_bound_is_smooth_upper_bound_on_adversarial_neighbours():
    ls, smooth = _violations(lambda D, s, b: smooth_bound(D, s, b, 1.0, "order_stat"))
    assert ls == 0 and smooth == 0


def test_planted_bug_first_term_only_is_caught():
    """Dropping the max over k (S = 2 R_0) is not beta-smooth: the search must find it."""
    def first_term(D, s, beta):
        m = len(D)
        t0 = math.ceil((m + s) / 2) + 1
        r = np.sort(D, axis=1)
        t = t0 + s
        return 2.0 * (np.sort(r[:, t - 1])[s] if t <= m else 1.0)
    ls, smooth = _violations(first_term, beta=0.3, count=150)
    assert ls + smooth > 0


def test_smooth_bound_degenerate_cases():
    D = np.zeros((11, 11))
    assert smooth_bound(D, 4, 0.1, 2.0) == pytest.approx(4.0)       # t0 + s > m: 2 * diameter
    D = np.zeros((60, 60))
    # R_k = 0 until t0 + (k+1)s > m at k = 3 (t0 = 35): S = 2 * diameter * exp(-3 beta)
    assert smooth_bound(D, 8, 5.0, 2.0) == pytest.approx(2 * 2.0 * math.exp(-5.0 * 3))
    assert smooth_bound(D, 8, 5.0, 2.0, "nrs_mean") >= 0.0
    with pytest.raises(ValueError, match="smooth_bound"):
        smooth_bound(D, 8, 5.0, 2.0, "mean")


@pytest.mark.audit
def test_noise_step_audit_on_neighbouring_aggregates():
    """Fixed aggregates g, g' at distance exactly S (the worst case the bound allows)."""
    rng = np.random.default_rng(0)
    eps, delta, S, N = 1.0, 1e-5, 0.7, 200_000
    g = rng.standard_normal(6)
    u = np.zeros(6)
    u[2] = 1.0
    a = noisy_release(g, S, eps, delta, rng, size=N)[:, 2]
    b = noisy_release(g + S * u, S, eps, delta, rng, size=N)[:, 2]
    assert epsilon_lower_bound(a, b, delta=delta, rng=rng) <= eps
    # planted bug: bound 50x too small for the actual change
    a = noisy_release(g, S / 50, eps, delta, rng, size=N)[:, 2]
    b = noisy_release(g + S * u, S / 50, eps, delta, rng, size=N)[:, 2]
    assert epsilon_lower_bound(a, b, delta=delta, rng=rng) > eps


def test_projector_vectors_round_trip_and_distances():
    rng = np.random.default_rng(1)
    sols = np.linalg.qr(rng.standard_normal((5, 3, 6, 2)))[0]
    v = projector_vectors(sols)
    assert v.shape == (5, 3, 21)
    P = np.einsum("mkdq,mkeq->mkde", sols, sols)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-1), np.linalg.norm(P, axis=(-2, -1)))
    back = vectors_to_bases(v[0], 6, 2)
    assert wasserstein_subspaces(back, sols[0]) < 1e-6
    W = wasserstein_matrix(sols)
    for i, j in [(0, 1), (2, 4), (3, 3)]:
        assert W[i, j] == pytest.approx(wasserstein_subspaces(sols[i], sols[j]), abs=1e-10)
        # the Euclidean distance of matched vectors equals d_W
    assert np.allclose(W, W.T)


@pytest.fixture(scope="module")
def lines():
    return make_union_of_subspaces(1000, 4, 2, 1, noise=0.01, random_state=2)


def test_privacy_ledger_and_warnings(lines):
    ledger = Ledger(2000.0, 1e-3)
    with pytest.warns(PrivacyWarning) as rec:
        sa = SampleAggregateSubspaceClustering(2, 1, epsilon=2.0, solver=KPlanes(n_init=2),
                                               ledger=ledger, random_state=0).fit(lines.X)
    msgs = " ".join(str(w.message) for w in rec)
    assert "epsilon > 1" in msgs and "too small" in msgs
    n = 1000
    assert sa.privacy_.kind == "approx" and sa.privacy_.neighbouring == "replace"
    assert sa.privacy_.delta == pytest.approx(1 / (n * math.log(n)), rel=1e-12)
    assert sa.privacy_.epsilon == pytest.approx(2.0, rel=1e-12)
    assert ledger.spent[0] == pytest.approx(2.0)
    assert len(sa.privacy_.warnings) >= 2 and sa.diagnostics_["evaluation_only"]


def test_parameter_validation(lines):
    for kwargs in ({"epsilon": -1.0}, {"delta": 1.5}, {"n_subsets": 1}, {"n_subsets": 1000},
                   {"smooth_bound": "max"}, {"subsampling": "bootstrap"}, {"solver": "pca"}):
        with pytest.raises(ValueError):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                SampleAggregateSubspaceClustering(2, 1, **kwargs).fit(lines.X)


def test_independent_subsampling_respects_s(lines):
    from privclust.core.subspace.sample_aggregate import subsets
    rng = np.random.default_rng(0)
    idx = subsets(400, 16, 4, "independent", rng)
    assert idx.shape == (16, 25) and np.bincount(idx.ravel()).max() <= 4
    assert all(len(set(row)) == 25 for row in idx)


def test_utility_close_at_large_epsilon_and_monotone(lines):
    med = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for eps in (1000.0, 100.0, 1.0):
            dist = [wasserstein_subspaces(SampleAggregateSubspaceClustering(
                2, 1, epsilon=eps, solver=KPlanes(n_init=2), random_state=seed).fit(
                    lines.X).subspaces_, lines.truth["subspaces"]) for seed in range(3)]
            med[eps] = np.median(dist)
    assert med[1000.0] < 0.05
    assert med[1000.0] <= med[100.0] < med[1.0]


def test_refused_charge_runs_nothing(lines):
    """The ledger is charged before the solvers or the noise run: a refused charge leaves the
    estimator unfitted and the ledger unchanged."""
    from privclust.core.privacy import BudgetExceeded
    ledger = Ledger(1.0, 1e-3)
    sa = SampleAggregateSubspaceClustering(2, 1, epsilon=0.5, solver=KPlanes(n_init=1),
                                           ledger=ledger, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        sa.fit(lines.X)
        assert ledger.spent[0] == pytest.approx(0.5)
        big = SampleAggregateSubspaceClustering(2, 1, epsilon=0.6, solver=KPlanes(n_init=1),
                                                ledger=ledger, random_state=0)
        with pytest.raises(BudgetExceeded):
            big.fit(lines.X)
    assert not hasattr(big, "subspaces_") and not hasattr(big, "diagnostics_")
    assert ledger.spent[0] == pytest.approx(0.5)
