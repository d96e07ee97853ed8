"""Where releases live: beside the ledger entry that paid for them (SQLite, stdlib sqlite3).

A release is public once made, so it is kept: later sessions list and re-open past releases,
and an identical request on the same source is answered from the store without a charge. The
store shares the ledger's file (table ``releases``) and is keyed like it, by the budget key of
the source records; an in-memory ledger gets an in-memory store.
"""
import hashlib
import json
import sqlite3
import threading

from .codec import encode
from .record import Release

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS releases (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL, key TEXT NOT NULL, charge_id INTEGER, at TEXT NOT NULL, "
    "estimator TEXT NOT NULL, payload TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS releases_by_key ON releases (dataset, key)",
)


def request_key(estimator_name, params, data_fingerprint, unit):
    """SHA-256 of what makes two requests identical: the estimator class, its public
    parameters (canonical JSON), the exact data (fingerprint) and the ledger's unit."""
    text = json.dumps({"estimator": estimator_name, "params": encode(params),
                       "data": data_fingerprint, "unit": unit}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ReleaseStore:
    """The releases of one source (``dataset`` = its budget key), in ``path`` or in memory."""

    def __init__(self, dataset, path=None):
        self.dataset = dataset
        self.path = path
        self._lock = threading.Lock()
        self._memory = []
        if path is not None:
            conn = self._connect()
            try:
                for stmt in _SCHEMA:
                    conn.execute(stmt)
            finally:
                conn.close()

    def _connect(self):
        return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)

    def add(self, release):
        """Store ``release``; returns it with its store id."""
        payload = json.dumps(release.to_dict(), separators=(",", ":"), allow_nan=False)
        with self._lock:
            if self.path is None:
                self._memory.append(payload)
                new_id = len(self._memory)
            else:
                conn = self._connect()
                try:
                    cur = conn.execute(
                        "INSERT INTO releases (dataset, key, charge_id, at, estimator, payload) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (self.dataset, release.key, release.charge_id, release.time.isoformat(),
                         release.estimator, payload))
                    new_id = cur.lastrowid
                finally:
                    conn.close()
        return Release.from_dict(json.loads(payload), id=new_id)

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
