"""Fast-tauCC: non-private co-clustering that maximises the de-normalised Goodman-Kruskal tau.

Battaglia, Peiretti & Pensa, "Fast parameterless prototype-based co-clustering", Mach. Learn. 113,
2024; restated in Battaglia & Pensa, SDM 2025, Sec. 3.2 (Eqs. 3.2-3.5). Not private. Alternating
prototype updates: with the column partition fixed, every row moves to the row cluster whose
prototype maximises sigma(a_i, t_k) (Eq. 3.5 / 4.9), the prototypes are recomputed and the step is
repeated until no row moves; then the same on the columns. Empty clusters are dropped, so the
numbers of clusters can only decrease from the initial ``n_row_clusters`` / ``n_col_clusters``.
Works on dense arrays and ``scipy.sparse`` matrices through the products A.C and A^T.R only.
"""

import numpy as np
from sklearn.base import BaseEstimator

from ..constraints import POSITIVE_INT, RANDOM_STATES, Integral
from ..metrics import tau_columns, tau_rows
from ..privacy import as_generator
from ._aggregate import compact, occupancy, project, table
from ._inputs import check_count_matrix, check_n_clusters
from ._tau import prototype_weights


def _balanced_labels(n, k, rng):
    return rng.permutation(np.arange(n) % k)


def _phase(A, labels, other, n_other, max_passes):
    """Reassign the objects (rows of A) with ``other`` (labels of A's columns) fixed.

    Returns (labels, number of passes, whether any label changed).
    """
    Y = project(A, other[None, :], n_other)[0]
    changed = False
    for n_pass in range(1, max_passes + 1):
        K = int(labels.max()) + 1
        T = table(Y[None], labels[None], K)[0]
        new = np.argmax(Y @ prototype_weights(T).T, axis=1)
        if np.array_equal(new, labels):
            return labels, n_pass, changed
        changed = True
        labels = compact(new, occupancy(new[None], K)[0] > 0)
    return labels, max_passes, changed


class TauCoClustering(BaseEstimator):
    """Fast-tauCC co-clustering (non-private reference; Battaglia, Peiretti & Pensa 2024).

    Parameters
    ----------
    n_row_clusters, n_col_clusters : int >= 2
        Initial numbers of row and column clusters (upper bounds; empty clusters are dropped).
    max_iter : int
        Maximum number of outer (row phase + column phase) iterations (authors' default 500).
    max_inner_iter : int
        Maximum number of passes of one phase (authors' default 100).
    random_state : None, int or numpy.random.Generator
        Seeds the random balanced initial partitions.

    Attributes
    ----------
    row_labels_, column_labels_ : ndarray of int
        Final partitions, numbered 0..K-1 and 0..L-1.
    table_ : ndarray (K, L)
        Contingency table T = R^T A C of the raw counts.
    tau_rows_, tau_columns_ : float
        De-normalised tau_{R|C} and tau_{C|R} of ``table_`` (Battaglia & Pensa 2025,
        Eq. (3.2)).
    n_iter_ : int
        Outer iterations run; ``converged_`` says whether the stopping rule was met.

    References
    ----------
    Battaglia, E., Peiretti, F. and Pensa, R. G. (2024). Fast parameterless prototype-based
        co-clustering. Machine Learning 113, 2153-2181.
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 3.2 (the de-normalised tau and Fast-tauCC's updates).
    Goodman, L. A. and Kruskal, W. H. (1954). Measures of association for cross classifications.
        J. Am. Stat. Assoc. 49(268), 732-764.

    Examples
    --------
    >>> from privclust.core import TauCoClustering
    >>> from privclust.core.data import make_block_counts
    >>> data = make_block_counts(n_rows=120, n_cols=80, random_state=0)
    >>> est = TauCoClustering(n_row_clusters=3, n_col_clusters=3, random_state=0).fit(data.X)
    >>> est.row_labels_.shape, est.column_labels_.shape
    ((120,), (80,))
    """

    _parameter_constraints = {
        "n_row_clusters": [Integral],
        "n_col_clusters": [Integral],
        "max_iter": [POSITIVE_INT],
        "max_inner_iter": [POSITIVE_INT],
        "random_state": RANDOM_STATES,
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # non-negative count matrices
        tags.input_tags.sparse = True  # dense or scipy.sparse
        return tags

    def __init__(
        self,
        n_row_clusters=2,
        n_col_clusters=2,
        max_iter=500,
        max_inner_iter=100,
        random_state=None,
    ):
        self.n_row_clusters = n_row_clusters
        self.n_col_clusters = n_col_clusters
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        """Co-cluster the non-negative matrix X (n, m), dense or scipy.sparse."""
        self._validate_params()
        A, AT = check_count_matrix(X)
        n, m = A.shape
        self.n_features_in_ = m
        K0 = check_n_clusters(self.n_row_clusters, "n_row_clusters", n, "rows")
        L0 = check_n_clusters(self.n_col_clusters, "n_col_clusters", m, "columns")
        if A.sum() <= 0:
            raise ValueError("X has no positive entry: there is nothing to co-cluster")
        rng = as_generator(self.random_state)
        rows = _balanced_labels(n, K0, rng)
        cols = _balanced_labels(m, L0, rng)
        self.converged_ = False
        for it in range(1, self.max_iter + 1):  # noqa: B007 -- n_iter_ is the last one
            rows, row_passes, row_changed = _phase(
                A, rows, cols, int(cols.max()) + 1, self.max_inner_iter
            )
            cols, col_passes, col_changed = _phase(
                AT, cols, rows, int(rows.max()) + 1, self.max_inner_iter
            )
            if not (row_changed or col_changed):
                self.converged_ = True
                break
        self.n_iter_ = it
        self.row_labels_ = rows
        self.column_labels_ = cols
        Y = project(A, cols[None], int(cols.max()) + 1)
        self.table_ = table(Y, rows[None], int(rows.max()) + 1)[0]
        self.tau_rows_ = tau_rows(self.table_)
        self.tau_columns_ = tau_columns(self.table_)
        return self

    def fit_predict(self, X, y=None):
        """Fit and return the row labels."""
        return self.fit(X).row_labels_
