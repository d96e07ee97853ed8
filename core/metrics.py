"""Evaluation metrics of the four papers: [WWS15] Wang, Wang & Singh, NIPS 2015; [SCH19]
Schellekens, Chatalic, Houssiau, de Montjoye, Jacques & Gribonval, SPARS 2019; [NSV16] Nissim,
Stemmer & Vadhan, PODS 2016; [BP25] Battaglia & Pensa, SDM 2025.

Everything here is evaluation: the functions read raw data and their outputs are *not*
differentially private. Data-sized work is vectorised and chunked over rows (no n x n or
n x k*d temporaries beyond one chunk); only k x k or K x L problems are solved whole.

- Subspaces [WWS15 Eq. (1)-(3)]: :func:`principal_angles`, :func:`projector_distance`,
  :func:`wasserstein_subspaces`, :func:`subspace_cost`, :func:`assign_to_subspaces`,
  :func:`class_subspaces`.
- k-means [SCH19 Eq. (1), Fig. 3]: :func:`sse`, :func:`relative_sse`.
- Partitions [BP25 Sec. 5]: :func:`nmi`, :func:`ari`, :func:`clustering_accuracy`.
- Co-clustering [BP25 Eq. (3.2)]: :func:`contingency_table`, :func:`goodman_kruskal_tau`,
  :func:`tau_rows`, :func:`tau_columns`.
- MCMC diagnostics [WWS15 Sec. 5; Gelman et al., BDA3 Sec. 11.4-11.5]:
  :func:`gibbs_test_statistic`, :func:`split_rhat`, :func:`effective_sample_size`.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = [
    "principal_angles",
    "projector_distance",
    "projector_distances",
    "wasserstein_subspaces",
    "subspace_cost",
    "assign_to_subspaces",
    "class_subspaces",
    "sse",
    "sse_many",
    "relative_sse",
    "nmi",
    "ari",
    "clustering_accuracy",
    "contingency_table",
    "goodman_kruskal_tau",
    "tau_rows",
    "tau_columns",
    "gibbs_test_statistic",
    "split_rhat",
    "effective_sample_size",
]

_CHUNK_ELEMENTS = 1 << 20  # ~8 MB of float64 per chunk temporary
_ORTHONORMAL_ATOL = 1e-6


# --------------------------------------------------------------------------------------------
# validation helpers


def data_matrix(X, name="X"):
    """Return X as float64 CSR or C-contiguous ndarray (n, d); finite, non-empty (ValueError
    naming ``name`` otherwise). Shared by the metrics and the planner's public sample."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a numeric 2-D array: {exc}") from None
        values = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape})")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X


def _bases(U, name, ndim):
    """Validate orthonormal bases: ndim=2 -> (d, q), ndim=3 -> (k, d, q); q <= d."""
    try:
        U = np.asarray(U, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of bases: {exc}") from None
    shape_txt = "(d, q)" if ndim == 2 else "(k, d, q)"
    if U.ndim != ndim:
        raise ValueError(f"{name} must have shape {shape_txt}, got shape {U.shape}")
    if min(U.shape) == 0:
        raise ValueError(f"{name} is empty (shape {U.shape})")
    d, q = U.shape[-2:]
    if q > d:
        raise ValueError(f"{name} has q={q} columns in dimension d={d}; need q <= d")
    if not np.all(np.isfinite(U)):
        raise ValueError(f"{name} contains NaN or infinite values")
    gram = np.swapaxes(U, -1, -2) @ U
    err = float(np.max(np.abs(gram - np.eye(q))))
    if err > _ORTHONORMAL_ATOL:
        raise ValueError(
            f"{name} does not have orthonormal columns (max |U^T U - I| = {err:.2e});"
            " orthonormalise it first, e.g. with np.linalg.qr"
        )
    return U


def _labels(labels, name, n=None):
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {labels.shape}")
    if labels.size == 0:
        raise ValueError(f"{name} is empty")
    if n is not None and labels.shape[0] != n:
        raise ValueError(f"{name} has {labels.shape[0]} entries, expected {n}")
    return labels


def _label_pair(a, b, names=("labels_true", "labels_pred")):
    a = _labels(a, names[0])
    return a, _labels(b, names[1], n=a.shape[0])


def _cluster_index(labels, name, n, n_clusters):
    """Non-negative integer labels (n,) and the number of clusters (max + 1 unless given)."""
    labels = _labels(labels, name, n=n)
    if not (np.issubdtype(labels.dtype, np.integer) or labels.dtype == bool):
        raise ValueError(f"{name} must hold integers, got dtype {labels.dtype}")
    labels = labels.astype(np.int64)
    if labels.min() < 0:
        raise ValueError(f"{name} must be non-negative cluster indices")
    k = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    if labels.max() >= k:
        raise ValueError(f"{name} has label {labels.max()} >= n_clusters={k}")
    return labels, k


def _chunk_rows(n, width, chunk_size):
    if chunk_size is None:
        chunk_size = max(1, _CHUNK_ELEMENTS // max(1, width))
    elif not isinstance(chunk_size, Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}")
    for start in range(0, n, int(chunk_size)):
        yield slice(start, min(n, start + int(chunk_size)))


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


# --------------------------------------------------------------------------------------------
# subspaces [WWS15 Sec. 2]


def principal_angles(U, V):
    """Principal angles (radians, ascending) between span(U) and span(V).

    U (d, q1) and V (d, q2) are orthonormal bases; returns min(q1, q2) angles. The cosines are
    the singular values of U^T V, clipped to [-1, 1] before arccos (round-off can
    push a cosine just past 1).

    References
    ----------
    Bjorck, A. and Golub, G. H. (1973). Numerical methods for computing angles between linear
        subspaces. Math. Comp. 27(123), 579-594.
    """
    U, V = _bases(U, "U", 2), _bases(V, "V", 2)
    if U.shape[0] != V.shape[0]:
        raise ValueError(f"U and V live in different dimensions: {U.shape[0]} != {V.shape[0]}")
    cosines = np.linalg.svd(U.T @ V, compute_uv=False)
    return np.arccos(np.clip(cosines, -1.0, 1.0))


def projector_distance(U, V):
    """Subspace distance d(S, S') = ||U U^T - V V^T||_F [WWS15 Eq. (1)].

    Computed as sqrt(q1 + q2 - 2 ||U^T V||_F^2), clamped at 0 (cheap and stable; round-off can make
    it slightly negative); with q1 = q2 = q
    this is 2q - 2||U^T V||_F^2 = 2 sum sin^2(theta_i). U (d, q1), V (d, q2) orthonormal bases.
    Note it is sqrt(2) ||sin Theta||_F, not ||sin Theta||_F as the paper states; we keep the
    projector form because the paper's figure axes match it (the Yale B Wasserstein axis reaches
    ~9, and the projector-form maximum is sqrt(2 k q) ~ 9.5).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (1).
    See docs/algorithms.md, section 3 (projector form, factor sqrt(2)).
    """
    U, V = _bases(U, "U", 2), _bases(V, "V", 2)
    if U.shape[0] != V.shape[0]:
        raise ValueError(f"U and V live in different dimensions: {U.shape[0]} != {V.shape[0]}")
    cross = U.T @ V
    sq = U.shape[1] + V.shape[1] - 2.0 * np.einsum("ij,ij->", cross, cross)
    return float(np.sqrt(max(sq, 0.0)))


def projector_distances(A, B):
    """(k, k') matrix of projector distances between two sets of subspaces, A (k, d, qa) and
    B (k', d, qb) orthonormal bases, in one vectorised step (:func:`projector_distance` of each
    pair) [WWS15 Eq. (1)].

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (1).
    """
    A, B = _bases(A, "A", 3), _bases(B, "B", 3)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"A and B live in different dimensions: {A.shape[1]} != {B.shape[1]}")
    cross = np.einsum("idq,jdr->ijqr", A, B)
    sq = A.shape[2] + B.shape[2] - 2.0 * np.einsum("ijqr,ijqr->ij", cross, cross)
    return np.sqrt(np.maximum(sq, 0.0))


def wasserstein_subspaces(A, B, return_matching=False):
    """Wasserstein distance between two sets of k subspaces [WWS15 Eq. (2)].

    d_W = (min over permutations pi of sum_i d^2(A_i, B_pi(i)))^(1/2), with d the projector
    distance; the k x k matrix of squared distances is built in one vectorised step and solved
    by ``scipy.optimize.linear_sum_assignment``. Returns d_W (not squared), as the figures plot.

    Parameters
    ----------
    A, B : arrays (k, d, qa) and (k, d, qb) of orthonormal bases.
    return_matching : if True also return ``match`` with B[match[i]] paired to A[i].

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (2).
    """
    cost = projector_distances(A, B) ** 2
    if cost.shape[0] != cost.shape[1]:
        raise ValueError(
            f"A and B hold different numbers of subspaces: {cost.shape[0]} != {cost.shape[1]}"
        )
    rows, cols = linear_sum_assignment(cost)
    d_w = float(np.sqrt(cost[rows, cols].sum()))
    if return_matching:
        return d_w, cols[np.argsort(rows)]
    return d_w


def _subspace_residuals(X, bases, chunk_size):
    """Yield (slice, (m, k) residuals ||x||^2 - ||U_l^T x||^2 clamped at 0) chunk by chunk."""
    X = data_matrix(X)
    bases = _bases(bases, "bases", 3)
    k, d, q = bases.shape
    if X.shape[1] != d:
        raise ValueError(f"X has {X.shape[1]} features but the bases live in dimension {d}")
    flat = np.ascontiguousarray(bases.transpose(1, 0, 2).reshape(d, k * q))
    for rows in _chunk_rows(X.shape[0], k * q, chunk_size):
        Xc = X[rows]
        proj = np.asarray(Xc @ flat).reshape(-1, k, q)
        res = _row_sq_norms(Xc)[:, None] - np.einsum("nkq,nkq->nk", proj, proj)
        yield rows, np.maximum(res, 0.0)


def subspace_cost(X, bases, chunk_size=None):
    """k-means subspace cost [WWS15 Eq. (3)].

    cost(C; X) = (1/n) sum_i min_l (||x_i||^2 - ||U_l^T x_i||^2), each term clamped at 0.
    X (n, d) dense or sparse; bases (k, d, q) orthonormal. Evaluate on the clipped data
    (``clip_l2(X, 1)``, the unit-ball domain of [WWS15] Sec. 2): clip before calling. ``chunk_size`` rows per step (None = auto).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (3).
    """
    total, n = 0.0, 0
    for rows, res in _subspace_residuals(X, bases, chunk_size):
        total += float(res.min(axis=1).sum())
        n = rows.stop
    return total / n


def assign_to_subspaces(X, bases, chunk_size=None):
    """Label of the nearest subspace for each row of X (ties -> lowest index) [WWS15 Eq. (3)].

    Evaluation only: computed on raw data, not private; its output must never be released.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (3).
    """
    labels = []
    for _, res in _subspace_residuals(X, bases, chunk_size):
        labels.append(res.argmin(axis=1))
    return np.concatenate(labels)


def class_subspaces(X, labels, subspace_dim):
    """Reference subspaces of a labelled data set: top-q left singular vectors of each class,
    without centring (the ground truth C* for real data in [WWS15] Sec. 5: per-class linear
    subspaces).

    X (n, d) dense; labels (n,); returns (k, d, q) with classes in ``np.unique`` order.
    Not private (it reads raw labelled data). Raises if a class has fewer than q points.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 5.
    """
    X = data_matrix(X)
    if sp.issparse(X):
        X = X.toarray()
    labels = _labels(labels, "labels", n=X.shape[0])
    q = int(subspace_dim)
    if not 1 <= q <= X.shape[1]:
        raise ValueError(f"subspace_dim must be in [1, {X.shape[1]}], got {subspace_dim}")
    out = []
    for c in np.unique(labels):  # one SVD per class, not per point
        Xc = X[labels == c]
        if Xc.shape[0] < q:
            raise ValueError(f"class {c!r} has {Xc.shape[0]} points, fewer than subspace_dim={q}")
        u, _, _ = np.linalg.svd(Xc.T, full_matrices=False)
        out.append(u[:, :q])
    return np.stack(out)


# --------------------------------------------------------------------------------------------
# k-means [SCH19 Eq. (1)]


def sse(X, centers, chunk_size=None):
    """Sum of squared errors SSE(X, C) = sum_i min_j ||x_i - c_j||^2 [SCH19 Eq. (1)].

    Chunked over rows with ||x||^2 - 2 x^T c + ||c||^2 clamped at 0 (round-off); X dense or
    sparse (n, d), centers (k, d).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Eq. (1).
    """
    return float(sse_many(X, [centers], chunk_size)[0])


def sse_many(X, centers_list, chunk_size=None):
    """:func:`sse` of each set of centres in ``centers_list``, in one pass over X: one product
    with all centres stacked, then the minimum within each set (``np.minimum.reduceat``). For
    many results on one large X (a figure's methods x epsilons at n = 1e7), X is read once.
    Returns an array of len(centers_list) sums."""
    X = data_matrix(X)
    sets = []
    for C in centers_list:
        C = data_matrix(C, "centers")
        if C.shape[1] != X.shape[1]:
            raise ValueError(f"centers have {C.shape[1]} features but X has {X.shape[1]}")
        sets.append(C.toarray() if sp.issparse(C) else C)
    if not sets:
        return np.zeros(0)
    C = np.vstack(sets)
    starts = np.cumsum([0] + [c.shape[0] for c in sets[:-1]])
    c_sq = np.einsum("ij,ij->i", C, C)
    CT = np.ascontiguousarray(C.T)
    totals = np.zeros(len(sets))
    for rows in _chunk_rows(X.shape[0], C.shape[0], chunk_size):
        Xc = X[rows]
        dist = _row_sq_norms(Xc)[:, None] - 2.0 * np.asarray(Xc @ CT) + c_sq[None, :]
        totals += np.maximum(np.minimum.reduceat(dist, starts, axis=1), 0.0).sum(axis=0)
    return totals


def relative_sse(X, centers, reference_centers, chunk_size=None):
    """SSE(X, centers) / SSE(X, reference_centers) [SCH19 Fig. 3].

    The reference is k-means with 3 replicates in the paper. If the reference SSE is 0 the
    ratio is 1.0 when ``centers`` also has SSE 0 and ``inf`` otherwise.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III,
        Figs. 1 and 3.
    """
    num = sse(X, centers, chunk_size)
    den = sse(X, reference_centers, chunk_size)
    if den == 0.0:
        return 1.0 if num == 0.0 else float("inf")
    return num / den


# --------------------------------------------------------------------------------------------
# partitions [BP25 Sec. 5]


def nmi(labels_true, labels_pred):
    """Normalised mutual information, arithmetic normalisation, natural logs [BP25 Sec. 5; the
    authors' scripts use scikit-learn's arithmetic NMI].

    NMI = I(U;V) / ((H(U) + H(V)) / 2) from the contingency table (scikit-learn's
    ``average_method="arithmetic"``). Both partitions trivial -> 1; exactly one trivial -> 0.

    References
    ----------
    Strehl, A. and Ghosh, J. (2002). Cluster ensembles: a knowledge reuse framework for
        combining multiple partitions. JMLR 3, 583-617.
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 5.
    """
    a, b = _label_pair(labels_true, labels_pred)
    return float(normalized_mutual_info_score(a, b, average_method="arithmetic"))


def ari(labels_true, labels_pred):
    """Adjusted Rand index (scikit-learn; Hubert & Arabie 1985). Optional: the papers report NMI.

    References
    ----------
    Hubert, L. and Arabie, P. (1985). Comparing partitions. J. Classif. 2(1), 193-218.
    """
    a, b = _label_pair(labels_true, labels_pred)
    return float(adjusted_rand_score(a, b))


def clustering_accuracy(labels_true, labels_pred):
    """Fraction of points correctly labelled under the best one-to-one matching of cluster ids
    (Hungarian algorithm on the contingency table; unmatched clusters count as errors)."""
    a, b = _label_pair(labels_true, labels_pred)
    n_a, n_b = np.unique(a).size, np.unique(b).size
    if n_a * n_b > _CHUNK_ELEMENTS * 16:
        raise ValueError(f"too many clusters for Hungarian matching ({n_a} x {n_b})")
    table = contingency_matrix(a, b)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum()) / a.shape[0]


# --------------------------------------------------------------------------------------------
# co-clustering [BP25 Sec. 3.2]


def contingency_table(A, row_labels, col_labels, n_row_clusters=None, n_col_clusters=None):
    """Co-cluster contingency table T = R^T A C, t_kl = sum_{i in R_k, j in C_l} a_ij [BP25
    Sec. 3.2].

    A (n, m) dense or ``scipy.sparse`` (never densified); labels are non-negative integers.
    The numbers of clusters default to max label + 1. Returns a dense (K, L) float64 array.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.2.
    """
    A = data_matrix(A, "A")
    n, m = A.shape
    r, K = _cluster_index(row_labels, "row_labels", n, n_row_clusters)
    c, L = _cluster_index(col_labels, "col_labels", m, n_col_clusters)
    R = sp.csr_matrix((np.ones(n), (r, np.arange(n))), shape=(K, n))
    C = sp.csc_matrix((np.ones(m), (np.arange(m), c)), shape=(m, L))
    T = R @ A @ C
    return T.toarray() if sp.issparse(T) else np.asarray(T)


def goodman_kruskal_tau(table, given="columns", normalized=False):
    """Goodman-Kruskal tau of a co-clustering contingency table [BP25 Eq. (3.2)].

    De-normalised (default, what DP-tauCC optimises and BP25 Fig. 3 plots), with q = T / T_tot::

        tau_{R|C} = sum_{k,l} q_kl^2 / q_.l - sum_k q_k.^2        (given="columns")

    ``given="rows"`` gives tau_{C|R} (the same on T^T). ``normalized=True`` divides by
    1 - sum_k q_k.^2 (Fast-tauCC's report; 0 when that is 0). Empty columns contribute 0
    (t_kl / t_.l := 0); an all-zero table gives 0. ``table`` (K, L) dense or sparse, >= 0.

    References
    ----------
    Goodman, L. A. and Kruskal, W. H. (1954). Measures of association for cross
        classifications. J. Am. Stat. Assoc. 49(268), 732-764.
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.2, Eq. (3.2).
    """
    if given not in ("columns", "rows"):
        raise ValueError(f"given must be 'columns' or 'rows', got {given!r}")
    T = data_matrix(table, "table")
    T = T.toarray() if sp.issparse(T) else T
    if np.any(T < 0):
        raise ValueError("table has negative entries; clamp a noisy table at 0 first")
    if given == "rows":
        T = T.T
    total = T.sum()
    if total <= 0.0:
        return 0.0
    q = T / total
    col = q.sum(axis=0)
    row = q.sum(axis=1)
    safe = np.where(col > 0, col, 1.0)
    tau = float(np.sum((q * q).sum(axis=0) / safe) - np.dot(row, row))
    if normalized:
        den = 1.0 - float(np.dot(row, row))
        return tau / den if den > 0 else 0.0
    return tau


def tau_rows(table, normalized=False):
    """tau_{R|C}: how well the column clusters predict the row clusters ([BP25] Eq. (3.2); the
    quantity of their Fig. 3).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.2, Eq. (3.2) and Fig. 3.
    """
    return goodman_kruskal_tau(table, given="columns", normalized=normalized)


def tau_columns(table, normalized=False):
    """tau_{C|R}: how well the row clusters predict the column clusters ([BP25] Sec. 3.2).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.2.
    """
    return goodman_kruskal_tau(table, given="rows", normalized=normalized)


# --------------------------------------------------------------------------------------------
# MCMC diagnostics [WWS15 Sec. 5]


def gibbs_test_statistic(samples, cumulative=False):
    """Mixing statistic of the Gibbs sampler [WWS15 Sec. 5, Fig. 3]::

        T_stat(T) = (1/sqrt(kq)) * ( sum_l || (1/T) sum_t U_l^(t) ||_F^2 )^(1/2)   in [0, 1]

    ``samples`` (T, k, d, q): the basis samples of one chain, oldest first. Under the target
    E[U_l] = 0 (U -> UO invariance), so it tends to 0; a frozen chain gives 1. It is weak (sign
    flips alone drive it to 0): report cost traces and :func:`split_rhat` too.
    ``cumulative=True`` returns the (T,) array T_stat(1), ..., T_stat(T). A caller keeping a
    running mean M (k, d, q) gets T_stat as ``gibbs_test_statistic(M[np.newaxis])``.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 5, Fig. 3.
    """
    try:
        S = np.asarray(samples, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"samples must be a numeric (T, k, d, q) array: {exc}") from None
    if S.ndim != 4 or min(S.shape) == 0:
        raise ValueError(f"samples must have shape (T, k, d, q) with no empty axis, got {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("samples contain NaN or infinite values")
    T, k, d, q = S.shape
    if q > d:
        raise ValueError(f"samples have q={q} columns in dimension d={d}; need q <= d")
    if cumulative:
        means = np.cumsum(S, axis=0) / np.arange(1, T + 1)[:, None, None, None]
        sq = np.einsum("tkdq,tkdq->t", means, means)
    else:
        mean = S.mean(axis=0)
        sq = np.einsum("kdq,kdq->", mean, mean)
    return np.sqrt(sq / (k * q)) if cumulative else float(np.sqrt(sq / (k * q)))


def _check_chains(chains, what):
    try:
        C = np.asarray(chains, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"chains must be a numeric (n_chains, n_draws) array: {exc}") from None
    if C.ndim != 2:
        raise ValueError(f"chains must have shape (n_chains, n_draws), got {C.shape}")
    if C.shape[0] < 1 or C.shape[1] < 4:
        raise ValueError(f"{what} needs at least 1 chain of at least 4 draws, got {C.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError("chains contain NaN or infinite values")
    return C


def _split_halves(C):
    """Each chain split into halves (the middle draw dropped when n_draws is odd)."""
    n = C.shape[1] // 2
    return np.concatenate([C[:, :n], C[:, C.shape[1] - n :]], axis=0)


def split_rhat(chains):
    """Split potential scale reduction factor R-hat (Gelman et al., BDA3 Sec. 11.4).

    ``chains`` (n_chains, n_draws) of a scalar (e.g. the cost trace of each Gibbs chain
    of [WWS15] Fig. 3). Each chain is split into halves (the middle draw dropped when n_draws is odd),
    then with m = 2 n_chains sequences of length n: B = n/(m-1) sum_j (mean_j - mean)^2,
    W = mean_j s_j^2, var+ = (n-1)/n W + B/n and R-hat = sqrt(var+ / W). About 1 for mixed
    chains; > 1.1 signals non-convergence. W = 0 gives inf (or nan if B = 0 too).

    References
    ----------
    Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin, D. B.
        (2013). Bayesian Data Analysis, 3rd ed. CRC Press, Sec. 11.4.
    """
    halves = _split_halves(_check_chains(chains, "split R-hat"))
    n = halves.shape[1]
    means = halves.mean(axis=1)
    B = n * means.var(ddof=1)
    W = halves.var(axis=1, ddof=1).mean()
    var_plus = (n - 1) / n * W + B / n
    if W == 0.0:
        return float("nan") if var_plus == 0.0 else float("inf")
    return float(np.sqrt(var_plus / W))


def effective_sample_size(chains):
    """Effective sample size of the mean of a scalar over split chains (Geyer's initial
    monotone sequence estimator, as in Stan).

    ``chains`` (n_chains, n_draws), split into halves as in :func:`split_rhat`: m sequences of
    length n. With the within-sequence autocovariances c_j(t) (FFT, normalised by n), W and
    var+ of :func:`split_rhat`, the combined autocorrelation is
    rho_t = 1 - (W - mean_j c_j(t)) / var+. The sums P_k = rho_2k + rho_2k+1 are kept while
    positive (initial positive sequence) and made non-increasing (initial monotone sequence);
    tau = -1 + 2 sum_k P_k and ESS = m n / tau. About m n for independent draws, far less for
    a chain that moves slowly. Constant chains give m n.

    References
    ----------
    Geyer, C. J. (1992). Practical Markov chain Monte Carlo. Statistical Science 7(4),
        Sec. 3.3 (initial positive and monotone sequence estimators).
    Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin, D. B.
        (2013). Bayesian Data Analysis, 3rd ed. CRC Press, Sec. 11.5.
    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Burkner, P.-C. (2021).
        Rank-normalization, folding, and localization: an improved R-hat for assessing
        convergence of MCMC. Bayesian Analysis 16(2), Sec. 3.2.
    """
    halves = _split_halves(_check_chains(chains, "the effective sample size"))
    m, n = halves.shape
    if np.ptp(halves) == 0.0:
        return float(m * n)
    centred = halves - halves.mean(axis=1, keepdims=True)
    size = 1 << int(2 * n - 1).bit_length()  # zero padding: no circular wrap-around
    spectrum = np.fft.rfft(centred, n=size, axis=1)
    acov = np.fft.irfft(spectrum * spectrum.conj(), n=size, axis=1)[:, :n] / n
    W = acov[:, 0].mean() * n / (n - 1)
    var_plus = (n - 1) / n * W + (halves.mean(axis=1).var(ddof=1) if m > 1 else 0.0)
    rho = 1.0 - (W - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[: 2 * (n // 2)].reshape(-1, 2).sum(axis=1)
    stop = np.flatnonzero(pairs <= 0.0)
    pairs = pairs[: stop[0] if stop.size else pairs.size]
    tau = -1.0 + 2.0 * np.minimum.accumulate(pairs).sum()
    return float(m * n / tau)
