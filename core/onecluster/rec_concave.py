"""RecConcave (Beimel, Nissim & Stemmer, APPROX-RANDOM 2013) and GoodRadius run with it, as in
Nissim, Stemmer & Vadhan (PODS 2016, Sec. 3.1): the paper's (eps, delta)-DP radius step.

A quasi-concave promise problem: an ordered domain [T], a quality Q(S, .) of sensitivity 1 that
is quasi-concave (Q(i) >= min{Q(a), Q(b)} for a <= i <= b) and a promise max_i Q(i) >= r. The
recursion reduces [T] to the exponent set {0, .., log T}, so its depth is about log* T.

Measured (benchmarks/onecluster/rec_concave_n.py: planted ball of t = n/2 points, std 0.01, in
[0,1]^2, GoodRadius eps = 1, delta = 1/n^2, 20 trials per n (5 at n = 8000); a radius r is
useful when 0 < r <= 4 r_2 and a ball of radius r around an input point holds >= 0.9 t points,
r_2 the non-private 2-approximation). Smallest tested n from which >= 90 % of the radii were
useful: ``em_geometric`` 250, ``above_threshold`` 500, this variant with the paper's promise
(Gamma ~ 2.3e8 at n = 4000) none up to n = 8000: its zero-radius test always fires, and
t >= 2 Gamma needs n of about 1e9. With the promise set to twice the stability threshold
(Gamma ~ 535; no utility theorem, same privacy) it was useful in 45 % of the runs at n = 4000 and
all 5 at n = 8000. See docs/algorithms.md, section 5.
"""

import math

import numpy as np

from ..privacy import exponential_mechanism, laplace
from .ball_counts import check_grid_step
from .good_radius import GoodRadiusResult, count_profile

__all__ = [
    "BASE_SIZE",
    "log_star",
    "levels",
    "rec_concave_promise",
    "exponent_quality",
    "choose_stable",
    "rec_concave",
    "radius_domain",
    "budget_split",
    "good_radius_rec_concave",
    "release_rec_concave",
]

BASE_SIZE = 32  # domains of at most this size go to the exponential mechanism


def log_star(x):
    """Iterated logarithm: the number of times log2 is applied before the value is <= 1."""
    k = 0
    while x > 1.0:
        x = math.log2(x)
        k += 1
    return k


def levels(T):
    """Domain sizes of the recursion, [T, T_1, ..] down to the base (<= :data:`BASE_SIZE`):
    T_{i+1} = log2(T_i') + 1 with T_i' the power of two >= T_i. Public (depends on T only)."""
    sizes = [int(T)]
    while sizes[-1] > BASE_SIZE:
        sizes.append(math.ceil(math.log2(sizes[-1])) + 1)
    return sizes


def rec_concave_promise(T, epsilon, delta, beta, alpha=0.5):
    """The promise under which RecConcave (every mechanism run with ``epsilon``, ``delta``)
    returns quality >= (1 - alpha) r with probability >= 1 - beta (Beimel, Nissim & Stemmer
    2013, Thm. on RecConcave): 8^{log* T} (36 log* T / (alpha eps)) ln(12 log* T / (beta delta))."""
    ls = max(log_star(T), 1)
    return 8.0**ls * 36.0 * ls / (alpha * epsilon) * math.log(12.0 * ls / (beta * delta))


def exponent_quality(q, promise, alpha):
    """The recursion's quality on {0, .., J}, J = ceil(log2 T): Q'(j) = min{L(j) - (1 - alpha)
    r, r - L(j + 1)}, with L(j) the largest minimum of q over a window of 2^j consecutive points
    of the domain padded to 2^J by min{0, q[-1]}, and L(J + 1) = min{0, L(J)}. Sensitivity 1
    when q has sensitivity 1. Returns (Q', padded q)."""
    q = np.asarray(q, dtype=float)
    J = math.ceil(math.log2(len(q)))
    padded = np.concatenate([q, np.full(2**J - len(q), min(0.0, q[-1]))])
    L = np.empty(J + 2)
    window = padded
    L[0] = window.max()
    for j in range(1, J + 1):  # minima over windows of 2^j from those of 2^(j-1)
        h = 2 ** (j - 1)
        window = np.minimum(window[:-h], window[h:])
        L[j] = window.max()
    L[J + 1] = min(0.0, L[J])
    return np.minimum(L[:-1] - (1.0 - alpha) * promise, promise - L[1:]), padded


def choose_stable(qualities, epsilon, delta, rng):
    """The best of a finite set of solutions, or -1: releases argmax q only if the gap between
    the best and the second-best quality, plus Lap(2/eps), is >= 2 + (2/eps) ln(1/(2 delta)).
    (eps, delta)-DP for a quality of sensitivity 1: the gap has sensitivity 2, and on neighbours
    with different argmax both gaps are <= 2, so releasing it has probability <= delta. A single
    solution is returned without reading the data. (The distance-to-instability choice used by
    Beimel, Nissim & Stemmer (2013) in RecConcave; constants derived for this gap.)

    References
    ----------
    Smith, A. and Thakurta, A. (2013). Differentially private feature selection via stability
        arguments, and the robustness of the Lasso. COLT 2013.
    """
    qualities = np.asarray(qualities, dtype=float)
    if len(qualities) == 1:
        return 0
    best = int(np.argmax(qualities))
    gap = qualities[best] - np.max(np.delete(qualities, best))
    threshold = 2.0 + 2.0 / epsilon * math.log(1.0 / (2.0 * delta))
    return best if laplace(float(gap), 2.0, epsilon, rng) >= threshold else -1


def rec_concave(q, promise, epsilon, delta, rng, alpha=0.5):
    """RecConcave on the qualities ``q`` (T,) of a sensitivity-1 quasi-concave function: an index
    in [0, T), or -1 (a stability check failed). Every mechanism runs with ``epsilon`` (and the
    stability choices with ``delta``); :func:`levels` gives their number: with D = len(levels(T))
    - 1 recursion levels the whole is ((3 D + 1) epsilon, 2 D delta)-DP.

    One level (T > :data:`BASE_SIZE`): recurse on :func:`exponent_quality` with promise alpha r /
    2 and alpha = 1/4 for a scale k; cut the padded domain into intervals of 8 2^k points, twice
    (the second partition shifted by 4 2^k); in each partition choose an interval by
    :func:`choose_stable` on its best quality; finish with the exponential mechanism over the
    union of the chosen intervals. The base is the exponential mechanism on [T].

    References
    ----------
    Beimel, A., Nissim, K. and Stemmer, U. (2013). Private learning and sanitization: pure vs.
        approximate differential privacy. APPROX-RANDOM 2013, LNCS 8096, 363-378 (Algorithm
        RecConcave; journal version Theory Comput. 12(1), 2016).
    McSherry, F. and Talwar, K. (2007). Mechanism design via differential privacy. FOCS 2007.
    """
    q = np.asarray(q, dtype=float)
    T = len(q)
    if T <= BASE_SIZE:
        return int(exponential_mechanism(q, epsilon, 1.0, rng))
    q_exp, padded = exponent_quality(q, promise, alpha)
    k = rec_concave(q_exp, alpha * promise / 2.0, epsilon, delta, rng, alpha=0.25)
    if k < 0:
        return -1
    width = 8 * 2**k
    chosen = []
    for offset in (0, width // 2):
        starts = np.arange(offset, len(padded), width)
        if starts.size == 0:
            continue
        best = np.maximum.reduceat(padded[offset:], starts - offset)
        i = choose_stable(best, epsilon, delta, rng)
        if i >= 0:
            chosen.append(np.arange(starts[i], min(starts[i] + width, T)))
    candidates = np.unique(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)
    if candidates.size == 0:
        return -1
    return int(candidates[exponential_mechanism(q[candidates], epsilon, 1.0, rng)])


def radius_domain(bounds, grid_step, d, n_radii):
    """The public linear radius domain {s, 2 s, .., T s}: s = max(diameter / n_radii,
    grid_step), T = ceil(diameter / s). NSV16 use the step grid_step / 2; a coarser public step
    keeps the count profile at O(n T)."""
    lo, hi = bounds
    diameter = float(
        np.linalg.norm(np.broadcast_to(np.asarray(hi, float) - np.asarray(lo, float), (d,)))
    )
    step = max(diameter / int(n_radii), float(grid_step))
    return step * np.arange(1, max(1, math.ceil(diameter / step)) + 1)


def budget_split(epsilon, delta, T):
    """(eps per mechanism, delta per stability choice, recursion levels D) of the RecConcave
    half (epsilon / 2, delta) of GoodRadius on a domain of T radii."""
    D = len(levels(T)) - 1
    return epsilon / 2.0 / (3 * D + 1), (delta / (2 * D) if D else 0.0), D


def good_radius_rec_concave(
    X,
    t,
    epsilon,
    delta,
    bounds,
    grid_step,
    rng,
    accountant,
    beta=0.05,
    n_radii=1024,
    promise=None,
    method="auto",
):
    """GoodRadius with RecConcave (Nissim, Stemmer & Vadhan 2016, Sec. 3.1), (epsilon, delta)-DP.

    The zero-radius test of the ``em_geometric`` variant (Laplace, epsilon / 2), then RecConcave
    (epsilon / 2, delta) with approximation 1/2 over the linear radius domain
    (:func:`radius_domain`) on Q(r) = 1/2 min{L(r) - t + 4 Gamma, t - L(r / 2)}, Gamma the promise:
    by default :func:`rec_concave_promise` at the per-mechanism budget (the paper's choice);
    ``promise`` overrides it (privacy does not depend on it, only utility). Each mechanism is
    charged to ``accountant`` before the data are read. Returns a ``GoodRadiusResult``; when a
    stability check fails the radius is the largest of the domain and ``fired`` is False.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Sec. 3.1 (Algorithm GoodRadius with RecConcave).
    Beimel, A., Nissim, K. and Stemmer, U. (2013). Private learning and sanitization: pure vs.
        approximate differential privacy. APPROX-RANDOM 2013.
    """
    if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1) for variant='rec_concave'; got {delta!r}")
    d = X.shape[1]
    grid_step = check_grid_step(grid_step, bounds[0], bounds[1], d)
    grid = radius_domain(bounds, grid_step, d, n_radii)
    eps_m, delta_m, D = budget_split(epsilon, delta, len(grid))
    gamma = (
        float(promise)
        if promise is not None
        else rec_concave_promise(len(grid), eps_m, delta_m if D else delta, beta)
    )
    accountant.spend("GoodRadius zero-radius test (Laplace on L(0))", epsilon / 2.0, 0.0, 2.0)
    accountant.spend(
        f"GoodRadius RecConcave: {D + 1} exponential mechanisms", eps_m * (D + 1), 0.0, 1.0
    )
    if D:
        accountant.spend(
            f"GoodRadius RecConcave: {2 * D} stability choices", eps_m * 2 * D, delta, 1.0
        )
    # L at every multiple of s / 2 up to T s: L(r_k) = L_half[2k - 1], L(r_k / 2) = L_half[k - 1]
    L0, L_half = count_profile(
        X, t, grid[0] / 2.0 * np.arange(1, 2 * len(grid) + 1), method=method, bounds=bounds
    )
    q = 0.5 * np.minimum(L_half[1::2] - t + 4.0 * gamma, t - L_half[: len(grid)])
    idx = release_rec_concave(L0, q, t, gamma, epsilon, delta, rng, beta=beta)
    if idx == -1:
        return GoodRadiusResult(0.0, grid, gamma)
    if idx == -2:
        return GoodRadiusResult(float(grid[-1]), grid, gamma, fired=False)
    return GoodRadiusResult(float(grid[idx]), grid, gamma)


def release_rec_concave(L0, q, t, gamma, epsilon, delta, rng, beta=0.05):
    """The private part of :func:`good_radius_rec_concave` given L(0) and the qualities ``q`` on
    the radius domain: an index, -1 (zero-radius test fired) or -2 (a stability check failed).
    The zero test is that of the ``em_geometric`` variant (Laplace, epsilon / 2)."""
    eps_m, delta_m, D = budget_split(epsilon, delta, len(q))
    if laplace(float(L0), 2.0, epsilon / 2.0, rng) > t - 2.0 * gamma - 4.0 / epsilon * math.log(
        1.0 / (2.0 * beta)
    ):
        return -1
    idx = rec_concave(q, gamma, eps_m, delta_m if D else delta, rng)
    return idx if idx >= 0 else -2
