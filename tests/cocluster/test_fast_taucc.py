"""Fast-tauCC (Battaglia, Peiretti & Pensa, Mach. Learn. 2024; Battaglia & Pensa, SDM 2025,
Sec. 3.2): block recovery, dense == sparse, input checks, no densifying."""

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core.cocluster import TauCoClustering
from privclust.core.data import DataWarning, make_block_counts
from privclust.core.metrics import contingency_table, nmi, tau_columns, tau_rows


def _blocks(sparse=False, seed=0):
    ds = make_block_counts(
        240, 180, 3, 3, signal=3.0, background=0.05, sparse=sparse, random_state=seed
    )
    return ds.X, ds.truth["row_labels"], ds.truth["column_labels"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_clean_blocks(seed):
    # Fast-tauCC is meant to start from an over-estimate and drop clusters (BP25 Sec. 3.2);
    # from exactly 3 it often merges two blocks early (as the authors' code does on classic3).
    X, rows, cols = _blocks(seed=seed)
    est = TauCoClustering(20, 20, random_state=seed).fit(X)
    assert est.table_.shape == (3, 3)
    assert nmi(rows, est.row_labels_) == pytest.approx(1.0)
    assert nmi(cols, est.column_labels_) == pytest.approx(1.0)
    assert est.converged_
    exact = contingency_table(X, est.row_labels_, est.column_labels_)
    np.testing.assert_allclose(est.table_, exact)
    assert est.tau_rows_ == pytest.approx(tau_rows(est.table_))


def test_dense_and_sparse_agree():
    X, _, _ = _blocks()
    dense = TauCoClustering(4, 4, random_state=3).fit(X)
    sparse = TauCoClustering(4, 4, random_state=3).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(dense.row_labels_, sparse.row_labels_)
    np.testing.assert_array_equal(dense.column_labels_, sparse.column_labels_)
    np.testing.assert_allclose(dense.table_, sparse.table_)


def test_huge_sparse_matrix_is_never_densified():
    # 200k x 300k: a dense copy would need 480 GB; only A.C and A^T.R products are formed.
    rng = np.random.default_rng(0)
    n, m, nnz = 200_000, 300_000, 50_000
    X = sp.csr_matrix(
        (
            rng.integers(1, 5, nnz).astype(float),
            (rng.integers(n, size=nnz), rng.integers(m, size=nnz)),
        ),
        shape=(n, m),
    )
    est = TauCoClustering(2, 2, max_iter=3, random_state=0).fit(X)
    assert est.row_labels_.shape == (n,) and est.column_labels_.shape == (m,)


def test_zero_rows_and_columns_are_handled():
    X, rows, _ = _blocks()
    X = np.vstack([X, np.zeros((5, X.shape[1]))])
    X = np.hstack([X, np.zeros((X.shape[0], 4))])
    est = TauCoClustering(20, 20, random_state=0).fit(sp.csr_matrix(X))
    assert nmi(rows, est.row_labels_[: len(rows)]) == pytest.approx(1.0)
    assert est.row_labels_.shape == (X.shape[0],)


def test_input_checks():
    X, _, _ = _blocks()
    bad = X.astype(float)
    bad[3, 4] = -1
    with pytest.raises(ValueError, match="negative"):
        TauCoClustering(3, 3).fit(bad)
    with pytest.warns(DataWarning, match="non-integer"):
        TauCoClustering(3, 3, random_state=0).fit(X + 0.5)
    with pytest.raises(ValueError, match="n_row_clusters=500"):
        TauCoClustering(500, 3).fit(X)
    with pytest.raises(ValueError, match="n_col_clusters=181"):
        TauCoClustering(3, 181).fit(X)
    with pytest.raises(ValueError, match="at least 2"):
        TauCoClustering(1, 3).fit(X)
    with pytest.raises(TypeError, match="n_row_clusters"):
        TauCoClustering(2.5, 3).fit(X)
    with pytest.raises(ValueError, match="no positive entry"):
        TauCoClustering(2, 2).fit(np.zeros((5, 5)))
    with pytest.raises(ValueError, match="non-finite"):
        TauCoClustering(2, 2).fit(np.full((4, 4), np.nan))


def test_tau_attributes_match_the_metrics_module():
    X, _, _ = _blocks()
    est = TauCoClustering(3, 3, random_state=1).fit(X)
    assert est.tau_rows_ == pytest.approx(tau_rows(est.table_))
    assert est.tau_columns_ == pytest.approx(tau_columns(est.table_))


def test_estimators_follow_the_scikit_learn_contract():
    """The scikit-learn estimator contract: get_params/set_params and clone work; a clone keeps the parameters and the
    ledger (one budget), not the fitted state."""
    from sklearn.base import clone

    from privclust.core import DPTauCoClustering, Ledger

    ledger = Ledger(epsilon=2.0)
    # a record-level ledger counts this cell-level release only with a row cap: ceil(2 * 1 / 1) x 0.5
    est = DPTauCoClustering(3, 2, epsilon=0.5, n_iter=2, row_cap=1, ledger=ledger, random_state=0)
    assert est.get_params()["n_col_clusters"] == 2
    assert est.set_params(epsilon=0.25) is est and est.epsilon == 0.25
    X, _, _ = _blocks()
    est.fit(X)
    twin = clone(est)
    assert twin.get_params()["epsilon"] == 0.25 and not hasattr(twin, "table_")
    twin.fit(X)
    assert float(ledger.spent[0]) == 1.0
    assert TauCoClustering(4, 5).get_params()["n_row_clusters"] == 4
