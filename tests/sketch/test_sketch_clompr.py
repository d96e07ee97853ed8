"""CL-OMPR decoder (Keriven, Tremblay, Traonmilin & Gribonval, ICASSP 2017)."""

import importlib

import numpy as np
import pytest
from scipy.optimize import check_grad, linear_sum_assignment

from privclust.core.sketch import Sketch, SketchOperator, clompr, gmm_true_sketch

clompr_mod = importlib.import_module("privclust.core.sketch.clompr")


def _match_error(found, truth):
    cost = np.linalg.norm(found[:, None, :] - truth[None, :, :], axis=-1)
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].max()


def test_noiseless_well_separated_mixture_is_recovered(rng):
    k, d = 4, 3
    truth = np.array([[-6.0, -6, 0], [6, -6, 2], [-6, 6, -2], [6, 6, 0]])
    X = truth[rng.integers(0, k, 20000)] + 0.5 * rng.normal(size=(20000, d))
    op = SketchOperator.draw(d, 10 * k * d, 4.0, random_state=1)
    sk = Sketch.from_array(X, op)
    centers, weights, residual = clompr(sk.mean, op, k, (-10, 10), random_state=2)
    assert _match_error(centers, truth) < 0.15
    assert weights.sum() == pytest.approx(1.0)
    assert np.all(np.abs(weights - 0.25) < 0.03)
    assert residual < 0.1


@pytest.mark.parametrize("signature", ["complex_exp", "quantized"])
def test_exact_gmm_sketch_decodes_to_its_means(signature):
    """Quantised sketches are decoded with f_e atoms (the first harmonic of the quantised signature; Schellekens et al.,
    SPARS 2019, Sec. II)."""
    means = np.array([[-5.0, 0.0], [5.0, 1.0], [0.0, 7.0]])
    op = SketchOperator.draw(2, 60, 3.0, signature=signature, random_state=3)
    rng = np.random.default_rng(4)
    X = means[rng.integers(0, 3, 30000)] + 0.3 * rng.normal(size=(30000, 2))
    s = gmm_true_sketch(op, means) if signature == "complex_exp" else Sketch.from_array(X, op).mean
    centers, _, _ = clompr(s, op, 3, (-10, 10), random_state=5)
    assert _match_error(centers, means) < 0.3


def test_gradients_are_analytic_and_correct(rng):
    op = SketchOperator.draw(3, 40, 2.0, random_state=6)
    s = rng.normal(size=40) + 1j * rng.normal(size=40)
    prob = clompr_mod._Problem(s / 10, op.frequencies, op.dither, -np.ones(3) * 5, np.ones(3) * 5)
    theta = np.concatenate([rng.normal(size=6), [0.4, 0.7]])
    assert (
        check_grad(lambda t: prob.objective(t, 2)[0], lambda t: prob.objective(t, 2)[1], theta)
        < 1e-5
    )
    r_re, r_im = prob.s_re, prob.s_im
    c = rng.normal(size=3 * 4)  # four points at once (the batched step 1)
    assert (
        check_grad(
            lambda v: prob.correlations(v, r_re, r_im)[0],
            lambda v: prob.correlations(v, r_re, r_im)[1],
            c,
        )
        < 1e-5
    )


def test_replicates_keep_the_smallest_residual(monkeypatch, rng):
    op = SketchOperator.draw(2, 20, 1.0, random_state=7)
    runs = iter(
        [
            (np.zeros((1, 2)), np.ones(1), 0.5),
            (np.ones((1, 2)), np.ones(1), 0.2),
            (2 * np.ones((1, 2)), np.ones(1), 0.3),
        ]
    )
    monkeypatch.setattr(clompr_mod, "_single_run", lambda *a, **k: next(runs))
    centers, _, residual = clompr(np.ones(20, dtype=complex), op, 1, (-3, 3), n_replicates=3)
    assert residual == 0.2 and np.array_equal(centers, np.ones((1, 2)))


def test_validation():
    op = SketchOperator.draw(2, 20, 1.0, random_state=7)
    with pytest.raises(ValueError, match="shape"):
        clompr(np.ones(5, dtype=complex), op, 2, (-1, 1))
    with pytest.raises(ValueError, match="bounds"):
        clompr(np.ones(20, dtype=complex), op, 2, None)
    with pytest.raises(ValueError, match="n_replicates"):
        clompr(np.ones(20, dtype=complex), op, 2, (-1, 1), n_replicates=0)
