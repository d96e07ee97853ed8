"""k balls by repeating 1-cluster on the points not yet covered ([NSV16] Obs. 3.5 = seed 003
Sec. 3, Observation 3.5; spec 4.7).

Round j runs 1-cluster with (epsilon/k, delta/k) (basic composition) on the remaining points and
then removes the points inside the released ball; removal uses released values only. Under
``replace`` the remaining sets of two neighbours differ in at most one record (replaced, added
or removed), which every step of 1-cluster tolerates; constants that depend on n use the public
n of the input, never the size of the remaining set.
"""
import math

import numpy as np
from sklearn.base import BaseEstimator

from ..privacy import BudgetAccountant, as_generator, charge
from .noisy_avg import ball_members
from .one_cluster import (check_bounds, check_common, check_options, check_X, default_grid_step,
                          one_cluster, prepare)


class PrivateKBalls(BaseEstimator):
    """k private balls, each around ~``n_points`` points (default ceil(n / (2k))).

    (epsilon, delta)-DP under ``replace``. Parameters as :class:`OneCluster`; ``bounds`` is the
    public box, ``grid_step`` the public grid (default: largest side / 2^16).
    Fitted: ``centers_`` (k, d), ``radii_`` (k,), ``success_`` and ``reliable_`` (k,) booleans,
    ``failures_`` (k reasons or None), ``privacy_``.
    """

    def __init__(self, n_clusters, epsilon=1.0, delta=1e-6, bounds=None, grid_step=None, *,
                 n_points=None, beta=0.05, radius_variant="em_geometric", refine_steps=2,
                 axis_choice="em", box_side="practical", random_state=None, ledger=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.grid_step = grid_step
        self.n_points = n_points
        self.beta = beta
        self.radius_variant = radius_variant
        self.refine_steps = refine_steps
        self.axis_choice = axis_choice
        self.box_side = box_side
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X, y=None):
        """Release k balls; charges ``ledger`` (epsilon, delta) first. Returns self."""
        X = check_X(X)
        n, d = X.shape
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
            raise ValueError(f"n_clusters must be an integer in [1, n_samples={n}], got {k!r}")
        t = math.ceil(n / (2 * k)) if self.n_points is None else self.n_points
        check_common(self.epsilon, self.delta, n, t)
        check_options(self.refine_steps, self.radius_variant, self.axis_choice, self.box_side)
        lo, hi = check_bounds(self.bounds, d)
        step = default_grid_step(lo, hi) if self.grid_step is None else float(self.grid_step)
        if not step > 0:
            raise ValueError(f"grid_step must be > 0, got {self.grid_step!r}")
        rng = as_generator(self.random_state)
        charge(self.ledger, self.epsilon, self.delta,
               what=f"PrivateKBalls(n_clusters={k}, epsilon={self.epsilon}, delta={self.delta})")
        accountant = BudgetAccountant(self.epsilon, self.delta)
        remaining = prepare(X, lo, hi, step)
        results = []
        for j in range(k):
            res = one_cluster(remaining, t, self.epsilon / k, self.delta / k, lo, hi, step, rng,
                              accountant, beta=self.beta, radius_variant=self.radius_variant,
                              refine_steps=self.refine_steps, axis_choice=self.axis_choice,
                              box_side=self.box_side, n_public=n, label=f"ball {j + 1}: ")
            results.append(res)
            remaining = remaining[~ball_members(remaining, res.center, res.radius)]
        self.centers_ = np.stack([r.center for r in results])
        self.radii_ = np.array([r.radius for r in results])
        self.success_ = np.array([r.success for r in results])
        self.reliable_ = np.array([r.reliable for r in results])
        self.failures_ = [r.failure for r in results]
        self.n_features_in_ = d
        notes = [f"ball {j + 1}: {r.failure}" for j, r in enumerate(results) if r.failure]
        self.privacy_ = accountant.guarantee("approx", "replace", warnings=notes)
        return self
