"""What an epsilon means for one person, in words.

Differential privacy bounds how much any observer -- whatever they knew before -- can change
their odds that one given person's record was used, by looking at the released output: the
posterior odds are at most e^epsilon times the prior odds (Dwork & Roth, *The Algorithmic
Foundations of Differential Privacy*, 2014, Sec. 2.3; the hypothesis-testing reading of
Wasserman & Zhou, JASA 2010, and Kairouz, Oh & Viswanath, ICML 2015). With (epsilon, delta),
the bound holds except with probability about delta.

"Participation" means the person's record is in the data versus replaced by another
(replace-one unit) or absent (add/remove unit); see the ledger's unit.
"""

import math

from ._validation import check_delta, check_epsilon

__all__ = ["odds_factor", "max_posterior", "risk_table", "risk_sentence", "TABLE_EPSILONS"]

TABLE_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)


def _eps(epsilon):
    return check_epsilon(epsilon, allow_zero=True)


def odds_factor(epsilon):
    """e^epsilon: the most any observer's odds about one person's participation can be
    multiplied (or divided) by seeing the output.

    Parameters
    ----------
    epsilon : float
        Finite and >= 0.

    Returns
    -------
    float

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 2.3.
    """
    return math.exp(_eps(epsilon))


def max_posterior(prior, epsilon):
    """The largest posterior probability an observer can reach from ``prior``:
    p e^eps / (p e^eps + 1 - p).

    Parameters
    ----------
    prior : float
        The observer's prior probability that the person's record was used, in (0, 1).
    epsilon : float
        Finite and >= 0.

    Returns
    -------
    float

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 2.3.
    """
    p = float(prior)
    if not 0.0 < p < 1.0:
        raise ValueError(f"prior must be a probability in (0, 1), got {prior!r}")
    f = odds_factor(epsilon)
    return p * f / (p * f + 1.0 - p)


def min_posterior(prior, epsilon):
    """The smallest posterior probability reachable from ``prior``: p / (p + (1 - p) e^eps).

    Parameters
    ----------
    prior : float
        In (0, 1).
    epsilon : float
        Finite and >= 0.

    Returns
    -------
    float

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 2.3.
    """
    p = float(prior)
    if not 0.0 < p < 1.0:
        raise ValueError(f"prior must be a probability in (0, 1), got {prior!r}")
    return p / (p + (1.0 - p) * odds_factor(epsilon))


def risk_table(epsilons=TABLE_EPSILONS, priors=(0.01, 0.5)):
    """Rows of a small table of what each epsilon means.

    Parameters
    ----------
    epsilons : sequence of float
        The rows.
    priors : sequence of float
        Priors in (0, 1), one column each.

    Returns
    -------
    list of dict
        {epsilon, odds_factor, max_posterior_<prior> per prior}.

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 2.3.
    """
    rows = []
    for e in epsilons:
        row = {"epsilon": float(e), "odds_factor": odds_factor(e)}
        for p in priors:
            row[f"max_posterior_{p:g}"] = max_posterior(p, e)
        rows.append(row)
    return rows


def risk_sentence(epsilon, delta=0.0, prior=0.5):
    """One plain sentence about ``epsilon`` (and ``delta``) for a UI or a report.

    Parameters
    ----------
    epsilon : float
        Finite and >= 0.
    delta : float
        In [0, 1); when > 0 the sentence says the bound may fail with about that probability.
    prior : float
        The prior used in the example, in (0, 1).

    Returns
    -------
    str

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy, Sec. 2.3.
    Kairouz, P., Oh, S. & Viswanath, P. (2015). The composition theorem for differential
    privacy. ICML, Sec. 2 (the hypothesis-testing reading of (epsilon, delta)).
    """
    eps = _eps(epsilon)
    delta = check_delta(delta, "delta")
    f = odds_factor(eps)
    factor = f"{f:.3g}" if f < 1000 else f"{f:.3g} (no meaningful protection)"
    text = (
        f"At epsilon = {eps:g}, seeing the result can multiply anyone's odds that a given "
        f"person's record was used by at most {factor}: a {prior:.0%} prior becomes at most "
        f"{max_posterior(prior, eps):.1%}"
    )
    if delta > 0:
        text += f", except with probability about {delta:.2g}"
    return text + "."
