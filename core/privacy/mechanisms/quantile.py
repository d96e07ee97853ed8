"""Private quantiles of one feature by the exponential mechanism (Smith, STOC 2011, Sec. 3).

The data are clipped to a PUBLIC range [lower, upper] and sorted, x_(1) <= ... <= x_(n), with
x_(0) = lower and x_(n+1) = upper. For a candidate v in the open interval I_i = (x_(i), x_(i+1))
the number of records <= v is exactly i, and the utility of v for the q-quantile is

    u_q(v) = -| #{x <= v} - q n | = -| i - q n |.

Changing one record (replace-one), or adding or removing one (add/remove: #{x <= v} moves by 0 or
1 and q n by q), moves u_q(v) by at most 1 for every v, so the sensitivity is 1 under both
relations. The exponential mechanism over the continuous range [lower, upper] with Lebesgue base
measure (McSherry & Talwar, FOCS 2007; Dwork & Roth 2014, Sec. 3.4) outputs v with density
proportional to exp(epsilon u_q(v) / 2), which is epsilon-DP. It is sampled exactly as Smith
describes: choose interval i with probability proportional to |I_i| exp(-epsilon |i - q n| / 2)
(Gumbel-max over the log-weights, :func:`~privclust.core.privacy.mechanisms.exponential.gumbel_max`;
empty intervals between tied records have weight 0 and are never chosen), then v uniform in I_i.

The range must never be read from the data: a record outside it is clipped to it (per record,
so it costs nothing), and the output always lies in [lower, upper].

Known limitation (as for every sampler in :mod:`privclust.core.privacy`): the sampling is done
in floating point with numpy (Mironov, CCS 2012).

References
----------
Smith, A. (2011). Privacy-preserving statistical estimation with optimal convergence rates.
STOC 2011, Sec. 3.
McSherry, F. & Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 3.4.
"""

import numpy as np
from scipy.special import log_softmax

from .._validation import check_epsilon, check_rng, check_size, real_scalar
from .exponential import gumbel_max

#: sensitivity of the rank utility -|#{x <= v} - q n| (replace-one and add/remove)
SENSITIVITY = 1.0


def check_range(lower, upper, name="outer range"):
    """(lower, upper) as floats: finite with lower < upper; ValueError naming ``name``."""
    lo, hi = real_scalar(lower, f"{name} lower end"), real_scalar(upper, f"{name} upper end")
    if not (np.isfinite(lo) and np.isfinite(hi)) or not lo < hi or not np.isfinite(hi - lo):
        raise ValueError(
            f"{name} must be finite with lower < upper (and a finite width), got "
            f"({lower!r}, {upper!r})"
        )
    return lo, hi


def check_quantiles(quantiles, name="quantiles"):
    """``quantiles`` as a 1-D float array of levels in [0, 1]; ValueError naming ``name``."""
    try:
        q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers in [0, 1], got {quantiles!r}") from None
    if q.ndim != 1 or q.size == 0 or not np.all((q >= 0.0) & (q <= 1.0)):
        raise ValueError(f"{name} must be one or more numbers in [0, 1], got {quantiles!r}")
    return q


def _into_range(x, lo, hi):
    """Clip every record into the public range [lo, hi] (per record, so it costs nothing);
    returns (x, lo, hi). The range is a parameter and is never widened to fit the data."""
    return np.clip(x, lo, hi), lo, hi


def quantile_intervals(values, quantiles, epsilon, lower, upper):
    """The intervals of :func:`exponential_quantiles` and their log-weights (no sampling).

    Returns ``(edges, widths, logits)``: ``edges`` (n + 2,) = lower, the clipped sorted values,
    upper; ``widths`` (n + 1,) the interval lengths; ``logits`` (len(quantiles), n + 1) the
    unnormalised log-probabilities log|I_i| - epsilon |i - q n| / 2 (-inf for empty intervals).
    """
    epsilon = check_epsilon(epsilon)
    lo, hi = check_range(lower, upper)
    q = check_quantiles(quantiles)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("values contain NaN")
    x, lo, hi = _into_range(x, lo, hi)
    x = np.sort(x)
    n = x.size
    edges = np.concatenate(([lo], x, [hi]))
    widths = np.diff(edges)
    with np.errstate(divide="ignore"):
        log_widths = np.log(widths)  # -inf for the empty intervals between tied records
    ranks = np.arange(n + 1, dtype=np.float64)
    utilities = -np.abs(ranks[None, :] - q[:, None] * n)
    # shift each row so that its best non-empty interval has utility 0 (a constant per row does
    # not change the distribution): a huge epsilon then sends the others to -inf, never all
    best = np.max(np.where(widths[None, :] > 0, utilities, -np.inf), axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        logits = log_widths[None, :] + (epsilon / (2.0 * SENSITIVITY)) * (utilities - best)
    return edges, widths, logits


def exponential_quantiles(values, quantiles, epsilon, lower, upper, rng, size=None):
    """Release each q-quantile of ``values`` with the exponential mechanism (Smith 2011, Sec. 3).

    Parameters
    ----------
    values : array-like of shape (n,)
        One feature's records (NaN refused; values outside [lower, upper] are clipped).
    quantiles : float or array-like of shape (m,)
        Levels q in [0, 1].
    epsilon : float
        Privacy parameter of EACH quantile's release (m quantiles cost m * epsilon by basic
        composition; Dwork & Roth 2014, Thm 3.16).
    lower, upper : float
        The public range; never computed from the data.
    rng : numpy.random.Generator
        The only source of randomness.
    size : int, optional
        Number of independent releases (a leading batch axis), for audits.

    Returns
    -------
    ndarray of shape (m,), or (size, m)
        Released values, each in [lower, upper]; each is epsilon-DP under replace-one and
        add/remove-one neighbours (sensitivity 1).
    """
    rng = check_rng(rng)
    check_size(size)
    edges, widths, logits = quantile_intervals(values, quantiles, epsilon, lower, upper)
    index = gumbel_max(logits, rng, size=size)
    return np.minimum(edges[index] + rng.random(index.shape) * widths[index], edges[-1])


def exponential_quantile_probabilities(values, quantiles, epsilon, lower, upper):
    """Exact probabilities of the intervals chosen by :func:`exponential_quantiles`.

    Returns ``(edges, probabilities)`` with probabilities of shape (m, n + 1); the released value
    is uniform in the chosen interval [edges[i], edges[i + 1]].
    """
    edges, _, logits = quantile_intervals(values, quantiles, epsilon, lower, upper)
    return edges, np.exp(log_softmax(logits, axis=-1))
