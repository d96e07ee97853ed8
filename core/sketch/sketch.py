"""A mergeable (non-private) sketch: masked sum of contributions + record count (Schellekens et
al., SPARS 2019, Eq. (3) before noise).

The sketch of a dataset is a sum over records, so the same object results from one pass over an
array, from chunks of a file streamed from disk, or from partitions merged by addition (Dask,
``distributed.py``).  Noise is added once, to the merged sum, by :meth:`Sketch.release`.
"""

import numpy as np

from .._npy_headers import open_npy
from ..privacy import as_generator
from .operator import SketchOperator


class Sketch:
    """Running Sum_i z_{x_i} (.) b_i (complex, float64) and the count n, for one public operator.

    Every call of :meth:`update` draws its masks from a child generator spawned from the
    generator given at construction, so equal blocks in equal order give equal sketches,
    whichever process computes them. Sketches of disjoint blocks add (the sketch is a sum over
    records), which is what the file and Dask paths use.

    Parameters
    ----------
    operator : SketchOperator
        The public frequencies, dither and signature.
    measurements_per_record : int or None, default=None
        r of Eq. (3): each record keeps r of the m measurements, by a mask b_i drawn independently
        of the data; None means r = m (no subsampling).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the masks.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019,
        Sec. II, Eqs. (2)-(3).
    """

    def __init__(self, operator, measurements_per_record=None, random_state=None):
        if not isinstance(operator, SketchOperator):
            raise TypeError("operator must be a SketchOperator")
        m = operator.sketch_size
        r = m if measurements_per_record is None else int(measurements_per_record)
        if not 1 <= r <= m:
            raise ValueError(
                f"measurements_per_record must be in [1, {m}], got {measurements_per_record}"
            )
        self.operator = operator
        self.measurements_per_record = r
        self.sum = np.zeros(m, dtype=complex)
        self.count = 0
        self._rng = as_generator(random_state)

    @property
    def sketch_size(self):
        return self.operator.sketch_size

    @property
    def alpha(self):
        """Subsampling parameter alpha_r = r / m."""
        return self.measurements_per_record / self.sketch_size

    @property
    def mean(self):
        """The clean (noiseless) sketch Sum / (alpha_r n); unbiased for z_X."""
        if self.count == 0:
            raise ValueError("the sketch is empty (count = 0)")
        return self.sum / (self.alpha * self.count)

    def spawn_generators(self, n):
        """The next ``n`` per-block generators (used by the Dask helper to reproduce ``update``)."""
        return self._rng.spawn(n)

    def update(self, X, random_state=None):
        """Add the rows of X (one block).  Returns self."""
        rng = self.spawn_generators(1)[0] if random_state is None else as_generator(random_state)
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
        self.sum = self.sum + self.operator.masked_sum(X, self.measurements_per_record, rng)
        self.count += X.shape[0]
        return self

    def add_partial(self, partial_sum, count):
        """Merge a (sum, count) pair computed elsewhere with the same operator and r."""
        partial_sum = np.asarray(partial_sum, dtype=complex)
        if partial_sum.shape != self.sum.shape:
            raise ValueError(f"partial sum must have shape {self.sum.shape}")
        self.sum = self.sum + partial_sum
        self.count += int(count)
        return self

    def __add__(self, other):
        if not isinstance(other, Sketch):
            return NotImplemented
        if not self.operator.same_as(other.operator):
            raise ValueError("cannot merge sketches computed with different operators")
        if self.measurements_per_record != other.measurements_per_record:
            raise ValueError("cannot merge sketches with different measurements_per_record")
        out = Sketch(self.operator, self.measurements_per_record, self._rng)
        out.sum = self.sum + other.sum
        out.count = self.count + other.count
        return out

    @classmethod
    def from_array(
        cls, X, operator, measurements_per_record=None, block_size=100_000, random_state=None
    ):
        """Sketch an in-memory (or memory-mapped) array block by block."""
        sk = cls(operator, measurements_per_record, random_state)
        X = np.asarray(X)  # a memmap stays on disk; blocks are read lazily
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
        for start in range(0, X.shape[0], int(block_size)):
            sk.update(X[start : start + int(block_size)])
        return sk

    @classmethod
    def from_blocks(cls, blocks, operator, measurements_per_record=None, random_state=None):
        """Sketch an iterable of (n_i, d) blocks, e.g. chunks read from files one at a time."""
        sk = cls(operator, measurements_per_record, random_state)
        for block in blocks:
            sk.update(block)
        return sk

    @classmethod
    def from_files(
        cls, paths, operator, measurements_per_record=None, block_size=100_000, random_state=None
    ):
        """Stream .npy (memory-mapped) or CSV/TXT files (read ``block_size`` rows at a time)."""
        if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
            paths = [paths]
        return cls.from_blocks(
            (b for p in paths for b in iter_file_blocks(p, block_size)),
            operator,
            measurements_per_record,
            random_state,
        )

    def release(
        self,
        epsilon,
        neighbouring="replace",
        mechanism="laplace",
        delta=0.0,
        random_state=None,
        size=None,
        accountant=None,
        numerator_share=None,
    ):
        """Private sketch: noise added once to the merged sum (see :func:`release.release_sketch`)."""
        from .release import release_sketch

        return release_sketch(
            self,
            epsilon,
            neighbouring=neighbouring,
            mechanism=mechanism,
            delta=delta,
            random_state=random_state,
            size=size,
            accountant=accountant,
            numerator_share=numerator_share,
        )


def iter_file_blocks(path, block_size=100_000):
    """Yield float64 row blocks of a numeric file: ``.npy`` (memory-mapped) or delimited text."""
    import os

    name = os.fspath(path)
    block_size = int(block_size)
    if str(name).endswith(".npy"):
        arr = open_npy(name)
        if arr.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D array, got shape {arr.shape}")
        for start in range(0, arr.shape[0], block_size):
            yield np.asarray(arr[start : start + block_size], dtype=float)
        return
    import pandas as pd

    sep = "\t" if str(name).endswith((".tsv", ".tab")) else ","
    try:
        reader = pd.read_csv(
            name, sep=sep, header=None, chunksize=block_size, dtype=float, comment="#"
        )
        for chunk in reader:
            yield chunk.to_numpy(dtype=float)
    except ValueError as exc:
        raise ValueError(f"{name}: non-numeric value ({exc})") from None
