"""GoodCenter: a private centre for a ball of a given radius r (Nissim, Stemmer & Vadhan, PODS 2016,
Algorithm GoodCenter, Sec. 3.2 and 4.3).

Budget (eps, delta) split: AboveThreshold over randomly shifted box partitions eps/4; heavy box
by stable histogram (eps/4, delta/4); per-axis interval choice in a random basis eps/4 (plus
delta/4 when advanced composition is used); NoisyAVG over the bounding ball gets eps/4 and the
rest of delta (so the recorded total is exactly (eps, delta)).

``axis_choice="box_ball"`` is our alternative, not the paper's (useful when no JL reduction
happens, k >= d): no JL map, no rotation or per-axis stage; NoisyAVG (eps/2, 3 delta/4) runs over the ball enclosing the heavy
box (radius side sqrt(d) / 2, ~3.1 r in d = 2), then the caller re-centres as usual.

Constants are our practical defaults, chosen for utility (JL constant 8; box side
3r/(1 - 0.1^(1/k)), which gives each shifted partition a ~0.1 chance of holding a projected
cluster of diameter <= 3r in one box, ``box_side="paper"`` gives the paper-like 300 r; R_max = 200,
since a paper-like bound of ~2n ln(1/beta)/beta rounds is infeasible). The
per-axis interval length p is capped at the diameter w_D of the heavy-box points, because a
projection onto a unit axis can never exceed that diameter: uncapped, p is ~4.7 w_D in d = 2
and the ball radius ~62 r. Privacy never depends on these constants.
Practical warning: even so the ball's radius is ~13 r in d = 2 and grows quickly with d (hence
the re-centring steps of :mod:`.one_cluster`); GoodCenter is useful only for small d or very
large n.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..privacy import (
    above_threshold,
    advanced_composition,
    gumbel_max,
    haar_orthogonal,
    jl_matrix,
    stable_histogram,
)
from ..privacy._validation import check_delta, check_epsilon
from .noisy_avg import noisy_avg

AXIS_CHOICES = ("em", "stable_hist", "box_ball")
BOX_SIDES = ("practical", "paper")


@dataclass
class GoodCenterResult:
    """centre (None on failure), ball radius rho_C, NoisyAVG noise std and noisy count, failure."""

    center: np.ndarray | None
    radius: float
    sigma: float
    noisy_count: float = math.nan
    failure: str | None = None


def em_axis_epsilon(epsilon, delta, d):
    """Per-axis budget: max(eps/d, eps_adv), eps_adv solving advanced composition with delta.

    Returns ``(eps_axis, uses_delta)``; ``epsilon``, ``delta`` are the axis stage's totals.
    Advanced composition: Dwork, Rothblum & Vadhan, FOCS 2010, Thm III.3.

    References
    ----------
    Dwork, C., Rothblum, G. N. and Vadhan, S. (2010). Boosting and differential privacy.
        FOCS 2010.
    """
    basic = epsilon / d
    if delta <= 0 or d == 1:
        return basic, False

    def excess(x):
        return math.sqrt(2 * d * math.log(1 / delta)) * x + d * x * math.expm1(x) - epsilon

    if not excess(epsilon) > 0:  # no root in (0, eps]: advanced composition cannot beat eps
        return basic, False
    adv = brentq(excess, 1e-300, epsilon, xtol=1e-300, rtol=1e-15)
    while excess(adv) > 0:  # the root from the safe side: the composition never exceeds epsilon
        adv = math.nextafter(adv, 0.0)
    return (adv, True) if adv > basic else (basic, False)


def stable_hist_axis_budget(epsilon, delta, d):
    """Per-axis (eps_a, delta_a) of the stable-histogram axis stage (Nissim, Stemmer & Vadhan
    2016, Alg. 2, step 7).

    eps_a = eps / (10 sqrt(d ln(8/delta))), delta_a = delta / (8 d); ``epsilon``, ``delta`` are
    GoodCenter's totals.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 4.3.
    Dwork, C., Rothblum, G. N. and Vadhan, S. (2010). Boosting and differential privacy.
        FOCS 2010.
    """
    return epsilon / (10.0 * math.sqrt(d * math.log(8.0 / delta))), delta / (8.0 * d)


def check_good_center_budget(epsilon, delta, d, axis_choice="em"):
    """Check, from the parameters alone, that GoodCenter's stages compose within (epsilon, delta).

    Call it before charging anything for a run that includes GoodCenter (``epsilon``, ``delta``:
    GoodCenter's own share; ``d``: the number of features). Raises ValueError naming the
    parameter when ``epsilon`` is not a finite number > 0, ``delta`` not in (0, 1), ``d`` not a
    positive integer, ``axis_choice`` unknown, or when the per-axis stage's composition
    (advanced composition, Dwork, Rothblum & Vadhan, FOCS 2010) exceeds its share
    (epsilon/4, delta/4) -- e.g. the "stable_hist" stage for a large epsilon. Explicit checks, not
    ``assert`` (which ``python -O`` removes). Returns ``(eps_axis, delta_axis_stage)``: the
    per-axis epsilon and the delta the axis stage is charged.

    References
    ----------
    Dwork, C., Rothblum, G. N. and Vadhan, S. (2010). Boosting and differential privacy.
        FOCS 2010.
    See docs/algorithms.md, section 5.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)  # GoodCenter is approximate DP
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d (number of features) must be a positive integer, got {d!r}")
    if axis_choice not in AXIS_CHOICES:
        raise ValueError(f"axis_choice must be one of {AXIS_CHOICES}, got {axis_choice!r}")
    e4 = epsilon / 4.0
    if axis_choice == "box_ball":
        return 0.0, 0.0
    if axis_choice == "em":
        eps_a, uses_delta = em_axis_epsilon(e4, delta / 4.0, int(d))
        if uses_delta:
            total = advanced_composition(eps_a, 0.0, int(d), delta / 4.0)[0]
        else:
            total = eps_a * int(d)
        if not total <= e4 * (1 + 1e-12):
            raise ValueError(
                f"epsilon={epsilon!r}, delta={delta!r}: GoodCenter's per-axis stage "
                f"({d} exponential mechanisms) composes to {total:.6g} > epsilon/4"
            )
        return eps_a, (delta / 4.0 if uses_delta else 0.0)
    eps_a, delta_a = stable_hist_axis_budget(epsilon, delta, int(d))
    total_eps, total_delta = advanced_composition(eps_a, delta_a, int(d), delta / 8.0)
    if not (total_eps <= e4 * (1 + 1e-12) and total_delta <= delta / 4.0 * (1 + 1e-12)):
        raise ValueError(
            f"epsilon={epsilon!r} is too large for axis_choice='stable_hist' at d={d}, "
            f"delta={delta!r}: its {d} per-axis stable histograms compose (advanced composition) "
            f"to ({total_eps:.6g}, {total_delta:.3g}) > (epsilon/4, delta/4); use a smaller "
            "epsilon or axis_choice='em'"
        )
    return eps_a, delta / 4.0


def _hash_rows(keys, mult):
    """One int64 per row (wrap-around polynomial hash): a coarsening of the cell partition."""
    return keys @ mult


def good_center(
    X,
    r,
    t_c,
    epsilon,
    delta,
    bounds,
    rng,
    accountant,
    *,
    beta=0.05,
    n_public=None,
    jl_constant=8.0,
    box_side="practical",
    max_rounds=200,
    axis_choice="em",
):
    """Run GoodCenter on the rows of X (clipped to ``bounds``) for the public radius r > 0.

    ``t_c`` is the target count (e.g. t - 4 Gamma from GoodRadius); ``n_public`` the public
    dataset size used in the constants (defaults to len(X)). Every mechanism is charged to
    ``accountant`` before it runs. Failures (AboveThreshold never fires, no heavy box kept,
    no per-axis interval kept, NoisyAVG count too small) return a result with ``center=None``
    and ``failure`` naming the step; the caller charges the rest of its plan.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 3.2 and 4.3 (Algorithm GoodCenter).
    See docs/algorithms.md, section 5 (our constants and the capped interval length).
    """
    if axis_choice not in AXIS_CHOICES:
        raise ValueError(f"axis_choice must be one of {AXIS_CHOICES}, got {axis_choice!r}")
    if box_side not in BOX_SIDES:
        raise ValueError(f"box_side must be one of {BOX_SIDES}, got {box_side!r}")
    n, d = X.shape
    check_good_center_budget(epsilon, delta, d, axis_choice)  # before anything is charged
    n_pub = n if n_public is None else int(n_public)
    lo = np.broadcast_to(np.asarray(bounds[0], float), (d,))
    hi = np.broadcast_to(np.asarray(bounds[1], float), (d,))
    e4 = epsilon / 4.0

    # 1. JL map (identity when it would not reduce the dimension, or for "box_ball")
    k = math.ceil(jl_constant * math.log(2 * n_pub / beta))
    if k >= d or axis_choice == "box_ball":
        k, Y = d, X
        w_D_factor = math.sqrt(d)
    else:
        Y = X @ jl_matrix(k, d, rng).T
        w_D_factor = 2.0 * math.sqrt(k)
    side = 300.0 * r if box_side == "paper" else 3.0 * r / (1.0 - 0.1 ** (1.0 / k))

    # 2-3. AboveThreshold over randomly shifted partitions (query: heaviest box count)
    shifts = rng.uniform(0.0, side, size=(max_rounds, k))
    mult = rng.integers(1, 2**62, size=k) | 1
    queries = np.empty(max_rounds)
    for i in range(max_rounds):
        h = _hash_rows(np.floor((Y - shifts[i]) / side).astype(np.int64), mult)
        queries[i] = np.unique(h, return_counts=True)[1].max() if n else 0
    threshold = t_c - 32.0 / epsilon * (math.log(max_rounds) + math.log(2.0 / beta))
    accountant.spend("GoodCenter AboveThreshold over shifted box partitions", e4, 0.0, 1.0)
    first = int(above_threshold(queries, threshold, e4, rng))
    if first < 0:
        return _fail("AboveThreshold never fired (no heavy box partition)")
    delta_box = delta / 4.0
    accountant.spend("GoodCenter heavy box (stable histogram)", e4, delta_box, 2.0)
    keys = np.floor((Y - shifts[first]) / side).astype(np.int64)
    chosen = stable_histogram(keys, e4, delta_box, rng)
    if chosen is None:
        return _fail("stable histogram kept no box")
    if axis_choice == "box_ball":  # our alternative: average over the box's enclosing ball
        c = shifts[first] + (chosen[0] + 0.5) * side
        rho = 0.5 * side * math.sqrt(d)
        return _average(X, c, rho, epsilon / 2.0, delta - delta_box, rng, accountant)
    D = X[np.all(keys == chosen[0], axis=1)]

    # 5-7. random basis, interval length p capped at w_D (see module docstring), per-axis choice
    Z = haar_orthogonal(d, rng)
    w_D = side * w_D_factor
    p = w_D * min(1.0, math.sqrt(2.0 * math.log(d * n_pub**2 / beta) / d))
    U = D @ Z
    if axis_choice == "em":
        eps_a, uses_delta = em_axis_epsilon(e4, delta / 4.0, d)
        delta_axes = delta / 4.0 if uses_delta else 0.0
        accountant.spend(
            f"GoodCenter per-axis intervals (exponential mechanism x {d}, "
            f"{'advanced' if uses_delta else 'basic'} composition)",
            e4,
            delta_axes,
            1.0,
        )
        idx = _em_intervals(U, Z, lo, hi, p, eps_a, rng)
    else:
        eps_a, delta_a = stable_hist_axis_budget(epsilon, delta, d)
        delta_axes = delta / 4.0
        accountant.spend(
            f"GoodCenter per-axis intervals (stable histogram x {d}, advanced composition)",
            e4,
            delta_axes,
            2.0,
        )
        idx = np.empty(d, dtype=np.int64)
        for j in range(d):
            res = stable_histogram(np.floor(U[:, j] / p).astype(np.int64), eps_a, delta_a, rng)
            if res is None:
                return _fail(f"stable histogram kept no interval on axis {j}")
            idx[j] = res[0][0]

    # 8-9. bounding ball and NoisyAVG with the rest of the budget
    c = Z @ ((idx + 0.5) * p)
    rho = 1.5 * p * math.sqrt(d)
    return _average(X, c, rho, e4, delta - delta_box - delta_axes, rng, accountant)


def _average(X, c, rho, epsilon, delta, rng, accountant):
    """Step 9: NoisyAVG of S over the public ball B(c, rho)."""
    accountant.spend("GoodCenter NoisyAVG over the bounding ball", epsilon, delta, 4.0 * rho)
    center, sigma, count = noisy_avg(X, c, rho, epsilon, delta, rng)
    if center is None:
        return _fail("NoisyAVG noisy count <= 0")
    return GoodCenterResult(center, rho, sigma, count)


def _em_intervals(U, Z, lo, hi, p, eps_a, rng):
    """Exponential mechanism per axis over the intervals [ip, (i+1)p) meeting the projected box.

    Quality = number of points of D in the interval (sensitivity 1). All empty intervals share
    utility 0, so they are merged into one candidate of logit ln(#empty) and, if it wins, one of
    them is drawn uniformly: the exact same law in O(|D|) per axis, however small p is.
    """
    d = Z.shape[0]
    mid_proj = ((lo + hi) / 2.0) @ Z
    R = float(np.linalg.norm(hi - lo)) / 2.0
    first = np.floor((mid_proj - R) / p).astype(np.int64)
    last = np.floor((mid_proj + R) / p).astype(np.int64)
    chosen = np.empty(d, dtype=np.int64)
    for j in range(d):
        cells, counts = np.unique(
            np.clip(np.floor(U[:, j] / p).astype(np.int64), first[j], last[j]), return_counts=True
        )
        n_empty = int(last[j] - first[j] + 1) - cells.size
        logits = np.append(eps_a * counts / 2.0, math.log(n_empty) if n_empty else -np.inf)
        k = int(gumbel_max(logits, rng))
        if k < cells.size:
            chosen[j] = cells[k]
        else:  # uniform over the empty intervals
            free = rng.integers(n_empty)
            chosen[j] = (
                first[j]
                + free
                + np.searchsorted(cells - first[j] - np.arange(cells.size), free, side="right")
            )
    return chosen


def _fail(reason):
    """Failure result (the caller records the unspent rest of its plan: no refunds)."""
    return GoodCenterResult(None, math.nan, math.nan, math.nan, reason)
