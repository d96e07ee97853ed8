"""The Dask mode of compressive k-means and DPLloyd: partition sums, noise once in the driver.

A release on a :class:`~privclust.core.data.dask_dataset.DaskDataset` reads the records through
:class:`~privclust.core.data.dask_dataset.Partitions` after its charge. Both estimators only need
sums over records, so each partition computes its part where it lives (records clipped to the
estimator's public box there, per record), the parts are added on the cluster, and the driver
adds the noise to the total -- exactly the mechanism of the in-memory release, with the same
plan, cost and guarantee. Workers never add noise; the sketch's masks (r < m) come from one
generator per partition spawned from the release's generator (fresh OS entropy at the door).

References
----------
Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and Gribonval, R.
    (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II (the sketch is a
    sum over records, Eq. (3); noise added once, Theorem 1).
Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
    clustering. CODASPY 2016, 26-37 (DPLloyd: per-iteration noisy counts and sums).
"""
import numpy as np

from ..data import clip_box
from .dplloyd import _cluster_stats, noise_scales, sphere_packing_init
from .frequencies import _as_bounds
from .sketch import Sketch


def _sketch_block(block, operator, r, lower, upper, rng):
    """(masked sketch sum, count) of one block clipped to the estimator's box."""
    return operator.masked_sum(clip_box(block, lower, upper), r, rng), block.shape[0]


def sketch_partitions(parts, operator, measurements_per_record, bounds, rng):
    """The (non-private) :class:`Sketch` of the records of ``parts``: partition sums of the
    masked sketch, one mask generator per partition spawned from ``rng``."""
    lower, upper = _as_bounds(bounds, parts.n_features)
    sk = Sketch(operator, measurements_per_record, rng)
    rngs = sk.spawn_generators(parts.n_partitions)
    total, count = parts.sum(_sketch_block, operator, sk.measurements_per_record, lower, upper,
                             rngs=rngs)
    return sk.add_partial(total, count)


def _lloyd_block(block, centers, lower, upper, rng):
    """Counts (1, k) and coordinate sums (1, k, d) of one block clipped to the box."""
    return _cluster_stats(clip_box(block, lower, upper), centers)


def lloyd_sums(parts, centers, bounds):
    """The nearest-centre counts (1, k) and coordinate sums (1, k, d) of the records of
    ``parts`` (clipped to ``bounds``) for the centres (1, k, d): one DPLloyd iteration's sums."""
    lower, upper = _as_bounds(bounds, parts.n_features)
    return parts.sum(_lloyd_block, np.asarray(centers, dtype=float), lower, upper)


def dplloyd_partitioned(parts, n_clusters, epsilon, bounds, n_iter, init, neighbouring, rng,
                        accountant=None):
    """DPLloyd on partitions: the draws of
    :func:`~privclust.core.sketch.dplloyd.dplloyd_runs` (one run) in the same order, with each
    iteration's counts and sums computed as partition sums; returns the centres (k, d)."""
    d, k = parts.n_features, int(n_clusters)
    lower, upper = _as_bounds(bounds, d)
    b_count, b_sum, spends = noise_scales(epsilon, n_iter, lower, upper, init, neighbouring)
    if init == "uniform":
        centers = rng.uniform(lower, upper, size=(1, k, d))
    else:
        centers = sphere_packing_init(k, lower, upper, rng)[None]
    for t in range(int(n_iter)):
        if accountant is not None:
            for name, eps, sens in spends:
                accountant.spend(f"DPLloyd iteration {t + 1}: {name}", eps, 0.0, sens)
        counts, sums = lloyd_sums(parts, centers, bounds)
        counts = counts + rng.laplace(0.0, b_count, size=counts.shape)
        sums = sums + rng.laplace(0.0, b_sum, size=sums.shape)
        ok = counts >= 1.0
        means = clip_box((sums / np.where(ok, counts, 1.0)[..., None]).reshape(-1, d),
                         lower, upper)
        centers = np.where(ok[..., None], means.reshape(1, k, d), centers)
    return centers[0]
