"""RandomMatrix initialisation of DP-tauCC (Battaglia & Pensa, SDM 2025, Alg. 1): pattern, blocks, flips, data independence."""

import numpy as np
import pytest

from privclust.core.cocluster.initial_partitions import (
    balanced_labels,
    block_pattern,
    random_matrix,
)


@pytest.mark.parametrize("K0,L0", [(2, 2), (3, 3), (3, 5), (5, 3), (4, 9)])
def test_block_pattern(K0, L0):
    P = block_pattern(K0, L0)
    assert P.shape == (K0, L0)
    small = min(K0, L0)
    np.testing.assert_array_equal(P[:small, :small], np.eye(small))
    vectors = P if K0 >= L0 else P.T
    assert len({tuple(v) for v in vectors}) == max(K0, L0)  # distinct patterns
    weights = vectors[small:].sum(axis=1)
    assert np.all(weights >= 2) and np.all(np.diff(weights) >= 0)


def test_block_pattern_needs_enough_patterns():
    with pytest.raises(ValueError, match="2\\*\\*min"):
        block_pattern(2, 4)


def test_balanced_labels(rng):
    labels = balanced_labels(10, 3, rng, size=4)
    for row in labels:
        assert sorted(np.bincount(row, minlength=3)) == [3, 3, 4]


def test_prototypes_match_the_expanded_matrix(rng):
    n, m, K0, L0 = 13, 11, 3, 4
    R0, C0, P0 = random_matrix(n, m, K0, L0, rng, size=3, flip=0.0)
    pattern = block_pattern(K0, L0)
    for r, c, p in zip(R0, C0, P0, strict=True):
        M = pattern[r][:, c]  # explicit n x m 0/1 matrix
        onehot = np.eye(L0)[c]
        np.testing.assert_array_equal(p, (M @ onehot).T)


def test_flips_change_one_percent_of_entries(rng):
    n, m = 60, 50
    seed = np.random.SeedSequence(3)
    R0, C0, P0 = random_matrix(n, m, 3, 3, np.random.default_rng(seed), flip=0.01)
    R1, C1, P1 = random_matrix(n, m, 3, 3, np.random.default_rng(seed), flip=0.0)
    np.testing.assert_array_equal(R0, R1)
    np.testing.assert_array_equal(C0, C1)
    moved = np.abs(P0 - P1).sum()
    assert moved <= 30 and (30 - moved) % 2 == 0 and np.all(P0 >= 0)


def test_flip_counts_follow_the_uniform_distinct_cells_law():
    """Flipping n_flip distinct uniform cells puts Hypergeometric(|C_l|, nm - |C_l|, n_flip)
    flips in each (row, column block): exact total, right mean and variance per block."""
    from privclust.core.cocluster.initial_partitions import flip_counts

    n, sizes, n_flip, S = 7, np.array([3, 4, 6]), 20, 40_000
    N = n * sizes.sum()
    f = flip_counts(n, sizes, n_flip, n_flip / N, np.random.default_rng(4), size=S)
    assert f.shape == (S, n, 3) and np.all(f.sum(axis=(1, 2)) == n_flip)
    assert np.all(f <= sizes) and np.all(f >= 0)
    mean = n_flip * sizes / N
    var = mean * (1 - sizes / N) * (N - n_flip) / (N - 1)
    got = f.reshape(-1, 3)
    np.testing.assert_allclose(got.mean(axis=0), mean, atol=5 * np.sqrt(var.max() / got.shape[0]))
    np.testing.assert_allclose(got.var(axis=0), var, rtol=0.05)


def test_random_matrix_cost_does_not_grow_with_n_times_m():
    """Planted regression guard: drawing the 1 % flips cell by cell would need ~4.8 GB of
    indices for 200k x 300k; counting them per block needs O(n * L0)."""
    import tracemalloc

    tracemalloc.start()
    try:
        R0, C0, P0 = random_matrix(200_000, 300_000, 2, 2, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert P0.shape == (1, 2, 200_000) and peak < 60 * 2**20
    assert abs(P0.sum() - 200_000 * 150_000) < 0.01 * 200_000 * 300_000
