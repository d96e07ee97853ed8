"""The de-normalised Goodman-Kruskal tau quantities used by Fast-tauCC and DP-tauCC.

[BP25] = Battaglia & Pensa, SDM 2025, Sec. 4.1, Eq. (4.9) (Eq. (3.5) of Sec. 3.2 for
Fast-tauCC): the similarity of an object with aggregated profile y (y_l = sum of its entries in
feature cluster l) to prototype k of a table T is
``sigma(y, t_k) = sum_l y_l * B_kl`` with ``B_kl = t_kl / t_.l - t_k. / T_tot`` (t_kl / t_.l := 0
when t_.l = 0, our convention where the paper divides by zero: a feature cluster with no mass
in the table carries no evidence). The same weights serve Fast-tauCC (on the exact table) and
DP-tauCC (on the noisy one). All functions accept leading batch axes (independent runs).
"""

import numpy as np


def prototype_weights(table):
    """B_kl = t_kl / t_.l - t_k. / T_tot for a (..., K, L) table (0 where a sum is 0).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1, Eq. (4.9).
    Goodman, L. A. and Kruskal, W. H. (1954). Measures of association for cross
        classifications. J. Am. Stat. Assoc. 49(268), 732-764.
    """
    T = np.asarray(table, dtype=np.float64)
    col = T.sum(axis=-2, keepdims=True)
    row = T.sum(axis=-1, keepdims=True)
    total = row.sum(axis=-2, keepdims=True)
    ratio = np.divide(T, col, out=np.zeros_like(T), where=col > 0)
    share = np.divide(row, total, out=np.zeros_like(row), where=total > 0)
    return ratio - share


def utility_range(weights, proto_alive=None, feature_alive=None):
    """Range sensitivity of sigma under a unit change of one cell, [BP25] Sec. 4.1,
    Eq. (4.10).

    ``max_l (max_k B_kl - min_k B_kl)`` over the live prototypes k and live feature clusters l
    (masks of shape (..., K) and (..., L); dead slots are clusters already deleted). A unit change
    of a_uv adds B_{k, l(v)} to object u's utility for every k, so the utilities of u move by a
    vector whose range is at most this value. Returns an array of shape (...).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1, Eq. (4.10).
    """
    B = np.asarray(weights, dtype=np.float64)
    K, L = B.shape[-2:]
    pk = np.ones(B.shape[:-1], bool) if proto_alive is None else np.asarray(proto_alive, bool)
    if feature_alive is None:
        fl = np.ones(B.shape[:-2] + (L,), bool)
    else:
        fl = np.asarray(feature_alive, bool)
    hi = np.where(pk[..., :, None], B, -np.inf).max(axis=-2)
    lo = np.where(pk[..., :, None], B, np.inf).min(axis=-2)
    spread = np.where(fl, hi - lo, 0.0)
    return spread.max(axis=-1)
