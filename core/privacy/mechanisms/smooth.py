"""Smooth-sensitivity Gaussian noise (Nissim, Raskhodnikova & Smith, STOC 2007 [NRS07], as quoted in
Wang, Wang & Singh, NIPS 2015, Alg. 1).

alpha = eps / (5 sqrt(2 ln(2/delta))): the paper's typesetting is ambiguous (their poster shows
"5 sqrt 2 ln(2/delta)"); this reading matches NRS07's Gaussian admissibility lemma. That lemma is
proven for small eps, while Wang, Wang & Singh run eps up to 1e3, so eps > 1 is allowed but warned
about."""

import math
import numbers
import warnings

import numpy as np

from .._validation import (
    as_float_array,
    check_delta,
    check_epsilon,
    check_rng,
    check_sensitivity,
    check_size,
)
from ..errors import PrivacyWarning

OUTSIDE_RANGE_WARNING = "epsilon > 1 is outside the proven range of the smooth-sensitivity calibration (Nissim, Raskhodnikova & Smith 2007)"


def smooth_sensitivity_parameters(epsilon, delta, dim):
    """(alpha, beta) = (eps / (5 sqrt(2 ln(2/delta))), eps / (4 (dim + ln(2/delta)))).

    beta is the smoothness the upper bound S must have; the noise is (S/alpha) N(0, I_dim).

    References
    ----------
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 2-3 (admissible Gaussian noise).
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    log_term = math.log(2.0 / delta)
    return epsilon / (5.0 * math.sqrt(2.0 * log_term)), epsilon / (4.0 * (int(dim) + log_term))


def smooth_sensitivity_gaussian(value, smooth_bound, epsilon, delta, rng, size=None):
    """Release value + (smooth_bound/alpha) N(0, I) with alpha from
    :func:`smooth_sensitivity_parameters` ((epsilon, delta)-DP).

    ``smooth_bound`` must be a beta-smooth upper bound on the local L2 sensitivity at the data,
    with beta from :func:`smooth_sensitivity_parameters` for ``dim = value.size``. Emits a
    :class:`PrivacyWarning` when epsilon > 1 (calibration outside the proven range).
    ``size=N`` prepends a batch axis.

    References
    ----------
    Nissim, K., Raskhodnikova, S. and Smith, A. (2007). Smooth sensitivity and sampling in
        private data analysis. STOC 2007, Sec. 2-3.
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 3.1, Alg. 1.
    """
    arr = as_float_array(value)
    smooth_bound = check_sensitivity(smooth_bound, "smooth_bound")
    alpha, _ = smooth_sensitivity_parameters(epsilon, delta, max(arr.size, 1))
    rng = check_rng(rng)
    if epsilon > 1:
        warnings.warn(OUTSIDE_RANGE_WARNING, PrivacyWarning, stacklevel=2)
    shape = check_size(size) + arr.shape
    if smooth_bound == 0.0:
        return np.broadcast_to(arr, shape).copy()
    return arr + (smooth_bound / alpha) * rng.standard_normal(shape)
