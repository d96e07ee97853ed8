"""1-cluster aggregation rule for sample-and-aggregate (Nissim, Stemmer & Vadhan, PODS 2016,
Sec. 6, Algorithm SA and Lemma 6.5).

The m block outputs y_1..y_m in R^D (one per disjoint block of a random partition of the data)
are clipped to the public output box and aggregated by 1-cluster with t = ceil(alpha m / 2):
the released centre, clipped to the same box (post-processing), is the aggregate. One record changes one block, hence one y_j, so the
(epsilon, delta) ``replace`` guarantee of 1-cluster on Y transfers to the records.

Honest limit: 1-cluster needs t well above its slack Gamma ~ (16/eps) ln(|F|/beta); with tens of
blocks the aggregate is noise-dominated or the run fails (the box centre is then returned).
"""

import math

import numpy as np

from ..privacy import BudgetAccountant
from .one_cluster import (
    check_bounds,
    check_common,
    check_options,
    check_X,
    one_cluster,
    plan_run,
    planned_guarantee,
    prepare,
    resolve_grid_step,
)


class OneClusterAggregator:
    """The 1-cluster algorithm as an aggregation rule for sample-and-aggregate: a callable
    ``agg(Y, epsilon, delta, bounds, rng) -> (center, guarantee)``.

    ``Y``: (m, D) block outputs; ``bounds``: public (lower, upper) box of the outputs; ``rng``: a
    numpy Generator. The released centre is that of a private ball holding t = ceil(alpha m / 2)
    of the m outputs, so a stable majority of blocks determines it.

    Parameters
    ----------
    alpha : float, default=1.0
        Assumed stability fraction: the share of blocks expected to agree.
    grid_step : float or None, default=None
        Public grid of the outputs; None means the default of :class:`OneCluster`.
    refine_steps, beta, radius_variant, axis_choice
        As in :class:`OneCluster`.

    Attributes
    ----------
    result_ : OneClusterResult
        After a call: the full 1-cluster result (radius, success, reliability).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 6 (sample and aggregate with a 1-cluster aggregator).
    """

    def __init__(
        self,
        alpha=1.0,
        grid_step=None,
        refine_steps=2,
        beta=0.05,
        radius_variant="em_geometric",
        axis_choice="em",
    ):
        self.alpha = alpha
        self.grid_step = grid_step
        self.refine_steps = refine_steps
        self.beta = beta
        self.radius_variant = radius_variant
        self.axis_choice = axis_choice

    def plan(self, m, D, epsilon, delta, bounds):
        """The guarantee a call on m block outputs in R^D will have, from public values only
        (checks alpha, t against m, epsilon, delta, the options, the box, the grid step and
        GoodCenter's composition): callers check it before they charge a ledger."""
        if not 0 < self.alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1], got {self.alpha!r}")
        t = max(1, math.ceil(self.alpha * m / 2))
        check_common(epsilon, delta, m, t)
        check_options(self.refine_steps, self.radius_variant, self.axis_choice, "practical")
        lo, hi = check_bounds(bounds, D)
        resolve_grid_step(self.grid_step, lo, hi)
        accountant = BudgetAccountant(epsilon, delta)
        plan_run(
            accountant,
            epsilon,
            delta,
            self.refine_steps,
            D,
            self.axis_choice,
            label="1-cluster aggregator: ",
        )
        return planned_guarantee(epsilon, delta, accountant)

    def __call__(self, Y, epsilon, delta, bounds, rng):
        Y = check_X(Y)
        m, D = Y.shape
        self.plan(m, D, epsilon, delta, bounds)  # every public check, in one place
        t = max(1, math.ceil(self.alpha * m / 2))
        lo, hi = check_bounds(bounds, D)
        step = resolve_grid_step(self.grid_step, lo, hi)
        accountant = BudgetAccountant(epsilon, delta)
        res = one_cluster(
            prepare(Y, lo, hi, step),
            t,
            epsilon,
            delta,
            lo,
            hi,
            step,
            rng,
            accountant,
            beta=self.beta,
            radius_variant=self.radius_variant,
            refine_steps=self.refine_steps,
            axis_choice=self.axis_choice,
            label="1-cluster aggregator: ",
        )
        self.result_ = res
        notes = [] if res.failure is None else [res.failure]
        if not res.reliable:
            notes.append(
                "1-cluster aggregate unreliable (failed, or the re-centring did not settle on a heavy ball)"
            )
        center = np.clip(res.center, lo, hi)
        return center, accountant.guarantee("approx", "replace", warnings=notes)


def one_cluster_aggregate(Y, epsilon, delta, bounds, rng, **options):
    """Functional form of :class:`OneClusterAggregator` (same return value).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 6.
    """
    return OneClusterAggregator(**options)(Y, epsilon, delta, bounds, rng)
