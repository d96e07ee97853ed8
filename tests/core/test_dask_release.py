"""Private releases on a data set that lives on Dask, through the Curator's door.

A local cluster with 2 in-process workers is started once for the module. The Dask mode of a
release must be the in-memory mechanism computed from partition sums: for the same generators
the sketch and the DPLloyd sums are identical; the budget key of the shards equals the in-memory
key of the same records in any order and split; shards are validated at registration; a release
never fails after its charge; the Curator refuses missing public facts before anything runs.
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core import (
    BalcanKMeans,
    CompressiveKMeans,
    Curator,
    Dataset,
    DPLloyd,
    DPTauCoClustering,
    Ledger,
    LSHCoresetKMeans,
    OneCluster,
    PrivateBounds,
)
from privclust.core.bounds.partitioned_bounds import _histogram_block, bin_logits
from privclust.core.data import clip_box
from privclust.core.data.dask_dataset import SCHEDULER_SETTING, DaskDataset, dask_client, project
from privclust.core.data.validation import DataFormatError
from privclust.core.release.vouch import PrivacyRefused
from privclust.core.sketch.dplloyd import _cluster_stats, dplloyd_runs
from privclust.core.sketch.partitioned import PartitionSums

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

# one worker runs the whole file, so the module's local Dask cluster starts once
pytestmark = pytest.mark.xdist_group("test_dask_release")

D = 3
BOX = (-4.0, 4.0)


@pytest.fixture(scope="module")
def cluster():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def client(cluster):
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()


def _records(n=1200, seed=0):
    """Records on a 1/8 grid inside the box: every sum of them is exact in float64."""
    rng = np.random.default_rng(seed)
    centres = np.array([[-2.0, -2.0, 0.0], [2.0, 0.0, 2.0], [0.0, 2.0, -2.0]])
    X = centres[rng.integers(0, 3, n)] + rng.normal(scale=0.4, size=(n, D))
    return np.clip(np.round(X * 8) / 8, *BOX)


def _write_shards(folder, X, splits, kind="npy"):
    folder.mkdir(exist_ok=True)
    paths = []
    for i, part in enumerate(np.split(X, splits)):
        path = folder / f"shard{i:03d}.{kind}"
        if kind == "npy":
            np.save(path, part)
        else:
            np.savetxt(path, part, delimiter=",", fmt="%.17g")
        paths.append(path)
    return paths


def _facts(**kw):
    facts = dict(n_features=D, box=BOX, n_public=True, n_samples=1200)
    facts.update(kw)
    return facts


# ---- the budget key ---------------------------------------------------------------------------
def test_key_of_shards_equals_in_memory_key_any_order_and_split(client, tmp_path):
    X = _records()
    key = Dataset(X).record_key
    perm = np.random.default_rng(3).permutation(len(X))
    sources = [
        (tmp_path / "a", [400, 800], "npy", X),
        (tmp_path / "b", [7, 1000], "npy", X[perm]),
        (tmp_path / "c", [600], "csv", X[perm[::-1]]),
    ]
    for folder, splits, kind, rows in sources:
        _write_shards(folder, rows, splits, kind)
        ds = DaskDataset(str(folder), **_facts(block_rows=128)).register(client)
        assert ds.budget_key == key
    for chunks in (100, 333):
        ds = DaskDataset(da.from_array(X[perm], chunks=(chunks, D)), **_facts()).register(client)
        assert ds.budget_key == key
    # a changed record gives another key; the order-sensitive fingerprint tells orders apart
    Y = X.copy()
    Y[5, 1] += 0.125
    assert (
        DaskDataset(da.from_array(Y, chunks=(400, D)), **_facts()).register(client).budget_key
        != key
    )
    a = DaskDataset(da.from_array(X, chunks=(400, D)), **_facts()).register(client)
    b = DaskDataset(da.from_array(X[perm], chunks=(400, D)), **_facts()).register(client)
    assert a.fingerprint != b.fingerprint and a.budget_key == b.budget_key


# ---- validation at registration -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["npy", "csv"])
def test_registration_names_file_row_column_of_huge_and_non_finite(client, tmp_path, kind):
    X = _records()
    bad = X.copy()
    bad[401 + 9, 2] = 1e300  # huge: shard 2, its 10th record, column 3
    paths = _write_shards(tmp_path / "huge", bad, [401], kind)
    with pytest.raises(DataFormatError) as info:
        DaskDataset(str(tmp_path / "huge"), **_facts()).register(client)
    err = info.value
    assert (err.file, err.row, err.column) == (str(paths[1]), 10, 3)
    assert "outside the public box" in str(err) and str(paths[1]) in str(err)

    bad = X.copy()
    bad[401 + 4, 0] = np.nan if kind == "npy" else np.inf
    paths = _write_shards(tmp_path / "nan", bad, [401], kind)
    for outside in ("error", "clip"):  # non-finite is refused whatever ``outside`` says
        with pytest.raises(DataFormatError) as info:
            DaskDataset(str(tmp_path / "nan"), **_facts(outside=outside)).register(client)
        assert (info.value.file, info.value.row, info.value.column) == (str(paths[1]), 5, 1)


def test_registration_checks_declared_count_and_non_numeric_csv(client, tmp_path):
    X = _records()
    _write_shards(tmp_path / "ok", X, [500])
    with pytest.raises(ValueError, match="n_samples=1000 is declared but the shards hold 1200"):
        DaskDataset(str(tmp_path / "ok"), **_facts(n_samples=1000)).register(client)
    folder = tmp_path / "text"
    folder.mkdir()
    (folder / "s.csv").write_text("1,2,3\n1,oops,3\n")
    with pytest.raises(DataFormatError) as info:
        DaskDataset(str(folder), **_facts(n_samples=2)).register(client)
    assert (info.value.row, info.value.column) == (2, 2)


# ---- the door refuses missing facts ---------------------------------------------------------
@pytest.mark.parametrize(
    "fact, facts",
    [
        ("n_features", dict(n_features=None)),
        ("box", dict(box=None)),
        ("n_public", dict(n_public=None)),
        ("n_samples", dict(n_samples=None)),
    ],
)
def test_curator_refuses_missing_public_fact(fact, facts):
    X = _records()
    ds = DaskDataset(da.from_array(X, chunks=(400, D)), **_facts(**facts))
    with pytest.raises(ValueError, match=fact):
        Curator(ds, Ledger(1.0))
    assert not ds.registered  # refused before any record was read


def test_replace_ledger_needs_public_n_and_estimators_without_dask_mode_refused(client):
    X = _records()
    private_n = DaskDataset(da.from_array(X, chunks=(400, D)), **_facts(n_public=False))
    with pytest.raises(ValueError, match="n_public"):
        Curator(private_n, Ledger(1.0, unit="replace"), client=client)
    ledger = Ledger(1.0, unit="add_remove")
    cur = Curator(private_n, ledger, client=client)
    assert "n_samples" not in cur.public_facts()
    with pytest.raises(PrivacyRefused, match="no Dask mode"):
        cur.release(BalcanKMeans(n_clusters=3, epsilon=1.0, bounds=BOX))
    assert ledger.spent == (0.0, 0.0)


# ---- the same mechanism as in memory --------------------------------------------------------
@pytest.mark.parametrize("r", [None, 2])
def test_sketch_on_dask_equals_in_memory_for_the_same_generators(client, r):
    X = _records()
    ds = DaskDataset(da.from_array(X, chunks=(300, D)), **_facts()).register(client)
    parts = ds.partitions(client)
    fitted = []
    for data in (X, parts):
        est = CompressiveKMeans(
            n_clusters=3,
            bounds=(-3.0, 3.0),
            epsilon=1.0,
            measurements_per_record=r,
            block_size=300,
            n_replicates=1,
        )
        rng = np.random.default_rng(11)  # a fixed seed for this comparison only
        est._before_charge((1200, D), rng)
        if data is X:
            est._fit(X, rng)
        else:
            est._fit_partitioned(parts, rng)
        fitted.append(est)
    mem, dist = fitted
    np.testing.assert_array_equal(dist.sketch_, mem.sketch_)
    np.testing.assert_array_equal(dist.cluster_centers_, mem.cluster_centers_)
    assert dist.privacy_ == mem.privacy_


def test_dplloyd_sums_and_release_on_dask_equal_in_memory(client, tmp_path):
    X = _records()
    _write_shards(tmp_path / "s", X, [250, 700, 701])
    parts = (
        DaskDataset(str(tmp_path / "s"), **_facts(block_rows=64))
        .register(client)
        .partitions(client)
    )
    bounds = (-3.0, 3.0)
    centers = np.random.default_rng(2).uniform(-3, 3, size=(1, 3, D))
    source = PartitionSums(parts, bounds)
    counts, sums = source.map_sum(functools.partial(_cluster_stats, centers=centers))
    mem_counts, mem_sums = _cluster_stats(clip_box(X, *bounds), centers)
    np.testing.assert_array_equal(counts, mem_counts)
    np.testing.assert_array_equal(sums, mem_sums)
    for init in ("uniform", "sphere_packing", "private_box"):
        mem = dplloyd_runs(X, 3, 1.0, bounds, 5, init, "replace", np.random.default_rng(4))
        dist = dplloyd_runs(source, 3, 1.0, bounds, 5, init, "replace", np.random.default_rng(4))
        np.testing.assert_array_equal(dist, mem)


def test_release_on_dask_has_the_in_memory_plan_cost_and_guarantee(client):
    X = _records()
    ds = DaskDataset(da.from_array(X, chunks=(400, D)), **_facts()).register(client)
    dask_ledger, mem_ledger = Ledger(5.0, dataset=ds), Ledger(5.0, dataset=Dataset(X))
    assert dask_ledger.dataset == mem_ledger.dataset  # one budget for the records
    on_dask = Curator(ds, dask_ledger, client=client)
    in_memory = Curator(Dataset(X), mem_ledger)
    for est in (
        CompressiveKMeans(n_clusters=3, bounds=BOX, epsilon=1.0),
        DPLloyd(n_clusters=3, bounds=BOX, epsilon=1.0, neighbouring="replace"),
    ):
        a, b = on_dask.release(est), in_memory.release(est)
        assert a.guarantee == b.guarantee and a.cost == b.cost
        assert set(a.attributes) == set(b.attributes)
        centres = np.asarray(a.attributes["cluster_centers_"])
        assert centres.shape == (3, D) and np.all(np.abs(centres) <= 4.0)
    assert dask_ledger.spent == mem_ledger.spent == (2.0, 0.0)
    # an identical request is answered from the store at no charge
    on_dask.release(DPLloyd(n_clusters=3, bounds=BOX, epsilon=1.0, neighbouring="replace"))
    assert dask_ledger.spent == (2.0, 0.0)


def test_release_never_fails_after_its_charge_on_shards_changed_later(client, tmp_path):
    X = _records()
    paths = _write_shards(tmp_path / "s", X, [600])
    ds = DaskDataset(str(tmp_path / "s"), **_facts()).register(client)
    ledger = Ledger(5.0, dataset=ds)
    cur = Curator(ds, ledger, client=client)
    Y = np.load(paths[1])
    Y[0] = [np.nan, np.inf, -1e300]  # written after the registration
    np.save(paths[1], Y)
    release = cur.release(DPLloyd(n_clusters=3, bounds=BOX, epsilon=1.0, neighbouring="replace"))
    assert np.all(np.isfinite(release.attributes["cluster_centers_"]))
    np.testing.assert_array_equal(project(Y[:1], *[np.full(D, b) for b in BOX]), [[0.0, 4.0, -4.0]])


def test_scheduler_setting_names_an_existing_scheduler(cluster, monkeypatch):
    monkeypatch.delenv(SCHEDULER_SETTING, raising=False)
    assert dask_client() is None
    monkeypatch.setenv(SCHEDULER_SETTING, cluster.scheduler_address)
    c = dask_client()
    try:
        assert c.scheduler.address == cluster.scheduler_address
    finally:
        c.close()


# ---- PrivateBounds from per-partition histograms ----------------------------------------------
def test_private_bounds_on_dask_histograms_equal_in_memory_and_land_near_the_quantiles(client):
    X = _records(4000)
    X[:, 0] = np.round(np.random.default_rng(5).normal(size=4000) * 8) / 8
    ds = DaskDataset(da.from_array(X, chunks=(700, D)), **_facts(n_samples=4000)).register(client)
    parts = ds.partitions(client)
    low, high = np.full(D, -4.0), np.full(D, 4.0)
    (hist,) = parts.sum(_histogram_block, low, high, 512)
    (mem,) = _histogram_block(X, low, high, 512, None)
    np.testing.assert_array_equal(hist, mem)
    ledger = Ledger(100.0, dataset=ds)
    release = Curator(ds, ledger, client=client).release(
        PrivateBounds(epsilon=60.0, outer_bounds=BOX, quantile=0.05)
    )
    in_memory = PrivateBounds(epsilon=60.0, outer_bounds=BOX, quantile=0.05).plan(4000, D)
    assert release.guarantee == in_memory and ledger.spent == (60.0, 0.0)
    lower, upper = (np.asarray(release.attributes[a]) for a in ("lower_", "upper_"))
    # epsilon / (2 d) = 3 per quantile: the rank error is a few records, the grid step 8/2^16
    np.testing.assert_allclose(lower, np.quantile(X, 0.05, axis=0), atol=0.2)
    np.testing.assert_allclose(upper, np.quantile(X, 0.95, axis=0), atol=0.2)


@pytest.mark.parametrize("neighbour", ["replace", "add", "remove"])
def test_histogram_quantile_mechanism_is_epsilon_dp_on_neighbouring_histograms(neighbour):
    """Exact audit: the bin probabilities on neighbouring data sets differ by at most e^eps."""
    rng = np.random.default_rng(8)
    bins, eps = 64, 0.7
    for _ in range(200):
        counts = rng.poisson(rng.uniform(0, 3), size=bins)
        other = counts.copy()
        if neighbour in ("replace", "remove"):
            if counts.sum() == 0:
                continue
            other[rng.choice(bins, p=counts / counts.sum())] -= 1
        if neighbour in ("replace", "add"):
            other[rng.integers(bins)] += 1
        for q in (0.0, 0.05, 0.5):
            p, p2 = (
                np.exp(lg - np.logaddexp.reduce(lg, axis=1, keepdims=True))
                for lg in (bin_logits(counts, [q], eps), bin_logits(other, [q], eps))
            )
            assert np.max(np.abs(np.log(p) - np.log(p2))) <= eps * (1 + 1e-9)


# ---- DP-tauCC on a sparse count matrix partitioned by rows ----------------------------------
def _counts(n=240, m=30, seed=5):
    """A sparse count matrix with a planted 3 x 3 block structure (integer counts)."""
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, 3, n), rng.integers(0, 3, m)
    rate = np.where(rows[:, None] == cols[None, :], 3.0, 0.2)
    return sp.csr_matrix(rng.poisson(rate).astype(np.float64))


def _sparse_shards(folder, X, splits):
    folder.mkdir(exist_ok=True)
    bounds = [0, *splits, X.shape[0]]
    for i in range(len(bounds) - 1):
        sp.save_npz(folder / f"part{i:02d}.npz", X[bounds[i] : bounds[i + 1]])
    return folder


def _count_facts(X, **kw):
    facts = dict(
        n_features=X.shape[1],
        box=(0.0, 1000.0),
        n_public=True,
        n_samples=X.shape[0],
        sparse=True,
        block_rows=50,
    )
    facts.update(kw)
    return facts


@pytest.mark.parametrize("row_cap", [None, 6])
def test_dp_taucc_on_row_partitions_equals_in_memory_for_the_same_generator(
    client, tmp_path, row_cap
):
    X = _counts()
    folder = _sparse_shards(tmp_path / "c", X, [70, 71, 200])
    ds = DaskDataset(str(folder), **_count_facts(X)).register(client)
    assert ds.record_key == Dataset(X).record_key  # one budget for the records
    parts = ds.partitions(client)
    fitted = []
    for on_dask in (False, True):
        est = DPTauCoClustering(3, 3, epsilon=2.0, n_iter=3, row_cap=row_cap)
        rng = np.random.default_rng(21)  # a fixed seed for this comparison only
        if on_dask:
            est._fit_partitioned(parts, rng)
        else:
            est._fit(est._check_data(X), rng)
        fitted.append(est)
    mem, dist = fitted
    for name in ("table_", "row_labels_", "column_labels_"):
        np.testing.assert_array_equal(getattr(dist, name), getattr(mem, name))
    assert dist.privacy_ == mem.privacy_
    assert not hasattr(dist, "eval_row_labels_")  # evaluation only: never on Dask
    assert len(np.unique(mem.row_labels_)) >= 2  # the comparison is not trivial


def test_dp_taucc_release_on_dask_has_the_in_memory_plan_cost_and_guarantee(client, tmp_path):
    X = _counts()
    folder = _sparse_shards(tmp_path / "c", X, [120])
    ds = DaskDataset(str(folder), **_count_facts(X)).register(client)
    on_dask = Curator(ds, Ledger(500.0, dataset=ds), client=client)
    in_memory = Curator(Dataset(X), Ledger(500.0, dataset=Dataset(X)))
    est = DPTauCoClustering(3, 3, epsilon=1.0, row_cap=8)
    a, b = on_dask.release(est), in_memory.release(est)
    assert a.guarantee == b.guarantee and a.cost == b.cost
    assert set(a.attributes) == set(b.attributes) == {"table_", "row_labels_", "column_labels_"}
    assert np.asarray(a.attributes["row_labels_"]).shape == (X.shape[0],)
    assert on_dask.ledger.spent == in_memory.ledger.spent
    with pytest.raises(ValueError, match="row_cap"):  # a cell release needs the cap
        on_dask.release(DPTauCoClustering(3, 3, epsilon=1.0))


def test_sparse_shards_registration_names_file_row_column(client, tmp_path):
    X = _counts().tolil()
    X[101, 7] = np.inf
    folder = _sparse_shards(tmp_path / "c", X.tocsr(), [100])
    with pytest.raises(DataFormatError, match=r"part01\.npz: row 2, column 8"):
        DaskDataset(str(folder), **_count_facts(X)).register(client)
    with pytest.raises(ValueError, match="hold 0"):
        DaskDataset(str(folder), **_count_facts(X, box=(1.0, 5.0))).check_facts()
    good = _counts()  # a dask.array of scipy.sparse row blocks: same key
    arr = da.from_array(good, chunks=(64, good.shape[1]), asarray=False)
    ds = DaskDataset(arr, **_count_facts(good)).register(client)
    assert ds.record_key == Dataset(good).record_key
    assert ds.registration()["partition_rows"] == [64, 64, 64, 48]


# ---- the LSH coreset: per-level bucket counts and leaf sums over partitions -----------------
@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_lsh_coreset_on_dask_equals_in_memory_for_the_same_generator(client, tmp_path, mechanism):
    X = _records()
    _write_shards(tmp_path / "s", X, [250, 700, 701])
    parts = (
        DaskDataset(str(tmp_path / "s"), **_facts(block_rows=128))
        .register(client)
        .partitions(client)
    )
    fitted = []
    for data in (X, parts):
        est = LSHCoresetKMeans(
            n_clusters=3,
            epsilon=2.0,
            bounds=BOX,
            max_depth=8,
            mechanism=mechanism,
            delta=1e-6 if mechanism == "gaussian" else 0.0,
            n_init=2,
        )
        rng = np.random.default_rng(17)  # a fixed seed for this comparison only
        if data is X:
            est._fit(X, rng)
        else:
            est._fit_partitioned(parts, rng)
        fitted.append(est)
    mem, dist = fitted
    assert mem.coreset_weights_.size >= 3  # a tree that branched
    for name in ("coreset_weights_", "coreset_points_", "cluster_centers_"):
        np.testing.assert_array_equal(getattr(dist, name), getattr(mem, name))
    assert dist.privacy_ == mem.privacy_


def test_lsh_coreset_release_on_dask_and_estimators_without_dask_mode_refused_by_name(client):
    X = _records()
    ds = DaskDataset(da.from_array(X, chunks=(400, D)), **_facts()).register(client)
    on_dask = Curator(ds, Ledger(10.0, delta=1e-5, dataset=ds), client=client)
    in_memory = Curator(Dataset(X), Ledger(10.0, delta=1e-5, dataset=Dataset(X)))
    est = LSHCoresetKMeans(
        n_clusters=3, epsilon=1.0, bounds=BOX, max_depth=6, neighbouring="replace"
    )
    a, b = on_dask.release(est), in_memory.release(est)
    assert a.guarantee == b.guarantee and a.cost == b.cost
    assert set(a.attributes) == set(b.attributes)
    for est, why in (
        (BalcanKMeans(n_clusters=3, epsilon=1.0, bounds=BOX), "local search"),
        (OneCluster(n_points=100, epsilon=1.0, delta=1e-6, bounds=BOX), "pairwise distances"),
    ):
        with pytest.raises(PrivacyRefused, match=f"{type(est).__name__} has no Dask mode.*{why}"):
            on_dask.release(est)
    assert on_dask.ledger.spent == in_memory.ledger.spent


def test_every_private_estimator_has_a_dask_mode_or_a_stated_reason():
    from privclust.core.release.curator import NO_DASK_MODE, core_private_classes

    for cls in core_private_classes():
        assert hasattr(cls, "_fit_partitioned") != (cls.__name__ in NO_DASK_MODE), cls.__name__


# ---- the operator's registry; progress; cancelled before the charge, never after ----------
def test_operator_registry_round_trip_lists_private_data_without_reading(
    client, tmp_path, monkeypatch
):
    from privclust.core.data import get_dataset, list_datasets
    from privclust.core.data.dask_registry import (
        REGISTRY_SETTING,
        read_entries,
        register_entry,
        write_registry,
    )

    X = _records()
    _write_shards(tmp_path / "s", X, [500])
    record = register_entry({"name": "big", "path": str(tmp_path / "s"), "box": list(BOX)}, client)
    assert (record["n_features"], record["n_samples"]) == (D, 1200)  # header; operator's count
    registry = tmp_path / "datasets.json"
    write_registry([record], registry)
    assert read_entries(registry)[0]["registration"]["partition_rows"] == [500, 700]
    monkeypatch.setenv(REGISTRY_SETTING, str(registry))
    info = next(i for i in list_datasets() if i == "big")
    assert not info.public
    ds = get_dataset("big")
    assert ds.registered and ds.record_key == Dataset(X).record_key
    assert get_dataset("big") is ds  # one object per process
    bad = tmp_path / "bad"
    Y = X.copy()
    Y[42, 1] = 1e9
    _write_shards(bad, Y, [10])
    with pytest.raises(DataFormatError, match=r"shard001\.npy: row 33, column 2"):
        register_entry({"name": "bad", "path": str(bad), "box": list(BOX)}, client)


def test_release_on_dask_reports_progress_and_is_cancelled_only_before_its_charge(client, tmp_path):
    from privclust.core.data.dask_dataset import ReleaseCancelled

    X = _records()
    paths = _write_shards(tmp_path / "s", X, [300, 600, 900])
    ds = DaskDataset(str(tmp_path / "s"), **_facts()).register(client)
    ledger = Ledger(5.0, dataset=ds)
    cur = Curator(ds, ledger, client=client)
    est = DPLloyd(n_clusters=3, bounds=BOX, epsilon=1.0, neighbouring="replace", n_iter=3)
    cur.cancel()  # cancelled before the check
    with pytest.raises(ReleaseCancelled):
        cur.release(est)
    assert ledger.spent == (0.0, 0.0) and not cur.releases()
    real_charge = ledger.charge

    def charge_then_cancel(*args, **kwargs):  # a cancel right after the charge
        record = real_charge(*args, **kwargs)
        cur.cancel()
        return record

    ledger.charge = charge_then_cancel
    done = cur.release(est)  # ... is ignored: it completes
    assert ledger.spent == (1.0, 0.0) and [r.id for r in cur.releases()] == [done.id]
    progress = cur.progress()
    assert progress["phase"] == "reading" and progress["done"] == progress["total"] == 4
    assert progress["passes"] >= 3  # one pass per DPLloyd iteration
    ledger.charge = real_charge
    np.save(paths[0], X[:299])  # a shard lost a record
    with pytest.raises(ValueError, match=r"shard000\.npy holds 299 records, 300"):
        cur.release(DPLloyd(n_clusters=2, bounds=BOX, epsilon=1.0, neighbouring="replace"))
    assert ledger.spent == (1.0, 0.0)  # refused before its charge
