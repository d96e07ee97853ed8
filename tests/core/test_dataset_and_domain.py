"""Dataset container and per-record domain helpers (per-record clipping and
quantisation to a public domain; docs/algorithms.md, section 2)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core.data import Dataset, DataWarning, check_counts, clip_box, clip_l2, quantize


def test_dataset_basic_properties():
    ds = Dataset([[1, 2, 3], [4, 5, 6]], labels=[0, 1], name="toy", feature_names=["a", "b", "c"])
    assert ds.n_samples == 2 and ds.n_features == 3 and not ds.is_sparse
    assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous and not ds.X.flags.writeable
    assert not ds.public and ds.truth == {}
    assert len(ds.fingerprint) == 64 and "toy" in repr(ds)


def test_dataframe_columns_become_feature_names():
    pd = pytest.importorskip("pandas")
    ds = Dataset(pd.DataFrame({"a": [1, 2], "<b>": [3.5, 4]}))
    assert ds.feature_names == ["a", "<b>"] and ds.X.tolist() == [[1, 3.5], [2, 4]]


def test_fingerprint_canonical_and_sensitive():
    a = np.arange(12.0).reshape(3, 4)
    f = Dataset(a).fingerprint
    assert Dataset(a.astype(np.int32)).fingerprint == f  # dtype-independent
    assert Dataset(np.asfortranarray(a)).fingerprint == f  # layout-independent
    assert Dataset(a, labels=[0, 1, 2], name="x").fingerprint == f  # metadata not hashed
    assert Dataset(a.reshape(4, 3)).fingerprint != f  # shape matters
    b = a.copy()
    b[2, 3] += 1e-12
    assert Dataset(b).fingerprint != f  # one value matters
    z = np.zeros((2, 2))
    z[0, 0] = -0.0
    assert Dataset(z).fingerprint == Dataset(np.zeros((2, 2))).fingerprint


def test_fingerprint_sparse_canonical():
    dense = np.array([[0, 2, 0], [1, 0, 3]], dtype=float)
    csr = sp.csr_matrix(dense)
    f = Dataset(csr).fingerprint
    coo = sp.coo_matrix(([1.0, 1.0, 1.0, 3.0], ([0, 0, 1, 1], [1, 1, 0, 2])), shape=(2, 3))
    assert Dataset(coo).fingerprint == f  # duplicates summed
    assert Dataset(csr.astype(np.int32)).fingerprint == f
    assert Dataset(sp.csc_matrix(dense)).fingerprint == f
    assert Dataset(csr).is_sparse and Dataset(dense).fingerprint != f  # dense vs sparse differ


def test_dataset_rejects_bad_shapes():
    with pytest.raises(ValueError, match="2-dimensional"):
        Dataset(np.zeros(3))
    with pytest.raises(ValueError, match="labels"):
        Dataset(np.zeros((3, 2)), labels=[0, 1])
    with pytest.raises(ValueError, match="feature_names"):
        Dataset(np.zeros((3, 2)), feature_names=["a"])


def test_clip_l2():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    Y = clip_l2(X, 1.0)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(Y[0], [0.6, 0.8])  # direction kept
    np.testing.assert_allclose(clip_l2(np.array([6.0, 8.0]), 5.0), [3.0, 4.0])
    assert X[0, 0] == 3.0  # input untouched
    for bad in (None, 0, -1, np.inf):
        with pytest.raises(ValueError, match="radius"):
            clip_l2(X, bad)


def test_clip_box_and_quantize():
    X = np.array([[-1.0, 0.5], [2.0, 0.26]])
    np.testing.assert_array_equal(clip_box(X, 0, 1), [[0, 0.5], [1, 0.26]])
    np.testing.assert_array_equal(clip_box(X, [0, 0.3], [1, 0.4]), [[0, 0.4], [1, 0.3]])
    with pytest.raises(ValueError, match="upper"):
        clip_box(X, 0, None)
    with pytest.raises(ValueError, match="length"):
        clip_box(X, [0, 0, 0], 1)
    with pytest.raises(ValueError, match="lower must be <= upper"):
        clip_box(X, 1, 0)
    np.testing.assert_allclose(quantize(X, 0.25), [[-1.0, 0.5], [2.0, 0.25]])
    with pytest.raises(ValueError, match="step"):
        quantize(X, None)


def test_check_counts():
    A = np.array([[0, 1], [2, 3]])
    assert check_counts(A) is A
    with pytest.raises(ValueError, match="row 2, column 1"):
        check_counts(np.array([[0, 1], [-2, 3]]))
    with pytest.raises(ValueError, match="row 1, column 2"):
        check_counts(sp.csr_matrix(np.array([[0, -1], [-2, 3]])))
    with pytest.raises(ValueError, match="non-finite"):
        check_counts(np.array([[0, np.nan]]))
    with pytest.warns(DataWarning, match="non-integer"):
        check_counts(sp.csr_matrix(np.array([[0, 1.5]])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_counts(sp.csr_matrix(A))
    with pytest.raises(ValueError, match="2-D"):
        check_counts(np.zeros(3))
