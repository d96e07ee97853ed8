"""privclust.core.metrics: metric identities, hand-computed values, brute force."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles
from scipy.spatial.distance import cdist

from privclust.core import metrics as M


def stiefel(rng, d, q, size=None):
    """Haar-distributed orthonormal d x q bases (QR with sign fix)."""
    shape = (d, q) if size is None else (size, d, q)
    Q, R = np.linalg.qr(rng.standard_normal(shape))
    return Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[..., None, :]


def noiseless_union(rng, n=300, d=6, k=3, q=2):
    bases = stiefel(rng, d, q, size=k)
    labels = rng.integers(k, size=n)
    X = np.einsum("ndq,nq->nd", bases[labels], rng.standard_normal((n, q)))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, bases, labels


# ------------------------------------------------------------------------------- subspaces


def test_principal_angles_hand_and_scipy(rng):
    a = 0.3
    U = np.array([[1.0], [0.0], [0.0]])
    V = np.array([[math.cos(a)], [math.sin(a)], [0.0]])
    assert M.principal_angles(U, V) == pytest.approx([a])
    U, V = stiefel(rng, 7, 3), stiefel(rng, 7, 2)
    np.testing.assert_allclose(M.principal_angles(U, V), np.sort(subspace_angles(U, V)), atol=1e-10)


def test_principal_angles_clip_no_nan():
    U = np.eye(4)[:, :2] * (1 + 4e-16)  # cosines round above 1
    angles = M.principal_angles(U, U)
    assert np.all(np.isfinite(angles)) and np.all(angles < 1e-7)


def test_projector_distance_orthogonal_is_sqrt_2q():
    d, q = 7, 3
    eye = np.eye(d)
    assert M.projector_distance(eye[:, :q], eye[:, q : 2 * q]) == pytest.approx(math.sqrt(2 * q))
    assert M.projector_distance(eye[:, :q], eye[:, :q]) == pytest.approx(0.0, abs=1e-7)


def test_projector_distance_matches_definition(rng):
    for qa, qb in [(3, 3), (2, 4)]:
        U, V = stiefel(rng, 8, qa), stiefel(rng, 8, qb)
        direct = np.linalg.norm(U @ U.T - V @ V.T)
        assert M.projector_distance(U, V) == pytest.approx(direct, rel=1e-10)
    # equal q: sqrt(2) * ||sin Theta||_F (Wang, Wang & Singh, NIPS 2015, Sec. 2.2); invariant to U -> U O
    U, V = stiefel(rng, 8, 3), stiefel(rng, 8, 3)
    sines = np.sin(M.principal_angles(U, V))
    assert M.projector_distance(U, V) == pytest.approx(math.sqrt(2) * np.linalg.norm(sines))
    assert M.projector_distance(U @ stiefel(rng, 3, 3), V) == pytest.approx(
        M.projector_distance(U, V)
    )


def test_wasserstein_zero_under_permutation_and_rotation(rng):
    C = stiefel(rng, 9, 3, size=4)
    for perm in itertools.permutations(range(4)):
        rotated = C[list(perm)] @ stiefel(rng, 3, 3, size=4)
        assert M.wasserstein_subspaces(C, rotated) == pytest.approx(0.0, abs=1e-6)
    d_w, match = M.wasserstein_subspaces(C, C[[2, 0, 3, 1]], return_matching=True)
    np.testing.assert_array_equal(match, [1, 3, 0, 2])


def test_wasserstein_equals_brute_force(rng):
    A, B = stiefel(rng, 6, 2, size=4), stiefel(rng, 6, 2, size=4)
    brute = min(
        math.sqrt(sum(M.projector_distance(A[i], B[p[i]]) ** 2 for i in range(4)))
        for p in itertools.permutations(range(4))
    )
    assert M.wasserstein_subspaces(A, B) == pytest.approx(brute, rel=1e-10)
    # orthogonal pairs: every d^2 = 2q -> d_W = sqrt(2 k q) (the largest value for k q-dimensional subspaces)
    eye = np.eye(8)
    A = np.stack([eye[:, 0:2], eye[:, 2:4]])
    B = np.stack([eye[:, 4:6], eye[:, 6:8]])
    assert M.wasserstein_subspaces(A, B) == pytest.approx(math.sqrt(2 * 2 * 2))


def test_subspace_validation_errors(rng):
    A = stiefel(rng, 6, 2, size=3)
    with pytest.raises(ValueError, match="different numbers"):
        M.wasserstein_subspaces(A, A[:2])
    with pytest.raises(ValueError, match="dimensions"):
        M.wasserstein_subspaces(A, stiefel(rng, 5, 2, size=3))
    with pytest.raises(ValueError, match="orthonormal"):
        M.wasserstein_subspaces(2 * A, A)
    with pytest.raises(ValueError, match=r"\(k, d, q\)"):
        M.wasserstein_subspaces(A[0], A)
    with pytest.raises(ValueError, match="q <= d"):
        M.projector_distance(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        M.principal_angles(np.full((3, 1), np.nan), np.eye(3)[:, :1])


def test_subspace_cost_noiseless_is_zero_and_labels_recovered(rng):
    X, bases, labels = noiseless_union(rng)
    assert M.subspace_cost(X, bases) == pytest.approx(0.0, abs=1e-12)
    # round-off makes about half of the raw residuals negative: the clamp must hide them
    assert min(M.subspace_cost(X[i : i + 1], bases) for i in range(len(X))) == 0.0
    np.testing.assert_array_equal(M.assign_to_subspaces(X, bases), labels)


def test_subspace_cost_brute_force_chunked_sparse(rng):
    X = rng.standard_normal((203, 5)) * 0.4
    bases = stiefel(rng, 5, 2, size=3)
    brute = np.mean([min(max(x @ x - np.sum((U.T @ x) ** 2), 0.0) for U in bases) for x in X])
    full = M.subspace_cost(X, bases)
    assert full == pytest.approx(brute, rel=1e-12)
    for chunk in (1, 7, 500):
        assert M.subspace_cost(X, bases, chunk_size=chunk) == pytest.approx(full, rel=1e-12)
        np.testing.assert_array_equal(
            M.assign_to_subspaces(X, bases, chunk_size=chunk), M.assign_to_subspaces(X, bases)
        )
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.3] = 0.0
    assert M.subspace_cost(sp.csr_matrix(Xs), bases, chunk_size=10) == pytest.approx(
        M.subspace_cost(Xs, bases), rel=1e-12
    )
    with pytest.raises(ValueError, match="features"):
        M.subspace_cost(X[:, :4], bases)
    with pytest.raises(ValueError, match="chunk_size"):
        M.subspace_cost(X, bases, chunk_size=0)


def test_class_subspaces_recover_truth(rng):
    X, bases, labels = noiseless_union(rng)
    est = M.class_subspaces(X, labels, 2)
    assert est.shape == bases.shape
    assert M.wasserstein_subspaces(est, bases) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="fewer than"):
        M.class_subspaces(X[:3], [0, 1, 1], 2)


# ------------------------------------------------------------------------------- k-means


def test_sse_brute_force_chunked_sparse(rng):
    X = rng.standard_normal((157, 4))
    C = rng.standard_normal((5, 4))
    brute = cdist(X, C, "sqeuclidean").min(axis=1).sum()
    assert M.sse(X, C) == pytest.approx(brute, rel=1e-12)
    for chunk in (1, 13, 1000):
        assert M.sse(X, C, chunk_size=chunk) == pytest.approx(brute, rel=1e-12)
    assert M.sse(sp.csr_matrix(X), C, chunk_size=20) == pytest.approx(brute, rel=1e-12)
    assert 0.0 <= M.sse(X, X) < 1e-10  # clamped at 0, never a tiny negative
    with pytest.raises(ValueError, match="features"):
        M.sse(X, C[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        M.sse(np.array([[np.nan, 0.0]]), np.zeros((1, 2)))


def test_sse_many_is_each_set_s_sse_in_one_pass(rng):
    """Sets of different sizes (1, 5, 157 centres, one of them X itself) over chunk edges, dense
    and sparse: each sum equals the brute-force SSE of its own set."""
    X = rng.standard_normal((157, 4))
    sets = [rng.standard_normal((5, 4)), X[:1] + 3.0, X]
    brute = [cdist(X, C, "sqeuclidean").min(axis=1).sum() for C in sets]
    for chunk in (None, 1, 13):
        got = M.sse_many(X, sets, chunk_size=chunk)
        assert got.shape == (3,) and got[:2] == pytest.approx(brute[:2], rel=1e-12)
        assert 0.0 <= got[2] < 1e-10
    sparse = M.sse_many(sp.csr_matrix(X), sets[:2], chunk_size=20)
    assert sparse == pytest.approx(brute[:2], rel=1e-12)
    assert M.sse_many(X, []).shape == (0,)
    with pytest.raises(ValueError, match="features"):
        M.sse_many(X, [sets[0], sets[0][:, :3]])


def test_relative_sse(rng):
    X = rng.standard_normal((100, 3))
    C = rng.standard_normal((4, 3))
    assert M.relative_sse(X, C, C) == 1.0
    assert M.relative_sse(X, C + 5, C) > 1.0
    pts = np.array([[0.0, 0.0], [1.0, 1.0]])
    assert M.relative_sse(pts, pts, pts) == 1.0
    assert M.relative_sse(pts, pts + 1, pts) == math.inf


# ------------------------------------------------------------------------------- partitions


def test_nmi_hand_examples_and_edge_cases():
    a = [0, 0, 0, 1, 1, 1]
    b = [0, 0, 1, 1, 2, 2]
    # I = (2/3) ln 2, H(a) = ln 2, H(b) = ln 3 -> NMI = (4/3) ln 2 / ln 6
    assert M.nmi(a, b) == pytest.approx((4 / 3) * math.log(2) / math.log(6))
    assert M.nmi([0, 0, 1, 1], [5, 5, 3, 3]) == pytest.approx(1.0)
    assert M.nmi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0, abs=1e-12)
    assert M.nmi([1, 1, 1], [2, 2, 2]) == 1.0  # both trivial
    assert M.nmi([1, 1, 1, 1], [0, 0, 1, 1]) == 0.0  # exactly one trivial
    assert M.nmi(["x", "x", "y"], [0, 0, 1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="entries"):
        M.nmi([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="1-D"):
        M.nmi([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="empty"):
        M.nmi([], [])


def test_ari_and_accuracy():
    assert M.ari([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert M.clustering_accuracy([0, 0, 1, 1, 2], [2, 2, 0, 0, 1]) == 1.0
    assert M.clustering_accuracy([0, 0, 0, 1, 1, 1], [1, 1, 0, 0, 0, 0]) == pytest.approx(5 / 6)
    # more predicted clusters than classes: unmatched cluster counts as errors
    assert M.clustering_accuracy([0, 0, 1, 1], [0, 1, 2, 2]) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="too many clusters"):
        big = np.arange(5000)
        M.clustering_accuracy(big, big)


# ------------------------------------------------------------------------------- co-clustering


def test_contingency_table_dense_and_sparse():
    A = np.arange(12.0).reshape(3, 4)
    expected = np.array([[0 + 1, 2, 3], [4 + 5 + 8 + 9, 6 + 10, 7 + 11]])
    np.testing.assert_array_equal(M.contingency_table(A, [0, 1, 1], [0, 0, 1, 2]), expected)
    np.testing.assert_array_equal(
        M.contingency_table(sp.csr_matrix(A), [0, 1, 1], [0, 0, 1, 2]), expected
    )
    T = M.contingency_table(A, [0, 2, 2], [0, 0, 1, 2], n_row_clusters=4)
    assert T.shape == (4, 3) and T[1].sum() == 0 and T[3].sum() == 0
    with pytest.raises(ValueError, match="non-negative"):
        M.contingency_table(A, [0, -1, 1], [0, 0, 1, 2])
    with pytest.raises(ValueError, match="entries"):
        M.contingency_table(A, [0, 1], [0, 0, 1, 2])
    with pytest.raises(ValueError, match="integers"):
        M.contingency_table(A, [0.0, 1.0, 1.0], [0, 0, 1, 2])
    with pytest.raises(ValueError, match="n_clusters"):
        M.contingency_table(A, [0, 1, 3], [0, 0, 1, 2], n_row_clusters=2)


def test_goodman_kruskal_tau_hand_computed():
    assert M.goodman_kruskal_tau([[10, 0], [0, 10]]) == pytest.approx(0.5)
    assert M.goodman_kruskal_tau([[10, 0], [0, 10]], normalized=True) == pytest.approx(1.0)
    assert M.goodman_kruskal_tau([[1, 1], [1, 1]]) == pytest.approx(0.0, abs=1e-15)
    T = np.array([[3, 1], [1, 0], [0, 5]])
    # q col sums .4/.6: (.09+.01)/.4 + (.01+.25)/.6 - (.16+.01+.25)
    assert M.goodman_kruskal_tau(T) == pytest.approx(0.25 + 0.26 / 0.6 - 0.42)
    assert M.tau_rows(T) == M.goodman_kruskal_tau(T, given="columns")
    assert M.goodman_kruskal_tau(T, normalized=True) == pytest.approx(
        (0.25 + 0.26 / 0.6 - 0.42) / 0.58
    )
    # tau_{C|R}: (.09+.01)/.4 + .01/.1 + .25/.5 - (.16+.36)
    assert M.goodman_kruskal_tau(T, given="rows") == pytest.approx(0.33)
    assert M.tau_columns(T) == pytest.approx(0.33)
    assert M.goodman_kruskal_tau(sp.csr_matrix(T)) == pytest.approx(M.goodman_kruskal_tau(T))
    assert M.goodman_kruskal_tau(7.5 * T) == pytest.approx(M.goodman_kruskal_tau(T))


def test_goodman_kruskal_tau_edge_cases():
    assert M.goodman_kruskal_tau([[1, 0], [1, 0]]) == pytest.approx(0.0)  # empty column
    assert M.goodman_kruskal_tau(np.zeros((2, 3))) == 0.0  # clamped noisy T
    assert M.goodman_kruskal_tau([[4, 2, 1]], normalized=True) == 0.0  # one row cluster
    with pytest.raises(ValueError, match="negative"):
        M.goodman_kruskal_tau([[1, -1], [0, 2]])
    with pytest.raises(ValueError, match="given"):
        M.goodman_kruskal_tau([[1, 0], [0, 1]], given=0)


# ------------------------------------------------------------------------------- MCMC


def test_gibbs_test_statistic_hand_computed():
    e1, e2 = np.array([[1.0], [0.0]]), np.array([[0.0], [1.0]])
    frozen = np.stack([e1, e1, e1])[:, None]  # (T=3, k=1, d=2, q=1)
    assert M.gibbs_test_statistic(frozen) == pytest.approx(1.0)
    assert M.gibbs_test_statistic(np.stack([e1, -e1])[:, None]) == pytest.approx(0.0)
    two = np.stack([e1, e2])[:, None]  # mean (.5, .5): ||.||^2 = .5
    assert M.gibbs_test_statistic(two) == pytest.approx(math.sqrt(0.5))
    np.testing.assert_allclose(M.gibbs_test_statistic(two, cumulative=True), [1.0, math.sqrt(0.5)])
    # k = 2, q = 1: cluster 0 frozen (1), cluster 1 flips (0): sqrt((1 + 0) / 2)
    mixed = np.stack([np.stack([e1, e2]), np.stack([e1, -e2])])
    assert M.gibbs_test_statistic(mixed) == pytest.approx(math.sqrt(0.5))


def test_gibbs_test_statistic_iid_haar_is_small(rng):
    samples = stiefel(rng, 10, 3, size=2000 * 3).reshape(2000, 3, 10, 3)
    stat = M.gibbs_test_statistic(samples)
    assert stat < 0.05  # ~ 1/sqrt(T) = 0.022
    cum = M.gibbs_test_statistic(samples, cumulative=True)
    assert cum.shape == (2000,) and cum[-1] == pytest.approx(stat) and cum[0] == pytest.approx(1)
    assert M.gibbs_test_statistic(samples.mean(axis=0)[None]) == pytest.approx(stat)
    with pytest.raises(ValueError, match=r"\(T, k, d, q\)"):
        M.gibbs_test_statistic(samples[0])


def test_split_rhat_hand_computed():
    # halves [1,2], [3,4]: B = 2 * ((1.5-2.5)^2 + (3.5-2.5)^2) = 4, W = 0.5,
    # var+ = 0.5 * 0.5 + 4 / 2 = 2.25 -> sqrt(4.5)
    assert M.split_rhat([[1, 2, 3, 4]]) == pytest.approx(math.sqrt(4.5))
    assert M.split_rhat([[1, 2, 100, 3, 4]]) == pytest.approx(math.sqrt(4.5))  # middle dropped
    assert math.isnan(M.split_rhat(np.ones((3, 10))))
    assert M.split_rhat(np.repeat([[0.0], [1.0]], 10, axis=1)) == math.inf
    with pytest.raises(ValueError, match="n_chains, n_draws"):
        M.split_rhat(np.ones(10))
    with pytest.raises(ValueError, match="at least 4"):
        M.split_rhat(np.ones((2, 3)))


def test_split_rhat_iid_vs_separated_vs_trend(rng):
    iid = rng.standard_normal((8, 1000))
    assert abs(M.split_rhat(iid) - 1.0) < 0.01
    shifted = iid + np.arange(8)[:, None] * 0.5
    assert M.split_rhat(shifted) > 1.1
    trend = rng.standard_normal((4, 1000)) + np.linspace(0, 3, 1000)
    assert M.split_rhat(trend) > 1.1  # what splitting is for


def _ar1(rng, phi, m, n):
    """m AR(1) chains of n draws: x_t = phi x_{t-1} + e_t."""
    e = rng.standard_normal((m, n))
    x = np.zeros((m, n))
    for t in range(1, n):  # a recursion over time, vectorised over chains
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("m, n", [(2, 200), (4, 1000), (8, 301)])
def test_rhat_and_ess_agree_with_arviz(phi, m, n):
    """Split R-hat equals ArviZ's (method "split") to rounding; the effective sample size is
    within 3% of ArviZ's (method "mean"; equal in most cases, ArviZ adds one more
    autocorrelation term at the cut-off)."""
    az = pytest.importorskip("arviz")
    chains = _ar1(np.random.default_rng(int(phi * 100) + m), phi, m, n)
    assert M.split_rhat(chains) == pytest.approx(float(az.rhat(chains, method="split")), rel=1e-12)
    assert M.effective_sample_size(chains) == pytest.approx(
        float(az.ess(chains, method="mean")), rel=0.03
    )


def test_effective_sample_size_tracks_autocorrelation(rng):
    """Independent draws: about m n; AR(1) with phi = 0.9: about m n (1 - phi) / (1 + phi);
    constant chains: m n; the same validation as split_rhat."""
    assert M.effective_sample_size(rng.standard_normal((4, 2000))) == pytest.approx(8000, rel=0.1)
    slow = M.effective_sample_size(_ar1(rng, 0.9, 4, 4000))
    assert slow == pytest.approx(16000 * 0.1 / 1.9, rel=0.25)
    assert M.effective_sample_size(np.ones((3, 10))) == 30
    with pytest.raises(ValueError, match="at least 4"):
        M.effective_sample_size(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        M.effective_sample_size([[1.0, 2.0, np.nan, 3.0]])


def test_projector_distances_is_the_pairwise_projector_distance():
    from privclust.core.metrics import projector_distance, projector_distances

    rng = np.random.default_rng(3)
    A = np.stack([np.linalg.qr(rng.normal(size=(6, 2)))[0] for _ in range(3)])
    B = np.stack([np.linalg.qr(rng.normal(size=(6, 1)))[0] for _ in range(4)])
    D = projector_distances(A, B)
    assert D.shape == (3, 4)
    np.testing.assert_allclose(D, [[projector_distance(U, V) for V in B] for U in A], atol=1e-12)
    assert projector_distances(A, A).diagonal() == pytest.approx(0.0, abs=1e-6)
