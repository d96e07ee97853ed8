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

from ..data import clip_box
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


def _centred_block(block, func, lower, upper, rng):
    """``func`` of one block clipped to the estimator's box and centred on its midpoint."""
    return func(clip_box(block, lower, upper) - (lower + upper) / 2.0)


class PartitionSums:
    """Box-clipped, box-centred records that stay on their partitions: what DPLloyd
    (:func:`~privclust.core.sketch.dplloyd.dplloyd_runs`) and compressive k-means' refinement
    (:func:`~privclust.core.sketch.ckm.refine_runs`) read, as sums only. ``map_sum(func)`` is
    the sum over all records of ``func(centred block)``, added on the cluster; the callers add
    their noise to it in the driver, in the same order as in memory."""

    def __init__(self, parts, bounds):
        self._parts = parts
        self.lower, self.upper = _as_bounds(bounds, parts.n_features)
        self.shape = (None, parts.n_features)

    def map_sum(self, func):
        return self._parts.sum(_centred_block, func, self.lower, self.upper)
