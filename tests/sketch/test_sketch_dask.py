"""Dask-distributed sketching equals the single-process sketch (a sketch is a sum over records,
so partitions can be sketched apart and added); a local cluster with 2 workers is started in the
test."""

import numpy as np
import pytest

from privclust.core.sketch import Sketch, SketchOperator, sketch_dask

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

# one worker runs the whole file, so the module's local Dask cluster starts once
pytestmark = pytest.mark.xdist_group("test_sketch_dask")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.parametrize("r", [None, 1])
def test_dask_array_equals_single_process(client, r):
    X = np.random.default_rng(0).normal(size=(2500, 4))
    op = SketchOperator.draw(4, 30, 2.0, random_state=1)
    dist = sketch_dask(da.from_array(X, chunks=(1000, 4)), op, r, random_state=7, client=client)
    local = Sketch.from_array(X, op, r, block_size=1000, random_state=7)
    assert dist.count == local.count == 2500
    assert np.allclose(dist.sum, local.sum, atol=1e-9)


def test_dask_files_equal_single_process(client, tmp_path):
    X = np.random.default_rng(1).normal(size=(900, 4))
    paths = []
    for i in range(3):
        paths.append(str(tmp_path / f"part{i}.npy"))
        np.save(paths[-1], X[300 * i : 300 * (i + 1)])
    op = SketchOperator.draw(4, 30, 2.0, random_state=1)
    dist = sketch_dask(paths, op, 1, random_state=3, client=client)
    local = Sketch.from_files(paths, op, 1, random_state=3)
    assert np.allclose(dist.sum, local.sum, atol=1e-9)
