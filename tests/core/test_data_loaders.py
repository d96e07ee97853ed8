"""load(): round trips for every format and validation messages naming file/row/column."""

import bz2
import gzip
import io
import lzma
import re
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from privclust.core.data import DataFormatError, Dataset, DataWarning, load

X = np.array([[1.5, -2.0, 0.0], [3.25, 4.0, 1e-3], [0.0, 7.0, -8.5]])


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _npz(compressed=False, **arrays):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _mtx(A):
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, A)
    return buf.getvalue()


def _csv(arr, header=None, sep=","):
    lines = [sep.join(header)] if header else []
    lines += [sep.join(repr(float(v)) for v in row) for row in arr]
    return ("\n".join(lines) + "\n").encode()


def test_csv_round_trips_and_fingerprint_matches_npy(tmp_path):
    ref = Dataset(X).fingerprint
    plain = load(_csv(X))
    np.testing.assert_array_equal(plain.X, X)
    assert plain.feature_names is None and not plain.public and plain.fingerprint == ref
    named = load(_csv(X, ["a", "b", "c"]), name="t.csv")
    assert named.feature_names == ["a", "b", "c"] and named.name == "t.csv"
    for sep, fmt in (("\t", None), (";", None), (" ", None), ("\t", "tsv")):
        assert load(_csv(X, sep=sep), format=fmt).fingerprint == ref
    assert load(_npy(X)).fingerprint == ref
    assert load(_npz(X=X)).fingerprint == ref
    assert load(_npz(compressed=True, data=X)).fingerprint == ref
    assert load(_npz(only=np.asfortranarray(X))).fingerprint == ref
    path = tmp_path / "m.csv"
    path.write_bytes(_csv(X, ["a", "b", "c"]))
    for src in (path, str(path), open(path, "rb"), open(path, encoding="utf-8")):
        ds = load(src)
        assert ds.fingerprint == ref and ds.name == "m"
        if hasattr(src, "close"):
            src.close()


def test_csv_labels_header_and_quotes():
    raw = b'x,"y, quoted",species\n1,2,setosa\n3,4,virginica\n'
    ds = load(raw, label_column="species")
    assert ds.feature_names == ["x", "y, quoted"] and list(ds.labels) == ["setosa", "virginica"]
    ds = load(b"1,2,0\n3,4,1\n", label_column=-1)
    assert ds.labels.dtype.kind == "i" and ds.X.shape == (2, 2)
    ds = load(b"lab,x\nA,1\nB,2\n", label_column=0)
    assert list(ds.labels) == ["A", "B"] and ds.feature_names == ["x"]
    ds = load(b"1,2\n3,4\n", header=True)
    assert ds.feature_names == ["1", "2"] and ds.n_samples == 1
    ds = load(b"\xef\xbb\xbfa,b\r\n1,2\r\n\r\n3,4\r\n")  # BOM, CRLF, blank line
    assert ds.feature_names == ["a", "b"] and ds.n_samples == 2
    ds = load("a,b\n1,2\n".encode("utf-16"))
    assert ds.feature_names == ["a", "b"]


@pytest.mark.parametrize("fast", [True, False])
def test_label_parsing_is_the_same_on_both_csv_paths(fast):
    from privclust.core.data._textformats import read_table
    from privclust.core.data.validation import Limits

    parts = read_table(b"x,y\n1,1.0\n2,2e0\n3,-4\n", "f.csv", Limits(), label_column="y", fast=fast)
    assert parts["labels"].dtype == np.int64 and parts["labels"].tolist() == [1, 2, -4]
    text = read_table(b"x,y\n1,1.5\n2,2\n", "f.csv", Limits(), label_column=1, fast=fast)
    assert text["labels"].tolist() == ["1.5", "2"]


def test_hostile_header_names_are_kept_as_plain_strings():
    names = ["<img src=x onerror=alert(1)>", '=HYPERLINK("http://x")', "dup", "dup", "é ü 中"]
    raw = ",".join('"' + n.replace('"', '""') + '"' for n in names).encode() + b"\n1,2,3,4,5\n"
    ds = load(raw)
    assert ds.feature_names == names and all(type(n) is str for n in ds.feature_names)


def test_npz_sparse_triple_labels_and_names():
    A = sp.random(20, 15, density=0.2, format="csr", random_state=0)
    A.data = np.round(A.data * 10)
    raw = _npz(
        data=A.data,
        indices=A.indices,
        indptr=A.indptr,
        shape=np.array(A.shape),
        labels=np.arange(20) % 3,
        terms=np.array([f"w{i}" for i in range(15)]),
    )
    ds = load(raw, counts=True)
    assert ds.is_sparse and ds.feature_names[0] == "w0" and list(ds.labels[:4]) == [0, 1, 2, 0]
    assert ds.fingerprint == Dataset(A).fingerprint
    assert load(_mtx(A)).fingerprint == ds.fingerprint
    coo = A.tocoo()
    triples = "".join(
        f"{i + 1} {j + 1} {v:g}\n" for i, j, v in zip(coo.row, coo.col, coo.data, strict=True)
    )
    tri = load(triples.encode(), format="triples", shape=A.shape)
    assert tri.fingerprint == ds.fingerprint


def test_triples_lines_are_entries_not_rows():
    raw = "".join(f"1 {j} 1\n" for j in range(1, 11)).encode()  # 10 entries, 1 row
    assert load(raw, format="triples", max_rows=2).X.shape == (1, 10)
    assert "max_rows=2" in _err(b"1 1 1\n2 1 1\n3 1 1\n", format="triples", max_rows=2)


def test_mtx_dense_and_pattern():
    np.testing.assert_array_equal(load(_mtx(X)).X, X)
    raw = b"%%MatrixMarket matrix coordinate pattern general\n% c\n2 3 2\n1 1\n2 3\n"
    np.testing.assert_array_equal(load(raw).X.toarray(), [[1, 0, 0], [0, 0, 1]])


def test_triples_zero_based_with_header_like_dp_taucc():
    raw = b"doc,word,cluster\n0,1,2\n1,0,3\n1,0,1\n0,2,0\n"
    ds = load(raw, format="triples", index_base=0, counts=True)
    np.testing.assert_array_equal(ds.X.toarray(), [[0, 2, 0], [4, 0, 0]])  # repeats summed


def _err(raw, **kw):
    with pytest.raises(ValueError) as info:
        load(raw, **kw)
    assert not isinstance(info.value, (TypeError,))
    return str(info.value)


@pytest.mark.parametrize(
    "raw, kw, pattern",
    [
        (
            b"a,b\n1,2\n3,nan\n",
            {},
            r"data\.csv: row 3, column 2: missing value \(NaN\) \(column 'b'\)",
        ),
        (b"1,2\n3,inf\n", {}, r"data\.csv: row 2, column 2: infinite value"),
        (b"1,2\n3,1e400\n", {}, r"data\.csv: row 2, column 2: infinite value"),
        (b"1,2\n3,abc\n", {}, r"data\.csv: row 2, column 2: 'abc' is not a number"),
        (b"a,b\n1,2\n3,4\n5\n", {}, r"data\.csv: row 4: has 1 fields but line 1 has 2 \(ragged"),
        (b"1,2\n,4\n", {}, r"data\.csv: row 2, column 1: empty cell"),
        (b"1,2\n3,-4\n", {"counts": True}, r"data\.csv: row 2, column 2: negative value"),
        (b"", {}, r"data\.csv: the file is empty"),
        (b"\n \n", {}, r"data\.csv: the file is empty"),
        (b"a,b\n", {}, r"data\.csv: no data rows"),
        (b"1,2\n3,4\n5,6\n", {"max_rows": 2}, r"data\.csv: .*max_rows=2"),
        (b"1,2,3\n4,5,6\n", {"max_cols": 2}, r"data\.csv: .*max_cols=2"),
        (
            b"1,2,3\n4,5,6\n",
            {"max_bytes": 5},
            r"data\.csv: file is larger than the limit max_bytes=5",
        ),
        (b"1,2\n3,4\n", {"max_cells": 3}, r"data\.csv: 2 x 2 cells exceed"),
        (b"1,\xff\n", {}, r"data\.csv: row 1: not UTF-8"),
        (b"x,y\n1,2\n", {"label_column": "z"}, r"data\.csv: row 1: no column named 'z'"),
        (b"x,x\n1,2\n", {"label_column": "x"}, r"data\.csv: row 1: the header names 'x' 2 times"),
        (b'1,"2\n', {}, r"data\.csv: row 1: malformed"),
    ],
)
def test_validation_messages_name_file_row_column(raw, kw, pattern):
    assert re.search(pattern, _err(raw, name="data.csv", **kw))


def test_binary_validation_messages():
    assert "shape (3,)" in _err(_npy(np.arange(3.0)), name="v.npy")
    assert "shape (2, 2, 2)" in _err(_npy(np.zeros((2, 2, 2))), name="v.npy")
    assert "row 2, column 1: missing value" in _err(_npy(np.array([[1.0], [np.nan]])))
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert "object arrays are not accepted" in _err(buf.getvalue(), name="p.npy")
    assert "dtype complex128 is not accepted" in _err(_npy(np.ones((2, 2), complex)))
    assert "truncated" in _err(_npy(X)[:-5])
    assert "cannot tell which array" in _err(_npz(a=X, b=X))
    assert "labels 'labels' have shape" in _err(_npz(X=X, labels=np.arange(5)))
    bad = _npz(
        data=np.array([1.0, -2.0]),
        indices=np.array([0, 1]),
        indptr=np.array([0, 1, 2]),
        shape=np.array([2, 2]),
    )
    assert "row 2, column 2: negative value" in _err(bad, counts=True)
    oob = _npz(
        data=np.array([1.0]),
        indices=np.array([5]),
        indptr=np.array([0, 0, 1]),
        shape=np.array([2, 2]),
    )
    assert "row 2: column index 6 is outside 1..2" in _err(oob)
    assert "compressed files are not accepted" in _err(gzip.compress(_csv(X)), name="x.csv")
    assert "compressed files are not accepted" in _err(_csv(X), name="x.csv.gz")
    for packed in (bz2.compress(_csv(X)), lzma.compress(_csv(X))):
        assert "compressed files are not accepted" in _err(packed)
    assert load(b"BZh,x\n1,2\n").feature_names == ["BZh", "x"]
    assert "spreadsheets" in _err(_zip_without_npy(), name="book.xlsx")
    mtx_neg = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 -3\n"
    assert "row 2, column 1: negative value" in _err(mtx_neg, counts=True)
    assert "'coordinate complex'" in _err(
        b"%%MatrixMarket matrix coordinate complex general\n1 1 0\n"
    )
    huge = b"%%MatrixMarket matrix coordinate real general\n10 10 999999999\n1 1 1\n"
    assert "declares 999999999 entries" in _err(huge)
    assert "row 3, column 1: row index 0" in _err(b"r c n\n1 1 1\n0 2 3\n", format="triples")
    assert "row 2, column 3: negative value" in _err(
        b"1 1 1\n1 2 -3\n", format="triples", counts=True
    )


def _zip_without_npy():
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("xl/workbook.xml", "<x/>")
    return buf.getvalue()


def test_npz_bomb_is_refused_before_decompressing():
    bomb = _npz(compressed=True, X=np.zeros((4000, 1000)))  # 32 MB of zeros, ~30 kB
    assert len(bomb) < 100_000
    assert "uncompressed" in _err(bomb, max_bytes=1_000_000)
    n = 60_000  # two members of 480 kB each, 960 kB in all
    split = _npz(
        compressed=True,
        data=np.ones(n),
        indices=np.zeros(n, np.int64),
        indptr=np.array([0, n]),
        shape=np.array([1, 1]),
    )
    assert "the uncompressed arrays is larger than the limit" in _err(split, max_bytes=600_000)


def test_counts_warn_on_non_integers_and_options_are_checked():
    with pytest.warns(DataWarning):
        load(b"1,2.5\n", counts=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(b"1,2\n", counts=True)
    with pytest.raises(ValueError, match="format must be one of"):
        load(b"1,2\n", format="xlsx")
    with pytest.raises(TypeError):
        load(12345)
    with pytest.raises(ValueError, match="header"):
        load(b"1,2\n", header="yes")
    with pytest.raises(ValueError, match="label_column applies to CSV/TSV only"):
        load(_npy(X), label_column=0)
    with pytest.raises(ValueError, match="cannot read the file"):
        load("/nonexistent/dir/file.csv")
    assert isinstance(DataFormatError("m"), ValueError)


@pytest.mark.parametrize("symmetry", ["general", "symmetric", "skew-symmetric"])
@pytest.mark.parametrize("sparse", [False, True])
def test_mtx_symmetry_round_trips(symmetry, sparse):
    B = np.random.default_rng(0).integers(-3, 4, size=(5, 5)).astype(float)
    A = {"general": B, "symmetric": B + B.T, "skew-symmetric": B - B.T}[symmetry]
    raw = _mtx(sp.csr_matrix(A) if sparse else A)
    assert symmetry.encode() in raw.splitlines()[0]
    ds = load(raw)
    assert ds.is_sparse == sparse
    np.testing.assert_array_equal(ds.toarray(), A)


def test_mtx_inputs_that_crash_scipy_mmread_are_clean_errors():
    # scipy.io.mmread (fast_matrix_market) segfaults on the first one and ignores the junk in
    # the second; our parser reports both with their line.
    head = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n"
    for tail in (b"3 2 4x", b"3 2 4x\n"):
        assert "row 4, column 3" in _err(head + tail)
    assert "row 4: not UTF-8" in _err(head + b"3 2 4\xf7")
    assert "row 4: expected 3 field(s)" in _err(head + b"3 2 4 5\n")
    assert "row 4, column 1: row index 9" in _err(head + b"9 2 4\n")
    assert "must be square" in _err(b"%%MatrixMarket matrix array real symmetric\n2 3\n1\n")
