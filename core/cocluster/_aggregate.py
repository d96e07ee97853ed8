"""Cluster aggregation with sparse-friendly products (A.C and A^T.R only, so sparse count matrices
are never densified; Battaglia & Pensa, SDM 2025, Sec. 4.3 states the dense O(n m K L) cost that
these products avoid).

Labels carry a leading batch axis S (independent runs over the same matrix); for one run S = 1.
Clusters live in fixed "slots"; a slot whose ``keep`` flag is False is a deleted cluster and its
members are left out of every aggregate (they are reassigned at the next update).
"""

import numpy as np
import scipy.sparse as sp


def _weights(labels, keep):
    if keep is None:
        return np.ones(labels.size)
    return np.take_along_axis(np.asarray(keep, bool), labels, axis=1).ravel().astype(np.float64)


def project(A, labels, n_slots, keep=None):
    """Y[s] = A @ onehot(labels[s]): sum each row of A over the column clusters of run s.

    A: (N, M) ndarray or scipy.sparse (CSR preferred; never densified); labels: (S, M) slot
    indices; keep: optional (S, n_slots) live-slot mask. Returns a dense (S, N, n_slots) array.
    """
    labels = np.asarray(labels)
    S, M = labels.shape
    onehot = np.zeros((M, S * n_slots))
    cols = (np.arange(S)[:, None] * n_slots + labels).ravel()
    onehot[np.tile(np.arange(M), S), cols] = _weights(labels, keep)
    Y = np.asarray(A @ onehot)
    return Y.reshape(A.shape[0], S, n_slots).transpose(1, 0, 2)


def table(Y, labels, n_slots, keep=None):
    """T[s, k] = sum of the rows Y[s, i] with labels[s, i] == k (R^T Y); (S, n_slots, L)."""
    Y = np.asarray(Y, dtype=np.float64)
    S, N, L = Y.shape
    rows = (np.arange(S)[:, None] * n_slots + np.asarray(labels)).ravel()
    ind = sp.csr_array(
        (_weights(labels, keep), (rows, np.arange(S * N))), shape=(S * n_slots, S * N)
    )
    return np.asarray(ind @ Y.reshape(S * N, L)).reshape(S, n_slots, L)


def occupancy(labels, n_slots):
    """(S, n_slots) counts of objects per slot."""
    labels = np.asarray(labels)
    S = labels.shape[0]
    flat = (np.arange(S)[:, None] * n_slots + labels).ravel()
    return np.bincount(flat, minlength=S * n_slots).reshape(S, n_slots)


def compact(labels, keep):
    """Relabel one run's slots consecutively over the live slots; members of dead slots -> -1."""
    keep = np.asarray(keep, bool)
    new = np.full(keep.shape, -1, dtype=np.int64)
    new[keep] = np.arange(int(keep.sum()))
    return new[np.asarray(labels)]
