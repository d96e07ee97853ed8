"""Non-private 2-approximate smallest ball holding t points: the reference radius r_opt of the
1-cluster problem (Nissim, Stemmer & Vadhan, PODS 2016, Def. 1.2 and 3.1) for our benchmarks (the
paper has no experiments).

Among balls centred at input points, the smallest radius holding t points is
r_2 = min_i d_(t)(x_i) (the t-th nearest distance, the point itself included), and
r_opt <= r_2 <= 2 r_opt (the optimal ball has diameter 2 r_opt and holds an input point).
NONPRIVATE: for evaluation and reference only.
"""

import numpy as np
from sklearn.base import BaseEstimator

_CHUNK_ENTRIES = 1 << 21


def smallest_ball_2approx(X, n_points):
    """Return ``(center, radius)`` of the best ball centred at an input point holding n_points.

    Chunked exact computation: O(n^2 d) time, O(n * chunk) memory (no n x n matrix).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 1.1 (r_opt, the radius the 1-cluster
        output is compared with).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    t = int(n_points)
    if not 1 <= t <= n:
        raise ValueError(f"n_points must be in [1, {n}], got {n_points!r}")
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    step = max(1, _CHUNK_ENTRIES // n)
    best_i, best_d2 = 0, np.inf
    for s in range(0, n, step):
        D2 = Xc[s : s + step] @ (-2.0 * Xc).T
        D2 += sq[None, :]
        D2 += sq[s : s + step, None]
        kth = np.partition(D2, t - 1, axis=1)[:, t - 1]
        i = int(np.argmin(kth))
        if kth[i] < best_d2:
            best_i, best_d2 = s + i, float(kth[i])
    return X[best_i].copy(), float(np.sqrt(max(best_d2, 0.0)))


class SmallestBall(BaseEstimator):
    """The non-private reference of the 1-cluster task: the smallest ball holding ``n_points``
    records, to within a factor of 2 (:func:`smallest_ball_2approx`). An estimator, so that the
    data owner's path of the release door can clone it.

    Parameters
    ----------
    n_points : int
        t, the number of records the ball holds.
    random_state : None
        Unused (the computation is deterministic); kept for the estimators' common interface.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 1.1.
    """

    def __init__(self, n_points, random_state=None):
        self.n_points = n_points
        self.random_state = random_state

    def fit(self, X, y=None):
        """Set ``center_`` and ``radius_``."""
        self.center_, self.radius_ = smallest_ball_2approx(X, self.n_points)
        return self
