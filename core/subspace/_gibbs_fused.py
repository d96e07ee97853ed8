"""Compiled (numba) kernels of the Gibbs sampler of Wang, Wang & Singh, NIPS 2015, Sec. 4.1.

Optional: used by :func:`~privclust.core.subspace.gibbs.z_update`,
:func:`~privclust.core.subspace.gibbs.u_update`,
:class:`~privclust.core.subspace.gibbs.GibbsIterations` (one call per iteration:
:func:`iteration`) and :func:`~privclust.core.subspace._bingham.sample_vector_bingham` when
numba is installed
(``pip install privclust[fast]``); ``AVAILABLE`` says whether it is. Every random number comes
from the caller's numpy Generator in the same order as on the numpy path (the compiled ACG loop
draws from it directly: numba's Generator methods produce numpy's streams), so both paths give
the same chain for the same seed (to rounding; tests check it, Generator state included).

Computations done differently, with the same result to rounding: the complement basis of the
column update (Householder reflectors here, a complete QR on the numpy path: the eigenvectors
N v as vectors of R^d do not depend on that choice), the eigendecomposition of the compressed
scatter matrix (tridiagonalisation and implicit QL here, LAPACK ``syevd`` on the numpy path)
and the order of the sums of the scatter matrices. Eigenvectors are unique only up to sign, so
both paths flip each eigenvector (as a vector of R^d) to make its largest-magnitude entry
positive (:func:`canonical_signs`). The ACG proposal is symmetric under each coordinate sign
flip (its acceptance reads only y_j^2), so any sign convention gives the same column
distribution.

The loops over chains, bases and proposal rows are parallel loops (they draw nothing and write
disjoint outputs: the chain does not depend on the thread count), run on
PRIVCLUST_GIBBS_THREADS threads, default 1, when that variable is above 1 at import
(:func:`use_threads`).

References
----------
Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
    NIPS 2015, Sec. 4.1, Eqs. (11)-(12).
Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
    simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2).
Golub, G. H. and Van Loan, C. F. (2013). Matrix Computations, 4th ed., Secs. 5.1.2, 5.2.2,
    8.3.1 and 8.3.5.
"""

import math
import os

import numpy as np

try:
    import numba
except ImportError:  # the numpy path runs instead
    numba = None

AVAILABLE = numba is not None
THREADS_VARIABLE = "PRIVCLUST_GIBBS_THREADS"


def _threads():
    value = os.environ.get(THREADS_VARIABLE, "1")
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer; got {value!r}") from None
    if n < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer; got {value!r}")
    return n


PARALLEL = AVAILABLE and _threads() > 1  # read once, at import: parallel builds or serial ones


def use_threads():
    """Set the threads of the kernels' parallel loops (chains, bases, proposal rows) for the
    calling thread: the environment variable PRIVCLUST_GIBBS_THREADS, default 1, at most
    numba's thread count. The kernels are built with parallel loops only when that variable
    is above 1 at import (then compiled in every process, not cached). One by default: on a
    shared machine, parallel regions whose threads wait for a busy core cost far more than
    they save (measured with 2 threads at a load average of 15-20 on 2 cores: 25x slower).
    The chain does not depend on the number of threads."""
    numba.set_num_threads(min(_threads(), numba.config.NUMBA_NUM_THREADS))


def _jit(fn, parallel=False):
    """Compile ``fn``; its prange loops run in parallel only when PARALLEL, and then nothing is
    cached (numba's cache does not tell a parallel build from a serial one)."""
    if not AVAILABLE:
        return None
    return numba.njit(cache=not PARALLEL, nogil=True, parallel=parallel and PARALLEL)(fn)


def canonical_signs(V):
    """Flip each column of V (..., d, p) so that its largest-magnitude entry (the first of equal
    ones) is positive; the numpy twin of the sign rule in :func:`column_setup`."""
    idx = np.abs(V).argmax(axis=-2)[..., None, :]
    return V * np.where(np.take_along_axis(V, idx, axis=-2) < 0, -1.0, 1.0)


LOG_TINY = float(np.log(np.finfo(np.float64).tiny))  # log of the floor of the Exp(1) draws


def _z_labels(P, sq_norms, log_e, kappa, z):
    """Labels z (C, m) of all chains for one chunk of m rows.

    P (q*C*k, m) = U^T x products, log_e (C, k, m) = logs of the Exp(1) draws (-inf allowed:
    clamped to ``LOG_TINY``, as the numpy path clamps a draw to the smallest normal float before
    its log). The logits kappa * min(||U^T x||^2 - ||x||^2, 0) and the Gumbel-max (strict >:
    ties to the lowest index) follow the numpy path operation by operation; the inner loops run
    over the m rows without branches (vectorised by the compiler), chains in parallel."""
    C, k, m = log_e.shape
    CK = C * k
    q = P.shape[0] // CK
    for c in numba.prange(C):
        best = np.empty(m)
        s = np.empty(m)
        zc = z[c]
        for ell in range(k):
            row = c * k + ell
            pr = P[row]
            for i in range(m):
                s[i] = pr[i] * pr[i]
            for j in range(1, q):
                pr = P[j * CK + row]
                for i in range(m):
                    s[i] += pr[i] * pr[i]
            le = log_e[c, ell]
            if ell == 0:
                for i in range(m):
                    best[i] = min(s[i] - sq_norms[i], 0.0) * kappa - max(le[i], LOG_TINY)
                    zc[i] = 0
            else:
                for i in range(m):
                    x = min(s[i] - sq_norms[i], 0.0) * kappa - max(le[i], LOG_TINY)
                    better = x > best[i]
                    best[i] = x if better else best[i]
                    zc[i] = ell if better else zc[i]


def _scatter(z, outer, counts, A_tri):
    """ADD the counts (C, k) of the labels z (C, m) and the rows outer[i] (upper triangles of
    the x_i x_i^T, possibly zero-padded) into A_tri[c * k + z[c, i]], so that a caller may
    accumulate chunks. Row by row: a row of ``outer`` and all of A_tri stay in the L1 cache."""
    C, m = z.shape
    k = counts.shape[1]
    n_tri = outer.shape[1]
    for i in range(m):
        for c in range(C):
            label = z[c, i]
            counts[c, label] += 1
            row = c * k + label
            for t in range(n_tri):
                A_tri[row, t] += outer[i, t]


def _rescatter(z_old, z, outer, counts, A_tri):
    """Update the counts and scatter triangles of the labels z_old to those of z (both (C, m)):
    each record whose label changed moves its outer[i] from the old row to the new one. After
    burn-in a Gibbs iteration changes few labels (about 0.05 % on the benchmark's setting), so
    this replaces the full sum; the result equals it to rounding."""
    C, m = z.shape
    k = counts.shape[1]
    n_tri = outer.shape[1]
    for i in range(m):
        for c in range(C):
            new, old = z[c, i], z_old[c, i]
            if new != old:
                counts[c, old] -= 1
                counts[c, new] += 1
                r_old, r_new = c * k + old, c * k + new
                for t in range(n_tri):
                    A_tri[r_old, t] -= outer[i, t]
                    A_tri[r_new, t] += outer[i, t]


def _symmetric_eigh(V, d, e):
    """Eigendecomposition of the symmetric V (p, p), in place: eigenvalues into d (unsorted),
    eigenvectors into the ROWS of V; e (p,) is workspace. Householder tridiagonalisation
    then the implicit QL iteration (the EISPACK routines tred2 and tql2, Golub & Van Loan
    (2013), Secs. 8.3.1 and 8.3.5); the QL rotations act on rows, so their loops run over
    contiguous memory (vectorised by the compiler)."""
    n = V.shape[0]
    for j in range(n):
        d[j] = V[n - 1, j]
    for i in range(n - 1, 0, -1):  # tred2: Householder reduction
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
    for i in range(n - 1):  # accumulate the transformations
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
    for i in range(n):  # the accumulated Q, transposed: its columns become rows
        for j in range(i + 1, n):
            V[i, j], V[j, i] = V[j, i], V[i, j]
    e[0] = 0.0
    for i in range(1, n):  # tql2: implicit QL
        e[i - 1] = e[i]
    e[n - 1] = 0.0
    f = 0.0
    tst1 = 0.0
    eps = 2.0**-52
    for ell in range(n):
        tst1 = max(tst1, abs(d[ell]) + abs(e[ell]))
        m = ell
        while m < n - 1 and abs(e[m]) > eps * tst1:
            m += 1
        if m > ell:
            for _ in range(60):
                g = d[ell]
                p = (d[ell + 1] - g) / (2.0 * e[ell])
                r = math.sqrt(p * p + 1.0)  # hypot(p, 1): |p| <= 2^52 as |e| > eps tst1
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
                    r = math.sqrt(p * p + e[i] * e[i])
                    if r == 0.0 or not r < math.inf:  # under- or overflow
                        r = math.hypot(p, e[i])
                    e[i + 1] = s * r
                    s = e[i] / r
                    c = p / r
                    p = c * d[i] - s * g
                    d[i + 1] = h + s * (c * g + s * d[i])
                    vi, vn = V[i], V[i + 1]
                    for k in range(n):
                        h = vn[k]
                        vn[k] = s * vi[k] + c * h
                        vi[k] = c * vi[k] - s * h
                p = -s * s2 * c3 * el1 * e[ell] / dl1
                e[ell] = s * p
                d[ell] = c * p
                if abs(e[ell]) <= eps * tst1:
                    break
        d[ell] += f
        e[ell] = 0.0


symmetric_eigh = _jit(_symmetric_eigh)


def _column_setup(U, A, r, kappa, NV, a):
    """For every basis U[b] (d, q) and scatter matrix A[b] (d, d): the eigenvalues of N^T A[b] N
    (ascending) times kappa into a[b] (p,) and the eigenvectors N V into NV[b] (d, p), each with
    its largest-magnitude entry positive, where N (d, p) is an orthonormal basis of the
    complement of the columns other than r. N = H [0; I_p] for the product H = H_1 ... H_{q-1}
    of the Householder reflectors of the QR of those columns (Golub & Van Loan (2013),
    Sec. 5.2.2), so N^T A N is the trailing (p, p) block of H^T A H (two-sided reflections of
    A, never forming N) and N V = H [0; V]. The vectors N v do not depend on the choice of N
    (up to the sign fixed here), so the numpy path's complete QR gives the same ones. Bases in
    parallel."""
    B, d, q = U.shape
    p = d - q + 1
    m = q - 1
    work_O, work_Vh, work_M = np.empty((B, d, m)), np.zeros((B, m, d)), np.empty((B, d, d))
    work_t, work_S, work_Y = np.empty((B, d)), np.empty((B, p, p)), np.empty((B, d, p))
    work_w, work_e, work_order = np.empty((B, p)), np.empty((B, p)), np.empty((B, p), np.int64)
    for b in numba.prange(B):
        Qw, Vh, M, t, S, Y = work_O[b], work_Vh[b], work_M[b], work_t[b], work_S[b], work_Y[b]
        w, e = work_w[b], work_e[b]  # Vh: unit reflector vectors, H_j = I - 2 v v^T
        M[:, :] = A[b]
        col = 0
        for j in range(q):
            if j != r:
                for h in range(d):
                    Qw[h, col] = U[b, h, j]
                col += 1
        for j in range(m):
            norm = 0.0
            for h in range(j, d):
                norm += Qw[h, j] * Qw[h, j]
            alpha = -math.sqrt(norm) if Qw[j, j] >= 0.0 else math.sqrt(norm)
            for h in range(j, d):
                Vh[j, h] = Qw[h, j]
            Vh[j, j] -= alpha
            vn = 0.0
            for h in range(j, d):
                vn += Vh[j, h] * Vh[j, h]
            vn = math.sqrt(vn)
            for h in range(j, d):
                Vh[j, h] /= vn
            for c2 in range(j + 1, m):
                dot = 0.0
                for h in range(j, d):
                    dot += Vh[j, h] * Qw[h, c2]
                for h in range(j, d):
                    Qw[h, c2] -= 2.0 * dot * Vh[j, h]
            beta = 0.0  # M <- H_j M H_j (symmetric rank-2 update)
            for h in range(d):
                acc = 0.0
                for g in range(j, d):
                    acc += M[h, g] * Vh[j, g]
                t[h] = acc
                beta += Vh[j, h] * acc
            for h in range(d):
                for g in range(d):
                    M[h, g] += 4.0 * beta * Vh[j, h] * Vh[j, g] - 2.0 * (
                        Vh[j, h] * t[g] + t[h] * Vh[j, g]
                    )
        for s1 in range(p):
            for s2 in range(p):
                S[s1, s2] = M[m + s1, m + s2]
        symmetric_eigh(S, w, e)
        order = work_order[b]  # ascending eigenvalues (stable insertion sort)
        for c2 in range(p):
            h = c2
            while h > 0 and w[order[h - 1]] > w[c2]:
                order[h] = order[h - 1]
                h -= 1
            order[h] = c2
        for c2 in range(p):
            src = order[c2]
            a[b, c2] = kappa * w[src]
            for h in range(m):
                Y[h, c2] = 0.0
            for h in range(p):
                Y[m + h, c2] = S[src, h]
        for j in range(m - 1, -1, -1):  # Y <- H_j Y, j = q-1, ..., 1
            for c2 in range(p):
                dot = 0.0
                for h in range(j, d):
                    dot += Vh[j, h] * Y[h, c2]
                for h in range(j, d):
                    Y[h, c2] -= 2.0 * dot * Vh[j, h]
        for c2 in range(p):
            big = 0.0
            sign = 1.0
            for h in range(d):
                if abs(Y[h, c2]) > big:
                    big = abs(Y[h, c2])
                    sign = 1.0 if Y[h, c2] >= 0.0 else -1.0
            for h in range(d):
                NV[b, h, c2] = sign * Y[h, c2]


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
    hit[j] set (the numpy path's acceptance test, proposal by proposal). Rows in parallel."""
    P, R, p = g.shape
    work = np.empty((P, p))
    for j in numba.prange(P):
        row = rows[j]
        w = work[j]
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


def _iteration(
    P,
    sq_norms,
    log_e,
    kappa,
    outer,
    position,
    perm,
    rng,
    rounds,
    R,
    U,
    z_old,
    z,
    full,
    counts,
    A_tri,
    A,
    NV,
    a,
    y,
):
    """One Gibbs iteration of all chains after the products P = U^T x and the logs of the
    Exp(1) draws: labels z (:func:`z_labels`), their counts and scatter triangles (summed anew
    when ``full``, else updated from those of the previous labels z_old: :func:`rescatter`),
    the scatter matrices A (B, d, d) from the triangles (``position``: index in a triangle row
    of entry (h, g), row-major), the column sweep in the order ``perm`` (:func:`u_sweep`) and
    the re-orthonormalisation (:func:`orthonormalise`), U (B, d, q) in place. Returns -1, or
    the position in perm of a column whose ACG draw ran out of proposals: the sweep stopped
    there (not re-orthonormalised) for the caller to finish with Hoff's update."""
    z_labels(P, sq_norms, log_e, kappa, z)
    if full:
        A_tri[:, :] = 0.0
        counts[:, :] = 0
        scatter(z, outer, counts, A_tri)
    else:
        rescatter(z_old, z, outer, counts, A_tri)
    B, d, _ = A.shape
    for b in range(B):
        for h in range(d):
            for g in range(d):
                A[b, h, g] = A_tri[b, position[h * d + g]]
    pos = u_sweep(U, A, perm, 0, kappa, rng, rounds, R, NV, a, y)
    if pos < 0:
        orthonormalise(U)
    return pos


z_labels = _jit(_z_labels, parallel=True)
scatter = _jit(_scatter)
rescatter = _jit(_rescatter)
orthonormalise = _jit(_orthonormalise)
column_setup = _jit(_column_setup, parallel=True)
acg_parameters = _jit(_acg_parameters)
acg_round = _jit(_acg_round, parallel=True)
acg_sample = _jit(_acg_sample)
u_sweep = _jit(_u_sweep)
iteration = _jit(_iteration)


def warm_up():
    """Compile every kernel (or load it from numba's on-disk cache) on tiny inputs, so that the
    first sampling run does not pay the compilation (several CPU seconds uncached). Does nothing
    without numba."""
    if not AVAILABLE:
        return
    use_threads()
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((3, 4, 2)))[0]
    A = np.einsum("bij,bkj->bik", U, U) + np.eye(4)
    NV, a, y = np.empty((3, 4, 3)), np.empty((3, 3)), np.empty((3, 3))
    u_sweep(U.copy(), A, rng.permutation(2), 0, 1.0, rng, 10, 16, NV, a, y)
    acg_sample(np.ones((2, 3)), rng, 1, 16, np.empty((2, 3)))
    z = np.empty((1, 5), np.int64)
    z_labels(rng.standard_normal((6, 5)), np.ones(5), np.zeros((1, 3, 5)), 1.0, z)
    counts, A_tri = np.zeros((1, 3), np.int64), np.zeros((3, 10))
    scatter(z, np.ones((5, 10)), counts, A_tri)
    rescatter(z, np.zeros_like(z), np.ones((5, 10)), counts, A_tri)
    orthonormalise(U.copy())
    P, log_e, position = rng.standard_normal((6, 5)), np.zeros((1, 3, 5)), np.arange(16) % 10
    for full in (True, False):
        iteration(P, np.ones(5), log_e, 1.0, np.ones((5, 10)), position, rng.permutation(2),
                  rng, 10, 16, U.copy(), z.copy(), z, full, counts, A_tri, A[:, :, :],
                  NV, a, y)  # fmt: skip
