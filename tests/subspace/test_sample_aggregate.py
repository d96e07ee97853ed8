"""Sample-and-aggregate (Wang, Wang & Singh, NIPS 2015, Sec. 3.1, Alg. 1): smooth bound on adversarial neighbours, audit of the noise
step, projector representation, warnings, ledger and utility."""

import math
import warnings

import numpy as np
import pytest

from privclust.core.metrics import wasserstein_subspaces
from privclust.core.privacy import Ledger, PrivacyWarning
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.subspace import KPlanes, SampleAggregateSubspaceClustering
from privclust.core.subspace._smooth_bound import centre_index, smooth_bound
from privclust.core.subspace.sample_aggregate import (
    canonical_block_vectors,
    canonical_order,
    noisy_release,
    projector_box,
    projector_vectors,
    vectors_to_bases,
    wasserstein_matrix,
)


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
        elif kind == 1:  # two clusters of nearly equal size
            B = np.where(rng.random(m) < 0.5, 0.2, 0.8) + 0.01 * rng.standard_normal(m)
            yield np.clip(B, 0, 1)
        else:  # tight majority cluster plus outliers
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
    assert smooth_bound(D, 4, 0.1, 2.0) == pytest.approx(4.0)  # t0 + s > m: 2 * diameter
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


def test_privacy_ledger_and_warnings(two_lines):
    ledger = Ledger(2000.0, 1e-3)
    with pytest.warns(PrivacyWarning) as rec:
        sa = SampleAggregateSubspaceClustering(
            2, 1, epsilon=2.0, solver=KPlanes(n_init=2), ledger=ledger, random_state=0
        ).fit(two_lines.X)
    msgs = " ".join(str(w.message) for w in rec)
    assert "epsilon > 1" in msgs and "too small" in msgs
    n = 1000
    assert sa.privacy_.kind == "approx" and sa.privacy_.neighbouring == "replace"
    assert sa.privacy_.delta == pytest.approx(1 / (n * math.log(n)), rel=1e-12)
    assert sa.privacy_.epsilon == pytest.approx(2.0, rel=1e-12)
    assert ledger.spent[0] == pytest.approx(2.0)
    assert len(sa.privacy_.warnings) >= 2 and sa.diagnostics_["evaluation_only"]


def test_parameter_validation(two_lines):
    for kwargs in (
        {"epsilon": -1.0},
        {"delta": 1.5},
        {"n_subsets": 1},
        {"n_subsets": 1000},
        {"smooth_bound": "max"},
        {"subsampling": "bootstrap"},
        {"solver": "pca"},
    ):
        with pytest.raises(ValueError):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                SampleAggregateSubspaceClustering(2, 1, **kwargs).fit(two_lines.X)


def test_independent_subsampling_respects_s():
    from privclust.core.subspace.sample_aggregate import subsets

    rng = np.random.default_rng(0)
    idx = subsets(400, 16, 4, "independent", rng)
    assert idx.shape == (16, 25) and np.bincount(idx.ravel()).max() <= 4
    assert all(len(set(row)) == 25 for row in idx)


def test_utility_close_at_large_epsilon_and_monotone(two_lines):
    med = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for eps in (1000.0, 100.0, 1.0):
            dist = [
                wasserstein_subspaces(
                    SampleAggregateSubspaceClustering(
                        2, 1, epsilon=eps, solver=KPlanes(n_init=2), random_state=seed
                    )
                    .fit(two_lines.X)
                    .subspaces_,
                    two_lines.truth["subspaces"],
                )
                for seed in range(3)
            ]
            med[eps] = np.median(dist)
    assert med[1000.0] < 0.05
    assert med[1000.0] <= med[100.0] < med[1.0]


class _CountingKPlanes(KPlanes):
    """KPlanes counting its fits (on the class: the estimator may clone its solver)."""

    fits = 0

    def fit(self, X, y=None):
        type(self).fits += 1
        return super().fit(X, y)


def test_refused_charge_runs_nothing(two_lines):
    """The ledger is charged before the solvers or the noise run: a refused charge leaves the
    estimator unfitted and the ledger unchanged."""
    from privclust.core.privacy import BudgetExceeded

    ledger = Ledger(1.0, 1e-3)
    sa = SampleAggregateSubspaceClustering(
        2, 1, epsilon=0.5, solver=KPlanes(n_init=1), ledger=ledger, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        sa.fit(two_lines.X)
        assert ledger.spent[0] == pytest.approx(0.5)
        big = SampleAggregateSubspaceClustering(
            2, 1, epsilon=0.6, solver=_CountingKPlanes(n_init=1), ledger=ledger, random_state=0
        )
        _CountingKPlanes.fits = 0
        with pytest.raises(BudgetExceeded):
            big.fit(two_lines.X)
    assert _CountingKPlanes.fits == 0  # no block was solved
    assert not hasattr(big, "subspaces_") and not hasattr(big, "diagnostics_")
    assert ledger.spent[0] == pytest.approx(0.5)


# Projector vectors released by the default aggregator (smooth sensitivity) on ``two_lines`` with
# KPlanes(n_init=1), epsilon=2, random_state=0: an aggregator= option must leave that path as it is.
_PINNED_PROJECTORS = np.array(
    [
        [
            0.13462078388223617,
            -0.36380242444872934,
            -0.0987822610563984,
            0.30147291374873003,
            0.4915741842305446,
            0.1887632467637044,
            -0.5760852748453916,
            0.0362423053038768,
            -0.15642283334630278,
            0.337562726583343,
        ],
        [
            0.03955897648269836,
            0.257220452455763,
            -0.03978807387781007,
            0.09078918294723153,
            0.836249658664506,
            -0.18293565898334477,
            0.41742606244314595,
            0.0200092490208696,
            -0.06456943393281529,
            0.10418211583192652,
        ],
    ]
)


def test_default_aggregator_unchanged(two_lines):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        fits = [
            SampleAggregateSubspaceClustering(
                2, 1, epsilon=2.0, solver=KPlanes(n_init=1), random_state=0, **kw
            ).fit(two_lines.X)
            for kw in ({}, {"aggregator": "smooth_sensitivity"})
        ]
    np.testing.assert_array_equal(fits[0].subspaces_, fits[1].subspaces_)
    np.testing.assert_allclose(
        projector_vectors(fits[0].subspaces_), _PINNED_PROJECTORS, rtol=1e-7, atol=1e-9
    )
    assert fits[0].get_params()["aggregator"] == "smooth_sensitivity"


def test_canonical_order_is_invariant_to_permuting_subspaces():
    rng = np.random.default_rng(3)
    sols = np.linalg.qr(rng.standard_normal((6, 3, 4, 2)))[0]  # m=6, k=3, d=4, q=2
    perms = [rng.permutation(3) for _ in range(6)]
    perms[0] = np.array([2, 1, 0])  # at least one non-identity
    shuffled = np.stack([s[p] for s, p in zip(sols, perms, strict=True)])
    Y, Y2 = canonical_block_vectors(sols), canonical_block_vectors(shuffled)
    assert Y.shape == (6, 3 * 10)
    np.testing.assert_array_equal(Y, Y2)
    # each block's k vectors are its projector vectors, sorted on the first coordinate
    V = projector_vectors(sols)
    for y, v in zip(Y.reshape(6, 3, 10), V, strict=True):
        np.testing.assert_array_equal(y, v[canonical_order(v)])
        assert np.all(np.diff(y[:, 0]) >= 0)
    # and the order uses only the block itself: a block's row is unchanged by other blocks
    np.testing.assert_array_equal(canonical_block_vectors(sols[2:3])[0], Y[2])


def test_projector_box_is_valid_and_tight():
    lo, hi = projector_box(3, 2)
    assert lo.shape == hi.shape == (12,)
    h = math.sqrt(2) / 2
    np.testing.assert_allclose(lo[:6], [0, -h, -h, 0, -h, 0])
    np.testing.assert_allclose(hi[:6], [1, h, h, 1, h, 1])
    np.testing.assert_array_equal(lo[6:], lo[:6])
    rng = np.random.default_rng(4)
    for d, q in ((3, 1), (5, 2), (6, 5)):
        v = projector_vectors(np.linalg.qr(rng.standard_normal((500, d, q)))[0])
        lo, hi = projector_box(d)
        assert np.all(v >= lo - 1e-12) and np.all(v <= hi + 1e-12)
    # attained: the line (e1 + e2)/sqrt(2) has P_12 = 1/2 (vector entry sqrt(2)/2), P_11 = 1/2
    v = projector_vectors(np.array([[[1.0], [1.0], [0.0]]]) / math.sqrt(2))[0]
    assert v[1] == pytest.approx(h) and projector_vectors(np.eye(3)[:, :1][None])[0][0] == 1.0


def test_invalid_aggregator_raises_naming_the_parameter(two_lines):
    ledger = Ledger(10.0, 1e-3)
    for kwargs in (
        {"aggregator": "one_cluster"},
        {"aggregator": 3},
        {"aggregator": None},
        {"aggregator": lambda *a: None, "subsampling": "independent"},
    ):
        with pytest.raises(ValueError, match="aggregator"):
            SampleAggregateSubspaceClustering(2, 1, ledger=ledger, **kwargs).fit(two_lines.X)
    assert ledger.spent == (0.0, 0.0)

    def bad_guarantee(Y, epsilon, delta, bounds, rng):
        from privclust.core.privacy import Guarantee

        return np.full(Y.shape[1], 0.5), Guarantee(2 * epsilon, delta, "approx", "replace")

    with pytest.raises(ValueError, match="aggregator"):
        SampleAggregateSubspaceClustering(
            2, 1, n_subsets=10, solver=KPlanes(n_init=1), aggregator=bad_guarantee
        ).fit(two_lines.X)
