"""The Dask mode of :class:`~privclust.core.bounds.quantile_bounds.PrivateBounds`: per-partition
histograms on a public grid, the exponential mechanism for quantiles in the driver.

Sorting a data set that lives in partitions is not a sum, so the quantiles of Smith's mechanism
are released on a public grid instead: each feature's outer range [low, high] is cut into
``B`` equal bins (``B`` from the number of features only, :func:`n_bins`), every partition
counts its records (clipped to the range) per bin, the counts are added on the cluster, and the
driver releases each q-quantile with the exponential mechanism over the bins (McSherry & Talwar,
FOCS 2007), utility

    u_q(b) = -| (c_{b-1} + c_b) / 2 - q n |,     c_b = #records in bins 0..b,

then a value uniform in the chosen bin (post-processing). Changing one record moves every c_b by
at most 1; adding or removing one moves c_b by 0 or 1 and q n by q; so the sensitivity is 1 under
both relations, as for the in-memory mechanism: the same plan (2 d releases of epsilon / (2 d)),
the same cost and guarantee, at the grid's resolution (high - low) / B.

References
----------
Smith, A. (2011). Privacy-preserving statistical estimation with optimal convergence rates.
    STOC 2011, Sec. 3 (the rank utility).
McSherry, F. & Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 3.4.
"""

import numpy as np

from ..data.box import check_outer_bounds
from ..privacy.mechanisms.exponential import gumbel_max
from ..privacy.mechanisms.quantile import SENSITIVITY
from .quantile_bounds import _post_process, quantile_epsilon

_MAX_CELLS = 1 << 22  # features x bins of one partition's histogram (32 MB of int64)


def n_bins(n_features):
    """Bins per feature: 2^16, fewer for many features (at most 2^22 cells, at least 256)."""
    return int(min(1 << 16, max(256, _MAX_CELLS // int(n_features))))


def _histogram_block(block, low, high, bins, rng):
    """Per-feature counts (d, bins) of one block clipped to [low, high]."""
    d = block.shape[1]
    x = np.clip(block, low, high)
    idx = np.floor((x - low) / (high - low) * bins).astype(np.int64)
    idx = np.minimum(idx, bins - 1) + np.arange(d) * bins
    return (np.bincount(idx.ravel(), minlength=d * bins).reshape(d, bins),)


def bin_logits(counts, quantiles, epsilon):
    """Log-weights (len(quantiles), bins) of the exponential mechanism over the bins of one
    feature's histogram ``counts``; each row's best bin has log-weight 0."""
    c = np.cumsum(counts)
    n = c[-1]
    mid = 0.5 * (np.concatenate(([0], c[:-1])) + c)
    utilities = -np.abs(mid[None, :] - np.asarray(quantiles)[:, None] * n)
    return (epsilon / (2.0 * SENSITIVITY)) * (utilities - utilities.max(axis=1, keepdims=True))


def histogram_quantiles(hist, quantiles, epsilon, low, high, rng):
    """Release each q-quantile of every feature from its histogram (d, bins); returns
    (len(quantiles), d) values in [low, high]."""
    d, bins = hist.shape
    out = np.empty((len(quantiles), d))
    for j in range(d):
        b = gumbel_max(bin_logits(hist[j], quantiles, epsilon), rng)
        width = (high[j] - low[j]) / bins
        out[:, j] = np.minimum(low[j] + (b + rng.random(b.shape)) * width, high[j])
    return out


def private_bounds_partitioned(parts, epsilon, outer_bounds, quantile, margin, rng):
    """Per-feature private bounds of the records of ``parts`` (see the module docstring);
    returns (lower, upper) post-processed as in memory."""
    d = parts.n_features
    low, high = check_outer_bounds(outer_bounds, d)
    bins = n_bins(d)
    (hist,) = parts.sum(_histogram_block, low, high, bins)
    values = histogram_quantiles(
        hist, [quantile, 1.0 - quantile], quantile_epsilon(epsilon, d), low, high, rng
    )
    return _post_process(values[0], values[1], low, high, margin)
