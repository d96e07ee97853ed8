"""Sketching on a Dask cluster (optional extra ``privclust[dask]``, for data too large for one
machine).

The sketch is a sum over records: each partition (a block of a ``dask.array`` or one file) is
sketched where it lives and only (sum, count) pairs travel back and are merged.  Block i uses
the i-th generator spawned from the sketch's generator, exactly as :meth:`Sketch.update` would
in a single process, so the merged result equals the single-process sketch over the same blocks.
Noise is added afterwards, once, by :meth:`Sketch.release`.  dask is imported lazily.
"""

import numpy as np

from .sketch import Sketch, iter_file_blocks


def _block_sum(block, operator, r, rng):
    block = np.asarray(block, dtype=float)
    return operator.masked_sum(block, r, rng), block.shape[0]


def _file_sum(path, operator, r, rng, block_size):
    total, count = np.zeros(operator.sketch_size, dtype=complex), 0
    for block in iter_file_blocks(path, block_size):
        total += operator.masked_sum(block, r, rng)
        count += block.shape[0]
    return total, count


def sketch_dask(
    data, operator, measurements_per_record=None, random_state=None, client=None, block_size=100_000
):
    """Sketch a ``dask.array`` (row blocks) or a list of file paths on Dask; returns a
    :class:`Sketch`.  ``client``: a ``dask.distributed.Client`` (default: dask's current
    scheduler).  A file's blocks share one generator per file."""
    import dask

    sk = Sketch(operator, measurements_per_record, random_state)
    r = sk.measurements_per_record
    if isinstance(data, (list, tuple)):
        rngs = sk.spawn_generators(len(data))
        tasks = [
            dask.delayed(_file_sum)(p, operator, r, g, block_size)
            for p, g in zip(data, rngs, strict=True)
        ]
    else:
        import dask.array as da

        if not isinstance(data, da.Array) or data.ndim != 2:
            raise TypeError("data must be a 2-D dask.array or a list of file paths")
        if data.shape[1] != operator.n_features:
            raise ValueError(
                f"data has {data.shape[1]} columns, operator expects {operator.n_features}"
            )
        blocks = data.rechunk({1: -1}).to_delayed().ravel()
        rngs = sk.spawn_generators(len(blocks))
        tasks = [
            dask.delayed(_block_sum)(b, operator, r, g) for b, g in zip(blocks, rngs, strict=True)
        ]
    parts = client.compute(tasks, sync=True) if client is not None else dask.compute(*tasks)
    for total, count in parts:
        sk.add_partial(total, count)
    return sk
