"""The Dask mode of compressive k-means, DPLloyd and the LSH coreset: partition sums, noise once
in the driver.

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
Chang, A. and Kamath, P. (2021). Practical differentially private clustering. Google Research
    (the LSH prefix tree: per-level bucket counts and leaf sums are sums over records).
"""

import numpy as np

from ..data import clip_box
from .frequencies import _as_bounds
from .prefix_tree import children, leaf_ids, walk
from .public_ball import clip_records, group_sums, project_centred
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
    total, count = parts.sum(
        _sketch_block, operator, sk.measurements_per_record, lower, upper, rngs=rngs
    )
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


def _hashed(block, ball, hyperplanes):
    """(records clipped to the public ball, their scales, their SimHash bits) of one block."""
    Xb, s = clip_records(block, *ball)
    return Xb, s, project_centred(Xb, s, ball[2], hyperplanes) > 0.0


def _bucket_counts(block, ball, hyperplanes, kept_root, steps, level, pos, n_children, rng):
    """This block's counts of the children of the branching buckets at ``level``."""
    _, _, bits = _hashed(block, ball, hyperplanes)
    child = children(walk(bits, kept_root, steps)[-1], bits[:, level - 1], pos)
    return (np.bincount(child[child >= 0], minlength=n_children).astype(np.float64),)


def _block_size(block, rng):
    return (np.array([float(block.shape[0])]),)


def _leaf_sums(block, ball, hyperplanes, kept_root, steps, is_leaf, n_leaves, rng):
    """This block's sums of its clipped, centred records per leaf of the grown tree."""
    Xb, s, bits = _hashed(block, ball, hyperplanes)
    leaf = leaf_ids(walk(bits, kept_root, steps), is_leaf)
    return (group_sums(Xb, s, ball[2], leaf, n_leaves),)


class PartitionPrefixes:
    """The LSH coreset's bucket counter (see
    :class:`~privclust.core.sketch.prefix_tree.RecordPrefixes`) on a Dask data set: each level's
    counts are partition sums, every partition hashing its records with the public hyperplanes
    and walking them down the public tree grown so far (kept buckets only), and the leaves' sums
    are partition sums too. The driver adds all the noise
    (:func:`~privclust.core.sketch.prefix_tree.grow_from_counts`). One pass over the records per
    tree level, plus one for the root and one for the leaf sums."""

    def __init__(self, parts, ball, hyperplanes):
        self._parts = parts
        self._ball = ball
        self._hyperplanes = hyperplanes
        self.depth = hyperplanes.shape[1]
        self._kept_root, self._steps = None, []

    def root_count(self):
        (n,) = self._parts.sum(_block_size)
        return n

    def start(self, kept_root):
        self._kept_root, self._steps = kept_root, []

    def child_counts(self, level, pos, n_children):
        (c,) = self._parts.sum(
            _bucket_counts,
            self._ball,
            self._hyperplanes,
            self._kept_root,
            list(self._steps),
            level,
            pos,
            n_children,
        )
        return c

    def keep(self, pos, renum):
        self._steps.append((pos, renum))

    def record_leaf(self, is_leaf):
        """None: each record's leaf stays on its partition."""
        return None

    def leaf_sums(self, tree, n_leaves):
        (sums,) = self._parts.sum(
            _leaf_sums,
            self._ball,
            self._hyperplanes,
            self._kept_root,
            list(self._steps),
            tree.is_leaf,
            n_leaves,
        )
        return sums
