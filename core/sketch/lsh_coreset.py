"""Private k-means from an LSH prefix-tree coreset (Chang & Kamath 2021, Google's
differential-privacy ``learning/clustering``).

1. Clip every record to the public ball (centre c, radius r; a box gives its centre and half
   diagonal) -- free, per record.
2. Hash: L SimHash bits sign(<x - c, g_l>), g_l ~ N(0, I_d), drawn from the fit's generator,
   independently of the data.
3. Private prefix tree (:mod:`.prefix_tree`): level by level, noisy counts of the two children of
   every branching bucket; children below a public threshold are pruned, those above a second
   one are refined, the rest are leaves. Thresholds (ours, public): keep a bucket when its noisy
   count is >= 2 noise sd; refine it while its noisy count is >= the largest of 4 noise sd, the
   count at which a leaf mean's noise (sum sd * sqrt(d) / count) is r / 4, and the root's noisy
   count / (4 k); chosen on UCI Letter.
4. Each leaf releases a noisy sum of its clipped records; its coreset point is noisy sum / noisy
   count (back in the ball), weighted by the noisy count.
5. scikit-learn's k-means++ / Lloyd on the weighted coreset (post-processing) gives the centres.

Budget: a share ``count_share`` of it pays the L + 1 levels of counts (the leaves' weights are
their counts), the rest the leaves' sums. With ``mechanism="gaussian"`` (default; Google's
published benchmark runs at delta = 1e-6) everything is one composition of
Gaussian mechanisms, accounted exactly as mu-GDP: mu^2 = mu_counts^2 + mu_sums^2,
mu_counts^2 = count_share * mu^2 where mu is the GDP parameter of (epsilon, delta).
``mechanism="laplace"`` is pure epsilon-DP by basic composition (count_share * epsilon split
evenly over the levels; sums with L1 sensitivity from the box, or r sqrt(d) for a ball).

References
----------
Chang, A. and Kamath, P. (2021). Practical differentially private clustering. Google Research
    (blog post and the open-source ``learning/clustering`` library: LSH tree, private coreset,
    k-means++ on the coreset; budget split between counts and sums).
Charikar, M. S. (2002). Similarity estimation techniques from rounding algorithms. STOC 2002
    (SimHash).
Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. J. R. Stat. Soc. B 84(1),
    3-37, Cor. 3.3.
"""

import math

import numpy as np
from sklearn.cluster import KMeans

from ..constraints import BOUNDS, DELTA, POSITIVE_INT, RELATION, SHARE, Interval, Real, StrOptions
from ..estimator import (
    CenterPredictorMixin,
    PrivateEstimator,
    check_choice,
    check_positive_int,
    delta_param,
    epsilon_param,
)
from ..privacy import BudgetAccountant
from .prefix_tree import NOISES, RecordPrefixes, add_noise, gdp_mu, grow_from_counts
from .public_ball import (
    BallRecordsMixin,
    back_to_region,
    clip_records,
    group_sums,
    project_centred,
    public_ball,
)

#: public tuning constants (ours, chosen on UCI Letter; see benchmarks/sketch/lsh_balcan.py)
KEEP_SIGMAS = 2.0  # a bucket is kept when its noisy count is >= KEEP_SIGMAS noise sd
LEAF_NOISE = 0.25  # a bucket is refined only while its mean's noise is <= LEAF_NOISE * r
LEAVES_PER_CLUSTER = 4  # ... and while it holds more than n / (LEAVES_PER_CLUSTER * k) records
DEFAULT_DEPTH = 20  # tree depth L (hash bits); 13-32 measured on Letter, 20 best


def lsh_noise(epsilon, delta, depth, count_share, radius, sum_l1, mechanism, neighbouring):
    """Noise scales (counts, sums) and the spends of an LSH-coreset fit.

    Counts: one vector per level (root included, ``depth + 1`` levels), sensitivity 1 under
    add/remove (L2 sqrt(2), L1 2 under replace-one). Sums: the leaves are disjoint, so the leaf
    sums have L2 sensitivity r (2 r under replace-one) and L1 sensitivity ``sum_l1`` (doubled).
    Returns (count_scale, sum_scale, spends) with spends a list of (name, epsilon, delta,
    sensitivity)."""
    levels = depth + 1
    replace = neighbouring == "replace"
    if mechanism == "gaussian":
        mu = gdp_mu(epsilon, delta)
        mu_c, mu_s = mu * math.sqrt(count_share), mu * math.sqrt(1.0 - count_share)
        count_sens = math.sqrt(2.0) if replace else 1.0
        sum_sens = (2.0 if replace else 1.0) * radius
        sigma_c, sigma_s = count_sens * math.sqrt(levels) / mu_c, sum_sens / mu_s
        name = (
            f"Gaussian noisy counts on {levels} tree levels (sigma {sigma_c:.4g}) and leaf "
            f"sums (sigma {sigma_s:.4g}), composed as {mu:.4g}-GDP"
        )
        return sigma_c, sigma_s, [(name, epsilon, delta, None)]
    eps_c, eps_s = count_share * epsilon, (1.0 - count_share) * epsilon
    count_sens = 2.0 if replace else 1.0
    sum_sens = (2.0 if replace else 1.0) * sum_l1
    spends = [
        (f"Laplace noisy counts, tree level {lv}", eps_c / levels, 0.0, count_sens)
        for lv in range(levels)
    ]
    spends.append(("Laplace noisy leaf sums", eps_s, 0.0, sum_sens))
    return count_sens * levels / eps_c, sum_sens / eps_s, spends


class LSHCoresetKMeans(BallRecordsMixin, CenterPredictorMixin, PrivateEstimator):
    """Private k-means by an LSH prefix-tree coreset (Chang & Kamath 2021).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centres k.
    epsilon : float, default=1.0
        Privacy parameter of the whole fit.
    delta : float, default=1e-6
        Of the Gaussian mechanism; must be 0 with ``mechanism="laplace"``.
    bounds : (lo, hi) or None
        Public box (scalars or length-d arrays). Exactly one of ``bounds`` and ``radius``.
    radius : float or None
        Public radius of a ball around the origin holding the records.
    max_depth : int, default=20
        Tree depth L (number of hash bits, <= 62); every level is paid for (its noisy counts).
    count_share : float in (0, 1), default=0.2
        Share of the budget (of mu^2 for Gaussian noise, of epsilon for Laplace) spent on the
        tree's counts; the rest pays the leaves' sums.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        Gaussian: (epsilon, delta)-DP, exact GDP composition. Laplace: pure epsilon-DP.
    neighbouring : {"add_remove", "replace"}, default="add_remove"
    n_init : int, default=10
        k-means++ restarts on the coreset (post-processing).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the hash, the noise and the k-means on the coreset.
    ledger : Ledger or None, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Released centres.
    coreset_points_ : ndarray of shape (m, d)
        Released: the noisy leaf means (the private coreset).
    coreset_weights_ : ndarray of shape (m,)
        Released: the leaves' noisy counts.
    privacy_ : Guarantee

    Notes
    -----
    Accepts dense arrays and scipy.sparse matrices. Labels of the private records are never
    released (no ``fit_predict``); ``predict`` assigns new rows to the released centres. If fewer than k leaves survive, the missing centres repeat
    the coreset's centres (post-processing); with no leaf at all every centre is the ball's centre.

    References
    ----------
    Chang, A. and Kamath, P. (2021). Practical differentially private clustering. Google
        Research (private LSH-tree coreset; k-means++ on the coreset).
    Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. J. R. Stat. Soc. B
        84(1), 3-37, Cor. 3.3 (composition).

    Examples
    --------
    >>> from privclust.core import LSHCoresetKMeans
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> est = LSHCoresetKMeans(n_clusters=3, epsilon=1.0, bounds=(-10, 10), random_state=0).fit(data.X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> print(est.privacy_.summary())
    (1.0, 1e-06)-DP, approximate, add/remove-one neighbours
    """

    _released = ("cluster_centers_", "coreset_points_", "coreset_weights_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "delta": [DELTA],
        "bounds": [None, BOUNDS],
        "radius": [None, Interval(Real, 0, None, closed="neither")],
        "max_depth": [POSITIVE_INT],
        "count_share": [SHARE],
        "mechanism": [StrOptions(set(NOISES))],
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
        max_depth=DEFAULT_DEPTH,
        count_share=0.2,
        mechanism="gaussian",
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
        self.max_depth = max_depth
        self.count_share = count_share
        self.mechanism = mechanism
        self.neighbouring = neighbouring
        self.n_init = n_init
        self.random_state = random_state
        self.ledger = ledger

    # ---- public -----------------------------------------------------------------------------
    def _settings(self, n_features):
        """Every public quantity of a fit, validated: (k, depth, ball, scales, spends)."""
        k = check_positive_int(self.n_clusters, "n_clusters")
        check_positive_int(self.n_init, "n_init")
        eps = epsilon_param(self.epsilon)
        check_choice(self.mechanism, "mechanism", NOISES)
        check_choice(self.neighbouring, "neighbouring", ("add_remove", "replace"))
        if self.mechanism == "gaussian":
            delta = delta_param(self.delta, positive=True)
        elif self.delta not in (0, 0.0):
            raise ValueError(
                f"delta must be 0 with mechanism='laplace' (pure DP), got {self.delta!r}"
            )
        else:
            delta = 0.0
        depth = check_positive_int(self.max_depth, "max_depth")
        if depth > 62:
            raise ValueError(f"max_depth must be <= 62, got {depth}")
        share = self.count_share
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float, np.floating))
            or not 0.0 < float(share) < 1.0
        ):
            raise ValueError(f"count_share must be a number in (0, 1), got {share!r}")
        if n_features is None:
            raise ValueError(
                "LSHCoresetKMeans's plan needs n_features (the public region has "
                "one side per feature)"
            )
        lo, hi, centre, r = public_ball(self.bounds, self.radius, n_features)
        sum_l1 = float(np.sum((hi - lo) / 2.0)) if lo is not None else r * math.sqrt(n_features)
        scales = lsh_noise(
            eps, delta, depth, float(share), r, sum_l1, self.mechanism, self.neighbouring
        )
        return k, depth, (lo, hi, centre, r), scales, eps, delta

    def _plan(self, n_samples, n_features):
        *_, (_, _, spends), eps, delta = self._settings(n_features)
        return self._account(spends, eps, delta).guarantee(self._kind(), self.neighbouring)

    def _kind(self):
        return "approx" if self.mechanism == "gaussian" else "pure"

    @staticmethod
    def _account(spends, eps, delta):
        acc = BudgetAccountant(eps, delta)
        for name, e, dl, sens in spends:
            acc.spend(name, e, dl, sens)
        return acc

    # ---- on the data ------------------------------------------------------------------------
    def _fit(self, X, rng):
        def records(ball, hyperplanes):
            Xb, s = clip_records(X, *ball)
            prefixes = RecordPrefixes(project_centred(Xb, s, ball[2], hyperplanes) > 0.0)
            return prefixes, lambda tree, m: group_sums(Xb, s, ball[2], tree.record_leaf, m)

        self._grow(records, X.shape[1], rng)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        the same run, each level's bucket counts and the leaves' sums added over the
        partitions (:class:`~privclust.core.sketch.partitioned.PartitionPrefixes`), every
        noise draw made here."""
        from .partitioned import PartitionPrefixes

        def records(ball, hyperplanes):
            prefixes = PartitionPrefixes(parts, ball, hyperplanes)
            return prefixes, prefixes.leaf_sums

        self._grow(records, parts.n_features, rng)

    def _grow(self, records, d, rng):
        """The fit, reading the records through ``records(ball, hyperplanes)`` -> (bucket
        counter for :func:`~.prefix_tree.grow_from_counts`, exact leaf sums of a tree)."""
        k, depth, ball, (count_scale, sum_scale, spends), eps, delta = self._settings(d)
        lo, hi, centre, r = ball
        hyperplanes = rng.normal(size=(d, depth))  # SimHash, data-independent
        acc = self._account(spends, eps, delta)
        prefixes, leaf_sums = records(ball, hyperplanes)
        noise_sd = count_scale * (1.0 if self.mechanism == "gaussian" else math.sqrt(2.0))
        sum_sd = sum_scale * (1.0 if self.mechanism == "gaussian" else math.sqrt(2.0))
        keep = KEEP_SIGMAS * noise_sd
        floor = max(2.0 * keep, sum_sd * math.sqrt(d) / (LEAF_NOISE * r))
        tree = grow_from_counts(
            prefixes,
            count_scale,
            self.mechanism,
            keep,
            lambda root: max(floor, root / (LEAVES_PER_CLUSTER * k)),
            rng,
        )
        weights = tree.leaf_counts
        m = weights.size
        sums = add_noise(leaf_sums(tree, m), sum_scale, self.mechanism, rng)
        points = back_to_region(sums / np.maximum(weights, keep)[:, None], lo, hi, centre, r)
        self.coreset_points_, self.coreset_weights_ = points, weights
        self.cluster_centers_ = weighted_kmeans(points, weights, k, centre, self.n_init, rng)
        self.privacy_ = acc.guarantee(self._kind(), self.neighbouring)
        self.n_features_in_ = d


def weighted_kmeans(points, weights, k, default, n_init, rng):
    """k centres from scikit-learn's k-means++ / Lloyd on weighted points (post-processing);
    fewer than k points: the centres found are repeated; none: every centre is ``default``."""
    m = points.shape[0]
    if m == 0:
        return np.tile(default, (k, 1))
    k_eff = min(k, m)
    km = KMeans(n_clusters=k_eff, n_init=n_init, random_state=int(rng.integers(2**31 - 1)))
    centres = km.fit(points, sample_weight=weights).cluster_centers_
    return centres[np.arange(k) % k_eff]
