"""Private per-feature bounds from a noisy histogram over geometric buckets.

The order of magnitude of a feature is easier to find privately than its quantiles: for each
feature j, count the records in the signed geometric buckets

    ... (-2^(e+1), -2^e], ..., (-2^lo, 2^lo) (the zero bucket), [2^lo, 2^(lo+1)), ..., [2^e, 2^(e+1))

for the exponents ``lo <= e <= hi`` of a PUBLIC range (records beyond +-2^(hi+1) fall into the
outermost buckets, records of magnitude below 2^lo into the zero bucket), and add Laplace noise
to every count (the buckets are public, so empty buckets get noise too). This is the idea of the
bounds helpers of Tumult Analytics (``get_bounds``) and OpenDP: a histogram over powers of two,
then a bound read off the noisy counts. The bound rule below is ours.

Privacy. Each record lies in one bucket per feature, so replacing a record changes at most two
counts of each feature's histogram by 1 (L1 sensitivity 2; 1 under add/remove). The d histograms
share epsilon evenly, epsilon / d each, Laplace scale b = sensitivity * d / epsilon (basic
composition, Dwork & Roth 2014, Thm 3.16; equivalently one Laplace mechanism on all d * K counts
with L1 sensitivity 2d). The guarantee is pure epsilon-DP. (Gaussian noise would exploit the L2
sensitivity sqrt(2d), sqrt(d) under add/remove, at the price of a delta; not used here, so the box
costs pure epsilon like the other bounds.)

Bound rule (post-processing of the noisy counts, free):

1. the mode bucket m (largest noisy count) is *found* when its noisy count clears the keep
   threshold t = b ln(K / (2 beta)) (an empty bucket clears it with probability at most
   beta / K, so a column of noise alone is found with probability at most beta); a column that
   is not found gets the whole public range;
2. from m the box grows bucket by bucket, on each side, while the next noisy count clears the
   extension threshold t_ext = b ln(10) (an empty neighbour extends it with probability 5 %);
3. any other bucket clearing t (mass beyond a gap of empty buckets, e.g. zeros and large values)
   also joins the box;

the released box is the outer edges of the first and last buckets kept, so it holds every record
of every kept bucket.

References
----------
Dwork, C., McSherry, F., Nissim, K. and Smith, A. (2006). Calibrating noise to sensitivity in
    private data analysis. TCC 2006 (the Laplace mechanism; histograms, Sec. 3).
Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy. Sec. 3.3
    (histogram queries) and Thm 3.16 (basic composition).
Tumult Labs. Tumult Analytics documentation: ``get_bounds`` (noisy histogram over +-2^i bins).
OpenDP documentation: bounds from a noisy histogram over geometric bins.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..constraints import RELATION, Interval, Real
from ..estimator import PrivateEstimator, check_choice, epsilon_param
from ..privacy._validation import check_size
from ..privacy.accounting.accountant import BudgetAccountant
from ..privacy.rng import as_generator

NEIGHBOURINGS = ("replace", "add_remove")
SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}
#: probability that an empty neighbour bucket extends the box by one bucket
EXTEND_PROBABILITY = 0.05
#: a bucket or tail is "reliably" found when it clears its threshold with this probability
RELIABLE = 0.9
#: the forecast calls a release unreliable when the expected share of records it may leave
#: outside a feature's box exceeds this
OUTSIDE_TOLERANCE = 0.1
_EXPONENT_LIMIT = 1000


def check_exponents(exponents, name="exponents"):
    """The public exponent range ``(lo, hi)`` as two ints, -1000 <= lo <= hi <= 1000."""
    try:
        lo, hi = exponents
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of integers, got {exponents!r}") from None
    for v in (lo, hi):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{name} must be a pair (lo, hi) of integers, got {exponents!r}")
    lo, hi = int(lo), int(hi)
    if not -_EXPONENT_LIMIT <= lo <= hi <= _EXPONENT_LIMIT:
        raise ValueError(
            f"{name} must satisfy -{_EXPONENT_LIMIT} <= lo <= hi <= "
            f"{_EXPONENT_LIMIT}, got {exponents!r}"
        )
    return lo, hi


def check_failure_probability(value, name="failure_probability"):
    """A probability strictly between 0 and 1; ValueError naming ``name``."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Real)
        or not 0.0 < float(value) < 1.0
    ):
        raise ValueError(f"{name} must be a number with 0 < {name} < 1, got {value!r}")
    return float(value)


def exponents_for_range(largest, smallest):
    """The exponent range whose buckets reach magnitude ``largest`` and resolve magnitudes down
    to ``smallest`` (both public numbers > 0): ``(floor(log2 smallest), ceil(log2 largest) - 1)``.
    """
    for v, label in ((largest, "largest"), (smallest, "smallest")):
        if not (isinstance(v, numbers.Real) and math.isfinite(v) and v > 0):
            raise ValueError(f"{label} must be a finite number > 0, got {v!r}")
    lo = math.floor(math.log2(smallest))
    hi = max(lo, math.ceil(math.log2(largest)) - 1)
    return check_exponents((lo, hi))


def bucket_edges(exponents):
    """The K + 1 increasing edges of the K = 2 (hi - lo + 1) + 1 signed buckets; bucket i is
    [edges[i], edges[i + 1])."""
    lo, hi = check_exponents(exponents)
    pos = np.ldexp(1.0, np.arange(lo, hi + 2))
    return np.concatenate([-pos[::-1], pos])


def thresholds(epsilon, n_features, exponents, failure_probability, neighbouring):
    """``(b, t, t_ext)``: the Laplace scale of each count, the keep and the extension
    thresholds (see the module docstring)."""
    n_buckets = len(bucket_edges(exponents)) - 1
    b = SENSITIVITY[neighbouring] * n_features / epsilon
    return (
        b,
        b * math.log(n_buckets / (2.0 * failure_probability)),
        b * math.log(1.0 / (2.0 * EXTEND_PROBABILITY)),
    )


@dataclass(frozen=True)
class BoundsForecast:
    """What a geometric-bucket bounds release can achieve, from public facts only.

    ``records_to_find``: the records one bucket must hold for the feature to be found with
    probability 0.9; ``tail_records``: the records a tail bucket must hold to be inside the box
    with probability 0.9 (smaller tails may be left outside, on each side);
    ``outside_share``: 2 * tail_records / n, the share of a feature's records a release may
    leave outside (None when n is not public); ``reliable``: whether a feature whose records
    span a few adjacent buckets is found with most of its records inside (None when n is not
    public); ``epsilon_needed``: the smallest total epsilon for which the forecast says
    reliable (None when n is not public).
    """

    epsilon_per_feature: float
    noise_scale: float
    keep_threshold: float
    records_to_find: float
    tail_records: float
    n_samples: int | None
    outside_share: float | None
    reliable: bool | None
    epsilon_needed: float | None

    def message(self):
        """The forecast in plain words."""
        head = (
            f"ε = {self.epsilon_per_feature:.3g} per feature (noise of scale "
            f"{self.noise_scale:.3g} records per bucket): a feature is found when one "
            f"power-of-two bucket holds about {self.records_to_find:.0f} records, and tail "
            f"buckets with fewer than about {self.tail_records:.0f} records may be left "
            "outside the box"
        )
        if self.n_samples is None:
            return head + " (the number of records is not public: no verdict)."
        if self.reliable:
            return (
                head + f". With n = {self.n_samples}, expect at most about "
                f"{100 * self.outside_share:.0f} % of each feature outside its box."
            )
        return (
            head + f". With n = {self.n_samples} this is unreliable: features may be "
            "missed (then the whole search range is returned) or lose more than "
            f"{100 * OUTSIDE_TOLERANCE:.0f} % of their records. It would be reliable from "
            f"ε ≈ {self.epsilon_needed:.3g} in total; or set a public box from what you know."
        )


def forecast_geometric_bounds(
    epsilon,
    n_features,
    n_samples=None,
    exponents=(-8, 16),
    failure_probability=1e-3,
    neighbouring="replace",
):
    """Forecast the accuracy of :class:`GeometricBounds` before anything is spent.

    Uses only public facts: ``epsilon`` (total), ``n_features``, the public exponent range,
    ``failure_probability``, the relation, and ``n_samples`` when it is public (replace-one).
    A bucket holding m records is kept with probability 1 - exp(-(m - t)/b) / 2 for m >= t, so
    it is found with probability 0.9 when m >= t + b ln 5. The verdict ``reliable`` holds when
    a feature spread over at most four buckets is found (records_to_find <= n / 4) and the
    tails it may drop hold at most 10 % of the records (2 tail_records <= n / 10); both
    numbers are proportional to the noise scale, which gives ``epsilon_needed``.

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy. Sec. 3.3
        (Laplace tail bounds).
    """
    eps = epsilon_param(epsilon)
    check_choice(neighbouring, "neighbouring", NEIGHBOURINGS)
    d = int(n_features)
    if d < 1:
        raise ValueError(f"n_features must be >= 1, got {n_features!r}")
    exps = check_exponents(exponents)
    beta = check_failure_probability(failure_probability)
    b, t, t_ext = thresholds(eps, d, exps, beta, neighbouring)
    margin = b * math.log(1.0 / (2.0 * (1.0 - RELIABLE)))
    find, tail = t + margin, t_ext + margin
    if n_samples is None:
        return BoundsForecast(eps / d, b, t, find, tail, None, None, None, None)
    n = int(n_samples)
    share = min(1.0, 2.0 * tail / n)
    reliable = bool(find <= n / 4.0 and share <= OUTSIDE_TOLERANCE)
    # find and tail are proportional to b = sensitivity * d / epsilon: the largest b meeting both
    largest_b = min(n / 4.0 / (find / b), OUTSIDE_TOLERANCE * n / 2.0 / (tail / b))
    needed = SENSITIVITY[neighbouring] * d / largest_b
    return BoundsForecast(eps / d, b, t, find, tail, n, share, reliable, needed)


def bucket_counts(X, exponents):
    """(d, K) exact counts of the records of each feature in each signed bucket."""
    edges = bucket_edges(exponents)
    n_buckets = len(edges) - 1
    idx = np.clip(np.searchsorted(edges, X, side="right") - 1, 0, n_buckets - 1)
    d = X.shape[1]
    flat = (idx + n_buckets * np.arange(d)).ravel()
    return np.bincount(flat, minlength=d * n_buckets).reshape(d, n_buckets)


def box_from_noisy_counts(noisy, t, t_ext):
    """The post-processing of the module docstring on noisy counts (..., d, K): the first and
    last kept bucket indices and whether each feature was found."""
    n_buckets = noisy.shape[-1]
    idx = np.arange(n_buckets)
    mode = np.argmax(noisy, axis=-1)[..., None]
    found = np.take_along_axis(noisy, mode, axis=-1)[..., 0] > t
    stop = noisy <= t_ext
    first = np.where(stop & (idx < mode), idx, -1).max(axis=-1) + 1
    last = np.where(stop & (idx > mode), idx, n_buckets).min(axis=-1) - 1
    kept = noisy > t
    first = np.minimum(first, np.where(kept, idx, n_buckets).min(axis=-1))
    last = np.maximum(last, np.where(kept, idx, -1).max(axis=-1))
    first = np.where(found, first, 0)
    last = np.where(found, last, n_buckets - 1)
    return first, last, found


def geometric_bounds(
    X,
    epsilon,
    exponents=(-8, 16),
    failure_probability=1e-3,
    neighbouring="replace",
    rng=None,
    size=None,
):
    """Per-feature private bounds (the computation of :class:`GeometricBounds`, batched).

    ``X`` (n, d) finite; ``size=N`` returns N independent releases (for audits). Returns
    ``(lower, upper, found)``, each of shape (d,) or (N, d). epsilon-DP in total.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    eps = epsilon_param(epsilon)
    check_choice(neighbouring, "neighbouring", NEIGHBOURINGS)
    exps = check_exponents(exponents)
    beta = check_failure_probability(failure_probability)
    rng = as_generator(rng)
    batch = check_size(size)
    edges = bucket_edges(exps)
    counts = bucket_counts(X, exps)
    b, t, t_ext = thresholds(eps, X.shape[1], exps, beta, neighbouring)
    noisy = counts + rng.laplace(0.0, b, size=batch + counts.shape)
    first, last, found = box_from_noisy_counts(noisy, t, t_ext)
    return edges[first], edges[last + 1], found


def spend_plan(accountant, epsilon, n_features, neighbouring):
    """Record the d histogram releases on ``accountant`` (the plan and the fit record the same
    list)."""
    each = epsilon / n_features
    for j in range(n_features):
        accountant.spend(
            f"Laplace mechanism: geometric-bucket histogram of feature {j}",
            each,
            0.0,
            SENSITIVITY[neighbouring],
        )


class GeometricBounds(PrivateEstimator):
    """Private per-feature bounds from a noisy histogram over power-of-two buckets.

    Finds the order of magnitude of each feature robustly at small n, where quantiles over a wide
    continuous range cannot (the rank error of a private quantile grows with the log of the
    range over the spacing of the records). See the module docstring for the buckets, the noise
    and the bound rule; :func:`forecast_geometric_bounds` (or :meth:`forecast`) says before
    anything is spent whether the release will be reliable.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget, pure epsilon-DP, split evenly over the n_features histograms.
    exponents : pair of int (lo, hi), default=(-8, 16)
        The PUBLIC range of magnitudes: buckets +-[2^e, 2^(e+1)) for lo <= e <= hi and the zero
        bucket (-2^lo, 2^lo). Never read from the data; a released bound is always a bucket edge
        in [-2^(hi+1), 2^(hi+1)]. A wider range costs little: the keep threshold grows with the
        log of the number of buckets.
    failure_probability : float, default=1e-3
        Probability, per feature, that a bucket holding no record is kept as holding data
        (which widens the box).
    neighbouring : {"replace", "add_remove"}, default="replace"
        The relation of the guarantee: the Laplace scale is 2 d / epsilon under replace-one,
        d / epsilon under add/remove.
    random_state : None, int or numpy.random.Generator, default=None
        Randomness for a direct fit (a release through the Curator uses fresh entropy).
    ledger : privclust.core.privacy.Ledger, optional
        Charged the plan's cost before any record is read.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        Released bounds, ``lower_ < upper_``, each a bucket edge (released).
    bounds_ : ndarray of shape (n_features, 2)
        ``lower_`` and ``upper_`` as columns (released).
    found_ : ndarray of bool, shape (n_features,)
        Whether the feature's mode bucket cleared the keep threshold; a feature not found gets
        the whole public range (released: a function of the noisy counts).
    privacy_ : Guarantee
        Pure epsilon-DP: n_features Laplace histograms of epsilon / d each.
    n_features_in_ : int

    References
    ----------
    Dwork, C., McSherry, F., Nissim, K. and Smith, A. (2006). Calibrating noise to sensitivity
        in private data analysis. TCC 2006.
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy. Sec. 3.3
        and Thm 3.16.
    Tumult Labs. Tumult Analytics documentation, ``get_bounds``; OpenDP documentation (bounds
        from geometric-bin histograms): the idea, not their code or rule.

    Examples
    --------
    >>> import numpy as np
    >>> from privclust.core import GeometricBounds
    >>> X = np.random.default_rng(0).normal(scale=30.0, size=(5000, 2))
    >>> est = GeometricBounds(epsilon=1.0, random_state=0).fit(X)
    >>> print(est.privacy_.summary())
    1.0-DP, pure, replace-one neighbours
    """

    _released = ("lower_", "upper_", "bounds_", "found_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "exponents": ["array-like"],
        "failure_probability": [Interval(Real, 0, 1, closed="neither")],
        "neighbouring": [RELATION],
    }

    def __init__(
        self,
        epsilon=1.0,
        exponents=(-8, 16),
        failure_probability=1e-3,
        neighbouring="replace",
        random_state=None,
        ledger=None,
    ):
        self.epsilon = epsilon
        self.exponents = exponents
        self.failure_probability = failure_probability
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _plan(self, n_samples, n_features):
        eps = epsilon_param(self.epsilon)
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURINGS)
        check_exponents(self.exponents)
        check_failure_probability(self.failure_probability)
        if n_features is None:
            raise ValueError(
                "GeometricBounds' plan needs n_features (epsilon is split over one "
                "histogram per feature)"
            )
        acc = BudgetAccountant(eps)
        spend_plan(acc, eps, n_features, self.neighbouring)
        return acc.guarantee("pure", self.neighbouring)

    def forecast(self, n_samples, n_features):
        """:func:`forecast_geometric_bounds` for these parameters (``n_samples`` is dropped
        under add/remove, where the number of records is private)."""
        n = None if self.neighbouring == "add_remove" else n_samples
        return forecast_geometric_bounds(
            self.epsilon, n_features, n, self.exponents, self.failure_probability, self.neighbouring
        )

    def _fit(self, X, rng):
        n_features = X.shape[1]
        acc = BudgetAccountant(self.epsilon)
        spend_plan(acc, self.epsilon, n_features, self.neighbouring)
        lower, upper, found = geometric_bounds(
            X, self.epsilon, self.exponents, self.failure_probability, self.neighbouring, rng
        )
        self.lower_, self.upper_, self.found_ = lower, upper, found
        self.bounds_ = np.column_stack([lower, upper])
        self.n_features_in_ = n_features
        self.privacy_ = acc.guarantee("pure", self.neighbouring)
