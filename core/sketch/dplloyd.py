"""DPLloyd: private Lloyd iterations with noisy per-cluster counts and sums.

Two variants, both pure epsilon-DP, ``add_remove`` by default (``replace`` doubles sensitivities):

* the improved DPLloyd of Su, Cao, Li, Bertino & Jin (CODASPY 2016; VLDB J. 2017), the default:
  sphere-packing initialisation, each iteration's budget split between counts and sums and the
  number of iterations chosen from their MSE analysis;
* SuLQ k-means (Blum, Dwork, McSherry & Nissim, PODS 2005, as described by Su et al.) with
  ``init="uniform"``: uniform initial centres, one joint Laplace scale for counts and sums (the
  "DPLloyd" baseline of Schellekens et al., SPARS 2019, Fig. 1).

Sums are taken of the records centred on the middle of the public box (Su et al. normalise the
data to [-1, 1]^d), so a record moves a cluster's sum by at most the box's half-widths.  A centre
whose noisy count is too small for its noisy mean to be informative keeps its previous position
(:func:`update_centres`): post-processing of the noisy count and sum, which are always drawn.
"""

import functools
import math

import numpy as np

from ..constraints import BOUNDS, POSITIVE_INT, RELATION, StrOptions
from ..data import clip_box
from ..estimator import (
    CenterPredictorMixin,
    PrivateEstimator,
    check_choice,
    check_positive_int,
    epsilon_param,
)
from ..privacy import BudgetAccountant, as_generator
from .frequencies import _as_bounds

INITS = ("private_box", "sphere_packing", "uniform")
INIT_SHARE = 0.1  # share of epsilon spent by init="private_box"
RHO = 0.225  # Su et al.: mean squared normalised centre coordinate (x 1/4)
ITERATIONS = (2, 7)  # Su et al.: range of the number of iterations
ONE_STEP_RATIO = 0.05  # eps / eps_m below which one iteration (su_iterations)
MIN_SUPPORT_RATIO = 0.003  # eps_t / eps_m(k') of the distinct centres kept (effective_clusters)
SULQ_ITERATIONS = 5  # SuLQ k-means baseline (Schellekens et al. 2019, Fig. 1)
_CHUNK_ELEMENTS = 1 << 20


def half_widths(lo, hi):
    """Half side lengths h of the public box: a record centred on the box middle has |x_i| <= h_i."""
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / 2.0


def sum_sensitivity(lo, hi):
    """L1 sensitivity, under add/remove, of one cluster's sum of box-centred records: sum_i h_i.

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (data normalised to [-1, 1]^d: sensitivity d).
    """
    return float(np.sum(half_widths(lo, hi)))


def su_eps_m(n_samples, n_clusters, n_features):
    """Su et al.'s per-iteration budget eps_m = sqrt(500 k^3 / n^2 (d + (4 d rho^2)^(1/3))^3) at
    which their predicted MSE of a DPLloyd centre reaches the threshold they found good enough.

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E., Lyu, M. and Jin, H. (2017). Differentially private
        k-means clustering and a hybrid approach to private optimization. VLDB J. 26(4),
        Sec. 5 (MSE analysis of DPLloyd).
    """
    d, k = float(n_features), float(n_clusters)
    return math.sqrt(
        500.0 * k**3 / float(n_samples) ** 2 * (d + (4.0 * d * RHO**2) ** (1.0 / 3.0)) ** 3
    )


def su_iterations(epsilon, n_clusters, n_features, n_samples=None):
    """Number of iterations: Su et al.'s T = clip(eps / eps_m, 2, 7) (:func:`su_eps_m`), and one
    iteration where eps / eps_m < ``ONE_STEP_RATIO`` (far below the budget their analysis asks
    of one iteration: splitting it over two only doubles the noise of each).

    Without a public ``n_samples`` (add/remove: the number of records is private) the floor of
    this rule, one iteration, is used.

    The one-iteration regime is ours: at ``ONE_STEP_RATIO`` = 0.05 one iteration beat two on UCI
    Letter, optical digits and Yale B (224 block means) wherever eps / eps_m < 0.03 (k = 64 on
    Letter, every cell on digits and Yale B), two beat one from 0.1 on (6 runs per cell,
    benchmarks/sketch/real_data.py data).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E., Lyu, M. and Jin, H. (2017). Differentially private
        k-means clustering and a hybrid approach to private optimization. VLDB J. 26(4),
        Sec. 5 (MSE analysis of DPLloyd: the number of iterations).
    """
    if n_samples is None:
        return 1
    ratio = epsilon / su_eps_m(n_samples, n_clusters, n_features)
    if ratio < ONE_STEP_RATIO:
        return 1
    return int(min(max(ratio, ITERATIONS[0]), ITERATIONS[1]))


def effective_clusters(n_samples, epsilon_t, n_clusters, n_features):
    """How many distinct centres the data can support: the largest k' <= k with
    epsilon_t / eps_m(n, k', d) >= ``MIN_SUPPORT_RATIO`` (eps_m of :func:`su_eps_m` grows as
    k'^(3/2)), at least 1.  ``n_samples`` is public or a noisy count (post-processing).

    Where n / k records per cluster are too few for their noisy means to carry any signal
    (high d, small n), Lloyd runs with k' centres and each is released k / k' times: a centre
    whose noisy count is too small never moves, and left at its data-independent start it
    takes records from the centres that did move.  ``MIN_SUPPORT_RATIO`` = 0.003 is where,
    on Yale B (n = 2,432, d = 224, one iteration), k' centres beat fewer and more (k' = 1 - 2
    at eps = 0.5, 4 at 1, 4 - 16 at 2; 6 runs each); Letter and digits at k <= 64 keep
    k' = k.
    """
    if n_samples <= 0:
        return 1
    ratio_1 = epsilon_t / su_eps_m(n_samples, 1, n_features)
    k_eff = math.floor((ratio_1 / MIN_SUPPORT_RATIO) ** (2.0 / 3.0)) if ratio_1 > 0 else 1
    return int(min(max(k_eff, 1), n_clusters))


def budget_split(epsilon_t, lo, hi):
    """(eps_count, eps_sum) for one iteration of the improved DPLloyd.

    Su et al.'s MSE of a noisy centre is proportional to d S^2 / eps_s^2 + ||c||^2 / eps_c^2
    (S the sum's L1 sensitivity, c the centred centre); with ||c||^2 ~ 4 rho^2 sum_i h_i^2 the
    minimum over eps_s + eps_c = eps_t is at eps_s / eps_c = (d S^2 / (4 rho^2 sum_i h_i^2))^(1/3),
    which on their [-1, 1]^d is d / (4 d rho^2)^(1/3).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E., Lyu, M. and Jin, H. (2017). Differentially private
        k-means clustering and a hybrid approach to private optimization. VLDB J. 26(4),
        Sec. 5 (budget allocation between the sum and the count).
    """
    h = half_widths(lo, hi)
    s = float(np.sum(h))
    ratio = (len(h) * s**2 / (4.0 * RHO**2 * float(np.sum(h**2)))) ** (1.0 / 3.0)
    eps_c = epsilon_t / (1.0 + ratio)
    return eps_c, epsilon_t - eps_c


def noise_scales(epsilon, n_iter, lo, hi, init, neighbouring):
    """Laplace scales (count, sum) per iteration and the per-iteration spends.

    SuLQ k-means (``init="uniform"``): one scale b = T (1 + S) / eps for counts and sums (joint L1
    sensitivity 1 + S, S = :func:`sum_sensitivity`). Improved (any other ``init``): eps_t = eps / T
    split by :func:`budget_split`; counts Lap(1/eps_c), sums Lap(S/eps_s). ``replace`` doubles
    both sensitivities. Returns (b_count, b_sum, [(name, epsilon, sensitivity)] of one iteration).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Su, D., Cao, J., Li, N., Bertino, E., Lyu, M. and Jin, H. (2017). Differentially private
        k-means clustering and a hybrid approach to private optimization. VLDB J. 26(4), Sec. 5.
    """
    factor = 2.0 if neighbouring == "replace" else 1.0
    s = sum_sensitivity(lo, hi)
    eps_t = epsilon / n_iter
    if _is_sulq(init):
        sens = factor * (1.0 + s)
        b = sens / eps_t
        return b, b, [("counts+sums Laplace", eps_t, sens)]
    eps_c, eps_s = budget_split(eps_t, lo, hi)
    return (
        factor / eps_c,
        factor * s / eps_s,
        [("counts Laplace", eps_c, factor), ("sums Laplace", eps_s, factor * s)],
    )


def min_update_count(b_count, b_sum, lo, hi):
    """Smallest noisy count at which a centre moves to its noisy mean.

    Below it the noisy mean is mostly noise: the count could be pure noise (under three
    Laplace scales: an empty cluster passes with probability e^-3 / 2 = 2.5 %), or the noisy
    mean's per-coordinate standard deviation sqrt(2) b_sum / N would exceed the box's smallest
    half-width.  Post-processing: it uses the public scales and the noisy count only.
    """
    return max(1.0, 3.0 * b_count, math.sqrt(2.0) * b_sum / float(np.min(half_widths(lo, hi))))


def update_centres(counts, sums, previous, lo, hi, min_count):
    """New centres from noisy counts (..., k) and noisy sums of box-centred records (..., k, d):
    the noisy mean (clipped to the box) where the noisy count reaches ``min_count``, the
    previous centre elsewhere.  Post-processing only."""
    ok = counts >= min_count
    mid = (np.asarray(lo, dtype=float) + np.asarray(hi, dtype=float)) / 2.0
    means = sums / np.where(ok, counts, 1.0)[..., None] + mid
    means = clip_box(means.reshape(-1, means.shape[-1]), lo, hi).reshape(means.shape)
    return np.where(ok[..., None], means, previous)


def noisy_statistics(Xc, centres_c, b_count, b_sum, rng):
    """The release of one DPLloyd iteration: Laplace-noised count (scale ``b_count``) and
    coordinate sums (scale ``b_sum``) of the box-centred records ``Xc`` nearest to each of the
    box-centred ``centres_c`` ((N, k, d): N independent runs).  Every cluster gets its noise,
    empty ones included (skipping them would reveal that they are empty).  Returns
    (counts (N, k), sums (N, k, d)).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (DPLloyd).
    """
    counts, sums = _sums(Xc, functools.partial(_cluster_stats, centers=centres_c))
    return (
        counts + rng.laplace(0.0, b_count, size=counts.shape),
        sums + rng.laplace(0.0, b_sum, size=sums.shape),
    )


def noisy_step(Xc, centres, b_count, b_sum, lo, hi, rng, min_count):
    """One DPLloyd iteration: :func:`noisy_statistics` of the partition by ``centres`` ((N, k, d)
    in original coordinates), then :func:`update_centres`."""
    mid = (np.asarray(lo, dtype=float) + np.asarray(hi, dtype=float)) / 2.0
    counts, sums = noisy_statistics(Xc, centres - mid, b_count, b_sum, rng)
    return update_centres(counts, sums, centres, lo, hi, min_count)


def sphere_packing_init(n_clusters, lo, hi, rng, max_rejections=100):
    """Data-independent sphere-packing centres: each uniform in the box shrunk by a on every
    side and at least 2a from the centres already placed; a starts at half the shortest side
    and is halved after 100 consecutive rejections.

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (the sphere-packing initialisation of DPLloyd).
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    a = float(np.min(hi - lo)) / 2.0
    while True:
        centers, rejections = [], 0
        while len(centers) < n_clusters and rejections < max_rejections:
            cand = lo + a + rng.random(len(lo)) * np.maximum(hi - lo - 2.0 * a, 0.0)
            if all(np.linalg.norm(cand - c) >= 2.0 * a for c in centers):
                centers.append(cand)
                rejections = 0
            else:
                rejections += 1
        if len(centers) == n_clusters:
            return np.array(centers)
        a /= 2.0


def noisy_moments(Xc, epsilon, lo, hi, rng, neighbouring="add_remove", size=None):
    """Laplace-noised count, coordinate sums and coordinate sums of squares of all the
    box-centred records ``Xc``: (count, sums, squares) of shapes (), (d,), (d,), or with a
    leading ``size`` axis for independent draws.  ``epsilon`` is split as :func:`moment_spends`.

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005 (noisy sums of bounded functions of the records).
    """
    b_count, b_sum, b_sq = (sens / e for _, e, sens in moment_spends(epsilon, lo, hi, neighbouring))
    shape = () if size is None else (int(size),)
    d = Xc.shape[1]
    n, total, total_sq = _sums(Xc, _moments)
    count = n + rng.laplace(0.0, b_count, size=shape)
    sums = total + rng.laplace(0.0, b_sum, size=shape + (d,))
    squares = total_sq + rng.laplace(0.0, b_sq, size=shape + (d,))
    return count, sums, squares


def _moments(Xc):
    """(count, coordinate sums, coordinate sums of squares) of the records ``Xc``."""
    return Xc.shape[0], Xc.sum(axis=0), np.einsum("nd,nd->d", Xc, Xc)


def _sums(Xc, func):
    """``func`` of the box-centred records: in memory (an array), or summed over the partitions
    where they live (a :class:`~privclust.core.sketch.partitioned.PartitionSums`: only the sum
    reaches this process, and the noise is added to it here)."""
    return Xc.map_sum(func) if hasattr(Xc, "map_sum") else func(Xc)


def moment_box(count, sums, squares, b_count, b_sum, lo, hi, width=2.0):
    """A box where the records are, from :func:`noisy_moments` (post-processing): the noisy
    mean m and standard deviation s per coordinate give [m - width s, m + width s] intersected
    with the public box; the public box itself when the noisy count is below
    :func:`min_update_count`."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    h = half_widths(lo, hi)
    if count < min_update_count(b_count, b_sum, lo, hi):
        return lo, hi
    mean = np.clip(sums / count, -h, h)
    sd = np.sqrt(np.clip(squares / count - mean**2, 0.0, h**2))
    mid = (lo + hi) / 2.0
    return np.maximum(mid + mean - width * sd, lo), np.minimum(mid + mean + width * sd, hi)


def box_is_useful(n_samples, epsilon, lo, hi, neighbouring="add_remove"):
    """Whether :func:`moment_box` at ``epsilon`` can use the noisy moments of ``n_samples``
    records: n reaches :func:`min_update_count` for the moments' noise scales (otherwise it
    would almost always fall back to the public box, and the budget would be wasted)."""
    b_count, b_sum = (sens / e for _, e, sens in moment_spends(epsilon, lo, hi, neighbouring)[:2])
    return n_samples >= min_update_count(b_count, b_sum, lo, hi)


def _uses_private_box(init, epsilon, lo, hi, neighbouring, n_samples):
    return (
        isinstance(init, str)
        and init == "private_box"
        and (
            n_samples is None
            or box_is_useful(n_samples, INIT_SHARE * epsilon, lo, hi, neighbouring)
        )
    )


def private_box_init(Xc, n_clusters, epsilon, lo, hi, rng, neighbouring="add_remove"):
    """Sphere packing (:func:`sphere_packing_init`) in the private box of :func:`moment_box`
    computed from :func:`noisy_moments` at ``epsilon``: data-independent in shape, but it lands
    where the records are even when they fill a small corner of the public box.  Returns
    (centres, the noisy count of the records)."""
    b_count, b_sum = (sens / e for _, e, sens in moment_spends(epsilon, lo, hi, neighbouring)[:2])
    moments = noisy_moments(Xc, epsilon, lo, hi, rng, neighbouring)
    return (
        sphere_packing_init(n_clusters, *moment_box(*moments, b_count, b_sum, lo, hi), rng),
        float(moments[0]),
    )


def tile_centres(centers, k_eff):
    """Centres (N, k, d) where run r keeps its first ``k_eff[r]`` centres and repeats them to fill
    k (post-processing: see :func:`effective_clusters`)."""
    n_runs, k, _ = centers.shape
    idx = np.arange(k)[None, :] % np.asarray(k_eff).reshape(n_runs, 1)
    return np.take_along_axis(centers, idx[..., None], axis=1)


def moment_spends(epsilon, lo, hi, neighbouring):
    """[(name, epsilon, sensitivity)] of :func:`noisy_moments`' three Laplace releases: the
    count (L1 sensitivity 1), the sums (sum_i h_i) and the sums of squares (sum_i h_i^2) of the
    box-centred records get 10 %, 45 % and 45 % of ``epsilon``; ``replace`` doubles them."""
    factor = 2.0 if neighbouring == "replace" else 1.0
    h = half_widths(lo, hi)
    return [
        ("init count Laplace", 0.1 * epsilon, factor),
        ("init sum Laplace", 0.45 * epsilon, factor * float(np.sum(h))),
        ("init sum of squares Laplace", 0.45 * epsilon, factor * float(np.sum(h**2))),
    ]


def _is_sulq(init):
    return isinstance(init, str) and init == "uniform"


def _check_init(init, n_clusters, n_features):
    """``init`` as a name in INITS or a (k, d) float array; ValueError naming ``init`` otherwise."""
    if isinstance(init, str):
        return check_choice(init, "init", INITS)
    arr = np.asarray(init, dtype=float)
    if arr.shape != (n_clusters, n_features) or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"init must be one of {INITS} or a finite array of shape "
            f"({n_clusters}, {n_features}), got shape {arr.shape}"
        )
    return arr


def _cluster_stats(X, centers):
    """Counts (N, k) and coordinate sums (N, k, d) of the nearest-centre partition, for N
    centre sets at once, in row chunks."""
    n_runs, k, d = centers.shape
    counts, sums = np.zeros((n_runs, k)), np.zeros((n_runs, k, d))
    c_sq = np.einsum("nkd,nkd->nk", centers, centers)[:, None, :]
    rows = max(1, _CHUNK_ELEMENTS // (n_runs * k))
    eye = np.eye(k)
    for start in range(0, X.shape[0], rows):
        xc = X[start : start + rows]
        dist = c_sq - 2.0 * np.matmul(xc, centers.transpose(0, 2, 1))  # (N, c, k)
        onehot = eye[np.argmin(dist, axis=2)]  # (N, c, k)
        counts += onehot.sum(axis=1)
        sums += np.matmul(onehot.transpose(0, 2, 1), xc)
    return counts, sums


def schedule(
    epsilon,
    n_clusters,
    lo,
    hi,
    n_iter="auto",
    init="private_box",
    neighbouring="add_remove",
    n_samples=None,
):
    """The public plan of a DPLloyd run: (T, b_count, b_sum, spends), where spends lists
    (name, epsilon, sensitivity) of every Laplace release in order.  ``init="private_box"``
    spends ``INIT_SHARE`` of epsilon on :func:`noisy_moments` first, unless a public
    ``n_samples`` shows that the noisy mean would be too noisy to use (:func:`box_is_useful`:
    then it is plain sphere packing with the whole budget); ``n_iter="auto"`` takes
    :func:`su_iterations` on the rest (``n_samples`` only when it is public).
    """
    init_eps = (
        INIT_SHARE * epsilon
        if _uses_private_box(init, epsilon, lo, hi, neighbouring, n_samples)
        else 0.0
    )
    eps_iter = epsilon - init_eps
    if isinstance(n_iter, str):
        n_iter = (
            SULQ_ITERATIONS
            if _is_sulq(init)
            else su_iterations(eps_iter, n_clusters, len(lo), n_samples)
        )
    b_count, b_sum, per_iter = noise_scales(eps_iter, n_iter, lo, hi, init, neighbouring)
    spends = moment_spends(init_eps, lo, hi, neighbouring) if init_eps else []
    for t in range(n_iter):
        spends += [(f"DPLloyd iteration {t + 1}: {name}", e, sens) for name, e, sens in per_iter]
    # the last release takes what is left, so the spends add up to epsilon exactly in floats
    name, _, sens = spends[-1]
    spends[-1] = (name, epsilon - math.fsum(e for _, e, _ in spends[:-1]), sens)
    return n_iter, b_count, b_sum, spends


def _iteration_scales(spends, n_iter, per_iteration):
    """(b_count, b_sum) of each iteration: sensitivity / epsilon of its ``per_iteration``
    spends (1 joint, or counts then sums), the last ``n_iter * per_iteration`` of ``spends``."""
    b = [sens / e for _, e, sens in spends[len(spends) - n_iter * per_iteration :]]
    return [(b[i], b[i + per_iteration - 1]) for i in range(0, len(b), per_iteration)]


def dplloyd_runs(
    X,
    n_clusters,
    epsilon,
    bounds,
    n_iter="auto",
    init="private_box",
    neighbouring="add_remove",
    random_state=None,
    size=None,
    initial_centers=None,
    accountant=None,
    n_samples=None,
):
    """Run DPLloyd ``size`` times independently (batched form for audits); returns centres
    (k, d), or (size, k, d).  X is clipped to the public box first (per record, so it costs no
    privacy). ``initial_centers`` (or an array ``init``) fixes the starting centres; a string
    ``init`` still selects the variant's noise calibration. ``n_samples`` is passed to
    :func:`su_iterations` only when the number of records is public.

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    """
    if neighbouring not in ("add_remove", "replace"):
        raise NotImplementedError(
            f"neighbouring must be 'add_remove' or 'replace', got {neighbouring!r}"
        )
    rng = as_generator(random_state)
    partitioned = hasattr(X, "map_sum")  # records on partitions, clipped and centred there
    if not partitioned:
        X = np.asarray(X, dtype=float)
    k, d = int(n_clusters), X.shape[1]
    init = _check_init(init, k, d)
    lo, hi = _as_bounds(bounds, d)
    Xc = X if partitioned else clip_box(X, lo, hi) - (lo + hi) / 2.0
    n_runs = 1 if size is None else int(size)
    n_iter, b_count, b_sum, spends = schedule(
        epsilon, k, lo, hi, n_iter, init, neighbouring, n_samples
    )
    if accountant is not None:
        for name, eps, sens in spends:
            accountant.spend(name, eps, 0.0, sens)
    if initial_centers is None and not isinstance(init, str):
        initial_centers = init
    eps_t = math.fsum(e for _, e, _ in spends[len(spends) - (1 if _is_sulq(init) else 2) :])
    k_eff = np.full(n_runs, k)
    if initial_centers is not None:
        centers = np.broadcast_to(np.asarray(initial_centers, dtype=float), (n_runs, k, d)).copy()
    elif init == "uniform":
        centers = rng.uniform(lo, hi, size=(n_runs, k, d))
    elif not _uses_private_box(init, epsilon, lo, hi, neighbouring, n_samples):
        centers = np.stack([sphere_packing_init(k, lo, hi, rng) for _ in range(n_runs)])
        if n_samples is not None:
            k_eff[:] = effective_clusters(n_samples, eps_t, k, d)
    else:
        inits = [
            private_box_init(Xc, k, INIT_SHARE * epsilon, lo, hi, rng, neighbouring)
            for _ in range(n_runs)
        ]
        centers = np.stack([c for c, _ in inits])
        k_eff[:] = [
            effective_clusters(n_samples if n_samples is not None else count, eps_t, k, d)
            for _, count in inits
        ]
    centers = tile_centres(centers, k_eff)
    min_count = 1.0 if _is_sulq(init) else min_update_count(b_count, b_sum, lo, hi)
    for b_count_t, b_sum_t in _iteration_scales(spends, n_iter, 1 if _is_sulq(init) else 2):
        centers = tile_centres(
            noisy_step(Xc, centers, b_count_t, b_sum_t, lo, hi, rng, min_count), k_eff
        )
    return centers[0] if size is None else centers


class DPLloyd(CenterPredictorMixin, PrivateEstimator):
    """DPLloyd: private Lloyd iterations with noisy per-cluster counts and sums.

    By default the improved DPLloyd of Su et al. (count/sum budget split, number of iterations
    from their MSE analysis, sphere-packing initial centres) whose sphere packing is placed in a
    private box where the records are (``init="private_box"``, 10 % of epsilon).  With
    ``init="uniform"``, SuLQ k-means (Blum et al. 2005), the "DPLloyd" baseline of
    Schellekens et al., SPARS 2019, Fig. 1; with ``init="sphere_packing"``, Su et al.'s
    data-independent initialisation (their "improved" baseline in the same figure).

    Each round releases, per cluster (empty ones included), a Laplace-noised count and a noised
    sum of the records assigned to the current centres, and moves each centre to sum / count
    (clipped to the box) when the noisy count is large enough (:func:`min_update_count`), else
    keeps it.  Where n / k records per cluster are too few for a noisy mean to carry signal
    (high d, small n: :func:`effective_clusters`, from the public n or the private box's noisy
    count), Lloyd runs with fewer distinct centres and each is released several times, so
    that ``cluster_centers_`` can hold repeated rows.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centres k.
    epsilon : float, default=1.0
        Total privacy parameter.
    bounds : (lo, hi)
        Public box, scalars or length-d arrays; required. The data are clipped to it and the
        sensitivity of the sums follows from it.
    n_iter : int or "auto", default="auto"
        Rounds T; "auto" follows Su et al. (:func:`su_iterations`: 2 to 7 from the public
        number of records under ``replace`` or ``expected_n_samples``, 1 far below their
        eps_m or without a public n), and 5 for ``init="uniform"``.
    init : {"private_box", "sphere_packing", "uniform"} or array of shape (k, d), default="private_box"
        "private_box": sphere packing in the box [m - 2 s, m + 2 s] from a noisy mean m and
        standard deviation s of the records (:func:`private_box_init`, 10 % of epsilon; not
        spent when a public number of records shows it too noisy, :func:`box_is_useful`);
        "sphere_packing": sphere packing in the public box (data-independent); "uniform": SuLQ
        k-means (uniform centres, joint count/sum noise, update whenever the noisy count
        reaches 1); an array: these public initial centres (e.g. decoded by another release).
    neighbouring : {"add_remove", "replace"}, default="add_remove"
        Neighbouring relation of the noisy counts and sums.
    expected_n_samples : int or None, default=None
        A public estimate of the number of records (declared, never read from the data), used
        by ``n_iter="auto"``, the private box's use and :func:`effective_clusters` under
        ``add_remove``; under ``replace`` the number of records is public and used instead.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the initial centres and the noise.
    ledger : Ledger or None, default=None
        Budget ledger charged before the records are read.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Released centres. Released.
    privacy_ : Guarantee
        Pure epsilon-DP under ``neighbouring``.

    Notes
    -----
    No per-record labels are released, so there is no ``fit_predict``; ``predict`` assigns new
    rows to the released centres (post-processing).

    References
    ----------
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (DPLloyd, sphere packing, budget split).
    Su, D., Cao, J., Li, N., Bertino, E., Lyu, M. and Jin, H. (2017). Differentially private
        k-means clustering and a hybrid approach to private optimization. VLDB J. 26(4), Sec. 5
        (the count/sum split and the number of iterations).
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019,
        Sec. III, Fig. 1 (the baselines).

    Examples
    --------
    >>> from privclust.core import DPLloyd
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(-10, 10), random_state=0)
    >>> print(est.plan(n_features=2).summary())
    1.0-DP, pure, add/remove-one neighbours
    >>> est.fit(data.X).cluster_centers_.shape
    (3, 2)
    """

    _released = ("cluster_centers_",)

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "bounds": [None, BOUNDS],
        "n_iter": [StrOptions({"auto"}), POSITIVE_INT],
        "init": [StrOptions(set(INITS)), "array-like"],
        "neighbouring": [RELATION],
        "expected_n_samples": [None, POSITIVE_INT],
    }

    def __init__(
        self,
        n_clusters=8,
        epsilon=1.0,
        bounds=None,
        n_iter="auto",
        init="private_box",
        neighbouring="add_remove",
        expected_n_samples=None,
        random_state=None,
        ledger=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_iter = n_iter
        self.init = init
        self.neighbouring = neighbouring
        self.expected_n_samples = expected_n_samples
        self.random_state = random_state
        self.ledger = ledger

    def schedule(self, n_features, n_samples=None):
        """(T, b_count, b_sum, spends) of this estimator's run (:func:`schedule`); validates
        every parameter.  ``n_samples`` is used only under ``replace`` (where it is public),
        ``expected_n_samples`` otherwise."""
        k = check_positive_int(self.n_clusters, "n_clusters")
        if not (isinstance(self.n_iter, str) and self.n_iter == "auto"):
            check_positive_int(self.n_iter, "n_iter")
        if self.neighbouring not in ("add_remove", "replace"):
            raise NotImplementedError(
                f"neighbouring must be 'add_remove' or 'replace', got {self.neighbouring!r}"
            )
        eps = epsilon_param(self.epsilon)
        if n_features is None:
            raise ValueError(
                "DPLloyd's plan needs n_features (the public box has one side per feature)"
            )
        init = _check_init(self.init, k, n_features)
        lo, hi = _as_bounds(self.bounds, n_features)
        n = n_samples if self.neighbouring == "replace" else self.expected_n_samples
        if n is not None:
            n = check_positive_int(n, "expected_n_samples")
        return schedule(eps, k, lo, hi, self.n_iter, init, self.neighbouring, n)

    def _plan(self, n_samples, n_features):
        acc = BudgetAccountant(epsilon_param(self.epsilon))
        for name, e, sens in self.schedule(n_features, n_samples)[3]:
            acc.spend(name, e, 0.0, sens)
        return acc.guarantee("pure", self.neighbouring)

    def _fit(self, X, rng):
        self._run(X, X.shape[0], X.shape[1], rng)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        the same run, each release's counts and sums computed as partition sums and noised
        once here (:class:`~privclust.core.sketch.partitioned.PartitionSums`)."""
        from .partitioned import PartitionSums

        self._run(PartitionSums(parts, self.bounds), parts.n_samples, parts.n_features, rng)

    def _run(self, data, n_records, n_features, rng):
        """The release on ``data`` (records, or their partition sums); ``n_records`` is used
        only under ``replace``, where n is public."""
        acc = BudgetAccountant(self.epsilon)
        n = n_records if self.neighbouring == "replace" else self.expected_n_samples
        self.cluster_centers_ = dplloyd_runs(
            data,
            self.n_clusters,
            self.epsilon,
            self.bounds,
            self.n_iter,
            self.init,
            self.neighbouring,
            rng,
            accountant=acc,
            n_samples=n,
        )
        self.privacy_ = acc.guarantee("pure", self.neighbouring)
        self.n_features_in_ = n_features
