"""Unit tests of the Clopper-Pearson audit itself (privclust.core.privacy.audit)."""

import math

import numpy as np
import pytest
from scipy import stats

from privclust.core.privacy.audit import clopper_pearson_epsilon, epsilon_lower_bound


def test_clopper_pearson_matches_scipy_beta():
    k1, m1, k2, m2, alpha = 300, 1000, 100, 1000, 1e-3
    p_lo = stats.beta.ppf(alpha / 2, k1, m1 - k1 + 1)
    q_hi = stats.beta.ppf(1 - alpha / 2, k2 + 1, m2 - k2)
    assert clopper_pearson_epsilon(k1, m1, k2, m2, 0.0, alpha) == pytest.approx(
        math.log(p_lo / q_hi)
    )
    assert clopper_pearson_epsilon(k1, m1, k2, m2, 0.01, alpha) == pytest.approx(
        math.log((p_lo - 0.01) / q_hi)
    )
    assert clopper_pearson_epsilon(0, 1000, 0, 1000) == -np.inf
    assert clopper_pearson_epsilon(5, 1000, 0, 1000, delta=0.5) == -np.inf
    # all-in events: q_hi = 1 when k2 = m2
    assert clopper_pearson_epsilon(1000, 1000, 1000, 1000) < 0


def test_identical_distributions_give_small_bound():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.normal(size=100_000), rng.normal(size=100_000)
        assert epsilon_lower_bound(a, b) < 0.1
        c, d = rng.integers(0, 5, 100_000), rng.integers(0, 5, 100_000)
        assert epsilon_lower_bound(c, d, categorical=True) < 0.1


def test_disjoint_outputs_give_large_bound():
    a, b = np.zeros(10_000), np.ones(10_000)
    assert epsilon_lower_bound(a, b) > 5
    assert epsilon_lower_bound(b, a) > 5  # both directions are searched
    assert epsilon_lower_bound(a, b, categorical=True) > 5
    # with delta close to the mass of the distinguishing event, nothing is left
    assert epsilon_lower_bound(a, b, delta=0.999) == 0.0


def test_known_laplace_shift_is_recovered():
    rng = np.random.default_rng(1)
    a = rng.laplace(0, 1, 400_000)
    b = 1 + rng.laplace(0, 1, 400_000)
    value = epsilon_lower_bound(a, b, rng=np.random.default_rng(2))
    assert 0.85 < value <= 1.0


def test_categorical_single_category():
    rng = np.random.default_rng(3)
    p, q = np.array([0.1, 0.45, 0.45]), np.array([0.1 / math.e**2, 0.5, 0.5 - 0.1 / math.e**2])
    a, b = rng.choice(3, 200_000, p=p), rng.choice(3, 200_000, p=q)
    assert 1.8 < epsilon_lower_bound(a, b, categorical=True) <= 2.0


def test_input_validation():
    with pytest.raises(ValueError, match="1-D"):
        epsilon_lower_bound(np.zeros((10, 2)), np.zeros(10))
    with pytest.raises(ValueError, match="NaN"):
        epsilon_lower_bound(np.r_[np.zeros(9), np.nan], np.zeros(10))
    with pytest.raises(TypeError, match="numeric"):
        epsilon_lower_bound(np.array(["a"] * 10), np.zeros(10))
    with pytest.raises(ValueError, match="alpha"):
        epsilon_lower_bound(np.zeros(10), np.zeros(10), alpha=0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound(np.zeros(10), np.zeros(10), delta=1.0)
