"""CompressiveKMeans: private sketch + CL-OMPR decoding (Schellekens et al., SPARS 2019,
Sec. II-III; decoder of Keriven et al., ICASSP 2017)."""
import numpy as np
from ..data import clip_box
from ..privacy import BudgetAccountant, as_generator
from ..release.prepared import PreparedRelease
from ..privacy.estimator import CenterPredictorMixin, PrivateEstimator, delta_param, epsilon_param
from .clompr import clompr
from .frequencies import LAWS, _as_bounds, default_frequency_scale
from .operator import SIGNATURES, SketchOperator
from .release import MECHANISMS, NEIGHBOURING
from .sketch import Sketch

# phases beyond this lose every digit of float32 cos/sin; checked on the public box before a charge
_PHASE_LIMIT = 1e30


class CompressiveKMeans(CenterPredictorMixin, PrivateEstimator):
    """Differentially private compressive k-means (Schellekens et al., SPARS 2019).

    The data are compressed into a sketch of ``sketch_size`` random generalised moments (one
    pass, row blocks), noise is added once (Laplace per Theorem 1 by default: pure epsilon-DP,
    ``replace`` neighbours with n public), and CL-OMPR decodes ``n_clusters`` centroids from the
    noisy sketch alone (post-processing).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centroids k.
    epsilon : float or None, default=1.0
        Privacy budget; None releases the noiseless sketch (no guarantee, ``privacy_.kind="none"``).
    sketch_size : int or None, default=None
        Number of frequencies m; None means 10 * n_clusters * n_features (m = 10kd of Fig. 1).
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
    n_replicates : int, default=3
        Decoder runs; the one with the smallest sketch residual is kept.
    neighbouring : {"replace", "add_remove"}, default="replace"
        "replace" (n public, Theorem 1) or "add_remove" (noisy count, as in Schellekens et al.,
        ICASSP 2019).
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Pure Laplace noise, or approximate-DP Gaussian noise (needs ``delta`` > 0).
    delta : float, default=0.0
        For the Gaussian mechanism.
    numerator_share : float in (0, 1) or None
        add_remove only: the share of epsilon spent on the sum (default 2m / (2m + 1), as pycle).
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
    """

    _released = ("cluster_centers_", "weights_", "sketch_", "operator_")

    def __init__(self, n_clusters=8, epsilon=1.0, sketch_size=None, signature="complex_exp",
                 measurements_per_record=None, frequency_scale=None,
                 frequency_law="adapted_radius", bounds=None, n_replicates=3,
                 neighbouring="replace", mechanism="laplace", delta=0.0, numerator_share=None,
                 block_size=100_000, random_state=None, ledger=None):
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
            raise NotImplementedError(f"neighbouring must be one of {NEIGHBOURING}, got {self.neighbouring!r}")
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {MECHANISMS}, got {self.mechanism!r}")
        epsilon_param(self.epsilon, allow_none=True)
        if self.mechanism == "gaussian":
            delta_param(self.delta, positive=True)
        if isinstance(self.n_replicates, bool) or not isinstance(self.n_replicates, (int, np.integer)) \
                or self.n_replicates < 1:
            raise ValueError(f"n_replicates must be a positive integer, got {self.n_replicates!r}")
        _as_bounds(self.bounds, n_features)
        m = 10 * k * n_features if self.sketch_size is None else self.sketch_size
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"sketch_size must be a positive integer, got {self.sketch_size!r}")
        r = m if self.measurements_per_record is None else self.measurements_per_record
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= m:
            raise ValueError(f"measurements_per_record must be an integer in [1, sketch_size={m}], "
                             f"got {self.measurements_per_record!r}")
        scale = (default_frequency_scale(self.bounds, k, n_features)
                 if self.frequency_scale is None else self.frequency_scale)
        if not (np.isscalar(scale) and np.isfinite(scale) and scale > 0):
            raise ValueError(f"frequency_scale must be a positive number, got {self.frequency_scale!r}")
        return int(m), int(r), float(scale)

    def make_operator(self, n_features, random_state=None):
        """Draw the public operator fit would use (for sketches computed elsewhere, e.g. Dask)."""
        m, _, scale = self._validate(n_features)
        return SketchOperator.draw(n_features, m, scale, signature=self.signature,
                                   law=self.frequency_law,
                                   random_state=as_generator(
                                       self.random_state if random_state is None else random_state))

    def _plan(self, n_samples, n_features):
        if n_features is None:
            raise ValueError("CompressiveKMeans's plan needs n_features (the sketch size and the "
                             "public box depend on it)")
        m, r, _ = self._validate(n_features)
        if self.epsilon is None:
            return BudgetAccountant(1.0).guarantee("none", None)
        delta = self.delta if self.mechanism == "gaussian" else 0.0
        acc = BudgetAccountant(self.epsilon, delta)
        if self.neighbouring == "replace":
            acc.spend(f"sketch {self.mechanism}", self.epsilon, delta)
        else:
            share = 2.0 * m / (2.0 * m + 1.0) if self.numerator_share is None else float(
                self.numerator_share)
            if not 0.0 < share < 1.0:
                raise ValueError(f"numerator_share must be in (0, 1), got {self.numerator_share!r}")
            acc.spend(f"sketch numerator {self.mechanism}", share * self.epsilon, delta)
            acc.spend("sketch count Laplace", (1.0 - share) * self.epsilon, 0.0, 1.0)
        return acc.guarantee("pure" if self.mechanism == "laplace" else "approx",
                             self.neighbouring)

    def neighbouring_relation(self):
        return None if self.epsilon is None else self.neighbouring

    def _before_charge(self, shape, rng):
        """Draw the public operator and check its phases stay finite in float32 on the box."""
        self._operator = self.make_operator(shape[1], random_state=rng)
        lo, hi = _as_bounds(self.bounds, shape[1])
        reach = np.maximum(np.abs(lo), np.abs(hi))
        phase = np.abs(self._operator.frequencies).T @ reach + np.abs(self._operator.dither)
        if not np.all(phase < _PHASE_LIMIT):
            raise ValueError("bounds and frequency_scale give sketch phases beyond "
                             f"{_PHASE_LIMIT:g} on the public box: shrink the box or raise "
                             "frequency_scale")

    def _fit(self, X, rng):
        """Sketch X clipped to the public box, release the sketch privately, decode centroids."""
        _, r, scale = self._validate(X.shape[1])
        operator = self.__dict__.pop("_operator")
        X = clip_box(X, *_as_bounds(self.bounds, X.shape[1]))
        sketch = Sketch.from_array(X, operator, r, block_size=self.block_size, random_state=rng)
        self._release_and_decode(sketch, rng, scale)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a Dask data set, after the charge):
        partition sums of the sketch of the clipped records, noise once here, decoding here
        (:func:`~privclust.core.sketch.partitioned.sketch_partitions`)."""
        from .partitioned import sketch_partitions
        _, r, scale = self._validate(parts.n_features)
        sketch = sketch_partitions(parts, self.__dict__.pop("_operator"), r, self.bounds, rng)
        self._release_and_decode(sketch, rng, scale)

    def fit_sketch(self, sketch):
        """Release and decode a non-private :class:`Sketch` computed elsewhere (file blocks,
        Dask partitions).  Its operator must be public (e.g. from :meth:`make_operator`)."""
        if not isinstance(sketch, Sketch):
            raise TypeError("sketch must be a privclust.core.sketch.Sketch")
        m, r, scale = self._validate(sketch.operator.n_features)
        if sketch.sketch_size != m or sketch.measurements_per_record != r:
            raise ValueError(f"sketch has m={sketch.sketch_size}, r={sketch.measurements_per_record}; "
                             f"the estimator expects m={m}, r={r}")
        if sketch.operator.signature != self.signature:
            raise ValueError("sketch signature differs from the estimator's signature")
        prepared = PreparedRelease.for_fit(self, (None, sketch.operator.n_features), False)
        if prepared.plan.is_private:
            prepared.pay()
            self.__dict__.pop("_operator", None)   # the sketch brings its own operator
        return self._release_and_decode(sketch, prepared.rng, scale)

    def _release_and_decode(self, sketch, rng, scale):
        op = sketch.operator
        if self.epsilon is None:
            values = sketch.mean
            self.privacy_ = BudgetAccountant(1.0).guarantee("none", None)
        else:
            delta = self.delta if self.mechanism == "gaussian" else 0.0
            acc = BudgetAccountant(self.epsilon, delta)
            values = sketch.release(self.epsilon, neighbouring=self.neighbouring,
                                    mechanism=self.mechanism, delta=delta, random_state=rng,
                                    accountant=acc, numerator_share=self.numerator_share)
            self.privacy_ = acc.guarantee("pure" if self.mechanism == "laplace" else "approx",
                                          self.neighbouring)
        centers, weights, residual = clompr(values, op, self.n_clusters, self.bounds,
                                            n_replicates=self.n_replicates, random_state=rng)
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
