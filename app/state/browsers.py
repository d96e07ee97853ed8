"""What one browser keeps across reloads, for the server's lifetime: its data choice and the
private files it uploaded, found again by an unguessable per-browser token.

Why a token, and not a list of the server's uploads: an uploaded file is private data, and that
someone uploaded one -- its name, its shape, that it exists at all -- is itself something only
its uploader should learn. A list shared by the server (or by a dataset's fingerprint) would
show every visitor the files of everyone else, and a name guessed in a URL would open them. So
each browser gets a random 256-bit token (``secrets.token_urlsafe``) in a session cookie that
only this site's own pages send (``SameSite=Strict``), the server keys what it keeps by the
token's SHA-256 (no token is stored; a dict lookup by hash tells nothing about a token's
prefix), and a browser without the token -- another person, another browser, a private window
-- sees an empty list. A token the server did not issue is replaced by a fresh one: a visitor
cannot choose a token to share another's record.

Memory is bounded: at most :data:`MAX_BROWSERS` browsers (the least recently seen is forgotten
first) and :data:`MAX_UPLOADS` files per browser (the oldest goes first). Nothing is written to
disk; a restart forgets everything (the releases stay in the ledger's store, listed again when
the same file is uploaded).
"""

import hashlib
import re
import secrets
import threading
from collections import OrderedDict

COOKIE = "privclust_browser"
MAX_BROWSERS = 512
MAX_UPLOADS = 8
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # token_urlsafe(32)

# the data choice a reload restores and a change of which reloads the data (public settings; an
# upload is named by its opaque id)
CHOICE = (
    "source",
    "preset",
    "registry_name",
    "n_samples",
    "n_features",
    "n_clusters",
    "subspace_dim",
    "noise",
    "seed",
)


class BrowserRecord:
    """One browser's data choice and uploads (found by its token, see :class:`Browsers`)."""

    def __init__(self, lock):
        self._lock = lock
        self.choice = {}
        self.upload_id = None
        self._uploads = OrderedDict()  # id -> (file name, Dataset)

    def add_upload(self, name, dataset):
        """Keep an uploaded dataset; returns its id (random: it names nothing)."""
        with self._lock:
            for uid, (_, ds) in self._uploads.items():
                if ds.fingerprint == dataset.fingerprint and ds.name == dataset.name:
                    return uid  # the same file again: listed once
            uid = secrets.token_hex(8)
            self._uploads[uid] = (str(name), dataset)
            while len(self._uploads) > MAX_UPLOADS:
                self._uploads.popitem(last=False)
            return uid

    def uploads(self):
        """[(id, file name)] of this browser's uploads, oldest first."""
        with self._lock:
            return [(uid, name) for uid, (name, _) in self._uploads.items()]

    def upload(self, uid):
        """The dataset of upload ``uid`` of this browser, or None."""
        with self._lock:
            entry = self._uploads.get(uid)
            return None if entry is None else entry[1]

    def remember(self, choice, upload_id):
        with self._lock:
            self.choice = {k: choice[k] for k in CHOICE if k in choice}
            self.upload_id = upload_id


class Browsers:
    """The records of the browsers that visited this server, by token (bounded, in memory)."""

    def __init__(self, max_browsers=MAX_BROWSERS):
        self._lock = threading.Lock()
        self._records = OrderedDict()  # sha256(token) -> BrowserRecord
        self._max = int(max_browsers)

    @staticmethod
    def _key(token):
        return hashlib.sha256(token.encode("ascii")).hexdigest()

    def session(self, token):
        """(token, record, known) for a session whose request carried ``token`` (None when
        there was no cookie). A token of the right form that this server issued finds its
        record; anything else gets a fresh token and an empty record (``known`` False: the
        page then sets the cookie)."""
        with self._lock:
            if isinstance(token, str) and _TOKEN.match(token):
                key = self._key(token)
                record = self._records.get(key)
                if record is not None:
                    self._records.move_to_end(key)
                    return token, record, True
            token = secrets.token_urlsafe(32)
            record = self._records[self._key(token)] = BrowserRecord(self._lock)
            while len(self._records) > self._max:
                self._records.popitem(last=False)
            return token, record, False


SHARED = Browsers()
