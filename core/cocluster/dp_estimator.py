"""DPTauCoClustering: the scikit-learn style estimator around DP-tauCC ([BP25] = seed 004 Sec. 4,
spec 5.4, 6.1)."""

import numpy as np
from sklearn.base import BaseEstimator

from ..privacy import BudgetAccountant, as_generator, charge
from .aggregate import compact
from .dp_taucc import _check_params, run_validated
from .inputs import check_count_matrix, check_n_clusters
from .tau import prototype_weights

CELL_WARNING = ("entry-level privacy only (neighbouring 'cell'): this protects one unit of one "
                "cell of the matrix (e.g. one count of one document-word pair), NOT a row or "
                "document; a change of c units in one cell costs c*epsilon, and a whole row is "
                "not protected")
EVAL_WARNING = ("eval_row_labels_ (nearest noisy prototype on the raw data) is NOT private: "
                "evaluation only, never release it")


class DPTauCoClustering(BaseEstimator):
    """DP-tauCC co-clustering, pure epsilon-DP under the ``cell`` relation ([BP25] Alg. 1-3).

    Seed 004: Sec. 4.1 defines the neighbouring relation (one unit of one cell) and the
    sensitivities, Sec. 4.2 the algorithm and the 90/10 budget split, Sec. 5.1 the evaluation by
    nearest prototype that ``eval_row_labels_`` reproduces (not private).

    The output (``table_``, ``column_labels_``, ``row_labels_``) is epsilon-DP with respect to a
    change of ``cell_bound`` units in ONE cell of the matrix. This is entry-level privacy, much
    weaker than protecting a document (row): see ``privacy_.warnings``.

    Parameters
    ----------
    n_row_clusters, n_col_clusters : int >= 2
        Initial numbers of row and column clusters K0, L0 (clusters may be deleted on the way).
        RandomMatrix needs max(K0, L0) < 2**min(K0, L0).
    epsilon : float > 0
        Total privacy budget of the fit.
    n_iter : int >= 1
        Number of iterations I (the paper uses 4).
    cell_bound : float > 0
        Units of one cell protected (c); every sensitivity scales with it.
    assignment_share : float in (0, 1)
        Share h of each half-iteration budget given to the assignments (paper: 0.9).
    neighbouring : "cell"
        Only "cell" is supported; document-level relations raise NotImplementedError.
    random_state : None, int or numpy.random.Generator
    ledger : privclust.core.privacy.Ledger or None
        Charged ``epsilon`` once at the start of ``fit``, before anything is released.

    Attributes
    ----------
    table_ : ndarray (K, L)
        The released noisy contingency table (clamped at 0, deleted clusters removed).
    column_labels_ : ndarray (m,)
        Released column clusters (last exponential-mechanism draw), indices into table_ columns.
    row_labels_ : ndarray (n,)
        Released row clusters (last exponential-mechanism draw), indices into table_ rows; -1 for
        rows whose cluster the last table deleted (all its noisy counts were 0).
    eval_row_labels_ : ndarray (n,)
        NOT PRIVATE, evaluation only: each row assigned to its nearest noisy prototype using the
        raw data (argmax_k sigma(a_i, T_k)), as in the paper's NMI evaluation. Never release it.
    privacy_ : Guarantee
        kind "pure", neighbouring "cell", the 4I releases (2I assignments, 2I tables, each
        with its epsilon and sensitivity ``cell_bound``; they sum to ``epsilon``) and the
        warnings.
    """

    def __init__(self, n_row_clusters=2, n_col_clusters=2, epsilon=1.0, n_iter=4, cell_bound=1.0,
                 assignment_share=0.9, neighbouring="cell", random_state=None, ledger=None):
        self.n_row_clusters = n_row_clusters
        self.n_col_clusters = n_col_clusters
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.cell_bound = cell_bound
        self.assignment_share = assignment_share
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _check_neighbouring(self):
        if self.neighbouring in ("replace", "add_remove"):
            raise NotImplementedError(
                f"neighbouring={self.neighbouring!r} (document-level privacy) is not supported by "
                "DP-tauCC: it would need per-row clipping and breaks parallel composition over "
                "columns (spec 5.1); only 'cell' is available")
        if self.neighbouring != "cell":
            raise ValueError(f"neighbouring must be 'cell', got {self.neighbouring!r}")

    def fit(self, X, y=None):
        """Co-cluster the non-negative count matrix X (n, m), dense or scipy.sparse."""
        self._check_neighbouring()
        _check_params(self.epsilon, self.n_iter, self.cell_bound, self.assignment_share)
        A, AT = check_count_matrix(X)
        K0 = check_n_clusters(self.n_row_clusters, "n_row_clusters", A.shape[0], "rows")
        L0 = check_n_clusters(self.n_col_clusters, "n_col_clusters", A.shape[1], "columns")
        rng = as_generator(self.random_state)
        epsilon = float(self.epsilon)
        charge(self.ledger, epsilon, 0.0,
               what=f"DPTauCoClustering(n_row_clusters={K0}, n_col_clusters={L0}, "
                    f"epsilon={epsilon!r}, n_iter={self.n_iter}, cell_bound={self.cell_bound!r})")
        accountant = BudgetAccountant(epsilon)
        runs = run_validated(A, AT, K0, L0, epsilon, int(self.n_iter), rng, 1,
                            float(self.cell_bound), float(self.assignment_share), accountant)
        row_alive, col_alive = runs.row_alive[0], runs.col_alive[0]
        self.table_ = runs.table[0][row_alive][:, col_alive]
        self.row_labels_ = compact(runs.row_slots[0], row_alive)
        self.column_labels_ = compact(runs.col_slots[0], col_alive)
        profiles = runs.row_profiles[0][:, col_alive]
        self.eval_row_labels_ = np.argmax(profiles @ prototype_weights(self.table_).T, axis=1)
        self.n_row_clusters_, self.n_col_clusters_ = self.table_.shape
        self.privacy_ = accountant.guarantee("pure", "cell", warnings=[CELL_WARNING, EVAL_WARNING])
        return self

    def fit_predict(self, X, y=None):
        """Fit and return the (private) row labels."""
        return self.fit(X).row_labels_
