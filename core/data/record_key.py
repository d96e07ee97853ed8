"""The canonical key of a multiset of records: one budget per source, however it is stored.

A privacy budget belongs to the records, not to a file. The key must therefore not change with
the storage format (dense or sparse), the dtype, the order of the rows or the order of the
columns, and it must be computable in one streaming pass over row blocks (a data set too large
for memory, or sharded on Dask, gets the same key as the same records in memory).

Every value is mixed into a 64-bit word (SplitMix64 of its canonical float64 bits; Steele, Lea &
Flood, OOPSLA 2014), and words are combined by addition modulo 2^64, which is commutative: a row's
word is the sum over its values (column order does not matter), a column's word the sum over its
values (row order does not matter), and the data set's words are the sums of the mixed row words
and of the mixed column words (Clarke et al., "Incremental multiset hash functions", ASIACRYPT
2003). Row and column sums add up over row blocks, so :class:`RecordKeyAccumulator` takes blocks
in any order and split. Two independent mixings give 128 bits for rows and for columns; the key is
the SHA-256 of them with the shape. A zero that a sparse matrix does not store is counted as the
zero it is.

Different records rarely share a key (only when every row and every column has the same multiset
of values, under two independent mixings); sharing one would only make two sources share a budget.
"""

import hashlib

import numpy as np
import scipy.sparse as sp

VERSION = b"privclust-budget-key-v2"
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
# (value salt, word salt) of the two independent mixings
_SALTS = (
    (np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707344)),
    (np.uint64(0xA4093822299F31D0), np.uint64(0x082EFA98EC4E6C89)),
)


def _mix(words, salt):
    """SplitMix64 finaliser of ``words + salt`` (uint64 arrays; arithmetic wraps)."""
    with np.errstate(over="ignore"):
        z = words + salt + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def _bits(values):
    """Canonical float64 bits: -0.0 is 0.0, every NaN is one NaN."""
    v = np.asarray(values, dtype=np.float64) + 0.0
    v = np.where(np.isnan(v), np.nan, v)
    return np.ascontiguousarray(v).view(np.uint64)


class RecordKeyAccumulator:
    """Sums of a key over row blocks of an (n, d) matrix: :meth:`add` each block (dense or
    scipy.sparse) in any order, then :meth:`hexdigest`."""

    def __init__(self, n_features):
        self.n_features = int(n_features)
        self.n_samples = 0
        self._rows = np.zeros(2, dtype=np.uint64)
        self._cols = np.zeros((2, self.n_features), dtype=np.uint64)

    def add(self, block):
        """Add the rows of ``block`` (n_b, d)."""
        d = self.n_features
        if block.shape[1] != d:
            raise ValueError(f"a block has {block.shape[1]} columns; the key counts {d}")
        n_b = block.shape[0]
        with np.errstate(over="ignore"):
            for k, (value_salt, word_salt) in enumerate(_SALTS):
                zero = _mix(np.zeros(1, dtype=np.uint64), value_salt)[0]
                if sp.issparse(block):
                    A = sp.csr_matrix(block, dtype=np.float64)
                    A.sum_duplicates()
                    mixed = _mix(_bits(A.data), value_salt)
                    rows = np.repeat(np.arange(n_b), np.diff(A.indptr))
                    # a stored zero (or one summed to zero) counts as the zero it is
                    row_words = np.bincount(rows, minlength=n_b).astype(np.uint64)
                    row_sum = np.zeros(n_b, dtype=np.uint64)
                    np.add.at(row_sum, rows, mixed)
                    row_sum += (np.uint64(d) - row_words) * zero
                    col_words = np.bincount(A.indices, minlength=d).astype(np.uint64)
                    col_sum = np.zeros(d, dtype=np.uint64)
                    np.add.at(col_sum, A.indices, mixed)
                    col_sum += (np.uint64(n_b) - col_words) * zero
                else:
                    mixed = _mix(_bits(block).reshape(n_b, d), value_salt)
                    row_sum = mixed.sum(axis=1, dtype=np.uint64)
                    col_sum = mixed.sum(axis=0, dtype=np.uint64)
                self._rows[k] += _mix(row_sum, word_salt).sum(dtype=np.uint64)
                self._cols[k] += col_sum
        self.n_samples += n_b
        return self

    def state(self):
        """The accumulated sums (row words, column words, count): what a partition of a
        sharded data set sends to be merged with :meth:`merge_state`."""
        return self._rows.copy(), self._cols.copy(), self.n_samples

    def merge_state(self, state):
        """Add the sums of another accumulator's :meth:`state` (blocks of the same matrix)."""
        rows, cols, n_samples = state
        if cols.shape != self._cols.shape:
            raise ValueError(
                f"a state of {cols.shape[1]} columns; the key counts {self.n_features}"
            )
        with np.errstate(over="ignore"):
            self._rows += rows
            self._cols += cols
        self.n_samples += int(n_samples)
        return self

    def hexdigest(self):
        """The key: SHA-256 of the version, the shape and the 256 bits of sums."""
        h = hashlib.sha256(VERSION + b"|%d|%d|" % (self.n_samples, self.n_features))
        with np.errstate(over="ignore"):
            for k, (_, word_salt) in enumerate(_SALTS):
                h.update(self._rows[k : k + 1].astype("<u8").tobytes())
                h.update(
                    np.array(
                        [_mix(self._cols[k], word_salt).sum(dtype=np.uint64)], dtype="<u8"
                    ).tobytes()
                )
        return h.hexdigest()


def record_key(X, block_rows=65536):
    """The canonical key of the records of ``X`` (dense array or scipy.sparse), in row blocks."""
    n, d = X.shape
    acc = RecordKeyAccumulator(d)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    for start in range(0, n, block_rows):
        acc.add(X[start : start + block_rows])
    return acc.hexdigest()
