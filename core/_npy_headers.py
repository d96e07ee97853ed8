"""Read NumPy files one header at a time: the one way privclust opens .npy/.npz data.

numpy parses every .npy header (also each member of an .npz) with ``ast.literal_eval``. CPython
3.11 keeps the AST constructor's recursion depth in state that all threads share, and parses
running in two threads at once can fail with "SystemError: AST constructor recursion depth
mismatch" (python/cpython#106905 and the reports linked there). privclust's CI met it when dask
read .npy shards on its thread pool. Dask tasks, server sessions and the ledger's release decoding
all read NumPy files from threads, so each read here holds :data:`HEADER_LOCK` while numpy parses.
A memory-mapped ``.npy`` holds it only for the header; an ``.npz`` for its whole (bounded) read.
"""

import io
import threading

import numpy as np
import scipy.sparse as sp

HEADER_LOCK = threading.RLock()


def open_npy(path):
    """``np.load(path, mmap_mode="r")``: the array memory-mapped, nothing read but the header."""
    with HEADER_LOCK:
        return np.load(path, mmap_mode="r")


def load_npz_arrays(path, keys):
    """The members ``keys`` of the .npz at ``path`` (never unpickled), as a dict of arrays."""
    with HEADER_LOCK, np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in keys}


def load_sparse_npz(path):
    """``scipy.sparse.load_npz(path)`` (a matrix saved by ``save_npz``)."""
    with HEADER_LOCK:
        return sp.load_npz(path)


def load_npy_bytes(blob):
    """The array of one in-memory .npy ``blob`` (never unpickled)."""
    with HEADER_LOCK:
        return np.load(io.BytesIO(blob), allow_pickle=False)
