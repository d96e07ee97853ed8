"""privclust.core.release: the one door to non-public data (mediated access).

:class:`Curator` holds a private dataset and its budget ledger; ``curator.release(estimator)``
plans, refuses what is not private, replaces the randomness by fresh OS entropy, charges the
ledger in its unit, fits, and returns a frozen :class:`Release` that is stored beside the ledger
entry that paid for it. The design follows the "mediated access" of OpenDP's queryables and the
session of Tumult Analytics: the data enter once, and only measured answers leave.
"""
from .codec import decode, encode
from .curator import Curator, NotPrivateResult, PrivacyRefused, ReleaseFailed
from .record import Release
from .store import ReleaseStore, request_key

__all__ = ["Curator", "Release", "ReleaseStore", "NotPrivateResult", "PrivacyRefused", "ReleaseFailed",
           "request_key", "encode", "decode"]
