"""NumPy .npy/.npz readers (never unpickled) with size checks first.

The .npy header (shape, dtype) is read and checked against the limits before any array memory is
allocated; .npz members are read only up to their declared size (a lying zip entry fails its CRC),
and that size is capped by ``max_bytes``. .npz is the only container that is decompressed.
"""

import io
import zipfile

import numpy as np
import scipy.sparse as sp

from .._npy_headers import HEADER_LOCK
from .validation import DataFormatError

_LABEL_KEYS = ("labels", "y", "target")
_NAME_KEYS = ("feature_names", "terms")
_CSR_KEYS = ("data", "indices", "indptr", "shape")


def _read_npy_stream(fp, nbytes_available, file, what, limits, allow_text=False):
    """Read one .npy array from fp after validating its header (no pickles, bounded size)."""
    try:
        version = np.lib.format.read_magic(fp)
        with HEADER_LOCK:
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
            else:
                raise DataFormatError(f"{what}: unsupported .npy format version {version}", file)
    except DataFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 -- numpy raises ValueError/SyntaxError/...
        raise DataFormatError(f"{what}: not a valid .npy array ({exc})", file) from None
    if dtype.hasobject:
        raise DataFormatError(
            f"{what}: object arrays are not accepted (they would need unpickling)", file
        )
    kinds = "biuf" + ("US" if allow_text else "")
    if dtype.kind not in kinds or dtype.fields is not None:
        raise DataFormatError(f"{what}: dtype {dtype} is not accepted (numeric data only)", file)
    count = 1
    for s in shape:
        count *= int(s)
    nbytes = count * dtype.itemsize
    limits.check_bytes(nbytes, file, what=f"{what} (uncompressed)")
    header_end = fp.tell()
    if nbytes_available is not None and nbytes_available - header_end < nbytes:
        raise DataFormatError(
            f"{what}: truncated (header says shape {shape}, "
            f"{nbytes} bytes; {nbytes_available - header_end} present)",
            file,
        )
    data = fp.read(nbytes)
    if len(data) != nbytes:
        raise DataFormatError(f"{what}: truncated array data", file)
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C")


def _as_2d(arr, file, what, limits):
    if arr.ndim != 2:
        raise DataFormatError(
            f"{what}: expected a 2-D array (rows = records, columns = "
            f"features), got shape {arr.shape}",
            file,
        )
    limits.check_shape(arr.shape[0], arr.shape[1], file)
    return np.asarray(arr, dtype=np.float64)


def read_npy(raw, file, limits):
    arr = _read_npy_stream(io.BytesIO(raw), len(raw), file, "array", limits)
    return {"X": _as_2d(arr, file, "array", limits), "labels": None, "feature_names": None}


def read_npz(raw, file, limits):
    """Arrays: "X" or "data" (dense) or the only array; a CSR triple data/indices/indptr/shape
    (as scipy.sparse.save_npz writes it); labels from "labels"/"y"/"target"; names from
    "feature_names"/"terms"."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = {i.filename: i for i in zf.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise DataFormatError(f"not a valid .npz (zip) file ({exc})", file) from None
    arrays = {name[:-4]: info for name, info in infos.items() if name.endswith(".npy")}
    if not arrays:
        raise DataFormatError(
            "no .npy arrays inside this zip file (spreadsheets and other "
            "archives are not accepted; save as CSV or .npz)",
            file,
        )
    total = sum(info.file_size for info in arrays.values())
    limits.check_bytes(total, file, what="the uncompressed arrays")

    def get(key, allow_text=False):
        info = arrays[key]
        if info.flag_bits & 0x1:
            raise DataFormatError(f"array {key!r} is encrypted", file)
        try:
            with zf.open(info) as fp:
                return _read_npy_stream(
                    fp, info.file_size, file, f"array {key!r}", limits, allow_text
                )
        except DataFormatError:
            raise
        except Exception as exc:  # noqa: BLE001 -- zlib.error, BadZipFile, EOFError, ...
            raise DataFormatError(f"array {key!r} could not be read ({exc})", file) from None

    if all(k in arrays for k in _CSR_KEYS):
        X = _csr_from_parts(get("data"), get("indices"), get("indptr"), get("shape"), file, limits)
    else:
        extra = [k for k in arrays if k not in _LABEL_KEYS + _NAME_KEYS]
        key = next((k for k in ("X", "data") if k in arrays), None)
        if key is None:
            if len(extra) != 1:
                raise DataFormatError(
                    f"cannot tell which array is the data: found "
                    f"{sorted(arrays)[:20]}; name it 'X'",
                    file,
                )
            key = extra[0]
        X = _as_2d(get(key), file, f"array {key!r}", limits)
    n = X.shape[0]
    labels = None
    lab_key = next((k for k in _LABEL_KEYS if k in arrays), None)
    if lab_key is not None:
        labels = get(lab_key, allow_text=True)
        if labels.shape != (n,):
            raise DataFormatError(
                f"labels {lab_key!r} have shape {labels.shape}, expected ({n},)", file
            )
    names = None
    name_key = next((k for k in _NAME_KEYS if k in arrays), None)
    if name_key is not None:
        raw_names = get(name_key, allow_text=True)
        if raw_names.shape == (X.shape[1],):
            names = [str(s) for s in raw_names.tolist()]
    return {"X": X, "labels": labels, "feature_names": names}


def _csr_from_parts(data, indices, indptr, shape, file, limits):
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or np.any(shape < 0):
        raise DataFormatError("'shape' must hold two non-negative integers", file)
    n, m = int(shape[0]), int(shape[1])
    limits.check_shape(n, m, file, dense=False)
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        raise DataFormatError("'data', 'indices', 'indptr' must be 1-D arrays", file)
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise DataFormatError("'indices' and 'indptr' must be integer arrays", file)
    if len(indptr) != n + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise DataFormatError(
            f"'indptr' must be a non-decreasing array of length {n + 1} starting at 0", file
        )
    if indptr[-1] != len(data) or len(indices) != len(data):
        raise DataFormatError("'data', 'indices' and 'indptr' have inconsistent lengths", file)
    bad = np.flatnonzero((indices < 0) | (indices >= m))
    if bad.size:
        b = bad[0]
        row = int(np.searchsorted(indptr, b, side="right"))
        raise DataFormatError(f"column index {int(indices[b]) + 1} is outside 1..{m}", file, row)
    values = np.asarray(data, dtype=np.float64)
    return sp.csr_matrix((values, indices.astype(np.int64), indptr.astype(np.int64)), shape=(n, m))
