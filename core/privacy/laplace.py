"""Laplace mechanism, real and complex (Dwork, McSherry, Nissim & Smith 2006).

Known limitation (Mironov, CCS 2012): the noise is drawn with
numpy's floating-point sampler and added in floating point. The set of reachable outputs then
depends on the input in its low-order bits, so an attacker who sees the exact float can sometimes
tell neighbouring inputs apart (precision attacks; Jin et al. 2022). The guarantee holds for the
idealised real-valued mechanism only. Round or post-process released values before publishing
them outside a trusted setting; tests/core/test_privacy_precision.py records the behaviour.
"""
import numpy as np

from ._validation import as_float_array, check_epsilon, check_rng, check_sensitivity, check_size


def laplace(value, sensitivity, epsilon, rng, size=None):
    """Release ``value + Lap(sensitivity/epsilon)`` i.i.d. per coordinate (pure epsilon-DP).

    ``sensitivity`` is the L1 sensitivity of ``value`` under the chosen neighbouring relation.
    ``size=N`` returns N independent releases stacked on a new leading axis (batched form for
    audits). Sensitivity 0 returns ``value`` unchanged (nothing depends on the data).
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
