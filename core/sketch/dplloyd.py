"""DPLloyd baselines of Schellekens et al., SPARS 2019, Fig. 1 (Sec. III, its refs [10], [11]):
SuLQ k-means (Blum, Dwork, McSherry & Nissim, PODS 2005, as described by Su, Cao, Li, Bertino &
Jin, CODASPY 2016) and the "improved" variant (sphere-packing init + count/sum budget split,
Su et al. 2016).  Pure epsilon-DP; ``add_remove`` by default (``replace`` doubles sensitivities).
"""
import numpy as np
from ..data import clip_box
from ..privacy import BudgetAccountant, as_generator
from ..privacy.estimator import (CenterPredictorMixin, PrivateEstimator, check_choice,
                                 check_positive_int, epsilon_param)
from .frequencies import _as_bounds

INITS = ("uniform", "sphere_packing")
RHO = 0.225                      # Su et al. 2016 (budget-split constant)
_CHUNK_ELEMENTS = 1 << 20


def sum_sensitivity(lo, hi):
    """L1 sensitivity of one cluster's coordinate sum under add/remove: sum_i max(|lo_i|, |hi_i|).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    """
    return float(np.sum(np.maximum(np.abs(lo), np.abs(hi))))


def noise_scales(epsilon, n_iter, lo, hi, init, neighbouring):
    """Laplace scales (count, sum) per iteration and the per-iteration spends (Su et al. 2016;
    the split ratio re-derived by us from their MSE argument: minimise d^3/eps_s^2 + d rho/eps_c^2).

    SuLQ k-means ("uniform"): one scale b = T (1 + S) / eps for counts and sums (joint L1 sensitivity
    1 + S). Improved ("sphere_packing"): eps_t = eps / T split as eps_s / eps_c = (d^2 / rho)^(1/3);
    counts Lap(1/eps_c), sums Lap(S/eps_s).  ``replace`` doubles both sensitivities.
    Returns (b_count, b_sum, [(name, epsilon, sensitivity), ...] for one iteration).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    See docs/algorithms.md, section 4 (the re-derived split).
    """
    factor = 2.0 if neighbouring == "replace" else 1.0
    s = sum_sensitivity(lo, hi)
    eps_t = epsilon / n_iter
    if init == "uniform":
        sens = factor * (1.0 + s)
        b = sens / eps_t
        return b, b, [("counts+sums Laplace", eps_t, sens)]
    ratio = (len(lo) ** 2 / RHO) ** (1.0 / 3.0)
    eps_c = eps_t / (1.0 + ratio)
    eps_s = eps_t - eps_c
    return (factor / eps_c, factor * s / eps_s,
            [("counts Laplace", eps_c, factor), ("sums Laplace", eps_s, factor * s)])


def sphere_packing_init(n_clusters, lo, hi, rng, max_rejections=100):
    """Data-independent sphere-packing centres (Su et al., CODASPY 2016).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    """
    a = float(np.min(hi - lo)) / 2.0
    while True:
        centers, rejections = [], 0
        while len(centers) < n_clusters and rejections < max_rejections:
            cand = rng.uniform(lo + a, hi - a)
            if all(np.linalg.norm(cand - c) >= 2.0 * a for c in centers):
                centers.append(cand)
                rejections = 0
            else:
                rejections += 1
        if len(centers) == n_clusters:
            return np.array(centers)
        a /= 2.0


def _cluster_stats(X, centers):
    """Counts (N, k) and coordinate sums (N, k, d) of the nearest-centre partition, for N
    centre sets at once, in row chunks."""
    n_runs, k, d = centers.shape
    counts, sums = np.zeros((n_runs, k)), np.zeros((n_runs, k, d))
    c_sq = np.einsum("nkd,nkd->nk", centers, centers)[:, None, :]
    rows = max(1, _CHUNK_ELEMENTS // (n_runs * k))
    eye = np.eye(k)
    for start in range(0, X.shape[0], rows):
        xc = X[start:start + rows]
        dist = c_sq - 2.0 * np.matmul(xc, centers.transpose(0, 2, 1))      # (N, c, k)
        onehot = eye[np.argmin(dist, axis=2)]                               # (N, c, k)
        counts += onehot.sum(axis=1)
        sums += np.matmul(onehot.transpose(0, 2, 1), xc)
    return counts, sums


def dplloyd_runs(X, n_clusters, epsilon, bounds, n_iter=5, init="uniform",
                 neighbouring="add_remove", random_state=None, size=None, initial_centers=None,
                 accountant=None):
    """Run DPLloyd ``size`` times independently (batched form for audits); returns centres
    (k, d), or (size, k, d).  X is clipped to the public box first (per record, so it costs no
    privacy).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if neighbouring not in ("add_remove", "replace"):
        raise NotImplementedError(f"neighbouring must be 'add_remove' or 'replace', got {neighbouring!r}")
    rng = as_generator(random_state)
    X = np.asarray(X, dtype=float)
    lo, hi = _as_bounds(bounds, X.shape[1])
    X = clip_box(X, lo, hi)
    n_runs = 1 if size is None else int(size)
    k, d = int(n_clusters), X.shape[1]
    b_count, b_sum, spends = noise_scales(epsilon, n_iter, lo, hi, init, neighbouring)
    if initial_centers is not None:
        centers = np.broadcast_to(np.asarray(initial_centers, dtype=float), (n_runs, k, d)).copy()
    elif init == "uniform":
        centers = rng.uniform(lo, hi, size=(n_runs, k, d))
    else:
        centers = np.stack([sphere_packing_init(k, lo, hi, rng) for _ in range(n_runs)])
    for t in range(int(n_iter)):
        if accountant is not None:
            for name, eps, sens in spends:
                accountant.spend(f"DPLloyd iteration {t + 1}: {name}", eps, 0.0, sens)
        counts, sums = _cluster_stats(X, centers)
        counts = counts + rng.laplace(0.0, b_count, size=counts.shape)
        sums = sums + rng.laplace(0.0, b_sum, size=sums.shape)
        ok = counts >= 1.0
        means = clip_box((sums / np.where(ok, counts, 1.0)[..., None]).reshape(-1, d), lo, hi)
        centers = np.where(ok[..., None], means.reshape(n_runs, k, d), centers)
    return centers[0] if size is None else centers


class DPLloyd(CenterPredictorMixin, PrivateEstimator):
    """DPLloyd (SuLQ k-means, Blum et al. 2005) with ``init="uniform"`` or the "improved"
    variant of Su et al. 2016 with ``init="sphere_packing"`` (sphere-packing init and
    count/sum budget split), the baselines of Schellekens et al., SPARS 2019, Fig. 1.

    Each of the ``n_iter`` rounds releases, per cluster, a Laplace-noised count and a noised sum of
    the records assigned to the current centres, and moves each centre to sum / count (clipped to
    the box).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centres k.
    epsilon : float, default=1.0
        Total privacy parameter, split evenly over the ``n_iter`` rounds; within a round the
        uniform variant uses one joint Laplace scale for counts and sums, the improved one
        splits eps_t between them (:func:`noise_scales`, docs/algorithms.md, section 4).
    bounds : (lo, hi)
        Public box, scalars or length-d arrays; required. The data are clipped to it and the
        sensitivity of the sums follows from it.
    n_iter : int, default=5
        Rounds T.
    init : {"uniform", "sphere_packing"}, default="uniform"
        Data-independent initial centres: uniform in the box, or the sphere packing of Su et al.
    neighbouring : {"add_remove", "replace"}, default="add_remove"
        Neighbouring relation of the noisy counts and sums.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the initial centres and the noise.
    ledger : Ledger or None, default=None
        Budget ledger charged before the records are read.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Released centres. Released.
    privacy_ : Guarantee
        Pure epsilon-DP under ``neighbouring``.

    Notes
    -----
    No per-record labels are released, so there is no ``fit_predict``; ``predict`` assigns new
    rows to the released centres (post-processing).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (DPLloyd, the improved initialisation and budget split).
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019,
        Sec. III, Fig. 1 (the baselines).
    """

    _released = ("cluster_centers_",)

    def __init__(self, n_clusters=8, epsilon=1.0, bounds=None, n_iter=5, init="uniform",
                 neighbouring="add_remove", random_state=None, ledger=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_iter = n_iter
        self.init = init
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _plan(self, n_samples, n_features):
        check_positive_int(self.n_clusters, "n_clusters")
        n_iter = check_positive_int(self.n_iter, "n_iter")
        check_choice(self.init, "init", INITS)
        if self.neighbouring not in ("add_remove", "replace"):
            raise NotImplementedError(f"neighbouring must be 'add_remove' or 'replace', got {self.neighbouring!r}")
        eps = epsilon_param(self.epsilon)
        if n_features is None:
            raise ValueError("DPLloyd's plan needs n_features (the public box has one side per feature)")
        lo, hi = _as_bounds(self.bounds, n_features)
        acc = BudgetAccountant(eps)
        for t in range(n_iter):
            for name, e, sens in noise_scales(eps, n_iter, lo, hi, self.init, self.neighbouring)[2]:
                acc.spend(f"DPLloyd iteration {t + 1}: {name}", e, 0.0, sens)
        return acc.guarantee("pure", self.neighbouring)

    def _fit(self, X, rng):
        acc = BudgetAccountant(self.epsilon)
        self.cluster_centers_ = dplloyd_runs(X, self.n_clusters, self.epsilon, self.bounds,
                                             self.n_iter, self.init, self.neighbouring, rng,
                                             accountant=acc)
        self.privacy_ = acc.guarantee("pure", self.neighbouring)
        self.n_features_in_ = X.shape[1]

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        each iteration's counts and sums are partition sums, noised once here
        (:func:`~privclust.core.sketch.partitioned.dplloyd_partitioned`)."""
        from .partitioned import dplloyd_partitioned
        acc = BudgetAccountant(self.epsilon)
        self.cluster_centers_ = dplloyd_partitioned(parts, self.n_clusters, self.epsilon,
                                                    self.bounds, self.n_iter, self.init,
                                                    self.neighbouring, rng, accountant=acc)
        self.privacy_ = acc.guarantee("pure", self.neighbouring)
        self.n_features_in_ = parts.n_features
