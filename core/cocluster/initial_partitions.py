"""Data-independent initialisation of DP-tauCC: RandomMatrix (Battaglia & Pensa, SDM 2025, Sec. 4.2).

Nothing here reads the data matrix, so the initial partitions and column prototypes cost no
privacy budget. The n x m 0/1 matrix M is never materialised: only the (L0, n) prototypes
P0 = C0^T M^T that DP-tauCC uses are built, from the block pattern plus per-block flip counts.
"""

from itertools import combinations

import numpy as np


def block_pattern(K0, L0):
    """K0 x L0 binary block pattern (Battaglia & Pensa, SDM 2025, Sec. 4.2).

    The first min(K0, L0) rows/columns form the identity (diagonal blocks); each of the
    remaining |K0 - L0| rows (K0 > L0) or columns (L0 > K0) is a distinct binary vector with at
    least two ones, in order of increasing weight. Needs max(K0, L0) < 2**min(K0, L0). The paper
    says only that the rest of M holds |K0 - L0| "blocks of 1's"; we make them distinct vectors
    with at least two ones so that no two initial clusters share a pattern.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.2.
    """
    small, large = min(K0, L0), max(K0, L0)
    if large >= 2**small:
        raise ValueError(f"RandomMatrix needs max(K0, L0) < 2**min(K0, L0); got K0={K0}, L0={L0}")
    extra = []
    for weight in range(2, small + 1):
        for ones in combinations(range(small), weight):
            if len(extra) == large - small:
                break
            vec = np.zeros(small)
            vec[list(ones)] = 1.0
            extra.append(vec)
    pattern = np.vstack([np.eye(small)] + extra) if extra else np.eye(small)
    return pattern if K0 >= L0 else pattern.T


def balanced_labels(n, k, rng, size):
    """(size, n) labels: each run a random permutation of n near-equal blocks 0..k-1."""
    base = np.repeat(np.arange(k), np.diff(np.linspace(0, n, k + 1).round().astype(int)))
    return rng.permuted(np.broadcast_to(base, (size, n)), axis=1)


#: numpy's multivariate hypergeometric sampler ("marginals") needs sum(colors) below this.
_EXACT_FLIP_LIMIT = 10**9


def flip_counts(n, block_sizes, n_flip, flip, rng, size=1):
    """(size, n, L0) numbers of flipped entries of M in each (row i, column block l).

    Flipping ``n_flip`` distinct entries chosen uniformly among the n * m entries puts a
    multivariate hypergeometric number of them in each (row, column block) group of
    ``block_sizes[l]`` entries; this samples those counts directly, in O(n * L0) memory instead
    of O(n_flip) = O(n * m) (the "random 1% of the entries are switched" step of Battaglia & Pensa,
    SDM 2025, Sec. 4.2, without touching n * m cells).
    When n * m >= 1e9 (numpy's sampler limit) every entry flips independently with probability
    ``flip`` instead (binomial counts; same expected number of flips).
    """
    colors = np.tile(np.asarray(block_sizes, dtype=np.int64), n)
    if colors.sum() < _EXACT_FLIP_LIMIT:
        counts = rng.multivariate_hypergeometric(colors, n_flip, size=size, method="marginals")
    else:
        counts = rng.binomial(colors, flip, size=(size, colors.size))
    return counts.reshape(size, n, len(block_sizes))


def random_matrix(n, m, K0, L0, rng, size=1, flip=0.01):
    """RandomMatrix(n, m, K0, L0) for ``size`` independent runs (Battaglia & Pensa, SDM 2025,
    Sec. 4.2).

    Returns (R0, C0, P0): block labels R0 (size, n) and C0 (size, m) of the randomly permuted
    block matrix M (pattern expanded to near-equal blocks, a random ``flip`` fraction of its
    entries switched) and the initial column prototypes P0 = C0^T M^T, shape (size, L0, n).
    Nothing reads the data. Cost O(size * n * L0 + m): the flips are counted per (row, column
    block) by :func:`flip_counts`, never drawn cell by cell.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.2 (RandomMatrix).
    """
    pattern = block_pattern(K0, L0)
    R0 = balanced_labels(n, K0, rng, size)
    C0 = balanced_labels(m, L0, rng, size)
    block_sizes = np.bincount(C0[0], minlength=L0)  # the same in every run (balanced)
    on = pattern[R0]  # (size, n, L0): M's value per block
    P0 = on * block_sizes
    n_flip = int(round(flip * n * m))
    if n_flip:
        P0 += (1.0 - 2.0 * on) * flip_counts(n, block_sizes, n_flip, flip, rng, size)
    return R0, C0, P0.transpose(0, 2, 1).copy()
