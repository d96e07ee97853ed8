"""Matrix Market (.mtx) reader: a strict parser of our own.

scipy.io.mmread (fast_matrix_market 1.17) crashes the interpreter (SIGSEGV) on some malformed
input, e.g. a last entry "3 2 4x" without a final newline, and silently ignores trailing junk on a
line; an upload must never do either, so .mtx is parsed here. Supported: ``matrix`` objects in
``coordinate`` (sparse CSR result) or ``array`` (dense) format, fields real/double/integer/pattern,
symmetry general/symmetric/skew-symmetric. Errors name the line of the file.
"""

import numpy as np
import scipy.sparse as sp

from ._textformats import decode_text, to_float_matrix
from .validation import DataFormatError


def _header(lines, file):
    banner = lines[0].lower().split() if lines else []
    if len(banner) != 5 or banner[0] != "%%matrixmarket" or banner[1] != "matrix":
        raise DataFormatError(
            "not a Matrix Market matrix (expected '%%MatrixMarket matrix "
            "<format> <field> <symmetry>')",
            file,
            1,
        )
    fmt, field, symmetry = banner[2:]
    if fmt not in ("coordinate", "array") or field not in ("real", "double", "integer", "pattern"):
        raise DataFormatError(
            f"Matrix Market '{fmt} {field}' is not accepted (real, integer "
            "or pattern; coordinate or array)",
            file,
            1,
        )
    if symmetry not in ("general", "symmetric", "skew-symmetric") or (
        field == "pattern" and (fmt == "array" or symmetry == "skew-symmetric")
    ):
        raise DataFormatError(f"Matrix Market '{fmt} {field} {symmetry}' is not accepted", file, 1)
    return fmt, field, symmetry


def read_mtx(raw, file, limits):
    lines = decode_text(raw, file).splitlines()
    fmt, field, symmetry = _header(lines, file)
    body = [
        (i, line.split())
        for i, line in enumerate(lines[1:], start=2)
        if line.strip() and not line.lstrip().startswith("%")
    ]
    if not body:
        raise DataFormatError("Matrix Market size line not found", file)
    size_line, size = body[0]
    want = 3 if fmt == "coordinate" else 2
    try:
        sizes = [int(s) for s in size]
    except ValueError:
        sizes = []
    if len(sizes) != want or min(sizes) < 0:
        raise DataFormatError(
            f"invalid Matrix Market size line (expected {want} non-negative integers)",
            file,
            size_line,
        )
    n, m = sizes[0], sizes[1]
    limits.check_shape(n, m, file, dense=(fmt == "array"))
    if symmetry != "general" and n != m:
        raise DataFormatError(f"a {symmetry} matrix must be square, got {n} x {m}", file, size_line)
    if fmt == "coordinate":
        expected = sizes[2]
        width = 2 if field == "pattern" else 3
    elif symmetry == "general":
        expected, width = n * m, 1
    else:
        expected, width = (n * (n + 1) // 2 if symmetry == "symmetric" else n * (n - 1) // 2), 1
    entries = body[1:]
    if len(entries) != expected:
        raise DataFormatError(
            f"the size line declares {expected} entries but {len(entries)} follow", file, size_line
        )
    for line, fields in entries:
        if len(fields) != width:
            raise DataFormatError(
                f"expected {width} field(s) per entry, got {len(fields)}", file, line
            )
    line_numbers = [line for line, _ in entries]
    T = to_float_matrix([f for _, f in entries], line_numbers, list(range(width)), file)
    if fmt == "array":
        return {"X": _array(T[:, 0], n, symmetry), "labels": None, "feature_names": None}
    idx = T[:, :2]
    bound = np.array([n, m])
    bad = (idx != np.round(idx)) | (idx < 1) | (idx > bound)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataFormatError(
            f"{('row', 'column')[c]} index {idx[r, c]:g} is not an integer in 1..{bound[c]}",
            file,
            line_numbers[r],
            c + 1,
        )
    i = idx[:, 0].astype(np.int64) - 1
    j = idx[:, 1].astype(np.int64) - 1
    v = np.ones(len(i)) if field == "pattern" else T[:, 2]
    if symmetry != "general":
        off = i != j
        sign = 1.0 if symmetry == "symmetric" else -1.0
        i, j, v = (
            np.concatenate([i, j[off]]),
            np.concatenate([j, i[off]]),
            np.concatenate([v, sign * v[off]]),
        )
    return {"X": sp.csr_matrix((v, (i, j)), shape=(n, m)), "labels": None, "feature_names": None}


def _array(values, n, symmetry):
    """Column-major dense values; symmetric forms store the lower triangle by columns."""
    if symmetry == "general":
        return values.reshape((-1, n)).T.copy() if n else np.zeros((0, 0))
    A = np.zeros((n, n))
    rows, cols = np.tril_indices(n, k=0 if symmetry == "symmetric" else -1)
    order = np.lexsort((rows, cols))  # column by column, top to bottom
    A[rows[order], cols[order]] = values
    return (
        A
        + (A.T if symmetry == "symmetric" else -A.T)
        - (np.diag(np.diag(A)) if symmetry == "symmetric" else 0)
    )
