"""The Gibbs kernels as they were before the fused path (verbatim copies of ``z_update``,
``u_update``, ``sample_vector_bingham`` and ``acg_parameters``): the reference the tests compare
the library's kernels with. Not part of the library."""

import warnings

import numpy as np

from privclust.core.privacy import gumbel_perturbed, haar_stiefel
from privclust.core.subspace._bingham import hoff_coordinate_update

_ROUND = 16
_CHUNK_FLOATS = 2_000_000


def acg_parameters(lam):
    """For lam (B, p) >= 0 with row minimum 0: b solving sum_j 1/(b + 2 lam_j) = 1 (b in [1, p]),
    omega = 1 + 2 lam / b and log M = -(p - b)/2 + (p/2) ln(p/b). Vectorised Newton iteration
    started at b = 1 (left of the root of a convex decreasing function: monotone convergence).

    References
    ----------
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    """
    p = lam.shape[-1]
    b = np.ones(lam.shape[:-1])
    two_lam = 2.0 * lam
    add, big = np.add.reduce, np.maximum.reduce  # ufunc reductions: less call overhead
    for _ in range(100):
        inv = np.add(b[..., None], two_lam)
        np.reciprocal(inv, out=inv)
        f = add(inv, axis=-1) - 1.0
        if big(np.abs(f), axis=None) < 1e-13:
            break
        inv *= inv
        b = np.minimum(b + f / add(inv, axis=-1), p)
    omega = 1.0 + two_lam / b[..., None]
    log_m = -(p - b) / 2.0 + (p / 2.0) * np.log(p / b)
    return b, omega, log_m


def sample_vector_bingham(a, rng, y0=None, max_proposals=100_000):
    """One exact draw y (B, p), density proportional to exp(sum_j a_j y_j^2) per row of a (B, p).

    ``y0`` (B, p), optional, is the current state used only by the Hoff fallback (or a callable
    ``y0(rows)`` returning those rows, evaluated only if the fallback runs).

    ACG rejection (Kent, Ganeiber & Mardia 2018): a proposal y = w/||w||, w ~ N(0, diag(1/omega)), is
    accepted when ln U <= -sum lam_j y_j^2 + (p/2) ln(sum omega_j y_j^2) - log M. The three sums
    over j come from one batched product of w*w with (1, lam, omega), divided by ||w||^2, and
    only accepted proposals are normalised. The first accepted proposal of a round is returned:
    it is the first success in a sequence of i.i.d. trials, so the draw stays exact.

    References
    ----------
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (12).
    """
    a = np.asarray(a, dtype=float)
    B, p = a.shape
    lam = a.max(axis=1, keepdims=True) - a
    _, omega, log_m = acg_parameters(lam)
    scale = 1.0 / np.sqrt(omega)
    weights = np.stack([np.ones_like(lam), lam, omega], axis=2)  # (B, p, 3)
    out = np.empty((B, p))
    pending = np.arange(B)
    used = 0
    while pending.size and used < max_proposals:
        rows = slice(None) if pending.size == B else pending  # no gather in round 1
        w = rng.standard_normal((pending.size, _ROUND, p))
        w *= scale[rows, None, :]
        sums = np.matmul(w * w, weights[rows])  # (P, R, 3)
        log_acc = (
            0.5 * p * np.log(sums[..., 2] / sums[..., 0])
            - sums[..., 1] / sums[..., 0]
            - log_m[rows, None]
        )
        ok = np.log(rng.random((pending.size, _ROUND))) <= log_acc
        hit = ok.any(axis=1)
        first = ok.argmax(axis=1)
        done = pending[hit]
        wa = w[hit, first[hit]]
        out[done] = wa / np.sqrt(sums[hit, first[hit], 0])[:, None]
        pending = pending[~hit]
        used += _ROUND
    if pending.size:
        warnings.warn(
            f"ACG rejection sampler exceeded {max_proposals} proposals for "
            f"{pending.size} row(s); used Hoff's coordinate Gibbs update instead",
            RuntimeWarning,
            stacklevel=2,
        )
        if y0 is None:
            start = rng.standard_normal((pending.size, p))
            start /= np.linalg.norm(start, axis=1, keepdims=True)
        elif callable(y0):
            start = np.asarray(y0(pending), dtype=float)
        else:
            start = np.asarray(y0, dtype=float)[pending]
        out[pending] = hoff_coordinate_update(a[pending], start, rng)
    return out


def triu_outer(X):
    """(n, d(d+1)/2) upper triangles (row-major, diagonal included) of the x_i x_i^T."""
    iu = np.triu_indices(X.shape[1])
    return X[:, iu[0]] * X[:, iu[1]]


def _gumbel_argmax_middle(logits, rng):
    """Gumbel-max over the MIDDLE axis of finite logits (C, k, m): index l with
    probability softmax(logits[c, :, i])_l, returned as (C, m) int64.

    The same sampler as ``privacy.gumbel_max`` (G = -log E, E ~ Exp(1) kept > 0; argmax of
    logits + G, ties to the lowest index), laid out for the Gibbs z-update: the k candidates
    are on a middle axis, so the argmax is k - 1 elementwise comparisons of contiguous (C, m)
    slices instead of an argmax over a tiny trailing axis, and the finite-logit validation is
    skipped (the logits are -(eps/2) d^2 in [-eps/2, 0] by construction)."""
    C, k, m = logits.shape
    noise = gumbel_perturbed(logits, rng)  # logits + Gumbel
    z = np.zeros((C, m), dtype=np.int64)
    best = noise[:, 0].copy()
    for ell in range(1, k):
        cand = noise[:, ell]
        better = cand > best
        z[better] = ell
        np.maximum(best, cand, out=best)
    return z


def z_update(X, sq_norms, outer, U, kappa, rng):
    """Sample all labels of all chains from Eq. (11) by Gumbel-max and accumulate the scatter
    matrices A[c, l] = sum_{z_ci = l} x_i x_i^T. ``outer`` holds the x_i x_i^T, either as
    upper triangles (n, d(d+1)/2) (:func:`triu_outer`, what :class:`GibbsSubspaceClustering`
    passes) or full (n, d*d); None computes them per chunk. U: (C, k, d, q). Returns z (C, n),
    A (C, k, d, d), counts (C, k). Chunked over rows; no loop over points or chains.

    Layout: one (q*C*k, d) @ (d, m) product puts the rows on the last (long, contiguous) axis;
    the sum over q adds q contiguous blocks and the Gumbel argmax compares k contiguous
    slices, so no reduction runs over a tiny trailing axis.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (11).
    """
    C, k, d, q = U.shape
    n = len(X)
    iu = np.triu_indices(d)
    n_tri = len(iu[0])
    Wt = np.ascontiguousarray(U.transpose(3, 0, 1, 2)).reshape(q * C * k, d)
    z = np.empty((C, n), dtype=np.int64)
    A_tri = np.zeros((C * k, n_tri))
    labels = np.arange(k)[None, :, None]
    step = max(1, _CHUNK_FLOATS // (C * k * max(q, d)))
    for start in range(0, n, step):
        Xc = X[start : start + step]
        m = len(Xc)
        P = Wt @ Xc.T  # (q*C*k, m)
        np.multiply(P, P, out=P)
        proj2 = P.reshape(q, C * k, m).sum(axis=0)  # ||U^T x||^2
        proj2 -= sq_norms[start : start + m]
        np.minimum(proj2, 0.0, out=proj2)  # -d^2, clamped
        proj2 *= kappa
        zc = _gumbel_argmax_middle(proj2.reshape(C, k, m), rng)  # (C, m)
        z[:, start : start + m] = zc
        onehot = (zc[:, None, :] == labels).reshape(C * k, m).astype(float)
        if outer is None:
            oc = triu_outer(Xc)
        elif outer.shape[1] == n_tri:
            oc = outer[start : start + m]
        else:
            oc = outer[start : start + m][:, iu[0] * d + iu[1]]
        A_tri += onehot @ oc
    A = np.empty((C * k, d, d))
    A[:, iu[0], iu[1]] = A_tri
    A[:, iu[1], iu[0]] = A_tri
    counts = np.bincount((z + k * np.arange(C)[:, None]).ravel(), minlength=C * k)
    return z, A.reshape(C, k, d, d), counts.reshape(C, k)


def u_update(U, A, counts, kappa, rng):
    """One column-wise Gibbs sweep (Hoff 2009) of every U[c, l] under the matrix Bingham
    exp(kappa tr(U^T A U)), batched over chains and clusters; each column is an exact
    vector-Bingham draw (ACG rejection) in the eigenbasis of N^T A N, N spanning the complement of
    the other columns (recomputed by a full QR for every column). Empty clusters
    get a Haar basis. Returns the new U (C, k, d, q).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (12).
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    """
    C, k, d, q = U.shape
    B = C * k
    U = U.reshape(B, d, q).copy()
    A = A.reshape(B, d, d)
    eye = np.broadcast_to(np.eye(d), (B, d, d))
    for r in rng.permutation(q):
        if q == 1:
            N = eye
        else:
            others = [j for j in range(q) if j != r]
            N = np.linalg.qr(U[:, :, others], mode="complete")[0][:, :, q - 1 :]  # (B, d, p)
        M = np.matmul(N.transpose(0, 2, 1), np.matmul(A, N))
        mu, V = np.linalg.eigh(M + M.transpose(0, 2, 1))  # symmetrised 2M: halve mu below
        NV = np.matmul(N, V)  # (B, d, p)
        col = U[:, :, r : r + 1]

        def current(rows, NV=NV, col=col):  # y0 for the Hoff fallback only
            return np.matmul(NV[rows].transpose(0, 2, 1), col[rows])[:, :, 0]

        y = sample_vector_bingham((0.5 * kappa) * mu, rng, y0=current)
        U[:, :, r] = np.matmul(NV, y[:, :, None])[:, :, 0]
    Q, R = np.linalg.qr(U)  # drift control
    signs = np.sign(np.diagonal(R, axis1=1, axis2=2))
    U = Q * np.where(signs == 0, 1.0, signs)[:, None, :]
    empty = np.flatnonzero(counts.reshape(B) == 0)
    if empty.size:
        U[empty] = haar_stiefel(d, q, rng, size=empty.size)
    return U.reshape(C, k, d, q)
