"""Per-record input-domain enforcement.

Each transform acts on every record (row) independently, so it commutes with any neighbouring
relation and costs no privacy. The bounds (radius, box, grid step) are public parameters: they
are never computed from the data, and a missing bound raises ``ValueError`` naming it.
"""

import warnings

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivclustWarning


class DataWarning(PrivclustWarning):
    """Data is usable but not what the method assumes (e.g. non-integer counts)."""


def _positive(value, name):
    if value is None:
        raise ValueError(f"{name} is a required public bound; it is never computed from the data")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return value


def _float_rows(X, name="X"):
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array") from None
    if X.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be 1-D (one record) or 2-D (n_samples, n_features), got shape {X.shape}"
        )
    return X


def clip_l2(X, radius):
    """Scale each record to L2 norm at most ``radius``: x <- x * min(1, radius / ||x||).

    X is (n, d) or a single record (d,); returns a new float array. Zero rows stay zero.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2 (records in the unit ball).
    """
    radius = _positive(radius, "radius")
    X = _float_rows(X)
    # the norm of x / max|x_j| lies in [1, sqrt(d)]: no overflow (and so no warning that would
    # depend on a huge record's presence) for any finite record
    peak = np.max(np.abs(X), axis=-1, keepdims=True)
    safe = np.where(peak > 0, peak, 1.0)
    unit_norms = np.linalg.norm(X / safe, axis=-1, keepdims=True)
    scale = np.where(peak > 0, (radius / safe) / np.where(peak > 0, unit_norms, 1.0), np.inf)
    return X * np.minimum(scale, 1.0)


def clip_box(X, lower, upper):
    """Clip every coordinate into the public box [lower, upper] (scalars or length-d arrays).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (a public box).
    """
    if lower is None or upper is None:
        missing = "lower" if lower is None else "upper"
        raise ValueError(
            f"{missing} is a required public bound; it is never computed from the data"
        )
    X = _float_rows(X)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    d = X.shape[-1]
    for arr, name in ((lo, "lower"), (hi, "upper")):
        if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != d):
            raise ValueError(
                f"{name} must be a scalar or have length n_features={d}, got shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
    if np.any(lo > hi):
        raise ValueError("lower must be <= upper in every coordinate")
    return np.clip(X, lo, hi)


def quantize(X, step, offset=0.0):
    """Round every coordinate to the nearest point of the grid offset + step * Z^d.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 2 (a finite grid domain).
    """
    step = _positive(step, "step")
    X = _float_rows(X)
    return offset + np.round((X - offset) / step) * step


def check_counts(A, name="A"):
    """Validate a count matrix for co-clustering (Battaglia & Pensa, SDM 2025: non-negative counts).

    Raises ``ValueError`` if an entry is negative or non-finite (naming the first bad row and
    column, 1-based); warns :class:`DataWarning` if entries are not integers (the ``cell``
    neighbouring relation is then read as "one entry changes by at most 1"). Returns A unchanged.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.
    """
    if sp.issparse(A):
        coo = sp.coo_matrix(A)
        rows, cols, vals = coo.row, coo.col, np.asarray(coo.data)
        ndim = 2
    else:
        arr = np.asarray(A)
        ndim = arr.ndim
        if ndim == 2:
            if not np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
                raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
            rows, cols = np.nonzero(arr != 0)
            vals = arr[rows, cols]
    if ndim != 2:
        raise ValueError(f"{name} must be a 2-D count matrix, got {ndim} dimensions")
    vals = np.asarray(vals, dtype=np.float64)
    for bad, what in ((~np.isfinite(vals), "a non-finite value"), (vals < 0, "a negative count")):
        if np.any(bad):
            order = np.lexsort((cols[bad], rows[bad]))[0]
            i = np.flatnonzero(bad)[order]
            raise ValueError(
                f"{name} has {what} at row {rows[i] + 1}, column {cols[i] + 1}: "
                "counts must be non-negative finite numbers"
            )
    if np.any(vals != np.round(vals)):
        warnings.warn(
            f"{name} has non-integer entries; the 'cell' neighbouring relation then "
            "means one entry changes by at most 1",
            DataWarning,
            stacklevel=2,
        )
    return A


check_nonneg_integer = check_counts
