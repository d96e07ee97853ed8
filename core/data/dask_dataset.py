"""A private data set that lives elsewhere: a ``dask.array``, a ``dask.dataframe`` or a folder of
``.npy`` / CSV shards (or, for a sparse count matrix partitioned by rows, scipy ``.npz`` shards), read partition by partition on a Dask cluster (extra ``privclust[dask]``).

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
import time

import numpy as np
import scipy.sparse as sp

from .._npy_headers import load_npz_arrays, load_sparse_npz, open_npy
from .box import check_outer_bounds
from .record_key import RecordKeyAccumulator
from .validation import DataFormatError

#: the environment setting naming an existing scheduler (``tcp://host:8786``)
SCHEDULER_SETTING = "PRIVCLUST_DASK_SCHEDULER"
_SHARD_EXTENSIONS = (".npy", ".npz", ".csv", ".tsv", ".txt")
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
    (+-inf to the sides). Per record, so it costs no privacy and never fails on a number.
    A scipy.sparse block stays sparse: its stored NaN become 0 (the box of a sparse data set
    holds 0) and its stored values are clipped to their column's side."""
    if sp.issparse(block):
        out = sp.csr_array(block, dtype=np.float64, copy=True)
        out.sum_duplicates()
        data = np.where(np.isnan(out.data), 0.0, out.data)
        out.data = np.clip(data, lower[out.indices], upper[out.indices])
        return out
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
    if kind == "npz" or (kind == "array" and sp.issparse(item)):
        A = load_sparse_npz(item) if kind == "npz" else item
        if A.ndim != 2 or A.shape[1] != n_features:
            raise DataFormatError(
                f"expected a sparse matrix with n_features={n_features} "
                f"columns, got shape {A.shape}",
                name,
            )
        A = sp.csr_array(A, dtype=np.float64)
        for start in range(0, A.shape[0], block_rows):
            yield start, A[start : start + block_rows]
    elif kind == "npy":
        arr = open_npy(item)
        if arr.ndim != 2 or arr.shape[1] != n_features:
            raise DataFormatError(
                f"expected a 2-D array with n_features={n_features} columns, got shape {arr.shape}",
                name,
            )
        for start in range(0, arr.shape[0], block_rows):
            yield start, np.asarray(arr[start : start + block_rows], dtype=np.float64)
    elif kind == "csv":
        import pandas as pd

        sep = "\t" if name.endswith(".tsv") else ","
        start = 0
        for chunk in pd.read_csv(item, sep=sep, header=None, chunksize=block_rows, comment="#"):
            if chunk.shape[1] != n_features:
                raise DataFormatError(
                    f"{chunk.shape[1]} columns, expected n_features={n_features}", name, start + 1
                )
            yield start, _numeric(chunk)
            start += chunk.shape[0]
    else:  # a materialised dask.array block or dask.dataframe partition
        block = _numeric(item) if kind == "frame" else np.asarray(item, dtype=np.float64)
        if block.ndim != 2 or block.shape[1] != n_features:
            raise DataFormatError(f"expected {n_features} columns, got shape {block.shape}", name)
        for start in range(0, block.shape[0], block_rows):
            yield start, block[start : start + block_rows]


def _register_partition(item, kind, name, offset, n_features, lower, upper, outside, block_rows):
    """The operator's pass over one partition: (row words, column words, count, digest)
    of the record key, or the first invalid value as a DataFormatError (raised)."""
    acc = RecordKeyAccumulator(n_features)
    digest = hashlib.sha256()
    for start, block in _blocks(item, kind, name, n_features, block_rows):
        if sp.issparse(block):
            block.sum_duplicates()
            values, cols = block.data, block.indices
            rows = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
        else:
            values, cols = block, np.arange(n_features)[None, :]
            rows = np.arange(block.shape[0])[:, None]
        bad = ~np.isfinite(values)
        what = "missing, non-numeric or infinite value"
        if outside == "error" and not bad.any():
            bad = (values < lower[cols]) | (values > upper[cols])
            what = "value outside the public box"
        if bad.any():
            first = tuple(np.argwhere(bad)[0])
            row, col = (
                int(np.broadcast_to(rows, bad.shape)[first]),
                int(np.broadcast_to(cols, bad.shape)[first]),
            )
            raise DataFormatError(
                f"{what} {float(values[first])!r} (box [{float(lower[col])!r}, "
                f"{float(upper[col])!r}])",
                name,
                offset + start + row + 1,
                col + 1,
            )
        acc.add(block)
        if sp.issparse(block):
            for part in (block.indptr, block.indices):
                digest.update(np.ascontiguousarray(part, dtype="<i8").data)
            digest.update(np.ascontiguousarray(block.data, dtype="<f8").data)
        else:
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
        The records: a 2-D dask.array (row blocks, dense or scipy.sparse), a dask.dataframe
        (partitions), a folder of ``.npy`` / ``.npz`` / ``.csv`` / ``.tsv`` shards (sorted by
        name) or a list of such files. A CSV shard has no header row; a ``.npz`` shard is a
        scipy.sparse matrix (``scipy.sparse.save_npz``, read without pickle).
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
    sparse : bool, default=False
        Whether the records are a sparse (count) matrix partitioned by rows: its blocks stay
        scipy.sparse, and its box must hold 0 (an entry it does not store is 0). Public, like
        the shape.
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
    labels = None
    source = None
    truth_public = False
    legacy_budget_keys = ()

    def __init__(
        self,
        source,
        n_features=None,
        box=None,
        n_public=None,
        n_samples=None,
        outside="error",
        block_rows=65536,
        name="",
        feature_names=None,
        description="",
        sparse=False,
    ):
        self._source = source
        self.is_sparse = sparse
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
        self._partition_rows = None

    # ---- public facts -------------------------------------------------------------------------
    def missing_facts(self):
        """Names of the public facts not declared (n_samples counts only when n_public)."""
        missing = [
            name for name in ("n_features", "box", "n_public") if getattr(self, name) is None
        ]
        if self.n_public and self._n_samples is None:
            missing.append("n_samples")
        return missing

    def check_facts(self):
        """The validated facts (d, lower, upper); ValueError naming a missing or invalid one."""
        missing = self.missing_facts()
        if missing:
            raise ValueError(
                f"this Dask data set does not declare its public fact(s) "
                f"{', '.join(missing)}: they are never read from the data, so the "
                "operator must give them"
            )
        d = self.n_features
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"n_features must be a positive integer, got {d!r}")
        if not isinstance(self.n_public, bool):
            raise ValueError(f"n_public must be True or False, got {self.n_public!r}")
        if self.n_public and (
            isinstance(self._n_samples, bool)
            or not isinstance(self._n_samples, (int, np.integer))
            or self._n_samples < 1
        ):
            raise ValueError(f"n_samples must be a positive integer, got {self._n_samples!r}")
        if self.outside not in OUTSIDE:
            raise ValueError(f"outside must be one of {OUTSIDE}, got {self.outside!r}")
        if (
            isinstance(self.block_rows, bool)
            or not isinstance(self.block_rows, (int, np.integer))
            or self.block_rows < 1
        ):
            raise ValueError(f"block_rows must be a positive integer, got {self.block_rows!r}")
        if not isinstance(self.is_sparse, bool):
            raise ValueError(f"sparse must be True or False, got {self.is_sparse!r}")
        lower, upper = check_outer_bounds(self.box, int(d), name="box")
        if self.is_sparse and (np.any(lower > 0) or np.any(upper < 0)):
            raise ValueError(
                "the box of a sparse data set must hold 0 in every column (an "
                f"entry it does not store is 0), got box={self.box!r}"
            )
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
            isinstance(src, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in src)
        ):
            if isinstance(src, (str, os.PathLike)):
                folder = os.fspath(src)
                if not os.path.isdir(folder):
                    raise ValueError(f"{folder}: not a folder of shards")
                paths = sorted(
                    os.path.join(folder, f)
                    for f in os.listdir(folder)
                    if f.lower().endswith(_SHARD_EXTENSIONS)
                )
            else:
                paths = [os.fspath(p) for p in src]
            if not paths:
                raise ValueError(f"{src}: no .npy, .npz, .csv or .tsv shard")
            for p in paths:
                if not p.lower().endswith(_SHARD_EXTENSIONS):
                    raise ValueError(f"{p}: a shard must be a .npy, .npz, .csv or .tsv file")
                if p.lower().endswith(".npz") != bool(self.is_sparse):
                    raise ValueError(
                        f"{p}: a sparse data set has .npz shards (scipy.sparse), "
                        "a dense one .npy or text shards"
                    )
            return [
                (
                    p,
                    os.path.splitext(p)[1]
                    .lower()
                    .lstrip(".")
                    .replace("tsv", "csv")
                    .replace("txt", "csv"),
                    p,
                    0,
                )
                for p in paths
            ]
        import dask.array as da

        if (
            not isinstance(src, da.Array) and hasattr(src, "to_delayed") and hasattr(src, "columns")
        ):  # dask.dataframe
            return [
                (part, "frame", f"partition {i + 1}", 0) for i, part in enumerate(src.to_delayed())
            ]
        if isinstance(src, da.Array):
            if src.ndim != 2:
                raise ValueError(f"a dask.array source must be 2-D, got shape {src.shape}")
            src = src.rechunk({1: -1})
            offsets = np.concatenate([[0], np.cumsum(src.chunks[0])])
            return [
                (block, "array", "dask.array", int(offsets[i]))
                for i, block in enumerate(src.to_delayed().ravel())
            ]
        raise TypeError(
            "source must be a dask.array, a dask.dataframe, a folder of shards or a "
            f"list of shard paths, got {type(src).__name__}"
        )

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
        tasks = [
            dask.delayed(_register_partition, pure=False)(
                item, kind, name, offset, d, lower, upper, self.outside, int(self.block_rows)
            )
            for item, kind, name, offset in items
        ]
        parts = _compute(tasks, dask_client(client))
        acc = RecordKeyAccumulator(d)
        digest = hashlib.sha256(_FINGERPRINT_VERSION + b"|%d|" % d)
        for state, part_digest in parts:
            acc.merge_state(state)
            digest.update(part_digest)
        rows = [int(state[2]) for state, _ in parts]
        if acc.n_samples < 1:
            raise ValueError("the shards hold no record")
        if self.n_public and acc.n_samples != int(self._n_samples):
            raise ValueError(
                f"n_samples={self._n_samples} is declared but the shards hold "
                f"{acc.n_samples} records"
            )
        self._record_key = acc.hexdigest()
        self._fingerprint = digest.hexdigest()
        self._partition_rows = rows
        return self

    def registration(self):
        """What :meth:`register` found (the budget key, the fingerprint and the records per
        partition), JSON-able, for the operator's registry file."""
        if not self.registered:
            raise ValueError("the data set is not registered yet")
        return {
            "record_key": self._record_key,
            "fingerprint": self._fingerprint,
            "partition_rows": list(self._partition_rows),
        }

    @classmethod
    def registered_from(cls, source, registration, **facts):
        """A data set registered earlier (:meth:`registration`), rebuilt without reading a
        record: the operator vouches that the shards have not changed (a release checks their
        record counts before its charge, and projects every record onto the box)."""
        ds = cls(source, **facts)
        rows = [int(r) for r in registration["partition_rows"]]
        if ds.n_public and sum(rows) != int(ds._n_samples):
            raise ValueError(
                f"n_samples={ds._n_samples} is declared but the registration "
                f"counted {sum(rows)} records"
            )
        ds._record_key = str(registration["record_key"])
        ds._fingerprint = str(registration["fingerprint"])
        ds._partition_rows = rows
        return ds

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
        return Partitions(
            self._items(),
            d,
            lower,
            upper,
            int(self.block_rows),
            dask_client(client),
            n_samples=self.n_samples,
            partition_rows=self._partition_rows,
        )

    def __repr__(self):
        n = "n private" if not self.n_public else f"n={self._n_samples}"
        return (
            f"DaskDataset(name={self.name!r}, d={self.n_features}, {n}, "
            f"{'registered' if self.registered else 'not registered'})"
        )


class Partitions:
    """The records of a :class:`DaskDataset` as seen by a release, after its charge.

    :meth:`sum` and :meth:`row_sum` map a function over every (projected) block of every
    partition and return only the total, summed on the cluster: no partition result reaches the
    driver on its own. :meth:`row_map` returns one released value per record (the draws of a
    per-record mechanism whose noise the driver drew).
    """

    partitioned = True

    def __init__(
        self,
        items,
        n_features,
        lower,
        upper,
        block_rows,
        client,
        n_samples=None,
        partition_rows=None,
    ):
        import threading

        self._items = items
        self.progress = Progress()
        self._cancel = threading.Event()
        self.partition_rows = partition_rows  # records per partition (counted at registration)
        self.n_features = n_features
        self.n_samples = n_samples  # the declared number of records when it is public
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
        return self._reduce(
            [
                dask.delayed(_apply, pure=False)(
                    item,
                    kind,
                    name,
                    self.n_features,
                    self.lower,
                    self.upper,
                    self.block_rows,
                    shared,
                    None if rngs is None else rngs[i],
                )
                for i, (item, kind, name, _) in enumerate(self._items)
            ]
        )

    def _reduce(self, tasks, concat=False, phase="reading"):
        """The partition results of ``tasks`` added up in partition order on the cluster (a
        left fold; ``concat``: concatenated along axis 1), only the total brought back; the
        partitions done are counted in :attr:`progress`."""
        import dask

        self._cancel.clear()  # after the charge a cancel is dropped: the release completes
        self.progress.begin(phase, self.n_partitions)
        fold = _concat_all if concat else _sum_all
        if self.client is None or not hasattr(self.client, "submit"):
            out = _compute(dask.delayed(fold, pure=False)(list(tasks)), self.client)
        else:
            # one partition at a time: per-partition arguments drawn lazily leave the driver
            futures = [self.client.compute(task) for task in tasks]
            total = self.client.submit(fold, futures, pure=False)
            _follow(futures, self.progress)
            out = total.result()
        self._cancel.clear()
        self.progress.end()
        return out

    def cancel(self):
        """Ask the release that is checking the partitions to stop before its charge (a
        release already charged ignores it and completes)."""
        self._cancel.set()

    def check_layout(self):
        """The check a release makes before its charge: every shard is still there with the
        number of records counted at registration (shard headers and line counts only, never
        a value). Raises :class:`ReleaseCancelled` when :meth:`cancel` was called before or
        during the check, ValueError naming a shard that changed. A release cancelled before
        this check starts is cancelled too; the request is cleared after the check."""
        import dask

        tasks = [
            dask.delayed(_count_rows, pure=False)(item, kind) for item, kind, _, _ in self._items
        ]
        try:
            self.progress.begin("checking", len(tasks))
            if self._cancel.is_set():
                raise ReleaseCancelled(
                    "the release was cancelled before its charge: nothing was charged"
                )
            if self.client is None or not hasattr(self.client, "submit"):
                counts = _compute(tasks, self.client)
            else:
                futures = self.client.compute(tasks)
                if not _follow(futures, self.progress, self._cancel):
                    self.client.cancel(futures)
                    raise ReleaseCancelled(
                        "the release was cancelled before its charge: nothing was charged"
                    )
                counts = [f.result() for f in futures]
        finally:
            self._cancel.clear()
            self.progress.end()
        if self.partition_rows is not None:
            for (_, _, name, _), got, want in zip(
                self._items, counts, self.partition_rows, strict=False
            ):
                if got is not None and got != want:
                    raise ValueError(
                        f"{name} holds {got} records, {want} when the data set "
                        "was registered: register it again"
                    )

    def _row_tasks(self, func, args, rows, concat):
        """One task per partition (a generator, in partition order) applying ``func(block,
        *args, *row slices)`` to its blocks. ``rows``: arrays with one entry per record on axis
        1, sliced to each partition's and block's records; or a callable of a partition's number
        of records returning its arrays, called once per partition in order (so that large
        per-record arguments, e.g. noise, are drawn one partition at a time)."""
        import dask

        if self.partition_rows is None:
            raise ValueError("the partitions' sizes are counted when the data set is registered")
        offsets = np.concatenate([[0], np.cumsum(self.partition_rows)]).astype(np.int64)
        if not callable(rows):
            for a in rows:
                if a.shape[1] != offsets[-1]:
                    raise ValueError(
                        f"a per-record argument has {a.shape[1]} records, the "
                        f"data set {offsets[-1]}"
                    )
        shared = dask.delayed((func, args), pure=False)
        for i, (item, kind, name, _) in enumerate(self._items):
            lo, hi = offsets[i], offsets[i + 1]
            mine = rows(int(hi - lo)) if callable(rows) else tuple(a[:, lo:hi] for a in rows)
            yield dask.delayed(_apply_rows, pure=False)(
                item,
                kind,
                name,
                self.n_features,
                self.lower,
                self.upper,
                self.block_rows,
                shared,
                mine,
                concat,
            )

    def row_sum(self, func, *args, rows=()):
        """Sum over all blocks of ``func(block, *args, *row slices)`` (a tuple of arrays), where
        ``rows`` are public arrays with one entry per record on axis 1 (e.g. labels (S, n)):
        each block receives its own records' slices. Added in partition order on the cluster."""
        return self._reduce(self._row_tasks(func, args, rows, concat=False))

    def row_map(self, func, *args, rows=()):
        """``func(block, *args, *row slices)`` (an array with the block's records on axis 1)
        for every block, concatenated in record order. Only for per-record outputs of a
        mechanism whose randomness the driver drew and passed in ``rows`` (released values,
        never statistics of the records); ``rows`` as for :meth:`row_sum`, or a callable
        (see ``_row_tasks``)."""
        return self._reduce(self._row_tasks(func, args, rows, concat=True), concat=True)


class ReleaseCancelled(RuntimeError):
    """A release on a Dask data set cancelled before its charge (nothing was charged)."""


class Progress:
    """What a release on a Dask data set has done so far, as public counts: the phase
    ("idle", "checking": the check before the charge, "reading": a pass over the records after
    it), the passes started, and the partitions done of the current pass. Read by the page's
    progress bar from another thread."""

    def __init__(self):
        self.phase, self.passes, self.done, self.total = "idle", 0, 0, 0

    def begin(self, phase, total):
        self.passes += phase == "reading"
        self.phase, self.done, self.total = phase, 0, int(total)

    def end(self):
        self.done = self.total

    def reset(self):
        self.phase, self.passes, self.done, self.total = "idle", 0, 0, 0

    def snapshot(self):
        return {"phase": self.phase, "passes": self.passes, "done": self.done, "total": self.total}


def _follow(futures, progress, cancel=None, every=0.05):
    """Count the finished partition futures into ``progress`` until all are done (True), or
    until ``cancel`` is set (False). Only their status is read, never their results."""
    while True:
        progress.done = sum(f.done() for f in futures)
        if progress.done == len(futures):
            return True
        if cancel is not None and cancel.is_set():
            return False
        time.sleep(every)


def _sum_all(parts):
    """The partition results added in partition order (a left fold), on a worker."""
    total = None
    for part in parts:
        total = _add(total, part)
    return total


def _concat_all(parts):
    return np.concatenate(parts, axis=1)


def _count_rows(item, kind):
    """Records in one shard from its header (.npy, .npz) or its lines (CSV, comments and blank
    lines skipped); None for a partition of a dask collection (its layout cannot change)."""
    if kind == "npy":
        return int(open_npy(item).shape[0])
    if kind == "npz":
        return int(load_npz_arrays(item, ["shape"])["shape"][0])
    if kind == "csv":
        with open(item, "rb") as f:
            return sum(1 for line in f if line.strip() and not line.startswith(b"#"))
    return None


def _apply(item, kind, name, n_features, lower, upper, block_rows, shared, rng):
    func, args = shared
    return _partition_sum(item, kind, name, n_features, lower, upper, block_rows, func, args, rng)


def _apply_rows(item, kind, name, n_features, lower, upper, block_rows, shared, rows, concat):
    """One partition of :meth:`Partitions.row_sum` (``concat`` False) or ``row_map`` (True)."""
    func, args = shared
    out, total = [], None
    for start, block in _blocks(item, kind, name, n_features, block_rows):
        got = func(
            project(block, lower, upper),
            *args,
            *(a[:, start : start + block.shape[0]] for a in rows),
        )
        if concat:
            out.append(got)
        else:
            total = _add(total, got)
    if not concat:
        return total
    return np.concatenate(out, axis=1) if out else np.zeros((rows[0].shape[0], 0), np.int64)
