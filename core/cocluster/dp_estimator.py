"""DPTauCoClustering: the scikit-learn style estimator around DP-tauCC (Battaglia & Pensa,
"Differentially private co-clustering with the Goodman-Kruskal tau", SDM 2025, Sec. 4), on the
release protocol (:class:`~privclust.core.estimator.PrivateEstimator`)."""

import numpy as np
import scipy.sparse as sp

from ..constraints import POSITIVE_INT, RELATION, SHARE, Integral, Interval, Real
from ..estimator import PrivateEstimator, check_positive_int
from ..privacy import BudgetAccountant, Guarantee
from ..privacy.accounting.relations import cell_steps
from ._aggregate import compact
from ._inputs import check_count_matrix, check_n_clusters, clip_row_sums
from ._tau import prototype_weights
from .dp_taucc import _check_params, budget_schedule, run_counts, run_validated
from .initial_partitions import block_pattern

CELL_WARNING = (
    "entry-level privacy only (neighbouring 'cell'): this protects one unit of one "
    "cell of the matrix (e.g. one count of one document-word pair), NOT a row or "
    "document; a change of c units in one cell costs c*epsilon, and a whole row is "
    "not protected"
)
EVAL_WARNING = (
    "eval_row_labels_ (nearest noisy prototype on the raw data) is NOT private: "
    "evaluation only, never release it"
)


def row_cap_note(row_cap, cell_bound):
    """The warning attached to a fit whose rows were clipped to ``row_cap``; its factor is
    the one the ledger charges (:func:`~privclust.core.privacy.accounting.relations.cell_steps`)."""
    return (
        f"rows clipped to integer counts summing to at most row_cap={row_cap} before the "
        f"fit: on a record-level (replace-one) ledger one record costs "
        f"2 floor(row_cap) ceil(1 / cell_bound) = {cell_steps(row_cap, cell_bound)} x "
        "epsilon (group privacy)"
    )


class DPTauCoClustering(PrivateEstimator):
    """DP-tauCC co-clustering, pure epsilon-DP under the ``cell`` relation (Battaglia & Pensa,
    SDM 2025, Algs. 1-3).

    Battaglia & Pensa 2025 Sec. 4.1 defines the neighbouring relation (one unit of one cell) and
    the sensitivities, Sec. 4.2 the algorithm and the 90/10 budget split, Sec. 5.1 the
    evaluation by nearest prototype that ``eval_row_labels_`` reproduces (not private).

    The output (``table_``, ``column_labels_``, ``row_labels_``) is epsilon-DP with respect to a
    change of ``cell_bound`` units in ONE cell of the matrix. This is entry-level privacy, much
    weaker than protecting a document (row): see ``privacy_.warnings``. A ledger counting
    records (unit "replace") refuses such a release unless ``row_cap`` is given.

    Parameters
    ----------
    n_row_clusters, n_col_clusters : int >= 2
        Initial numbers of row and column clusters K0, L0 (clusters may be deleted on the way).
        RandomMatrix needs max(K0, L0) < 2**min(K0, L0).
    epsilon : float > 0
        Total privacy budget of the fit (in the cell relation's unit).
    n_iter : int >= 1
        Number of iterations I (the paper uses 4).
    cell_bound : float > 0
        Units of one cell protected (c); every sensitivity scales with it.
    assignment_share : float in (0, 1)
        Share h of each half-iteration budget given to the assignments (paper: 0.9).
    neighbouring : "cell"
        Only "cell" is supported; document-level relations raise NotImplementedError (use
        ``row_cap`` to charge a record-level ledger instead).
    row_cap : int >= 1 or None
        Public per-record cap L. When given, each row is clipped before anything else
        (:func:`~privclust.core.cocluster._inputs.clip_row_sums`: a row whose sum s exceeds L is
        scaled by L / s and floored; per record, deterministic), non-integer counts are refused,
        and a record-level ledger is charged 2 floor(L) ceil(1 / cell_bound) * epsilon (two
        clipped rows differ in at most 2 L units; group privacy). Without it, a replace-one ledger refuses the
        release.
    random_state : None, int or numpy.random.Generator
    ledger : privclust.core.privacy.Ledger or None
        Charged the plan's cost, converted to the ledger's unit, before the data are read.

    Attributes
    ----------
    table_ : ndarray (K, L)
        Released: the noisy contingency table (clamped at 0, deleted clusters removed).
    column_labels_ : ndarray (m,)
        Released: column clusters (last exponential-mechanism draw), indices into table_ columns.
    row_labels_ : ndarray (n,)
        Released: row clusters (last exponential-mechanism draw), indices into table_ rows; -1
        for rows whose cluster the last table deleted (all its noisy counts were 0).
    eval_row_labels_ : ndarray (n,)
        NOT PRIVATE, NOT RELEASED, evaluation only: each row assigned to its nearest noisy
        prototype using the raw data (argmax_k sigma(a_i, T_k)), as in the paper's NMI
        evaluation.
    n_row_clusters_, n_col_clusters_ : int
        The shape of ``table_``.
    privacy_ : Guarantee
        kind "pure", neighbouring "cell", the 4I releases (2I assignments, 2I tables, each
        with its epsilon and sensitivity ``cell_bound``; they sum to ``epsilon``) and the
        warnings.

    ``fit_predict`` is kept: it returns ``row_labels_``, which are released (the draws of the
    exponential mechanism), never ``eval_row_labels_``.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1 (relation, sensitivities), Sec. 4.2 (Algs. 1-3, budget split),
        Sec. 5.1 (evaluation).
    Battaglia, E., Peiretti, F. and Pensa, R. G. (2024). Fast parameterless prototype-based
        co-clustering. Machine Learning 113, 2153-2181 (Fast-tauCC, the non-private update).
    Dong, J., Durfee, D. and Rogers, R. (2020). Optimal differential privacy composition for
        exponential mechanisms. ICML 2020 (range-based exponential mechanism).

    Examples
    --------
    >>> from privclust.core import DPTauCoClustering
    >>> from privclust.core.data import make_block_counts
    >>> data = make_block_counts(n_rows=120, n_cols=80, random_state=0)
    >>> est = DPTauCoClustering(n_row_clusters=3, n_col_clusters=3, epsilon=1.0, random_state=0)
    >>> est.fit(data.X).row_labels_.shape
    (120,)
    >>> print(est.privacy_.summary())
    1.0-DP, pure, one-cell unit-change neighbours (much weaker than record privacy); 2 warnings
    """

    _released = ("table_", "row_labels_", "column_labels_")

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_row_clusters": [Integral],
        "n_col_clusters": [Integral],
        "n_iter": [POSITIVE_INT],
        "cell_bound": [Interval(Real, 0, None, closed="neither")],
        "assignment_share": [SHARE],
        "neighbouring": [RELATION],
        "row_cap": [None, Interval(Real, 0, None, closed="neither")],
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
        epsilon=1.0,
        n_iter=4,
        cell_bound=1.0,
        assignment_share=0.9,
        neighbouring="cell",
        row_cap=None,
        random_state=None,
        ledger=None,
    ):
        self.n_row_clusters = n_row_clusters
        self.n_col_clusters = n_col_clusters
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.cell_bound = cell_bound
        self.assignment_share = assignment_share
        self.neighbouring = neighbouring
        self.row_cap = row_cap
        self.random_state = random_state
        self.ledger = ledger

    def _check_neighbouring(self):
        if self.neighbouring in ("replace", "add_remove"):
            raise NotImplementedError(
                f"neighbouring={self.neighbouring!r} (document-level privacy) is not supported by "
                "DP-tauCC: its parallel composition over columns holds for one cell only; only "
                "'cell' is available (give row_cap to charge a record-level ledger)"
            )
        if self.neighbouring != "cell":
            raise ValueError(f"neighbouring must be 'cell', got {self.neighbouring!r}")

    def neighbouring_relation(self):
        return "cell"

    def _row_cap(self):
        return None if self.row_cap is None else check_positive_int(self.row_cap, "row_cap")

    def _plan(self, n_samples, n_features):
        self._check_neighbouring()
        _check_params(self.epsilon, self.n_iter, self.cell_bound, self.assignment_share)
        cap = self._row_cap()
        if n_samples is None or n_features is None:
            raise ValueError(
                "DPTauCoClustering's plan needs the public shape (n_rows, n_columns): "
                "the cell relation keeps the matrix's shape fixed"
            )
        K0 = check_n_clusters(self.n_row_clusters, "n_row_clusters", n_samples, "rows")
        L0 = check_n_clusters(self.n_col_clusters, "n_col_clusters", n_features, "columns")
        block_pattern(K0, L0)  # RandomMatrix's condition on (K0, L0)
        epsilon = float(self.epsilon)
        acc = BudgetAccountant(epsilon)
        for name, eps in budget_schedule(epsilon, int(self.n_iter), float(self.assignment_share)):
            acc.spend(name, eps, sensitivity=float(self.cell_bound))
        notes = [CELL_WARNING] + (
            [] if cap is None else [row_cap_note(cap, float(self.cell_bound))]
        )
        return Guarantee(epsilon, 0.0, "pure", "cell", mechanisms=acc.mechanisms, warnings=notes)

    _accepts_sparse = True  # _check_data reads dense and scipy.sparse count matrices

    def ledger_options(self):
        """The row cap L and cell bound c the ledger needs to convert a cell-level cost (without
        a row cap a record-level ledger refuses the release)."""
        return {"row_cap": self._row_cap(), "cell_bound": float(self.cell_bound)}

    def _check_data(self, X):
        """Validate the count matrix (dense or scipy.sparse); with ``row_cap``, project every
        row onto integer non-negative counts summing to at most L instead (per record, never
        failing on finite input); returns (A, A^T)."""
        cap = self._row_cap()
        if cap is None:
            return check_count_matrix(X)
        A = sp.csr_array(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if A.ndim != 2 or min(A.shape) < 1:
            raise ValueError(f"X must be a non-empty 2-D matrix, got shape {A.shape}")
        A = clip_row_sums(A, cap)
        return A, (A.T.tocsr() if hasattr(A, "tocsr") else A.T)

    def _fit(self, data, rng):
        """Co-cluster the validated (and clipped) matrix; already charged by :meth:`fit`."""
        A, AT = data
        K0 = check_n_clusters(self.n_row_clusters, "n_row_clusters", A.shape[0], "rows")
        L0 = check_n_clusters(self.n_col_clusters, "n_col_clusters", A.shape[1], "columns")
        epsilon = float(self.epsilon)
        accountant = BudgetAccountant(epsilon)
        runs = run_validated(
            A,
            AT,
            K0,
            L0,
            epsilon,
            int(self.n_iter),
            rng,
            1,
            float(self.cell_bound),
            float(self.assignment_share),
            accountant,
        )
        self._publish(runs, A.shape[1], accountant)
        profiles = runs.row_profiles[0][:, runs.col_alive[0]]
        self.eval_row_labels_ = np.argmax(profiles @ prototype_weights(self.table_).T, axis=1)

    def _fit_partitioned(self, parts, rng):
        """The Dask mode of :meth:`_fit` (the Curator on a count matrix partitioned by rows,
        after the charge): the same run, its tables and column statistics summed over the
        partitions, every draw made here (:mod:`~privclust.core.cocluster.partitioned`).
        ``eval_row_labels_`` is not computed: it reads every raw row (evaluation only)."""
        from .partitioned import PartitionedCounts

        n, m = parts.n_samples, parts.n_features
        K0 = check_n_clusters(self.n_row_clusters, "n_row_clusters", n, "rows")
        L0 = check_n_clusters(self.n_col_clusters, "n_col_clusters", m, "columns")
        epsilon = float(self.epsilon)
        accountant = BudgetAccountant(epsilon)
        runs = run_counts(
            PartitionedCounts(parts, self._row_cap()),
            K0,
            L0,
            epsilon,
            int(self.n_iter),
            rng,
            1,
            float(self.cell_bound),
            float(self.assignment_share),
            accountant,
        )
        self._publish(runs, m, accountant)

    def _publish(self, runs, n_features, accountant):
        """The released attributes of one run and its guarantee."""
        row_alive, col_alive = runs.row_alive[0], runs.col_alive[0]
        self.table_ = runs.table[0][row_alive][:, col_alive]
        self.row_labels_ = compact(runs.row_slots[0], row_alive)
        self.column_labels_ = compact(runs.col_slots[0], col_alive)
        self.n_row_clusters_, self.n_col_clusters_ = self.table_.shape
        self.n_features_in_ = n_features
        notes = [CELL_WARNING, EVAL_WARNING]
        cap = self._row_cap()
        if cap is not None:
            notes.append(row_cap_note(cap, float(self.cell_bound)))
        self.privacy_ = accountant.guarantee("pure", "cell", warnings=notes)

    def fit_predict(self, X, y=None):
        """Fit and return the released row labels ``row_labels_`` (never ``eval_row_labels_``)."""
        return self.fit(X).row_labels_
