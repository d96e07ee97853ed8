"""NoisyAVG: the private average of the points inside a public ball (Nissim, Stemmer & Vadhan,
PODS 2016, Appendix A "Noisy average of vectors in R^d"; the calibration below is our own
derivation, not the paper's constants; analytic Gaussian of Balle & Wang, ICML 2018).

With V_in = V inside B(c, rho), m = |V_in| and Lambda = 2 rho:
m^ = m + Lap(2/eps) - (2/eps) ln(2/delta) - 1; if m^ <= 0 the result is "no output" (None);
else mean(V_in) + N(0, sigma^2 I) with sigma the analytic Gaussian sigma at (eps/2, delta/2)
for L2 sensitivity 2 Lambda / m^. Total (eps, 3 delta / 4)-DP under ``replace``; callers charge
(eps, delta).
"""

import math

import numpy as np

from ..privacy import analytic_gaussian_sigma, laplace


def ball_members(X, center, radius):
    """Boolean mask of the rows of X inside the closed ball B(center, radius)."""
    diff = X - np.asarray(center, dtype=np.float64)
    return np.einsum("ij,ij->i", diff, diff) <= radius * radius


def noisy_avg(X, center, radius, epsilon, delta, rng, size=None):
    """Release the noisy mean of the rows of X inside B(center, radius).

    Returns ``(mean, sigma, noisy_count)``: ``mean`` is a (d,) array or None when the noisy
    count is <= 0, ``sigma`` the noise std used (nan for None), ``noisy_count`` = m + Lap(2/eps)
    (the Laplace part of the release; publishing it costs nothing extra). ``size=N`` (batched
    form for audits) returns arrays of shapes (N, d), (N,), (N,), NaN rows meaning "no output".

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, App. A (NoisyAVG).
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018.
    See docs/algorithms.md, section 5 (our calibration).
    """
    X = np.asarray(X, dtype=np.float64)
    inside = ball_members(X, center, radius)
    m = int(np.count_nonzero(inside))
    mean = X[inside].mean(axis=0) if m else np.zeros(X.shape[1])
    n_rel = 1 if size is None else int(size)
    noisy_count = laplace(float(m), 1.0, epsilon / 2.0, rng, size=n_rel)
    noisy_m = noisy_count - 2.0 / epsilon * math.log(2.0 / delta) - 1.0
    sigmas = np.full(n_rel, np.nan)
    means = np.full((n_rel, X.shape[1]), np.nan)
    ok = noisy_m > 0
    if ok.any():
        unit = analytic_gaussian_sigma(epsilon / 2.0, delta / 2.0, 1.0)
        sigmas[ok] = unit * 4.0 * radius / noisy_m[ok]
        means[ok] = mean + sigmas[ok, None] * rng.standard_normal((int(ok.sum()), X.shape[1]))
    if size is not None:
        return means, sigmas, noisy_count
    if not ok[0]:
        return None, math.nan, float(noisy_count[0])
    return means[0], float(sigmas[0]), float(noisy_count[0])
