"""Converting a guarantee between neighbouring relations, so one ledger has one unit.

A ledger counts every charge in one unit: "replace" (replace-one record, the default) or
"add_remove" (add or remove one record). A release computed under another relation is charged
its cost in the ledger's unit, by group privacy (Dwork & Roth, *The Algorithmic Foundations of
Differential Privacy*, 2014, Thm 2.2 and its (epsilon, delta) form):

* add/remove (eps, delta) under "replace": replacing a record is one removal and one addition,
  so the cost is (2 eps, (1 + e^eps) delta).
* "replace" under "add_remove": refused. A replace-one guarantee treats the number of records
  as public and says nothing about whether a record is present.
* "cell" (a change of at most c units in one cell of a count matrix, Battaglia & Pensa, SDM
  2025, Sec. 4.1) under "replace": only with a public per-record cap L on row sums (rows clipped
  to integer counts summing to at most L before the release). Two such rows differ by integer
  amounts a_j >= 1 in cells j with sum a_j <= 2L; a path of single-cell changes of at most c
  units needs sum_j ceil(a_j / c) <= 2 floor(L) ceil(1 / c) steps (the worst case is 2L cells
  changed by one unit each), so the cost is 2 floor(L) ceil(1 / c) eps (pure releases only).
  Without a cap, or under "add_remove" (adding a row changes the matrix's shape, which the cell
  relation keeps fixed), the release is refused.

Amounts are exact decimals; the one irrational factor, e^eps, is rounded up.
"""

import decimal
import math
from decimal import Decimal

UNITS = ("replace", "add_remove")
RELATIONS = ("replace", "add_remove", "cell")

_UP = decimal.Context(prec=40, rounding=decimal.ROUND_CEILING)


class RelationError(ValueError):
    """A release whose neighbouring relation cannot be counted in the ledger's unit."""


def _dec(value: float | Decimal) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    return Decimal(repr(float(value)))


def check_unit(unit: str) -> str:
    """Return ``unit`` if it is a ledger unit ("replace" or "add_remove"); ValueError otherwise."""
    if unit not in UNITS:
        raise ValueError(f"a ledger's unit must be one of {UNITS}, got {unit!r}")
    return unit


def convert(
    epsilon: float | Decimal,
    delta: float | Decimal,
    relation: str,
    unit: str = "replace",
    row_cap: float | None = None,
    cell_bound: float = 1.0,
) -> tuple[Decimal, Decimal]:
    """Cost of an (epsilon, delta) release under ``relation`` in the ledger ``unit``.

    Returns ``(epsilon, delta)`` as exact Decimals (delta rounded up where e^eps enters).
    Raises :class:`RelationError` (a ValueError) when the release cannot be counted in ``unit``.
    ``row_cap`` (L) and ``cell_bound`` (c) are needed for "cell" releases only.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 2.2 (group privacy).
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1 (the cell relation).
    """
    check_unit(unit)
    if relation not in RELATIONS:
        raise RelationError(
            f"unknown neighbouring relation {relation!r}; expected one of {RELATIONS}"
        )
    eps, dlt = _dec(epsilon), _dec(delta)
    if relation == unit:
        return eps, dlt
    if unit == "add_remove":
        raise RelationError(
            f"a {relation!r} release cannot be charged to an add/remove ledger: "
            + (
                "a replace-one guarantee treats the number of records as public"
                if relation == "replace"
                else "the cell relation keeps the matrix's shape fixed, so adding a row is not covered"
            )
        )
    if relation == "add_remove":
        # Decimal.exp rounds half-even whatever the context says; one step up bounds e^eps
        growth = _UP.next_plus(_UP.exp(eps))
        return _UP.multiply(eps, 2), _UP.multiply(_UP.add(1, growth), dlt)
    # cell -> replace
    if row_cap is None:
        raise RelationError(
            "a cell-level release protects one unit of one cell, not a record: on a record-level "
            "ledger it needs a public per-record cap row_cap=L (each row clipped to a sum of at "
            "most L), and is then charged 2 floor(L) ceil(1 / cell_bound) times its epsilon"
        )
    if dlt != 0:
        raise RelationError(
            "cell-level releases are converted by group privacy for pure "
            "epsilon-DP only; this one has delta > 0"
        )
    return _UP.multiply(eps, cell_steps(row_cap, cell_bound)), Decimal(0)


def cell_steps(row_cap: float, cell_bound: float = 1.0) -> int:
    """Single-cell changes of at most ``cell_bound`` units that join two integer rows with sums
    at most ``row_cap``: 2 floor(L) ceil(1 / c) (group privacy factor of a cell-level release).

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 2.2 (group privacy).
    """
    L, c = float(row_cap), float(cell_bound)
    if not (math.isfinite(L) and L >= 1 and math.isfinite(c) and c > 0):
        raise RelationError(
            f"row_cap must be a number >= 1 and cell_bound > 0, got row_cap="
            f"{row_cap!r}, cell_bound={cell_bound!r}"
        )
    return 2 * math.floor(L) * math.ceil(1.0 / c)


def describe(
    relation: str, unit: str, row_cap: float | None = None, cell_bound: float = 1.0
) -> str:
    """One line saying how a release under ``relation`` is counted in ``unit``."""
    if relation == unit:
        return f"{relation}: counted as is"
    if relation == "add_remove":
        return "add/remove counted as replace-one: (2 eps, (1 + e^eps) delta)"
    if relation == "cell" and row_cap is not None:
        return f"cell-level with row cap L={row_cap:g}: {cell_steps(row_cap, cell_bound)} x eps"
    return f"{relation} cannot be counted in {unit}"
