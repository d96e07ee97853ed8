"""Where releases live: beside the ledger entry that paid for them (SQLite, stdlib sqlite3).

A release is public once made, so it is kept: later sessions list and re-open past releases,
and an identical request on the same source is answered from the store without a charge. The
store shares the ledger's file (table ``releases``) and is keyed like it, by the budget key of
the source records; an in-memory ledger gets an in-memory store.

A request key names the exact data, so it is keyed by a secret of the store (HMAC-SHA256,
Bellare, Canetti & Krawczyk, CRYPTO 1996; RFC 2104) kept in the operator's ledger file (table
``release_secret``) or, for an in-memory store, in memory. The key travels with every release
(its ``to_dict()`` is the dashboard's download); without the secret it would be a plain hash of
the records, which an analyst who knows all records but one recomputes for each candidate.
"""
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading

from .codec import encode
from .record import Release

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS releases (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL, key TEXT NOT NULL, charge_id INTEGER, at TEXT NOT NULL, "
    "estimator TEXT NOT NULL, payload TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS releases_by_key ON releases (dataset, key)",
    "CREATE TABLE IF NOT EXISTS release_secret (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "secret TEXT NOT NULL)",
)


def request_key(estimator_name, params, data_fingerprint, unit, secret=None):
    """What makes two requests identical: the estimator class, its public parameters
    (canonical JSON), the exact data (fingerprint) and the ledger's unit.

    With ``secret`` (bytes): HMAC-SHA256 under it, which is what a store uses (see the module
    docstring). Without: plain SHA-256, a function of the records and the public parameters
    alone -- never publish that one for non-public data.
    """
    text = json.dumps({"estimator": estimator_name, "params": encode(params),
                       "data": data_fingerprint, "unit": unit}, sort_keys=True,
                      separators=(",", ":")).encode()
    if secret is None:
        return hashlib.sha256(text).hexdigest()
    return hmac.new(secret, text, hashlib.sha256).hexdigest()


class ReleaseStore:
    """The releases of one source (``dataset`` = its budget key), in ``ledger``'s file or in
    memory. A release paid for by a pending request (see
    :meth:`~privclust.core.privacy.Ledger.charge`) is stored in the transaction that marks its
    request done, once: a second output for the same paid request is never stored."""

    def __init__(self, dataset, ledger):
        self.dataset = dataset
        self.ledger = ledger
        path = self.path = ledger.path
        self._lock = threading.Lock()
        self._memory = []
        if path is None:
            self._secret = secrets.token_bytes(32)
        else:
            conn = self._connect()
            try:
                for stmt in _SCHEMA:
                    conn.execute(stmt)
                # one secret per file, made once (the first writer wins a race)
                conn.execute("INSERT OR IGNORE INTO release_secret (id, secret) VALUES (1, ?)",
                             (secrets.token_hex(32),))
                self._secret = bytes.fromhex(conn.execute(
                    "SELECT secret FROM release_secret WHERE id = 1").fetchone()[0])
            finally:
                conn.close()

    def request_key(self, estimator_name, params, data_fingerprint, unit):
        """:func:`request_key` under this store's secret."""
        return request_key(estimator_name, params, data_fingerprint, unit, secret=self._secret)

    def _connect(self):
        return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)

    def add(self, release, pending=False):
        """Store ``release``; returns it with its store id. With ``pending`` (its request was
        recorded by the charge), the request is marked done in the same transaction; when it
        was done already (another process stored its output first), nothing is stored and the
        stored release is returned instead."""
        payload = json.dumps(release.to_dict(), separators=(",", ":"), allow_nan=False)
        if not pending:
            with self._lock:
                new_id = self._insert(None, release, payload)
            return Release.from_dict(json.loads(payload), id=new_id)
        with self.ledger.settling(release.key) as (conn, was_pending):
            if was_pending:
                with self._lock:
                    new_id = self._insert(conn, release, payload)
        if not was_pending:
            stored = self.find(release.key)
            if stored is None:
                raise RuntimeError("a request marked done has no stored release")
            return stored
        return Release.from_dict(json.loads(payload), id=new_id)

    def _insert(self, conn, release, payload):
        if self.path is None:
            self._memory.append(payload)
            return len(self._memory)
        own = conn is None
        conn = self._connect() if own else conn
        try:
            return conn.execute(
                "INSERT INTO releases (dataset, key, charge_id, at, estimator, payload) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (self.dataset, release.key, release.charge_id, release.time.isoformat(),
                 release.estimator, payload)).lastrowid
        finally:
            if own:
                conn.close()

    def _rows(self, key=None):
        if self.path is None:
            rows = [(i + 1, p) for i, p in enumerate(self._memory)]
            if key is not None:
                rows = [(i, p) for i, p in rows if json.loads(p)["key"] == key]
            return rows
        conn = self._connect()
        try:
            if key is None:
                return conn.execute("SELECT id, payload FROM releases WHERE dataset = ? "
                                    "ORDER BY id", (self.dataset,)).fetchall()
            return conn.execute("SELECT id, payload FROM releases WHERE dataset = ? AND key = ? "
                                "ORDER BY id", (self.dataset, key)).fetchall()
        finally:
            conn.close()

    def find(self, key):
        """The first stored release with this request key, or None."""
        rows = self._rows(key)
        return None if not rows else Release.from_dict(json.loads(rows[0][1]), id=rows[0][0],
                                                       from_store=True)

    def list(self):
        """Every stored release of this source, oldest first."""
        return [Release.from_dict(json.loads(p), id=i, from_store=True) for i, p in self._rows()]

    def get(self, release_id):
        """The stored release with this id (KeyError if none)."""
        for release in self.list():
            if release.id == release_id:
                return release
        raise KeyError(f"no release {release_id!r} for this dataset")
