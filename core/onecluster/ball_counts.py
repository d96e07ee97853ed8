"""Capped ball counts around input points and their top-t mean L(r) (Nissim, Stemmer & Vadhan,
PODS 2016, Algorithm GoodRadius, Sec. 3.1 and 4.1).

B_r(x_i, S) = #{z in S : ||x_i - z|| <= r} (x_i itself included), capped at t, and
L(r, S) = mean of the t largest capped counts. Under ``replace`` L has sensitivity <= 2: every
other count moves by at most 1 and the replaced record's own (capped) count by at most t.

Never materialises an n x n matrix (counting balls dominates the 1-cluster cost: minutes at
n = 1e5, d = 10 with a plain implementation). Counts are capped at t, so:
- a row stops being counted at larger radii once it reaches t;
- once t rows are capped, L(r) = t for every larger radius (no further work);
- the brute-force path only extracts the pairs within a scheduled radius r_stop (sparse for
  background rows), guessed from a data-independent subset of rows and verified exactly.
Low dimensions (d <= 2) use a KD-tree (scipy ``cKDTree`` radius counts); higher ones chunked
BLAS distances ||a||^2 + ||b||^2 - 2 a.b.

Privacy of the float arithmetic. The sensitivity argument needs every pair's "within r" decision
to depend on that pair of records and on public values only. So with the public box
``bounds`` = (lo, hi) the brute path centres the records on the box midpoint (never on the data's
mean) and compares squared distances with r^2 + tau, where the tolerance tau
(:func:`count_tolerance`) is a worst-case bound on the rounding error of the computation over the
box (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 2002, Sec. 3.1: a sum of m
products is off by at most gamma_m = m u / (1 - m u) times the sum of their absolute values,
u = 2^-53), never a function of the data. The KD-tree path uses the same tolerance (radius
sqrt(r^2 + tau)). On the grid lo + grid_step * Z^d the true squared distances and the squared
radii grid_step^2 4^j are all multiples of grid_step^2, so when grid_step >= :func:`min_grid_step`
(grid_step^2 >= 4 tau) both paths return the exact counts of the grid points.
"""

import math

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
    return float(np.partition(values, n - t)[n - t :].sum()) / t


_U = 2.0**-53  # unit round-off of float64


def _box(lo, hi, d=None):
    """(lo, hi) as finite float (d,) arrays with hi >= lo; d from the arrays when not given."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if d is None:
        if lo.ndim == 0 and hi.ndim == 0:
            raise ValueError("d is required when both bounds are scalars")
        d = max(lo.size if lo.ndim else 1, hi.size if hi.ndim else 1)
    try:
        lo = np.broadcast_to(lo, (d,)).astype(np.float64)
        hi = np.broadcast_to(hi, (d,)).astype(np.float64)
    except ValueError:
        raise ValueError(f"bounds must be (lower, upper) scalars or length-{d} arrays") from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi >= lo)):
        raise ValueError("bounds must be finite with upper >= lower in every coordinate")
    return lo, hi


def _gamma(m):
    """Higham's gamma_m = m u / (1 - m u): relative error bound of an m-term float sum of products."""
    return m * _U / (1.0 - m * _U)


def count_tolerance(lo, hi, d=None):
    """Public tolerance tau on squared distances for ball counts of records in the box [lo, hi].

    Bounds the rounding error of every comparison ||a - b||^2 <= r^2 made by
    :func:`capped_top_means` (with r <= the box's diameter D): records centred on the box midpoint
    (|a|, |b| <= D/2), squared norms and the dot product are d-term sums of products
    (Higham 2002, Sec. 3.1) and three more additions follow, so the computed comparison is off by at
    most (gamma_{d+4} + 2u) D^2 (the last 2u D^2 for centring); a grid point lo + k h is stored
    within 3u max(|lo|, |hi|) per coordinate of its exact value, which moves a squared distance by
    at most 12 u D ||max(|lo|, |hi|)||. tau is the sum: a function of the public box only.
    ``lo``, ``hi``: scalars or length-d arrays (``d`` required when both are scalars).
    """
    lo, hi = _box(lo, hi, d)
    d = lo.shape[0]
    diam = float(np.linalg.norm(hi - lo))
    mag = float(np.linalg.norm(np.maximum(np.abs(lo), np.abs(hi))))
    return (_gamma(d + 4) + 2.0 * _U) * diam * diam + 12.0 * _U * diam * mag


def min_grid_step(lo, hi, d=None):
    """Smallest public grid step at which ball counts on the box [lo, hi] are exact in float64.

    On the grid lo + h Z^d, squared distances and the squared grid radii (h 2^j)^2 are multiples
    of h^2, so a pair at squared distance r^2 + h^2 must never pass r^2 + tau: with the rounding
    error also at most tau (:func:`count_tolerance`) this needs h^2 > 2 tau; we require
    h^2 >= 4 tau (a factor 2 margin), i.e. h >= 2 sqrt(tau). For the unit cube in d = 3 this is
    about 1.7e-7 (roughly D sqrt(d u) in general: it grows with the dimension).
    """
    return 2.0 * math.sqrt(count_tolerance(lo, hi, d))


def check_grid_step(grid_step, lo, hi, d=None):
    """Return ``grid_step`` as a float after checking it is finite and >= :func:`min_grid_step`.

    Raises ValueError naming ``grid_step`` (a parameter check: call it before any charge).
    """
    try:
        step = float(grid_step)
    except (TypeError, ValueError):
        raise ValueError(f"grid_step must be a positive number, got {grid_step!r}") from None
    if isinstance(grid_step, bool) or not math.isfinite(step) or step <= 0:
        raise ValueError(f"grid_step must be a finite number > 0, got {grid_step!r}")
    floor = min_grid_step(lo, hi, d)
    if step < floor:
        raise ValueError(
            f"grid_step={grid_step!r} is below min_grid_step={floor:.3g} for this box: "
            "float64 distance comparisons cannot resolve radii that fine (the ball "
            "counts would not be exact); use a larger grid_step"
        )
    return step


def capped_top_means(X, radii, t, method="auto", bounds=None):
    """L(r) for every r in ``radii`` (ascending), plus the count of rows capped at each radius.

    Returns ``(L, n_capped)``: float array and int array of len(radii). ``method`` is "auto"
    (KD-tree when d <= 2 or when ``bounds`` is None, else chunked brute force), "kdtree" or
    "brute". ``bounds`` = (lo, hi) is the public box: the records are clipped to it (per record)
    and the comparisons use the public tolerance of :func:`count_tolerance` (see the module
    docstring). The brute path needs ``bounds`` (its centring and tolerance come from the box).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 3.1 and 4.1 (the count profile L(r)).
    """
    X = np.asarray(X, dtype=np.float64)
    radii = np.asarray(radii, dtype=np.float64)
    if radii.ndim != 1 or np.any(np.diff(radii) <= 0):
        raise ValueError("radii must be a strictly increasing 1-D array")
    if X.ndim != 2:
        raise ValueError(f"X must have shape (n_samples, n_features), got {X.shape}")
    n, d = X.shape
    if method not in ("auto", "kdtree", "brute"):
        raise ValueError(f"method must be 'auto', 'kdtree' or 'brute', got {method!r}")
    if method == "brute" and bounds is None:
        raise ValueError(
            "bounds (the public box) is required for method='brute': its centring "
            "and tolerance must come from public values, never from the data"
        )
    if method == "auto":
        method = "kdtree" if d <= 2 or bounds is None else "brute"
    tau = 0.0
    if bounds is not None:
        lo, hi = _box(bounds[0], bounds[1], d)
        tau = count_tolerance(lo, hi)
        X = np.clip(X, lo, hi)
    if n == 0:
        return np.zeros(len(radii)), np.zeros(len(radii), dtype=np.int64)
    if method == "kdtree":
        counts = _counts_kdtree(X, np.sqrt(radii**2 + tau) if tau else radii, t)
    else:
        counts = _counts_brute(X, radii, t, lo, hi, tau)
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


def _counts_brute(X, radii, t, box_lo, box_hi, tau):
    """Chunked-distance version of :func:`_counts_kdtree` (same output contract).

    Rows are centred on the public box midpoint; squared radii are capped at the box's squared
    diameter (every pair of the box is within it) and widened by the public tolerance ``tau``.
    """
    n = X.shape[0]
    K = len(radii)
    Xc = X - (box_lo + box_hi) / 2.0  # public shift: each pair's comparison involves only that pair
    sq = np.einsum("ij,ij->i", Xc, Xc)
    diam2 = float(np.sum((box_hi - box_lo) ** 2))
    r2 = np.minimum(radii**2, diam2) + tau
    # a pair passes a comparison only if its true distance is <= sqrt(r2 + tau); its computed
    # projections on a unit vector are each within gamma_d D / 2 of the true ones
    reach_slack = (tau, 2.0 * _gamma(X.shape[1]) * math.sqrt(diam2))
    counts = np.full((n, K), t, dtype=np.int64)
    k_stop = _schedule(Xc, sq, r2, t)
    rows = np.arange(n)
    lo = 0
    while lo < K:
        hi = k_stop + 1
        _fill_chunks(Xc, sq, r2, t, rows, lo, hi, counts, reach_slack)
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


def _fill_chunks(Xc, sq, r2, t, rows, lo, hi, counts, reach_slack):
    """Exact capped counts for ``rows`` at radius indices lo..hi-1, one chunk of rows at a time.

    Rows and columns are sorted by their projection on a fixed unit direction u; since
    |u.(x - y)| <= ||x - y||, a chunk only needs the columns whose projection lies within
    the reach of r[hi-1] (``reach_slack``: tolerance and projection round-off) of the chunk's
    projections (a contiguous slice). Per chunk: one comparison pass
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
    reach = math.sqrt(r2[hi - 1] + reach_slack[0]) * (1 + 1e-12) + reach_slack[1]
    for s in range(0, rows.size, step):
        block = rows[s : s + step]
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
            inner = np.minimum(np.searchsorted(r2[lo : j + 1], vals, side="left"), width - 1)
            hist = np.bincount(r_idx * width + inner, minlength=block.size * width)
            c[:, :width] = np.cumsum(hist.reshape(block.size, width), axis=1)
        counts[block, lo:hi] = np.minimum(c, t)
