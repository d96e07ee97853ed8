"""NumPy headers are parsed one thread at a time.

CPython 3.11's AST constructor shares its recursion counter between threads, and numpy parses
each .npy header with ``ast.literal_eval``; CI once failed registering .npy shards on dask's
thread pool with "SystemError: AST constructor recursion depth mismatch". Here the header parser
is slowed down and watched: registration on 4 dask threads, and every reader of
``privclust.core._npy_headers`` from a thread pool, must never have two parses in flight.
"""

import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.lib._format_impl as npy_format
import pytest
import scipy.sparse as sp

from privclust.core import _npy_headers
from privclust.core.data.dask_dataset import DaskDataset


@pytest.fixture
def parses(monkeypatch):
    """The most header parses ever running at once (parses take 5 ms each here)."""
    parse = npy_format._read_array_header
    lock = threading.Lock()
    state = {"now": 0, "most": 0, "calls": 0}

    def slow_parse(*args, **kwargs):
        with lock:
            state["now"] += 1
            state["calls"] += 1
            state["most"] = max(state["most"], state["now"])
        try:
            time.sleep(0.005)
            return parse(*args, **kwargs)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(npy_format, "_read_array_header", slow_parse)
    return state


def test_the_watch_sees_overlapping_parses_without_the_lock(parses):
    blob = io.BytesIO()
    np.save(blob, np.zeros((3, 2)))
    raw = blob.getvalue()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: np.load(io.BytesIO(raw)), range(16)))
    assert parses["most"] > 1  # else the tests below could not fail


def test_registering_shards_on_dask_threads_parses_one_header_at_a_time(parses, tmp_path):
    dask = pytest.importorskip("dask")
    rng = np.random.default_rng(0)
    folder = tmp_path / "shards"
    folder.mkdir()
    for i in range(8):
        np.save(folder / f"p{i}.npy", rng.uniform(-1, 1, size=(50, 2)))
    with dask.config.set(scheduler="threads", num_workers=4):
        ds = DaskDataset(
            str(folder), n_features=2, box=(-1.0, 1.0), n_public=True, n_samples=400
        ).register()
    assert ds.registered
    assert parses["calls"] >= 8
    assert parses["most"] == 1


def test_every_reader_parses_one_header_at_a_time(parses, tmp_path):
    X = np.arange(12.0).reshape(6, 2)
    np.save(tmp_path / "a.npy", X)
    np.savez(tmp_path / "b.npz", shape=np.array([6, 2]), x=X)
    sp.save_npz(tmp_path / "c.npz", sp.csr_array(X))
    blob = io.BytesIO()
    np.save(blob, X)
    readers = [
        lambda: _npy_headers.open_npy(tmp_path / "a.npy"),
        lambda: _npy_headers.load_npz_arrays(tmp_path / "b.npz", ["shape", "x"])["x"],
        lambda: _npy_headers.load_sparse_npz(tmp_path / "c.npz").toarray(),
        lambda: _npy_headers.load_npy_bytes(blob.getvalue()),
    ]
    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(lambda i: readers[i % 4](), range(16)))
    for got in out:
        np.testing.assert_array_equal(got, X)
    assert parses["most"] == 1
