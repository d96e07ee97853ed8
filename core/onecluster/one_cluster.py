"""1-cluster = GoodRadius + GoodCenter + re-centring (Nissim, Stemmer & Vadhan, "Locating a
small cluster privately", PODS 2016, Thm 3.2 and Sec. 3).

Budget (generalised to s = ``refine_steps`` re-centring steps): eps is split into 2 + s equal
parts (GoodRadius, GoodCenter, each re-centring NoisyAVG of Nissim, Stemmer & Vadhan 2016,
App. A); delta goes to GoodCenter (delta/2) and the re-centring steps (delta/(2s) each), or all
to GoodCenter when s = 0 (:func:`budget_plan`). The released radius is 2 r^ + 3 sigma_last
sqrt(d) after re-centring, rho_C without.

Utility (measured): in d = 2 this construction finds a planted cluster of t = 2000 of
n = 10,000 points at eps = 1; at d = 10 and this n it does not (centre error 0.25-2.6): the ball
it reports is then wide, or the run fails and reports the whole public box.
"""

import math
import numbers
import warnings
from dataclasses import dataclass

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
from ..data import clip_box, quantize
from ..estimator import PrivateEstimator
from ..privacy import BudgetAccountant, Guarantee, PrivacyWarning
from ..privacy._validation import check_box, check_delta, check_epsilon
from .ball_counts import check_grid_step, min_grid_step
from .good_center import AXIS_CHOICES, BOX_SIDES, check_good_center_budget, good_center
from .good_radius import VARIANTS, good_radius
from .noisy_avg import noisy_avg


@dataclass
class OneClusterResult:
    """What one 1-cluster run releases (all private) and how it ended."""

    center: np.ndarray
    radius: float
    good_radius: float
    center_radius: float
    success: bool
    failure: str | None
    n_refined: int
    ball_count: float
    reliable: bool


def check_bounds(bounds, d):
    """(lo, hi) as float (d,) arrays from public ``bounds`` = (lower, upper) scalars or arrays."""
    return check_box(bounds, d, contains="every point")


def default_grid_step(lo, hi):
    """The public default grid step: the largest box side / 2^16, raised to the box's
    :func:`~privclust.core.onecluster.ball_counts.min_grid_step` when that is larger (a box far
    from the origin, or in many dimensions). Data-independent."""
    return max(float(np.max(hi - lo)) / 2.0**16, min_grid_step(lo, hi))


def resolve_grid_step(grid_step, lo, hi):
    """The grid step a run uses: :func:`default_grid_step` for None, else ``grid_step`` checked
    (> 0, finite and >= ``min_grid_step`` of the public box; ValueError naming grid_step)."""
    if grid_step is None:
        return default_grid_step(lo, hi)
    return check_grid_step(grid_step, lo, hi)


def prepare(X, lo, hi, grid_step):
    """Per-record domain enforcement: clip to the box, round to the grid, clip again."""
    return clip_box(quantize(clip_box(X, lo, hi), grid_step, offset=lo), lo, hi)


def budget_plan(epsilon, delta, refine_steps):
    """(eps_radius, (eps_center, delta_center), (eps_step, delta_step)): eps in 2 + s equal
    parts; delta/2 to GoodCenter and delta/(2s) to each re-centring step (all of delta to
    GoodCenter when s = 0).

    References
    ----------
    See docs/algorithms.md, section 5 (the split into 2 + s parts).
    """
    parts = 2 + refine_steps
    share = epsilon / parts
    if refine_steps == 0:
        return share, (share, delta), (0.0, 0.0)
    return share, (share, delta / 2.0), (share, delta / (2.0 * refine_steps))


def one_cluster(
    X,
    t,
    epsilon,
    delta,
    lo,
    hi,
    grid_step,
    rng,
    accountant,
    *,
    beta=0.05,
    radius_variant="em_geometric",
    refine_steps=2,
    axis_choice="em",
    box_side="practical",
    jl_constant=8.0,
    max_rounds=200,
    n_public=None,
    count_method="auto",
    label="",
):
    """Run 1-cluster on already prepared rows (see :func:`prepare`); returns OneClusterResult.

    Every mechanism is charged to ``accountant`` (names prefixed by ``label``); on a failure the
    unspent rest of this run's (epsilon, delta) is recorded as spent too, so the accountant's
    total for the run is always exactly (epsilon, delta).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Thm. 3.2.
    See docs/algorithms.md, section 5.
    """
    local = BudgetAccountant(epsilon, delta)
    n, d = X.shape
    eps_r, (eps_c, delta_c), (eps_s, delta_s) = budget_plan(epsilon, delta, refine_steps)
    gr = good_radius(
        X,
        t,
        eps_r,
        (lo, hi),
        grid_step,
        rng,
        local,
        beta=beta,
        variant=radius_variant,
        method=count_method,
    )
    r_use = gr.radius if gr.radius > 0 else grid_step / 2.0
    t_c = t - 4.0 * gr.gamma
    gc = good_center(
        X,
        r_use,
        t_c,
        eps_c,
        delta_c,
        (lo, hi),
        rng,
        local,
        beta=beta,
        n_public=n_public,
        jl_constant=jl_constant,
        box_side=box_side,
        max_rounds=max_rounds,
        axis_choice=axis_choice,
    )
    if gc.center is None:
        _settle(local, f"GoodCenter failed: {gc.failure}")
        _merge(local, accountant, label)
        return OneClusterResult(
            (lo + hi) / 2.0,
            float(np.linalg.norm(hi - lo)) / 2.0,
            gr.radius,
            math.nan,
            False,
            gc.failure,
            0,
            math.nan,
            False,
        )
    center, sigma, radius, count = gc.center, gc.sigma, gc.radius, gc.noisy_count
    failure, done, averaged = None, 0, gc.radius
    for step in range(refine_steps):
        ball = 2.0 * r_use + 3.0 * sigma * math.sqrt(d)
        local.spend(f"re-centring NoisyAVG {step + 1}", eps_s, delta_s, 4.0 * ball)
        new, new_sigma, new_count = noisy_avg(X, center, ball, eps_s, delta_s, rng)
        if new is None:
            failure = f"re-centring step {step + 1}: NoisyAVG count <= 0 (kept the previous centre)"
            radius = ball
            _settle(local, failure)
            break
        center, sigma, count, averaged, done = new, new_sigma, new_count, ball, step + 1
        radius = 2.0 * r_use + 3.0 * sigma * math.sqrt(d)
    _merge(local, accountant, label)
    # reliable: the last average was over a ball at most twice the released one holding >= t_c
    reliable = failure is None and averaged <= 2.0 * radius and count >= t_c
    if np.linalg.norm(np.maximum(np.abs(center - lo), np.abs(center - hi))) <= radius:
        # the ball holds the whole box: release the box's own ball instead (post-processing;
        # never larger, and not informative either way)
        center, radius, reliable = (lo + hi) / 2.0, float(np.linalg.norm(hi - lo)) / 2.0, False
        failure = (
            failure or "the released ball contained the whole box (replaced by the box's ball)"
        )
    return OneClusterResult(
        np.asarray(center, dtype=np.float64),
        float(radius),
        gr.radius,
        gc.radius,
        True,
        failure,
        done,
        count,
        bool(reliable),
    )


def _settle(local, reason):
    """Record the unspent rest of a run's plan (budget is never refunded)."""
    eps_left, delta_left = local.remaining
    if eps_left > 0:
        local.spend(f"unused after failure ({reason})", eps_left, delta_left)


def _merge(local, accountant, label):
    for s in local.mechanisms:
        accountant.spend(f"{label}{s.name}", s.epsilon, s.delta, s.sensitivity)


def check_run_options(beta, jl_constant, max_rounds):
    """Validate the numeric constants of a 1-cluster run (ValueError naming the parameter)."""
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0 < beta < 1:
        raise ValueError(f"beta must be a number in (0, 1), got {beta!r}")
    if (
        isinstance(jl_constant, bool)
        or not isinstance(jl_constant, numbers.Real)
        or not math.isfinite(jl_constant)
        or jl_constant <= 0
    ):
        raise ValueError(f"jl_constant must be a finite number > 0, got {jl_constant!r}")
    if (
        isinstance(max_rounds, bool)
        or not isinstance(max_rounds, numbers.Integral)
        or max_rounds < 1
    ):
        raise ValueError(f"max_rounds must be an integer >= 1, got {max_rounds!r}")


def plan_run(accountant, epsilon, delta, refine_steps, d, axis_choice="em", label=""):
    """Record the planned spends of one 1-cluster run of (epsilon, delta) on ``accountant``:
    GoodRadius, GoodCenter and each re-centring NoisyAVG (:func:`budget_plan`).

    Checks GoodCenter's composition for its share first
    (:func:`~privclust.core.onecluster.good_center.check_good_center_budget`), so a budget it
    cannot compose is refused before any charge.
    """
    eps_r, (eps_c, delta_c), (eps_s, delta_s) = budget_plan(epsilon, delta, refine_steps)
    check_good_center_budget(eps_c, delta_c, d, axis_choice)
    accountant.spend(f"{label}GoodRadius", eps_r, 0.0)
    accountant.spend(f"{label}GoodCenter", eps_c, delta_c)
    for step in range(refine_steps):
        accountant.spend(f"{label}re-centring NoisyAVG {step + 1}", eps_s, delta_s)


def planned_guarantee(epsilon, delta, accountant):
    """The plan: exactly (epsilon, delta), approximate DP, replace-one, with the planned spends."""
    return Guarantee(
        float(epsilon), float(delta), "approx", "replace", mechanisms=accountant.mechanisms
    )


def check_common(epsilon, delta, n, t=None):
    """Validate epsilon > 0, 0 < delta < 1 and 1 <= t <= n; warn when delta > 1/n."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)  # GoodCenter is approximate DP
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 1 <= t <= n:
            raise ValueError(f"n_points must be an integer in [1, n_samples={n}], got {t!r}")
    if delta > 1.0 / n:
        warnings.warn(
            f"delta={delta!r} > 1/n_samples: a weak guarantee", PrivacyWarning, stacklevel=3
        )


def check_X(X):
    """Finite 2-D float array (n >= 1); complex input is refused (its imaginary part would be
    dropped silently)."""
    if np.iscomplexobj(X):
        raise ValueError("Complex data not supported: X must be real")
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("X must be a numeric array of shape (n_samples, n_features)") from None
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have shape (n_samples, n_features), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values (a privacy bug, not just a crash)")
    return X


def check_options(refine_steps, radius_variant, axis_choice, box_side):
    if (
        isinstance(refine_steps, bool)
        or not isinstance(refine_steps, numbers.Integral)
        or refine_steps < 0
    ):
        raise ValueError(f"refine_steps must be a non-negative integer, got {refine_steps!r}")
    for name, value, allowed in (
        ("radius_variant", radius_variant, VARIANTS),
        ("axis_choice", axis_choice, AXIS_CHOICES),
        ("box_side", box_side, BOX_SIDES),
    ):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


class OneCluster(PrivateEstimator):
    """Private ball around ~``n_points`` points (1-cluster of Nissim, Stemmer & Vadhan, PODS 2016,
    Thm 3.2, with GoodRadius, GoodCenter and NoisyAVG re-centring).

    (epsilon, delta)-DP under ``replace`` neighbours (n public). Records are clipped to the public
    box and rounded to the public grid, per record. Defaults are the practical ones: GoodRadius by
    the exponential mechanism on a geometric grid, GoodCenter with a capped interval length, two
    re-centring steps. Useful for small d only: see the module docstring.

    Parameters
    ----------
    n_points : int
        Target number t of points in the ball, 1 <= t <= n.
    epsilon : float, default=1.0
        Total privacy parameter, split into 2 + ``refine_steps`` equal parts (GoodRadius,
        GoodCenter, each re-centring NoisyAVG).
    delta : float, default=1e-6
        Total delta, spent by GoodCenter and the re-centring steps.
    bounds : (lower, upper)
        Public box, scalars or length-d arrays; required. Records are clipped to it.
    grid_step : float or None, default=None
        Public grid the records are rounded to; None means :func:`default_grid_step` (never below
        the box's ``min_grid_step``, at which float64 ball counts stay exact).
    beta : float, default=0.05
        Failure probability used in the constants of GoodRadius and GoodCenter.
    radius_variant : {"em_geometric", "above_threshold"}, default="em_geometric"
        GoodRadius by the exponential mechanism on a geometric grid of radii, or by the paper's
        AboveThreshold search.
    refine_steps : int, default=2
        NoisyAVG re-centring steps after GoodCenter.
    axis_choice : {"em", "stable_hist", "box_ball"}, default="em"
        How GoodCenter picks the heavy interval on each axis (see docs/algorithms.md, section 5).
    box_side : {"practical", "paper"}, default="practical"
        Side of GoodCenter's random boxes: our capped length, or the paper's constant.
    jl_constant : float, default=8.0
        Constant of GoodCenter's Johnson-Lindenstrauss dimension k = ceil(c ln(2n / beta)).
    max_rounds : int, default=200
        Random boxes GoodCenter tries before it gives up (AboveThreshold over the rounds).
    random_state : None, int or numpy.random.Generator, default=None
    ledger : Ledger or None, default=None
        Charged before the records are read.

    Attributes
    ----------
    center_ : ndarray of shape (d,)
        Centre of the released ball. Released.
    radius_ : float
        Radius of the released ball. Released.
    good_radius_ : float
        GoodRadius's r^. Released.
    center_radius_ : float
        GoodCenter's rho_C. Released.
    success_ : bool
        False when GoodCenter failed and the released ball is the one around the whole box.
    failure_ : str or None
        The reason of a failure.
    ball_count_ : float
        The noisy count m + Lap(2/eps) of the last NoisyAVG ball, already part of that release.
    reliable_ : bool
        The run succeeded, the last average was taken over a ball at most twice the released
        radius, ``ball_count_`` >= t - 4 Gamma, and the ball does not hold the whole box; computed
        from released values only: when False the ball should not be trusted to locate ~t points.
    privacy_ : Guarantee

    Notes
    -----
    Every parameter (epsilon, delta, n_points in [1, n], the options, bounds, grid_step and
    GoodCenter's composition) is checked from the parameters and the public shape before
    ``ledger`` is charged; the data are read only after the charge. A failed run still spends
    exactly its plan (the unused rest is recorded as spent). Every released attribute is a private
    output or post-processing of one. A ball that holds the whole public box is replaced by the
    box's circumscribed ball (post-processing; ``failure_`` says so). The defaults depart from the
    paper's constants where those make the algorithm useless at practical sizes: see
    docs/algorithms.md, section 5.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 3 (Thm. 3.2), Sec. 3.1 and 4.1 (GoodRadius), Sec. 3.2 and 4.3
        (GoodCenter), App. A (NoisyAVG).
    McSherry, F. and Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.

    Examples
    --------
    >>> from privclust.core import OneCluster
    >>> from privclust.core.data import make_planted_ball
    >>> data = make_planted_ball(n_samples=2000, n_features=2, random_state=0)
    >>> est = OneCluster(n_points=500, epsilon=1.0, delta=1e-6, bounds=(0, 1), random_state=0)
    >>> est.fit(data.X).center_.shape
    (2,)
    >>> print(est.privacy_.summary())
    (1.0, 1e-06)-DP, approximate, replace-one neighbours
    """

    _released = (
        "center_",
        "radius_",
        "success_",
        "failure_",
        "reliable_",
        "ball_count_",
        "good_radius_",
        "center_radius_",
    )

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_points": [POSITIVE_INT],
        "delta": [POSITIVE_DELTA],
        "bounds": [None, BOUNDS],
        "grid_step": [None, Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "radius_variant": [StrOptions(set(VARIANTS))],
        "refine_steps": [NONNEGATIVE_INT],
        "axis_choice": [StrOptions(set(AXIS_CHOICES))],
        "box_side": [StrOptions(set(BOX_SIDES))],
        "jl_constant": [Interval(Real, 0, None, closed="neither")],
        "max_rounds": [POSITIVE_INT],
    }

    def __init__(
        self,
        n_points,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        grid_step=None,
        *,
        beta=0.05,
        radius_variant="em_geometric",
        refine_steps=2,
        axis_choice="em",
        box_side="practical",
        jl_constant=8.0,
        max_rounds=200,
        random_state=None,
        ledger=None,
    ):
        self.n_points = n_points
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.grid_step = grid_step
        self.beta = beta
        self.radius_variant = radius_variant
        self.refine_steps = refine_steps
        self.axis_choice = axis_choice
        self.box_side = box_side
        self.jl_constant = jl_constant
        self.max_rounds = max_rounds
        self.random_state = random_state
        self.ledger = ledger

    def neighbouring_relation(self):
        return "replace"

    def _plan(self, n_samples, n_features):
        if n_samples is None or n_features is None:
            raise ValueError(
                "OneCluster's plan needs the public shape (n_samples, n_features): "
                "n_points is checked against n, public under replace-one"
            )
        check_common(self.epsilon, self.delta, n_samples, self.n_points)
        check_options(self.refine_steps, self.radius_variant, self.axis_choice, self.box_side)
        check_run_options(self.beta, self.jl_constant, self.max_rounds)
        lo, hi = check_bounds(self.bounds, n_features)
        resolve_grid_step(self.grid_step, lo, hi)
        acc = BudgetAccountant(self.epsilon, self.delta)
        plan_run(acc, self.epsilon, self.delta, self.refine_steps, n_features, self.axis_choice)
        return planned_guarantee(self.epsilon, self.delta, acc)

    def _check_data(self, X):
        return check_X(X)

    def _fit(self, X, rng):
        """Release a ball from the rows of X (already charged by :meth:`fit`)."""
        d = X.shape[1]
        lo, hi = check_bounds(self.bounds, d)
        step = resolve_grid_step(self.grid_step, lo, hi)
        accountant = BudgetAccountant(self.epsilon, self.delta)
        res = one_cluster(
            prepare(X, lo, hi, step),
            self.n_points,
            self.epsilon,
            self.delta,
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
            jl_constant=self.jl_constant,
            max_rounds=self.max_rounds,
        )
        self._store(res, accountant, d)

    def _store(self, res, accountant, d):
        self.center_ = res.center
        self.radius_ = res.radius
        self.good_radius_ = res.good_radius
        self.center_radius_ = res.center_radius
        self.success_ = res.success
        self.failure_ = res.failure
        self.ball_count_ = res.ball_count
        self.reliable_ = res.reliable
        self.n_features_in_ = d
        notes = (
            [f"GoodCenter failed: {res.failure}"]
            if not res.success
            else ([res.failure] if res.failure else [])
        )
        if res.success and not res.reliable:
            notes.append(
                "unreliable ball: the re-centring did not settle (last averaging ball "
                "over twice the released radius) or held fewer than t - 4 Gamma points"
            )
        self.privacy_ = accountant.guarantee("approx", "replace", warnings=notes)
