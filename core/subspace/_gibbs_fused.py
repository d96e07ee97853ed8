"""Compiled (numba) kernels of the Gibbs sampler of Wang, Wang & Singh, NIPS 2015, Sec. 4.1.

Optional: used by :func:`~privclust.core.subspace.gibbs.z_update`,
:func:`~privclust.core.subspace.gibbs.u_update` and
:func:`~privclust.core.subspace._bingham.sample_vector_bingham` when numba is installed
(``pip install privclust[fast]``); ``AVAILABLE`` says whether it is. Every random number comes
from the caller's numpy Generator in the same order as on the numpy path (the compiled ACG loop
draws from it directly: numba's Generator methods produce numpy's streams), so both paths give
the same chain for the same seed (to rounding; tests check it, Generator state included).

The one computation done differently is the eigendecomposition of the compressed scatter matrix
in the column update: tridiagonalisation and implicit QL here, LAPACK ``syevd`` on the numpy path.
Eigenvectors are unique only up to sign, so both paths flip each eigenvector (as a vector of
R^d) to make its largest-magnitude entry positive (:func:`canonical_signs`). The ACG proposal
is symmetric under each coordinate sign flip (its acceptance reads only y_j^2), so any sign
convention gives the same column distribution.

References
----------
Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
    NIPS 2015, Sec. 4.1, Eqs. (11)-(12).
Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
    simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2).
Golub, G. H. and Van Loan, C. F. (2013). Matrix Computations, 4th ed., Secs. 8.3.1 and 8.3.5.
"""
import math

import numpy as np

try:
    import numba
except ImportError:                      # the numpy path runs instead
    numba = None

AVAILABLE = numba is not None


def _jit(fn):
    return numba.njit(cache=True, nogil=True)(fn) if AVAILABLE else None


def canonical_signs(V):
    """Flip each column of V (..., d, p) so that its largest-magnitude entry (the first of equal
    ones) is positive; the numpy twin of the sign rule in :func:`column_setup`."""
    idx = np.abs(V).argmax(axis=-2)[..., None, :]
    return V * np.where(np.take_along_axis(V, idx, axis=-2) < 0, -1.0, 1.0)


def _z_labels(P, sq_norms, kappa, log_e, z, onehot, counts):
    """Labels of all chains for one chunk of m rows.

    P (q*C*k, m) = U^T x products, log_e (C, k, m) = log of the Exp(1) draws. Writes z (C, m) and
    onehot (C, k - 1, m) (1.0 where z == l, for l < k - 1) and adds to counts (C*k,). The logits
    kappa * min(||U^T x||^2 - ||x||^2, 0) and the Gumbel-max (strict >: ties to the lowest
    index) follow the numpy path operation by operation."""
    C, k, m = log_e.shape
    CK = C * k
    q = P.shape[0] // CK
    best = np.empty(m)
    for c in range(C):
        for ell in range(k):
            row = c * k + ell
            for i in range(m):
                s = P[row, i] * P[row, i]
                for j in range(1, q):
                    v = P[j * CK + row, i]
                    s += v * v
                s -= sq_norms[i]
                if s > 0.0:
                    s = 0.0
                s = s * kappa - log_e[c, ell, i]
                if ell == 0 or s > best[i]:
                    best[i] = s
                    z[c, i] = ell
        for ell in range(k - 1):
            for i in range(m):
                onehot[c, ell, i] = 0.0
        for i in range(m):
            ell = z[c, i]
            counts[c * k + ell] += 1
            if ell < k - 1:
                onehot[c, ell, i] = 1.0


def _symmetric_eigh(V, d, e):
    """Eigendecomposition of the symmetric V (p, p), in place: eigenvalues into d (unsorted),
    eigenvectors into the columns of V; e (p,) is workspace. Householder tridiagonalisation
    then the implicit QL iteration (the EISPACK routines tred2 and tql2, Golub & Van Loan
    (2013), Secs. 8.3.1 and 8.3.5)."""
    n = V.shape[0]
    for j in range(n):
        d[j] = V[n - 1, j]
    for i in range(n - 1, 0, -1):                     # tred2: Householder reduction
        scale = 0.0
        h = 0.0
        for k in range(i):
            scale += abs(d[k])
        if scale == 0.0:
            e[i] = d[i - 1]
            for j in range(i):
                d[j] = V[i - 1, j]
                V[i, j] = 0.0
                V[j, i] = 0.0
        else:
            for k in range(i):
                d[k] /= scale
                h += d[k] * d[k]
            f = d[i - 1]
            g = math.sqrt(h)
            if f > 0:
                g = -g
            e[i] = scale * g
            h -= f * g
            d[i - 1] = f - g
            for j in range(i):
                e[j] = 0.0
            for j in range(i):
                f = d[j]
                V[j, i] = f
                g = e[j] + V[j, j] * f
                for k in range(j + 1, i):
                    g += V[k, j] * d[k]
                    e[k] += V[k, j] * f
                e[j] = g
            f = 0.0
            for j in range(i):
                e[j] /= h
                f += e[j] * d[j]
            hh = f / (h + h)
            for j in range(i):
                e[j] -= hh * d[j]
            for j in range(i):
                f = d[j]
                g = e[j]
                for k in range(j, i):
                    V[k, j] -= f * e[k] + g * d[k]
                d[j] = V[i - 1, j]
                V[i, j] = 0.0
        d[i] = h
    for i in range(n - 1):                            # accumulate the transformations
        V[n - 1, i] = V[i, i]
        V[i, i] = 1.0
        h = d[i + 1]
        if h != 0.0:
            for k in range(i + 1):
                d[k] = V[k, i + 1] / h
            for j in range(i + 1):
                g = 0.0
                for k in range(i + 1):
                    g += V[k, i + 1] * V[k, j]
                for k in range(i + 1):
                    V[k, j] -= g * d[k]
        for k in range(i + 1):
            V[k, i + 1] = 0.0
    for j in range(n):
        d[j] = V[n - 1, j]
        V[n - 1, j] = 0.0
    V[n - 1, n - 1] = 1.0
    e[0] = 0.0
    for i in range(1, n):                             # tql2: implicit QL
        e[i - 1] = e[i]
    e[n - 1] = 0.0
    f = 0.0
    tst1 = 0.0
    eps = 2.0 ** -52
    for ell in range(n):
        tst1 = max(tst1, abs(d[ell]) + abs(e[ell]))
        m = ell
        while m < n - 1 and abs(e[m]) > eps * tst1:
            m += 1
        if m > ell:
            for _ in range(60):
                g = d[ell]
                p = (d[ell + 1] - g) / (2.0 * e[ell])
                r = math.hypot(p, 1.0)
                if p < 0:
                    r = -r
                d[ell] = e[ell] / (p + r)
                d[ell + 1] = e[ell] * (p + r)
                dl1 = d[ell + 1]
                h = g - d[ell]
                for i in range(ell + 2, n):
                    d[i] -= h
                f += h
                p = d[m]
                c = 1.0
                c2 = c
                c3 = c
                el1 = e[ell + 1]
                s = 0.0
                s2 = 0.0
                for i in range(m - 1, ell - 1, -1):
                    c3 = c2
                    c2 = c
                    s2 = s
                    g = c * e[i]
                    h = c * p
                    r = math.hypot(p, e[i])
                    e[i + 1] = s * r
                    s = e[i] / r
                    c = p / r
                    p = c * d[i] - s * g
                    d[i + 1] = h + s * (c * g + s * d[i])
                    for k in range(n):
                        h = V[k, i + 1]
                        V[k, i + 1] = s * V[k, i] + c * h
                        V[k, i] = c * V[k, i] - s * h
                p = -s * s2 * c3 * el1 * e[ell] / dl1
                e[ell] = s * p
                d[ell] = c * p
                if abs(e[ell]) <= eps * tst1:
                    break
        d[ell] += f
        e[ell] = 0.0


symmetric_eigh = _jit(_symmetric_eigh)


def _column_setup(U, A, r, kappa, NV, a):
    """For every basis U[b] (d, q) and scatter matrix A[b] (d, d): an orthonormal basis N of the
    complement of the columns other than r (pivoted Gram-Schmidt, twice), the eigenvalues of
    N^T A[b] N (ascending) times kappa into a[b] (p,) and the eigenvectors N V into NV[b] (d, p),
    each with its largest-magnitude entry positive."""
    B, d, q = U.shape
    p = d - q + 1
    basis = np.empty((d, d))
    N = np.empty((d, p))
    AN = np.empty((d, p))
    S = np.empty((p, p))
    w = np.empty(p)
    e = np.empty(p)
    v = np.empty(d)
    for b in range(B):
        nb = 0
        for j in range(q):
            if j != r:
                for h in range(d):
                    basis[h, nb] = U[b, h, j]
                nb += 1
        for t in range(p):
            pick = 0
            most = -1.0
            for i in range(d):                       # e_i farthest from the span so far
                rest = 1.0
                for col in range(nb):
                    rest -= basis[i, col] * basis[i, col]
                if rest > most:
                    most = rest
                    pick = i
            for h in range(d):
                v[h] = 0.0
            v[pick] = 1.0
            for _ in range(2):
                for col in range(nb):
                    dot = 0.0
                    for h in range(d):
                        dot += basis[h, col] * v[h]
                    for h in range(d):
                        v[h] -= dot * basis[h, col]
            norm = 0.0
            for h in range(d):
                norm += v[h] * v[h]
            norm = np.sqrt(norm)
            for h in range(d):
                basis[h, nb] = v[h] / norm
                N[h, t] = basis[h, nb]
            nb += 1
        for h in range(d):
            for t in range(p):
                acc = 0.0
                for g in range(d):
                    acc += A[b, h, g] * N[g, t]
                AN[h, t] = acc
        for s1 in range(p):
            for s2 in range(s1, p):
                acc = 0.0
                for h in range(d):
                    acc += N[h, s1] * AN[h, s2]
                S[s1, s2] = acc
                S[s2, s1] = acc
        symmetric_eigh(S, w, e)
        order = np.argsort(w)
        for t in range(p):
            col = order[t]
            a[b, t] = kappa * w[col]
            big = 0.0
            sign = 1.0
            for h in range(d):
                acc = 0.0
                for s1 in range(p):
                    acc += N[h, s1] * S[s1, col]
                NV[b, h, t] = acc
                if abs(acc) > big:
                    big = abs(acc)
                    sign = 1.0 if acc >= 0.0 else -1.0
            if sign < 0.0:
                for h in range(d):
                    NV[b, h, t] = -NV[b, h, t]


def _acg_parameters(lam, b, omega, log_m):
    """Row-wise Newton solve of sum_j 1/(b + 2 lam_j) = 1 from b = 1 and the ACG envelope (the
    compiled twin of ``_bingham.acg_parameters``)."""
    B, p = lam.shape
    for row in range(B):
        x = 1.0
        for _ in range(100):
            f = -1.0
            df = 0.0
            for j in range(p):
                inv = 1.0 / (x + 2.0 * lam[row, j])
                f += inv
                df += inv * inv
            if abs(f) < 1e-13:
                break
            x = min(x + f / df, float(p))
        b[row] = x
        for j in range(p):
            omega[row, j] = 1.0 + 2.0 * lam[row, j] / x
        log_m[row] = -(p - x) / 2.0 + (p / 2.0) * np.log(p / x)


def _acg_round(g, u, rows, lam, omega, log_m, out, hit):
    """One round of ACG proposals for the pending rows: g (P, R, p) standard normals, u (P, R)
    uniforms; the first accepted proposal of pending row j is written to out[rows[j]] and
    hit[j] set (the numpy path's acceptance test, proposal by proposal)."""
    P, R, p = g.shape
    w = np.empty(p)
    for j in range(P):
        row = rows[j]
        hit[j] = False
        for t in range(R):
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            for h in range(p):
                x = g[j, t, h] * (1.0 / np.sqrt(omega[row, h]))
                w[h] = x
                x2 = x * x
                s0 += x2
                s1 += x2 * lam[row, h]
                s2 += x2 * omega[row, h]
            if np.log(u[j, t]) <= 0.5 * p * np.log(s2 / s0) - s1 / s0 - log_m[row]:
                norm = np.sqrt(s0)
                for h in range(p):
                    out[row, h] = w[h] / norm
                hit[j] = True
                break


def _orthonormalise(U):
    """Q of the thin QR of every U[b] (d, q) with a positive diagonal of R (unique for full rank),
    in place, by modified Gram-Schmidt applied twice."""
    B, d, q = U.shape
    for b in range(B):
        for j in range(q):
            for _ in range(2):
                for i in range(j):
                    dot = 0.0
                    for h in range(d):
                        dot += U[b, h, i] * U[b, h, j]
                    for h in range(d):
                        U[b, h, j] -= dot * U[b, h, i]
            norm = 0.0
            for h in range(d):
                norm += U[b, h, j] * U[b, h, j]
            norm = math.sqrt(norm)
            for h in range(d):
                U[b, h, j] /= norm


def _acg_sample(lam, rng, rounds, R, out):
    """The whole ACG rejection loop of the numpy path for rows of lam (B, p): the envelope, then
    up to ``rounds`` rounds; each round draws, like the numpy path, R * p standard normals per
    pending row (row-major) and then R uniforms per pending row, from the same Generator. The
    first accepted proposal of a row goes to out; returns the rows still pending."""
    B, p = lam.shape
    b = np.empty(B)
    omega = np.empty((B, p))
    log_m = np.empty(B)
    acg_parameters(lam, b, omega, log_m)
    pending = np.arange(B)
    hit = np.empty(B, dtype=np.bool_)
    for _ in range(rounds):
        P = pending.size
        if P == 0:
            break
        g = np.empty((P, R, p))
        for j in range(P):
            for t in range(R):
                for h in range(p):
                    g[j, t, h] = rng.standard_normal()
        u = np.empty((P, R))
        for j in range(P):
            for t in range(R):
                u[j, t] = rng.random()
        acg_round(g, u, pending, lam, omega, log_m, out, hit)
        pending = pending[~hit[:P]]
    return pending


def _u_sweep(U, A, perm, start, kappa, rng, rounds, R, NV, a, y):
    """Columns perm[start:] of the column-wise sweep, in place on U (B, d, q): set-up
    (:func:`column_setup`), ACG draw (:func:`acg_sample`, rows of y), U[:, :, r] = NV y. Stops
    at the first column with rows still pending after ``rounds`` rounds and returns its
    position in perm (the caller finishes it with Hoff's update), else -1."""
    B, d, q = U.shape
    p = NV.shape[2]
    lam = np.empty((B, p))
    for pos in range(start, perm.size):
        r = perm[pos]
        column_setup(U, A, r, kappa, NV, a)
        for b in range(B):
            top = a[b, 0]
            for h in range(1, p):
                top = max(top, a[b, h])
            for h in range(p):
                lam[b, h] = top - a[b, h]
                y[b, h] = np.nan
        if acg_sample(lam, rng, rounds, R, y).size:
            return pos
        for b in range(B):
            for h in range(d):
                acc = 0.0
                for s in range(p):
                    acc += NV[b, h, s] * y[b, s]
                U[b, h, r] = acc
    return -1


z_labels = _jit(_z_labels)
orthonormalise = _jit(_orthonormalise)
column_setup = _jit(_column_setup)
acg_parameters = _jit(_acg_parameters)
acg_round = _jit(_acg_round)
acg_sample = _jit(_acg_sample)
u_sweep = _jit(_u_sweep)


def warm_up():
    """Compile every kernel (or load it from numba's on-disk cache) on tiny inputs, so that the
    first sampling run does not pay the compilation (several CPU seconds uncached). Does nothing
    without numba."""
    if not AVAILABLE:
        return
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((3, 4, 2)))[0]
    A = np.einsum("bij,bkj->bik", U, U) + np.eye(4)
    NV, a, y = np.empty((3, 4, 3)), np.empty((3, 3)), np.empty((3, 3))
    u_sweep(U.copy(), A, rng.permutation(2), 0, 1.0, rng, 10, 16, NV, a, y)
    acg_sample(np.ones((2, 3)), rng, 1, 16, np.empty((2, 3)))
    z, onehot, counts = np.empty((1, 5), np.int64), np.empty((1, 2, 5)), np.zeros(3, np.int64)
    z_labels(rng.standard_normal((6, 5)), np.ones(5), 1.0, np.zeros((1, 3, 5)), z, onehot,
             counts)
    orthonormalise(U.copy())
