"""Dataset registry: presets, scikit-learn sets, and real data from PRIVCLUST_DATA_DIR."""

import copy
import pickle

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from privclust.core.data import data_dir, get_dataset, list_datasets


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small SVDs are 50x slower when BLAS threads fight over the 2 shared CI cores."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


SYNTHETIC = ("union_of_subspaces", "gaussian_mixture", "planted_ball", "block_counts")
REAL = ("classic3", "cstr", "yaleb", "yaleb5")


def test_presets_and_sklearn_sets_without_data_dir(monkeypatch):
    monkeypatch.delenv("PRIVCLUST_DATA_DIR", raising=False)
    assert data_dir() is None
    names = list_datasets()
    assert set(names) == set(SYNTHETIC) | {"iris", "wine", "digits"}  # plain names ...
    assert all(isinstance(n, str) for n in names) and "iris" in names
    listed = {n.name: n.to_dict() for n in names}  # ... with details
    assert names[0].description == listed[names[0]]["description"]
    for clone in (copy.deepcopy(names[0]), pickle.loads(pickle.dumps(names[0]))):
        assert clone == names[0] and clone.to_dict() == names[0].to_dict()
    for name in SYNTHETIC:
        assert listed[name]["public"] and listed[name]["demo"] and listed[name]["description"]
        ds = get_dataset(name)
        assert ds.public and ds.truth and ds.labels is not None
    assert get_dataset("planted_ball", n_samples=50, n_features=3).X.shape == (50, 3)
    assert (
        get_dataset("gaussian_mixture").fingerprint == get_dataset("gaussian_mixture").fingerprint
    )
    for name, shape in (("iris", (150, 4)), ("wine", (178, 13)), ("digits", (1797, 64))):
        ds = get_dataset(name)
        assert ds.X.shape == shape and not ds.public and len(ds.feature_names) == shape[1]
        assert not listed[name]["public"] and listed[name]["demo"]
    every = {n: n.to_dict() for n in list_datasets(include_unavailable=True)}
    assert all(not every[n]["available"] and not every[n]["public"] for n in REAL)
    with pytest.raises(ValueError, match="PRIVCLUST_DATA_DIR"):
        get_dataset("classic3")
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        get_dataset("nope")
    with pytest.raises(TypeError, match="iris"):
        get_dataset("iris", n_samples=3)


def test_data_dir_missing_folder_and_extra_files(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIVCLUST_DATA_DIR", str(tmp_path / "absent"))
    assert data_dir() is None
    (tmp_path / "mine.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "notes.md").write_text("ignored")
    monkeypatch.setenv("PRIVCLUST_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    listed = {n: n.to_dict() for n in list_datasets()}
    assert "mine" in listed and "notes" not in listed and not listed["mine"]["public"]
    assert get_dataset("mine").feature_names == ["a", "b"]


@pytest.mark.realdata
def test_count_matrices(data_dir):
    c3 = get_dataset("classic3")
    assert c3.is_sparse and c3.X.shape == (3891, 4303) and not c3.public
    assert list(np.bincount(c3.labels)) == [1033, 1460, 1398]
    assert c3.X.nnz / np.prod(c3.X.shape) == pytest.approx(0.01053, abs=5e-5)
    assert len(c3.feature_names) == 4303
    cstr = get_dataset("cstr")
    assert cstr.X.shape == (475, 1000) and len(np.unique(cstr.labels)) == 4
    assert cstr.X.nnz / 475_000 == pytest.approx(0.03366, abs=5e-5)
    assert np.all(cstr.X.data > 0) and np.array_equal(cstr.X.data, np.round(cstr.X.data))
    assert c3.fingerprint == get_dataset("classic3").fingerprint  # stable across loads


@pytest.mark.realdata
def test_yaleb_all_images_and_the_97_percent_energy_figure(data_dir):
    ds = get_dataset("yaleb")
    assert ds.X.shape == (2432, 2016) and not ds.public
    assert ds.X.min() >= 0 and ds.X.max() <= 1 and np.all(np.bincount(ds.labels) == 64)
    energy = []
    # each subject keeps >= 97.4 % of its energy in 9 dimensions (the low-dimensional
    # illumination model of Basri & Jacobs, TPAMI 2003, that makes faces a subspace benchmark)
    for s in range(38):
        Xs = ds.X[ds.labels == s]
        ev = np.linalg.eigvalsh(Xs @ Xs.T)[::-1]  # squared singular values
        energy.append(np.sum(ev[:9]) / np.sum(ev))
    assert min(energy) >= 0.97 and round(min(energy), 3) == 0.974
    assert get_dataset("yaleb", drop_bad=True).n_samples == 2432 - 18


@pytest.mark.realdata
def test_yaleb5_seed001_preprocessing(data_dir):
    ds = get_dataset("yaleb5", random_state=3)
    X, y, B = ds.X, ds.labels, ds.truth["subspaces"]
    assert X.shape == (320, 50) and np.all(np.bincount(y) == 64) and not ds.public
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)  # unit-ball normalisation
    assert B.shape == (5, 50, 9) and len(set(ds.truth["subjects"])) == 5
    for c in range(5):  # each class keeps nearly all its energy in its 9-dim C*
        Xc = X[y == c]
        assert np.linalg.norm(Xc @ B[c]) ** 2 / np.linalg.norm(Xc) ** 2 > 0.99
    resid = np.stack([np.linalg.norm(X - X @ b @ b.T, axis=1) for b in B], axis=1)
    assert np.mean(resid.argmin(axis=1) == y) > 0.95
    again = get_dataset("yaleb5", random_state=3)
    assert again.fingerprint == ds.fingerprint
    chosen = get_dataset("yaleb5", subjects=[0, 1, 2], random_state=0)
    assert chosen.X.shape == (192, 50) and list(chosen.truth["subjects"]) == [0, 1, 2]
    with pytest.raises(ValueError, match="subjects"):
        get_dataset("yaleb5", subjects=[0, 0, 99])
