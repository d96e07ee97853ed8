"""RandomMatrix initialisation of DP-tauCC (spec 5.4): pattern, blocks, flips, data independence."""
import numpy as np
import pytest

from privclust.core.cocluster.init import balanced_labels, block_pattern, random_matrix


@pytest.mark.parametrize("K0,L0", [(2, 2), (3, 3), (3, 5), (5, 3), (4, 9)])
def test_block_pattern(K0, L0):
    P = block_pattern(K0, L0)
    assert P.shape == (K0, L0)
    small = min(K0, L0)
    np.testing.assert_array_equal(P[:small, :small], np.eye(small))
    vectors = P if K0 >= L0 else P.T
    assert len({tuple(v) for v in vectors}) == max(K0, L0)        # distinct patterns
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
    for r, c, p in zip(R0, C0, P0):
        M = pattern[r][:, c]                                        # explicit n x m 0/1 matrix
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
