"""AboveThreshold, the sparse vector technique (Dwork & Roth 2014, Alg. 1). Pure eps-DP."""

import numpy as np

from .._validation import as_float_array, check_epsilon, check_rng, check_size


def above_threshold(query_values, threshold, epsilon, rng, size=None):
    """Index of the first sensitivity-1 query answered "above", or -1 if none is (epsilon-DP).

    Draws T^ = threshold + Lap(2/eps) once per release and answers query i "above" when
    f_i(X) + Lap(4/eps) >= T^; the instance halts at the first "above". ``query_values`` holds
    the true answers on its last axis (leading axes are independent instances, ``threshold``
    broadcasts against them); ``size=N`` prepends a batch axis. Returns int64 indices.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Sec. 3.6, Alg. 1 (AboveThreshold).
    """
    q = as_float_array(query_values, "query_values")
    if q.ndim == 0 or q.shape[-1] == 0:
        raise ValueError("query_values must contain at least one query on its last axis")
    t = as_float_array(threshold, "threshold")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    batch = check_size(size) + q.shape[:-1]
    try:
        t = np.broadcast_to(t, batch)
    except ValueError:
        raise ValueError(
            f"threshold of shape {t.shape} does not broadcast to {q.shape[:-1]}"
        ) from None
    noisy_threshold = t + rng.laplace(0.0, 2.0 / epsilon, size=batch)
    noisy_queries = q + rng.laplace(0.0, 4.0 / epsilon, size=batch + q.shape[-1:])
    above = noisy_queries >= noisy_threshold[..., None]
    first = np.argmax(above, axis=-1)
    return np.where(above.any(axis=-1), first, -1).astype(np.int64)
