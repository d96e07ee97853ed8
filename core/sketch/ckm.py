"""CompressiveKMeans: private sketch + CL-OMPR decoding (Schellekens et al., SPARS 2019,
Sec. II-III; decoder of Keriven et al., ICASSP 2017)."""

import functools

import numpy as np

from ..constraints import (
    BOUNDS,
    DELTA,
    EPSILON,
    POSITIVE_INT,
    RELATION,
    SHARE,
    Interval,
    Real,
    StrOptions,
)
from ..data import clip_box
from ..estimator import CenterPredictorMixin, PrivateEstimator, delta_param, epsilon_param
from ..privacy import BudgetAccountant, as_generator
from ..release.prepared import PreparedRelease
from .clompr import clompr, default_replicates
from .frequencies import LAWS, _as_bounds, default_frequency_scale, default_sketch_size
from .operator import SIGNATURES, SketchOperator
from .release import MECHANISMS, NEIGHBOURING
from .sketch import Sketch

# phases beyond this lose every digit of float32 cos/sin; checked on the public box before a charge
_PHASE_LIMIT = 1e30
# Count/sum split of a refinement step, eps_s / eps_c = (d^2 / RHO)^(1/3) (Su et al. 2016)
RHO = 0.225
# Default share of epsilon paid for the refinement, and its number of steps. Measured at
# eps = 1 (relative SSE, 2-3 runs each): UCI Letter, add/remove, k = 16: share 0.5 with 1 / 2 /
# 3 steps 1.56 / 1.35 / 1.47 (1 step without splitting: 1.56); 0.7 with 2 / 3 steps 1.30 / 1.34;
# 0.85 / 0.95 with 2 steps 1.42 / 1.31; k = 64, 0.7 and 2 steps: 2.11.  Schellekens et al.'s
# mixture (k = d = 10, n = 1e5, m = 1000, replace): share 0 / 0.3 / 0.5 / 0.7 gave
# 1.03-1.09 / 1.05-1.11 / 1.03-1.18 / 1.10-1.33 (the sketch's own noise grows as its share
# falls).  0.5 is the compromise.
REFINE_SHARE = 0.5
REFINE_STEPS = 2
# A centre moves to its noisy mean only if that mean's noise sd is at most this fraction of the
# box's mean half-side; otherwise it stays where the decoder put it (the noise is drawn anyway)
MOVE_TOLERANCE = 0.25
# Distance, in mean half-sides of the box, at which an unsupported centre is put beside a
# supported one before the next step
SPLIT_OFFSET = 0.1
_CHUNK_ELEMENTS = 1 << 20


def refinement_scales(epsilon, n_steps, lo, hi, neighbouring):
    """Laplace scales (count, sum) of one refinement step and its spends.

    Records are centred on the box's midpoint (public), so one record changes a cluster's
    coordinate sum by at most S = sum_i (hi_i - lo_i) / 2 in L1 and its count by 1 under
    add/remove; under replace both double (the record can leave one cluster and join another).
    eps_t = epsilon / n_steps is split as eps_s / eps_c = (d^2 / RHO)^(1/3).
    Returns (b_count, b_sum, [(name, epsilon, sensitivity), ...]).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (DPLloyd's noisy counts and sums, the count/sum split).
    """
    factor = 2.0 if neighbouring == "replace" else 1.0
    s = factor * float(np.sum(hi - lo)) / 2.0
    eps_t = epsilon / n_steps
    eps_c = eps_t / (1.0 + (len(lo) ** 2 / RHO) ** (1.0 / 3.0))
    eps_s = eps_t - eps_c
    return (
        factor / eps_c,
        s / eps_s,
        [("counts Laplace", eps_c, factor), ("sums Laplace", eps_s, s)],
    )


def _assigned_stats(X, centers):
    """Counts (N, k) and sums (N, k, d) of the records nearest to each of N centre sets."""
    n_runs, k, d = centers.shape
    counts, sums = np.zeros((n_runs, k)), np.zeros((n_runs, k, d))
    c_sq = np.einsum("nkd,nkd->nk", centers, centers)[:, None, :]
    eye = np.eye(k)
    rows = max(1, _CHUNK_ELEMENTS // (n_runs * k))
    for start in range(0, X.shape[0], rows):
        xc = X[start : start + rows]
        onehot = eye[np.argmin(c_sq - 2.0 * np.matmul(xc, centers.transpose(0, 2, 1)), axis=2)]
        counts += onehot.sum(axis=1)
        sums += np.matmul(onehot.transpose(0, 2, 1), xc)
    return counts, sums


def _split_heaviest(centers, counts, supported, rng, offset):
    """Move every unsupported centre next to a supported one, heaviest first (a split, as in
    Linde, Buzo & Gray 1980), so that the next step shares that cluster between the two.
    Uses only the released noisy counts; a run with no supported centre is left as it is."""
    n_runs, k, d = centers.shape
    order = np.argsort(-np.where(supported, counts, -np.inf), axis=1)
    n_sup = supported.sum(axis=1, keepdims=True)
    rank = np.cumsum(~supported, axis=1) - 1
    donor = np.take_along_axis(order, rank % np.maximum(n_sup, 1), axis=1)
    direction = rng.standard_normal((n_runs, k, d))
    direction /= np.linalg.norm(direction, axis=2, keepdims=True)
    moved = np.take_along_axis(centers, donor[..., None], axis=1) + offset * direction
    return np.where((~supported & (n_sup > 0))[..., None], moved, centers)


def refine_runs(
    X,
    centers,
    epsilon,
    bounds,
    n_steps=1,
    neighbouring="add_remove",
    random_state=None,
    size=None,
    accountant=None,
):
    """DPLloyd steps from given centres (Su et al. 2016): each step releases every cluster's
    Laplace-noised count and coordinate sum (records clipped to the public box and centred on
    its midpoint) and moves the centre to sum / count, clipped to the box.

    Every cluster is noised, empty ones included.  A centre is *supported* when its noisy count
    makes the noise sd of its mean at most ``MOVE_TOLERANCE`` mean half-sides of the box; an
    unsupported centre is not moved to its (noise-dominated) mean, so noise never sends it to a
    corner: before a further step it is placed next to the heaviest supported centre (a split),
    after the last step it stays where it was.  ``epsilon=None`` takes exact Lloyd steps.
    Returns (centres, noisy counts of the last step), with a leading axis of ``size`` if given
    (the batched form for audits).

    References
    ----------
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37.
    Blum, A., Dwork, C., McSherry, F. and Nissim, K. (2005). Practical privacy: the SuLQ
        framework. PODS 2005.
    Linde, Y., Buzo, A. and Gray, R. (1980). An algorithm for vector quantizer design. IEEE
        Trans. Commun. 28(1), 84-95 (splitting).
    """
    rng = as_generator(random_state)
    partitioned = hasattr(X, "map_sum")  # records on partitions, clipped and centred there
    if not partitioned:
        X = np.asarray(X, dtype=float)
    lo, hi = _as_bounds(bounds, X.shape[1])
    mid, half = (lo + hi) / 2.0, float(np.mean(hi - lo)) / 2.0
    Xc = X if partitioned else clip_box(X, lo, hi) - mid
    n_runs = 1 if size is None else int(size)
    k, d = np.shape(centers)[-2:]
    centers = np.broadcast_to(np.asarray(centers, dtype=float) - mid, (n_runs, k, d)).copy()
    min_count = 1.0
    if epsilon is not None:
        b_count, b_sum, spends = refinement_scales(epsilon, n_steps, lo, hi, neighbouring)
        min_count = max(min_count, np.sqrt(2.0) * b_sum / (MOVE_TOLERANCE * half))
    for t in range(int(n_steps)):
        counts, sums = (
            Xc.map_sum(functools.partial(_assigned_stats, centers=centers))
            if partitioned
            else _assigned_stats(Xc, centers)
        )
        if epsilon is not None:
            if accountant is not None:
                for name, eps, sens in spends:
                    accountant.spend(f"refinement step {t + 1}: {name}", eps, 0.0, sens)
            counts = counts + rng.laplace(0.0, b_count, size=counts.shape)
            sums = sums + rng.laplace(0.0, b_sum, size=sums.shape)
        supported = counts >= min_count
        means = np.clip(sums / np.where(supported, counts, 1.0)[..., None], lo - mid, hi - mid)
        centers = np.where(supported[..., None], means, centers)
        if t + 1 < n_steps:
            centers = _split_heaviest(centers, counts, supported, rng, SPLIT_OFFSET * half)
    centers = centers + mid
    return (centers[0], counts[0]) if size is None else (centers, counts)


class CompressiveKMeans(CenterPredictorMixin, PrivateEstimator):
    """Differentially private compressive k-means (Schellekens et al., SPARS 2019).

    The data are compressed into a sketch of ``sketch_size`` random generalised moments (one
    pass, row blocks), noise is added once (Laplace per Theorem 1 by default: pure epsilon-DP,
    ``replace`` neighbours with n public), and CL-OMPR decodes ``n_clusters`` centroids from the
    noisy sketch alone (post-processing).  A declared share ``refine_share`` of epsilon then pays
    ``refine_steps`` DPLloyd steps from the decoded centroids (noisy counts and sums of the
    records nearest to each, Su et al. 2016), which move the centroids from the sketch's
    optimum to the k-means one on data that are not a Gaussian mixture.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centroids k.
    epsilon : float or None, default=1.0
        Privacy budget; None releases the noiseless sketch (no guarantee, ``privacy_.kind="none"``).
    sketch_size : int or None, default=None
        Number of frequencies m; None derives it from k and d
        (:func:`~privclust.core.sketch.frequencies.default_sketch_size`).
    signature : {"complex_exp", "quantized"}, default="complex_exp"
        f_e, or the one-bit f_q with a public dither.
    measurements_per_record : int or None, default=None
        r in [1, m] measurements kept per record (Eq. (3)); None means m (no subsampling).
    frequency_scale : float or None, default=None
        sigma^2 of the frequency law (pycle's Sigma = sigma^2 I), public. None derives it from
        the public box and k only
        (:func:`~privclust.core.sketch.frequencies.default_frequency_scale`,
        about 8 on the paper's mixture); it is never estimated from the data.
    frequency_law : {"adapted_radius", "gaussian", "folded_gaussian"}, default="adapted_radius"
        Law of the frequency radii.
    bounds : (lo, hi)
        Public box (scalars or length-d arrays) searched by the decoder; required.
    n_replicates : int or None, default=None
        Decoder runs; the one with the smallest sketch residual is kept.  None derives it from k
        (:func:`~privclust.core.sketch.clompr.default_replicates`).
    neighbouring : {"replace", "add_remove"}, default="replace"
        "replace" (n public, Theorem 1) or "add_remove" (noisy count, as in Schellekens et al.,
        ICASSP 2019).
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Pure Laplace noise, or approximate-DP Gaussian noise (needs ``delta`` > 0).
    delta : float, default=0.0
        For the Gaussian mechanism.
    numerator_share : float in (0, 1) or None
        add_remove only: the share of epsilon spent on the sum (default 2m / (2m + 1), as pycle).
    refine_share : float in [0, 1) or None, default=None
        Share of epsilon paid for the refinement steps (the sketch gets the rest).  None means
        ``REFINE_SHARE`` (0.5, measured) with the Laplace mechanism and 0 with the Gaussian one
        (the refinement is a Laplace mechanism only).  0 turns the refinement off.
    refine_steps : int, default=2
        DPLloyd steps of the refinement (each gets an equal part of its share).
    block_size : int, default=100000
        Rows per sketching block.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the frequencies, dither, masks, noise and decoder starts.
    ledger : Ledger or None, default=None
        Charged before the release.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        Decoded centroids. Released.
    weights_ : ndarray of shape (k,)
        Mixture weights of the centroids. Released.
    sketch_ : ndarray of shape (m,), complex
        The released noisy sketch. Released.
    operator_ : SketchOperator
        The public operator (frequencies, dither). Released.
    frequency_scale_, sketch_size_, measurements_per_record_ : float, int, int
        The resolved public parameters.
    residual_ : float
        The decoder's sketch residual (a function of the released sketch).
    privacy_ : Guarantee

    Notes
    -----
    No per-record labels are released, so there is no ``fit_predict``. Records are clipped to the
    public box before sketching (per-record, free), and the drawn operator is checked against the
    box before the charge, so no finite input can make the sketch fail after the budget is spent.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019,
        Sec. II (Eqs. (2)-(3), Theorem 1) and Sec. III (Figs. 1 and 3).
    Keriven, N., Tremblay, N., Traonmilin, Y. and Gribonval, R. (2017). Compressive k-means.
        ICASSP 2017 (CL-OMPR decoder).
    Gribonval, R., Blanchard, G., Keriven, N. and Traonmilin, Y. (2021). Compressive statistical
        learning with random feature moments. Math. Stat. Learn. 3(2).
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and Gribonval,
        R. (2019). Differentially private compressive k-means. ICASSP 2019 (add/remove release).
    Su, D., Cao, J., Li, N., Bertino, E. and Jin, H. (2016). Differentially private k-means
        clustering. CODASPY 2016, 26-37 (the refinement's noisy counts and sums).

    Examples
    --------
    >>> from privclust.core import CompressiveKMeans
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> est = CompressiveKMeans(n_clusters=3, epsilon=1.0, bounds=(-10, 10), n_replicates=1,
    ...                         random_state=0).fit(data.X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> print(est.privacy_.summary())
    1.0-DP, pure, replace-one neighbours
    """

    _released = ("cluster_centers_", "weights_", "sketch_", "operator_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "epsilon": [EPSILON, None],
        "n_clusters": [POSITIVE_INT],
        "sketch_size": [None, POSITIVE_INT],
        "signature": [StrOptions(set(SIGNATURES))],
        "measurements_per_record": [None, POSITIVE_INT],
        "frequency_scale": [None, Interval(Real, 0, None, closed="neither")],
        "frequency_law": [StrOptions(set(LAWS))],
        "bounds": [None, BOUNDS],
        "n_replicates": [None, POSITIVE_INT],
        "neighbouring": [RELATION],
        "mechanism": [StrOptions(set(MECHANISMS))],
        "delta": [DELTA],
        "numerator_share": [None, SHARE],
        "refine_share": [None, Interval(Real, 0, 1, closed="left")],
        "refine_steps": [POSITIVE_INT],
        "block_size": [POSITIVE_INT],
    }

    def __init__(
        self,
        n_clusters=8,
        epsilon=1.0,
        sketch_size=None,
        signature="complex_exp",
        measurements_per_record=None,
        frequency_scale=None,
        frequency_law="adapted_radius",
        bounds=None,
        n_replicates=None,
        neighbouring="replace",
        mechanism="laplace",
        delta=0.0,
        numerator_share=None,
        refine_share=None,
        refine_steps=REFINE_STEPS,
        block_size=100_000,
        random_state=None,
        ledger=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.sketch_size = sketch_size
        self.signature = signature
        self.measurements_per_record = measurements_per_record
        self.frequency_scale = frequency_scale
        self.frequency_law = frequency_law
        self.bounds = bounds
        self.n_replicates = n_replicates
        self.neighbouring = neighbouring
        self.mechanism = mechanism
        self.delta = delta
        self.numerator_share = numerator_share
        self.refine_share = refine_share
        self.refine_steps = refine_steps
        self.block_size = block_size
        self.random_state = random_state
        self.ledger = ledger

    def _validate(self, n_features):
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {k!r}")
        if self.signature not in SIGNATURES:
            raise ValueError(f"signature must be one of {SIGNATURES}, got {self.signature!r}")
        if self.frequency_law not in LAWS:
            raise ValueError(f"frequency_law must be one of {LAWS}, got {self.frequency_law!r}")
        if self.neighbouring not in NEIGHBOURING:
            raise NotImplementedError(
                f"neighbouring must be one of {NEIGHBOURING}, got {self.neighbouring!r}"
            )
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {MECHANISMS}, got {self.mechanism!r}")
        epsilon_param(self.epsilon, allow_none=True)
        if self.mechanism == "gaussian":
            delta_param(self.delta, positive=True)
        reps = default_replicates(k) if self.n_replicates is None else self.n_replicates
        if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
            raise ValueError(f"n_replicates must be a positive integer, got {self.n_replicates!r}")
        steps = self.refine_steps
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"refine_steps must be a positive integer, got {steps!r}")
        share = self.refine_share
        if share is None:
            share = REFINE_SHARE if self.mechanism == "laplace" else 0.0
        if not (np.isscalar(share) and 0.0 <= share < 1.0):
            raise ValueError(f"refine_share must be in [0, 1), got {self.refine_share!r}")
        if share > 0 and self.mechanism != "laplace":
            raise ValueError(
                "refine_share > 0 needs mechanism='laplace' (the refinement is a Laplace mechanism)"
            )
        _as_bounds(self.bounds, n_features)
        m = default_sketch_size(k, n_features) if self.sketch_size is None else self.sketch_size
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"sketch_size must be a positive integer, got {self.sketch_size!r}")
        r = m if self.measurements_per_record is None else self.measurements_per_record
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= m:
            raise ValueError(
                f"measurements_per_record must be an integer in [1, sketch_size={m}], "
                f"got {self.measurements_per_record!r}"
            )
        scale = (
            default_frequency_scale(self.bounds, k, n_features)
            if self.frequency_scale is None
            else self.frequency_scale
        )
        if not (np.isscalar(scale) and np.isfinite(scale) and scale > 0):
            raise ValueError(
                f"frequency_scale must be a positive number, got {self.frequency_scale!r}"
            )
        return int(m), int(r), float(scale), int(reps), float(share), int(steps)

    def make_operator(self, n_features, random_state=None):
        """Draw the public operator fit would use (for sketches computed elsewhere, e.g. Dask)."""
        m, _, scale = self._validate(n_features)[:3]
        return SketchOperator.draw(
            n_features,
            m,
            scale,
            signature=self.signature,
            law=self.frequency_law,
            random_state=as_generator(self.random_state if random_state is None else random_state),
        )

    def _plan(self, n_samples, n_features):
        if n_features is None:
            raise ValueError(
                "CompressiveKMeans's plan needs n_features (the sketch size and the "
                "public box depend on it)"
            )
        m, r, _, _, refine, steps = self._validate(n_features)
        if self.epsilon is None:
            return BudgetAccountant(1.0).guarantee("none", None)
        delta = self.delta if self.mechanism == "gaussian" else 0.0
        acc = BudgetAccountant(self.epsilon, delta)
        eps_sketch = (1.0 - refine) * self.epsilon
        if self.neighbouring == "replace":
            acc.spend(f"sketch {self.mechanism}", eps_sketch, delta)
        else:
            share = (
                2.0 * m / (2.0 * m + 1.0)
                if self.numerator_share is None
                else float(self.numerator_share)
            )
            if not 0.0 < share < 1.0:
                raise ValueError(f"numerator_share must be in (0, 1), got {self.numerator_share!r}")
            acc.spend(f"sketch numerator {self.mechanism}", share * eps_sketch, delta)
            acc.spend("sketch count Laplace", (1.0 - share) * eps_sketch, 0.0, 1.0)
        if refine > 0:
            lo, hi = _as_bounds(self.bounds, n_features)
            spends = refinement_scales(refine * self.epsilon, steps, lo, hi, self.neighbouring)[2]
            for t in range(steps):
                for name, eps, sens in spends:
                    acc.spend(f"refinement step {t + 1}: {name}", eps, 0.0, sens)
        return acc.guarantee("pure" if self.mechanism == "laplace" else "approx", self.neighbouring)

    def neighbouring_relation(self):
        return None if self.epsilon is None else self.neighbouring

    def _before_charge(self, shape, rng):
        """Draw the public operator and check its phases stay finite in float32 on the box."""
        self._operator = self.make_operator(shape[1], random_state=rng)
        lo, hi = _as_bounds(self.bounds, shape[1])
        reach = np.maximum(np.abs(lo), np.abs(hi))
        phase = np.abs(self._operator.frequencies).T @ reach + np.abs(self._operator.dither)
        if not np.all(phase < _PHASE_LIMIT):
            raise ValueError(
                "bounds and frequency_scale give sketch phases beyond "
                f"{_PHASE_LIMIT:g} on the public box: shrink the box or raise "
                "frequency_scale"
            )

    def _fit(self, X, rng):
        """Sketch X clipped to the public box, release the sketch privately, decode centroids,
        refine them with DPLloyd steps."""
        r = self._validate(X.shape[1])[1]
        operator = self.__dict__.pop("_operator")
        X = clip_box(X, *_as_bounds(self.bounds, X.shape[1]))
        sketch = Sketch.from_array(X, operator, r, block_size=self.block_size, random_state=rng)
        self._release_and_decode(sketch, rng, X)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        partition sums of the sketch of the clipped records, noise once here, decoding here
        (:func:`~privclust.core.sketch.partitioned.sketch_partitions`)."""
        from .partitioned import PartitionSums, sketch_partitions

        _, r, _, _, _, _ = self._validate(parts.n_features)
        sketch = sketch_partitions(parts, self.__dict__.pop("_operator"), r, self.bounds, rng)
        self._release_and_decode(sketch, rng, PartitionSums(parts, self.bounds))

    def fit_sketch(self, sketch):
        """Release and decode a non-private :class:`Sketch` computed elsewhere (file blocks,
        Dask partitions).  Its operator must be public (e.g. from :meth:`make_operator`)."""
        if not isinstance(sketch, Sketch):
            raise TypeError("sketch must be a privclust.core.sketch.Sketch")
        m, r, _, _, refine, _ = self._validate(sketch.operator.n_features)
        if refine > 0 and self.epsilon is not None:
            raise ValueError("fit_sketch has no records to refine on: set refine_share=0")
        if sketch.sketch_size != m or sketch.measurements_per_record != r:
            raise ValueError(
                f"sketch has m={sketch.sketch_size}, r={sketch.measurements_per_record}; "
                f"the estimator expects m={m}, r={r}"
            )
        if sketch.operator.signature != self.signature:
            raise ValueError("sketch signature differs from the estimator's signature")
        prepared = PreparedRelease.for_fit(self, (None, sketch.operator.n_features), False)
        if prepared.plan.is_private:
            prepared.pay()
            self.__dict__.pop("_operator", None)  # the sketch brings its own operator
        return self._release_and_decode(sketch, prepared.rng)

    def _release_and_decode(self, sketch, rng, X=None):
        """Release the sketch, decode it, and refine the centroids on the records X (if given)."""
        op = sketch.operator
        _, _, scale, reps, refine, steps = self._validate(op.n_features)
        acc = None
        if self.epsilon is None:
            values = sketch.mean
        else:
            delta = self.delta if self.mechanism == "gaussian" else 0.0
            acc = BudgetAccountant(self.epsilon, delta)
            values = sketch.release(
                (1.0 - refine) * self.epsilon,
                neighbouring=self.neighbouring,
                mechanism=self.mechanism,
                delta=delta,
                random_state=rng,
                accountant=acc,
                numerator_share=self.numerator_share,
            )
        centers, weights, residual = clompr(
            values, op, self.n_clusters, self.bounds, n_replicates=reps, random_state=rng
        )
        if X is not None and refine > 0:
            centers, counts = refine_runs(
                X,
                centers,
                None if acc is None else refine * self.epsilon,
                self.bounds,
                steps,
                self.neighbouring,
                rng,
                accountant=acc,
            )
            positive = np.maximum(counts, 0.0)
            if positive.sum() > 0:
                weights = positive / positive.sum()
        self.privacy_ = (
            BudgetAccountant(1.0).guarantee("none", None)
            if acc is None
            else acc.guarantee(
                "pure" if self.mechanism == "laplace" else "approx", self.neighbouring
            )
        )
        self.cluster_centers_ = centers
        self.weights_ = weights
        self.residual_ = residual
        self.sketch_ = values
        self.operator_ = op
        self.sketch_size_ = op.sketch_size
        self.measurements_per_record_ = sketch.measurements_per_record
        self.frequency_scale_ = scale
        self.n_features_in_ = op.n_features
        return self
