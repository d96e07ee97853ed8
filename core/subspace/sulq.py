"""SuLQ k-plane baseline (seed 001 App. E, not recovered; spec 2.5 reconstruction). APPROX.

k-plane iterations in which the only data access is a Gaussian-noised release of the per-cluster
scatter matrices A_l = sum_{z_i = l} x_i x_i^T (records clipped to the unit ball). The labels z
are computed from the previous released subspaces and never released.
"""
import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from ..data import clip_l2
from ..privacy import (BudgetAccountant, PrivacyWarning, analytic_gaussian_sigma, as_generator,
                       charge, gaussian, haar_stiefel)
from .projection import check_data, single_threaded, squared_residuals


def cluster_scatter(X, labels, k):
    """(k, d, d) scatter matrices A_l = sum_{labels_i = l} x_i x_i^T (one matmul, no loop)."""
    onehot = (labels[None, :] == np.arange(k)[:, None]).astype(float)          # (k, n)
    d = X.shape[1]
    outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), d * d)
    return (onehot @ outer).reshape(k, d, d)


def scatter_sensitivity(neighbouring):
    """L2 (Frobenius) sensitivity of the concatenation (A_1..A_k) for unit-ball records:
    sqrt(2) under replace-one (||xx^T||_F <= 1 each), 1 under add/remove (spec 2.5)."""
    if neighbouring == "replace":
        return math.sqrt(2.0)
    if neighbouring == "add_remove":
        return 1.0
    raise NotImplementedError(f"neighbouring={neighbouring!r} is not supported by SuLQ "
                              "(use 'replace' or 'add_remove')")


def noisy_scatter(A, sensitivity, rng, epsilon=None, delta=None, sigma=None, size=None):
    """Release symmetric matrices A (k, d, d): the upper triangles (diagonal included) get i.i.d.
    Gaussian noise and are mirrored (the upper-triangle L2 sensitivity is at most the Frobenius
    one). Noise: the analytic Gaussian mechanism for (epsilon, delta) through the privacy module,
    or a given ``sigma`` (zCDP accounting). ``size=N`` prepends a batch axis (audits)."""
    k, d, _ = A.shape
    iu = np.triu_indices(d)
    upper = A[:, iu[0], iu[1]]
    if sigma is None:
        noisy = gaussian(upper, sensitivity, epsilon, delta, rng, size=size)
    else:
        shape = (() if size is None else (size,)) + upper.shape
        noisy = upper + sigma * rng.standard_normal(shape)
    out = np.zeros(noisy.shape[:-1] + (d, d))
    out[..., iu[0], iu[1]] = noisy
    return out + np.swapaxes(out, -1, -2) * (1.0 - np.eye(d))


def zcdp_rho(epsilon, delta):
    """The largest rho with rho + 2 sqrt(rho ln(1/delta)) <= epsilon (zCDP to (eps, delta))."""
    L = math.log(1.0 / delta)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


class SuLQSubspaceClustering(BaseEstimator):
    """SuLQ k-plane (spec 2.5): Haar start, then ``n_iter`` rounds of (nearest-subspace labels,
    noisy per-cluster scatter matrices, top-q eigenvectors).

    Privacy: (epsilon, delta)-DP under ``neighbouring`` ("replace", default: Delta_2 = sqrt(2);
    or "add_remove": Delta_2 = 1). ``accounting="basic"``: each round is the analytic Gaussian
    mechanism with (epsilon/T, delta/T). ``accounting="zcdp"``: each round is a Gaussian with
    rho/T zCDP, rho the largest value with rho + 2 sqrt(rho ln(1/delta)) <= epsilon (less noise
    for large T). ``delta`` defaults to 1/(n ln n). The ledger is charged before the first round.

    Attributes: ``subspaces_`` (k, d, q), ``privacy_``, ``noise_scale_`` (per-round sigma).
    """

    def __init__(self, n_clusters=3, subspace_dim=1, epsilon=1.0, delta=None, n_iter=10,
                 neighbouring="replace", accounting="basic", ledger=None, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.neighbouring = neighbouring
        self.accounting = accounting
        self.ledger = ledger
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        n, d = X.shape
        k, q, T = self.n_clusters, self.subspace_dim, self.n_iter
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (
                math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0; got {eps!r}")
        delta = 1.0 / (n * math.log(n)) if self.delta is None else self.delta
        if not 0 < delta < 1:
            raise ValueError(f"delta must satisfy 0 < delta < 1; got {delta!r}")
        if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 1:
            raise ValueError(f"n_iter must be a positive integer; got {T!r}")
        if self.accounting not in ("basic", "zcdp"):
            raise ValueError(f"accounting must be 'basic' or 'zcdp'; got {self.accounting!r}")
        sens = scatter_sensitivity(self.neighbouring)
        eps, delta = float(eps), float(delta)
        charge(self.ledger, eps, delta,
               what=f"SuLQSubspaceClustering(k={k}, q={q}, T={T}, epsilon={eps}, "
                    f"delta={delta:g}, accounting={self.accounting})")
        acct = BudgetAccountant(eps, delta)
        rng = as_generator(self.random_state)
        X = clip_l2(X, 1.0)
        sigma = None
        if self.accounting == "zcdp":
            sigma = sens / math.sqrt(2.0 * zcdp_rho(eps, delta) / T)
        U = haar_stiefel(d, q, rng, size=k)
        for t in range(T):
            labels = np.argmin(squared_residuals(X, U), axis=1)
            A = cluster_scatter(X, labels, k)
            acct.spend(f"Gaussian scatter matrices, round {t + 1}"
                       + (" (zCDP share)" if sigma is not None else ""), eps / T, delta / T, sens)
            noisy = noisy_scatter(A, sens, rng, eps / T, delta / T, sigma=sigma)
            U = np.linalg.eigh(noisy)[1][:, :, ::-1][:, :, :q].copy()
        self.subspaces_ = U
        self.noise_scale_ = sigma if sigma is not None else analytic_gaussian_sigma(
            eps / T, delta / T, sens)
        warns = [] if delta <= 1.0 / n else [f"delta={delta:g} exceeds 1/n"]
        for w in warns:
            warnings.warn(w, PrivacyWarning, stacklevel=2)
        if self.accounting == "zcdp":
            warns.append("rounds composed by zCDP: per-round (epsilon/T, delta/T) are shares, "
                         "not separate guarantees")
        self.privacy_ = acct.guarantee("approx", self.neighbouring, warns)
        return self
