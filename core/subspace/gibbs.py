"""Exponential-mechanism subspace clustering sampled by Gibbs (seed 001 Sec. 4.1; spec 2.4, A2-G).

Target (seed 001 Eq. 10): p(U, z; X) proportional to exp(-(eps/2) sum_i d^2(x_i, S_{z_i})) w.r.t.
(Haar)^k x counting measure, on records clipped to the unit ball. An exact sample is eps-DP under
replace-one neighbours (Prop. 4.1: d^2 in [0, 1]); the Markov chain reaches the target only in
the limit, so the guarantee is "asymptotic": there is no formal guarantee for a finite run.
"""
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

from ..data import clip_l2
from ..metrics import gibbs_test_statistic, split_rhat, subspace_cost, wasserstein_subspaces
from ..privacy import (BudgetAccountant, PrivacyWarning, as_generator, charge, gumbel_max,
                       haar_stiefel)
from .bingham import sample_vector_bingham
from .projection import check_data
from .solvers import make_solver

_CHUNK_FLOATS = 2_000_000      # rows per z-update chunk: about this many floats per temporary


def z_update(X, sq_norms, outer, U, kappa, rng):
    """Sample all labels of all chains from Eq. (11) by Gumbel-max and accumulate the scatter
    matrices A[c, l] = sum_{z_ci = l} x_i x_i^T. ``outer`` (n, d*d) holds the x_i x_i^T (or is
    None: computed per chunk). U: (C, k, d, q). Returns z (C, n), A (C, k, d, d), counts (C, k).
    Chunked over rows; no loop over points or chains."""
    C, k, d, q = U.shape
    n = len(X)
    W = U.transpose(2, 3, 0, 1).reshape(d, q * C * k)      # q is the slow axis of the product
    z = np.empty((C, n), dtype=np.int64)
    A = np.zeros((C * k, d * d))
    labels = np.arange(k)[None, :, None]
    step = max(1, _CHUNK_FLOATS // (C * k * max(q, d)))
    for start in range(0, n, step):
        Xc = X[start:start + step]
        m = len(Xc)
        P = Xc @ W
        proj2 = (P * P).reshape(m, q, C * k).sum(axis=1)
        logits = np.minimum(proj2 - sq_norms[start:start + m, None], 0.0).reshape(m, C, k)
        zc = gumbel_max(kappa * logits, rng).T                              # (C, m)
        z[:, start:start + m] = zc
        onehot = (zc[:, None, :] == labels).reshape(C * k, m).astype(float)
        oc = outer[start:start + m] if outer is not None else (
            Xc[:, :, None] * Xc[:, None, :]).reshape(m, d * d)
        A += onehot @ oc
    counts = np.bincount((z + k * np.arange(C)[:, None]).ravel(), minlength=C * k)
    return z, A.reshape(C, k, d, d), counts.reshape(C, k)


def u_update(U, A, counts, kappa, rng):
    """One column-wise Gibbs sweep (Hoff 2009) of every U[c, l] under the matrix Bingham
    exp(kappa tr(U^T A U)), batched over chains and clusters; each column is an exact
    vector-Bingham draw (ACG rejection) in the eigenbasis of N^T A N, N spanning the complement of
    the other columns. Empty clusters get a Haar basis. Returns the new U (C, k, d, q)."""
    C, k, d, q = U.shape
    B = C * k
    U = U.reshape(B, d, q).copy()
    A = A.reshape(B, d, d)
    eye = np.broadcast_to(np.eye(d), (B, d, d))
    for r in rng.permutation(q):
        if q == 1:
            N = eye
        else:
            others = np.delete(np.arange(q), r)
            N = np.linalg.qr(U[:, :, others], mode="complete")[0][:, :, q - 1:]   # (B, d, p)
        M = np.matmul(N.transpose(0, 2, 1), np.matmul(A, N))
        mu, V = np.linalg.eigh(0.5 * (M + M.transpose(0, 2, 1)))
        NV = np.matmul(N, V)                                                   # (B, d, p)
        y0 = np.einsum("bdp,bd->bp", NV, U[:, :, r])
        y = sample_vector_bingham(kappa * mu, rng, y0=y0)
        U[:, :, r] = np.einsum("bdp,bp->bd", NV, y)
    Q, R = np.linalg.qr(U)                                                     # drift control
    signs = np.sign(np.diagonal(R, axis1=1, axis2=2))
    U = Q * np.where(signs == 0, 1.0, signs)[:, None, :]
    empty = np.flatnonzero(counts.reshape(B) == 0)
    if empty.size:
        U[empty] = haar_stiefel(d, q, rng, size=empty.size)
    return U.reshape(C, k, d, q)


class GibbsSubspaceClustering(BaseEstimator):
    """Exponential-mechanism subspace clustering, sampled by a Gibbs chain (spec 2.4, A2-G).

    Each iteration samples all labels z from Eq. (11) (Gumbel-max, vectorised over points, chains
    and clusters) and then each basis U_l column by column from Eq. (12) with an exact
    angular-central-Gaussian vector-Bingham draw. The column sampler replaces the paper's
    unrecovered App. D.2 "modification" of Hoff's sampler (ours, not the authors').
    ``n_chains`` chains run together with batched linear algebra (one Generator for all chains).

    Privacy (``privacy_``): "asymptotic", replace-one neighbours. An exact sample of the target
    is ``epsilon``-DP; a finite run has no formal guarantee. Only one chain is released: chain 0
    (``release="first"``) or one drawn uniformly at random before sampling
    (``release="random"``, default); the choice never looks at the data (picking the lowest-cost
    chain would be a non-private selection). ``release="all"`` releases every chain
    (``chain_subspaces_``, ``chain_labels_``) and costs ``n_chains * epsilon``. Intermediate
    states are never released (each would cost epsilon). ``init="random"`` (default) is
    data-independent; ``init`` a solver name ("ssc", "lrr", "tsc", "kplanes") or a (k, d, q)
    array of bases starts from a (presumed) non-private solution on the same data:
    ``privacy_.kind`` is then "none" and a PrivacyWarning is raised (that reproduces
    "exp.+SSC/LRR" of seed 001 Fig. 2). The ledger is charged with the whole amount before
    sampling starts.

    Diagnostics (``trace_`` and the records yielded by :meth:`iter_fit`) are EVALUATION ONLY and
    never private: ``cost`` (seed 001 Eq. 3) and ``wasserstein`` (to ``reference``) read the raw
    data; ``test_statistic`` (seed 001 Sec. 5) and ``rhat`` summarise unreleased states of every
    chain. The test statistic tends to 0 because column sign flips average E[U] to 0, for a
    well-mixed chain and for a chain stuck in a k-plane-like local optimum alike, so it says
    little about mixing; the split R-hat of the cost across chains (``rhat``, needs >= 2 chains
    to be informative) does flag a stuck chain. Stopping a run early because of these
    diagnostics makes the stopping time data-dependent, which the guarantee does not cover.

    Attributes after fit: ``subspaces_`` (k, d, q) and ``labels_`` (n,) of the released chain,
    ``released_chain_``, ``n_iter_``, ``trace_`` (dict of arrays: ``iteration`` (R,),
    ``cost``/``test_statistic``/``wasserstein`` (R, n_chains), ``rhat`` (R,)), ``privacy_``.
    """

    def __init__(self, n_clusters=3, subspace_dim=1, epsilon=1.0, n_iter=1000, n_chains=4,
                 init="random", record_every=100, release="random", neighbouring="replace",
                 ledger=None, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.n_chains = n_chains
        self.init = init
        self.record_every = record_every
        self.release = release
        self.neighbouring = neighbouring
        self.ledger = ledger
        self.random_state = random_state

    def _check_params(self):
        for name in ("n_iter", "n_chains", "record_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (
                np.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon must be a finite number > 0; got {eps!r}")
        if self.release not in ("random", "first", "all"):
            raise ValueError(f"release must be 'random', 'first' or 'all'; got {self.release!r}")
        if self.neighbouring != "replace":
            raise NotImplementedError(
                "GibbsSubspaceClustering supports neighbouring='replace' only: under add/remove "
                "the output space (one label per record) changes with the data (spec 2.4)")
        if not isinstance(self.init, (str, np.ndarray)):
            raise ValueError(f"init must be 'random', a solver name or a (k, d, q) array of "
                             f"bases; got {self.init!r}")

    def _random_init(self):
        return isinstance(self.init, str) and self.init == "random"

    def _init_label(self):
        return repr(self.init) if isinstance(self.init, str) else "array"

    def _privacy(self):
        eps = float(self.epsilon)
        n_rel = self.n_chains if self.release == "all" else 1
        acct = BudgetAccountant(eps * n_rel, 0.0)
        for c in range(n_rel):
            acct.spend(f"exponential mechanism (Gibbs chain {c}, asymptotic)", eps, 0.0, 0.5)
        warns = ["asymptotic: an exact sample is epsilon-DP, a finite Gibbs run has no formal "
                 "guarantee"]
        if not self._random_init():
            warns.append(f"init={self._init_label()} is treated as a non-private solution on "
                         "the same data: the output is not private")
            return acct.guarantee("none", "replace", warns)
        return acct.guarantee("asymptotic", "replace", warns)

    def fit(self, X, y=None, reference=None):
        """Run all ``n_iter`` iterations (see :meth:`iter_fit`); returns self."""
        for _ in self.iter_fit(X, reference=reference):
            pass
        return self

    def iter_fit(self, X, reference=None):
        """Generator: run the chains and yield, every ``record_every`` iterations (and at the
        last), an evaluation-only record ``{"iteration", "cost", "test_statistic",
        "wasserstein", "rhat"}`` (per-chain arrays; ``wasserstein`` is None without
        ``reference`` (k, d, q)). Fitted attributes are updated before each yield, so a consumer
        may stop early and use the current state. BLAS is pinned to one thread while sampling.
        """
        self._check_params()
        X = check_data(X, self.n_clusters, self.subspace_dim)
        k, q = self.n_clusters, self.subspace_dim
        d = X.shape[1]
        if reference is not None:
            reference = np.asarray(reference, dtype=float)
            if reference.shape[1:] != (d, q) or reference.shape[0] != k:
                raise ValueError(f"reference must have shape ({k}, {d}, {q}); "
                                 f"got {reference.shape}")
        if isinstance(self.init, np.ndarray) and self.init.shape != (k, d, q):
            raise ValueError(f"init array must have shape ({k}, {d}, {q}); got {self.init.shape}")
        privacy = self._privacy()
        if not self._random_init():
            warnings.warn(f"GibbsSubspaceClustering(init={self._init_label()}) starts from a "
                          "non-private solution on the same data: the result is NOT private",
                          PrivacyWarning, stacklevel=2)
        n_released = self.n_chains if self.release == "all" else 1
        charge(self.ledger, float(self.epsilon) * n_released, 0.0,
               what=f"GibbsSubspaceClustering(k={k}, q={q}, epsilon={self.epsilon}, "
                    f"n_iter={self.n_iter}, n_chains={self.n_chains}, init={self._init_label()}, "
                    f"release={self.release!r})")
        self.privacy_ = privacy
        rng = as_generator(self.random_state)
        C = int(self.n_chains)
        self.released_chain_ = None if self.release == "all" else (
            0 if self.release == "first" else int(rng.integers(C)))
        X = clip_l2(X, 1.0)
        sq_norms = np.einsum("ij,ij->i", X, X)
        outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), d * d) if (
            X.size * d <= _CHUNK_FLOATS * 4) else None
        kappa = 0.5 * float(self.epsilon)
        with threadpool_limits(limits=1):
            if self._random_init():
                U = haar_stiefel(d, q, rng, size=C * k).reshape(C, k, d, q)
            elif isinstance(self.init, np.ndarray):
                U = np.broadcast_to(np.linalg.qr(self.init)[0], (C, k, d, q)).copy()
            else:
                solver = make_solver(self.init, k, q, random_state=rng).fit(X)
                U = np.broadcast_to(solver.subspaces_, (C, k, d, q)).copy()
        U_sum = np.zeros_like(U)
        records = {"iteration": [], "cost": [], "test_statistic": [], "wasserstein": [],
                   "rhat": []}
        t = 0
        while t < self.n_iter:
            block = min(self.record_every, self.n_iter - t)
            with threadpool_limits(limits=1):
                for _ in range(block):
                    z, A, counts = z_update(X, sq_norms, outer, U, kappa, rng)
                    U = u_update(U, A, counts, kappa, rng)
                    U_sum += U
                t += block
                record = self._record(X, U, U_sum / t, t, reference, records)
            self._set_state(U, z, t, records)
            yield record

    def _record(self, X, U, U_mean, t, reference, records):
        C = U.shape[0]
        cost = np.array([subspace_cost(X, U[c]) for c in range(C)])
        stat = np.array([gibbs_test_statistic(U_mean[c][None]) for c in range(C)])
        wd = None if reference is None else np.array(
            [wasserstein_subspaces(U[c], reference) for c in range(C)])
        records["iteration"].append(t)
        records["cost"].append(cost)
        records["test_statistic"].append(stat)
        records["wasserstein"].append(wd)
        history = np.array(records["cost"]).T
        rhat = split_rhat(history) if history.shape[1] >= 4 else float("nan")
        records["rhat"].append(rhat)
        return {"iteration": t, "cost": cost, "test_statistic": stat, "wasserstein": wd,
                "rhat": rhat}

    def _set_state(self, U, z, t, records):
        self.n_iter_ = t
        trace = {"iteration": np.array(records["iteration"]),
                 "cost": np.array(records["cost"]),
                 "test_statistic": np.array(records["test_statistic"]),
                 "rhat": np.array(records["rhat"])}
        if records["wasserstein"][0] is not None:
            trace["wasserstein"] = np.array(records["wasserstein"])
        self.trace_ = trace
        if self.release == "all":
            self.chain_subspaces_ = U.copy()
            self.chain_labels_ = z.copy()
            c = 0
        else:
            c = self.released_chain_
        self.subspaces_ = U[c].copy()
        self.labels_ = z[c].copy()
