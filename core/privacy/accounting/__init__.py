"""Accounting: what a release costs and what has been spent.

:class:`Guarantee` (a plan's or a fit's (epsilon, delta), kind and neighbouring relation), the
conversion between neighbouring relations (:mod:`~privclust.core.privacy.accounting.relations`),
composition, the per-fit :class:`BudgetAccountant`, the persistent budget :class:`Ledger`, and
the accounting of a whole plan (:mod:`~privclust.core.privacy.accounting.plan_accounting`:
basic, PLD and RDP totals).
"""

from .accountant import BudgetAccountant
from .composition import advanced_composition, basic_composition
from .guarantee import KINDS, NEIGHBOURINGS, Guarantee, Spend
from .ledger import ChargeRecord, Ledger
from .relations import RelationError, convert

__all__ = [
    "basic_composition",
    "advanced_composition",
    "Spend",
    "Guarantee",
    "KINDS",
    "NEIGHBOURINGS",
    "BudgetAccountant",
    "Ledger",
    "ChargeRecord",
    "RelationError",
    "convert",
]
