"""Vector-Bingham sampler (Kent, Ganeiber & Mardia 2018; Hoff 2009): exact moments, envelope validity, fallback."""

import numpy as np
import pytest

from privclust.core.subspace._bingham import (
    acg_parameters,
    hoff_coordinate_update,
    sample_vector_bingham,
)


def circle_moment(conc):
    """E[y_1^2] for density exp(conc y_1^2) on the circle, by quadrature."""
    phi = np.linspace(0.0, 2 * np.pi, 400_001)[:-1]
    lw = conc * np.cos(phi) ** 2
    w = np.exp(lw - lw.max())
    return float((w * np.cos(phi) ** 2).sum() / w.sum())


def sphere_moments(a):
    """E[y_j^2] (j = 1..3) for density exp(sum a_j y_j^2) on S^2, by quadrature."""
    th = np.linspace(0, np.pi, 1201)[1:-1][:, None]
    ph = np.linspace(0, 2 * np.pi, 2401)[:-1][None, :]
    y = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th) + 0 * ph])
    lw = np.einsum("j,jab->ab", a, y**2)
    w = np.exp(lw - lw.max()) * np.sin(th)
    return (y**2 * w).sum(axis=(1, 2)) / w.sum()


@pytest.mark.parametrize("conc", [0.5, 5.0, 50.0, 5e4])
def test_circle_moments_match_quadrature(conc):
    rng = np.random.default_rng(1)
    N = 100_000
    y = sample_vector_bingham(np.tile([conc, 0.0], (N, 1)), rng)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0, atol=1e-12)
    m = y[:, 0] ** 2
    se = m.std() / np.sqrt(N) + 1e-12
    assert abs(m.mean() - circle_moment(conc)) < 5 * se


def test_sphere_moments_match_quadrature_and_detect_missing_rejection():
    rng = np.random.default_rng(2)
    a = np.array([4.0, 1.5, -3.0])
    N = 100_000
    exact = sphere_moments(a)
    y = sample_vector_bingham(np.tile(a, (N, 1)), rng)
    se = (y**2).std(axis=0) / np.sqrt(N)
    assert np.all(np.abs((y**2).mean(axis=0) - exact) < 5 * se)
    # planted bug: ACG proposals accepted without the rejection step
    lam = a.max() - a
    _, omega, _ = acg_parameters(lam[None])
    w = rng.standard_normal((N, 3)) / np.sqrt(omega)
    bad = w / np.linalg.norm(w, axis=1, keepdims=True)
    assert np.any(np.abs((bad**2).mean(axis=0) - exact) > 5 * se)


@pytest.mark.parametrize("p", [2, 3, 8, 42])
def test_envelope_bounds_target_and_acceptance_stays_bounded(p):
    """log(target / (M * ACG)) <= 0 for every proposal, and the acceptance rate is bounded
    below for concentrations 1e2..1e5 (the range the Gibbs sampler meets)."""
    rng = np.random.default_rng(p)
    lam = np.concatenate([[0.0], 10 ** rng.uniform(2, 5, p - 1)])
    b, omega, log_m = acg_parameters(lam[None])
    np.testing.assert_allclose((1.0 / (b[:, None] + 2 * lam[None])).sum(), 1.0, atol=1e-10)
    w = rng.standard_normal((50_000, p)) / np.sqrt(omega)
    y = w / np.linalg.norm(w, axis=1, keepdims=True)
    log_acc = -(y**2 * lam).sum(1) + p / 2 * np.log((y**2 * omega).sum(1)) - log_m
    assert log_acc.max() <= 1e-9
    assert np.exp(log_acc).mean() > 0.1


def test_uniform_when_flat():
    rng = np.random.default_rng(3)
    y = sample_vector_bingham(np.zeros((50_000, 4)), rng)
    np.testing.assert_allclose((y**2).mean(axis=0), 0.25, atol=0.01)


def test_hoff_coordinate_gibbs_matches_exact_moments():
    rng = np.random.default_rng(4)
    a = np.array([3.0, 1.0, -2.0])
    B = 400
    y = np.tile([0.0, 0.0, 1.0], (B, 1))
    y = hoff_coordinate_update(np.tile(a, (B, 1)), y, rng, n_sweeps=15)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0, atol=1e-12)
    exact = sphere_moments(a)
    assert np.all(np.abs((y**2).mean(axis=0) - exact) < 0.06)


def test_fallback_is_used_with_a_warning():
    rng = np.random.default_rng(5)
    with pytest.warns(RuntimeWarning, match="Hoff"):
        y = sample_vector_bingham(np.array([[2.0, 0.0, 1.0]]), rng, max_proposals=0)
    assert y.shape == (1, 3) and abs(np.linalg.norm(y) - 1) < 1e-12
