"""DPTauCoClustering on the release protocol: parameters checked from the public shape before
the charge, the cell relation counted on a record-level ledger only with a row cap, rows clipped
per record, and only the released attributes leave through the Curator."""

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core import Curator, DPTauCoClustering
from privclust.core.cocluster._inputs import clip_row_sums
from privclust.core.data import make_block_counts
from privclust.core.estimator import PrivateEstimator
from privclust.core.privacy import Ledger


@pytest.fixture(scope="module")
def X():
    return make_block_counts(120, 80, 3, 3, signal=2.0, background=0.1, random_state=1).X


def test_clip_row_sums_is_per_row_proportional_floored_and_sparse_safe():
    A = np.array([[3.0, 1, 0, 0], [40, 40, 20, 0], [0, 0, 0, 0], [7, 0, 0, 1e9]])
    out = clip_row_sums(A, 4)
    np.testing.assert_array_equal(out, [[3, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]])
    assert np.all(out.sum(axis=1) <= 4) and np.all(out == np.floor(out))
    S = clip_row_sums(sp.csr_array(A), 4)
    assert sp.issparse(S)
    np.testing.assert_array_equal(S.toarray(), out)
    assert A[1, 0] == 40  # the input is not modified
    rng = np.random.default_rng(0)
    big = rng.poisson(rng.gamma(0.5, 20.0, size=(300, 1)), size=(300, 50)).astype(float)
    for L in (1, 7, 50):
        clipped = clip_row_sums(big, L)
        assert clipped.sum(axis=1).max() <= L
        small = big.sum(axis=1) <= L
        np.testing.assert_array_equal(clipped[small], big[small])
    # the count domain is enforced per record: negatives to 0, non-integers floored
    np.testing.assert_array_equal(
        clip_row_sums(np.array([[1.0, 2, 3], [-4, 1, 0.5]]), 10), [[1.0, 2, 3], [0, 1, 0]]
    )


def test_the_fit_uses_the_clipped_matrix(X):
    capped = DPTauCoClustering(3, 3, epsilon=2.0, row_cap=5, random_state=3).fit(X)
    manual = DPTauCoClustering(3, 3, epsilon=2.0, random_state=3).fit(clip_row_sums(X, 5))
    np.testing.assert_array_equal(capped.row_labels_, manual.row_labels_)
    np.testing.assert_array_equal(capped.column_labels_, manual.column_labels_)
    np.testing.assert_array_equal(capped.table_, manual.table_)
    raw = DPTauCoClustering(3, 3, epsilon=2.0, random_state=3).fit(X)
    assert not np.array_equal(raw.table_, capped.table_)
    assert any("row_cap=5" in w for w in capped.privacy_.warnings)


def test_row_cap_projects_every_record_onto_the_domain_instead_of_failing_after_the_charge(X):
    """With row_cap (the record-level path) every finite record is projected onto integer,
    non-negative counts per record (floored, negatives to 0), so no input fails after the
    charge: a refusal there would tell neighbours apart."""
    odd = np.array(X, dtype=float) * 0.5
    odd[3, 2] = -7.0
    got = DPTauCoClustering(3, 3, row_cap=5, random_state=0).fit(odd)
    projected = np.floor(np.maximum(odd, 0.0))
    want = DPTauCoClustering(3, 3, row_cap=5, random_state=0).fit(projected)
    np.testing.assert_array_equal(got.table_, want.table_)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_row_clusters": 121}, "n_row_clusters=121"),
        ({"n_col_clusters": 81}, "n_col_clusters=81"),
        ({"n_row_clusters": 2, "n_col_clusters": 4}, "2\\*\\*min"),
        ({"row_cap": 0}, "row_cap"),
        ({"row_cap": 2.5}, "row_cap"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"cell_bound": -1.0}, "cell_bound"),
        ({"neighbouring": "rows"}, "neighbouring"),
    ],
)
def test_parameters_are_refused_before_the_charge_and_before_reading(kwargs, match, sealed):
    ledger = Ledger(100.0)
    est = DPTauCoClustering(
        **{"n_row_clusters": 3, "n_col_clusters": 3, "row_cap": 2, "ledger": ledger, **kwargs}
    )
    with pytest.raises(ValueError, match=match):
        est.fit(sealed((120, 80)))
    assert ledger.history == []


def test_record_level_ledgers_and_the_row_cap(X, sealed):
    est = DPTauCoClustering(3, 3, epsilon=0.5, cell_bound=1.0)
    assert isinstance(est, PrivateEstimator) and est.neighbouring_relation() == "cell"
    # replace-one ledger: refused without a row cap, before reading the data
    ledger = Ledger(10.0)
    with pytest.raises(ValueError, match="row_cap"):
        est.set_params(ledger=ledger).fit(sealed(X.shape))
    assert ledger.history == []
    # with L = 4, c = 1: ceil(8) x 0.5 = 4.0
    est.set_params(row_cap=4, ledger=ledger).fit(X)
    (rec,) = ledger.history
    assert (rec.relation, rec.requested, rec.epsilon) == ("cell", (0.5, 0.0), 4.0)
    # an add/remove ledger refuses a cell-level release, cap or not
    ar = Ledger(10.0, unit="add_remove")
    with pytest.raises(ValueError, match="add/remove"):
        DPTauCoClustering(3, 3, row_cap=4, ledger=ar).fit(sealed(X.shape))
    assert ar.history == []


def test_curator_release_has_only_the_released_attributes_and_the_converted_cost(X):
    ledger = Ledger(20.0)
    curator = Curator(sp.csr_matrix(X), ledger)
    with pytest.raises(ValueError, match="row_cap"):
        curator.release(DPTauCoClustering(3, 3, epsilon=0.5))
    assert ledger.history == []
    release = curator.release(DPTauCoClustering(3, 3, epsilon=0.5, cell_bound=2.0, row_cap=3))
    assert set(release.attributes) == {"table_", "row_labels_", "column_labels_"}
    assert release.cost == (0.5 * 2 * 3 * 1, 0.0)  # 2 floor(L) ceil(1/c) steps
    assert release.row_labels_.shape == (X.shape[0],)


def test_fit_predict_returns_the_released_row_labels(X):
    est = DPTauCoClustering(3, 3, epsilon=1.0, random_state=0)
    labels = est.fit_predict(X)
    np.testing.assert_array_equal(labels, est.row_labels_)
    assert "row_labels_" in est.released_attributes()
    assert "eval_row_labels_" not in est.released_attributes()
