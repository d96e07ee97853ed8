"""k-plane clustering (Bradley & Mangasarian 2000). NONPRIVATE."""

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import validate_data

from .._threads import single_threaded
from ..constraints import POSITIVE_INT, RANDOM_STATES
from ..privacy import as_generator, haar_stiefel
from .projection import check_data, fit_subspaces, squared_residuals


class KPlanes(ClusterMixin, BaseEstimator):
    """k-plane clustering (Bradley & Mangasarian 2000): a local method.

    Alternates nearest-subspace assignment and per-cluster top-q eigenvectors (Lloyd-type
    iterations on the subspace cost sum_i min_l d^2(x_i, S_l)). Each iteration cannot increase
    the cost, so it converges, but only to a local minimum that depends on the start: each of
    the ``n_init`` restarts begins from k Haar-random subspaces and iterates until the labels
    stop changing (at most ``max_iter``), and the restart with the lowest cost is kept. On data
    whose subspaces are close or far apart in scale (faces) it can stay far from the best
    clustering; the self-expressive methods (SSC, LRR) do not depend on a start.

    Parameters
    ----------
    n_clusters, subspace_dim : int
        k and q.
    n_init : int
        Random restarts (default 10).
    max_iter : int
        Iteration cap per restart (default 100).
    random_state : None, int or Generator

    Attributes
    ----------
    labels_ (n,), subspaces_ (k, d, q), cost_ (mean squared residual of the kept restart).

    References
    ----------
    P. S. Bradley and O. L. Mangasarian, "k-plane clustering", J. Global Optim. 16, 2000.

    Examples
    --------
    >>> from privclust.core import KPlanes
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=300, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.01, random_state=0)
    >>> est = KPlanes(n_clusters=2, subspace_dim=1, random_state=0).fit(data.X)
    >>> est.subspaces_.shape, est.labels_.shape
    ((2, 4, 1), (300,))
    """

    _parameter_constraints = {
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "n_init": [POSITIVE_INT],
        "max_iter": [POSITIVE_INT],
        "random_state": RANDOM_STATES,
    }

    def __init__(self, n_clusters=3, subspace_dim=1, n_init=10, max_iter=100, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        self._validate_params()
        X = check_data(validate_data(self, X, dtype=np.float64), self.n_clusters, self.subspace_dim)
        rng = as_generator(self.random_state)
        k, q = self.n_clusters, self.subspace_dim
        best = None
        for _ in range(int(self.n_init)):
            bases = haar_stiefel(X.shape[1], q, rng, size=k)
            labels = None
            for _ in range(int(self.max_iter)):
                new = np.argmin(squared_residuals(X, bases), axis=1)
                if labels is not None and np.array_equal(new, labels):
                    break
                labels = new
                bases = fit_subspaces(X, labels, q, n_clusters=k, random_state=rng)
            res = squared_residuals(X, bases)
            cost = float(res.min(axis=1).mean())
            if best is None or cost < best[0]:
                best = (cost, np.argmin(res, axis=1), bases)
        self.cost_, self.labels_, self.subspaces_ = best
        return self
