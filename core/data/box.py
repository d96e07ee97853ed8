"""Public boxes: checking a public range (:func:`check_outer_bounds`) and how well a box fits
the records (:func:`outside_share`, data owner only).

NOT PRIVATE. :func:`outside_share` reads every record and returns an exact count; it is meant
for the data owner's view (through :meth:`privclust.core.release.Curator.owner_evaluate`, which
marks its result NOT PRIVATE and never stores or releases it), e.g. to judge a box suggested by
:class:`privclust.core.bounds.PrivateBounds` before using it as the ``bounds`` of a
release. Never show its result to anyone who may not see the raw data.
"""

import numpy as np
import scipy.sparse as sp


def _box_sides(lower, upper, n_features):
    out = []
    for value, name in ((lower, "lower"), (upper, "upper")):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a number or a length-{n_features} array, got {value!r}"
            ) from None
        if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n_features):
            raise ValueError(
                f"{name} must be a number or have length n_features={n_features}, "
                f"got shape {arr.shape}"
            )
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
        out.append(np.broadcast_to(arr, (n_features,)))
    lo, hi = out
    if np.any(hi < lo):
        raise ValueError("the box must satisfy lower <= upper for every feature")
    return lo, hi


def outside_share(X, lower, upper, per_feature=False):
    """Share of records with at least one coordinate outside the box [lower, upper].

    NOT PRIVATE: an exact statistic of the raw records, for the data owner only (see the module
    docstring). Coordinates equal to a bound are inside; +-inf are outside; NaN is refused.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), scipy.sparse matrix or Dataset
        The records (a :class:`~privclust.core.data.Dataset` is read through ``.X``; sparse
        matrices are read without densifying: their implicit entries are zeros).
    lower, upper : float or array-like of shape (n_features,)
        The box, e.g. ``(release.lower_, release.upper_)`` of a PrivateBounds release.
    per_feature : bool, default=False
        Also return, per feature, the share of records outside [lower_j, upper_j].

    Returns
    -------
    float, or (float, ndarray of shape (n_features,)) when ``per_feature``
        The share of records (rows) that clipping to the box would change, and optionally the
        per-feature shares.
    """
    X = getattr(X, "X", X)  # a Dataset
    if sp.issparse(X):
        return _outside_share_sparse(sp.csr_matrix(X), lower, upper, per_feature)
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("X must be a numeric array (n_samples, n_features)") from None
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(
            f"X must be a non-empty 2-D array (n_samples, n_features), got shape {X.shape}"
        )
    if np.isnan(X).any():
        raise ValueError("X contains NaN: its position relative to the box is undefined")
    lo, hi = _box_sides(lower, upper, X.shape[1])
    out = (X < lo) | (X > hi)
    share = float(out.any(axis=1).mean())
    return (share, out.mean(axis=0)) if per_feature else share


def _outside_share_sparse(A, lower, upper, per_feature):
    n, d = A.shape
    if n < 1 or d < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {(n, d)}")
    if np.isnan(A.data).any():
        raise ValueError("X contains NaN: its position relative to the box is undefined")
    lo, hi = _box_sides(lower, upper, d)
    A = A.copy()
    A.sum_duplicates()
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    cols = A.indices
    explicit_out = (A.data < lo[cols]) | (A.data > hi[cols])
    zero_out = (lo > 0) | (hi < 0)  # columns where an implicit 0 is outside
    # a row is outside if one stored entry is, or if it has an implicit zero in a zero_out column
    row_out = np.zeros(n, dtype=bool)
    row_out[rows[explicit_out]] = True
    stored_in_zero_out = np.bincount(rows[zero_out[cols]], minlength=n)
    row_out |= stored_in_zero_out < int(zero_out.sum())
    share = float(row_out.mean())
    if not per_feature:
        return share
    stored_per_col = np.bincount(cols, minlength=d)
    out_per_col = np.bincount(cols[explicit_out], minlength=d) + np.where(
        zero_out, n - stored_per_col, 0
    )
    return share, out_per_col / n


def check_outer_bounds(outer_bounds, n_features, name="outer_bounds"):
    """The public outer range as two float arrays of length ``n_features``; ValueError naming
    ``name`` otherwise (never computed from the data)."""
    if outer_bounds is None:
        raise ValueError(
            f"{name} is required: give the public range (low, high) that the "
            "bounds are searched in (scalars or one value per feature); it is "
            "never read from the data"
        )
    if isinstance(outer_bounds, (str, bytes)):
        raise ValueError(f"{name} must be a pair (low, high), got {outer_bounds!r}")
    try:
        low, high = outer_bounds
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (low, high) of numbers or length-{n_features} "
            f"arrays, got {outer_bounds!r}"
        ) from None
    out = []
    for arr, side in ((low, "low"), (high, "high")):
        if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n_features):
            raise ValueError(
                f"{name}: {side} must be a number or have length "
                f"n_features={n_features}, got shape {arr.shape}"
            )
        out.append(np.broadcast_to(arr, (n_features,)).copy())
    low, high = out
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError(f"{name} must be finite")
    if np.any(high <= low):
        raise ValueError(f"{name} must satisfy low < high for every feature")
    with np.errstate(over="ignore"):
        if not np.all(np.isfinite(high - low)):
            raise ValueError(
                f"{name}: high - low must be a finite number for every feature "
                "(the width of the range overflows float64)"
            )
    return low, high
