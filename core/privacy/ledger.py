"""User-level privacy budget ledger (design.md "Privacy rules"; guides/dp-reliability.md 3, 6.3).

A :class:`Ledger` holds a total budget (epsilon, delta) for one dataset. Every release calls
:meth:`Ledger.charge` BEFORE it runs; a charge that would exceed the total raises
:class:`BudgetExceeded` and spends nothing. There are no refunds (a failed release may already
have leaked through errors or timing).

Arithmetic is exact: every amount is parsed from its shortest decimal representation
(``repr(0.1) == "0.1"``), summed as ``decimal.Decimal`` with rounding trapped, and compared
without tolerance, so ten charges of 0.1 fit a budget of 1.0 and an eleventh does not.
Refusals depend only on the public amounts, so a refused charge does not exhaust the ledger.

With ``path=`` the ledger lives in an SQLite file (stdlib ``sqlite3``) keyed by the dataset
fingerprint (SHA-256 of the canonical data bytes): table ``ledgers`` holds the total and the
running spend, table ``charges`` every charge (UTC timestamp, what, epsilon, delta), all amounts as
decimal strings. Each charge is one ``BEGIN IMMEDIATE`` transaction (read spend, check, insert,
update), so concurrent processes or sessions on one dataset share one total and never overspend.
Opening an existing file with a different total for the same dataset raises ``ValueError``: a
budget can never be raised (or silently changed) by re-opening. Threat model: the ledger protects
data subjects against an honest analyst over-releasing; whoever can edit the file or alter the
data (new fingerprint) can reset it.
"""
import decimal
import numbers
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal

import numpy as np

from .errors import BudgetExceeded

_CTX = decimal.Context(prec=5000, Emin=-999999, Emax=999999,
                       traps=[decimal.InvalidOperation, decimal.Inexact, decimal.Overflow,
                              decimal.DivisionByZero])
_ZERO = Decimal(0)
_ONE = Decimal(1)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ledgers (dataset TEXT PRIMARY KEY, total_epsilon TEXT NOT NULL, "
    "total_delta TEXT NOT NULL, spent_epsilon TEXT NOT NULL, spent_delta TEXT NOT NULL, "
    "created TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS charges (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL, "
    "at TEXT NOT NULL, what TEXT NOT NULL, epsilon TEXT NOT NULL, delta TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset, id)",
)


def to_decimal(value, name="epsilon"):
    """Exact Decimal of ``value``: floats via their shortest repr, strings and ints as written."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        if isinstance(value, Decimal):
            result = value
        elif isinstance(value, str):
            result = Decimal(value.strip())
        elif isinstance(value, numbers.Integral):
            result = Decimal(int(value))
        elif isinstance(value, numbers.Real):
            result = Decimal(repr(float(value)))
        else:
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    except decimal.InvalidOperation:
        raise ValueError(f"{name} is not a number: {value!r}") from None
    if not result.is_finite():
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def _check_amounts(epsilon, delta, what):
    eps = to_decimal(epsilon, "epsilon")
    dlt = to_decimal(delta, "delta")
    if eps <= _ZERO:
        raise ValueError(f"{what} epsilon must be > 0, got {epsilon!r}")
    if not _ZERO <= dlt < _ONE:
        raise ValueError(f"{what} delta must satisfy 0 <= delta < 1, got {delta!r}")
    return eps, dlt


def _show(d):
    return repr(float(d))


@dataclass(frozen=True)
class ChargeRecord:
    """One accepted charge: when (UTC), what was released, epsilon, delta."""

    when: datetime
    what: str
    epsilon: float
    delta: float

    def __str__(self):
        return f"{self.when:%Y-%m-%d %H:%M:%S} UTC  epsilon={self.epsilon!r} delta={self.delta!r}  {self.what}"

    def to_dict(self):
        """JSON-friendly dict (``when`` as an ISO 8601 string), e.g. for a downloadable release log."""
        return {"when": self.when.isoformat(), "what": self.what, "epsilon": self.epsilon, "delta": self.delta}


def _fingerprint(dataset):
    if dataset is None:
        return None
    key = getattr(dataset, "fingerprint", dataset)
    if not isinstance(key, str) or not key:
        raise TypeError("dataset must be a non-empty fingerprint string or an object with .fingerprint")
    return key


class Ledger:
    """Total privacy budget for one dataset, charged before every release (no refunds).

    Parameters: ``epsilon`` (> 0) and ``delta`` (0 <= delta < 1) of the total budget; ``path``
    of an SQLite file for persistence (None keeps it in memory); ``dataset``: the dataset
    fingerprint (or an object with ``.fingerprint``), required with ``path``.
    """

    def __init__(self, epsilon, delta=0.0, path=None, dataset=None):
        self._total = _check_amounts(epsilon, delta, "budget")
        self.dataset = _fingerprint(dataset)
        self.path = None if path is None else str(path)
        self._lock = threading.Lock()
        self._spent = (_ZERO, _ZERO)
        self._records = []
        if self.path is not None:
            if self.dataset is None:
                raise ValueError("a persistent Ledger (path=...) needs dataset= (its fingerprint)")
            try:
                self._open_row()
            except sqlite3.Error as exc:
                raise ValueError(f"cannot use ledger file {self.path!r}: {exc}") from None

    def __copy__(self):
        """A ledger is one budget: copying it returns the same ledger.

        Estimators take ``ledger=`` as a constructor parameter, and ``sklearn.base.clone`` (grid
        searches, pipelines) deep-copies parameters. A copied in-memory ledger would start again
        from its own spent total and let the clones spend the budget twice.
        """
        return self

    def __deepcopy__(self, memo):
        return self

    # -- persistence -------------------------------------------------------------------------
    def _connect(self):
        return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)

    def _open_row(self):
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA:
                conn.execute(stmt)
            row = conn.execute("SELECT total_epsilon, total_delta FROM ledgers WHERE dataset = ?",
                               (self.dataset,)).fetchone()
            if row is None:
                conn.execute("INSERT INTO ledgers VALUES (?, ?, ?, ?, ?, ?)",
                             (self.dataset, str(self._total[0]), str(self._total[1]), "0", "0",
                              datetime.now(timezone.utc).isoformat()))
            elif (Decimal(row[0]), Decimal(row[1])) != self._total:
                raise ValueError(
                    f"ledger file {self.path!r} already holds a budget of (epsilon={row[0]}, "
                    f"delta={row[1]}) for this dataset; refusing to change it to "
                    f"(epsilon={self._total[0]}, delta={self._total[1]})")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _read(self, sql):
        conn = self._connect()
        try:
            return conn.execute(sql, (self.dataset,)).fetchall()
        finally:
            conn.close()

    # -- charging ----------------------------------------------------------------------------
    def _refuse(self, eps, dlt, spent, what):
        remaining = (self._total[0] - spent[0], self._total[1] - spent[1])
        raise BudgetExceeded(
            f"charge of epsilon={_show(eps)}, delta={_show(dlt)} for {what or 'a release'!r} refused: "
            f"spent epsilon={_show(spent[0])}, delta={_show(spent[1])} of the budget "
            f"(epsilon={_show(self._total[0])}, delta={_show(self._total[1])}); remaining "
            f"epsilon={_show(remaining[0])}, delta={_show(remaining[1])}")

    def _fits(self, eps, dlt, spent):
        with decimal.localcontext(_CTX):
            return spent[0] + eps <= self._total[0] and spent[1] + dlt <= self._total[1]

    def charge(self, epsilon, delta=0.0, what=""):
        """Spend (epsilon, delta) for ``what`` BEFORE releasing it; returns the ChargeRecord.

        Raises BudgetExceeded (spending nothing) if the total would be exceeded; ValueError or
        TypeError for invalid amounts (epsilon > 0 finite, 0 <= delta < 1).
        """
        eps, dlt = _check_amounts(epsilon, delta, "charge")
        what = str(what)
        now = datetime.now(timezone.utc)
        with self._lock:
            if self.path is None:
                if not self._fits(eps, dlt, self._spent):
                    self._refuse(eps, dlt, self._spent, what)
                with decimal.localcontext(_CTX):
                    self._spent = (self._spent[0] + eps, self._spent[1] + dlt)
                record = ChargeRecord(now, what, float(eps), float(dlt))
                self._records.append(record)
                return record
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                row = conn.execute("SELECT spent_epsilon, spent_delta FROM ledgers WHERE dataset = ?",
                                   (self.dataset,)).fetchone()
                if row is None:
                    raise RuntimeError(f"ledger row for dataset {self.dataset!r} vanished from {self.path!r}")
                spent = (Decimal(row[0]), Decimal(row[1]))
                if not self._fits(eps, dlt, spent):
                    self._refuse(eps, dlt, spent, what)
                with decimal.localcontext(_CTX):
                    new = (spent[0] + eps, spent[1] + dlt)
                conn.execute("INSERT INTO charges (dataset, at, what, epsilon, delta) VALUES (?, ?, ?, ?, ?)",
                             (self.dataset, now.isoformat(), what, str(eps), str(dlt)))
                conn.execute("UPDATE ledgers SET spent_epsilon = ?, spent_delta = ? WHERE dataset = ?",
                             (str(new[0]), str(new[1]), self.dataset))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.close()
            return ChargeRecord(now, what, float(eps), float(dlt))

    def can_charge(self, epsilon, delta=0.0):
        """Whether a charge of (epsilon, delta) would currently fit (it may not by the time you charge)."""
        eps, dlt = _check_amounts(epsilon, delta, "charge")
        return self._fits(eps, dlt, self.spent_exact)

    # -- reading -----------------------------------------------------------------------------
    @property
    def total(self):
        """(epsilon, delta) of the whole budget, as floats."""
        return float(self._total[0]), float(self._total[1])

    @property
    def epsilon(self):
        return float(self._total[0])

    @property
    def delta(self):
        return float(self._total[1])

    @property
    def spent_exact(self):
        """(epsilon, delta) spent so far, as exact Decimals."""
        if self.path is None:
            return self._spent
        rows = self._read("SELECT spent_epsilon, spent_delta FROM ledgers WHERE dataset = ?")
        return Decimal(rows[0][0]), Decimal(rows[0][1])

    @property
    def remaining_exact(self):
        """(epsilon, delta) still available, as exact Decimals."""
        spent = self.spent_exact
        with decimal.localcontext(_CTX):
            return self._total[0] - spent[0], self._total[1] - spent[1]

    @property
    def spent(self):
        """(epsilon, delta) spent so far, as floats (exact values: :attr:`spent_exact`)."""
        return tuple(float(x) for x in self.spent_exact)

    @property
    def remaining(self):
        """(epsilon, delta) still available, as floats (exact values: :attr:`remaining_exact`)."""
        return tuple(float(x) for x in self.remaining_exact)

    @property
    def history(self):
        """Every accepted charge, oldest first, as :class:`ChargeRecord` (when, what, epsilon, delta)."""
        if self.path is None:
            return list(self._records)
        rows = self._read("SELECT at, what, epsilon, delta FROM charges WHERE dataset = ? ORDER BY id")
        return [ChargeRecord(datetime.fromisoformat(at), what, float(Decimal(e)), float(Decimal(d)))
                for at, what, e, d in rows]

    def summary(self):
        """One plain-text line: budget, spent, number of charges, remaining."""
        spent, remaining, n = self.spent_exact, self.remaining_exact, len(self.history)
        return (f"budget epsilon={_show(self._total[0])}, delta={_show(self._total[1])}; "
                f"spent epsilon={_show(spent[0])}, delta={_show(spent[1])} in {n} "
                f"charge{'' if n == 1 else 's'}; remaining epsilon={_show(remaining[0])}, "
                f"delta={_show(remaining[1])}")

    def __repr__(self):
        where = "in memory" if self.path is None else f"path={self.path!r}"
        return f"Ledger({self.summary()}; {where})"


def charge(ledger, epsilon, delta=0.0, what=""):
    """``ledger.charge(epsilon, delta, what)``, or nothing when ``ledger`` is None."""
    if ledger is None:
        return None
    return ledger.charge(epsilon, delta, what=what)
