"""Outlier screening with a released ball (Nissim, Stemmer & Vadhan, PODS 2016, Sec. 1.1): keep
the records inside it.

The predicate "x is inside B(center, radius)" uses only released values and acts on each record
alone, so filtering a dataset with it before another private analysis costs no extra privacy
(it is a per-record transform, like clipping). The downstream analysis must still be private
under the same neighbouring relation, and the number of kept records is NOT public: a
downstream mechanism must not treat it as a public n.
"""

import numpy as np

from .noisy_avg import ball_members


def inside_ball(X, center, radius):
    """Boolean mask: rows of X inside the closed ball B(center, radius)."""
    X = np.asarray(X, dtype=np.float64)
    center = np.asarray(center, dtype=np.float64)
    if X.ndim != 2 or center.shape != (X.shape[1],):
        raise ValueError(f"X must be (n, d) and center (d,), got {X.shape} and {center.shape}")
    if not np.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
    return ball_members(X, center, float(radius))


def screen_outliers(X, model):
    """Rows of X inside the ball released by a fitted :class:`OneCluster` (or any object with
    ``center_`` and ``radius_``).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 1.1 (removal of outliers).
    """
    return np.asarray(X)[inside_ball(X, model.center_, model.radius_)]
