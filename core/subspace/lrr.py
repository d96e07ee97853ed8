"""Low-rank representation by inexact ALM (Liu et al. 2013; spec 2.2 S4). NONPRIVATE.

Solves min ||Z||_* + lam ||E||_{2,1} s.t. Y = YZ + E (Y = X^T, d x n). The minimiser lies in the
row space of Y (Liu et al. 2013, Thm 4.3), so, as in the authors' code, we write Z = Q Z~ with Q an
orthonormal basis (n x r) of that row space and run the ALM of spec 2.2 on the dictionary
A = YQ (d x r): the singular-value thresholding acts on r x n matrices (r <= d) instead of
n x n, and ||Q Z~||_* = ||Z~||_*.
"""
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..privacy import as_generator
from .projection import check_data, fit_subspaces, single_threaded, spectral_labels


def lrr_coefficients(X, lam=0.1, tol=1e-8, max_iter=1000, rho=1.1, mu=1e-6, mu_max=1e10):
    """Inexact ALM for LRR; returns (Z (n x n), n_iter)."""
    Y = X.T
    Uq, sq, _ = np.linalg.svd(X, full_matrices=False)      # X = Uq diag(sq) V^T, Uq: n x d
    r = int(np.sum(sq > sq[0] * 1e-10)) if sq[0] > 0 else 0
    if r == 0:
        return np.zeros((len(X), len(X))), 0
    Q = Uq[:, :r]
    A = Y @ Q                                               # d x r
    n = Y.shape[1]
    inv = np.linalg.inv(np.eye(r) + A.T @ A)
    AtY = A.T @ Y
    Z = np.zeros((r, n))
    J = np.zeros((r, n))
    E = np.zeros_like(Y)
    Y1 = np.zeros_like(Y)
    Y2 = np.zeros((r, n))
    it = 0
    for it in range(1, int(max_iter) + 1):
        U, s, Vt = np.linalg.svd(Z + Y2 / mu, full_matrices=False)
        s = np.maximum(s - 1.0 / mu, 0.0)
        J = (U * s) @ Vt
        Z = inv @ (AtY - A.T @ E + J + (A.T @ Y1 - Y2) / mu)
        G = Y - A @ Z + Y1 / mu
        gn = np.linalg.norm(G, axis=0)
        E = G * np.maximum(0.0, 1.0 - (lam / mu) / np.maximum(gn, 1e-300))
        R1 = Y - A @ Z - E
        R2 = Z - J
        Y1 += mu * R1
        Y2 += mu * R2
        mu = min(rho * mu, mu_max)
        if np.abs(R1).max() < tol and np.abs(R2).max() < tol:
            break
    return Q @ Z, it


class LowRankRepresentation(ClusterMixin, BaseEstimator):
    """LRR: low-rank self-representation (inexact ALM), affinity |Z| + |Z|^T, then spectral
    clustering. ``lam`` defaults to 0.1 (spec 2.2; tune per dataset).

    Attributes: ``labels_``, ``subspaces_`` (k, d, q), ``affinity_matrix_``, ``n_iter_``.
    """

    def __init__(self, n_clusters=3, subspace_dim=1, lam=0.1, tol=1e-8, max_iter=1000,
                 random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0; got {self.lam!r}")
        rng = as_generator(self.random_state)
        Z, self.n_iter_ = lrr_coefficients(X, self.lam, self.tol, self.max_iter)
        W = np.abs(Z)
        W = W + W.T
        self.affinity_matrix_ = W
        self.labels_ = spectral_labels(W, self.n_clusters, rng)
        self.subspaces_ = fit_subspaces(X, self.labels_, self.subspace_dim,
                                        n_clusters=self.n_clusters, random_state=rng)
        return self
