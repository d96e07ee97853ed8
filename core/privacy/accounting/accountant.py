"""Per-fit privacy bookkeeping (basic composition, Dwork & Roth 2014, Thm 3.16): record every mechanism run against the fit's plan."""

import math
from collections.abc import Iterable

from .._validation import check_delta, check_epsilon, check_sensitivity
from ..errors import BudgetExceeded
from .guarantee import Guarantee, Spend

_RTOL = 1e-9


class BudgetAccountant:
    """Record the mechanisms one fit runs and refuse to exceed the fit's (epsilon, delta).

    Estimators create one per fit with the (epsilon, delta) they were configured with (and
    charge that amount once to the user's :class:`Ledger`), call :meth:`spend` before each
    mechanism, and build ``privacy_`` with :meth:`guarantee`. Totals use basic composition;
    a relative tolerance of 1e-9 absorbs float round-off of budget splits.

    Parameters
    ----------
    epsilon : float
        The fit's epsilon, > 0.
    delta : float, default=0.0
        The fit's delta, 0 <= delta < 1.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 3.16 (basic composition).
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self._spends: list[Spend] = []

    def spend(
        self, name: str, epsilon: float, delta: float = 0.0, sensitivity: float | None = None
    ) -> Spend:
        """Record one mechanism run; raises BudgetExceeded (recording nothing) if over the plan.

        ``epsilon`` may be 0 (a recorded step that spends nothing, e.g. an unused remainder).
        """
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = check_delta(delta)
        if sensitivity is not None:
            sensitivity = check_sensitivity(sensitivity)
        eps_spent, delta_spent = self.spent
        new_eps = math.fsum([eps_spent, epsilon])
        new_delta = math.fsum([delta_spent, delta])
        if new_eps > self.epsilon * (1 + _RTOL) or new_delta > self.delta * (1 + _RTOL):
            raise BudgetExceeded(
                f"{name!r} needs (epsilon={epsilon!r}, delta={delta!r}) but the fit has spent "
                f"(epsilon={eps_spent!r}, delta={delta_spent!r}) of its plan "
                f"(epsilon={self.epsilon!r}, delta={self.delta!r})"
            )
        spend = Spend(str(name), epsilon, delta, sensitivity)
        self._spends.append(spend)
        return spend

    @property
    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) spent so far (basic composition, fsum)."""
        return (
            math.fsum(s.epsilon for s in self._spends),
            math.fsum(s.delta for s in self._spends),
        )

    @property
    def remaining(self) -> tuple[float, float]:
        """(epsilon, delta) still available in the plan (never negative)."""
        eps, delta = self.spent
        return max(0.0, self.epsilon - eps), max(0.0, self.delta - delta)

    @property
    def mechanisms(self) -> list[Spend]:
        """The recorded :class:`Spend` objects, in order."""
        return list(self._spends)

    def guarantee(
        self, kind: str, neighbouring: str | None, warnings: Iterable[str] = ()
    ) -> Guarantee:
        """A :class:`Guarantee` for what was actually spent (kind "none" reports epsilon = inf)."""
        eps, delta = self.spent
        if kind == "none":
            eps, delta = math.inf, 1.0
        elif kind in ("pure", "asymptotic") and delta > 0:
            raise ValueError(f"kind {kind!r} is impossible: mechanisms spent delta = {delta!r}")
        return Guarantee(
            eps, delta, kind, neighbouring, mechanisms=self.mechanisms, warnings=list(warnings)
        )
