"""Sparse subspace clustering by ADMM (Elhamifar & Vidal 2013; spec 2.2 S3). NONPRIVATE.

Solves min_C ||C||_1 + (lam/2)||Y - YC||_F^2 s.t. diag(C) = 0, Y = X^T (d x n). The A-update's
system (lam Y^T Y + rho I) has rank-d structure, so it is solved through the Woodbury identity
with a d x d Cholesky factor: O(n^2 d) per iteration instead of O(n^3). The n x n coefficient
matrix is inherent to SSC; use it on subsets (sample-and-aggregate) or moderate n.
"""
import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClusterMixin

from ..privacy import as_generator
from .projection import check_data, fit_subspaces, single_threaded, spectral_labels
from .tsc import top_correlations


def ssc_coefficients(X, alpha=20.0, rho=None, tol=2e-4, max_iter=200):
    """ADMM for the noisy SSC program; returns (C (n x n), n_iter)."""
    Y = X.T
    n = Y.shape[1]
    _, top = top_correlations(X, 1)
    mu_z = float(top.min())
    if mu_z <= 0:
        raise ValueError("SSC needs every point to have a non-orthogonal neighbour (mu_z = 0)")
    lam = alpha / mu_z
    rho = alpha if rho is None else float(rho)
    factor = cho_factor(rho * np.eye(Y.shape[0]) + lam * (Y @ Y.T))
    P = lam * (Y.T @ cho_solve(factor, Y))          # (lam G + rho I)^{-1} lam G

    def solve(R):                                     # (lam G + rho I)^{-1} R
        return (R - lam * (Y.T @ cho_solve(factor, Y @ R))) / rho

    C = np.zeros((n, n))
    Delta = np.zeros((n, n))
    A_prev = np.zeros((n, n))
    it = 0
    for it in range(1, int(max_iter) + 1):
        A = P + solve(rho * C - Delta)
        J = A + Delta / rho
        J = np.sign(J) * np.maximum(np.abs(J) - 1.0 / rho, 0.0)
        np.fill_diagonal(J, 0.0)
        C = J
        Delta += rho * (A - C)
        if np.abs(A - C).max() < tol and np.abs(A - A_prev).max() < tol:
            break
        A_prev = A
    return C, it


class SparseSubspaceClustering(ClusterMixin, BaseEstimator):
    """SSC: sparse self-representation (ADMM), affinity |C| + |C|^T with columns scaled by
    their max, then spectral clustering. Defaults (spec 2.2): alpha = 20, lam = alpha/mu_z,
    rho = alpha, tol = 2e-4, max_iter = 200.

    Attributes: ``labels_``, ``subspaces_`` (k, d, q), ``affinity_matrix_`` (n x n),
    ``n_iter_``.
    """

    def __init__(self, n_clusters=3, subspace_dim=1, alpha=20.0, tol=2e-4, max_iter=200,
                 random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        if len(X) < 2:
            raise ValueError("SSC needs at least 2 samples")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0; got {self.alpha!r}")
        rng = as_generator(self.random_state)
        C, self.n_iter_ = ssc_coefficients(X, self.alpha, tol=self.tol, max_iter=self.max_iter)
        C = np.abs(C)
        C /= np.maximum(C.max(axis=0, keepdims=True), 1e-300)
        W = C + C.T
        self.affinity_matrix_ = W
        self.labels_ = spectral_labels(W, self.n_clusters, rng)
        self.subspaces_ = fit_subspaces(X, self.labels_, self.subspace_dim,
                                        n_clusters=self.n_clusters, random_state=rng)
        return self
