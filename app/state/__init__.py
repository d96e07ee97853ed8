"""The session's state as ``param.Parameterized`` models (no widgets): the dataset, the
settings, the ledger view and the run controller :class:`Lab`, a thin client of the core
:class:`~privclust.core.Curator`."""

from .data import PRESETS, DataModel
from .lab import Lab
from .ledger import LedgerModel, relation_note
from .results import Request, RunResult, random_state_for
from .settings import SettingsModel

__all__ = [
    "PRESETS",
    "DataModel",
    "Lab",
    "LedgerModel",
    "Request",
    "RunResult",
    "SettingsModel",
    "random_state_for",
    "relation_note",
]
