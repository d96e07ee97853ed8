"""privclust.core.release: the one door to non-public data (mediated access).

:class:`Curator` holds a private dataset and its budget ledger; ``curator.release(estimator)``
plans, refuses what is not private, replaces the randomness by fresh OS entropy, charges the
ledger in its unit, fits, and returns a frozen :class:`Release` that is stored beside the ledger
entry that paid for it. Every release, in or out of the door, runs through one pipeline,
:class:`~privclust.core.release.prepared.PreparedRelease`. The design follows the "mediated
access" of OpenDP's queryables and the session of Tumult Analytics: the data enter once, and
only measured answers leave.

Names are imported lazily: the estimator base imports the pipeline, and the Curator imports the
estimator base.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Curator": "curator",
    "NotPrivateResult": "curator",
    "PrivacyRefused": "vouch",
    "NotPrivate": "vouch",
    "ReleaseFailed": "prepared",
    "PreparedRelease": "prepared",
    "LiveRelease": "live",
    "Release": "record",
    "ReleaseStore": "store",
    "request_key": "store",
    "encode": "codec",
    "decode": "codec",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return __all__
