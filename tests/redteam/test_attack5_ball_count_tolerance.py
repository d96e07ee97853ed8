"""Red team, attack 5: a data-dependent tolerance in GoodRadius's ball counts.

GoodRadius ([NSV16] = Nissim, Stemmer & Vadhan, PODS 2016, Alg. 1) relies on L(r) moving by at
most 2 when one record is replaced. The brute-force counts used to centre the records on their own
mean and to widen every comparison by a tolerance growing with max ||x - mean||^2: one far record
widened every count. With 25 copies of a point A, 25 copies of A + 360 grid steps (grid step 1e-9,
d = 3) and t = 50, moving one unrelated record to the box corner moved L(r) from 25 to 50 at
every small radius, while the exact counts did not move. Now the centring and the tolerance come
from the public box, and grid steps too fine for float64 comparisons are refused.
"""

import importlib

import numpy as np
import pytest

from privclust.core.privacy import BudgetAccountant

bc = importlib.import_module("privclust.core.onecluster.ball_counts")
gr = importlib.import_module("privclust.core.onecluster.good_radius")

BOX = (0.0, 1.0)


def attack_pair(step=1e-9):
    """Two tight groups 360 grid steps apart, one extra record; the neighbour moves it to a corner."""
    a = np.full(3, 0.5)
    b = a + np.array([360 * step, 0.0, 0.0])
    X = np.vstack([np.tile(a, (25, 1)), np.tile(b, (25, 1)), [[0.5, 0.5, 0.6]]])
    X = np.round(X / step) * step
    Xp = X.copy()
    Xp[-1] = 1.0  # far record at the box corner
    return X, Xp


def test_attack5_far_record_does_not_move_every_ball_count():
    X, Xp = attack_pair()
    grid = gr.radius_grid(BOX, 1e-9, 3)
    t = 50
    L = {}
    for method in ("brute", "kdtree"):
        for name, data in (("X", X), ("Xp", Xp)):
            L[method, name], _ = bc.capped_top_means(data, grid, t, method=method, bounds=BOX)
    # the exact counts: each group only sees itself below 360 grid steps (L = 25), both above
    expected = np.where(grid < 360e-9 * (1 - 1e-9), 25.0, 50.0)
    for key, value in L.items():
        np.testing.assert_array_equal(value, expected, err_msg=str(key))
    assert np.abs(L["brute", "X"] - L["brute", "Xp"]).max() <= 2.0


def test_attack5_grid_step_below_float_resolution_is_refused_before_any_charge():
    X, _ = attack_pair()
    floor = gr.min_grid_step(0.0, 1.0, 3)
    assert 1e-9 < floor < 2.0**-16  # the attack's step is refused, the default step is not
    acc = BudgetAccountant(1.0, 0.0)
    with pytest.raises(ValueError, match="grid_step"):
        gr.good_radius(X, 50, 1.0, BOX, 1e-9, np.random.default_rng(0), acc)
    assert len(acc.mechanisms) == 0  # nothing was charged
    with pytest.raises(ValueError, match="grid_step"):
        gr.check_grid_step(floor / 2, 0.0, 1.0, 3)
    assert gr.check_grid_step(floor * 2, 0.0, 1.0, 3) == floor * 2


def test_attack5_min_grid_step_is_public_and_grows_with_the_box():
    small = gr.min_grid_step(0.0, 1.0, 3)
    assert gr.min_grid_step(np.zeros(3), np.ones(3)) == small
    assert gr.min_grid_step(0.0, 100.0, 3) == pytest.approx(100 * small, rel=1e-9)
    assert gr.min_grid_step(0.0, 1.0, 30) > small
    with pytest.raises(ValueError, match="d is required"):
        gr.min_grid_step(0.0, 1.0)


def test_attack5_brute_counts_need_the_public_box():
    X, _ = attack_pair()
    with pytest.raises(ValueError, match="bounds"):
        bc.capped_top_means(X, gr.radius_grid(BOX, 2.0**-16, 3), 50, method="brute")


def exact_L(K, radii_units, t):
    """L on integer grid coordinates with exact integer arithmetic (the reference)."""
    D2 = ((K[:, None, :] - K[None, :, :]) ** 2).sum(-1)
    out = []
    for r in radii_units:
        c = np.minimum((D2 <= r * r).sum(1), t)
        out.append(np.sort(c)[::-1][:t].sum() / t)
    return np.array(out)


def test_attack5_L_moves_by_at_most_2_over_random_neighbours_with_far_records():
    """Random replace-one pairs at a grid step just above min_grid_step, ties at every radius."""
    rng = np.random.default_rng(5)
    d, h = 3, 2.0**-22
    assert h >= gr.min_grid_step(0.0, 1.0, d)
    units = 2**22
    grid = gr.radius_grid(BOX, h, d)
    radii_units = np.rint(grid / h).astype(np.int64)
    worst = 0.0
    for _ in range(40):
        n = int(rng.integers(10, 60))
        t = int(rng.integers(2, n + 1))
        centre = rng.integers(0, units + 1, size=d)
        # offsets of 0, 1, 2, 4 ... grid steps along axes: pair distances hit the grid radii exactly
        offs = rng.choice([0, 1, 2, 3, 4, 8, 16, 360], size=(n, d)) * rng.choice(
            [-1, 1], size=(n, d)
        )
        K = np.clip(centre + offs, 0, units)
        K[rng.random(n) < 0.2] = rng.integers(0, units + 1, size=d)  # background records
        corners = [np.zeros(d, np.int64), np.full(d, units), np.array([units, 0, units])]
        X = K * h
        L_ref = exact_L(K, radii_units, t)
        for method in ("brute", "kdtree"):
            L, _ = bc.capped_top_means(X, grid, t, method=method, bounds=BOX)
            np.testing.assert_array_equal(L, L_ref)
        for value in corners + [K[int(rng.integers(n))]]:
            i = int(rng.integers(n))
            Kp = K.copy()
            Kp[i] = value
            Lp_ref = exact_L(Kp, radii_units, t)
            for method in ("brute", "kdtree"):
                Lp, _ = bc.capped_top_means(Kp * h, grid, t, method=method, bounds=BOX)
                np.testing.assert_array_equal(Lp, Lp_ref)
                L0, Lg = gr.count_profile(X, t, grid, method=method, bounds=BOX)
                L0p, Lgp = gr.count_profile(Kp * h, t, grid, method=method, bounds=BOX)
                move = max(abs(L0 - L0p), np.abs(Lg - Lgp).max())
                assert move <= 2.0 + 1e-12
                worst = max(worst, move)
    assert worst > 1.0  # the neighbours do move L
