"""Private per-feature bounds from private quantiles: a public box for the other estimators.

Every private estimator of privclust needs a public box (``bounds``) that the records are
clipped to. :class:`PrivateBounds` spends a small, stated epsilon to suggest one: for each
feature j it releases the q- and (1 - q)-quantiles with the exponential mechanism for quantiles
(Smith, STOC 2011, Sec. 3; :mod:`privclust.core.privacy.mechanisms.quantile`), inside a PUBLIC outer range
that is never read from the data (records outside it are clipped to it).

Budget (basic composition, Dwork & Roth 2014, Thm 3.16): a record appears in every feature, so
the 2 d quantile releases share epsilon evenly, epsilon / (2 d) each; the total is epsilon, pure
(delta = 0). The rank utility has sensitivity 1 under replace-one and under add/remove-one
neighbours, so the guarantee holds for either relation; ``neighbouring`` only states which one
the release is counted in (choose the ledger's unit: a replace-one release cannot be counted on an
add/remove ledger, and an add/remove one costs twice its epsilon on a replace-one ledger).

Everything after the quantiles is post-processing (free): the two values of a feature are
ordered (lower <= upper), widened by ``margin`` times their distance on each side, kept inside
the outer range, and separated by at least one floating-point step so that lower < upper.
"""

import numpy as np

from ..constraints import BOUNDS, RELATION, Interval, Real
from ..data.box import check_outer_bounds
from ..estimator import PrivateEstimator, check_choice, epsilon_param
from ..privacy._validation import check_size, real_scalar
from ..privacy.accounting.accountant import BudgetAccountant
from ..privacy.mechanisms import quantile as _quantile
from ..privacy.rng import as_generator

NEIGHBOURINGS = ("replace", "add_remove")


def check_quantile(quantile, name="quantile"):
    """The lower quantile level q, a number with 0 <= q < 0.5; ValueError naming ``name``."""
    try:
        q = real_scalar(quantile, name)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    if not 0.0 <= q < 0.5:
        raise ValueError(
            f"{name} must satisfy 0 <= {name} < 0.5 (the bounds are the {name} and "
            f"1 - {name} quantiles), got {quantile!r}"
        )
    return q


def check_margin(margin, name="margin"):
    """The relative widening, a finite number >= 0; ValueError naming ``name``."""
    try:
        m = real_scalar(margin, name)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    if not (np.isfinite(m) and m >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {margin!r}")
    return m


def quantile_epsilon(epsilon, n_features):
    """The epsilon of each of the 2 d quantile releases: epsilon / (2 d)."""
    return epsilon / (2.0 * n_features)


def spend_plan(accountant, epsilon, n_features, quantile):
    """Record the 2 d exponential-mechanism releases on ``accountant`` (the plan and the fit
    record the same list)."""
    each = quantile_epsilon(epsilon, n_features)
    for j in range(n_features):
        for level in (quantile, 1.0 - quantile):
            accountant.spend(
                f"exponential mechanism (Smith 2011): {level!r}-quantile of feature {j}",
                each,
                0.0,
                _quantile.SENSITIVITY,
            )


def private_bounds(X, epsilon, outer_bounds, quantile=0.01, margin=0.0, rng=None, size=None):
    """Per-feature private bounds (the computation of :class:`PrivateBounds`, batched).

    ``X`` (n, d) finite; ``outer_bounds`` the public range (checked by
    :func:`check_outer_bounds`); ``rng`` a Generator; ``size=N`` returns N independent releases
    (for audits). Returns ``(lower, upper)``, each of shape (d,) or (N, d), with
    outer low <= lower < upper <= outer high. epsilon-DP in total (see the module docstring).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    n_features = X.shape[1]
    low, high = check_outer_bounds(outer_bounds, n_features)
    q = check_quantile(quantile)
    margin = check_margin(margin)
    each = quantile_epsilon(epsilon_param(epsilon), n_features)
    rng = as_generator(rng)
    batch = check_size(size)
    values = np.empty(batch + (2, n_features))
    for j in range(n_features):  # one feature at a time: O(n) memory beyond X
        values[..., j] = _quantile.exponential_quantiles(
            X[:, j], [q, 1.0 - q], each, low[j], high[j], rng, size=size
        )
    return _post_process(values[..., 0, :], values[..., 1, :], low, high, margin)


def _post_process(a, b, low, high, margin):
    """Order, widen by ``margin``, keep inside [low, high], and make lower < upper."""
    lower, upper = np.minimum(a, b), np.maximum(a, b)
    if margin > 0:
        with np.errstate(over="ignore"):  # an infinite pad is clipped just below
            pad = margin * (upper - lower)
            lower, upper = lower - pad, upper + pad
    lower, upper = np.clip(lower, low, high), np.clip(upper, low, high)
    tie = upper <= lower
    if np.any(tie):
        down = tie & (lower > low)
        lower = np.where(down, np.nextafter(lower, -np.inf), lower)
        upper = np.where(tie & ~down, np.nextafter(upper, np.inf), upper)
    return lower, upper


class PrivateBounds(PrivateEstimator):
    """Private per-feature lower and upper bounds from private quantiles.

    For each feature, the ``quantile`` and ``1 - quantile`` quantiles are released with the
    exponential mechanism for quantiles (Smith 2011, Sec. 3) inside the public ``outer_bounds``;
    the released box ``(lower_, upper_)`` is meant as the public ``bounds`` of the other private
    estimators (a box that leaves about 2 * quantile of each feature's records outside, plus the
    mechanism's error; the data owner can measure the share with
    :func:`privclust.core.data.outside_share`).

    Parameters
    ----------
    epsilon : float, default=0.1
        Total privacy budget, pure epsilon-DP (delta = 0). Split evenly over the 2 * n_features
        quantile releases, epsilon / (2 d) each (basic composition).
    outer_bounds : pair (low, high)
        The PUBLIC range the bounds are searched in: numbers, or arrays of length n_features.
        Required; never read from the data. Records outside it are clipped to it, and the
        released bounds always lie inside it. A range much wider than the data costs accuracy
        (the error grows with log(range / spacing of the records), Smith 2011).
    quantile : float, default=0.01
        Level q, 0 <= q < 0.5: the bounds are the q- and (1 - q)-quantiles of each feature.
    margin : float, default=0.0
        Widen each feature's interval by ``margin * (upper - lower)`` on both sides (then keep it
        inside ``outer_bounds``). Post-processing: costs nothing.
    neighbouring : {"replace", "add_remove"}, default="replace"
        The relation the guarantee is stated (and charged) in. The mechanism has sensitivity 1
        under both, so the same epsilon holds; pick the ledger's unit (``curator.unit``).
    random_state : None, int or numpy.random.Generator, default=None
        Randomness for a direct fit (a release through the Curator always uses fresh entropy).
    ledger : privclust.core.privacy.Ledger, optional
        Charged the plan's cost before any record is read.

    Attributes
    ----------
    lower_ : ndarray of shape (n_features,)
        Released lower bounds (released).
    upper_ : ndarray of shape (n_features,)
        Released upper bounds, ``upper_ > lower_`` (released).
    bounds_ : ndarray of shape (n_features, 2)
        ``lower_`` and ``upper_`` as columns (released). ``(lower_, upper_)`` is the pair the
        other estimators take as ``bounds``.
    privacy_ : Guarantee
        Pure epsilon-DP: 2 * n_features exponential-mechanism releases of epsilon / (2 d) each.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    Accuracy: the rank error of each quantile is about 2 ln(R / w) / epsilon_q records, with
    epsilon_q = epsilon / (2 d), R the outer range's width and w the spacing of the records near
    the quantile. On 2000 standard-normal records with outer range [-10, 10], epsilon = 0.1 and
    d = 1 (exact distribution), a bound leaves more than 5 % of the records outside its side with
    probability 0.4 % (1.4 % at d = 2), but in about 3 runs of 4 it lies between the outer end and
    the extreme record: the wide empty stretch there carries a large weight, so the suggested box
    is more often too wide than too narrow, and a public outer range close to the data helps.
    Data are checked after the charge (finite numbers, as every private estimator): a NaN refused
    there is refused with the budget spent; the Curator refuses NaN datasets when it is built.

    References
    ----------
    Smith, A. (2011). Privacy-preserving statistical estimation with optimal convergence rates.
    STOC 2011, Sec. 3.
    McSherry, F. & Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy. Sec. 3.4
    (the exponential mechanism) and Thm 3.16 (basic composition).

    Examples
    --------
    >>> import numpy as np
    >>> from privclust.core import PrivateBounds
    >>> X = np.random.default_rng(0).normal(size=(5000, 2))
    >>> est = PrivateBounds(epsilon=1.0, outer_bounds=(-100, 100), random_state=0).fit(X)
    >>> est.bounds_[0].shape
    (2,)
    >>> print(est.privacy_.summary())
    1.0-DP, pure, replace-one neighbours
    """

    _released = ("lower_", "upper_", "bounds_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "outer_bounds": [None, BOUNDS],
        "quantile": [Interval(Real, 0, 0.5, closed="left")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "neighbouring": [RELATION],
    }

    def __init__(
        self,
        epsilon=0.1,
        outer_bounds=None,
        quantile=0.01,
        margin=0.0,
        neighbouring="replace",
        random_state=None,
        ledger=None,
    ):
        self.epsilon = epsilon
        self.outer_bounds = outer_bounds
        self.quantile = quantile
        self.margin = margin
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _plan(self, n_samples, n_features):
        eps = epsilon_param(self.epsilon)
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURINGS)
        q = check_quantile(self.quantile)
        check_margin(self.margin)
        if n_features is None:
            raise ValueError(
                "PrivateBounds' plan needs n_features (epsilon is split over 2 "
                "quantiles per feature, and outer_bounds has one range per feature)"
            )
        check_outer_bounds(self.outer_bounds, n_features)
        acc = BudgetAccountant(eps)
        spend_plan(acc, eps, n_features, q)
        return acc.guarantee("pure", self.neighbouring)

    def _fit(self, X, rng):
        n_features = X.shape[1]
        q = check_quantile(self.quantile)
        acc = BudgetAccountant(self.epsilon)
        spend_plan(acc, self.epsilon, n_features, q)  # recorded before the mechanisms run
        lower, upper = private_bounds(X, self.epsilon, self.outer_bounds, q, self.margin, rng)
        self.lower_, self.upper_ = lower, upper
        self.bounds_ = np.column_stack([lower, upper])
        self.n_features_in_ = n_features
        self.privacy_ = acc.guarantee("pure", self.neighbouring)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        per-partition histograms on a public grid, the quantiles released in the driver with
        the same plan (:mod:`~privclust.core.bounds.partitioned_bounds`)."""
        # imported here, not at the top: partitioned_bounds builds on this module's helpers
        from .partitioned_bounds import private_bounds_partitioned

        q = check_quantile(self.quantile)
        acc = BudgetAccountant(self.epsilon)
        spend_plan(acc, self.epsilon, parts.n_features, q)
        lower, upper = private_bounds_partitioned(
            parts, self.epsilon, self.outer_bounds, q, self.margin, rng
        )
        self.lower_, self.upper_ = lower, upper
        self.bounds_ = np.column_stack([lower, upper])
        self.n_features_in_ = parts.n_features
        self.privacy_ = acc.guarantee("pure", self.neighbouring)
