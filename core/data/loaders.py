"""``load()``: turn a user file (path, bytes or file object) into a validated :class:`Dataset`.

Formats: csv, tsv, npy, npz, mtx, triples (CLUTO-style "row col count", 1-based by default).
The format comes from ``format=``, else the file extension, else the content (magic bytes; text
is read as CSV/TSV; triples are never guessed). Compressed files are refused (never
decompressed), nothing is unpickled, sizes are checked before parsing wherever the format declares
them, and every problem is a ``ValueError`` (:class:`DataFormatError`) naming the file and, where
it applies, the row and column counted from 1.
"""

import os

import scipy.sparse as sp

from ._binformats import read_npy, read_npz
from ._mtx import read_mtx
from ._textformats import read_table, read_triples
from .dataset import Dataset
from .domain import check_counts
from .validation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_COLS,
    DEFAULT_MAX_ROWS,
    DataFormatError,
    Limits,
    check_dense,
    check_matrix_values,
)

FORMATS = ("csv", "tsv", "npy", "npz", "mtx", "triples")
_ALIASES = {"txt": "csv", "tab": "tsv", "cluto": "triples", "coo": "triples", "mm": "mtx"}
_EXTENSIONS = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".npy": "npy",
    ".npz": "npz",
    ".mtx": "mtx",
    ".mm": "mtx",
    ".triples": "triples",
    ".cluto": "triples",
}
_COMPRESSED_EXT = (".gz", ".gzip", ".bz2", ".xz", ".lzma", ".zst", ".zip", ".7z", ".tgz", ".z")
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"7z\xbc\xaf", b"\x1f\x9d")


def _is_compressed(raw):
    bz2 = raw[:3] == b"BZh" and raw[3:4].isdigit() and raw[4:10] == b"1AY&SY"
    return bz2 or raw.startswith(_COMPRESSED_MAGIC)


def _read_source(source, limits, name):
    """Return (raw bytes, display name) reading at most max_bytes + 1 bytes."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        display = name or os.path.basename(path) or path
        try:
            size = os.stat(path).st_size
            limits.check_bytes(size, display)
            with open(path, "rb") as fh:
                raw = fh.read(limits.max_bytes + 1)
        except DataFormatError:
            raise
        except OSError as exc:
            raise DataFormatError(
                f"cannot read the file ({exc.strerror or exc})", display
            ) from None
    elif isinstance(source, (bytes, bytearray, memoryview)):
        display = name or "<bytes>"
        raw = bytes(source)
    elif hasattr(source, "read"):
        display = name or os.path.basename(str(getattr(source, "name", "") or "")) or "<stream>"
        try:
            raw = source.read(limits.max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise DataFormatError(f"cannot read the stream ({exc})", display) from None
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        if not isinstance(raw, (bytes, bytearray)):
            raise TypeError("source.read() must return bytes or str")
        raw = bytes(raw)
    else:
        raise TypeError(
            f"source must be a path, bytes or a file object, got {type(source).__name__}"
        )
    limits.check_bytes(len(raw), display)
    return raw, display


def _detect_format(raw, display, format):
    ext = os.path.splitext(display.lower())[1]
    if _is_compressed(raw) or (ext in _COMPRESSED_EXT and not raw.startswith(b"PK")):
        raise DataFormatError(
            "compressed files are not accepted; upload the uncompressed file", display
        )
    if ext == ".zip":
        raise DataFormatError(
            "compressed files are not accepted (zip); upload an uncompressed file or an .npz",
            display,
        )
    if format is not None:
        fmt = _ALIASES.get(str(format).lower().lstrip("."), str(format).lower().lstrip("."))
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        return fmt
    if raw.startswith(b"\x93NUMPY"):
        return "npy"
    if raw.startswith(b"PK\x03\x04") or raw.startswith(b"PK\x05\x06"):
        return "npz"
    if raw.lstrip(b"\xef\xbb\xbf").startswith(b"%%MatrixMarket"):
        return "mtx"
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    return "tsv" if b"\t" in raw[: raw.find(b"\n") if b"\n" in raw else 4096] else "csv"


def load(
    source,
    format=None,
    *,
    name=None,
    header="infer",
    label_column=None,
    delimiter=None,
    max_bytes=DEFAULT_MAX_BYTES,
    max_rows=DEFAULT_MAX_ROWS,
    max_cols=DEFAULT_MAX_COLS,
    max_cells=DEFAULT_MAX_CELLS,
    counts=False,
    index_base=1,
    shape=None,
):
    """Load a data matrix from a path, bytes or a binary/text file object into a Dataset.

    Parameters
    ----------
    source : str | os.PathLike | bytes | file object
    format : {"csv", "tsv", "npy", "npz", "mtx", "triples"}, optional
        Else from the extension (.csv .txt .tsv .tab .npy .npz .mtx .triples .cluto), else sniffed
        from the content. "triples" = CLUTO-style lines "row col count", 1-based unless
        ``index_base=0`` (the dp-tauCC files are 0-based), comma- or whitespace-separated, an
        optional header line; repeated pairs are summed; gives a sparse CSR matrix.
    name : str, optional
        Name of the dataset and of the file in messages (default: the file's base name).
    header : "infer" | True | False
        CSV/TSV/triples: whether line 1 holds column names ("infer": yes if one of its cells,
        the label column aside, is not a number). Names are kept verbatim as plain strings.
    label_column : str | int, optional
        CSV/TSV column holding reference labels: a header name, or a 0-based index (-1 = last).
    delimiter : str, optional
        CSV/TSV field separator (default: ",", tab or ";" as found on line 1, else whitespace).
    max_bytes, max_rows, max_cols, max_cells : int
        Size limits (file bytes; rows; feature columns; rows x columns for dense data).
    counts : bool
        Require non-negative values (co-clustering counts); non-integers warn ``DataWarning``.
    index_base, shape : triples only
        Index base (0 or 1) and optional (n_rows, n_cols).

    npz files: the data is "X", "data" or the only array; a CSR matrix is stored as "data",
    "indices", "indptr", "shape" (as scipy.sparse.save_npz writes it); labels from
    "labels"/"y"/"target"; feature names from "feature_names"/"terms". Loaded with allow_pickle=False semantics (object arrays
    refused). .npz members are the only compressed content ever read (bounded by max_bytes).

    Returns a private (``public=False``) :class:`Dataset`. Raises ``ValueError`` naming the file,
    row and column; ``TypeError`` for a wrong kind of argument.
    """
    limits = Limits(max_bytes, max_rows, max_cols, max_cells)
    raw, display = _read_source(source, limits, name)
    fmt = _detect_format(raw, display, format)
    if label_column is not None and fmt not in ("csv", "tsv"):
        raise ValueError(
            f"{display}: label_column applies to CSV/TSV only (an .npz carries "
            "labels in an array named 'labels')"
        )
    if not raw.strip(b" \t\r\n\xef\xbb\xbf"):
        raise DataFormatError("the file is empty", display)
    try:
        if fmt in ("csv", "tsv"):
            parts = read_table(
                raw,
                display,
                limits,
                header=header,
                label_column=label_column,
                delimiter=delimiter if delimiter or fmt == "csv" else "\t",
                counts=counts,
            )
        elif fmt == "triples":
            parts = read_triples(
                raw,
                display,
                limits,
                delimiter=delimiter,
                header=header,
                counts=counts,
                index_base=index_base,
                shape=shape,
            )
        elif fmt == "npy":
            parts = read_npy(raw, display, limits)
        elif fmt == "npz":
            parts = read_npz(raw, display, limits)
        else:
            parts = read_mtx(raw, display, limits)
    except (DataFormatError, TypeError):
        raise
    except ValueError as exc:  # an invalid option value: keep the message, name the file
        raise ValueError(f"{display}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- a clean message, not a deep traceback
        raise DataFormatError(
            f"could not be read as {fmt} ({type(exc).__name__}: {exc})", display
        ) from None
    X = parts["X"]
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataFormatError(
            f"the data matrix is empty (shape {X.shape[0]} x {X.shape[1]})", display
        )
    if sp.issparse(X):
        coo = X.tocoo()
        check_matrix_values(coo.data, coo.row, coo.col, display, counts)
    else:
        check_dense(X, display, counts, col_names=parts["feature_names"])
    if counts:
        check_counts(X, name=display)
    return Dataset(
        X,
        labels=parts["labels"],
        name=name or os.path.splitext(display)[0],
        feature_names=parts["feature_names"],
        public=False,
        description=f"loaded from {display} ({fmt})",
    )
