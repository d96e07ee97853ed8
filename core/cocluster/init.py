"""Data-independent initialisation of DP-tauCC: RandomMatrix ([BP25] Sec. 4.2, spec 5.4).

Nothing here reads the data matrix, so the initial partitions and column prototypes cost no
privacy budget. The n x m 0/1 matrix M is never materialised: only the (L0, n) prototypes
P0 = C0^T M^T that DP-tauCC uses are built, from the block pattern plus the flipped entries.
"""
from itertools import combinations

import numpy as np


def block_pattern(K0, L0):
    """K0 x L0 binary block pattern (spec 5.4 step 1).

    The first min(K0, L0) rows/columns form the identity (diagonal blocks); each of the
    remaining |K0 - L0| rows (K0 > L0) or columns (L0 > K0) is a distinct binary vector with at
    least two ones, in order of increasing weight. Needs max(K0, L0) < 2**min(K0, L0).
    """
    small, large = min(K0, L0), max(K0, L0)
    if large >= 2 ** small:
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


def random_matrix(n, m, K0, L0, rng, size=1, flip=0.01):
    """RandomMatrix(n, m, K0, L0) for ``size`` independent runs (spec 5.4).

    Returns (R0, C0, P0): block labels R0 (size, n) and C0 (size, m) of the randomly permuted
    block matrix M (pattern expanded to near-equal blocks, a random ``flip`` fraction of its
    entries switched) and the initial column prototypes P0 = C0^T M^T, shape (size, L0, n).
    """
    pattern = block_pattern(K0, L0)
    R0 = balanced_labels(n, K0, rng, size)
    C0 = balanced_labels(m, L0, rng, size)
    sizes = np.stack([np.bincount(c, minlength=L0) for c in C0]).astype(np.float64)
    P0 = pattern[R0].transpose(0, 2, 1) * sizes[:, :, None]
    n_flip = int(round(flip * n * m))
    if n_flip:
        if size == 1:
            cells = rng.choice(n * m, size=n_flip, replace=False)[None, :]
        else:
            cells = np.argpartition(rng.random((size, n * m)), n_flip - 1, axis=1)[:, :n_flip]
        i, j = np.divmod(cells, m)
        runs = np.broadcast_to(np.arange(size)[:, None], cells.shape)
        col = C0[runs, j]
        delta = 1.0 - 2.0 * pattern[R0[runs, i], col]
        np.add.at(P0, (runs.ravel(), col.ravel(), i.ravel()), delta.ravel())
    return R0, C0, P0
