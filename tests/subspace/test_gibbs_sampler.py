"""Gibbs updates of the exponential-mechanism sampler (Wang, Wang & Singh, NIPS 2015, Sec. 4.1): z-update against the exact softmax, U-update against
direct vector-Bingham draws (q = 1 and d = 3, q = 2), Haar draws for empty clusters."""

import numpy as np

from privclust.core.privacy import exponential_probabilities
from privclust.core.subspace._bingham import sample_vector_bingham
from privclust.core.subspace.gibbs import triu_outer, u_update, z_update


def _unit_rows(rng, n, d):
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, (n, 1))


def test_z_update_frequencies_match_softmax_and_scatter_is_exact():
    rng = np.random.default_rng(0)
    X = _unit_rows(rng, 5, 4)
    U1 = np.linalg.qr(rng.standard_normal((3, 4, 2)))[0]  # k = 3 bases (4 x 2)
    C, eps = 40_000, 6.0
    U = np.broadcast_to(U1, (C, 3, 4, 2))
    sq = (X**2).sum(1)
    z, A, counts = z_update(X, sq, None, U, eps / 2, rng)
    res = sq[:, None] - np.einsum("ndq->nd", np.einsum("nd,kdq->nkq", X, U1) ** 2)
    expected = exponential_probabilities(-res, eps, 1.0)  # exp(-(eps/2) d^2), normalised
    freq = (z[:, :, None] == np.arange(3)).mean(axis=0)  # (n, k)
    se = np.sqrt(expected * (1 - expected) / C)
    assert np.all(np.abs(freq - expected) < 5 * se + 1e-12)
    # planted bug: logits eps * d^2 instead of (eps/2) d^2
    zb, _, _ = z_update(X, sq, None, U, eps, rng)
    fb = (zb[:, :, None] == np.arange(3)).mean(axis=0)
    assert np.any(np.abs(fb - expected) > 5 * se)
    # scatter matrices and counts for a few chains, checked directly
    for c in (0, 1, C - 1):
        for ell in range(3):
            Xl = X[z[c] == ell]
            np.testing.assert_allclose(A[c, ell], Xl.T @ Xl, atol=1e-12)
            assert counts[c, ell] == len(Xl)
    outer = (X[:, :, None] * X[:, None, :]).reshape(5, 16)
    rng2, rng3 = np.random.default_rng(9), np.random.default_rng(9)
    za, Aa, _ = z_update(X, sq, outer, U[:50], eps / 2, rng2)
    zb2, Ab, _ = z_update(X, sq, None, U[:50], eps / 2, rng3)
    np.testing.assert_array_equal(za, zb2)
    np.testing.assert_allclose(Aa, Ab, atol=1e-12)


def test_z_update_triangle_outer_matches_full_and_none():
    """The estimator passes upper-triangle outer products; all three forms give the same labels
    (same random stream) and the same symmetric scatter matrices; with one row per chunk the
    scatter matrices still match the labels drawn."""
    rng = np.random.default_rng(5)
    X = _unit_rows(rng, 300, 5)
    sq = (X**2).sum(1)
    U = np.linalg.qr(rng.standard_normal((4, 3, 5, 2)))[0]
    full = (X[:, :, None] * X[:, None, :]).reshape(300, 25)
    out = [
        z_update(X, sq, o, U, 2.0, np.random.default_rng(1)) for o in (triu_outer(X), full, None)
    ]
    for z, A, counts in out[1:]:
        np.testing.assert_array_equal(z, out[0][0])
        np.testing.assert_allclose(A, out[0][1], atol=1e-12)
        np.testing.assert_array_equal(counts, out[0][2])
    z, A, counts = out[0]
    np.testing.assert_array_equal(A, np.swapaxes(A, -1, -2))
    for c in range(4):
        for ell in range(3):
            Xl = X[z[c] == ell]
            np.testing.assert_allclose(A[c, ell], Xl.T @ Xl, atol=1e-12)
    assert counts.sum() == 4 * 300
    import privclust.core.subspace.gibbs as gibbs_module

    old = gibbs_module._CHUNK_FLOATS
    try:  # tiny chunks: one row per chunk
        gibbs_module._CHUNK_FLOATS = 1
        zc, Ac, cc = z_update(X, sq, triu_outer(X), U, 2.0, np.random.default_rng(1))
    finally:
        gibbs_module._CHUNK_FLOATS = old
    for c in range(4):
        for ell in range(3):
            Xl = X[zc[c] == ell]
            np.testing.assert_allclose(Ac[c, ell], Xl.T @ Xl, atol=1e-12)
            assert cc[c, ell] == len(Xl)


def _u_moments(kappa, A, C, sweeps, rng, q):
    d = A.shape[0]
    U = np.linalg.qr(rng.standard_normal((C, 1, d, q)))[0]
    Ab = np.broadcast_to(A, (C, 1, d, d))
    counts = np.ones((C, 1))
    for _ in range(sweeps):
        U = u_update(U, Ab, counts, kappa, rng)
    return U[:, 0]


def test_q1_column_update_is_the_vector_sampler():
    """q = 1, d = 2: one sweep is an exact draw; E[u_1^2] against quadrature (von Mises in 2 phi)."""
    rng = np.random.default_rng(1)
    kappa, C = 3.0, 60_000
    A = np.diag([1.0, 0.2])
    U = _u_moments(kappa, A, C, 1, rng, 1)
    phi = np.linspace(0, 2 * np.pi, 200_001)[:-1]
    lw = kappa * (1.0 * np.cos(phi) ** 2 + 0.2 * np.sin(phi) ** 2)
    w = np.exp(lw - lw.max())
    exact = (w * np.cos(phi) ** 2).sum() / w.sum()
    m = U[:, 0, 0] ** 2
    assert abs(m.mean() - exact) < 5 * m.std() / np.sqrt(C)


def test_plane_normal_in_r3_follows_bingham():
    """d = 3, q = 2: tr(U^T A U) = tr A - n^T A n, so the normal n ~ exp(-kappa n^T A n).
    E[n n^T] of parallel Gibbs chains against direct ACG draws; a doubled kappa must fail."""
    rng = np.random.default_rng(2)
    Q = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    A = Q @ np.diag([2.0, 1.0, 0.1]) @ Q.T
    kappa, C = 1.5, 20_000
    lamA, V = np.linalg.eigh(A)
    direct = sample_vector_bingham(np.tile(-kappa * lamA, (C, 1)), rng) @ V.T
    ref = np.einsum("ci,cj->ij", direct, direct) / C
    tol = 5 * np.sqrt(2.0 / C) * 0.5 + 0.005

    def normal_moment(k):
        U = _u_moments(k, A, C, 15, rng, 2)
        n = np.cross(U[:, :, 0], U[:, :, 1])
        return np.einsum("ci,cj->ij", n, n) / C

    assert np.abs(normal_moment(kappa) - ref).max() < tol
    assert np.abs(normal_moment(2 * kappa) - ref).max() > tol  # planted bug detected


def test_empty_clusters_get_haar_bases_and_unfixed_qr_would_fail():
    rng = np.random.default_rng(3)
    C, d, q = 20_000, 4, 2
    U = np.broadcast_to(np.eye(d)[:, :q], (C, 1, d, q)).copy()
    out = u_update(U, np.zeros((C, 1, d, d)), np.zeros((C, 1)), 5.0, rng)[:, 0]
    np.testing.assert_allclose(
        np.einsum("cdq,cdr->cqr", out, out), np.broadcast_to(np.eye(q), (C, q, q)), atol=1e-12
    )
    se = 1 / np.sqrt(d * C)
    assert abs(out[:, 0, 0].mean()) < 5 * se and abs(out[:, 1, 1].mean()) < 5 * se
    np.testing.assert_allclose((out**2).mean(axis=0), 1 / d, atol=0.02)
    # planted bug: QR without the sign fix is not Haar (LAPACK makes Q[0, 0] one-signed)
    bad = np.linalg.qr(rng.standard_normal((C, d, q)))[0]
    assert abs(bad[:, 0, 0].mean()) > 5 * se


def test_u_update_keeps_orthonormal_bases():
    rng = np.random.default_rng(4)
    X = _unit_rows(rng, 200, 6)
    A = np.broadcast_to(X.T @ X, (3, 2, 6, 6))
    U = np.linalg.qr(rng.standard_normal((3, 2, 6, 3)))[0]
    for _ in range(5):
        U = u_update(U, A, np.ones((3, 2)), 50.0, rng)
    np.testing.assert_allclose(
        np.einsum("ckdq,ckdr->ckqr", U, U), np.broadcast_to(np.eye(3), (3, 2, 3, 3)), atol=1e-10
    )
