"""SuLQ k-plane baseline: the SuLQ framework of Blum, Dwork, McSherry & Nissim (PODS 2005)
applied to k-plane clustering, the baseline of Wang, Wang & Singh (NIPS 2015, App. E; their
description is short, this is a reconstruction). Approximate DP.

k-plane iterations in which the only data access is a Gaussian-noised release of the per-cluster
scatter matrices A_l = sum_{z_i = l} x_i x_i^T (records clipped to the unit ball). The labels z
are computed from the previous released subspaces and never released.
"""

import math
import warnings

import numpy as np

from .._threads import single_threaded
from ..constraints import POSITIVE_DELTA, POSITIVE_INT, RELATION, StrOptions
from ..data import clip_l2
from ..estimator import (
    PrivateEstimator,
    check_choice,
    check_positive_int,
    default_delta,
    epsilon_param,
)
from ..privacy import (
    BudgetAccountant,
    PrivacyWarning,
    analytic_gaussian_sigma,
    gaussian,
    haar_stiefel,
)
from .projection import squared_residuals

ACCOUNTING = ("basic", "zcdp")


def cluster_scatter(X, labels, k):
    """(k, d, d) scatter matrices A_l = sum_{labels_i = l} x_i x_i^T (one matmul, no loop)."""
    onehot = (labels[None, :] == np.arange(k)[:, None]).astype(float)  # (k, n)
    d = X.shape[1]
    outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), d * d)
    return (onehot @ outer).reshape(k, d, d)


def scatter_sensitivity(neighbouring):
    """L2 (Frobenius) sensitivity of the concatenation (A_1..A_k) for unit-ball records:
    sqrt(2) under replace-one (||xx^T||_F <= 1 each, and the two terms may sit in different
    clusters), 1 under add/remove.

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, App. E.
    """
    if neighbouring == "replace":
        return math.sqrt(2.0)
    if neighbouring == "add_remove":
        return 1.0
    raise NotImplementedError(
        f"neighbouring={neighbouring!r} is not supported by SuLQ (use 'replace' or 'add_remove')"
    )


def noisy_scatter(A, sensitivity, rng, epsilon=None, delta=None, sigma=None, size=None):
    """Release symmetric matrices A (k, d, d): the upper triangles (diagonal included) get i.i.d.
    Gaussian noise and are mirrored (the upper-triangle L2 sensitivity is at most the Frobenius
    one). Noise: the analytic Gaussian mechanism for (epsilon, delta) through the privacy module,
    or a given ``sigma`` (zCDP accounting). ``size=N`` prepends a batch axis (audits).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018.
    """
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
    """The largest rho with rho + 2 sqrt(rho ln(1/delta)) <= epsilon (zCDP to (eps, delta)).

    References
    ----------
    Bun, M. and Steinke, T. (2016). Concentrated differential privacy: simplifications,
        extensions, and lower bounds. TCC 2016, Prop. 1.3.
    """
    L = math.log(1.0 / delta)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


def _round_name(t, zcdp_sigma):
    return f"Gaussian scatter matrices, round {t + 1}" + (
        " (zCDP share)" if zcdp_sigma is not None else ""
    )


class SuLQSubspaceClustering(PrivateEstimator):
    """SuLQ k-plane (Blum, Dwork, McSherry & Nissim, PODS 2005, applied to k-plane as in Wang,
    Wang & Singh, NIPS 2015, App. E): Haar start, then ``n_iter`` rounds of (nearest-subspace
    labels, noisy per-cluster scatter matrices, top-q eigenvectors).

    Parameters
    ----------
    n_clusters : int, default=3
        Number of subspaces k.
    subspace_dim : int, default=1
        Dimension q of every subspace.
    epsilon : float, default=1.0
        Total privacy parameter over the ``n_iter`` rounds.
    delta : float or None, default=None
        Total delta; None means 1/(n ln n), allowed only under "replace" (see Notes).
    n_iter : int, default=10
        Rounds T; each releases k noisy scatter matrices.
    neighbouring : {"replace", "add_remove"}, default="replace"
        Neighbouring relation: L2 sensitivity of the stacked scatter matrices sqrt(2) under
        replace-one, 1 under add/remove (records in the unit ball).
    accounting : {"basic", "zcdp"}, default="basic"
        Composition over the rounds (see Notes).
    ledger : Ledger or None, default=None
        Budget ledger charged before the records are read.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the Haar start and the noise.

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        Released orthonormal bases after the last round. Released.
    noise_scale_ : float
        The per-round sigma, a function of the public plan (epsilon, delta, T, the relation and
        the accounting). Released.
    privacy_ : Guarantee
        (epsilon, delta)-DP under ``neighbouring``. The labels are never released.

    Notes
    -----
    Privacy: (epsilon, delta)-DP under ``neighbouring`` ("replace", default: Delta_2 = sqrt(2);
    or "add_remove": Delta_2 = 1). ``accounting="basic"``: each round is the analytic Gaussian
    mechanism with (epsilon/T, delta/T). ``accounting="zcdp"``: each round is a Gaussian with
    rho/T zCDP, rho the largest value with rho + 2 sqrt(rho ln(1/delta)) <= epsilon (less noise
    for large T).

    ``delta=None`` means 1/(n ln n), which needs the number of records n: allowed only under
    "replace", where n is public. Under "add_remove" n is private (a delta derived from it would
    publish n in ``privacy_``, ``noise_scale_`` and the ledger), so ``delta=None`` raises
    ValueError before anything is charged or read: pass an explicit delta.

    Every parameter is checked from the parameters and the public shape, then ``ledger`` is
    charged, then the records are read (base class
    :class:`~privclust.core.estimator.PrivateEstimator`).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 5 and App. E (the SuLQ k-plane baseline; App. E is reconstructed here,
        see docs/algorithms.md, section 3).
    Bun, M. and Steinke, T. (2016). Concentrated differential privacy: simplifications,
        extensions, and lower bounds. TCC 2016, Prop. 1.3 (zCDP to (epsilon, delta)).
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018.

    Examples
    --------
    >>> from privclust.core import SuLQSubspaceClustering
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=1000, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.05, random_state=0)
    >>> est = SuLQSubspaceClustering(n_clusters=2, subspace_dim=1, epsilon=1.0, delta=1e-5, n_iter=5,
    ...                              random_state=0).fit(data.X)
    >>> est.subspaces_.shape
    (2, 4, 1)
    >>> print(est.privacy_.summary())
    (1.0, 1.0000000000000003e-05)-DP, approximate, replace-one neighbours
    """

    _released = ("subspaces_", "noise_scale_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "delta": [None, POSITIVE_DELTA],
        "n_iter": [POSITIVE_INT],
        "neighbouring": [RELATION],
        "accounting": [StrOptions(set(ACCOUNTING))],
    }

    def __init__(
        self,
        n_clusters=3,
        subspace_dim=1,
        epsilon=1.0,
        delta=None,
        n_iter=10,
        neighbouring="replace",
        accounting="basic",
        ledger=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.neighbouring = neighbouring
        self.accounting = accounting
        self.ledger = ledger
        self.random_state = random_state

    def _settings(self, n_samples, n_features):
        """(k, q, T, epsilon, delta, sensitivity, zcdp_sigma, noise_scale) from the parameters
        and the public shape (``n_samples`` is None when n is private)."""
        sens = scatter_sensitivity(self.neighbouring)
        k = check_positive_int(self.n_clusters, "n_clusters")
        q = check_positive_int(self.subspace_dim, "subspace_dim")
        if n_features is not None and not q < n_features:
            raise ValueError(
                f"subspace_dim must be an integer with 1 <= subspace_dim < "
                f"n_features={n_features}; got {self.subspace_dim!r}"
            )
        if n_samples is not None and k > n_samples:
            raise ValueError(f"n_clusters={k} exceeds n_samples={n_samples}")
        T = check_positive_int(self.n_iter, "n_iter")
        eps = epsilon_param(self.epsilon)
        delta = default_delta(self.delta, n_samples)
        check_choice(self.accounting, "accounting", ACCOUNTING)
        if self.accounting == "zcdp":
            sigma = sens / math.sqrt(2.0 * zcdp_rho(eps, delta) / T)
            return k, q, T, eps, delta, sens, sigma, sigma
        return k, q, T, eps, delta, sens, None, analytic_gaussian_sigma(eps / T, delta / T, sens)

    def _warnings(self, n_samples, delta):
        """Notes of the guarantee; from the parameters and the public n only (no comparison
        with n under add/remove, where n is private)."""
        warns = []
        if n_samples is not None and delta > 1.0 / n_samples:
            warns.append(f"delta={delta:g} exceeds 1/n")
        if self.accounting == "zcdp":
            warns.append(
                "rounds composed by zCDP: per-round (epsilon/T, delta/T) are shares, "
                "not separate guarantees"
            )
        return warns

    def _plan(self, n_samples, n_features):
        _, _, T, eps, delta, sens, sigma, _ = self._settings(n_samples, n_features)
        acct = BudgetAccountant(eps, delta)
        for t in range(T):
            acct.spend(_round_name(t, sigma), eps / T, delta / T, sens)
        return acct.guarantee("approx", self.neighbouring, self._warnings(n_samples, delta))

    @single_threaded
    def _fit(self, X, rng):
        n, d = X.shape
        n_public = None if self.neighbouring_relation() == "add_remove" else n
        k, q, T, eps, delta, sens, sigma, scale = self._settings(n_public, d)
        warns = self._warnings(n_public, delta)
        for w in warns:
            if w.startswith("delta="):
                warnings.warn(w, PrivacyWarning, stacklevel=4)
        acct = BudgetAccountant(eps, delta)
        X = clip_l2(X, 1.0)
        U = haar_stiefel(d, q, rng, size=k)
        for t in range(T):
            labels = np.argmin(squared_residuals(X, U), axis=1)
            A = cluster_scatter(X, labels, k)
            acct.spend(_round_name(t, sigma), eps / T, delta / T, sens)
            noisy = noisy_scatter(A, sens, rng, eps / T, delta / T, sigma=sigma)
            U = np.linalg.eigh(noisy)[1][:, :, ::-1][:, :, :q].copy()
        self.subspaces_ = U
        self.noise_scale_ = scale
        self.privacy_ = acct.guarantee("approx", self.neighbouring, warns)
        self.n_features_in_ = d
