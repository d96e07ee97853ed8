"""Ball counts and GoodRadius's L and Q (Nissim, Stemmer & Vadhan, PODS 2016,
Sec. 3.1 and 4.1): exactness and sensitivity on neighbours."""

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privclust.core.onecluster.ball_counts import capped_top_means, multiplicity_top_mean

gr = importlib.import_module("privclust.core.onecluster.good_radius")


def naive_L(X, radii, t):
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    out = []
    for r in radii:
        c = np.minimum((D <= r).sum(1), t)
        out.append(np.sort(c)[::-1][:t].sum() / t)
    return np.array(out)


def clustered(rng, n, d, step=2.0**-8):
    X = np.where(
        rng.random((n, 1)) < 0.5, 0.4 + 0.03 * rng.standard_normal((n, d)), rng.random((n, d))
    )
    return np.clip(np.round(X / step) * step, 0, 1)


@pytest.mark.parametrize("method", ["kdtree", "brute"])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_counts_match_naive(method, d):
    rng = np.random.default_rng(d)
    radii = 2.0**-8 * 2.0 ** np.arange(10)
    for n, t in [(60, 10), (80, 80), (50, 70)]:
        X = clustered(rng, n, d)
        X[: n // 5] = X[0]  # duplicates
        L, _ = capped_top_means(X, radii, t, method=method, bounds=(0.0, 1.0))
        np.testing.assert_allclose(L, naive_L(X, radii, t), atol=1e-12)
        assert multiplicity_top_mean(X, t) == pytest.approx(naive_L(X, [0.0], t)[0])


def test_brute_force_extension_pass():
    """The brute-force schedule guess can be too small; the verified extension must be exact."""
    rng = np.random.default_rng(7)
    X = np.round(rng.random((300, 4)) * 256) / 256  # uniform: the guess from 64 rows is rough
    radii = 2.0**-8 * 2.0 ** np.arange(11)
    L, _ = capped_top_means(X, radii, 250, method="brute", bounds=(0.0, 1.0))
    np.testing.assert_allclose(L, naive_L(X, radii, 250), atol=1e-12)


def adversarial_neighbours(rng, X):
    """Replace one record by: a far corner, a copy of another record, the cluster centre."""
    n, d = X.shape
    for value in (np.ones(d), np.zeros(d), X[rng.integers(n)], np.full(d, 0.4)):
        for i in (0, int(rng.integers(n))):
            Xp = X.copy()
            Xp[i] = value
            yield Xp


@pytest.mark.parametrize("d", [1, 2, 4])
def test_L_sensitivity_at_most_2_and_Q_at_most_1(d):
    rng = np.random.default_rng(10 + d)
    grid = gr.radius_grid((0.0, 1.0), 2.0**-8, d)
    worst_L = worst_Q = 0.0
    for _ in range(12):
        n = int(rng.integers(8, 60))
        t = int(rng.integers(1, n + 1))
        X = clustered(rng, n, d)
        X[: int(rng.integers(0, n // 2 + 1))] = X[-1]
        L0, L = gr.count_profile(X, t, grid, bounds=(0.0, 1.0))
        gamma = gr.em_gamma(1.0, len(grid), 0.05)
        Q = gr.quality(L, L0, t, gamma)
        for Xp in adversarial_neighbours(rng, X):
            L0p, Lp = gr.count_profile(Xp, t, grid, bounds=(0.0, 1.0))
            Qp = gr.quality(Lp, L0p, t, gamma)
            worst_L = max(worst_L, abs(L0 - L0p), np.abs(L - Lp).max())
            worst_Q = max(worst_Q, np.abs(Q - Qp).max())
    assert worst_L <= 2.0 + 1e-12
    assert worst_Q <= 1.0 + 1e-12
    assert worst_L > 1.0  # the adversarial neighbours do move L


def test_L_sensitivity_is_attained_near_2():
    """t identical points vs one moved far away: L drops by 2 - 2/t (the bound is tight)."""
    t = 20
    X = np.zeros((t, 1))
    Xp = X.copy()
    Xp[0] = 1.0
    grid = gr.radius_grid((0.0, 1.0), 2.0**-8, 1)
    L0, L = gr.count_profile(X, t, grid)
    L0p, Lp = gr.count_profile(Xp, t, grid)
    assert L0 - L0p == pytest.approx(2 - 2 / t)
    assert np.abs(L - Lp).max() == pytest.approx(2 - 2 / t)


def test_radius_grid_is_public_and_covers_the_box():
    grid = gr.radius_grid((0.0, 1.0), 2.0**-16, 2)
    assert grid[0] == 2.0**-16 and np.all(grid[1:] / grid[:-1] == 2.0)
    assert grid[-1] >= np.sqrt(2) > grid[-2]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_L_and_Q_sensitivity_on_any_neighbour(data):
    """Hypothesis: any grid dataset, any replaced record, any t, both count methods."""
    d = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 25))
    coords = st.lists(st.integers(0, 16), min_size=d, max_size=d)
    X = np.array(data.draw(st.lists(coords, min_size=n, max_size=n)), dtype=float) / 16
    Xp = X.copy()
    Xp[data.draw(st.integers(0, n - 1))] = np.array(data.draw(coords), dtype=float) / 16
    t = data.draw(st.integers(1, n))
    method = data.draw(st.sampled_from(["kdtree", "brute"]))
    grid = gr.radius_grid((0.0, 1.0), 1 / 16, d)
    L, _ = capped_top_means(X, grid, t, method=method, bounds=(0.0, 1.0))
    Lp, _ = capped_top_means(Xp, grid, t, method=method, bounds=(0.0, 1.0))
    L0, L0p = multiplicity_top_mean(X, t), multiplicity_top_mean(Xp, t)
    assert max(abs(L0 - L0p), np.abs(L - Lp).max()) <= 2 + 1e-12
    gamma = gr.em_gamma(1.0, len(grid), 0.05)
    assert np.abs(gr.quality(L, L0, t, gamma) - gr.quality(Lp, L0p, t, gamma)).max() <= 1 + 1e-12


def test_planted_bug_sum_instead_of_mean_breaks_the_sensitivity_check():
    """The same adversarial-neighbour check must catch L summed over the top t (not averaged)."""
    rng = np.random.default_rng(3)
    grid = gr.radius_grid((0.0, 1.0), 2.0**-8, 2)
    X = clustered(rng, 40, 2)
    t = 20
    worst = max(
        np.abs(t * (capped_top_means(X, grid, t)[0] - capped_top_means(Xp, grid, t)[0])).max()
        for Xp in adversarial_neighbours(rng, X)
    )
    assert worst > 2.0
