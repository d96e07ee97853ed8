"""Centre-of-attention aggregator and its smooth sensitivity bound (Wang, Wang & Singh, NIPS 2015,
Alg. 1; Nissim, Raskhodnikova & Smith, STOC 2007, Sec. 4).

Inputs are the m x m matrix of pairwise distances between the m subset outputs (zero diagonal,
values in [0, diameter]). With s = ceil(sqrt(m)) (one record changes at most s outputs) and
t0 = ceil((m + s)/2) + 1, r_i(t) is the t-th smallest entry of row i counting the zero
self-distance (r_i(t) = diameter for t > m); the aggregate is the output i* = argmin_i r_i(t0)
(ties: lowest index).
"""

import math

import numpy as np


def order_statistics(dist, diameter):
    """Row-sorted distances with a column of ``diameter`` appended: r[i, t-1] = r_i(t), and
    r_i(t) = diameter for t > m is read as r[:, m]."""
    r = np.sort(np.asarray(dist, dtype=float), axis=1)
    return np.hstack([r, np.full((len(r), 1), float(diameter))])


def _r_at(r, t):
    """(m,) values r_i(t) (t 1-based; t > m gives the diameter)."""
    m = r.shape[0]
    return r[:, min(t, m + 1) - 1]


def centre_index(dist, s, diameter):
    """i* = argmin_i r_i(t0) and t0 (ties broken by the lowest index).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1 (centre of attention).
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 4.
    """
    m = len(dist)
    t0 = math.ceil((m + s) / 2) + 1
    r = order_statistics(dist, diameter)
    return int(np.argmin(_r_at(r, t0))), t0


def smooth_bound(dist, s, beta, diameter, method="order_stat"):
    """A beta-smooth upper bound S(B) on the local sensitivity of the centre of attention.

    ``method="order_stat"`` (default; our own bound, because the paper's formula could not be
    checked against NRS07): S = 2 max_{k>=0} e^{-beta k} R_k, with R_k the ((k+1)s+1)-th smallest
    of {r_i(t0 + (k+1)s)}_i (the diameter when that rank exceeds m). Why it is valid: two t0-balls
    intersect after <= s changed outputs since 2 t0 > m + s, so LS <= 2 r_(s+1)(t0 + s); after k s
    changes at least s+1 of the (k+1)s+1 smallest indices are unchanged and r_i(t; B'') <=
    r_i(t + ks; B) for them, so the sensitivity at distance k is <= 2 R_k; and R_k(B) <=
    R_{k+1}(B') for neighbours, which makes S beta-smooth and S >= LS.
    ``method="nrs_mean"`` (the formula as stated by Wang, Wang & Singh, NIPS 2015, Alg. 1, not
    re-verified against Nissim, Raskhodnikova & Smith 2007): S = 2 max_k e^{-beta k}
    rho(t0 + (k+1)s), rho(t) the mean of the smallest floor(s/beta) values of {r_i(t)} (at most m
    values; the paper's "top" read as "smallest", since the aggregator rewards dense outputs).
    The maximum runs over k = 0..K where K is the first k with a rank or t beyond m; later terms
    equal the diameter times a smaller factor.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1.
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 4.
    See docs/algorithms.md, section 3.
    """
    if method not in ("order_stat", "nrs_mean"):
        raise ValueError(f"smooth_bound must be 'order_stat' or 'nrs_mean'; got {method!r}")
    dist = np.asarray(dist, dtype=float)
    m = len(dist)
    s = int(s)
    t0 = math.ceil((m + s) / 2) + 1
    r = order_statistics(dist, diameter)
    n_mean = min(m, max(1, math.floor(s / beta)))
    best = 0.0
    for k in range(m + 2):
        t = t0 + (k + 1) * s
        vals = np.sort(_r_at(r, t))
        if method == "order_stat":
            rank = (k + 1) * s + 1
            R = diameter if rank > m or t > m else vals[rank - 1]
            last = rank > m or t > m
        else:
            R = vals[:n_mean].mean()
            last = t > m
        best = max(best, 2.0 * math.exp(-beta * k) * R)
        if last or 2.0 * math.exp(-beta * (k + 1)) * diameter < best:
            break
    return best
