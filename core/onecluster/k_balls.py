"""k balls by repeating 1-cluster on the points not yet covered (Nissim, Stemmer & Vadhan,
"Locating a small cluster privately", PODS 2016, Observation 3.5).

Round j runs 1-cluster with (epsilon/k, delta/k) (basic composition) on the remaining points and
then removes the points inside the released ball; removal uses released values only. Under
``replace`` the remaining sets of two neighbours differ in at most one record (replaced, added
or removed), which every step of 1-cluster tolerates; constants that depend on n use the public
n of the input, never the size of the remaining set.
"""

import math

import numpy as np

from ..constraints import (
    BOUNDS,
    NONNEGATIVE_INT,
    POSITIVE_DELTA,
    POSITIVE_INT,
    Interval,
    Real,
    StrOptions,
)
from ..estimator import PrivateEstimator
from ..privacy import BudgetAccountant
from .good_center import AXIS_CHOICES, BOX_SIDES
from .good_radius import VARIANTS
from .noisy_avg import ball_members
from .one_cluster import (
    check_bounds,
    check_common,
    check_options,
    check_run_options,
    check_X,
    one_cluster,
    plan_run,
    planned_guarantee,
    prepare,
    resolve_grid_step,
)


class PrivateKBalls(PrivateEstimator):
    """k private balls, each around ~``n_points`` points (default ceil(n / (2k))).

    Runs the 1-cluster algorithm k times on the records not yet covered, with epsilon and delta
    split evenly over the rounds (basic composition): the heuristic of Nissim, Stemmer & Vadhan
    (2016, Obs. 3.5). (epsilon, delta)-DP under ``replace`` (n public).

    Parameters
    ----------
    n_clusters : int
        Number of balls k, 1 <= k <= n.
    epsilon : float, default=1.0
        Total privacy parameter, split evenly over the k rounds.
    delta : float, default=1e-6
        Total delta, split evenly over the k rounds.
    bounds, grid_step, beta, radius_variant, refine_steps, axis_choice, box_side
        As in :class:`~privclust.core.onecluster.OneCluster`, for every round (``bounds`` is
        required).
    n_points : int or None, default=None
        Target number of points per ball; None means ceil(n / (2k)).
    random_state : None, int or numpy.random.Generator, default=None
    ledger : Ledger or None, default=None
        Charged before the records are read.

    Attributes
    ----------
    centers_ : ndarray of shape (k, d)
        Released centres.
    radii_ : ndarray of shape (k,)
        Released radii.
    success_, reliable_ : ndarray of bool, shape (k,)
        Per round, as :class:`OneCluster`'s ``success_`` and ``reliable_``.
    failures_ : list of str or None
        Per round, the reason of a failure.
    privacy_ : Guarantee

    Notes
    -----
    Every parameter, including n_clusters in [1, n], n_points in [1, n] and each round's GoodCenter
    composition, is checked before ``ledger`` is charged; failed rounds still spend their whole
    share.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Obs. 3.5 (k clusters by repeated 1-cluster).

    Examples
    --------
    >>> from privclust.core import PrivateKBalls
    >>> from privclust.core.data import make_planted_ball
    >>> data = make_planted_ball(n_samples=2000, n_features=2, random_state=0)
    >>> est = PrivateKBalls(n_clusters=2, epsilon=1.0, delta=1e-6, bounds=(0, 1), random_state=0)
    >>> est.fit(data.X).centers_.shape
    (2, 2)
    >>> print(est.privacy_.summary())
    (1.0, 1e-06)-DP, approximate, replace-one neighbours; 2 warnings
    """

    _released = ("centers_", "radii_", "success_", "reliable_", "failures_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "delta": [POSITIVE_DELTA],
        "bounds": [None, BOUNDS],
        "grid_step": [None, Interval(Real, 0, None, closed="neither")],
        "n_points": [None, POSITIVE_INT],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "radius_variant": [StrOptions(set(VARIANTS))],
        "refine_steps": [NONNEGATIVE_INT],
        "axis_choice": [StrOptions(set(AXIS_CHOICES))],
        "box_side": [StrOptions(set(BOX_SIDES))],
    }

    def __init__(
        self,
        n_clusters,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        grid_step=None,
        *,
        n_points=None,
        beta=0.05,
        radius_variant="em_geometric",
        refine_steps=2,
        axis_choice="em",
        box_side="practical",
        random_state=None,
        ledger=None,
    ):
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

    def neighbouring_relation(self):
        return "replace"

    def _points(self, n):
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
            raise ValueError(f"n_clusters must be an integer in [1, n_samples={n}], got {k!r}")
        return int(k), (math.ceil(n / (2 * k)) if self.n_points is None else self.n_points)

    def _plan(self, n_samples, n_features):
        if n_samples is None or n_features is None:
            raise ValueError(
                "PrivateKBalls's plan needs the public shape (n_samples, n_features): "
                "n_clusters and n_points are checked against n, public under "
                "replace-one"
            )
        k, t = self._points(n_samples)
        check_common(self.epsilon, self.delta, n_samples, t)
        check_options(self.refine_steps, self.radius_variant, self.axis_choice, self.box_side)
        check_run_options(self.beta, 8.0, 200)
        lo, hi = check_bounds(self.bounds, n_features)
        resolve_grid_step(self.grid_step, lo, hi)
        acc = BudgetAccountant(self.epsilon, self.delta)
        for j in range(k):
            plan_run(
                acc,
                self.epsilon / k,
                self.delta / k,
                self.refine_steps,
                n_features,
                self.axis_choice,
                label=f"ball {j + 1}: ",
            )
        return planned_guarantee(self.epsilon, self.delta, acc)

    def _check_data(self, X):
        return check_X(X)

    def _fit(self, X, rng):
        """Release k balls from the rows of X (already charged by :meth:`fit`)."""
        n, d = X.shape
        k, t = self._points(n)
        lo, hi = check_bounds(self.bounds, d)
        step = resolve_grid_step(self.grid_step, lo, hi)
        accountant = BudgetAccountant(self.epsilon, self.delta)
        remaining = prepare(X, lo, hi, step)
        results = []
        for j in range(k):
            res = one_cluster(
                remaining,
                t,
                self.epsilon / k,
                self.delta / k,
                lo,
                hi,
                step,
                rng,
                accountant,
                beta=self.beta,
                radius_variant=self.radius_variant,
                refine_steps=self.refine_steps,
                axis_choice=self.axis_choice,
                box_side=self.box_side,
                n_public=n,
                label=f"ball {j + 1}: ",
            )
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
