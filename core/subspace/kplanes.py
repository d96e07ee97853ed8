"""k-plane clustering (Bradley & Mangasarian 2000; spec 2.2 S5). NONPRIVATE."""
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..privacy import as_generator, haar_stiefel
from .projection import check_data, fit_subspaces, single_threaded, squared_residuals


class KPlanes(ClusterMixin, BaseEstimator):
    """Alternate nearest-subspace assignment and per-cluster top-q eigenvectors.

    Each restart starts from k Haar-random subspaces and iterates until the labels stop changing
    (at most ``max_iter``); the restart with the lowest subspace cost (seed 001 Eq. 3) is kept.
    Not private: a reference solver and an optional ``f`` for sample-and-aggregate.

    Attributes: ``labels_`` (n,), ``subspaces_`` (k, d, q), ``cost_`` (mean squared residual).
    """

    def __init__(self, n_clusters=3, subspace_dim=1, n_init=10, max_iter=100, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        if int(self.n_init) < 1 or int(self.max_iter) < 1:
            raise ValueError("n_init and max_iter must be >= 1")
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
