"""Laplace mechanism, real and complex (Dwork, McSherry, Nissim & Smith 2006).

Known limitation (Mironov, CCS 2012): the noise is drawn with
numpy's floating-point sampler and added in floating point. The set of reachable outputs then
depends on the input in its low-order bits, so an attacker who sees the exact float can sometimes
tell neighbouring inputs apart (precision attacks; Jin et al. 2022). The guarantee holds for the
idealised real-valued mechanism only. Round or post-process released values before publishing
them outside a trusted setting; tests/core/test_privacy_precision.py records the behaviour.
"""

import numpy as np

from .._validation import as_float_array, check_epsilon, check_rng, check_sensitivity, check_size


def laplace(value, sensitivity, epsilon, rng, size=None):
    """Release ``value + Lap(sensitivity/epsilon)`` i.i.d. per coordinate (pure epsilon-DP).

    ``sensitivity`` is the L1 sensitivity of ``value`` under the chosen neighbouring relation.
    ``size=N`` returns N independent releases stacked on a new leading axis (batched form for
    audits). Sensitivity 0 returns ``value`` unchanged (nothing depends on the data).

    References
    ----------
    Dwork, C., McSherry, F., Nissim, K. and Smith, A. (2006). Calibrating noise to sensitivity
        in private data analysis. TCC 2006.
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Sec. 3.3 (Laplace mechanism).
    Mironov, I. (2012). On significance of the least significant bits for differential
        privacy. CCS 2012.
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    arr = as_float_array(value)
    shape = check_size(size) + arr.shape
    if sensitivity == 0.0:
        return np.broadcast_to(arr, shape).copy()
    return arr + rng.laplace(0.0, sensitivity / epsilon, size=shape)


def complex_laplace(value, sensitivity, epsilon, rng, size=None):
    """Complex Laplace mechanism: real and imaginary parts each get Lap(sensitivity/epsilon).

    The complex vector is treated as 2D real coordinates, so ``sensitivity`` is the L1
    sensitivity over real and imaginary parts together. Returns complex128; ``size=N``
    prepends a batch axis.

    References
    ----------
    Dwork, C., McSherry, F., Nissim, K. and Smith, A. (2006). Calibrating noise to sensitivity
        in private data analysis. TCC 2006.
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Theorem 1 (noise on real and imaginary parts).
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    try:
        arr = np.asarray(value, dtype=np.complex128)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"value must be numeric: {exc}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError("value contains NaN or infinite entries")
    shape = check_size(size) + arr.shape
    if sensitivity == 0.0:
        return np.broadcast_to(arr, shape).copy()
    scale = sensitivity / epsilon
    noise = rng.laplace(0.0, scale, size=shape + (2,))
    return arr + (noise[..., 0] + 1j * noise[..., 1])
