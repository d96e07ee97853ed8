"""The sketch operator z_x = f(Omega^T x + xi) / sqrt(m) (Schellekens et al., SPARS 2019, Sec. II,
Eq. (2)-(3)). The 1/sqrt(m) normalisation is not printed in the paper; it is the only one
consistent with both Theorem 1 and the SNR formula (4) (checked by simulation).

Two signatures: the complex exponential f_e(t) = exp(i t) and one-bit universal quantisation
f_q(t) = sign(cos t) + i sign(sin t).  Sums over records are computed in row blocks (never an
n x m matrix); only the masked entries are evaluated when r < m measurements per record are kept.
"""

import numpy as np

from .._threads import single_thread
from .frequencies import draw_dither, draw_frequencies

SIGNATURES = ("complex_exp", "quantized")
# c_f = 2 max_t (|Re f(t)| + |Im f(t)|)  (Schellekens et al., SPARS 2019, Theorem 1)
C_F = {"complex_exp": 2.0 * np.sqrt(2.0), "quantized": 4.0}
# max_t |f(t)| (used by the l2 sensitivity of the Gaussian variant)
MODULUS = {"complex_exp": 1.0, "quantized": np.sqrt(2.0)}
# about 2 MB of float32 per block: measured fastest on 2 cores (cache-resident cos/sin)
_BLOCK_ELEMENTS = 1 << 19
# float32 cos/sin are within a few ulps of the true values, so |Re f| + |Im f| can exceed
# sqrt(2) by ~1e-7 relative (measured max 6.7e-8 over 2e8 phases); the sensitivities of a
# "single" operator are multiplied by this factor so that the bound holds for the computed values.
FLOAT32_SLACK = 1.0 + 2.0**-20


class SketchOperator:
    """Public frequencies ``Omega`` (d x m), dither ``xi`` (m,) and signature.

    Parameters
    ----------
    frequencies : ndarray of shape (d, m)
        Public frequencies, drawn independently of the data
        (:func:`~privclust.core.sketch.frequencies.draw_frequencies`).
    dither : ndarray of shape (m,) or None, default=None
        Public dither of the quantised signature.
    signature : {"complex_exp", "quantized"}, default="complex_exp"
        f_e(t) = exp(i t) or the one-bit f_q(t + xi).
    precision : {"single", "double"}, default="single"
        ``"single"`` evaluates the complex exponential's phases and cos/sin in float32 (about 6x
        faster than float64 for the trigonometry; entries change by ~1e-6 and the bound on |f|
        holds up to ``FLOAT32_SLACK``, which the sensitivities include) and accumulates in float64;
        ``"double"`` is float64 throughout. The quantised signature always reduces its phases in
        float64 (float32 loses enough precision on large phases to flip the signs).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019,
        Sec. II, Eq. (2) and Theorem 1 (c_f).
    Schellekens, V. and Jacques, L. (2018). Quantized compressive k-means. IEEE Signal Process.
        Lett. 25(8), 1211-1215 (the one-bit signature with dither).
    """

    def __init__(self, frequencies, dither=None, signature="complex_exp", precision="single"):
        if signature not in SIGNATURES:
            raise ValueError(f"signature must be one of {SIGNATURES}, got {signature!r}")
        if precision not in ("single", "double"):
            raise ValueError(f"precision must be 'single' or 'double', got {precision!r}")
        omega = np.asarray(frequencies, dtype=float)
        if omega.ndim != 2 or not np.all(np.isfinite(omega)):
            raise ValueError("frequencies must be a finite (n_features, sketch_size) array")
        xi = np.zeros(omega.shape[1]) if dither is None else np.asarray(dither, dtype=float)
        if xi.shape != (omega.shape[1],):
            raise ValueError(f"dither must have shape ({omega.shape[1]},), got {xi.shape}")
        self.frequencies = omega
        self.dither = xi
        self.signature = signature
        self.precision = precision
        # phases = [x, 1] @ [Omega; xi]: the dither rides along in the matrix product
        self._augmented = np.vstack([omega, xi[None, :]])
        self._augmented32 = self._augmented.astype(np.float32)

    def to_public(self):
        """The operator as plain public values (a release stores it this way)."""
        return {
            "frequencies": self.frequencies,
            "dither": self.dither,
            "signature": self.signature,
            "precision": self.precision,
        }

    @classmethod
    def draw(
        cls,
        n_features,
        sketch_size,
        frequency_scale,
        signature="complex_exp",
        law="adapted_radius",
        dither=None,
        precision="single",
        random_state=None,
    ):
        """Draw a public operator; ``dither=None`` means: dither for f_q only (universal quantisation
        needs one; for f_e it is optional and Eq. (2) of Schellekens et al. 2019 has none)."""
        from ..privacy import as_generator

        rng = as_generator(random_state)
        omega = draw_frequencies(n_features, sketch_size, frequency_scale, law, rng)
        use_dither = (signature == "quantized") if dither is None else bool(dither)
        xi = draw_dither(sketch_size, rng) if use_dither else None
        return cls(omega, xi, signature, precision)

    @property
    def n_features(self):
        return self.frequencies.shape[0]

    @property
    def sketch_size(self):
        return self.frequencies.shape[1]

    @property
    def c_f(self):
        return C_F[self.signature]

    @property
    def modulus(self):
        return MODULUS[self.signature]

    @property
    def rounding_slack(self):
        """Factor (>= 1) applied to the sensitivities: :data:`FLOAT32_SLACK` when the float32
        trigonometric path can be used (complex exponential, ``precision="single"``), else 1."""
        return (
            FLOAT32_SLACK
            if (self.precision == "single" and self.signature == "complex_exp")
            else 1.0
        )

    def same_as(self, other):
        """True when two operators define the same map, computed at the same precision (needed
        before merging sketches: the sensitivity of a release, with its :attr:`rounding_slack`,
        must hold for every contribution in the merged sum)."""
        return (self is other) or (
            isinstance(other, SketchOperator)
            and self.signature == other.signature
            and self.precision == other.precision
            and self.frequencies.shape == other.frequencies.shape
            and np.array_equal(self.frequencies, other.frequencies)
            and np.array_equal(self.dither, other.dither)
        )

    def _check(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        return X

    def _signature_parts(self, phases):
        """(Re f, Im f) of real phases; any shape."""
        if self.signature == "complex_exp":
            return np.cos(phases), np.sin(phases)
        # quarter turn index q = floor(t / (pi/2)) mod 4, in float64 (float32 would misplace
        # large phases near the boundaries);
        # sign(cos t) = -1 on quarters 1, 2 and sign(sin t) = -1 on quarters 2, 3
        # (half-open quarters: sign(0) := +1 except on the measure-zero set t = pi/2 + 2 pi j)
        q = np.floor(np.asarray(phases, dtype=float) * (2.0 / np.pi)).astype(np.int32)
        return 1 - ((q + 1) & 2), 1 - (q & 2)

    def contributions(self, X):
        """Per-record z_x (n x m complex).  Materialises n x m: for tests and small inputs only."""
        X = self._check(X)
        re, im = self._signature_parts(X @ self.frequencies + self.dither)
        return (re + 1j * im) / np.sqrt(self.sketch_size)

    def atoms(self, centers):
        """f_e atoms a(c) = exp(i (Omega^T c + xi)) / sqrt(m) (K x m), used by the decoder for
        both signatures: the first Fourier harmonic of f_q is (4/pi) e^{it}, a scale the weights
        absorb (Schellekens et al., SPARS 2019, Sec. III decodes with f_e atoms)."""
        phases = np.atleast_2d(centers) @ self.frequencies + self.dither
        return np.exp(1j * phases) / np.sqrt(self.sketch_size)

    def masked_sum(self, X, measurements_per_record, rng):
        """Sum_i z_{x_i} (.) b_i over the rows of X (complex (m,), float64 accumulation).

        b_i has exactly r ones, uniform and independent of the data (Eq. (3)); for
        r = 1 it is ``rng.integers(0, m, n)``, for 1 < r < m the argpartition of uniform keys.
        Cost O(n r d) for r < m.
        """
        X = self._check(X)
        m, r = self.sketch_size, int(measurements_per_record)
        if not 1 <= r <= m:
            raise ValueError(f"measurements_per_record must be in [1, {m}], got {r}")
        # rows per block: the (rows, m) phases (r = m) or mask keys (1 < r < m) stay ~2 MB
        rows = max(16, _BLOCK_ELEMENTS // (4 if r == 1 else m))
        dense = None
        if r == m and self.signature == "complex_exp" and self.precision == "single":
            dense = self._dense_sum_single
        elif r == m and self.signature == "quantized":
            dense = self._dense_sum_quantized
        if dense is not None:
            with single_thread(X.shape[0] * r):
                re, im = dense(X, rows)
            return (re + 1j * im) / np.sqrt(m)
        acc_re, acc_im = np.zeros(m), np.zeros(m)
        with single_thread(X.shape[0] * r):
            for start in range(0, X.shape[0], rows):
                block = X[start : start + rows]
                if r == m:
                    re, im = self._dense_sum(block)
                else:
                    re, im = self._sparse_sum(block, r, rng)
                acc_re += re
                acc_im += im
        return (acc_re + 1j * acc_im) / np.sqrt(m)

    def _dense_sum_single(self, X, rows):
        """f_e with float32 phases and cos/sin in reused cache-sized buffers (measured
        fastest on 2 cores).  The column sums are accumulated in float64 *within* each block too: a float32
        sum over a block (e.g. a float32 ``ones @ block`` product) carries a data-dependent
        rounding error of up to ~rows^2 2^-24 per entry, about 1 % of the Theorem 1 sensitivity
        at 524 rows, so a record's influence on the released sum would not be bounded by the
        sensitivity the noise is calibrated to.  In float64 the sum of float32 values of
        modulus <= 1 is exact to ~1e-13 (this costs about a third more time)."""
        n, m = X.shape[0], self.sketch_size
        xa = np.ones((min(rows, n), self.n_features + 1), dtype=np.float32)  # [x, 1] per row
        phases = np.empty((min(rows, n), m), dtype=np.float32)
        trig = np.empty_like(phases)
        col = np.empty(m)
        acc_re, acc_im = np.zeros(m), np.zeros(m)
        for start in range(0, n, rows):
            k = min(rows, n - start)
            p, t = phases[:k], trig[:k]
            xa[:k, :-1] = X[start : start + k]
            np.matmul(xa[:k], self._augmented32, out=p)
            np.cos(p, out=t)
            acc_re += np.add.reduce(t, axis=0, dtype=np.float64, out=col)
            np.sin(p, out=t)
            acc_im += np.add.reduce(t, axis=0, dtype=np.float64, out=col)
        return acc_re, acc_im

    def _dense_sum_quantized(self, X, rows):
        """f_q: the column sums of sign(cos t) and sign(sin t) counted from the quarter-turn index
        q = floor(2 t / pi) (the quarters of :meth:`_signature_parts`, float64 phases), in reused
        buffers of ``rows`` rows: over k rows, sum sign(cos t) = k - sum((q + 1) & 2) and
        sum sign(sin t) = k - sum(q & 2), each term 0 or 2.  Integer sums are exact, and the result
        equals :meth:`_dense_sum`'s (tested); 1.4-8x faster by ``benchmarks/sketch/dense_sums.py``
        (no fresh temporaries, whose page faults made the plain version's time vary)."""
        n, m = X.shape[0], self.sketch_size
        xa = np.ones((min(rows, n), self.n_features + 1))  # [x, 1] per row
        phases = np.empty((min(rows, n), m))
        quarter = np.empty(phases.shape, dtype=np.int32)
        bits = np.empty_like(quarter)
        col = np.empty(m, dtype=np.int64)
        twos_re, twos_im = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        for start in range(0, n, rows):
            k = min(rows, n - start)
            p, q, b = phases[:k], quarter[:k], bits[:k]
            xa[:k, :-1] = X[start : start + k]
            np.matmul(xa[:k], self._augmented, out=p)
            np.multiply(p, 2.0 / np.pi, out=p)
            np.floor(p, out=p)
            np.copyto(q, p, casting="unsafe")
            np.add(q, 1, out=b)
            np.bitwise_and(b, 2, out=b)
            twos_re += np.add.reduce(b, axis=0, dtype=np.int64, out=col)
            np.bitwise_and(q, 2, out=b)
            twos_im += np.add.reduce(b, axis=0, dtype=np.int64, out=col)
        return (n - twos_re).astype(float), (n - twos_im).astype(float)

    def _dense_sum(self, block):
        phases = np.hstack([block, np.ones((block.shape[0], 1))]) @ self._augmented
        re, im = self._signature_parts(phases)
        return re.sum(axis=0, dtype=float), im.sum(axis=0, dtype=float)

    def _sparse_sum(self, block, r, rng):
        n, m = block.shape[0], self.sketch_size
        if r == 1:
            idx = rng.integers(0, m, size=(n, 1))
        else:
            idx = np.argpartition(rng.random((n, m)), r - 1, axis=1)[:, :r]
        cols = self._augmented.T[idx]  # (n, r, d + 1)
        phases = np.einsum("nd,nrd->nr", block, cols[:, :, :-1]) + cols[:, :, -1]
        re, im = self._signature_parts(phases)
        flat = idx.ravel()
        return (
            np.bincount(flat, weights=re.ravel().astype(float), minlength=m),
            np.bincount(flat, weights=im.ravel().astype(float), minlength=m),
        )
