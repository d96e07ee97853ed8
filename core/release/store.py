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

A stored release is its JSON (:meth:`Release.to_dict`) with each array moved into a row of
``release_arrays`` as a ``.npy`` blob (``np.save(allow_pickle=False)``); releases stored before
that, with their arrays inline in the JSON, are read as they are.
"""

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from .codec import encode
from .record import Release

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS releases (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL, key TEXT NOT NULL, charge_id INTEGER, at TEXT NOT NULL, "
    "estimator TEXT NOT NULL, payload TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS releases_by_key ON releases (dataset, key)",
    "CREATE TABLE IF NOT EXISTS release_secret (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "secret TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS release_arrays (release_id INTEGER NOT NULL, "
    "position INTEGER NOT NULL, npy BLOB NOT NULL, PRIMARY KEY (release_id, position))",
)

# a stored release: its id, its JSON payload and the .npy blobs its payload refers to
_Row = tuple[int, str, list[bytes]]


def request_key(
    estimator_name: str,
    params: dict[str, Any],
    data_fingerprint: str,
    unit: str,
    secret: bytes | None = None,
) -> str:
    """What makes two requests identical: the estimator class, its public parameters
    (canonical JSON), the exact data (fingerprint) and the ledger's unit.

    With ``secret`` (bytes): HMAC-SHA256 under it, which is what a store uses (see the module
    docstring). Without: plain SHA-256, a function of the records and the public parameters
    alone -- never publish that one for non-public data.
    """
    text = json.dumps(
        {
            "estimator": estimator_name,
            "params": encode(params),
            "data": data_fingerprint,
            "unit": unit,
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode()
    if secret is None:
        return hashlib.sha256(text).hexdigest()
    return hmac.new(secret, text, hashlib.sha256).hexdigest()


class ReleaseStore:
    """The releases of one source (``dataset`` = its budget key), in ``ledger``'s file or in
    memory. A release paid for by a pending request (see
    :meth:`~privclust.core.privacy.Ledger.charge`) is stored in the transaction that marks its
    request done, once: a second output for the same paid request is never stored."""

    def __init__(self, dataset: str, ledger: Any) -> None:
        self.dataset = dataset
        self.ledger = ledger
        path = self.path = ledger.path
        self._lock = threading.Lock()
        self._memory: list[tuple[str, list[bytes]]] = []
        if path is None:
            self._secret = secrets.token_bytes(32)
        else:
            conn = self._connect()
            try:
                for stmt in _SCHEMA:
                    conn.execute(stmt)
                # one secret per file, made once (the first writer wins a race)
                conn.execute(
                    "INSERT OR IGNORE INTO release_secret (id, secret) VALUES (1, ?)",
                    (secrets.token_hex(32),),
                )
                self._secret = bytes.fromhex(
                    conn.execute("SELECT secret FROM release_secret WHERE id = 1").fetchone()[0]
                )
            finally:
                conn.close()

    def request_key(
        self, estimator_name: str, params: dict[str, Any], data_fingerprint: str, unit: str
    ) -> str:
        """:func:`request_key` under this store's secret."""
        return request_key(estimator_name, params, data_fingerprint, unit, secret=self._secret)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)

    @contextmanager
    def _connection(self, conn: sqlite3.Connection | None) -> Iterator[sqlite3.Connection]:
        """``conn``, or a new connection closed at the end of the block."""
        if conn is not None:
            yield conn
            return
        own = self._connect()
        try:
            yield own
        finally:
            own.close()

    def add(self, release: Release, pending: bool = False) -> Release:
        """Store ``release``; returns it with its store id. With ``pending`` (its request was
        recorded by the charge), the request is marked done in the same transaction; when it
        was done already (another process stored its output first), nothing is stored and the
        stored release is returned instead."""
        arrays: list[bytes] = []
        payload = json.dumps(release.to_dict(arrays), separators=(",", ":"), allow_nan=False)
        if not pending:
            with self._lock:
                new_id = self._insert(None, release, payload, arrays)
            return Release.from_dict(json.loads(payload), id=new_id, arrays=arrays)
        with self.ledger.settling(release.key) as (conn, was_pending):
            if was_pending:
                with self._lock:
                    new_id = self._insert(conn, release, payload, arrays)
        if not was_pending:
            stored = self.find(release.key)
            if stored is None:
                raise RuntimeError("a request marked done has no stored release")
            return stored
        return Release.from_dict(json.loads(payload), id=new_id, arrays=arrays)

    def _insert(
        self, conn: sqlite3.Connection | None, release: Release, payload: str, arrays: list[bytes]
    ) -> int:
        if self.path is None:
            self._memory.append((payload, arrays))
            return len(self._memory)
        with self._connection(conn) as c:
            new_id = cast(
                int,
                c.execute(  # an INSERT into a rowid table sets lastrowid
                    "INSERT INTO releases (dataset, key, charge_id, at, estimator, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        self.dataset,
                        release.key,
                        release.charge_id,
                        release.time.isoformat(),
                        release.estimator,
                        payload,
                    ),
                ).lastrowid,
            )
            c.executemany(
                "INSERT INTO release_arrays (release_id, position, npy) VALUES (?, ?, ?)",
                [(new_id, i, blob) for i, blob in enumerate(arrays)],
            )
        return new_id

    def _rows(self, key: str | None = None) -> list[_Row]:
        if self.path is None:
            rows = [(i + 1, p, a) for i, (p, a) in enumerate(self._memory)]
            return [r for r in rows if key is None or json.loads(r[1])["key"] == key]
        where = "r.dataset = ?" if key is None else "r.dataset = ? AND r.key = ?"
        args = (self.dataset,) if key is None else (self.dataset, key)
        with self._connection(None) as conn:
            found = conn.execute(
                f"SELECT r.id, r.payload FROM releases r WHERE {where} ORDER BY r.id", args
            ).fetchall()
            blobs: dict[int, list[bytes]] = {i: [] for i, _ in found}
            for release_id, blob in conn.execute(
                "SELECT a.release_id, a.npy FROM release_arrays a JOIN releases r ON "
                f"r.id = a.release_id WHERE {where} ORDER BY a.release_id, a.position",
                args,
            ):
                blobs[release_id].append(blob)
        return [(i, p, blobs[i]) for i, p in found]

    def find(self, key: str | None) -> Release | None:
        """The first stored release with this request key, or None (also for no key)."""
        rows = self._rows(key) if key is not None else []
        if not rows:
            return None
        i, payload, arrays = rows[0]
        return Release.from_dict(json.loads(payload), id=i, from_store=True, arrays=arrays)

    def list(self) -> list[Release]:
        """Every stored release of this source, oldest first."""
        return [
            Release.from_dict(json.loads(p), id=i, from_store=True, arrays=a)
            for i, p, a in self._rows()
        ]

    def get(self, release_id: int) -> Release:
        """The stored release with this id (KeyError if none)."""
        for release in self.list():
            if release.id == release_id:
                return release
        raise KeyError(f"no release {release_id!r} for this dataset")
