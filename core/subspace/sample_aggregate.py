"""Sample-and-aggregate subspace clustering with smooth sensitivity (Wang, Wang & Singh, NIPS 2015,
Alg. 1; the framework of Nissim, Raskhodnikova & Smith, STOC 2007, Sec. 4).

Each of m disjoint (or sampled) subsets is clustered by a non-private solver f; each solution is
the unordered set of k projectors, vectorised as upper triangles with off-diagonal entries
scaled by sqrt(2) (Euclidean norm = Frobenius norm; D = k d(d+1)/2), compared by the Wasserstein
distance d_W. The centre-of-attention output g(B) plus Gaussian noise scaled by a beta-smooth
bound S(B) (Nissim, Raskhodnikova & Smith 2007) is (epsilon, delta)-DP under replace-one
neighbours; the noisy blocks are released in random order and projected back to q-dimensional
subspaces.

Alternative aggregation rule (the 1-cluster aggregator of Nissim, Stemmer & Vadhan, PODS 2016,
Sec. 1, in place of the smooth-sensitivity centre): ``aggregator=`` a callable with the signature of
``privclust.core.onecluster.OneClusterAggregator`` runs a 1-cluster aggregator on the m block
outputs, each a vector in a fixed coordinate system (its k projector vectors in a canonical order,
see :func:`canonical_block_vectors`) inside the public box of :func:`projector_box`.
"""

import math
import numbers
import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..constraints import POSITIVE_DELTA, POSITIVE_INT, HasMethods, Integral, Interval, StrOptions
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
    Guarantee,
    PrivacyWarning,
    haar_stiefel,
    smooth_sensitivity_gaussian,
    smooth_sensitivity_parameters,
)
from ._smooth_bound import centre_index, smooth_bound
from .solvers import make_solver

SUBSAMPLING = ("partition", "independent")
SMOOTH_BOUNDS = ("order_stat", "nrs_mean")
_RTOL = 1e-9


def projector_vectors(bases):
    """(..., k, d, q) bases -> (..., k, d(d+1)/2) upper-triangle projector vectors (off-diagonal
    entries times sqrt(2), so the Euclidean norm equals the Frobenius norm).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (1) (the projector distance).
    """
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
    P = P + P.transpose(0, 2, 1) - P * np.eye(d)  # mirror; the diagonal was set once
    _, V = np.linalg.eigh(P)
    return V[:, :, ::-1][:, :, :q].copy()


def projector_box(d, k=1):
    """Public (lower, upper) box of the concatenated projector vectors of k subspaces in R^d.

    For an orthogonal projector P (P = P^T = P^2): P_ii = ||P e_i||^2 is in [0, 1], and
    P_ii = (P^2)_ii = sum_j P_ij^2 >= P_ii^2 + P_ij^2 (j != i), so P_ij^2 <= P_ii (1 - P_ii) <= 1/4,
    i.e. |P_ij| <= 1/2. In the vector the off-diagonal entries are scaled by sqrt(2): entries in
    [-sqrt(2)/2, sqrt(2)/2]. The box depends on d and k only, never on data.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 6 (a public box for the aggregated outputs).
    """
    iu = np.triu_indices(d)
    diag = iu[0] == iu[1]
    half = math.sqrt(2.0) / 2.0
    lo = np.tile(np.where(diag, 0.0, -half), k)
    hi = np.tile(np.where(diag, 1.0, half), k)
    return lo, hi


def canonical_order(vecs):
    """Indices sorting one solution's k projector vectors (k, d(d+1)/2) lexicographically (first
    coordinate P_11 primary, ties broken by the next coordinates). A function of that solution's
    unordered set alone: permuting the k subspaces does not change the sorted result."""
    vecs = np.asarray(vecs)
    return np.lexsort(vecs.T[::-1])


def canonical_block_vectors(solutions):
    """(m, k, d, q) bases -> (m, k d(d+1)/2) block outputs in a fixed coordinate system: each
    block's k projector vectors in :func:`canonical_order`, concatenated. Row j depends on block j
    only, so one record (one block under a partition) changes one row."""
    V = projector_vectors(solutions)
    out = np.stack([v[canonical_order(v)] for v in V])
    return out.reshape(len(V), -1)


def wasserstein_matrix(solutions):
    """m x m Wasserstein distances between m solutions (m, k, d, q): one batched k x k cost
    tensor, then one Hungarian solve per pair.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (2).
    """
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
    replacement redrawn until no record is in more than s of them (data-independent).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1 (independent subsamples).
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 4 (sample and aggregate).
    """
    size = n // m
    if method == "partition":
        return rng.permutation(n)[: m * size].reshape(m, size)
    if method != "independent":
        raise ValueError(f"subsampling must be one of {SUBSAMPLING}; got {method!r}")
    for _ in range(max_draws):
        idx = np.argsort(rng.random((m, n)), axis=1)[:, :size]
        if np.bincount(idx.ravel(), minlength=n).max() <= s:
            return idx
    raise RuntimeError(f"could not draw {m} subsets with every record in at most {s} of them")


def noisy_release(g, bound, epsilon, delta, rng, size=None):
    """Alg. 1's output g + (S/alpha) N(0, I_D) (Nissim, Raskhodnikova & Smith 2007, via the
    privacy module); ``size=N`` gives
    N independent releases (batched form for audits). The epsilon > 1 PrivacyWarning is raised
    by the estimator (once per fit), not here.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1.
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 2-3.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return smooth_sensitivity_gaussian(g, bound, epsilon, delta, rng, size=size)


class SampleAggregateSubspaceClustering(PrivateEstimator):
    """Sample-and-aggregate subspace clustering (Wang, Wang & Singh, NIPS 2015, Alg. 1, with
    the smooth-sensitivity release of Nissim, Raskhodnikova & Smith, STOC 2007).

    The records are clipped to the unit ball and split into ``n_subsets`` blocks; the non-private
    ``solver`` runs on each block; the block solutions (as projector vectors) are aggregated and
    released once, with Gaussian noise scaled to a smooth upper bound on the local sensitivity.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of subspaces k.
    subspace_dim : int, default=1
        Dimension q of every subspace.
    epsilon : float, default=1.0
        Privacy parameter; the whole (epsilon, delta) is spent by the single release.
    delta : float or None, default=None
        None means 1/(n ln n) (n is public under replace-one).
    solver : {"ssc", "tsc", "lrr", "kplanes"} or estimator, default="ssc"
        Non-private solver run on each block; an estimator must set ``subspaces_``.
    n_subsets : int or None, default=None
        Number of blocks m; None means max(4, floor(n / (10 k q))).
    subsampling : {"partition", "independent"}, default="partition"
        Disjoint blocks, or the independent subsamples of Alg. 1 (no record in more than s blocks).
    smooth_bound : {"order_stat", "nrs_mean"}, default="order_stat"
        "order_stat" is our beta-smooth bound on the local sensitivity, derived from order
        statistics of the block distances; "nrs_mean" is the formula as stated by Wang, Wang &
        Singh (2015, Sec. 3.1), unverified (see docs/algorithms.md, section 3).
    aggregator : "smooth_sensitivity" or callable, default="smooth_sensitivity"
        The aggregation rule; a callable ``agg(Y, epsilon, delta, bounds, rng) -> (center,
        guarantee)`` such as :class:`~privclust.core.onecluster.OneClusterAggregator` (see Notes).
    ledger : Ledger or None, default=None
        Budget ledger charged before the records are read.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the blocks, the solver and the noise.

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        Released orthonormal bases (blocks in random order). Released.
    privacy_ : Guarantee
        Approximate DP, replace-one (or the aggregator's guarantee), with the warnings below.
    diagnostics_ : dict
        EVALUATION ONLY (data-dependent, not private, never released): the smooth bound, noise
        scale, centre index, m, s, t0, D; with a callable aggregator: m, D, the box and
        ``order_agreement``, the fraction of blocks whose canonical order is the optimal matching
        to the released centre. The smooth bound is not put in ``privacy_`` either (it depends on
        the data).

    Notes
    -----
    Every parameter (epsilon, delta, k and q against the public shape, m against n, the options,
    the solver, the aggregator and, when it can state it in advance, the aggregator's guarantee)
    is checked from the parameters and the public shape, and the (data-independent) subsets are
    drawn, before ``ledger`` is charged; the records are read only after the charge (base class
    :class:`~privclust.core.estimator.PrivateEstimator`).

    Warnings (PrivacyWarning, also listed in ``privacy_.warnings``; all from public values):
    epsilon > 1 (the smooth-sensitivity calibration is proven for small epsilon), and
    epsilon < 4(D + ln(2/delta))/sqrt(m) (then the noise is enormous: floor(s/beta) >= m).

    ``aggregator``: "smooth_sensitivity" (default; the rule above) or a callable
    ``agg(Y, epsilon, delta, bounds, rng) -> (center, guarantee)`` with the signature of
    ``privclust.core.onecluster.OneClusterAggregator`` (the 1-cluster algorithm of Nissim,
    Stemmer & Vadhan, PODS 2016, as the aggregation rule; pass an instance, e.g.
    ``aggregator=OneClusterAggregator()``). A callable that also has
    ``plan(m, D, epsilon, delta, bounds) -> Guarantee`` (as ``OneClusterAggregator`` does) states
    its guarantee in advance: it is checked (replace-one, within (epsilon, delta)) and becomes
    this estimator's plan before anything is charged. Without ``plan`` the estimator plans
    (epsilon, delta), approximate DP, and checks the returned guarantee after the run. With a
    callable:

    - Requires ``subsampling="partition"``: each record is in one block, so it changes one block
      output y_j and the aggregator's ``replace`` guarantee on Y transfers unchanged to the
      records. ``smooth_bound`` is not used.
    - A solution is an unordered set of k projectors, so each block output y_j is its k projector
      vectors in a canonical order computed from that block's output alone (lexicographic, first
      coordinate P_11 primary: :func:`canonical_order`), concatenated (D = k d(d+1)/2).
      **Utility depends on how stably that order matches across blocks**: when two true
      subspaces have similar leading coordinates, blocks disagree on the order, Y splits into
      up to k! permuted copies of the answer and the 1-cluster finds a smaller (or no) heavy ball.
      No continuous canonical order of unordered sets exists in general; ``diagnostics_
      ["order_agreement"]`` reports how often it matched (evaluation only).
    - Y lives in the public box of :func:`projector_box` (diagonal entries in [0, 1], off-
      diagonal |P_ij| <= 1/2, i.e. sqrt(2)/2 in the vector), derived from the projector algebra,
      never from data. The released centre is clipped to the box and mapped back with
      :func:`vectors_to_bases`.
    - **Honest limit:** D = k d(d+1)/2 is large (k = 3, d = 10: D = 165) and the 1-cluster
      aggregator (GoodCenter) is already weak at d >= 10 with n = 10^4 points; here its
      "points" are the m blocks, so it needs very many blocks (hence very large n) and low d, k.
      Expect a noise-dominated or failed aggregate (reported in ``privacy_.warnings``) otherwise.
      Measured (d = 3, k = 2, q = 1, D = 12, KPlanes, 12 runs): 1000 blocks of 20 points at
      epsilon = 50 gave d_W to the truth <= 0.0015, all reliable; at epsilon = 10, or with 500
      blocks at epsilon = 50, the aggregate was flagged unreliable (d_W up to 0.28).
    - ``privacy_`` is the guarantee returned by the aggregator (it must be "replace" and within
      the charged (epsilon, delta); a pure guarantee is reported as approximate DP, which it
      implies, when the aggregator stated no plan), with this estimator's warnings added.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1 (Alg. 1, the sample-aggregate framework) and Sec. 3.2-3.3.
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in private
        data analysis. STOC 2007, Sec. 3-4.
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately. PODS 2016,
        Sec. 6 (1-cluster as the aggregation rule).

    Examples
    --------
    >>> from privclust.core import SampleAggregateSubspaceClustering
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=1000, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.01, random_state=0)
    >>> est = SampleAggregateSubspaceClustering(n_clusters=2, subspace_dim=1, epsilon=1.0, delta=1e-5,
    ...                                         random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = est.fit(data.X)
    >>> est.subspaces_.shape
    (2, 4, 1)
    >>> print(caught[0].message)
    epsilon=1 is too small for m=50 subsets (< 4(D + ln(2/delta))/sqrt(m) = 18.2): the noise is of the order of the output diameter
    >>> print(est.privacy_.summary())
    (1.0, 1e-05)-DP, approximate, replace-one neighbours; 1 warning
    """

    _released = ("subspaces_",)

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "delta": [None, POSITIVE_DELTA],
        "solver": [str, HasMethods(["fit"])],
        "n_subsets": [None, Interval(Integral, 2, None, closed="left")],
        "subsampling": [StrOptions(set(SUBSAMPLING))],
        "smooth_bound": [StrOptions(set(SMOOTH_BOUNDS))],
        "aggregator": [StrOptions({"smooth_sensitivity"}), callable],
    }

    def __init__(
        self,
        n_clusters=3,
        subspace_dim=1,
        epsilon=1.0,
        delta=None,
        solver="ssc",
        n_subsets=None,
        subsampling="partition",
        smooth_bound="order_stat",
        aggregator="smooth_sensitivity",
        ledger=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.n_subsets = n_subsets
        self.subsampling = subsampling
        self.smooth_bound = smooth_bound
        self.aggregator = aggregator
        self.ledger = ledger
        self.random_state = random_state

    def neighbouring_relation(self):
        return "replace"

    def _configure(self, n, d):
        """(epsilon, delta, m, D) after checking every parameter against the public shape."""
        if n is None or d is None:
            raise ValueError(
                "SampleAggregateSubspaceClustering's plan needs the public shape "
                "(n_samples, n_features): n_subsets and delta=None depend on n, "
                "public under replace-one"
            )
        k = check_positive_int(self.n_clusters, "n_clusters")
        q = self.subspace_dim
        if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < d:
            raise ValueError(
                "subspace_dim must be an integer with 1 <= subspace_dim < "
                f"n_features={d}; got {q!r}"
            )
        if k > n:
            raise ValueError(f"n_clusters={k} exceeds n_samples={n}")
        eps = epsilon_param(self.epsilon)
        delta = default_delta(self.delta, n)
        m = max(4, n // (10 * k * q)) if self.n_subsets is None else self.n_subsets
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 2:
            raise ValueError(f"n_subsets must be an integer >= 2; got {m!r}")
        if n // m < k:
            raise ValueError(
                f"n_subsets={m} leaves fewer than n_clusters={k} points per subset (n_samples={n})"
            )
        check_choice(self.smooth_bound, "smooth_bound", SMOOTH_BOUNDS)
        check_choice(self.subsampling, "subsampling", SUBSAMPLING)
        agg = self.aggregator
        if isinstance(agg, str) or not callable(agg):
            if not (isinstance(agg, str) and agg == "smooth_sensitivity"):
                raise ValueError(
                    "aggregator must be 'smooth_sensitivity' or a callable "
                    "agg(Y, epsilon, delta, bounds, rng) -> (center, guarantee); "
                    f"got {agg!r}"
                )
        elif self.subsampling != "partition":
            raise ValueError(
                "a callable aggregator requires subsampling='partition' (each record "
                f"in one block); got subsampling={self.subsampling!r}"
            )
        make_solver(self.solver, k, q)  # ValueError/TypeError for an unknown solver
        return eps, delta, int(m), k * d * (d + 1) // 2

    def _warnings(self, n, eps, delta, m, D):
        """The guarantee's notes, from public values only (n is public under replace-one)."""
        warns = []
        if delta > 1.0 / n:
            warns.append(f"delta={delta:g} exceeds 1/n")
        if callable(self.aggregator):
            return warns
        if eps > 1:
            warns.append(
                "epsilon > 1 is outside the proven range of the smooth-sensitivity "
                "calibration (Nissim, Raskhodnikova & Smith 2007)"
            )
        floor = 4 * (D + math.log(2 / delta)) / math.sqrt(m)
        if eps < floor:
            warns.append(
                f"epsilon={eps:g} is too small for m={m} subsets "
                f"(< 4(D + ln(2/delta))/sqrt(m) = {floor:.3g}): the noise is "
                "of the order of the output diameter"
            )
        return warns

    def _aggregator_plan(self, m, D, eps, delta, d):
        """The callable aggregator's own plan (a Guarantee) when it states one, else None;
        ValueError when it is not a private replace-one guarantee within (epsilon, delta)."""
        plan_fn = getattr(self.aggregator, "plan", None)
        if not callable(plan_fn):
            return None
        with warnings.catch_warnings():  # its notes are raised once, when it runs
            warnings.simplefilter("ignore", PrivacyWarning)
            g = plan_fn(m, D, eps, delta, projector_box(d, self.n_clusters))
        _check_aggregator_guarantee(g, eps, delta)
        return g

    def _plan(self, n_samples, n_features):
        eps, delta, m, D = self._configure(n_samples, n_features)
        warns = self._warnings(n_samples, eps, delta, m, D)
        if callable(self.aggregator):
            g = self._aggregator_plan(m, D, eps, delta, n_features)
            if g is not None:
                return Guarantee(
                    g.epsilon,
                    g.delta,
                    g.kind,
                    g.neighbouring,
                    list(g.mechanisms),
                    warns + list(g.warnings),
                )
            acc = BudgetAccountant(eps, delta)
            acc.spend(
                f"1-cluster aggregator {_name(self.aggregator)} (its guarantee is "
                "checked after the run)",
                eps,
                delta,
            )
            return acc.guarantee("approx", "replace", warns)
        smooth_sensitivity_parameters(eps, delta, D)
        acc = BudgetAccountant(eps, delta)
        acc.spend(
            "Gaussian noise scaled by a smooth sensitivity bound (Nissim, Raskhodnikova "
            "& Smith 2007)",
            eps,
            delta,
        )
        return acc.guarantee("approx", "replace", warns)

    def _before_charge(self, shape, rng):
        """Draw the m index sets (public: they depend on n, m and the randomness only), so a
        failure to draw them happens before the charge."""
        n, d = shape
        _, _, m, _ = self._configure(n, d)
        if callable(self.aggregator):
            self._subsets = subsets(n, m, 1, "partition", rng)
        else:
            self._subsets = subsets(n, m, math.ceil(math.sqrt(m)), self.subsampling, rng)

    def _solve_blocks(self, X, idx, rng):
        k, q, d = self.n_clusters, self.subspace_dim, X.shape[1]
        sols = np.empty((len(idx), k, d, q))
        for i, rows in enumerate(idx):
            est = make_solver(self.solver, k, q, random_state=rng).fit(X[rows])
            sols[i] = self._k_subspaces(est, d, q, k, rng)
        return sols

    def _fit(self, X, rng):
        idx = self.__dict__.pop("_subsets")
        n, d = X.shape
        eps, delta, m, D = self._configure(n, d)
        warns = self._warnings(n, eps, delta, m, D)
        for w in warns:
            warnings.warn(w, PrivacyWarning, stacklevel=3)
        self.n_features_in_ = d
        if callable(self.aggregator):
            return self._fit_aggregator(X, rng, idx, eps, delta, m, D, warns)
        k, q = self.n_clusters, self.subspace_dim
        s = math.ceil(math.sqrt(m))
        alpha, beta = smooth_sensitivity_parameters(eps, delta, D)
        diameter = math.sqrt(2 * k * min(q, d - q))
        acct = BudgetAccountant(eps, delta)
        X = clip_l2(X, 1.0)
        sols = self._solve_blocks(X, idx, rng)
        dist = wasserstein_matrix(sols)
        i_star, t0 = centre_index(dist, s, diameter)
        S = smooth_bound(dist, s, beta, diameter, method=self.smooth_bound)
        order = rng.permutation(k)
        g = projector_vectors(sols[i_star][order]).ravel()
        # the smooth bound S depends on the data: it scales the noise but is not published
        acct.spend(
            "Gaussian noise scaled by a smooth sensitivity bound (Nissim, Raskhodnikova "
            "& Smith 2007)",
            eps,
            delta,
        )
        noisy = noisy_release(g, S, eps, delta, rng)
        self.subspaces_ = vectors_to_bases(noisy.reshape(k, -1), d, q)
        self.privacy_ = acct.guarantee("approx", "replace", warns)
        self.diagnostics_ = {
            "smooth_bound": S,
            "noise_scale": S / alpha,
            "centre_index": i_star,
            "n_subsets": m,
            "s": s,
            "t0": t0,
            "dim": D,
            "beta": beta,
            "alpha": alpha,
            "evaluation_only": True,
        }

    def _fit_aggregator(self, X, rng, idx, eps, delta, m, D, warns):
        """1-cluster aggregation of canonical block vectors (Nissim, Stemmer & Vadhan 2016);
        the callable spends the whole (epsilon, delta), charged before anything runs."""
        d = X.shape[1]
        k, q = self.n_clusters, self.subspace_dim
        X = clip_l2(X, 1.0)
        sols = self._solve_blocks(X, idx, rng)
        Y = canonical_block_vectors(sols)
        lo, hi = projector_box(d, k)
        out = self.aggregator(Y, eps, delta, (lo, hi), rng)
        try:
            center, guarantee = out
            center = np.asarray(center, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"aggregator must return (center, guarantee); got {type(out).__name__}"
            ) from None
        if center.shape != (D,) or not np.all(np.isfinite(center)):
            raise ValueError(
                f"aggregator returned a centre of shape {center.shape} (or non-finite"
                f" values); expected a finite vector of length D={D}"
            )
        _check_aggregator_guarantee(guarantee, eps, delta)
        for w in guarantee.warnings:
            warnings.warn(f"aggregator: {w}", PrivacyWarning, stacklevel=4)
        V = np.clip(center, lo, hi).reshape(k, -1)
        self.subspaces_ = vectors_to_bases(V, d, q)[rng.permutation(k)]
        kind = guarantee.kind
        if kind == "pure" and not callable(getattr(self.aggregator, "plan", None)):
            kind = "approx"  # pure eps-DP implies the planned (eps, delta)
        self.privacy_ = Guarantee(
            guarantee.epsilon,
            guarantee.delta,
            kind,
            guarantee.neighbouring,
            list(guarantee.mechanisms),
            warns + list(guarantee.warnings),
        )
        Yk = Y.reshape(m, k, -1)
        cost = ((Yk[:, :, None, :] - V[None, None, :, :]) ** 2).sum(-1)  # (m, k, k)
        agree = np.mean([np.array_equal(linear_sum_assignment(c)[1], np.arange(k)) for c in cost])
        self.diagnostics_ = {
            "n_subsets": m,
            "dim": D,
            "bounds": (lo, hi),
            "order_agreement": float(agree),
            "evaluation_only": True,
        }

    @staticmethod
    def _k_subspaces(est, d, q, k, rng):
        """The solver's (k, d, q) bases, padded with Haar subspaces if it returned fewer."""
        U = np.asarray(getattr(est, "subspaces_", np.empty((0, d, q))), dtype=float)
        if U.ndim != 3 or U.shape[1:] != (d, q) or len(U) > k:
            raise ValueError(
                f"solver returned subspaces_ of shape {U.shape}; expected (<= {k}, {d}, {q})"
            )
        if len(U) < k:
            U = np.concatenate([U, haar_stiefel(d, q, rng, size=k - len(U))])
        return U


def _name(agg):
    return getattr(agg, "__name__", type(agg).__name__)


def _check_aggregator_guarantee(guarantee, eps, delta):
    """ValueError unless ``guarantee`` is a private replace-one Guarantee within (eps, delta)."""
    if (
        not isinstance(guarantee, Guarantee)
        or guarantee.kind not in ("pure", "approx")
        or guarantee.neighbouring != "replace"
        or guarantee.epsilon > eps * (1 + _RTOL)
        or guarantee.delta > delta * (1 + _RTOL)
    ):
        raise ValueError(
            "aggregator must give a 'replace' Guarantee within the charged "
            f"(epsilon, delta) = ({eps}, {delta:g}); got {guarantee!r}"
        )
