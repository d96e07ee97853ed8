"""Public random frequencies for compressive sketches (Schellekens et al., SPARS 2019, Eq. (2);
adapted-radius law of Keriven, Bourrier, Gribonval & Perez, Information and Inference (IMA) 2017).

The frequency matrix Omega (d x m) and the dither xi are drawn from a *public* law and published:
nothing here reads the data.  The scale ``frequency_scale`` is the public sigma^2 (pycle's
``Sigma = sigma^2 I``; Keriven et al. estimate it from the data, which would cost budget, so
here it is a parameter): frequencies are omega = (R / sigma) * phi.
"""

import numpy as np

from ..privacy import as_generator
from ..privacy._validation import check_box

LAWS = ("adapted_radius", "gaussian", "folded_gaussian")

# Constant of the default-scale rule: sigma = mean box side / (SCALE_DIVISOR * k^(1/d)).
SCALE_DIVISOR = 7.5
# Default sketch size m = max(SIZE_FACTOR k d, min(10 k d, MAX_PAPER_SIZE)).
SIZE_FACTOR = 2
MAX_PAPER_SIZE = 1000


def _as_bounds(bounds, n_features):
    """Return the public box as two float arrays of length ``n_features``; raise naming ``bounds``."""
    return check_box(bounds, n_features, contains="the cluster centres")


def default_frequency_scale(bounds, n_clusters, n_features):
    """Default sigma^2 derived only from public inputs (the box and k).

    Rule (ours, measured): sigma is a length scale of the *separation between clusters*.
    k centres spread over a box of mean side L are typically L / k^(1/d) apart; we take
    sigma = L / (7.5 * k^(1/d)).  On the mixture of Schellekens et al. (k = d = 10, box +-13.5)
    this gives sigma^2 = 8.1, inside the measured working range 6-10 (sigma^2 = 1 fails even
    without noise: the decoder's target bump around each centre is then ~0.5 wide in a 27-wide
    box, so no start finds it).

    References
    ----------
    See docs/algorithms.md, section 4 (why sigma follows the separation of the centres).
    """
    lo, hi = _as_bounds(bounds, n_features)
    side = float(np.mean(hi - lo))
    sigma = side / (SCALE_DIVISOR * n_clusters ** (1.0 / n_features))
    return sigma**2


def default_sketch_size(n_clusters, n_features):
    """Default number of frequencies m from public k and d: m = max(2 k d, min(10 k d, 1000)).

    Rule (ours, measured): m = 10 k d, the size of Schellekens et al.'s Fig. 1, up to their
    m = 1000 (k = d = 10); beyond, m grows only as 2 k d.  CL-OMPR fits k (d + 1) real
    parameters to 2m real measurements, so m must exceed about k d / 2, but the total noise
    energy of a private sketch grows as m^2 / (eps n)^2 (Theorem 1: per-entry variance
    proportional to m), so a large sketch only adds noise and decoding time.  Measured: on the
    Fig. 1 mixture (k = d = 10, n = 1e5, eps = 1) m = 200 decoded to relative SSE 2.2-5.0
    where m = 1000 gave 1.03-1.09; on UCI Letter (k = 16, eps = 0.5 on the sketch) m = 512,
    1,024 and 2,560 decoded alike (1.8-1.9 before refinement), and at k = 64 m = 10 k d =
    10,240 took 190 s per fit where m = 2 k d takes about 3 s of CPU.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Theorem 1, and Sec. III, Figs. 1 and 3 (m = 10 k d; SSE against m / kd and the SNR).
    Keriven, N., Bourrier, A., Gribonval, R. and Perez, P. (2018). Sketching for large-scale
        learning of mixture models. Information and Inference 7(3), 447-508 (m of order k d).
    """
    kd = int(n_clusters) * int(n_features)
    return max(SIZE_FACTOR * kd, min(10 * kd, MAX_PAPER_SIZE))


def _adapted_radius(size, rng, grid_size=4000, r_max=8.0):
    """Radii with density proportional to sqrt(R^2 + R^4/4) exp(-R^2/2) (Keriven et al. 2017),
    drawn by inverse CDF on a fine grid over [0, 8]."""
    grid = np.linspace(0.0, r_max, grid_size)
    pdf = np.sqrt(grid**2 + grid**4 / 4.0) * np.exp(-(grid**2) / 2.0)
    cdf = np.concatenate([[0.0], np.cumsum((pdf[1:] + pdf[:-1]) / 2.0)])
    cdf /= cdf[-1]
    return np.interp(rng.random(size), cdf, grid)


def draw_frequencies(
    n_features, sketch_size, frequency_scale, law="adapted_radius", random_state=None
):
    """Draw Omega (n_features x sketch_size) i.i.d. from a public law with scale sigma^2.

    ``law``: "adapted_radius" (default, Keriven et al. 2017), "gaussian" (omega ~ N(0, I / sigma^2)) or
    "folded_gaussian" (R = |N(0, 1)| on a uniform direction).

    References
    ----------
    Keriven, N., Tremblay, N., Traonmilin, Y. and Gribonval, R. (2017). Compressive k-means.
        ICASSP 2017 (adapted-radius law).
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Eq. (2).
    """
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    if not (np.isscalar(frequency_scale) and np.isfinite(frequency_scale) and frequency_scale > 0):
        raise ValueError(
            f"frequency_scale must be a positive number (sigma^2), got {frequency_scale!r}"
        )
    n_features, sketch_size = int(n_features), int(sketch_size)
    if n_features < 1 or sketch_size < 1:
        raise ValueError("n_features and sketch_size must be positive integers")
    rng = as_generator(random_state)
    sigma = np.sqrt(frequency_scale)
    g = rng.standard_normal((n_features, sketch_size))
    if law == "gaussian":
        return g / sigma
    direction = g / np.linalg.norm(g, axis=0, keepdims=True)
    if law == "adapted_radius":
        radius = _adapted_radius(sketch_size, rng)
    else:
        radius = np.abs(rng.standard_normal(sketch_size))
    return direction * (radius / sigma)


def draw_dither(sketch_size, random_state=None):
    """Public dither xi ~ U[0, 2 pi)^m (always used with the quantised signature: one-bit
    universal quantisation needs a dither, Boufounos, Rane & Mansour 2017; Schellekens & Jacques
    2018).

    References
    ----------
    Schellekens, V. and Jacques, L. (2018). Quantized compressive k-means. IEEE Signal Process.
        Lett. 25(8), 1211-1215.
    Boufounos, P. T., Rane, S. and Mansour, H. (2017). Representation and coding of signal
        geometry. Inf. Inference 6(4), 349-388.
    """
    return as_generator(random_state).uniform(0.0, 2.0 * np.pi, int(sketch_size))
