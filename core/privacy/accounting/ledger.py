"""User-level privacy budget ledger: one total budget per dataset over every release (a privacy
filter: once a charge would exceed the total, it is refused).

A :class:`Ledger` holds a total budget (epsilon, delta) for one dataset. Every release calls
:meth:`Ledger.charge` BEFORE it runs; a charge that would exceed the total raises
:class:`BudgetExceeded` and spends nothing. There are no refunds (a failed release may already
have leaked through errors or timing).

Arithmetic is exact: every amount is parsed from its shortest decimal representation
(``repr(0.1) == "0.1"``), summed as ``decimal.Decimal`` with rounding trapped, and compared
without tolerance, so ten charges of 0.1 fit a budget of 1.0 and an eleventh does not.
Refusals depend only on the public amounts, so a refused charge does not exhaust the ledger.

A ledger counts in one unit, ``unit`` = "replace" (replace-one record, the default) or
"add_remove". A charge names the neighbouring relation of the release it pays for
(``relation=``); its cost is converted to the ledger's unit by group privacy
(:mod:`privclust.core.privacy.accounting.relations`), e.g. an add/remove (eps, delta) release costs
(2 eps, (1 + e^eps) delta) on a replace-one ledger, and a release that cannot be converted is
refused before anything is spent.

With ``path=`` the ledger lives in an SQLite file (stdlib ``sqlite3``) keyed by the dataset
fingerprint (the budget key of the source records): table ``ledgers`` holds the total, the unit
and the running spend, table ``charges`` every charge (UTC timestamp, what, relation, the
requested and the converted epsilon and delta), all amounts as decimal strings. Each charge is one ``BEGIN IMMEDIATE`` transaction (read spend, check, insert,
update), so concurrent processes or sessions on one dataset share one total and never overspend.
Opening an existing file with a different total for the same dataset raises ``ValueError``: a
budget can never be raised (or silently changed) by re-opening. Threat model: the ledger protects
data subjects against an honest analyst over-releasing; whoever can edit the file or alter the
data (new fingerprint) can reset it.
"""

import contextlib
import decimal
import numbers
import os
import socket
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import numpy as np

from ..errors import BudgetExceeded, DuplicateRequest
from .relations import check_unit, convert

_CTX = decimal.Context(
    prec=5000,
    Emin=-999999,
    Emax=999999,
    traps=[decimal.InvalidOperation, decimal.Inexact, decimal.Overflow, decimal.DivisionByZero],
)
_ZERO = Decimal(0)
_ONE = Decimal(1)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ledgers (dataset TEXT PRIMARY KEY, total_epsilon TEXT NOT NULL, "
    "total_delta TEXT NOT NULL, spent_epsilon TEXT NOT NULL, spent_delta TEXT NOT NULL, "
    "created TEXT NOT NULL, unit TEXT NOT NULL DEFAULT 'replace')",
    "CREATE TABLE IF NOT EXISTS charges (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL, "
    "at TEXT NOT NULL, what TEXT NOT NULL, epsilon TEXT NOT NULL, delta TEXT NOT NULL, "
    "relation TEXT, requested_epsilon TEXT, requested_delta TEXT)",
    "CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset, id)",
    # the releases a charge pays for, written in the charge's transaction and marked done by the
    # release store in the transaction that stores the release: a crash in between leaves the
    # request pending, to be completed at no new charge (privclust.core.release)
    "CREATE TABLE IF NOT EXISTS pending_releases (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL, charge_id INTEGER NOT NULL, key TEXT NOT NULL, "
    "estimator TEXT NOT NULL, params TEXT NOT NULL, at TEXT NOT NULL, "
    "done INTEGER NOT NULL DEFAULT 0, runner TEXT)",
    "CREATE UNIQUE INDEX IF NOT EXISTS pending_by_key ON pending_releases (dataset, key)",
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
    """One accepted charge: when (UTC), what was released, the (epsilon, delta) spent in the
    ledger's unit, the release's own relation and (epsilon, delta) before conversion, and the
    charge's id in its ledger."""

    when: datetime
    what: str
    epsilon: float
    delta: float
    relation: str | None = None
    requested: tuple | None = None
    id: int | None = None

    def __str__(self):
        head = f"{self.when:%Y-%m-%d %H:%M:%S} UTC  epsilon={self.epsilon!r} delta={self.delta!r}"
        if (
            self.relation is not None
            and self.requested is not None
            and tuple(self.requested) != (self.epsilon, self.delta)
        ):
            head += (
                f" (a {self.relation} release of epsilon={self.requested[0]!r} "
                f"delta={self.requested[1]!r})"
            )
        return f"{head}  {self.what}"

    def to_dict(self):
        """JSON-friendly dict (``when`` as an ISO 8601 string), e.g. for a downloadable release log."""
        return {
            "id": self.id,
            "when": self.when.isoformat(),
            "what": self.what,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "relation": self.relation,
            "requested": None if self.requested is None else list(self.requested),
        }


def _fingerprint(dataset):
    if dataset is None:
        return None
    key = getattr(dataset, "budget_key", None) or getattr(dataset, "fingerprint", dataset)
    if not isinstance(key, str) or not key:
        raise TypeError(
            "dataset must be a non-empty key string or an object with .budget_key or .fingerprint"
        )
    return key


class Ledger:
    """Total privacy budget for one dataset, charged before every release (no refunds).

    Parameters
    ----------
    epsilon : float
        Total epsilon of the budget, > 0.
    delta : float, default=0.0
        Total delta of the budget, 0 <= delta < 1.
    path : str or None, default=None
        SQLite file that keeps the budget across processes and sessions; None keeps it in memory.
    dataset : str or object or None, default=None
        The dataset's budget key (or an object with ``.budget_key`` or ``.fingerprint``); required
        with ``path``.
    unit : {"replace", "add_remove"}, default="replace"
        The neighbouring relation every charge is counted in; a release under another relation is
        converted first (:func:`~privclust.core.privacy.accounting.relations.convert`).

    Attributes
    ----------
    spent : tuple of float
        (epsilon, delta) charged so far.
    history : list of ChargeRecord
        The accepted charges, oldest first.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 3.16 (basic composition) and
        Thm. 2.2 (group privacy).
    See docs/algorithms.md, section 1 (one ledger, one unit).

    Examples
    --------
    >>> import numpy as np
    >>> from privclust.core import DPLloyd, Ledger
    >>> ledger = Ledger(epsilon=1.0, delta=1e-5)
    >>> X = np.random.default_rng(0).uniform(size=(200, 2))
    >>> # a private estimator charges its ledger before it reads X; DPLloyd's epsilon is under
    >>> # add/remove, so it costs twice as much in the ledger's replace-one unit
    >>> _ = DPLloyd(n_clusters=2, epsilon=0.25, bounds=(0.0, 1.0), ledger=ledger).fit(X)
    >>> ledger.spent, ledger.remaining
    ((0.5, 0.0), (0.5, 1e-05))
    >>> len(ledger.history)
    1
    """

    def __init__(self, epsilon, delta=0.0, path=None, dataset=None, unit="replace"):
        self._total = _check_amounts(epsilon, delta, "budget")
        self.unit = check_unit(unit)
        self.dataset = _fingerprint(dataset)
        self._aliases = tuple(getattr(dataset, "legacy_budget_keys", ()))
        self.path = None if path is None else str(path)
        self._lock = threading.Lock()
        self._spent = (_ZERO, _ZERO)
        self._records = []
        self._pending = {}  # in memory: key -> pending request (see charge)
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

    @contextlib.contextmanager
    def _transaction(self):
        """One ``BEGIN IMMEDIATE`` transaction: committed when the block ends, rolled back when
        it raises (a refused charge leaves the file as it was); the connection is closed."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _open_row(self):
        with self._transaction() as conn:
            for stmt in _SCHEMA:
                conn.execute(stmt)
            _migrate(conn)
            row = conn.execute(
                "SELECT total_epsilon, total_delta, unit FROM ledgers WHERE dataset = ?",
                (self.dataset,),
            ).fetchone()
            if row is None and self._adopt(conn):
                row = conn.execute(
                    "SELECT total_epsilon, total_delta, unit FROM ledgers WHERE dataset = ?",
                    (self.dataset,),
                ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO ledgers (dataset, total_epsilon, total_delta, "
                    "spent_epsilon, spent_delta, created, unit) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        self.dataset,
                        str(self._total[0]),
                        str(self._total[1]),
                        "0",
                        "0",
                        datetime.now(UTC).isoformat(),
                        self.unit,
                    ),
                )
            elif (Decimal(row[0]), Decimal(row[1])) != self._total:
                raise ValueError(
                    f"ledger file {self.path!r} already holds a budget of (epsilon={row[0]}, "
                    f"delta={row[1]}) for this dataset; refusing to change it to "
                    f"(epsilon={self._total[0]}, delta={self._total[1]})"
                )
            elif row[2] != self.unit:
                raise ValueError(
                    f"ledger file {self.path!r} counts this dataset's budget in unit {row[2]!r}; "
                    f"refusing to open it with unit {self.unit!r}"
                )

    def _adopt(self, conn):
        """A budget an earlier version kept under another key of the same records (its
        ``legacy_budget_keys``) moves to this key, with its charges and releases: an upgrade
        never starts a source's budget afresh. True when one was adopted."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for old in self._aliases:
            if conn.execute("SELECT 1 FROM ledgers WHERE dataset = ?", (old,)).fetchone():
                for table in ("ledgers", "charges", "releases", "pending_releases"):
                    if table in tables:
                        conn.execute(
                            f"UPDATE {table} SET dataset = ? WHERE dataset = ?", (self.dataset, old)
                        )
                return True
        return False

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
            f"epsilon={_show(remaining[0])}, delta={_show(remaining[1])}"
        )

    def _fits(self, eps, dlt, spent):
        with decimal.localcontext(_CTX):
            return spent[0] + eps <= self._total[0] and spent[1] + dlt <= self._total[1]

    def cost(self, epsilon, delta=0.0, relation=None, row_cap=None, cell_bound=1.0):
        """(epsilon, delta) that a release under ``relation`` costs in this ledger's unit, as
        exact Decimals (``relation=None``: already in the unit). Raises ValueError (a
        :class:`~privclust.core.privacy.accounting.relations.RelationError`) when it cannot be counted."""
        eps, dlt = _check_amounts(epsilon, delta, "charge")
        if relation is None:
            return eps, dlt
        return convert(eps, dlt, relation, self.unit, row_cap=row_cap, cell_bound=cell_bound)

    def charge(
        self, epsilon, delta=0.0, what="", relation=None, row_cap=None, cell_bound=1.0, pending=()
    ):
        """Spend the cost of an (epsilon, delta) release for ``what`` BEFORE releasing it;
        returns the ChargeRecord.

        ``pending``: the requests this charge pays for, as (key, estimator name, parameters as
        JSON text), written in the charge's own transaction (one record per key, ever): until
        the release store marks one done, it is a paid release still to be made. A key already
        recorded raises :class:`DuplicateRequest` and spends nothing.

        ``relation`` ("replace", "add_remove", "cell" or None = the ledger's unit) is the
        release's neighbouring relation; its cost is converted to the ledger's unit first
        (:meth:`cost`). Raises BudgetExceeded (spending nothing) if the total would be exceeded;
        ValueError or TypeError for invalid amounts (epsilon > 0 finite, 0 <= delta < 1) or a
        relation that cannot be counted in the unit.
        """
        requested = _check_amounts(epsilon, delta, "charge")
        eps, dlt = self.cost(epsilon, delta, relation, row_cap=row_cap, cell_bound=cell_bound)
        if not dlt < _ONE:
            raise ValueError(
                f"charge of delta={delta!r} under {relation!r} costs delta >= 1 "
                f"in unit {self.unit!r}"
            )
        relation = self.unit if relation is None else relation
        req = (float(requested[0]), float(requested[1]))
        what = str(what)
        now = datetime.now(UTC)
        pending = [(str(k), str(e), str(p)) for k, e, p in pending]
        with self._lock:
            if self.path is None:
                for key, _, _ in pending:
                    if key in self._pending:
                        raise DuplicateRequest(key, self._pending[key]["done"])
                if not self._fits(eps, dlt, self._spent):
                    self._refuse(eps, dlt, self._spent, what)
                with decimal.localcontext(_CTX):
                    self._spent = (self._spent[0] + eps, self._spent[1] + dlt)
                record = ChargeRecord(
                    now, what, float(eps), float(dlt), relation, req, len(self._records) + 1
                )
                self._records.append(record)
                for key, name, params in pending:
                    self._pending[key] = {
                        "charge_id": record.id,
                        "key": key,
                        "estimator": name,
                        "params": params,
                        "at": now,
                        "done": False,
                        "runner": _runner(),
                    }
                return record
            with self._transaction() as conn:
                for key, _, _ in pending:
                    row = conn.execute(
                        "SELECT done FROM pending_releases WHERE dataset = ? AND key = ?",
                        (self.dataset, key),
                    ).fetchone()
                    if row is not None:
                        raise DuplicateRequest(key, row[0])
                row = conn.execute(
                    "SELECT spent_epsilon, spent_delta FROM ledgers WHERE dataset = ?",
                    (self.dataset,),
                ).fetchone()
                if row is None:
                    raise RuntimeError(
                        f"ledger row for dataset {self.dataset!r} vanished from {self.path!r}"
                    )
                spent = (Decimal(row[0]), Decimal(row[1]))
                if not self._fits(eps, dlt, spent):
                    self._refuse(eps, dlt, spent, what)
                with decimal.localcontext(_CTX):
                    new = (spent[0] + eps, spent[1] + dlt)
                cur = conn.execute(
                    "INSERT INTO charges (dataset, at, what, epsilon, delta, relation, "
                    "requested_epsilon, requested_delta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        self.dataset,
                        now.isoformat(),
                        what,
                        str(eps),
                        str(dlt),
                        relation,
                        str(requested[0]),
                        str(requested[1]),
                    ),
                )
                charge_id = cur.lastrowid
                conn.execute(
                    "UPDATE ledgers SET spent_epsilon = ?, spent_delta = ? WHERE dataset = ?",
                    (str(new[0]), str(new[1]), self.dataset),
                )
                conn.executemany(
                    "INSERT INTO pending_releases (dataset, charge_id, key, estimator, params, at, "
                    "runner) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (self.dataset, charge_id, key, name, params, now.isoformat(), _runner())
                        for key, name, params in pending
                    ],
                )
            return ChargeRecord(now, what, float(eps), float(dlt), relation, req, charge_id)

    def can_charge(self, epsilon, delta=0.0, relation=None, row_cap=None, cell_bound=1.0):
        """Whether a charge would currently fit (it may not by the time you charge); False
        when its relation cannot be counted in this ledger's unit."""
        try:
            eps, dlt = self.cost(epsilon, delta, relation, row_cap=row_cap, cell_bound=cell_bound)
        except ValueError:
            if relation is None:
                raise
            return False
        return self._fits(eps, dlt, self.spent_exact)

    # -- paid requests -----------------------------------------------------------------------
    def pending(self, key=None):
        """Requests paid for and not yet stored (all, or the one with ``key``), oldest first:
        dicts with charge_id, key, estimator, params (JSON text), at, and ``running``: whether
        the process that charged it is still alive on this machine (its run may still end)."""
        if self.path is None:
            with self._lock:
                rows = [dict(r) for r in self._pending.values() if not r["done"]]
            rows = [r for r in rows if key is None or r["key"] == key]
        else:
            sql = (
                "SELECT charge_id, key, estimator, params, at, runner FROM pending_releases "
                "WHERE dataset = ? AND done = 0"
                + ("" if key is None else " AND key = ?")
                + " ORDER BY id"
            )
            conn = self._connect()
            try:
                rows = conn.execute(sql, (self.dataset,) if key is None else (self.dataset, key))
                names = ("charge_id", "key", "estimator", "params", "at", "runner")
                rows = [dict(zip(names, r, strict=True)) for r in rows]
            finally:
                conn.close()
        for row in rows:
            row["running"] = _alive(row.pop("runner", None))
            row.pop("done", None)
        return rows

    @contextlib.contextmanager
    def settling(self, key):
        """Mark the request ``key`` done inside one transaction (or lock, in memory); yields
        the connection (None in memory) and whether it was still pending, so the caller stores
        its release in the same transaction -- or, when another process stored it first,
        stores nothing (at most one output per paid request)."""
        if self.path is None:
            with self._lock:
                row = self._pending.get(key)
                was_pending = row is not None and not row["done"]
                yield None, was_pending
                if row is not None:
                    row["done"] = True
            return
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT done FROM pending_releases WHERE dataset = ? AND key = ?",
                (self.dataset, key),
            ).fetchone()
            was_pending = row is not None and not row[0]
            yield conn, was_pending
            conn.execute(
                "UPDATE pending_releases SET done = 1 WHERE dataset = ? AND key = ?",
                (self.dataset, key),
            )

    def abandon(self, key):
        """Mark the pending request ``key`` failed: its charge stays spent, nothing is stored
        for it, and its key is free for a new (newly charged) request. A request that failed
        after its charge is not re-run for free: a free retry of a failure would let an analyst
        repeat a data-dependent outcome at no cost."""
        if self.path is None:
            with self._lock:
                row = self._pending.pop(key, None)
                if row is not None:
                    failed = f"{key}/failed/{row['charge_id']}"
                    self._pending[failed] = dict(row, key=failed, done=True, failed=True)
            return
        with self._transaction() as conn:
            conn.execute(
                "UPDATE pending_releases SET key = key || '/failed/' || charge_id, "
                "done = 1 WHERE dataset = ? AND key = ? AND done = 0",
                (self.dataset, key),
            )

    def failed_charges(self):
        """Ids of the charges whose request failed after the charge (nothing was released)."""
        if self.path is None:
            with self._lock:
                return sorted({r["charge_id"] for r in self._pending.values() if r.get("failed")})
        conn = self._connect()
        try:
            rows = conn.execute(
                "SELECT DISTINCT charge_id FROM pending_releases WHERE dataset "
                "= ? AND key LIKE '%/failed/%' ORDER BY charge_id",
                (self.dataset,),
            ).fetchall()
            return [r[0] for r in rows]
        finally:
            conn.close()

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
        rows = self._read(
            "SELECT at, what, epsilon, delta, relation, requested_epsilon, "
            "requested_delta, id FROM charges WHERE dataset = ? ORDER BY id"
        )
        return [
            ChargeRecord(
                datetime.fromisoformat(at),
                what,
                float(Decimal(e)),
                float(Decimal(d)),
                rel or self.unit,
                None if re_ is None else (float(Decimal(re_)), float(Decimal(rd))),
                cid,
            )
            for at, what, e, d, rel, re_, rd, cid in rows
        ]

    def summary(self):
        """One plain-text line: budget, spent, number of charges, remaining."""
        spent, remaining, n = self.spent_exact, self.remaining_exact, len(self.history)
        return (
            f"budget epsilon={_show(self._total[0])}, delta={_show(self._total[1])} "
            f"({self.unit} unit); "
            f"spent epsilon={_show(spent[0])}, delta={_show(spent[1])} in {n} "
            f"charge{'' if n == 1 else 's'}; remaining epsilon={_show(remaining[0])}, "
            f"delta={_show(remaining[1])}"
        )

    def __repr__(self):
        where = "in memory" if self.path is None else f"path={self.path!r}"
        return f"Ledger({self.summary()}; {where})"


def _runner():
    """Who charges a request: this machine and process (a pending request whose runner is alive
    may still be stored by it; one whose runner died is completed by the next request or a
    restart)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(runner):
    """Whether ``runner`` ("host:pid") is a live process on this machine."""
    if not runner:
        return False
    host, _, pid = runner.rpartition(":")
    if host != socket.gethostname():
        return False
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _migrate(conn):
    """Add the columns of the unit/relation schema to a ledger file written before them."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(ledgers)")}
    if "unit" not in have:
        conn.execute("ALTER TABLE ledgers ADD COLUMN unit TEXT NOT NULL DEFAULT 'replace'")
    have = {row[1] for row in conn.execute("PRAGMA table_info(pending_releases)")}
    if have and "runner" not in have:
        conn.execute("ALTER TABLE pending_releases ADD COLUMN runner TEXT")
    have = {row[1] for row in conn.execute("PRAGMA table_info(charges)")}
    for column in ("relation", "requested_epsilon", "requested_delta"):
        if column not in have:
            conn.execute(f"ALTER TABLE charges ADD COLUMN {column} TEXT")
