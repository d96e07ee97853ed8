"""A private data set that lives elsewhere: a ``dask.array``, a ``dask.dataframe`` or a folder of
``.npy`` / CSV shards, read partition by partition on a Dask cluster (extra ``privclust[dask]``).

Its public facts -- the number of features, the public box (the domain of a record), whether the
number of records is public and, when it is, that number -- are declared by the operator and never
read from the data. :meth:`DaskDataset.register` is the operator's one streaming pass: it
validates every shard (a non-finite value, or one outside the declared box, is refused with the
file, row and column) and computes the canonical budget key with
:class:`~privclust.core.data.record_key.RecordKeyAccumulator`, which takes row blocks in any
order and split, so the key equals the in-memory key of the same records.

Releases read the records only inside the :class:`~privclust.core.release.Curator`, after the
charge, through :class:`Partitions`: every block is projected onto the public box in the
partition (NaN to the box centre, values clipped), a function of the block is computed there,
and the partition results are added up on the cluster; only the total reaches the driver, which
adds the noise. dask is imported lazily.

References
----------
Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling.
    Proc. 14th Python in Science Conference (SciPy 2015), 130-136.
Clarke, D. et al. (2003). Incremental multiset hash functions and their application to memory
    integrity checking. ASIACRYPT 2003 (the streaming key).
"""
import hashlib
import os

import numpy as np

from .record_key import RecordKeyAccumulator
from .validation import DataFormatError

#: the environment setting naming an existing scheduler (``tcp://host:8786``)
SCHEDULER_SETTING = "PRIVCLUST_DASK_SCHEDULER"
_SHARD_EXTENSIONS = (".npy", ".csv", ".tsv", ".txt")
_FINGERPRINT_VERSION = b"privclust-dask-dataset-v1"
OUTSIDE = ("error", "clip")


def dask_client(client=None):
    """The ``dask.distributed.Client`` to use: ``client`` when given; else a client of the
    scheduler named by the environment setting ``PRIVCLUST_DASK_SCHEDULER``; else None (dask's
    default: the process's current distributed client if there is one, else local threads)."""
    if client is not None:
        return client
    address = os.environ.get(SCHEDULER_SETTING)
    if address:
        from dask.distributed import Client
        return Client(address)
    return None


def _compute(root, client):
    if client is not None:
        return client.compute(root, sync=True)
    import dask
    return dask.compute(root)[0]


def _add(a, b):
    """Elementwise sum of two partition results (tuples of arrays/numbers; None is empty)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x + y for x, y in zip(a, b, strict=True))


def project(block, lower, upper):
    """Every record projected onto the public box: NaN to the box centre, the rest clipped
    (+-inf to the sides). Per record, so it costs no privacy and never fails on a number."""
    block = np.asarray(block, dtype=np.float64)
    centre = 0.5 * lower + 0.5 * upper
    block = np.where(np.isnan(block), centre, block)
    return np.clip(block, lower, upper)


# ---- reading one partition (runs on a worker) -------------------------------------------------
def _numeric(frame):
    """A pandas frame as float64; a cell that is not a number becomes NaN."""
    import pandas as pd
    return frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)


def _blocks(item, kind, name, n_features, block_rows):
    """Yield (first row, float64 block) of one partition, ``block_rows`` rows at a time."""
    if kind == "npy":
        arr = np.load(item, mmap_mode="r")
        if arr.ndim != 2 or arr.shape[1] != n_features:
            raise DataFormatError(f"expected a 2-D array with n_features={n_features} columns, "
                                  f"got shape {arr.shape}", name)
        for start in range(0, arr.shape[0], block_rows):
            yield start, np.asarray(arr[start:start + block_rows], dtype=np.float64)
    elif kind == "csv":
        import pandas as pd
        sep = "\t" if name.endswith(".tsv") else ","
        start = 0
        for chunk in pd.read_csv(item, sep=sep, header=None, chunksize=block_rows, comment="#"):
            if chunk.shape[1] != n_features:
                raise DataFormatError(f"{chunk.shape[1]} columns, expected n_features="
                                      f"{n_features}", name, start + 1)
            yield start, _numeric(chunk)
            start += chunk.shape[0]
    else:   # a materialised dask.array block or dask.dataframe partition
        block = _numeric(item) if kind == "frame" else np.asarray(item, dtype=np.float64)
        if block.ndim != 2 or block.shape[1] != n_features:
            raise DataFormatError(f"expected {n_features} columns, got shape {block.shape}", name)
        for start in range(0, block.shape[0], block_rows):
            yield start, block[start:start + block_rows]


def _register_partition(item, kind, name, offset, n_features, lower, upper, outside,
                        block_rows):
    """The operator's pass over one partition: (row words, column words, count, digest)
    of the record key, or the first invalid value as a DataFormatError (raised)."""
    acc = RecordKeyAccumulator(n_features)
    digest = hashlib.sha256()
    for start, block in _blocks(item, kind, name, n_features, block_rows):
        bad = ~np.isfinite(block)
        what = "missing, non-numeric or infinite value"
        if outside == "error" and not bad.any():
            bad = (block < lower) | (block > upper)
            what = "value outside the public box"
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise DataFormatError(
                f"{what} {float(block[row, col])!r} (box [{float(lower[col])!r}, "
                f"{float(upper[col])!r}])",
                name, offset + start + int(row) + 1, int(col) + 1)
        acc.add(block)
        digest.update(np.ascontiguousarray(block, dtype="<f8").data)
    return acc.state(), digest.digest()


def _partition_sum(item, kind, name, n_features, lower, upper, block_rows, func, args, rng):
    """Sum over the blocks of one partition of ``func(projected block, *args, rng)``."""
    total = None
    for _, block in _blocks(item, kind, name, n_features, block_rows):
        total = _add(total, func(project(block, lower, upper), *args, rng))
    return total


# ---- the data set -----------------------------------------------------------------------------
class DaskDataset:
    """A private data set read in partitions on Dask, with declared public facts.

    Parameters
    ----------
    source : dask.array.Array, dask.dataframe.DataFrame, str/path or list of paths
        The records: a 2-D dask.array (row blocks), a dask.dataframe (partitions), a folder of
        ``.npy`` / ``.csv`` / ``.tsv`` shards (sorted by name) or a list of such files. A CSV
        shard has no header row.
    n_features : int
        Public number of features (never read from the data).
    box : pair (lower, upper)
        The public domain of a record: numbers or length-``n_features`` arrays. Every record is
        projected onto it when a release reads it.
    n_public : bool
        Whether the number of records is public (it is under replace-one neighbours).
    n_samples : int, optional
        The number of records, required when ``n_public``; checked by :meth:`register`.
    outside : {"error", "clip"}, default="error"
        What :meth:`register` does with a finite value outside the box: refuse it (naming the
        file, row and column), or accept it (releases clip it).
    block_rows : int, default=65536
        Rows read at a time inside a partition (the memory of a task is about
        ``block_rows * n_features`` values plus what the release computes per block).
    name, feature_names, description
        As for :class:`~privclust.core.data.Dataset`.

    Notes
    -----
    The Curator refuses a data set whose facts are missing (naming the fact) and registers it
    when it is not yet registered; releases read it only after their charge.
    """

    public = False
    is_sparse = False
    labels = None
    source = None
    truth_public = False
    legacy_budget_keys = ()

    def __init__(self, source, n_features=None, box=None, n_public=None, n_samples=None,
                 outside="error", block_rows=65536, name="", feature_names=None,
                 description=""):
        self._source = source
        self.n_features = n_features
        self.box = box
        self.n_public = n_public
        self._n_samples = n_samples
        self.outside = outside
        self.block_rows = block_rows
        self.name = str(name)
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.description = str(description)
        self.truth = {}
        self._record_key = None
        self._fingerprint = None

    # ---- public facts -------------------------------------------------------------------------
    def missing_facts(self):
        """Names of the public facts not declared (n_samples counts only when n_public)."""
        missing = [name for name in ("n_features", "box", "n_public")
                   if getattr(self, name) is None]
        if self.n_public and self._n_samples is None:
            missing.append("n_samples")
        return missing

    def check_facts(self):
        """The validated facts (d, lower, upper); ValueError naming a missing or invalid one."""
        missing = self.missing_facts()
        if missing:
            raise ValueError(f"this Dask data set does not declare its public fact(s) "
                             f"{', '.join(missing)}: they are never read from the data, so the "
                             "operator must give them")
        d = self.n_features
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"n_features must be a positive integer, got {d!r}")
        if not isinstance(self.n_public, bool):
            raise ValueError(f"n_public must be True or False, got {self.n_public!r}")
        if self.n_public and (isinstance(self._n_samples, bool) or not isinstance(
                self._n_samples, (int, np.integer)) or self._n_samples < 1):
            raise ValueError(f"n_samples must be a positive integer, got {self._n_samples!r}")
        if self.outside not in OUTSIDE:
            raise ValueError(f"outside must be one of {OUTSIDE}, got {self.outside!r}")
        if isinstance(self.block_rows, bool) or not isinstance(
                self.block_rows, (int, np.integer)) or self.block_rows < 1:
            raise ValueError(f"block_rows must be a positive integer, got {self.block_rows!r}")
        from ..privacy.bounds import check_outer_bounds
        lower, upper = check_outer_bounds(self.box, int(d), name="box")
        return int(d), lower, upper

    @property
    def n_samples(self):
        """The declared number of records (None when it is not public)."""
        return int(self._n_samples) if self.n_public else None

    @property
    def shape(self):
        return (self.n_samples, self.n_features)

    # ---- partitions ---------------------------------------------------------------------------
    def _items(self):
        """[(item, kind, name, first row)] of the partitions, in order (no record is read)."""
        src = self._source
        if isinstance(src, (str, os.PathLike)) or (
                isinstance(src, (list, tuple)) and all(isinstance(p, (str, os.PathLike))
                                                       for p in src)):
            if isinstance(src, (str, os.PathLike)):
                folder = os.fspath(src)
                if not os.path.isdir(folder):
                    raise ValueError(f"{folder}: not a folder of shards")
                paths = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                               if f.lower().endswith(_SHARD_EXTENSIONS))
            else:
                paths = [os.fspath(p) for p in src]
            if not paths:
                raise ValueError(f"{src}: no .npy, .csv or .tsv shard")
            for p in paths:
                if not p.lower().endswith(_SHARD_EXTENSIONS):
                    raise ValueError(f"{p}: a shard must be a .npy, .csv or .tsv file")
            return [(p, "npy" if p.lower().endswith(".npy") else "csv", p, 0) for p in paths]
        import dask.array as da
        if not isinstance(src, da.Array) and hasattr(src, "to_delayed") \
                and hasattr(src, "columns"):                                 # dask.dataframe
            return [(part, "frame", f"partition {i + 1}", 0)
                    for i, part in enumerate(src.to_delayed())]
        if isinstance(src, da.Array):
            if src.ndim != 2:
                raise ValueError(f"a dask.array source must be 2-D, got shape {src.shape}")
            src = src.rechunk({1: -1})
            offsets = np.concatenate([[0], np.cumsum(src.chunks[0])])
            return [(block, "array", "dask.array", int(offsets[i]))
                    for i, block in enumerate(src.to_delayed().ravel())]
        raise TypeError("source must be a dask.array, a dask.dataframe, a folder of shards or a "
                        f"list of shard paths, got {type(src).__name__}")

    # ---- the operator's pass ------------------------------------------------------------------
    @property
    def registered(self):
        return self._record_key is not None

    def register(self, client=None):
        """Validate every shard and compute the budget key, in one streaming pass on Dask.

        Raises ValueError naming a missing public fact, :class:`DataFormatError` naming the
        file (or partition), row and column of the first invalid value, and ValueError when the
        declared ``n_samples`` differs from the records counted. Returns self.
        """
        import dask
        d, lower, upper = self.check_facts()
        items = self._items()
        tasks = [dask.delayed(_register_partition, pure=False)(
            item, kind, name, offset, d, lower, upper, self.outside, int(self.block_rows))
            for item, kind, name, offset in items]
        parts = _compute(tasks, dask_client(client))
        acc = RecordKeyAccumulator(d)
        digest = hashlib.sha256(_FINGERPRINT_VERSION + b"|%d|" % d)
        for state, part_digest in parts:
            acc.merge_state(state)
            digest.update(part_digest)
        if acc.n_samples < 1:
            raise ValueError("the shards hold no record")
        if self.n_public and acc.n_samples != int(self._n_samples):
            raise ValueError(f"n_samples={self._n_samples} is declared but the shards hold "
                             f"{acc.n_samples} records")
        self._record_key = acc.hexdigest()
        self._fingerprint = digest.hexdigest()
        return self

    def _registered(self, what):
        if not self.registered:
            self.register()
        return getattr(self, what)

    @property
    def record_key(self):
        """Canonical key of the records (registers the data set on dask's default scheduler
        when it is not yet registered): equal to the in-memory key of the same records."""
        return self._registered("_record_key")

    @property
    def budget_key(self):
        return self.record_key

    @property
    def fingerprint(self):
        """SHA-256 of the records in partition and row order (names these exact shards)."""
        return self._registered("_fingerprint")

    def partitions(self, client=None):
        """The records as :class:`Partitions` (what a release reads, after its charge)."""
        d, lower, upper = self.check_facts()
        return Partitions(self._items(), d, lower, upper, int(self.block_rows),
                          dask_client(client),
                          n_samples=self.n_samples)

    def __repr__(self):
        n = "n private" if not self.n_public else f"n={self._n_samples}"
        return (f"DaskDataset(name={self.name!r}, d={self.n_features}, {n}, "
                f"{'registered' if self.registered else 'not registered'})")


class Partitions:
    """The records of a :class:`DaskDataset` as seen by a release, after its charge.

    :meth:`sum` maps a function over every (projected) block of every partition and returns
    only the total, summed on the cluster: no partition result reaches the driver on its own.
    """

    partitioned = True

    def __init__(self, items, n_features, lower, upper, block_rows, client, n_samples=None):
        self._items = items
        self.n_features = n_features
        self.n_samples = n_samples   # the declared number of records when it is public
        self.lower, self.upper = lower, upper
        self.block_rows = block_rows
        self.client = client

    @property
    def n_partitions(self):
        return len(self._items)

    def sum(self, func, *args, rngs=None):
        """Sum over all records of ``func(block, *args, rng)`` (a tuple of arrays/numbers).

        Each block is projected onto the public box first. ``rngs``: one generator per
        partition (spawned by the caller from the release's fresh entropy), shared by the
        blocks of that partition in order; None passes ``rng=None``. The partition results are
        added in partition order on the cluster (a left fold), so the total is the same number
        as a sequential pass over the same blocks.
        """
        import dask
        if rngs is not None and len(rngs) != len(self._items):
            raise ValueError(f"rngs has {len(rngs)} generators for {len(self._items)} partitions")
        shared = dask.delayed((func, args), pure=False)
        total = None
        for i, (item, kind, name, _) in enumerate(self._items):
            part = dask.delayed(_apply, pure=False)(
                item, kind, name, self.n_features, self.lower, self.upper, self.block_rows,
                shared, None if rngs is None else rngs[i])
            total = part if total is None else dask.delayed(_add, pure=False)(total, part)
        return _compute(total, self.client)


def _apply(item, kind, name, n_features, lower, upper, block_rows, shared, rng):
    func, args = shared
    return _partition_sum(item, kind, name, n_features, lower, upper, block_rows, func, args, rng)
