"""Argument checks shared by the privacy primitives (eps > 0 finite, 0 <= delta < 1:
the ranges in which an (eps, delta) guarantee means anything)."""

import numpy as np


def real_scalar(value, name):
    """``value`` as a float if it is a real scalar (Python, numpy or 0-d array); TypeError otherwise."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number, got {value!r}")
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(arr)


def check_epsilon(epsilon, name="epsilon", allow_zero=False):
    """Return ``epsilon`` as a float after checking it is a finite number > 0 (>= 0 if allowed)."""
    value = real_scalar(epsilon, name)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(
            f"{name} must be finite and {'>=' if allow_zero else '>'} 0, got {epsilon!r}"
        )
    return value


def check_delta(delta, name="delta", positive=False):
    """Return ``delta`` as a float after checking 0 <= delta < 1 (0 < delta if ``positive``)."""
    value = real_scalar(delta, name)
    if not (0.0 <= value < 1.0) or (positive and value == 0.0):
        bound = "0 < delta < 1" if positive else "0 <= delta < 1"
        raise ValueError(f"{name} must satisfy {bound}, got {delta!r}")
    return value


def check_sensitivity(sensitivity, name="sensitivity"):
    """Return ``sensitivity`` as a float after checking it is finite and >= 0."""
    value = real_scalar(sensitivity, name)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {sensitivity!r}")
    return value


def check_rng(rng):
    """Require an explicit ``numpy.random.Generator`` (never the global numpy state).

    Integers are refused on purpose: re-seeding every call would reuse the same noise for
    different releases, and the difference of two such releases is noise-free.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (use "
            f"privclust.core.privacy.as_generator(random_state)), got {type(rng).__name__}"
        )
    return rng


def check_size(size):
    """Return the batch shape prefix: () for ``size=None``, (size,) for a positive integer."""
    if size is None:
        return ()
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be None or a positive integer, got {size!r}")
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size!r}")
    return (int(size),)


def as_float_array(value, name="value"):
    """Float64 array of ``value``, refusing NaN/inf (a non-finite input is a privacy bug)."""
    if value is None:
        raise TypeError(f"{name} must be numeric, got None")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def check_box(bounds, n_features, name="bounds", contains="the data"):
    """(lo, hi) float64 arrays of length ``n_features`` from a public box ``bounds`` = (lower,
    upper), each a scalar or a length-``n_features`` array; finite with lower < upper on every
    axis. ``contains`` says what the box must hold, for the message when it is missing: the box
    is a public parameter and is never computed from the data."""
    if bounds is None:
        raise ValueError(
            f"{name} is a required public parameter: give the box (lower, upper) "
            f"that contains {contains}; it is never computed from the data"
        )
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_features,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_features,)).copy()
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (lower, upper) of scalars or length-{n_features} arrays"
        ) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name} must be finite")
    if np.any(hi <= lo):
        raise ValueError(f"{name} must satisfy lower < upper in every coordinate")
    return lo, hi
