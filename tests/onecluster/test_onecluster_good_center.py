"""GoodCenter pieces: the merged-empty-interval exponential mechanism and the per-axis budget."""

import importlib
import math

import numpy as np
import pytest

from privclust.core.privacy import advanced_composition, exponential_probabilities

gc = importlib.import_module("privclust.core.onecluster.good_center")


def test_em_intervals_has_the_exact_exponential_mechanism_law():
    """Merging the empty intervals must give the same law as the EM over every interval."""
    Z = np.eye(1)
    lo, hi = np.zeros(1), np.ones(1)
    p = 0.1
    U = np.array([[0.05], [0.05], [0.31], [0.55], [0.57], [0.58]])
    rng = np.random.default_rng(0)
    draws = np.array([gc._em_intervals(U, Z, lo, hi, p, 1.0, rng)[0] for _ in range(8000)])
    first, last = math.floor(-0.0 / p), math.floor(1.0 / p)
    cells = np.arange(first, last + 1)
    counts = np.array([np.sum(np.floor(U[:, 0] / p) == c) for c in cells])
    expected = exponential_probabilities(counts, 1.0, 1.0)
    observed = np.array([np.mean(draws == c) for c in cells])
    assert np.all(
        np.abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / 8000) + 1e-3
    )


def test_em_intervals_tiny_interval_length_is_cheap():
    Z = np.linalg.qr(np.random.default_rng(1).standard_normal((150, 150)))[0]
    U = np.random.default_rng(2).random((50, 150)) @ Z
    idx = gc._em_intervals(U, Z, np.zeros(150), np.ones(150), 1e-9, 0.1, np.random.default_rng(3))
    assert idx.shape == (150,)  # ~1e10 candidate intervals per axis, never materialised


@pytest.mark.parametrize("d, delta", [(2, 1e-6), (10, 1e-6), (50, 1e-6), (200, 1e-6)])
def test_per_axis_budget_composes_within_the_axis_stage(d, delta):
    eps = 0.25
    eps_a, uses_delta = gc.em_axis_epsilon(eps, delta, d)
    if uses_delta:
        total = advanced_composition(eps_a, 0.0, d, delta)
        assert total[0] <= eps * (1 + 1e-9) and total[1] <= delta
    else:
        assert eps_a * d == pytest.approx(eps)
    assert eps_a >= eps / d
    assert uses_delta == (
        d >= 50
    )  # basic composition wins for small d (docs/algorithms.md, section 5)
