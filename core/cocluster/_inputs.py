"""Input checks for the co-clustering estimators.

Battaglia & Pensa, SDM 2025, Secs. 3.2 and 4.1: A is a non-negative (count) matrix. All-zero rows and columns (not
discussed there) are legal: their utilities are 0 for every prototype, so DP-tauCC draws them
uniformly and Fast-tauCC puts them in cluster 0.
"""

import numbers

import numpy as np
import scipy.sparse as sp

from ..data import check_counts


def check_n_clusters(value, name, limit, axis):
    """An integer >= 2 and <= the number of rows/columns it partitions."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 2:
        raise ValueError(f"{name} must be at least 2, got {value}")
    if value > limit:
        raise ValueError(f"{name}={value} is larger than the number of {axis} ({limit})")
    return int(value)


def check_count_matrix(X, name="X"):
    """Validate a non-negative count matrix and return (A, A^T) as float64.

    Sparse input becomes CSR (A^T is a CSR copy, still sparse); dense input stays dense.
    Negative or non-finite entries raise ValueError, non-integer entries warn (``check_counts``).
    All-zero rows and columns are allowed.
    """
    if sp.issparse(X):
        A = sp.csr_array(X, dtype=np.float64)
        A.sum_duplicates()
    else:
        if not hasattr(X, "shape"):
            X = np.asarray(X)
        if np.asarray(X).dtype == object:
            raise TypeError(f"{name} must be a numeric matrix, got dtype object")
        A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2 or min(A.shape) < 1:
        raise ValueError(f"{name} must be a non-empty 2-D matrix, got shape {A.shape}")
    check_counts(A, name=name)
    AT = A.T.tocsr() if sp.issparse(A) else A.T
    return A, AT


def clip_row_sums(A, row_cap, name="X"):
    """Clip every row of the count matrix ``A`` to integer counts summing to at most ``row_cap``.

    Per record and deterministic: a row whose sum s exceeds L = ``row_cap`` is scaled by L / s
    and floored entry-wise (so it keeps its proportions, rounded down, and sums to at most L);
    other rows are unchanged. Two clipped rows then differ in at most 2L units in total, which
    is what lets a cell-level release be charged on a record-level ledger (group privacy; see
    :mod:`privclust.core.privacy.accounting.relations`). ``A``: a finite float64 matrix (ndarray or
    scipy.sparse CSR); every entry is first projected per record onto the count domain
    (negative entries become 0, non-integer ones are floored), so no finite input fails after a
    charge. Returns a new matrix of the same kind; ``A`` is not modified.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 2.2 (group privacy of a capped row).
    See docs/algorithms.md, section 1.
    """
    L = float(row_cap)
    if sp.issparse(A):
        out = sp.csr_array(A, dtype=np.float64, copy=True)
        out.sum_duplicates()
        rows = np.repeat(np.arange(out.shape[0]), np.diff(out.indptr))
        vals, cols = out.data, out.indices
    else:
        out = np.array(A, dtype=np.float64)
        rows, cols = np.nonzero(out)
        vals = out[rows, cols]
    vals = np.floor(np.maximum(vals, 0.0))
    n = out.shape[0]
    for attempt in range(4):
        sums = np.bincount(rows, weights=vals, minlength=n)
        over = sums > L
        if not over.any():
            break
        # (1 - 2^-40) after the first pass only guards against float rounding of the scale
        scale = L / np.where(over, sums, 1.0) * (1.0 if attempt == 0 else 1.0 - 2.0**-40)
        vals = np.where(over[rows], np.floor(vals * scale[rows]), vals)
    else:
        raise RuntimeError("clip_row_sums: rows still above row_cap after clipping (a bug)")
    if sp.issparse(out):
        out.data = vals
        out.eliminate_zeros()
    else:
        out[rows, cols] = vals
    return out
