"""Validation errors and checks for user-supplied data (every bad input is refused
before any computation, with a message that says where it is).

Every problem is reported as a :class:`DataFormatError` (a ``ValueError``) whose message names the
file and, where it applies, the row and column, counted from 1 as a person counts.
"""

from dataclasses import dataclass

import numpy as np

DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_MAX_ROWS = 10_000_000
DEFAULT_MAX_COLS = 100_000
DEFAULT_MAX_CELLS = 100_000_000


class DataFormatError(ValueError):
    """A user file could not be turned into a data matrix. ``file``, ``row``, ``column`` are
    1-based locations (None when they do not apply)."""

    def __init__(self, message, file=None, row=None, column=None):
        self.file, self.row, self.column = file, row, column
        where = []
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column}")
        prefix = f"{file}: " if file else ""
        if where:
            prefix += ", ".join(where) + ": "
        super().__init__(prefix + message)


@dataclass(frozen=True)
class Limits:
    """Size limits, checked before parsing wherever the format declares its size."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_rows: int = DEFAULT_MAX_ROWS
    max_cols: int = DEFAULT_MAX_COLS
    max_cells: int = DEFAULT_MAX_CELLS

    def __post_init__(self):
        for key in ("max_bytes", "max_rows", "max_cols", "max_cells"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{key} must be a positive integer, got {value!r}")

    def check_shape(self, n_rows, n_cols, file, dense=True):
        if n_rows > self.max_rows:
            raise DataFormatError(f"{n_rows} rows exceed the limit max_rows={self.max_rows}", file)
        if n_cols > self.max_cols:
            raise DataFormatError(
                f"{n_cols} columns exceed the limit max_cols={self.max_cols}", file
            )
        if dense and n_rows * n_cols > self.max_cells:
            raise DataFormatError(
                f"{n_rows} x {n_cols} cells exceed the limit max_cells={self.max_cells}", file
            )

    def check_bytes(self, n_bytes, file, what="file"):
        if n_bytes > self.max_bytes:
            raise DataFormatError(
                f"{what} is larger than the limit max_bytes={self.max_bytes}", file
            )


def check_matrix_values(values, rows, cols, file, counts=False, row_numbers=None, col_names=None):
    """Raise naming the first non-finite (or, with ``counts``, negative) value.

    ``values``, ``rows``, ``cols`` are parallel arrays (0-based positions). ``row_numbers`` maps a
    0-based data row to the number reported (e.g. its line in a text file; default row + 1);
    ``col_names`` adds the column's name.
    """
    values = np.asarray(values)
    bad_nan = np.isnan(values)
    bad_inf = np.isinf(values)
    bad_neg = (values < 0) if counts else np.zeros(values.shape, bool)
    for bad, what in (
        (bad_nan, "missing value (NaN)"),
        (bad_inf, "infinite value"),
        (bad_neg, "negative value where counts (>= 0) are required"),
    ):
        if np.any(bad):
            idx = np.flatnonzero(bad)
            first = idx[np.lexsort((cols[idx], rows[idx]))[0]]
            r, c = int(rows[first]), int(cols[first])
            shown = r + 1 if row_numbers is None else int(row_numbers[r])
            raise DataFormatError(f"{what}{_named(col_names, c)}", file, shown, c + 1)


def check_dense(X, file, counts=False, row_numbers=None, col_names=None):
    """check_matrix_values for a dense 2-D array."""
    ok = np.isfinite(X) if not counts else (np.isfinite(X) & (X >= 0))
    if not ok.all():
        rows, cols = np.nonzero(~ok)
        check_matrix_values(X[rows, cols], rows, cols, file, counts, row_numbers, col_names)


def _named(col_names, c):
    if col_names is None or c >= len(col_names):
        return ""
    return f" (column {str(col_names[c])[:80]!r})"
