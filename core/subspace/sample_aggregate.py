"""Sample-and-aggregate subspace clustering with smooth sensitivity (seed 001 Alg. 1; spec 2.3, A1).

Each of m disjoint (or sampled) subsets is clustered by a non-private solver f; each solution is
the unordered set of k projectors, vectorised as upper triangles with off-diagonal entries
scaled by sqrt(2) (Euclidean norm = Frobenius norm; D = k d(d+1)/2), compared by the Wasserstein
distance d_W. The centre-of-attention output g(B) plus Gaussian noise scaled by a beta-smooth
bound S(B) (NRS07) is (epsilon, delta)-DP under replace-one neighbours; the noisy blocks are
released in random order and projected back to q-dimensional subspaces.
"""
import math
import numbers
import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.base import BaseEstimator

from ..data import clip_l2
from ..privacy import (BudgetAccountant, PrivacyWarning, as_generator, charge, haar_stiefel,
                       smooth_sensitivity_gaussian, smooth_sensitivity_parameters)
from .projection import check_data
from .smooth_bound import centre_index, smooth_bound
from .solvers import make_solver


def projector_vectors(bases):
    """(..., k, d, q) bases -> (..., k, d(d+1)/2) upper-triangle projector vectors (off-diagonal
    entries times sqrt(2), so the Euclidean norm equals the Frobenius norm)."""
    d = bases.shape[-2]
    P = np.einsum("...dq,...eq->...de", bases, bases)
    iu = np.triu_indices(d)
    scale = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    return P[..., iu[0], iu[1]] * scale


def vectors_to_bases(vecs, d, q):
    """Inverse map for noisy vectors (k, d(d+1)/2): symmetric matrix, top-q eigenvectors."""
    iu = np.triu_indices(d)
    scale = np.where(iu[0] == iu[1], 1.0, 1.0 / math.sqrt(2.0))
    P = np.zeros((len(vecs), d, d))
    P[:, iu[0], iu[1]] = vecs * scale
    P = P + P.transpose(0, 2, 1) - P * np.eye(d)          # mirror; the diagonal was set once
    _, V = np.linalg.eigh(P)
    return V[:, :, ::-1][:, :, :q].copy()


def wasserstein_matrix(solutions):
    """m x m Wasserstein distances between m solutions (m, k, d, q): one batched k x k cost
    tensor, then one Hungarian solve per pair."""
    m, k, d, q = solutions.shape
    cross = np.einsum("iadq,jbdr->ijabqr", solutions, solutions)
    cost = np.maximum(2.0 * q - 2.0 * np.einsum("ijabqr,ijabqr->ijab", cross, cross), 0.0)
    dist = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            rows, cols = linear_sum_assignment(cost[i, j])
            dist[i, j] = dist[j, i] = math.sqrt(cost[i, j][rows, cols].sum())
    return dist


def subsets(n, m, s, method, rng, max_draws=1000):
    """m index sets of size floor(n/m): a random partition, or independent uniform draws without
    replacement redrawn until no record is in more than s of them (data-independent)."""
    size = n // m
    if method == "partition":
        return rng.permutation(n)[:m * size].reshape(m, size)
    if method != "independent":
        raise ValueError(f"subsampling must be 'partition' or 'independent'; got {method!r}")
    for _ in range(max_draws):
        idx = np.argsort(rng.random((m, n)), axis=1)[:, :size]
        if np.bincount(idx.ravel(), minlength=n).max() <= s:
            return idx
    raise RuntimeError(f"could not draw {m} subsets with every record in at most {s} of them")


def noisy_release(g, bound, epsilon, delta, rng, size=None):
    """Alg. 1's output g + (S/alpha) N(0, I_D) (NRS07 via the privacy module); ``size=N`` gives
    N independent releases (batched form for audits). The epsilon > 1 PrivacyWarning is raised
    by the estimator (once per fit), not here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return smooth_sensitivity_gaussian(g, bound, epsilon, delta, rng, size=size)


class SampleAggregateSubspaceClustering(BaseEstimator):
    """Sample-and-aggregate subspace clustering (seed 001 Alg. 1; spec 2.3).

    Parameters: ``solver`` ("tsc", "ssc", "lrr", "kplanes" or an estimator setting
    ``subspaces_``), ``n_subsets`` m (default max(4, floor(n/(10kq)))), ``delta`` (default
    1/(n ln n)), ``subsampling`` ("partition" default, or "independent" as in Alg. 1),
    ``smooth_bound`` ("order_stat": derived beta-smooth bound, default; "nrs_mean": the formula as
    stated by WWS15, unverified). The whole (epsilon, delta) is spent by the single Gaussian
    release; the ledger is charged before anything runs. Records are clipped to the unit ball.

    Warnings (PrivacyWarning, also listed in ``privacy_.warnings``): epsilon > 1 (the NRS07
    calibration is proven for small epsilon), and epsilon < 4(D + ln(2/delta))/sqrt(m) (then the
    noise is enormous: floor(s/beta) >= m).

    Attributes: ``subspaces_`` (k, d, q) (blocks in random order), ``privacy_``, and
    ``diagnostics_`` (EVALUATION ONLY, data-dependent, not private: the smooth bound, noise
    scale, centre index, m, s, t0, D).
    """

    def __init__(self, n_clusters=3, subspace_dim=1, epsilon=1.0, delta=None, solver="ssc",
                 n_subsets=None, subsampling="partition", smooth_bound="order_stat",
                 ledger=None, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.n_subsets = n_subsets
        self.subsampling = subsampling
        self.smooth_bound = smooth_bound
        self.ledger = ledger
        self.random_state = random_state

    def _configure(self, n, d):
        k, q = self.n_clusters, self.subspace_dim
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (
                math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0; got {eps!r}")
        delta = 1.0 / (n * math.log(n)) if self.delta is None else self.delta
        if not 0 < delta < 1:
            raise ValueError(f"delta must satisfy 0 < delta < 1; got {delta!r}")
        m = max(4, n // (10 * k * q)) if self.n_subsets is None else self.n_subsets
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 2:
            raise ValueError(f"n_subsets must be an integer >= 2; got {m!r}")
        if n // m < k:
            raise ValueError(f"n_subsets={m} leaves fewer than n_clusters={k} points per subset "
                             f"(n_samples={n})")
        if self.smooth_bound not in ("order_stat", "nrs_mean"):
            raise ValueError("smooth_bound must be 'order_stat' or 'nrs_mean'; "
                             f"got {self.smooth_bound!r}")
        return float(eps), float(delta), int(m)

    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        n, d = X.shape
        k, q = self.n_clusters, self.subspace_dim
        eps, delta, m = self._configure(n, d)
        s = math.ceil(math.sqrt(m))
        D = k * d * (d + 1) // 2
        alpha, beta = smooth_sensitivity_parameters(eps, delta, D)
        diameter = math.sqrt(2 * k * min(q, d - q))
        warns = []
        if delta > 1.0 / n:
            warns.append(f"delta={delta:g} exceeds 1/n")
        if eps > 1:
            warns.append("epsilon > 1 is outside the proven range of the smooth-sensitivity "
                         "calibration (NRS07, P10)")
        if eps < 4 * (D + math.log(2 / delta)) / math.sqrt(m):
            warns.append(f"epsilon={eps:g} is too small for m={m} subsets "
                         f"(< 4(D + ln(2/delta))/sqrt(m) = "
                         f"{4 * (D + math.log(2 / delta)) / math.sqrt(m):.3g}): the noise is "
                         "of the order of the output diameter")
        for w in warns:
            warnings.warn(w, PrivacyWarning, stacklevel=2)
        charge(self.ledger, eps, delta,
               what=f"SampleAggregateSubspaceClustering(k={k}, q={q}, solver={self.solver!r}, "
                    f"m={m}, epsilon={eps}, delta={delta:g})")
        acct = BudgetAccountant(eps, delta)
        rng = as_generator(self.random_state)
        X = clip_l2(X, 1.0)
        idx = subsets(n, m, s, self.subsampling, rng)
        sols = np.empty((m, k, d, q))
        for i in range(m):
            est = make_solver(self.solver, k, q, random_state=rng).fit(X[idx[i]])
            sols[i] = self._k_subspaces(est, d, q, k, rng)
        dist = wasserstein_matrix(sols)
        i_star, t0 = centre_index(dist, s, diameter)
        S = smooth_bound(dist, s, beta, diameter, method=self.smooth_bound)
        order = rng.permutation(k)
        g = projector_vectors(sols[i_star][order]).ravel()
        acct.spend("Gaussian noise scaled by a smooth sensitivity bound (NRS07)", eps, delta, S)
        noisy = noisy_release(g, S, eps, delta, rng)
        self.subspaces_ = vectors_to_bases(noisy.reshape(k, -1), d, q)
        self.privacy_ = acct.guarantee("approx", "replace", warns)
        self.diagnostics_ = {"smooth_bound": S, "noise_scale": S / alpha, "centre_index": i_star,
                             "n_subsets": m, "s": s, "t0": t0, "dim": D, "beta": beta,
                             "alpha": alpha, "evaluation_only": True}
        return self

    @staticmethod
    def _k_subspaces(est, d, q, k, rng):
        """The solver's (k, d, q) bases, padded with Haar subspaces if it returned fewer."""
        U = np.asarray(getattr(est, "subspaces_", np.empty((0, d, q))), dtype=float)
        if U.ndim != 3 or U.shape[1:] != (d, q) or len(U) > k:
            raise ValueError(f"solver returned subspaces_ of shape {U.shape}; expected "
                             f"(<= {k}, {d}, {q})")
        if len(U) < k:
            U = np.concatenate([U, haar_stiefel(d, q, rng, size=k - len(U))])
        return U
