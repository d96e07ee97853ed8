"""Gaussian mechanism with analytic (Balle & Wang 2018) or classic (Dwork & Roth 2014, Thm A.1)
calibration. Same floating-point caveat as :mod:`.laplace` (Mironov 2012).

The analytic calibration is solved here rather than by ``dp_accounting``'s PLD search: that
search takes ~0.1 s per call (the planner and the page call it many times per plan) and agrees
with this exact root only to ~1e-6 (its discretisation); the test suite checks one against the
other.
"""

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .._validation import (
    as_float_array,
    check_delta,
    check_epsilon,
    check_rng,
    check_sensitivity,
    check_size,
)


def _analytic_excess(sigma, epsilon, delta):
    """Phi(1/(2s) - eps*s) - e^eps Phi(-1/(2s) - eps*s) - delta, for sensitivity 1 (log_ndtr)."""
    a = 0.5 / sigma - epsilon * sigma
    b = -0.5 / sigma - epsilon * sigma
    return math.exp(log_ndtr(a)) - math.exp(epsilon + log_ndtr(b)) - delta


def analytic_gaussian_sigma(epsilon, delta, sensitivity):
    """Smallest sigma making N(0, sigma^2) noise (epsilon, delta)-DP for L2 sensitivity Delta.

    Solves Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) = delta (Balle & Wang 2018,
    Thm 8) by bracketing (doubling/halving) and ``brentq``; e^eps Phi(u) is evaluated as
    ``exp(eps + log_ndtr(u))``. Valid for every epsilon > 0; 0 < delta < 1. The returned sigma
    is nudged upward if needed so that the condition holds at it exactly in floating point.

    References
    ----------
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018, Sec. 3, Thm. 8 and Alg. 1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    sensitivity = check_sensitivity(sensitivity)
    if sensitivity == 0.0:
        return 0.0
    lo, hi = 1.0, 1.0
    while _analytic_excess(hi, epsilon, delta) > 0:
        lo, hi = hi, hi * 2.0
    while _analytic_excess(lo, epsilon, delta) <= 0:
        lo, hi = lo / 2.0, lo
    sigma = brentq(_analytic_excess, lo, hi, args=(epsilon, delta), xtol=1e-14, rtol=1e-13)
    while _analytic_excess(sigma, epsilon, delta) > 0:
        sigma *= 1.0 + 1e-12
    return sigma * sensitivity


def classic_gaussian_sigma(epsilon, delta, sensitivity):
    """sigma = Delta * sqrt(2 ln(1.25/delta)) / epsilon; only valid for 0 < epsilon < 1.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), App. A, Thm. A.1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    sensitivity = check_sensitivity(sensitivity)
    if epsilon >= 1.0:
        raise ValueError(
            f"classic Gaussian calibration is only valid for epsilon < 1, got {epsilon}; "
            "use calibration='analytic'"
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian(value, sensitivity, epsilon, delta, rng, size=None, calibration="analytic"):
    """Release ``value + N(0, sigma^2)`` i.i.d. per coordinate ((epsilon, delta)-DP).

    ``sensitivity`` is the L2 (Frobenius) sensitivity. ``calibration`` is "analytic" (default,
    any epsilon) or "classic" (epsilon < 1 only). ``size=N`` prepends a batch axis.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), App. A, Thm. A.1 (classic calibration).
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018, Thm. 8 (analytic calibration).
    """
    if calibration == "analytic":
        sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    elif calibration == "classic":
        sigma = classic_gaussian_sigma(epsilon, delta, sensitivity)
    else:
        raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
    rng = check_rng(rng)
    arr = as_float_array(value)
    shape = check_size(size) + arr.shape
    if sigma == 0.0:
        return np.broadcast_to(arr, shape).copy()
    return arr + rng.normal(0.0, sigma, size=shape)
