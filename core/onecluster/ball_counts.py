"""Capped ball counts around input points and their top-t mean L(r) ([NSV16] Alg. 1; spec 4.2).

B_r(x_i, S) = #{z in S : ||x_i - z|| <= r} (x_i itself included), capped at t, and
L(r, S) = mean of the t largest capped counts. Under ``replace`` L has sensitivity <= 2: every
other count moves by at most 1 and the replaced record's own (capped) count by at most t.

Never materialises an n x n matrix (spec 4.3a cost note). Counts are capped at t, so:
- a row stops being counted at larger radii once it reaches t;
- once t rows are capped, L(r) = t for every larger radius (no further work);
- the brute-force path only extracts the pairs within a scheduled radius r_stop (sparse for
  background rows), guessed from a data-independent subset of rows and verified exactly.
Low dimensions (d <= 2) use a KD-tree (scipy ``cKDTree`` radius counts); higher ones chunked
BLAS distances. Both compute the same counts (up to float rounding of distances on ties).
"""
import numpy as np
from scipy.spatial import cKDTree

_CHUNK_ENTRIES = 1 << 21  # distance entries per chunk (16 MB of float64)
_SCHEDULE_ROWS = 64


def multiplicity_top_mean(X, t):
    """L(0): top-t mean of min(multiplicity, t) (exact duplicates, i.e. the radius-0 balls)."""
    n = X.shape[0]
    if n == 0:
        return 0.0
    _, inverse, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    per_row = np.minimum(counts[inverse.ravel()], t)
    return _top_mean(per_row, t, n)


def _top_mean(values, t, n):
    """Mean of the t largest of ``values`` (missing values count as 0 when n < t)."""
    if n <= t:
        return float(values.sum()) / t
    return float(np.partition(values, n - t)[n - t:].sum()) / t


def capped_top_means(X, radii, t, method="auto"):
    """L(r) for every r in ``radii`` (ascending), plus the count of rows capped at each radius.

    Returns ``(L, n_capped)``: float array and int array of len(radii). ``method`` is "auto"
    (KD-tree when d <= 2, else chunked brute force), "kdtree" or "brute".
    """
    X = np.asarray(X, dtype=np.float64)
    radii = np.asarray(radii, dtype=np.float64)
    if radii.ndim != 1 or np.any(np.diff(radii) <= 0):
        raise ValueError("radii must be a strictly increasing 1-D array")
    n, d = X.shape
    if n == 0:
        return np.zeros(len(radii)), np.zeros(len(radii), dtype=np.int64)
    if method == "auto":
        method = "kdtree" if d <= 2 else "brute"
    if method == "kdtree":
        counts = _counts_kdtree(X, radii, t)
    elif method == "brute":
        counts = _counts_brute(X, radii, t)
    else:
        raise ValueError(f"method must be 'auto', 'kdtree' or 'brute', got {method!r}")
    L = np.empty(len(radii))
    n_capped = np.empty(len(radii), dtype=np.int64)
    for j in range(len(radii)):
        col = counts[:, j]
        n_capped[j] = int(np.count_nonzero(col >= t))
        L[j] = float(t) if n_capped[j] >= t else _top_mean(col, t, n)
    return L, n_capped


def _counts_kdtree(X, radii, t):
    """(n, len(radii)) capped counts; rows/radii never needed are filled with t (see module doc)."""
    n = X.shape[0]
    tree = cKDTree(X)
    counts = np.full((n, len(radii)), t, dtype=np.int64)
    active = np.arange(n)
    for j, r in enumerate(radii):
        if active.size:
            c = np.minimum(tree.query_ball_point(X[active], r, return_length=True), t)
            counts[active, j] = c
            active = active[c < t]
        if n - active.size >= t:  # t rows capped: L = t from here on
            break
    return counts


def _counts_brute(X, radii, t):
    """Chunked-distance version of :func:`_counts_kdtree` (same output contract)."""
    n = X.shape[0]
    K = len(radii)
    Xc = X - X.mean(axis=0) if n else X  # any per-run constant shift; improves float accuracy
    sq = np.einsum("ij,ij->i", Xc, Xc)
    # ties at exactly r are common on a grid: absorb the round-off of |a|^2 + |b|^2 - 2ab
    r2 = radii ** 2 + 1e-13 * (1.0 + (sq.max() if n else 0.0))
    counts = np.full((n, K), t, dtype=np.int64)
    k_stop = _schedule(Xc, sq, r2, t)
    rows = np.arange(n)
    lo = 0
    while lo < K:
        hi = k_stop + 1
        _fill_chunks(Xc, sq, r2, t, rows, lo, hi, counts)
        capped = counts[:, hi - 1] >= t
        if np.count_nonzero(capped) >= t or hi == K:
            break
        rows = np.flatnonzero(~capped)
        lo, k_stop = hi, min(K - 1, hi + 1)
    return counts


def _schedule(Xc, sq, r2, t):
    """Guess the first radius index where >= t rows hold t points, from evenly spaced rows.

    Only decides how much work is done (the result is verified and extended); the chosen rows
    do not depend on the data values.
    """
    n = Xc.shape[0]
    K = len(r2)
    if n <= t:
        return K - 1
    idx = np.unique(np.linspace(0, n - 1, min(n, _SCHEDULE_ROWS)).astype(np.int64))
    D2 = _sq_dist(Xc[idx], sq[idx], Xc, sq)
    kth = np.partition(D2, t - 1, axis=1)[:, t - 1]
    need = 0.5 * t / n
    for j in range(K):
        if np.mean(kth <= r2[j]) >= need:
            return min(K - 1, j + 1)
    return K - 1


def _sq_dist(A, sqa, B, sqb):
    """Squared distances A x B (chunk of rows); float round-off may leave tiny negatives."""
    D2 = A @ (-2.0 * B).T
    D2 += sqb[None, :]
    D2 += sqa[:, None]
    return D2


def _fill_chunks(Xc, sq, r2, t, rows, lo, hi, counts):
    """Exact capped counts for ``rows`` at radius indices lo..hi-1, one chunk of rows at a time.

    Rows and columns are sorted by their projection on a fixed unit direction u; since
    |u.(x - y)| <= ||x - y||, a chunk only needs the columns whose projection lies within
    r_hi = r[hi-1] of the chunk's projections (a contiguous slice). Per chunk: one comparison pass
    per radius from the largest down while the pairs within it are dense (> 1/64 of the chunk),
    then the smaller radii from the (sparse) pairs within the last dense-checked radius.
    """
    n, d = Xc.shape
    step = max(1, _CHUNK_ENTRIES // max(n, 1))
    u = np.full(d, 1.0 / np.sqrt(d))  # fixed direction: only affects the amount of work
    proj = Xc @ u
    order = np.argsort(proj, kind="stable")
    ps, Xs, sqs = proj[order], -2.0 * Xc[order], sq[order]
    rows = rows[np.argsort(proj[rows], kind="stable")]
    reach = np.sqrt(r2[hi - 1]) * (1 + 1e-9) + 1e-12
    for s in range(0, rows.size, step):
        block = rows[s:s + step]
        a = np.searchsorted(ps, proj[block[0]] - reach, side="left")
        b = np.searchsorted(ps, proj[block[-1]] + reach, side="right")
        D2 = Xc[block] @ Xs[a:b].T
        D2 += sqs[None, a:b]
        shift = sq[block][:, None]  # D2 + shift is the squared distance
        c = np.empty((block.size, hi - lo), dtype=np.int64)
        j = hi - 1
        while True:
            c[:, j - lo] = np.count_nonzero(D2 <= r2[j] - shift, axis=1)
            if j == lo or c[:, j - lo].sum() * 64 <= D2.size:
                break
            j -= 1
        if j > lo:
            vals = D2[D2 <= r2[j] - shift]  # row-major: grouped by row, c[:, j - lo] per row
            r_idx = np.repeat(np.arange(block.size), c[:, j - lo])
            vals += shift[r_idx, 0]
            width = j - lo + 1
            inner = np.minimum(np.searchsorted(r2[lo:j + 1], vals, side="left"), width - 1)
            hist = np.bincount(r_idx * width + inner, minlength=block.size * width)
            c[:, :width] = np.cumsum(hist.reshape(block.size, width), axis=1)
        counts[block, lo:hi] = np.minimum(c, t)
