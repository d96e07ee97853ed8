"""Every ``PRIVCLUST_*`` setting of the dashboard server, in one place.

The settings are the operator's: they are read from the server's environment (``privclust
serve`` sets them from its options, see ``privclust serve --help``), never from the page, because
the analyst at the browser is not trusted with the budget or with the data owner view. The app
reads them only through this module; each :class:`Setting` has its variable, type, default and
documentation, and a bad value raises :class:`SettingError` naming the variable.

``PRIVCLUST_DATA_DIR``, ``PRIVCLUST_DATASETS`` and ``PRIVCLUST_DASK_SCHEDULER`` are read by
``privclust.core.data`` itself (the core never imports the app); they are listed here so that the
documentation and the command line are complete.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SettingError(ValueError):
    """An invalid setting; the message names the environment variable (or the option)."""


def _number(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ValueError("must be a number") from None


def _positive_float(raw: str) -> float:
    value = _number(raw)
    if not (math.isfinite(value) and value > 0):
        raise ValueError("must be a finite number > 0")
    return value


def _delta(raw: str) -> float:
    value = _number(raw)
    if not (math.isfinite(value) and 0 <= value < 1):
        raise ValueError("must be a number in [0, 1)")
    return value


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _flag(raw: str) -> bool:
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError("must be one of 1/0, true/false, yes/no, on/off")


def _positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("must be a whole number") from None
    if value < 1:
        raise ValueError("must be >= 1")
    return value


def _path(raw: str) -> Path:
    return Path(raw).expanduser()


def _folder(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise ValueError("is not a folder")
    return path


@dataclass(frozen=True)
class Setting:
    """One environment setting: ``PRIVCLUST_<...>`` and the ``privclust serve`` option for it.

    ``default`` is written as the variable would hold it (None: unset means "none").
    """

    env: str
    option: str
    default: str | None
    parse: Callable[[str], Any]
    doc: str
    metavar: str = ""

    def parse_text(self, raw: str, from_option: bool = False) -> Any:
        """Parse ``raw``; a bad value raises :class:`SettingError` naming the variable (and the
        option when the value came from it)."""
        try:
            return self.parse(raw.strip())
        except ValueError as exc:
            where = (
                f"{self.option} {raw!r} (sets {self.env})" if from_option else f"{self.env}={raw!r}"
            )
            raise SettingError(f"{where}: {exc}") from None

    def read(self, environ: Mapping[str, str] | None = None) -> Any:
        """The value in ``environ`` (default ``os.environ``); unset or blank means the default."""
        raw = (os.environ if environ is None else environ).get(self.env, "")
        if raw.strip():
            return self.parse_text(raw)
        return None if self.default is None else self.parse(self.default)


STATE_DIR = Setting(
    "PRIVCLUST_STATE_DIR",
    "--state-dir",
    "~/.privclust",
    _path,
    metavar="DIR",
    doc="folder of the budget ledger and the release store: the SQLite file ledger.sqlite "
    "keeps every charge and every release it paid for across sessions and restarts",
)
BUDGET_EPSILON = Setting(
    "PRIVCLUST_BUDGET_EPSILON",
    "--budget-epsilon",
    "3.0",
    _positive_float,
    metavar="EPS",
    doc="total epsilon each private dataset may spend over all sessions and restarts",
)
BUDGET_DELTA = Setting(
    "PRIVCLUST_BUDGET_DELTA",
    "--budget-delta",
    "1e-4",
    _delta,
    metavar="DELTA",
    doc="total delta each private dataset may spend",
)
OWNER_VIEW = Setting(
    "PRIVCLUST_OWNER_VIEW",
    "--owner-view",
    "0",
    _flag,
    metavar="",
    doc="offer the data owner view (displays computed on the raw records, marked NOT PRIVATE): "
    "only on a server the data owner runs for themselves, never where an analyst is at "
    "the browser",
)
MAX_UPLOAD_MB = Setting(
    "PRIVCLUST_MAX_UPLOAD_MB",
    "--max-upload-mb",
    "50",
    _positive_float,
    metavar="MB",
    doc="largest file a browser may upload, in MB; checked in the browser and again on the server",
)
DATA_DIR = Setting(
    "PRIVCLUST_DATA_DIR",
    "--data-dir",
    None,
    _folder,
    metavar="DIR",
    doc="folder of the real datasets (classic3, cstr, Extended Yale B), listed as private data; "
    "read by privclust.core.data",
)

MAX_SAMPLERS = Setting(
    "PRIVCLUST_MAX_SAMPLERS",
    "--max-samplers",
    "2",
    _positive_int,
    metavar="N",
    doc="Gibbs sampler runs allowed at once on this server (each is a process of its own: "
    "about one per core); later Starts wait in a queue and see their position",
)
PROCESSES = Setting(
    "PRIVCLUST_PROCESSES",
    "--processes",
    "1",
    _positive_int,
    metavar="N",
    doc="server processes (panel serve --num-procs): sessions are spread over them; the "
    "ledger and the release store are shared (SQLite), demo results are cached per "
    "process, and an uploaded file stays in the process of the session that uploaded it",
)


def _file(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_file():
        raise ValueError("is not a file")
    return path


DATASETS = Setting(
    "PRIVCLUST_DATASETS",
    "--datasets",
    None,
    _file,
    metavar="FILE",
    doc="registry file (JSON) of large private data sets kept in shards and read on Dask; "
    "privclust serve validates and registers them before the server starts (see also "
    "--dataset); read by privclust.core.data",
)
DASK_SCHEDULER = Setting(
    "PRIVCLUST_DASK_SCHEDULER",
    "--dask-scheduler",
    None,
    str,
    metavar="ADDRESS",
    doc="address of an existing Dask scheduler (tcp://host:8786) on which releases read the "
    "large data sets; unset: a local cluster of 2 workers in the server process; read by "
    "privclust.core.data",
)

SETTINGS = (
    STATE_DIR,
    BUDGET_EPSILON,
    BUDGET_DELTA,
    OWNER_VIEW,
    MAX_UPLOAD_MB,
    DATA_DIR,
    MAX_SAMPLERS,
    PROCESSES,
    DATASETS,
    DASK_SCHEDULER,
)


def state_dir() -> Path:
    """The folder of the ledger and the release store (created if missing)."""
    path = STATE_DIR.read()
    path.mkdir(parents=True, exist_ok=True)
    return path


def budget() -> tuple[float, float]:
    """Total (epsilon, delta) per dataset."""
    return BUDGET_EPSILON.read(), BUDGET_DELTA.read()


def owner_view() -> bool:
    """May this server offer the data owner view?"""
    return OWNER_VIEW.read()


def max_upload_bytes() -> int:
    """The upload cap in bytes."""
    return int(MAX_UPLOAD_MB.read() * 1024 * 1024)


def max_samplers() -> int:
    """How many Gibbs sampler runs may run at once on this server."""
    return MAX_SAMPLERS.read()


def processes(environ: Mapping[str, str] | None = None) -> int:
    """How many server processes ``privclust serve`` starts."""
    return PROCESSES.read(environ)


def check(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Read every setting (raising :class:`SettingError` on the first bad one); ``{env: value}``."""
    return {s.env: s.read(environ) for s in SETTINGS}
