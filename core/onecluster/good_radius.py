"""GoodRadius: a private radius r with a ball of radius r around ~t points (Nissim, Stemmer &
Vadhan, PODS 2016, Algorithm GoodRadius, Sec. 3.1 and 4.1).

Two practical variants over the geometric grid F = {r_min 2^j : j = 0..J}, both pure eps-DP:
- ``"em_geometric"`` (default): a zero-radius test (Laplace, eps/2) and the exponential
  mechanism (eps/2) on Q(r) = 1/2 min{L(r) - t + 4 Gamma, t - L(r/2)} (sensitivity 1).
- ``"above_threshold"``: AboveThreshold (eps) scanning F upwards on L(r)/2 (sensitivity 1).
- ``"rec_concave"`` ((eps, delta)-DP, the paper's version): the zero-radius test, then
  RecConcave (Beimel, Nissim & Stemmer 2013) over a linear radius domain; see
  :mod:`.rec_concave` for it and for the measured n it needs (its promise Gamma is
  astronomically large).
"""

import contextlib
import hashlib
import math
import threading
from dataclasses import dataclass

import numpy as np

from ..privacy import above_threshold, exponential_mechanism, laplace
from .ball_counts import capped_top_means, check_grid_step, min_grid_step, multiplicity_top_mean

__all__ = [
    "VARIANTS",
    "APPROX_VARIANTS",
    "GoodRadiusResult",
    "radius_grid",
    "em_gamma",
    "at_gamma",
    "quality",
    "count_profile",
    "release_index",
    "good_radius",
    "min_grid_step",
    "check_grid_step",
]

VARIANTS = ("em_geometric", "above_threshold")
APPROX_VARIANTS = ("rec_concave",)  # need delta > 0; not offered by the pure-radius callers


@dataclass
class GoodRadiusResult:
    """Released radius (0.0 if the zero test fired) and the public quantities around it.

    ``fired`` is False only for ``above_threshold`` when no grid radius was answered "above";
    the radius is then the largest grid radius (a ball that holds the whole public box).
    """

    radius: float
    grid: np.ndarray
    gamma: float
    fired: bool = True


def radius_grid(bounds, grid_step, d):
    """F = {grid_step * 2^j : j = 0..J}, J = ceil(log2(diameter / grid_step)) (data-independent)."""
    lo, hi = bounds
    diameter = float(
        np.linalg.norm(np.broadcast_to(np.asarray(hi, float) - np.asarray(lo, float), (d,)))
    )
    J = max(0, math.ceil(math.log2(max(diameter / grid_step, 1.0))))
    return grid_step * 2.0 ** np.arange(J + 1)


def em_gamma(epsilon, n_radii, beta):
    """Gamma = (4/eps) ln(|F|/beta) + 1, the slack of the exponential-mechanism variant.

    References
    ----------
    McSherry, F. and Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
    """
    return 4.0 / epsilon * math.log(n_radii / beta) + 1.0


def quality(L, L0, t, gamma):
    """Q(r_j) = 1/2 min{L(r_j) - t + 4 Gamma, t - L(r_j / 2)}; L(r_0 / 2) = L(0) on the grid.

    ``L`` holds L on the grid, ``L0`` = L(0). Sensitivity 1 when L has sensitivity 2.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 4.1.
    """
    L = np.asarray(L, dtype=np.float64)
    half = np.concatenate([[L0], L[:-1]])
    return 0.5 * np.minimum(L - t + 4.0 * gamma, t - half)


# The count profile is exact and independent of epsilon: a planner that fits the same public
# twin at many epsilons computes it once (reuse_count_profiles). Thread-local, so a private fit
# in another thread never sees the memo.
_MEMO = threading.local()


@contextlib.contextmanager
def reuse_count_profiles():
    """Within the block, :func:`count_profile` of the calling thread returns the stored profile
    of an identical earlier call (same records, t, grid, method and box) instead of
    recomputing it. For repeated fits on the same *public* data (the planner's twins); the
    results are identical to separate fits."""
    previous = getattr(_MEMO, "cache", None)
    _MEMO.cache = {}
    try:
        yield
    finally:
        _MEMO.cache = previous


def count_profile(X, t, grid, method="auto", bounds=None):
    """(L(0), L on the grid): the only data-dependent inputs of GoodRadius.

    ``bounds`` = (lo, hi), the public box, fixes the centring and the comparison tolerance of the
    ball counts (see ``ball_counts``); private runs always pass it (:func:`good_radius` does).
    Inside :func:`reuse_count_profiles` an identical earlier call's profile is returned.
    """
    cache = getattr(_MEMO, "cache", None)
    if cache is None:
        return _count_profile(X, t, grid, method, bounds)
    X = np.ascontiguousarray(X, dtype=np.float64)
    grid = np.ascontiguousarray(grid, dtype=np.float64)
    box = (
        None if bounds is None else tuple(np.asarray(b, dtype=np.float64).tobytes() for b in bounds)
    )
    key = (
        hashlib.blake2b(X.data, digest_size=16).digest(),
        X.shape,
        float(t),
        grid.tobytes(),
        method,
        box,
    )
    hit = cache.get(key)
    if hit is not None and np.array_equal(hit[0], X):
        return hit[1], hit[2].copy()
    L0, L = _count_profile(X, t, grid, method, bounds)
    cache[key] = (X.copy(), L0, np.array(L, copy=True))
    return L0, L


def _count_profile(X, t, grid, method, bounds):
    L, _ = capped_top_means(X, grid, t, method=method, bounds=bounds)
    if bounds is not None:
        lo, hi = bounds
        X = np.clip(np.asarray(X, dtype=np.float64), lo, hi)
    return multiplicity_top_mean(X, t), L


def at_gamma(epsilon, n_radii, beta):
    """Gamma' = 8 (ln|F| + ln(2/beta)) / eps, the slack of the AboveThreshold variant.

    References
    ----------
    Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy.
        Found. Trends Theor. Comput. Sci. 9(3-4), Sec. 3.6 (accuracy of AboveThreshold).
    """
    return 8.0 * (math.log(n_radii) + math.log(2.0 / beta)) / epsilon


def release_index(L0, L, t, epsilon, rng, beta=0.05, variant="em_geometric", size=None):
    """The private part of GoodRadius given the count profile: a grid index, or -1.

    -1 means r = 0 (zero test fired) for ``em_geometric`` and "never above" for
    ``above_threshold``. ``size=N`` returns N independent releases (batched form for audits).
    """
    n_radii = len(L)
    if variant == "above_threshold":
        gamma = at_gamma(epsilon, n_radii, beta)
        return above_threshold(
            np.asarray(L) / 2.0, (t - 2.0 * gamma) / 2.0, epsilon, rng, size=size
        )
    gamma = em_gamma(epsilon, n_radii, beta)
    half = epsilon / 2.0
    noisy_L0 = laplace(float(L0), 2.0, half, rng, size=size)
    zero = noisy_L0 > t - 2.0 * gamma - 4.0 / epsilon * math.log(1.0 / (2.0 * beta))
    idx = exponential_mechanism(quality(L, L0, t, gamma), half, 1.0, rng, size=size)
    return np.where(zero, -1, idx)


def good_radius(
    X,
    t,
    epsilon,
    bounds,
    grid_step,
    rng,
    accountant,
    beta=0.05,
    variant="em_geometric",
    method="auto",
    delta=0.0,
):
    """Run GoodRadius on the (clipped, quantised) rows of X with pure budget ``epsilon``
    (``variant="rec_concave"``: (``epsilon``, ``delta``), see
    :func:`.rec_concave.good_radius_rec_concave`).

    Each mechanism is charged to ``accountant`` (a BudgetAccountant) before it runs; the data
    are read only after the charge. ``grid_step`` must be at least ``min_grid_step(*bounds, d)``
    (float64 ball counts are exact only down to it), else ValueError before anything is charged.
    Returns a :class:`GoodRadiusResult`.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 3.1 and 4.1 (Algorithm GoodRadius).
    McSherry, F. and Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
    See docs/algorithms.md, section 5.
    """
    if variant == "rec_concave":
        from .rec_concave import good_radius_rec_concave  # it imports this module

        return good_radius_rec_concave(
            X, t, epsilon, delta, bounds, grid_step, rng, accountant, beta=beta, method=method
        )
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS + APPROX_VARIANTS}, got {variant!r}")
    d = X.shape[1]
    grid_step = check_grid_step(grid_step, bounds[0], bounds[1], d)
    grid = radius_grid(bounds, grid_step, d)
    if variant == "above_threshold":
        gamma = at_gamma(epsilon, len(grid), beta)
        accountant.spend("GoodRadius AboveThreshold on L(r)/2", epsilon, 0.0, 1.0)
    else:
        gamma = em_gamma(epsilon, len(grid), beta)
        accountant.spend("GoodRadius zero-radius test (Laplace on L(0))", epsilon / 2.0, 0.0, 2.0)
        accountant.spend("GoodRadius exponential mechanism on Q(r)", epsilon / 2.0, 0.0, 1.0)
    L0, L = count_profile(X, t, grid, method=method, bounds=bounds)
    idx = int(release_index(L0, L, t, epsilon, rng, beta=beta, variant=variant))
    if idx >= 0:
        return GoodRadiusResult(float(grid[idx]), grid, gamma)
    if variant == "above_threshold":
        return GoodRadiusResult(float(grid[-1]), grid, gamma, fired=False)
    return GoodRadiusResult(0.0, grid, gamma)
