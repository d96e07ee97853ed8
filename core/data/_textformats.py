"""Delimited text: CSV/TSV tables and CLUTO-style "row col count" triples.

Rows in error messages are lines of the file counted from 1 (a header line is line 1, as in a
spreadsheet); columns are fields counted from 1, the label column included.
"""

import csv
import io
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .validation import DataFormatError, check_matrix_values


def decode_text(raw, file):
    """bytes -> str: UTF-8 (a BOM is dropped) or UTF-16 with a BOM; no binary content."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise DataFormatError("invalid UTF-16 text", file) from None
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise DataFormatError(
            "binary content (NUL byte) in a text file; expected CSV/TSV text", file, line
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFormatError(
            f"not UTF-8 text (invalid byte at offset {exc.start})", file, line
        ) from None


def _first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line
    return None


def _choose_delimiter(line, default):
    if default is not None:
        return default
    for delim in (",", "\t", ";"):
        if delim in line:
            return delim
    return None  # runs of whitespace


def _prepare(text, file, limits, delimiter, max_fields=None, lines_are_rows=True):
    """Cheap checks before parsing; returns (first non-blank line, its 0-based index, delimiter)."""
    first = _first_line(text)
    if first is None:
        raise DataFormatError("the file is empty (no data)", file)
    if lines_are_rows and (
        text.count("\n") > limits.max_rows + 1
        and sum(1 for line in text.splitlines() if line.strip()) > limits.max_rows + 1
    ):
        raise DataFormatError(f"more than max_rows={limits.max_rows} rows", file)
    delim = _choose_delimiter(first, delimiter)
    if delim is not None and (not isinstance(delim, str) or len(delim) != 1):
        raise ValueError(f"delimiter must be a single character, got {delim!r}")
    width = len(first.split()) if delim is None else first.count(delim) + 1
    cap = limits.max_cols + 1 if max_fields is None else max_fields
    if width > cap:
        raise DataFormatError(
            f"{width} columns exceed the limit max_cols={limits.max_cols}", file, 1
        )
    index = next(i for i, line in enumerate(text.split("\n")) if line.strip())
    return first, index, delim


def split_rows(text, file, limits, delimiter=None, max_fields=None, lines_are_rows=True):
    """Split text into rows of string fields; returns (rows, line_numbers). Blank lines skipped."""
    _, _, delim = _prepare(text, file, limits, delimiter, max_fields, lines_are_rows)
    rows, lines = [], []
    if delim is None:
        for i, line in enumerate(text.splitlines(), start=1):
            fields = line.split()
            if fields:
                rows.append(fields)
                lines.append(i)
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
        try:
            for fields in reader:
                if fields and not (len(fields) == 1 and not fields[0].strip()):
                    rows.append(fields)
                    lines.append(reader.line_num)
        except csv.Error as exc:
            raise DataFormatError(
                f"malformed delimited text ({exc})", file, reader.line_num
            ) from None
    expected = len(rows[0])
    for fields, line in zip(rows, lines, strict=True):
        if len(fields) != expected:
            raise DataFormatError(
                f"has {len(fields)} fields but line {lines[0]} has {expected} (ragged rows)",
                file,
                line,
            )
    return rows, lines


def _is_number(cell):
    try:
        float(cell)
    except (ValueError, OverflowError):
        return False
    return True


def to_float_matrix(rows, lines, columns, file, col_names=None):
    """Convert the chosen columns of string rows to float64, naming the first bad cell."""
    obj = np.array(rows, dtype=object)[:, columns] if rows else np.empty((0, len(columns)))
    try:
        return obj.astype(np.float64)
    except (ValueError, TypeError, OverflowError):
        pass
    for r, row in enumerate(rows):
        for j, c in enumerate(columns):
            cell = row[c]
            if not _is_number(cell):
                name = "" if col_names is None else f" (column {str(col_names[j])[:80]!r})"
                what = (
                    "empty cell (missing value)"
                    if not cell.strip()
                    else f"{cell[:40]!r} is not a number"
                )
                raise DataFormatError(what + name, file, lines[r], c + 1)
    raise DataFormatError("could not convert the cells to numbers", file)


def _parse_labels(cells, lines, column, file):
    for cell, line in zip(cells, lines, strict=True):
        if not cell.strip():
            raise DataFormatError("empty label", file, line, column + 1)
    stripped = [c.strip() for c in cells]
    try:
        return np.array([int(c) for c in stripped], dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    try:  # "1.0", "2e0": whole numbers written as floats are integer labels too
        values = np.array([float(c) for c in stripped])
        if np.all(np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2**62)):
            return values.astype(np.int64)
    except (ValueError, OverflowError):
        pass
    return np.array(stripped, dtype=str)


def _resolve_label_column(label_column, header_names, width, file):
    if label_column is None:
        return None
    if isinstance(label_column, str):
        if header_names is None:
            raise DataFormatError(
                f"label_column={label_column!r} is a name but the file has no header row", file
            )
        hits = [i for i, h in enumerate(header_names) if h.strip() == label_column.strip()]
        if not hits:
            raise DataFormatError(f"no column named {label_column!r} in the header", file, 1)
        if len(hits) > 1:
            raise DataFormatError(
                f"the header names {label_column!r} {len(hits)} times "
                f"(columns {', '.join(str(h + 1) for h in hits)})",
                file,
                1,
            )
        return hits[0]
    if isinstance(label_column, (bool, np.bool_)) or not isinstance(
        label_column, (int, np.integer)
    ):
        raise TypeError("label_column must be a column name (str) or a 0-based index (int)")
    if not -width <= label_column < width:
        raise DataFormatError(
            f"label_column={label_column} is out of range for {width} columns", file
        )
    return int(label_column) % width


def _has_header(header, first_row, skip, file):
    if header == "infer":
        return any(not _is_number(c) for i, c in enumerate(first_row) if i != skip)
    if header is True or header is False:
        return header
    raise ValueError(f"header must be 'infer', True or False, got {header!r}")


def _label_index_guess(label_column, width):
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
        return label_column % width if -width <= label_column < width else None
    return None


def _read_table_fast(text, file, limits, delimiter, header, label_column, counts):
    """pandas' C parser for clean numeric files; None means "use the exact slow path" (which
    reports the file line of every problem). Labels must be integers here."""
    first, index, delim = _prepare(text, file, limits, delimiter)
    try:
        head = (
            first.split()
            if delim is None
            else next(csv.reader([first], delimiter=delim, strict=True))
        )
    except (csv.Error, StopIteration):
        return None
    width = len(head)
    if isinstance(label_column, str) and header == "infer":
        header = True
    has_header = _has_header(header, head, _label_index_guess(label_column, width), file)
    names = head if has_header else None
    lab = _resolve_label_column(label_column, names, width, file)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = pd.read_csv(
                io.StringIO(text),
                sep=r"\s+" if delim is None else delim,
                header=None,
                skiprows=index + has_header,
                dtype=np.float64,
                engine="c",
                float_precision="round_trip",
                na_filter=False,
                quoting=csv.QUOTE_NONE if delim is None else csv.QUOTE_MINIMAL,
                skip_blank_lines=True,
            ).to_numpy()
    except Exception:  # noqa: BLE001 -- any irregularity: the slow path finds and names it
        return None
    if M.ndim != 2:
        return None
    if M.shape[0] == 0 or M.shape[1] != width or width == (lab is not None):
        return None
    limits.check_shape(M.shape[0], width - (lab is not None), file)
    columns = [c for c in range(width) if c != lab]
    X = np.ascontiguousarray(M[:, columns])
    if not np.all(np.isfinite(X) & (X >= 0) if counts else np.isfinite(X)):
        return None
    labels = None
    if lab is not None:
        labels = M[:, lab]
        if not np.all(
            np.isfinite(labels) & (labels == np.round(labels)) & (np.abs(labels) < 2**62)
        ):
            return None
        labels = labels.astype(np.int64)
    return {
        "X": X,
        "labels": labels,
        "feature_names": None if names is None else [names[c] for c in columns],
    }


def read_table(
    raw, file, limits, *, delimiter=None, header="infer", label_column=None, counts=False, fast=True
):
    """CSV/TSV -> dict(X, labels, feature_names)."""
    text = decode_text(raw, file)
    if fast:
        parts = _read_table_fast(text, file, limits, delimiter, header, label_column, counts)
        if parts is not None:
            return parts
    rows, lines = split_rows(text, file, limits, delimiter)
    width = len(rows[0])
    if isinstance(label_column, str) and header == "infer":
        header = True
    has_header = _has_header(header, rows[0], _label_index_guess(label_column, width), file)
    names = rows[0] if has_header else None
    data, data_lines = (rows[1:], lines[1:]) if has_header else (rows, lines)
    if not data:
        raise DataFormatError("no data rows (only a header line)", file)
    limits.check_shape(len(data), width - (label_column is not None), file)
    lab = _resolve_label_column(label_column, names, width, file)
    columns = [c for c in range(width) if c != lab]
    if not columns:
        raise DataFormatError("no feature columns besides the label column", file)
    feature_names = None if names is None else [names[c] for c in columns]
    X = to_float_matrix(data, data_lines, columns, file, feature_names)
    check_dense_lines(X, data_lines, columns, file, counts, feature_names)
    labels = None if lab is None else _parse_labels([r[lab] for r in data], data_lines, lab, file)
    return {"X": X, "labels": labels, "feature_names": feature_names}


def check_dense_lines(X, lines, columns, file, counts, feature_names):
    """check_dense with rows reported as file lines and columns as file fields."""
    ok = np.isfinite(X) if not counts else (np.isfinite(X) & (X >= 0))
    if ok.all():
        return
    r, c = np.nonzero(~ok)
    file_cols = np.asarray(columns)[c]
    names = None
    if feature_names is not None:
        names = [None] * (max(columns) + 1)
        for j, col in enumerate(columns):
            names[col] = feature_names[j]
    check_matrix_values(X[r, c], r, file_cols, file, counts, lines, names)


def read_triples(
    raw, file, limits, *, delimiter=None, header="infer", counts=False, index_base=1, shape=None
):
    """CLUTO-style "row col count" triples, one per line (comma- or whitespace-separated).

    Indices are 1-based by default (``index_base=1``); the dp-tauCC data files ("doc,word,cluster"
    header, where "cluster" is the count) are 0-based: pass ``index_base=0``. Repeated (row, col)
    pairs are summed. The shape is ``shape`` or (max row, max col) seen. Returns a CSR matrix.
    """
    if index_base not in (0, 1):
        raise ValueError(f"index_base must be 0 or 1, got {index_base!r}")
    text = decode_text(raw, file)
    rows, lines = split_rows(text, file, limits, delimiter, max_fields=3, lines_are_rows=False)
    if len(rows[0]) != 3:
        raise DataFormatError(
            f"expected 3 fields (row, column, count) per line, got {len(rows[0])}", file, lines[0]
        )
    has_header = _has_header(header, rows[0], None, file)
    data, data_lines = (rows[1:], lines[1:]) if has_header else (rows, lines)
    if not data:
        raise DataFormatError("no data lines (only a header line)", file)
    names = ["row", "column", "count"]
    T = to_float_matrix(data, data_lines, [0, 1, 2], file, names)
    check_dense_lines(T[:, :2], data_lines, [0, 1], file, False, names[:2])
    idx = T[:, :2]
    bad = (idx != np.round(idx)) | (idx < index_base)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        hint = " (0-based file? pass index_base=0)" if index_base == 1 and idx[r, c] == 0 else ""
        raise DataFormatError(
            f"{names[c]} index {idx[r, c]:g} is not an integer >= {index_base}{hint}",
            file,
            data_lines[r],
            c + 1,
        )
    vals = T[:, 2]
    check_matrix_values(
        vals, np.arange(len(vals)), np.full(len(vals), 2), file, counts, data_lines, names
    )
    i = idx[:, 0].astype(np.int64) - index_base
    j = idx[:, 1].astype(np.int64) - index_base
    n, m = (int(i.max()) + 1, int(j.max()) + 1)
    if shape is not None:
        sn, sm = (int(s) for s in shape)
        over = np.flatnonzero((i >= sn) | (j >= sm))
        if over.size:
            r = over[0]
            raise DataFormatError(
                f"index ({i[r] + index_base}, {j[r] + index_base}) is outside "
                f"the given shape {sn} x {sm}",
                file,
                data_lines[r],
            )
        n, m = sn, sm
    limits.check_shape(n, m, file, dense=False)
    A = sp.coo_matrix((vals, (i, j)), shape=(n, m)).tocsr()
    A.sum_duplicates()
    return {"X": A, "labels": None, "feature_names": None}
