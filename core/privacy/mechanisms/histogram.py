"""Stable histogram: release the heaviest cell of a data-independent partition (stability-based
histogram, Vadhan 2016, "The complexity of differential privacy"; used where Nissim, Stemmer &
Vadhan, PODS 2016, Thm 2.5 choose a heavy cell).

Noisy counts c_b + Lap(2/eps) of the non-empty cells only; cells with a noisy count above
tau = 1 + (2/eps) ln(1/delta) are kept; the argmax of the kept cells is released with its noisy
count. (epsilon, delta)-DP under `replace` and `add_remove` (Vadhan 2016). Our derivation of the threshold: under ``replace`` at most two counts change
by 1 (Laplace with L1 sensitivity 2 on the common support); a cell non-empty in only one of the
datasets has count 1 there and survives with probability (1/2) e^{-(tau-1) eps/2} = delta/2;
at most two such cells give delta.
"""

import math

import numpy as np

from .._validation import check_delta, check_epsilon, check_rng, check_size

_CHUNK = 1 << 22  # noise entries drawn at once in the batched form


def stable_histogram_threshold(epsilon, delta):
    """tau = 1 + (2/epsilon) ln(1/delta), the keep threshold of :func:`stable_histogram`.

    References
    ----------
    Vadhan, S. (2017). The complexity of differential privacy. In Tutorials on the Foundations
        of Cryptography, Springer (stability-based histograms).
    """
    return 1.0 + (2.0 / epsilon) * math.log(1.0 / delta)


def stable_histogram(cell_keys, epsilon, delta, rng, size=None):
    """Heaviest kept cell of the partition given by per-record integer cell coordinates.

    ``cell_keys``: (n, dim) integer array (one row per record; a 1-D array means dim = 1).
    Returns ``(key, noisy_count)`` with ``key`` a (dim,) int64 array, or ``None`` if no cell
    survives the threshold. Batched form (``size=N``): ``(keys, noisy_counts)`` with keys
    (N, dim) and noisy_counts (N,); releases where nothing was kept have ``noisy_count`` NaN
    (their key row is 0 and meaningless).

    References
    ----------
    Vadhan, S. (2017). The complexity of differential privacy. In Tutorials on the Foundations
        of Cryptography, Springer (stability-based histograms).
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Thm. 2.5 (the choosing step it replaces here;
        docs/algorithms.md, section 2).
    """
    keys = np.asarray(cell_keys)
    if keys.ndim == 1:
        keys = keys[:, None]
    if keys.ndim != 2:
        raise ValueError(f"cell_keys must be a (n, dim) integer array, got shape {keys.shape}")
    if keys.size and not np.issubdtype(keys.dtype, np.integer):
        raise TypeError(f"cell_keys must hold integers, got dtype {keys.dtype}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    rng = check_rng(rng)
    batch = check_size(size)
    tau = stable_histogram_threshold(epsilon, delta)
    dim = keys.shape[1]
    if keys.shape[0] == 0:
        cells = np.zeros((0, dim), dtype=np.int64)
        counts = np.zeros(0)
    else:
        cells, counts = np.unique(keys.astype(np.int64), axis=0, return_counts=True)
    n_rel = batch[0] if batch else 1
    out_keys = np.zeros((n_rel, dim), dtype=np.int64)
    out_counts = np.full(n_rel, np.nan)
    if len(counts):
        step = max(1, _CHUNK // len(counts))
        for start in range(0, n_rel, step):
            stop = min(n_rel, start + step)
            noisy = counts + rng.laplace(0.0, 2.0 / epsilon, size=(stop - start, len(counts)))
            noisy = np.where(noisy > tau, noisy, -np.inf)
            best = np.argmax(noisy, axis=1)
            best_val = noisy[np.arange(stop - start), best]
            kept = np.isfinite(best_val)
            out_keys[start:stop][kept] = cells[best[kept]]
            out_counts[start:stop] = np.where(kept, best_val, np.nan)
    if batch:
        return out_keys, out_counts
    if np.isnan(out_counts[0]):
        return None
    return out_keys[0], float(out_counts[0])
