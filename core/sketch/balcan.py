"""DPHD: private k-means in high dimension (Balcan, Dick, Liang, Mou & Zhang, ICML 2017).

1. Clip each record to the public ball (centre c, radius r) -- free, per record.
2. Project with a data-independent Johnson-Lindenstrauss matrix to p dimensions (Sec. 3:
   p = O(log n); the default is a public function of d, and of n only under replace-one, where n
   is public) and clip each projected record to the cube [-R, R]^p, R = 2 r / sqrt(p).
3. Candidate centres (Sec. 3, Alg. 2, the private partition): a randomly shifted grid is
   refined by bisection, one axis per level; a cell is kept when its noisy count clears a
   public threshold and refined while its noisy count is large (the private prefix tree of
   :mod:`.prefix_tree`). The candidates are the kept leaf cells' centres, plus the centres of a
   weighted k-means on them (weights = noisy counts; post-processing of released values).
4. Choice of k candidates (Sec. 3, Alg. 3, private local search after Gupta et al. 2010): from
   the k-means start S_0, ``n_swaps`` exponential-mechanism swaps on the k-means cost, then an
   exponential mechanism picks one of S_0..S_T. The per-record cost is truncated at tau^2,
   tau = r / 2 (public), so the cost moves by at most tau^2 when a record is added or removed.
5. Recovery (Sec. 3, Alg. 4): each record joins its nearest chosen candidate in the projection;
   noisy counts and noisy sums of the clipped records in the original space give the centres.
6. ``n_refine`` further noisy Lloyd rounds in the original space (ours: records join their
   nearest recovered centre; noisy counts and sums again). On UCI Letter at epsilon = 1, k = 8 /
   16 / 64, two rounds took the ratio to k-means++ from 1.24 / 1.45 / 1.97 to 1.12 / 1.29 / 1.74.

Budget (``shares`` = partition, local search, recovery; default (0.2, 0.1, 0.7) of epsilon):
the local search's share is pure epsilon, split evenly over its T + 1 exponential mechanisms
(range-based, Dong, Durfee & Rogers 2020: utilities move one way by <= tau^2 under add/remove,
range 2 tau^2 under replace-one). The Gaussian steps (partition counts, recovery counts and
sums) share (epsilon_g, delta), epsilon_g = (1 - search share) * epsilon, composed exactly as
mu-GDP: mu^2 split between partition and recovery in the ratio of their shares, the
recovery's mu^2 evenly over its 1 + ``n_refine`` rounds and, in each, between counts (1/5) and
sums (4/5). Total: basic composition.

Deviations from the paper (ours, stated): Gaussian noise throughout (the paper's analysis uses
Laplace counts); a binary (axis-by-axis) refinement instead of 2^p children per cell, one grid
shift instead of several; the local search is seeded by k-means on the noisy partition and runs
few swaps (the paper's O(k log n) iterations at epsilon / T each are close to uniform choices at
practical epsilon); the swap pool is the leaf cells (not every cell of every level); the
noisy Lloyd rounds of step 6.

References
----------
Balcan, M.-F., Dick, T., Liang, Y., Mou, W. and Zhang, H. (2017). Differentially private
    clustering in high-dimensional Euclidean spaces. ICML 2017, Sec. 3 (Algorithms 1-4).
Gupta, A., Ligett, K., McSherry, F., Roth, A. and Talwar, K. (2010). Differentially private
    combinatorial optimization. SODA 2010, Sec. 4 (private local search for k-median).
Dong, J., Durfee, D. and Rogers, R. (2020). Optimal differential privacy composition for
    exponential mechanisms. ICML 2020 (range-based exponential mechanism).
Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. J. R. Stat. Soc. B 84(1),
    3-37, Cor. 3.3.
"""

import math

import numpy as np

from ..constraints import (
    BOUNDS,
    NONNEGATIVE_INT,
    POSITIVE_DELTA,
    POSITIVE_INT,
    RELATION,
    Interval,
    Real,
)
from ..estimator import (
    CenterPredictorMixin,
    PrivateEstimator,
    check_choice,
    check_positive_int,
    delta_param,
    epsilon_param,
)
from ..privacy import BudgetAccountant, exponential_mechanism, jl_matrix
from ..privacy._validation import check_rng
from .lsh_coreset import KEEP_SIGMAS, LEAVES_PER_CLUSTER, weighted_kmeans
from .prefix_tree import gdp_mu, grow_tree, noisy_counts
from .public_ball import (
    BallRecordsMixin,
    back_to_region,
    clip_records,
    noisy_group_sums,
    project_centred,
    public_ball,
)

TRUNCATION = 0.5  # tau = TRUNCATION * r
CUBE = 2.0  # projected records clipped to [-R, R]^p, R = CUBE * r / sqrt(p)
RECOVERY_COUNT_SHARE = 0.2
DEFAULT_PROJECTION = 8  # p under add/remove (n private): min(d, 8)
LEVELS_PER_AXIS = 3  # default depth L = LEVELS_PER_AXIS * p
_CHUNK = 1 << 21


def default_projection_dim(n_features, n_samples=None):
    """JL dimension p: min(d, ceil(log2(n) / 2)) (at least 2) when n is public (replace-one),
    min(d, 8) otherwise -- a public function of (d, n) as in Sec. 3 (p = O(log n))."""
    if n_samples is None:
        return min(n_features, DEFAULT_PROJECTION)
    return min(n_features, max(2, math.ceil(math.log2(max(n_samples, 2)) / 2.0)))


def balcan_noise(epsilon, delta, shares, depth, radius, tau2, n_swaps, neighbouring, rounds=1):
    """(count sigma of the partition, recovery count sigma, recovery sum sigma -- per round of
    ``rounds`` noisy-mean rounds --, EM epsilon per step, EM range) and the spends of a DPHD
    fit; see the module docstring."""
    part, search, rec = shares
    replace = neighbouring == "replace"
    eps_em = search * epsilon
    mu = gdp_mu(epsilon - eps_em, delta)
    mu_part2 = mu * mu * part / (part + rec)
    mu_rec2 = (mu * mu - mu_part2) / rounds
    count_l2 = math.sqrt(2.0) if replace else 1.0
    sigma_tree = count_l2 * math.sqrt(depth + 1) / math.sqrt(mu_part2)
    sigma_rc = count_l2 / math.sqrt(RECOVERY_COUNT_SHARE * mu_rec2)
    sigma_rs = (2.0 if replace else 1.0) * radius / math.sqrt((1 - RECOVERY_COUNT_SHARE) * mu_rec2)
    em_range = (2.0 if replace else 1.0) * tau2
    eps_step = eps_em / (n_swaps + 1)
    spends = [
        (
            f"Gaussian: partition counts on {depth + 1} levels (sigma {sigma_tree:.4g}), "
            f"{rounds} rounds of recovery counts (sigma {sigma_rc:.4g}) and sums (sigma "
            f"{sigma_rs:.4g}), "
            f"composed as {mu:.4g}-GDP",
            epsilon - eps_em,
            delta,
            None,
        )
    ]
    spends += [
        (f"exponential mechanism, local-search swap {t + 1}", eps_step, 0.0, em_range)
        for t in range(n_swaps)
    ]
    spends.append(
        ("exponential mechanism, choice among the local-search solutions", eps_step, 0.0, em_range)
    )
    return (sigma_tree, sigma_rc, sigma_rs, eps_step, em_range), spends


def grid_bits(Y, low, side, depth):
    """Hash bits of the shifted-grid bisection: level l halves axis (l - 1) mod p of the cell."""
    p = Y.shape[1]
    t = np.clip((Y - low) / side, 0.0, 1.0 - 1e-12)
    levels = np.arange(depth)
    axis, m = levels % p, levels // p
    return (np.floor(t[:, axis] * 2.0 ** (m + 1)).astype(np.int64) % 2).astype(bool)


def cell_centres(tree, low, side, p):
    """Centres of the tree's leaf cells in the projected space (public: from the tree alone)."""
    lo = [np.broadcast_to(low, (1, p)).copy()]
    width = [np.full((1, p), side)]
    for level in range(1, len(tree.counts)):
        axis = (level - 1) % p
        par, bit = tree.parents[level], tree.bits[level]
        low, w = lo[-1][par].copy(), width[-1][par].copy()
        w[:, axis] /= 2.0
        low[:, axis] += bit * w[:, axis]
        lo.append(low)
        width.append(w)
    return np.concatenate(
        [(low + w / 2.0)[m] for low, w, m in zip(lo, width, tree.is_leaf, strict=True)]
    )


def _truncated_sq(Y, C, tau2):
    d2 = (Y * Y).sum(1)[:, None] - 2.0 * Y @ C.T + (C * C).sum(1)[None, :]
    return np.minimum(np.maximum(d2, 0.0), tau2)


def solution_cost(Y, C, tau2):
    """Truncated k-means cost sum_x min(min_c ||y - c||^2, tau^2) of centres C."""
    rows = max(1, _CHUNK // max(1, C.shape[0]))
    return float(
        sum(
            _truncated_sq(Y[i : i + rows], C, tau2).min(1).sum() for i in range(0, Y.shape[0], rows)
        )
    )


def swap_costs(Y, pool, chosen, tau2):
    """Truncated cost of every swap (i, j): chosen[i] replaced by pool[j]; shape (k, M).

    With a(x), d1(x), d2(x) the nearest chosen centre and the two smallest truncated distances,
    cost(i, j) = sum_x min(D[x, j], d1(x)) + sum_{a(x) = i} [min(D[x, j], d2(x)) -
    min(D[x, j], d1(x))]: O(n M) per step."""
    k, M = len(chosen), pool.shape[0]
    base, corr = np.zeros(M), np.zeros((k, M))
    rows = max(1, _CHUNK // max(1, M))
    for i in range(0, Y.shape[0], rows):
        D = _truncated_sq(Y[i : i + rows], pool, tau2)
        DS = D[:, chosen]
        a = np.argmin(DS, axis=1)
        part = (
            np.partition(DS, 1, axis=1)
            if k > 1
            else np.concatenate([DS, np.full_like(DS, tau2)], axis=1)
        )
        d1, d2 = part[:, :1], part[:, 1:2]
        m1 = np.minimum(D, d1)
        base += m1.sum(0)
        order = np.argsort(a, kind="stable")
        groups, starts = np.unique(a[order], return_index=True)
        corr[groups] += np.add.reduceat((np.minimum(D, d2) - m1)[order], starts, axis=0)
    return base[None, :] + corr


def choose_swap(Y, pool, chosen, tau2, epsilon, em_range, rng, size=None):
    """One private local-search step: the exponential mechanism (range-based, utility = -cost,
    range ``em_range``) over the swaps (i, j), pool[j] not already chosen. Returns flat indices
    i * M + j (``size=N``: N independent choices, for audits)."""
    costs = swap_costs(Y, pool, chosen, tau2)
    costs[:, chosen] = np.inf  # excluded independently of the data
    util = -(costs - np.min(costs)).ravel()
    return exponential_mechanism(
        util, epsilon, em_range, check_rng(rng), size=size, range_based=True
    )


def nearest_centre(X, s, centre, centres):
    """Index of the nearest of ``centres`` (original space) to each clipped record
    centre + s_i (x_i - centre); dense or sparse X."""
    M = centres - centre
    cross = s * (np.asarray(X @ M.T) - centre @ M.T).T
    return np.argmin((M * M).sum(1)[:, None] - 2.0 * cross, axis=0)


def recovery_stats(X, s, centre, labels, k, sigma_count, sigma_sum, rng, size=None):
    """Noisy counts (k,) and noisy sums (k, d) of the clipped, centred records per cluster
    (Gaussian); ``size=N`` prepends a batch axis."""
    return (
        noisy_counts(labels, k, sigma_count, "gaussian", rng, size=size),
        noisy_group_sums(X, s, centre, labels, k, sigma_sum, "gaussian", rng, size=size),
    )


class BalcanKMeans(BallRecordsMixin, CenterPredictorMixin, PrivateEstimator):
    """DPHD: private k-means by JL projection, private candidates, private local search and
    noisy-mean recovery (Balcan, Dick, Liang, Mou & Zhang, ICML 2017).

    Parameters
    ----------
    n_clusters : int, default=8
    epsilon : float, default=1.0
    delta : float, default=1e-6
        (epsilon, delta)-DP: the partition counts and the recovery are Gaussian.
    bounds : (lo, hi) or None
        Public box; exactly one of ``bounds`` and ``radius``. Sparse records need 0 in the box.
    radius : float or None
        Public radius of a ball around the origin holding the records (e.g. 1 for
        L2-normalised document vectors).
    projection_dim : int or None, default=None
        JL dimension p; None = :func:`default_projection_dim` (public).
    max_depth : int or None, default=None
        Partition levels L (one axis halved per level); None = 3 p.
    n_swaps : int, default=5
        Local-search swaps T (each an exponential mechanism), >= 0.
    n_refine : int, default=2
        Noisy Lloyd rounds after the recovery, in the original space (ours; >= 0); the
        recovery's budget is split evenly over its 1 + ``n_refine`` rounds.
    shares : (float, float, float), default=(0.2, 0.1, 0.7)
        Budget shares of the partition, the local search and the recovery (sum 1).
    neighbouring : {"add_remove", "replace"}, default="add_remove"
    n_init : int, default=10
        k-means++ restarts of the start S_0 on the noisy partition (post-processing).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the projection, the grid shift, the noise and the selections.
    ledger : Ledger or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Released centres.
    privacy_ : Guarantee
        (epsilon, delta)-DP, kind "approx".

    Notes
    -----
    Accepts dense arrays and scipy.sparse matrices (e.g. document-word counts). No labels of
    the private records are released (no ``fit_predict``).

    References
    ----------
    Balcan, M.-F., Dick, T., Liang, Y., Mou, W. and Zhang, H. (2017). Differentially private
        clustering in high-dimensional Euclidean spaces. ICML 2017, Sec. 3 (Algorithms 1-4).
    Gupta, A., Ligett, K., McSherry, F., Roth, A. and Talwar, K. (2010). Differentially private
        combinatorial optimization. SODA 2010, Sec. 4.

    Examples
    --------
    >>> from privclust.core import BalcanKMeans
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> est = BalcanKMeans(n_clusters=3, epsilon=1.0, bounds=(-10, 10), random_state=0).fit(data.X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> print(est.privacy_.summary())
    (1.0, 1e-06)-DP, approximate, add/remove-one neighbours
    """

    _released = ("cluster_centers_",)

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "delta": [POSITIVE_DELTA],
        "bounds": [None, BOUNDS],
        "radius": [None, Interval(Real, 0, None, closed="neither")],
        "projection_dim": [None, POSITIVE_INT],
        "max_depth": [None, POSITIVE_INT],
        "n_swaps": [NONNEGATIVE_INT],
        "n_refine": [NONNEGATIVE_INT],
        "shares": ["array-like"],
        "neighbouring": [RELATION],
        "n_init": [POSITIVE_INT],
    }

    def __init__(
        self,
        n_clusters=8,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        radius=None,
        projection_dim=None,
        max_depth=None,
        n_swaps=5,
        n_refine=2,
        shares=(0.2, 0.1, 0.7),
        neighbouring="add_remove",
        n_init=10,
        random_state=None,
        ledger=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.radius = radius
        self.projection_dim = projection_dim
        self.max_depth = max_depth
        self.n_swaps = n_swaps
        self.n_refine = n_refine
        self.shares = shares
        self.neighbouring = neighbouring
        self.n_init = n_init
        self.random_state = random_state
        self.ledger = ledger

    def _settings(self, n_samples, n_features):
        """Every public quantity of a fit, validated."""
        k = check_positive_int(self.n_clusters, "n_clusters")
        check_positive_int(self.n_init, "n_init")
        n_swaps = check_positive_int(self.n_swaps, "n_swaps", minimum=0)
        eps = epsilon_param(self.epsilon)
        delta = delta_param(self.delta, positive=True)
        check_choice(self.neighbouring, "neighbouring", ("add_remove", "replace"))
        try:
            shares = tuple(float(v) for v in self.shares)
        except (TypeError, ValueError):
            raise ValueError(f"shares must be three numbers, got {self.shares!r}") from None
        if len(shares) != 3 or not all(v > 0 for v in shares) or abs(sum(shares) - 1) > 1e-9:
            raise ValueError(
                f"shares must be three positive numbers summing to 1 (partition, "
                f"local search, recovery), got {self.shares!r}"
            )
        if n_features is None:
            raise ValueError(
                "BalcanKMeans's plan needs n_features (the public region has one side per feature)"
            )
        if self.projection_dim is None:
            p = default_projection_dim(n_features, n_samples)
        else:
            p = check_positive_int(self.projection_dim, "projection_dim")
        depth = (
            LEVELS_PER_AXIS * p
            if self.max_depth is None
            else check_positive_int(self.max_depth, "max_depth")
        )
        lo, hi, centre, r = public_ball(self.bounds, self.radius, n_features)
        tau2 = (TRUNCATION * r) ** 2
        n_refine = check_positive_int(self.n_refine, "n_refine", minimum=0)
        scales, spends = balcan_noise(
            eps, delta, shares, depth, r, tau2, n_swaps, self.neighbouring, rounds=1 + n_refine
        )
        return dict(
            k=k,
            p=p,
            depth=depth,
            n_swaps=n_swaps,
            n_refine=n_refine,
            region=(lo, hi, centre, r),
            tau2=tau2,
            scales=scales,
            spends=spends,
            eps=eps,
            delta=delta,
        )

    def _account(self, s):
        acc = BudgetAccountant(s["eps"], s["delta"])
        for name, e, dl, sens in s["spends"]:
            acc.spend(name, e, dl, sens)
        return acc

    def _public_n(self, n_samples):
        return n_samples if self.neighbouring == "replace" else None

    def _plan(self, n_samples, n_features):
        return self._account(self._settings(n_samples, n_features)).guarantee(
            "approx", self.neighbouring
        )

    def _fit(self, X, rng):
        n, d = X.shape
        st = self._settings(self._public_n(n), d)
        k, p, depth, tau2 = st["k"], st["p"], st["depth"], st["tau2"]
        lo, hi, centre, r = st["region"]
        sigma_tree, sigma_rc, sigma_rs, eps_step, em_range = st["scales"]
        acc = self._account(st)
        # public draws: the JL matrix and the grid shift
        G = jl_matrix(p, d, rng).T
        R = CUBE * r / math.sqrt(p)
        low = -R - rng.uniform(0.0, R, size=p)
        side = 3.0 * R
        Xb, s = clip_records(X, lo, hi, centre, r)
        Y = np.clip(project_centred(Xb, s, centre, G), -R, R)
        # candidates: the private partition
        keep = KEEP_SIGMAS * sigma_tree
        tree = grow_tree(
            grid_bits(Y, low, side, depth),
            sigma_tree,
            "gaussian",
            keep,
            lambda root: max(2.0 * keep, root / (LEAVES_PER_CLUSTER * k)),
            rng,
        )
        cells = cell_centres(tree, low, side, p)
        start = weighted_kmeans(cells, tree.leaf_counts, k, np.zeros(p), self.n_init, rng)
        pool = np.concatenate([start, cells])
        chosen = np.arange(k)
        # private local search, then a private choice among the solutions
        solutions = [chosen.copy()]
        for _ in range(st["n_swaps"]):
            if pool.shape[0] <= k:
                break
            flat = int(choose_swap(Y, pool, chosen, tau2, eps_step, em_range, rng))
            chosen = chosen.copy()
            chosen[flat // pool.shape[0]] = flat % pool.shape[0]
            solutions.append(chosen)
        costs = np.array([solution_cost(Y, pool[c], tau2) for c in solutions])
        pick = int(
            exponential_mechanism(-(costs - costs.min()), eps_step, em_range, rng, range_based=True)
        )
        centres_p = pool[solutions[pick]]
        # recovery in the original space
        labels = np.argmin(_truncated_sq(Y, centres_p, np.inf), axis=1)
        floor = max(1.0, 2.0 * sigma_rc)
        for round_ in range(1 + st["n_refine"]):
            counts, sums = recovery_stats(Xb, s, centre, labels, k, sigma_rc, sigma_rs, rng)
            centres = back_to_region(sums / np.maximum(counts, floor)[:, None], lo, hi, centre, r)
            if round_ < st["n_refine"]:
                labels = nearest_centre(Xb, s, centre, centres)
        self.cluster_centers_ = centres
        self.privacy_ = acc.guarantee("approx", self.neighbouring)
        self.n_features_in_ = d
