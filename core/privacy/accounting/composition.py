"""Composition theorems (basic: Dwork & Roth 2014, Thm 3.16; advanced: Dwork, Rothblum & Vadhan,
FOCS 2010)."""

import math
import numbers
from collections.abc import Iterable
from typing import Any

from .._validation import check_delta, check_epsilon


def basic_composition(spends: Iterable[Any]) -> tuple[float, float]:
    """Basic composition: the (epsilon_i, delta_i) add up.

    ``spends`` is an iterable of ``(epsilon, delta)`` pairs or objects with ``epsilon`` and
    ``delta`` attributes (e.g. :class:`Spend`). Returns ``(epsilon, delta)`` (float sums, fsum).

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 3.16.
    """
    eps, dels = [], []
    for item in spends:
        e, d = (item.epsilon, item.delta) if hasattr(item, "epsilon") else item
        eps.append(float(e))
        dels.append(float(d))
    return math.fsum(eps), math.fsum(dels)


def advanced_composition(
    epsilon0: float, delta0: float, k: int, delta_prime: float
) -> tuple[float, float]:
    """k-fold adaptive composition of (eps0, delta0)-DP steps (Dwork, Rothblum & Vadhan 2010).

    Returns ``(eps', k*delta0 + delta')`` with eps' = sqrt(2k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1).

    Kept although the PLD accountant is tighter: GoodCenter's per-axis budget is calibrated by
    this theorem in Nissim, Stemmer & Vadhan (PODS 2016, Sec. 4.3); a PLD split would give each
    axis a larger epsilon and so change the published algorithm.

    References
    ----------
    Dwork, C., Rothblum, G. N. and Vadhan, S. (2010). Boosting and differential privacy.
        FOCS 2010.
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Thm. 3.20.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    delta0 = check_delta(delta0, "delta0")
    delta_prime = check_delta(delta_prime, "delta_prime", positive=True)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = int(k)
    eps = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon0 + k * epsilon0 * math.expm1(
        epsilon0
    )
    return eps, k * delta0 + delta_prime
