"""Exponential-mechanism subspace clustering sampled by Gibbs (Wang, Wang & Singh, NIPS 2015,
Sec. 4.1).

Target (Wang, Wang & Singh 2015, Eq. 10): p(U, z; X) proportional to exp(-(eps/2) sum_i d^2(x_i, S_{z_i})) w.r.t.
(Haar)^k x counting measure, on records clipped to the unit ball. An exact sample is eps-DP under
replace-one neighbours (Prop. 4.1: d^2 in [0, 1]); the Markov chain reaches the target only in
the limit, so the guarantee is "asymptotic": there is no formal guarantee for a finite run.
"""

import functools
import numbers
import warnings

import numpy as np

from .._threads import single_thread
from ..constraints import POSITIVE_INT, RELATION, StrOptions
from ..data import clip_l2
from ..estimator import PrivateEstimator, epsilon_param
from ..metrics import gibbs_test_statistic, split_rhat, subspace_cost, wasserstein_subspaces
from ..privacy import BudgetAccountant, PrivacyWarning, gumbel_perturbed, haar_stiefel
from . import _bingham
from . import _gibbs_fused as _fused
from ._bingham import _hoff_fallback, sample_vector_bingham
from ._gibbs_fused import canonical_signs
from .solvers import make_solver

_CHUNK_FLOATS = 2_000_000  # rows per z-update chunk: about this many floats per temporary
_FULL_SCATTER_EVERY = 100  # compiled iterations between two full sums of the scatter matrices


def triu_outer(X):
    """(n, d(d+1)/2) upper triangles (row-major, diagonal included) of the x_i x_i^T, C-ordered
    (a row per record)."""
    iu = np.triu_indices(X.shape[1])
    return np.multiply(X[:, iu[0]], X[:, iu[1]], order="C")


@functools.lru_cache(maxsize=8)
def _triu(d):
    """``np.triu_indices(d)``, computed once per d."""
    return np.triu_indices(d)


@functools.lru_cache(maxsize=8)
def _triu_position(d):
    """(d*d,) index of entry (i, j) of a symmetric (d, d) matrix in its row-major upper
    triangle (the layout of :func:`triu_outer`)."""
    iu = _triu(d)
    pos = np.empty((d, d), dtype=np.intp)
    pos[iu] = np.arange(len(iu[0]))
    pos[iu[1], iu[0]] = pos[iu]
    return pos.ravel()


def _gumbel_argmax_middle(logits, rng):
    """Gumbel-max over the MIDDLE axis of finite logits (C, k, m): index l with
    probability softmax(logits[c, :, i])_l, returned as (C, m) int64.

    The same sampler as ``privacy.gumbel_max`` (G = -log E, E ~ Exp(1) kept > 0; argmax of
    logits + G, ties to the lowest index), laid out for the Gibbs z-update: the k candidates
    are on a middle axis, so the argmax is k - 1 elementwise comparisons of contiguous (C, m)
    slices instead of an argmax over a tiny trailing axis, and the finite-logit validation is
    skipped (the logits are -(eps/2) d^2 in [-eps/2, 0] by construction)."""
    C, k, m = logits.shape
    noise = gumbel_perturbed(logits, rng)  # logits + Gumbel
    z = np.zeros((C, m), dtype=np.int64)
    best = noise[:, 0].copy()
    for ell in range(1, k):
        cand = noise[:, ell]
        better = cand > best
        z[better] = ell
        np.maximum(best, cand, out=best)
    return z


def z_update(X, sq_norms, outer, U, kappa, rng, fused=None):
    """Sample all labels of all chains from Eq. (11) by Gumbel-max and accumulate the scatter
    matrices A[c, l] = sum_{z_ci = l} x_i x_i^T. ``outer`` holds the x_i x_i^T, either as
    upper triangles (n, d(d+1)/2) (:func:`triu_outer`, what :class:`GibbsSubspaceClustering`
    passes) or full (n, d*d); None computes them per chunk. U: (C, k, d, q). Returns z (C, n),
    A (C, k, d, d), counts (C, k). Chunked over rows; no loop over points or chains.

    Layout: one (q*C*k, d) @ (d, m) product puts the rows on the last (long, contiguous) axis;
    the sum over q adds q contiguous blocks and the Gumbel argmax compares k contiguous
    slices, so no reduction runs over a tiny trailing axis. ``fused`` (None: when numba is
    installed) does everything after that product and the Exp(1) draws (drawn, and their logs
    taken, by numpy) in two compiled kernels (:func:`._gibbs_fused.z_labels`, then
    :func:`._gibbs_fused.scatter`: counts and the scatter matrices accumulated row by row): the
    same labels for the same seed.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (11).
    """
    C, k, d, q = U.shape
    n = len(X)
    iu = _triu(d)
    n_tri = len(iu[0])
    Wt = np.ascontiguousarray(U.transpose(3, 0, 1, 2)).reshape(q * C * k, d)
    z = np.empty((C, n), dtype=np.int64)
    A_tri = np.zeros((C * k, n_tri))
    labels = np.arange(k)[None, :, None]
    step = max(1, _CHUNK_FLOATS // (C * k * max(q, d)))
    fused = _fused.AVAILABLE if fused is None else fused
    counts = np.zeros((C, k), dtype=np.int64)
    for start in range(0, n, step):
        Xc = X[start : start + step]
        m = len(Xc)
        P = Wt @ Xc.T  # (q*C*k, m)
        if outer is None:
            oc = triu_outer(Xc)
        elif outer.shape[1] == n_tri:
            oc = outer[start : start + m]
        else:
            oc = outer[start : start + m][:, iu[0] * d + iu[1]]
        if fused:
            zc = np.empty((C, m), dtype=np.int64)
            _fused.use_threads()
            log_e = _log_exponentials(rng, (C, k, m))
            sq = sq_norms[start : start + m]
            _fused.z_labels(P, sq, log_e, kappa, zc)
            _fused.scatter(zc, np.ascontiguousarray(oc), counts, A_tri)
            z[:, start : start + m] = zc
            continue
        np.multiply(P, P, out=P)
        proj2 = P.reshape(q, C * k, m).sum(axis=0)  # ||U^T x||^2
        proj2 -= sq_norms[start : start + m]
        np.minimum(proj2, 0.0, out=proj2)  # -d^2, clamped
        proj2 *= kappa
        zc = _gumbel_argmax_middle(proj2.reshape(C, k, m), rng)  # (C, m)
        z[:, start : start + m] = zc
        onehot = (zc[:, None, :] == labels).reshape(C * k, m).astype(float)
        A_tri += onehot @ oc
        counts += np.bincount((zc + k * np.arange(C)[:, None]).ravel(), minlength=C * k).reshape(
            C, k
        )
    A = A_tri[:, _triu_position(d)]  # (C*k, d*d): both triangles in one gather
    return z, A.reshape(C, k, d, d), counts


def _log_exponentials(rng, size, out=None):
    """log E for E ~ Exp(1) of ``size`` (into ``out`` if given): the draws of
    ``gumbel_perturbed`` in the same order; a draw of 0 gives -inf, which the compiled label
    kernel clamps as ``gumbel_perturbed`` clamps the draw."""
    out = rng.standard_exponential(size, out=out)
    with np.errstate(divide="ignore"):
        return np.log(out, out=out)


def u_update(U, A, counts, kappa, rng, fused=None):
    """One column-wise Gibbs sweep (Hoff 2009) of every U[c, l] under the matrix Bingham
    exp(kappa tr(U^T A U)), batched over chains and clusters; each column is an exact
    vector-Bingham draw (ACG rejection) in the eigenbasis of N^T A N, N spanning the complement of
    the other columns (recomputed by a full QR for every column). Empty clusters
    get a Haar basis. Returns the new U (C, k, d, q).

    The eigenvectors (as vectors N v of R^d) are signed so that their largest-magnitude entry is
    positive: the draw depends on the eigenbasis only through these signs, and the ACG proposal
    is symmetric under each sign flip, so the rule leaves the distribution unchanged and makes
    the result independent of how the eigenproblem is solved. ``fused`` (None: when numba is
    installed) builds N (from Householder reflectors instead of a full QR), solves the
    eigenproblem and runs the ACG tests in compiled kernels (:mod:`._gibbs_fused`); same draws,
    same chain for the same seed.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (12).
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    """
    C, k, d, q = U.shape
    B = C * k
    U = U.reshape(B, d, q).copy()
    A = A.reshape(B, d, d)
    fused = _fused.AVAILABLE if fused is None else fused
    perm = rng.permutation(q)
    if fused:
        _fused.use_threads()
        _u_sweep_fused(U, np.ascontiguousarray(A), perm, kappa, rng)
    else:
        U = _u_sweep_numpy(U, A, perm, kappa, rng)
    empty = np.flatnonzero(counts.reshape(B) == 0)
    if empty.size:
        U[empty] = haar_stiefel(d, q, rng, size=empty.size)
    return U.reshape(C, k, d, q)


def _u_sweep_numpy(U, A, perm, kappa, rng):
    """The column loop of :func:`u_update` and the re-orthonormalisation, with numpy and
    LAPACK; returns the new U (B, d, q)."""
    B, d, q = U.shape
    eye = np.broadcast_to(np.eye(d), (B, d, d))
    for r in perm:
        if q == 1:
            N = eye
        else:
            others = [j for j in range(q) if j != r]
            N = np.linalg.qr(U[:, :, others], mode="complete")[0][:, :, q - 1 :]  # (B, d, p)
        M = np.matmul(N.transpose(0, 2, 1), np.matmul(A, N))
        mu, V = np.linalg.eigh(M + M.transpose(0, 2, 1))  # symmetrised 2M: halve mu below
        NV = canonical_signs(np.matmul(N, V))  # (B, d, p)
        col = U[:, :, r : r + 1]

        def current(rows, NV=NV, col=col):  # y0 for the Hoff fallback only
            return np.matmul(NV[rows].transpose(0, 2, 1), col[rows])[:, :, 0]

        y = sample_vector_bingham((0.5 * kappa) * mu, rng, y0=current, fused=False)
        U[:, :, r] = np.matmul(NV, y[:, :, None])[:, :, 0]
    Q, R = np.linalg.qr(U)  # drift control
    signs = np.sign(np.diagonal(R, axis1=1, axis2=2))
    return Q * np.where(signs == 0, 1.0, signs)[:, None, :]


def _u_sweep_fused(U, A, perm, kappa, rng, work=None, pos=None):
    """The column loop of :func:`u_update` and the re-orthonormalisation in compiled code (U
    (B, d, q) in place), leaving a column to Hoff's update here only when its ACG draw ran out
    of proposals. ``work``: the kernels' workspaces (NV, a, y) or None; ``pos``: None, or the
    position in ``perm`` where a compiled sweep already stopped (its column pending in
    ``work``): the sweep goes on from there."""
    B, d, q = U.shape
    p = d - q + 1
    NV, a, y = (np.empty((B, d, p)), np.empty((B, p)), np.empty((B, p))) if work is None else work
    max_proposals = _bingham._MAX_PROPOSALS
    rounds = -(-max_proposals // _bingham._ROUND)
    if pos is None:
        pos = _fused.u_sweep(U, A, perm, 0, kappa, rng, rounds, _bingham._ROUND, NV, a, y)
    while pos >= 0:
        r = perm[pos]
        _hoff_fallback(
            a,
            y,
            np.flatnonzero(np.isnan(y[:, 0])),
            rng,
            np.matmul(NV.transpose(0, 2, 1), U[:, :, r : r + 1])[:, :, 0],
            max_proposals,
        )
        U[:, :, r] = np.matmul(NV, y[:, :, None])[:, :, 0]
        pos = _fused.u_sweep(U, A, perm, pos + 1, kappa, rng, rounds, _bingham._ROUND, NV, a, y)
    _fused.orthonormalise(U)  # drift control


class GibbsIterations:
    """The Gibbs iterations of one run on fixed records: :func:`z_update` then :func:`u_update`
    for all chains, the same chain for the same seed.

    On the compiled path (``fused``; None: when numba is installed) and when the whole data set
    fits one z-update chunk, an iteration is one BLAS product (the U^T x), the Exp(1) draws and
    their logs into preallocated arrays, the column permutation, and ONE compiled call (labels,
    counts, scatter matrices, column sweep, re-orthonormalisation: :func:`._gibbs_fused.iteration`);
    nothing is allocated per iteration. The scatter matrices are updated from the previous
    iteration's by the records whose label changed (few, after burn-in) and summed anew every
    ``_FULL_SCATTER_EVERY`` iterations, so rounding cannot accumulate. Otherwise (numpy path,
    or more records than one chunk) :func:`z_update` and :func:`u_update` run, chunked, on the
    same path.

    Parameters
    ----------
    X : ndarray (n, d)
        Records, clipped to the unit ball.
    n_chains, n_clusters, subspace_dim : int
        C, k, q.
    kappa : float
        epsilon / 2.
    fused : bool or None
        Use the compiled kernels (None: when numba is installed).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eqs. (11)-(12).
    """

    def __init__(self, X, n_chains, n_clusters, subspace_dim, kappa, fused=None):
        n, d = X.shape
        C, k, q = n_chains, n_clusters, subspace_dim
        self.X, self.kappa, self.shape = X, kappa, (C, k, d, q)
        self.sq_norms = np.einsum("ij,ij->i", X, X)
        self.compiled = _fused.AVAILABLE if fused is None else fused
        self.fused = self.compiled and n * C * k * max(q, d) <= _CHUNK_FLOATS  # one call
        if not self.fused:
            self.outer = triu_outer(X) if X.size * (d + 1) <= _CHUNK_FLOATS * 8 else None
            return
        n_tri = d * (d + 1) // 2
        width = -(-n_tri // 8) * 8  # triangle rows padded to whole 8-double vectors
        self.outer = np.zeros((n, width))
        self.outer[:, :n_tri] = triu_outer(X)
        self.XT = np.ascontiguousarray(X.T)
        self.Wt = np.empty((q, C, k, d))
        self.P = np.empty((q * C * k, n))
        self.log_e = np.empty((C, k, n))
        self.z, self.z_old = np.empty((C, n), dtype=np.int64), np.empty((C, n), dtype=np.int64)
        self.since_full = _FULL_SCATTER_EVERY  # the first step sums the scatter matrices
        self.counts = np.empty((C, k), dtype=np.int64)
        self.A_tri = np.empty((C * k, width))
        self.A = np.empty((C * k, d, d))
        p = d - q + 1
        self.work = (np.empty((C * k, d, p)), np.empty((C * k, p)), np.empty((C * k, p)))
        self.position = _triu_position(d)

    def step(self, U, rng):
        """One iteration from the bases U (C, k, d, q); returns (z (C, n), new U). On the
        compiled path U is updated in place (and returned) and z is one of two label buffers
        that later steps overwrite (copy it to keep it)."""
        if not self.fused:
            kappa, compiled = self.kappa, self.compiled
            z, A, counts = z_update(self.X, self.sq_norms, self.outer, U, kappa, rng, compiled)
            return z, u_update(U, A, counts, kappa, rng, compiled)
        C, k, d, q = self.shape
        np.copyto(self.Wt, U.transpose(3, 0, 1, 2))
        np.matmul(self.Wt.reshape(q * C * k, d), self.XT, out=self.P)
        _log_exponentials(rng, self.log_e.shape, out=self.log_e)
        perm = rng.permutation(q)
        Ub = U.reshape(C * k, d, q)
        rounds = -(-_bingham._MAX_PROPOSALS // _bingham._ROUND)
        self.z, self.z_old = self.z_old, self.z
        full = self.since_full >= _FULL_SCATTER_EVERY
        self.since_full = 1 if full else self.since_full + 1
        pos = _fused.iteration(
            self.P, self.sq_norms, self.log_e, self.kappa, self.outer, self.position, perm, rng,
            rounds, _bingham._ROUND, Ub, self.z_old, self.z, full, self.counts, self.A_tri,
            self.A, *self.work,
        )  # fmt: skip
        if pos >= 0:
            _u_sweep_fused(Ub, self.A, perm, self.kappa, rng, self.work, pos)
        if not self.counts.all():
            empty = np.flatnonzero(self.counts.reshape(C * k) == 0)
            Ub[empty] = haar_stiefel(d, q, rng, size=empty.size)
        return self.z, U


class GibbsSubspaceClustering(PrivateEstimator):
    """Exponential-mechanism subspace clustering, sampled by a Gibbs chain (Wang, Wang & Singh,
    NIPS 2015, Sec. 4.1).

    Each iteration samples all labels z from Eq. (11) (Gumbel-max, vectorised over points, chains
    and clusters) and then each basis U_l column by column from Eq. (12) with an exact
    angular-central-Gaussian vector-Bingham draw. ``n_chains`` chains run together with batched
    linear algebra (one Generator for all chains).

    Parameters
    ----------
    n_clusters : int, default=3
        Number of subspaces k.
    subspace_dim : int, default=1
        Dimension q of every subspace (1 <= q < d).
    epsilon : float, default=1.0
        Privacy parameter of one released chain: the target is exp(-(epsilon / 2) cost) (Eq. (11);
        records are clipped to the unit ball, where the cost of one record changes by at most 1).
    n_iter : int, default=1000
        Gibbs sweeps per chain.
    n_chains : int, default=4
        Chains run together. Only one is released unless ``release="all"``.
    init : "random", {"ssc", "lrr", "tsc", "kplanes"} or ndarray (k, d, q), default="random"
        "random" starts from Haar bases (data-independent). A solver name or an array of bases
        starts from a (presumed) non-private solution on the same data: the plan is then "none"
        (see Notes).
    record_every : int, default=100
        Iterations between two diagnostic records (``trace_``, :meth:`iter_fit`).
    release : {"random", "first", "all"}, default="random"
        Which chain is released: one drawn uniformly before sampling, chain 0, or every chain
        (costs ``n_chains * epsilon``).
    neighbouring : {"replace"}, default="replace"
        Neighbouring relation; only replace-one is supported (under add/remove the output space,
        one label per record, changes with the data).
    ledger : Ledger or None, default=None
        Budget ledger charged the whole amount before the records are read.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the chains and the choice of the released chain.

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        Orthonormal bases of the released chain's last state. Released.
    labels_ : ndarray of shape (n,)
        Labels of the released chain's last state (n is public under replace-one). Released.
    released_chain_ : int
        Index of the released chain. Released.
    chain_subspaces_, chain_labels_ : ndarray of shape (n_chains, k, d, q) and (n_chains, n)
        Every chain's last state; set and released only with ``release="all"``.
    n_iter_ : int
        Sweeps run.
    trace_ : dict of ndarray
        EVALUATION ONLY, never released: ``iteration`` (R,), ``cost``, ``test_statistic`` and
        ``wasserstein`` (R, n_chains), ``rhat`` (R,).
    privacy_ : Guarantee
        Kind "asymptotic" (or "none" with a non-private ``init``), replace-one.

    Notes
    -----
    Privacy: an exact sample of the target is ``epsilon``-DP; a finite run has no formal guarantee,
    hence the kind "asymptotic". The released chain is chosen without looking at the data (picking
    the lowest-cost chain would be a non-private selection). Intermediate states are never released
    (each would cost epsilon). With a non-private ``init`` the Curator refuses the estimator, a fit
    with a ``ledger`` raises ValueError before anything runs, and a fit without one raises a
    PrivacyWarning; that reproduces "exp.+SSC/LRR" of Wang, Wang & Singh 2015, Fig. 2.

    The column sampler replaces the paper's "modification" of Hoff's sampler (App. D.2, not given
    in detail there) by an exact vector-Bingham draw (see docs/algorithms.md, section 3).

    :meth:`fit` and :meth:`iter_fit` go through
    :class:`~privclust.core.estimator.PrivateEstimator`: every parameter and ``reference``
    are checked from the parameters and the public shape, then ``ledger`` is charged the whole
    amount, then the records are read and sampling starts.

    Diagnostics read the raw data or unreleased states: ``cost`` (Eq. 3) and ``wasserstein`` (to
    ``reference``) read the records; ``test_statistic`` (Sec. 5) and ``rhat`` summarise unreleased
    states of every chain. The test statistic tends to 0 because column sign flips average E[U] to
    0, for a well-mixed chain and for a chain stuck in a k-plane-like local optimum alike, so it
    says little about mixing; the split R-hat of the cost across chains (``rhat``, needs >= 2
    chains) does flag a stuck chain. Stopping a run early because of these diagnostics makes the
    stopping time data-dependent, which the guarantee does not cover.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4 (exponential mechanism, Eqs. (11)-(12)), Sec. 4.1 (Gibbs sampler) and
        Sec. 5 (Figs. 2-3).
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2).

    Examples
    --------
    >>> from privclust.core import GibbsSubspaceClustering
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=200, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.05, random_state=0)
    >>> est = GibbsSubspaceClustering(n_clusters=2, subspace_dim=1, epsilon=1.0, n_iter=20, n_chains=1,
    ...                               record_every=10, random_state=0).fit(data.X)
    >>> est.subspaces_.shape, est.labels_.shape
    ((2, 4, 1), (200,))
    >>> print(est.privacy_.summary())
    1.0-DP, asymptotic only (exact sampling would be private; no guarantee for a finite run), replace-one neighbours; 1 warning
    """

    _released = ("subspaces_", "labels_", "released_chain_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "n_iter": [POSITIVE_INT],
        "n_chains": [POSITIVE_INT],
        "init": [str, np.ndarray],
        "record_every": [POSITIVE_INT],
        "release": [StrOptions({"random", "first", "all"})],
        "neighbouring": [RELATION],
    }

    def __init__(
        self,
        n_clusters=3,
        subspace_dim=1,
        epsilon=1.0,
        n_iter=1000,
        n_chains=4,
        init="random",
        record_every=100,
        release="random",
        neighbouring="replace",
        ledger=None,
        random_state=None,
    ):
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

    def released_attributes(self):
        extra = ("chain_subspaces_", "chain_labels_") if self.release == "all" else ()
        return tuple(self._released) + extra

    def _check_params(self):
        for name in ("n_iter", "n_chains", "record_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        epsilon_param(self.epsilon)
        if self.release not in ("random", "first", "all"):
            raise ValueError(f"release must be 'random', 'first' or 'all'; got {self.release!r}")
        if self.neighbouring != "replace":
            raise NotImplementedError(
                "GibbsSubspaceClustering supports neighbouring='replace' only: under add/remove "
                "the output space (one label per record) changes with the data"
            )
        if not isinstance(self.init, (str, np.ndarray)):
            raise ValueError(
                f"init must be 'random', a solver name or a (k, d, q) array of "
                f"bases; got {self.init!r}"
            )

    def _check_shape(self, n_samples, n_features):
        """k, q and an init array against the public shape (either may be None: unchecked)."""
        k, q = self.n_clusters, self.subspace_dim
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"n_clusters must be a positive integer; got {k!r}")
        if (
            isinstance(q, bool)
            or not isinstance(q, numbers.Integral)
            or q < 1
            or (n_features is not None and q >= n_features)
        ):
            raise ValueError(
                "subspace_dim must be an integer with 1 <= subspace_dim < "
                f"n_features={n_features}; got {q!r}"
            )
        if n_samples is not None and k > n_samples:
            raise ValueError(f"n_clusters={k} exceeds n_samples={n_samples}")
        if (
            isinstance(self.init, np.ndarray)
            and n_features is not None
            and self.init.shape != (k, n_features, q)
        ):
            raise ValueError(
                f"init array must have shape ({k}, {n_features}, {q}); got {self.init.shape}"
            )
        if isinstance(self.init, str) and not self._random_init():
            make_solver(self.init, k, q)  # ValueError for an unknown solver name

    def _check_reference(self, reference, n_features):
        """``reference`` (public bases, evaluation only) as a float array of shape (k, d, q)."""
        if reference is None:
            return None
        k, q = self.n_clusters, self.subspace_dim
        reference = np.asarray(reference, dtype=float)
        if reference.shape != (k, n_features, q):
            raise ValueError(
                f"reference must have shape ({k}, {n_features}, {q}); got {reference.shape}"
            )
        if not np.all(np.isfinite(reference)):
            raise ValueError("reference contains NaN or infinite values")
        return reference

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
        warns = [
            "asymptotic: an exact sample is epsilon-DP, a finite Gibbs run has no formal guarantee"
        ]
        if not self._random_init():
            warns.append(
                f"init={self._init_label()} is treated as a non-private solution on "
                "the same data: the output is not private"
            )
            return acct.guarantee("none", "replace", warns)
        return acct.guarantee("asymptotic", "replace", warns)

    def _plan(self, n_samples, n_features):
        self._check_params()
        self._check_shape(n_samples, n_features)
        return self._privacy()

    def fit(self, X, y=None, reference=None):
        """Run all ``n_iter`` iterations (see :meth:`iter_fit`); returns self."""
        for _ in self.iter_fit(X, reference=reference):
            pass
        return self

    def _fit(self, X, rng):
        """The whole run on checked data (for callers of the base class protocol)."""
        for _ in self._steps(X, rng):
            pass

    def _steps(self, X, rng, reference=None):
        """The stepping run on checked data (after the charge): yields one record every
        ``record_every`` iterations (see :meth:`iter_fit`)."""
        self.privacy_ = self._privacy()
        yield from self._sample(X, rng, reference)

    def iter_fit(self, X, reference=None):
        """Generator: plan, check ``reference``, charge ``ledger`` (all before any record is
        read), then run the chains and yield, every ``record_every`` iterations (and at the
        last), an evaluation-only record ``{"iteration", "cost", "test_statistic",
        "wasserstein", "rhat"}`` (per-chain arrays; ``wasserstein`` is None without
        ``reference`` (k, d, q)). Fitted attributes are updated before each yield, so a consumer
        may stop early and use the current state. BLAS is pinned to one thread while sampling
        (never while the consumer runs between records). Nothing runs until the first
        ``next()``. A thin caller of the release pipeline
        (:meth:`~privclust.core.release.prepared.PreparedRelease.steps`).
        """
        prepared = self.prepared(X)  # parameters first, then the reference
        reference = self._check_reference(reference, prepared.shape[1])
        if not self._random_init():
            warnings.warn(
                f"GibbsSubspaceClustering(init={self._init_label()}) starts from a "
                "non-private solution on the same data: the result is NOT private",
                PrivacyWarning,
                stacklevel=2,
            )
        yield from prepared.steps(X, reference=reference)

    def _sample(self, X, rng, reference):
        k, q = self.n_clusters, self.subspace_dim
        d = X.shape[1]
        C = int(self.n_chains)
        self.n_features_in_ = d
        self.released_chain_ = (
            None
            if self.release == "all"
            else (0 if self.release == "first" else int(rng.integers(C)))
        )
        X = clip_l2(X, 1.0)
        kappa = 0.5 * float(self.epsilon)
        with single_thread():
            if self._random_init():
                U = haar_stiefel(d, q, rng, size=C * k).reshape(C, k, d, q)
            elif isinstance(self.init, np.ndarray):
                U = np.broadcast_to(np.linalg.qr(self.init)[0], (C, k, d, q)).copy()
            else:
                solver = make_solver(self.init, k, q, random_state=rng).fit(X)
                U = np.broadcast_to(solver.subspaces_, (C, k, d, q)).copy()
        U = np.ascontiguousarray(U)
        iterations = GibbsIterations(X, C, k, q, kappa)
        U_sum = np.zeros_like(U)
        n_records = -(-int(self.n_iter) // int(self.record_every))
        records = _Trace(n_records, C, reference is not None)
        t = 0
        while t < self.n_iter:
            block = min(self.record_every, self.n_iter - t)
            with single_thread():
                if iterations.fused:
                    _fused.use_threads()
                for _ in range(block):
                    z, U = iterations.step(U, rng)
                    U_sum += U
                t += block
                record = self._record(X, U, U_sum / t, t, reference, records)
            self._set_state(U, z, t, records)
            yield record

    def _record(self, X, U, U_mean, t, reference, records):
        C = U.shape[0]
        cost = np.array([subspace_cost(X, U[c]) for c in range(C)])
        stat = np.array([gibbs_test_statistic(U_mean[c][None]) for c in range(C)])
        wd = (
            None
            if reference is None
            else np.array([wasserstein_subspaces(U[c], reference) for c in range(C)])
        )
        rhat = records.append(t, cost, stat, wd)
        return {
            "iteration": t,
            "cost": cost,
            "test_statistic": stat,
            "wasserstein": wd,
            "rhat": rhat,
        }

    def _set_state(self, U, z, t, records):
        self.n_iter_ = t
        self.trace_ = records.view()
        if self.release == "all":
            self.chain_subspaces_ = U.copy()
            self.chain_labels_ = z.copy()
            c = 0
        else:
            c = self.released_chain_
        self.subspaces_ = U[c].copy()
        self.labels_ = z[c].copy()


class RunningSplitRhat:
    """:func:`~privclust.core.metrics.split_rhat` of a growing (n_chains, R) history, updated
    in O(n_chains) per appended draw instead of O(n_chains R).

    Split R-hat needs, for each chain, the mean and variance of its first ``n = R // 2`` draws
    and of its last ``n``; both are differences of prefix sums of x and x^2. The prefix sums
    are of x - x_0 (each chain shifted by its first draw), so a chain far from 0 does not
    cancel digits. When a half's sum of squared deviations is so small against those prefix
    sums that the difference could have lost more than ~6 digits (a (nearly) constant chain),
    or a draw is not finite, the value is recomputed by ``split_rhat`` itself on the stored
    history, so the result always equals ``split_rhat(history)`` to rounding (a test compares
    them on random histories) and raises the same errors.

    References
    ----------
    Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin, D. B.
        (2013). Bayesian Data Analysis, 3rd ed. CRC Press, Sec. 11.4.
    """

    _GUARD = 1e-6

    def __init__(self, n_chains, capacity=64):
        self.n_chains = int(n_chains)
        self.n = 0
        self._x = np.empty((max(int(capacity), 4), self.n_chains))
        self._p1 = np.zeros((len(self._x) + 1, self.n_chains))  # prefix sums of x - shift
        self._p2 = np.zeros_like(self._p1)  # ... and of (x - shift)^2
        self._shift = None
        self._finite = True

    @property
    def history(self):
        """The draws so far, (n_chains, R)."""
        return self._x[: self.n].T

    def append(self, x):
        """Add one draw per chain (shape (n_chains,)); returns :meth:`value`."""
        x = np.asarray(x, dtype=np.float64).reshape(self.n_chains)
        if self.n == len(self._x):
            cap = 2 * len(self._x)
            self._x = np.concatenate([self._x, np.empty_like(self._x)])
            self._p1 = np.concatenate(
                [self._p1, np.zeros((cap - len(self._p1) + 1, self.n_chains))]
            )
            self._p2 = np.concatenate(
                [self._p2, np.zeros((cap - len(self._p2) + 1, self.n_chains))]
            )
        r = self.n
        self._x[r] = x
        if not np.all(np.isfinite(x)):
            self._finite = False
        if self._finite:
            if self._shift is None:
                self._shift = x.copy()
            dx = x - self._shift
            self._p1[r + 1] = self._p1[r] + dx
            self._p2[r + 1] = self._p2[r] + dx * dx
        self.n = r + 1
        return self.value()

    def value(self):
        """split_rhat of the history (nan below 4 draws, as the sampler records it)."""
        R = self.n
        if R < 4:
            return float("nan")
        if not self._finite:
            return split_rhat(self.history)  # raises ValueError, as split_rhat does
        n = R // 2
        p1, p2 = self._p1, self._p2
        s1 = np.concatenate([p1[n] - p1[0], p1[R] - p1[R - n]])
        s2 = np.concatenate([p2[n] - p2[0], p2[R] - p2[R - n]])
        ss = s2 - s1 * s1 / n  # sums of squared deviations of the 2C halves
        scale = np.concatenate([p2[n], p2[R]])
        if np.any(ss <= self._GUARD * scale):
            return split_rhat(self.history)
        shift = self._shift - self._shift.mean()  # B is shift-invariant: keep means small
        means = np.concatenate([shift, shift]) + s1 / n
        B = n * means.var(ddof=1)
        W = (ss / (n - 1)).mean()
        var_plus = (n - 1) / n * W + B / n
        return float(np.sqrt(var_plus / W))


class _Trace:
    """The diagnostics of one run in preallocated arrays (``n_records`` rows): appending a
    record and exposing ``trace_`` cost O(n_chains), not O(records so far)."""

    def __init__(self, n_records, n_chains, with_reference):
        self.r = 0
        self.iteration = np.zeros(n_records, dtype=np.int64)
        self.cost = np.zeros((n_records, n_chains))
        self.test_statistic = np.zeros((n_records, n_chains))
        self.wasserstein = np.zeros((n_records, n_chains)) if with_reference else None
        self.rhat = np.zeros(n_records)
        self._rhat = RunningSplitRhat(n_chains, capacity=n_records)

    def append(self, t, cost, stat, wd):
        r = self.r
        self.iteration[r] = t
        self.cost[r] = cost
        self.test_statistic[r] = stat
        if self.wasserstein is not None:
            self.wasserstein[r] = wd
        self.rhat[r] = rhat = self._rhat.append(cost)
        self.r = r + 1
        return rhat

    def view(self):
        """``trace_``: read-only views of the rows so far (later records never change them)."""
        r = self.r
        out = {
            "iteration": self.iteration[:r],
            "cost": self.cost[:r],
            "test_statistic": self.test_statistic[:r],
            "rhat": self.rhat[:r],
        }
        if self.wasserstein is not None:
            out["wasserstein"] = self.wasserstein[:r]
        for v in out.values():
            v.flags.writeable = False
        return out
