"""SNR of Eq. (4) and the exact GMM sketch (Schellekens et al., SPARS 2019, Sec. III)."""

import numpy as np
import pytest

from privclust.core.sketch import (
    Sketch,
    SketchOperator,
    empirical_snr,
    gmm_true_sketch,
    noise_std_for_snr,
    sigma_xi,
    snr_complex_exp,
)


def test_exact_gmm_sketch_matches_a_large_sample(rng):
    means = np.array([[0.0, 1.0], [2.0, -1.0]])
    op = SketchOperator.draw(2, 30, 1.0, dither=True, precision="double", random_state=0)
    X = means[rng.integers(0, 2, 100_000)] + rng.normal(size=(100_000, 2))
    assert np.allclose(Sketch.from_array(X, op).mean, gmm_true_sketch(op, means), atol=5e-3)


def test_closed_form_snr_matches_simulation(rng):
    """n = 2000, m = 40, r = 4, Laplace noise of Theorem 1 at eps = 2."""
    n, m, r, eps = 2000, 40, 4, 2.0
    means = np.array([[0.0, 0.0], [3.0, 0.0]])
    op = SketchOperator.draw(2, m, 1.0, precision="double", random_state=1)
    z = gmm_true_sketch(op, means)
    releases = []
    for _ in range(250):  # fresh data, masks and noise every time
        X = means[rng.integers(0, 2, n)] + rng.normal(size=(n, 2))
        releases.append(Sketch(op, r).update(X, random_state=rng).release(eps, random_state=rng))
    predicted = snr_complex_exp(z, n, m, r, sigma_xi(eps, n, m, r))
    assert empirical_snr(z, np.array(releases)) == pytest.approx(predicted, rel=0.2)


def test_noise_level_inverts_snr():
    z = np.full(100, 0.05 + 0.02j)
    s = noise_std_for_snr(10.0, z, 10**5, 100, 100)
    assert snr_complex_exp(z, 10**5, 100, 100, s) == pytest.approx(10.0)
    with pytest.raises(ValueError, match="noiseless"):
        noise_std_for_snr(1e9, z, 10**5, 100, 100)
