"""Input checks for the co-clustering estimators (spec 5.1, P9 ``check_nonneg_integer``, 6.1).

Seed 004 Sec. 3.2 / 4.1: A is a non-negative (count) matrix. All-zero rows and columns (not
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
