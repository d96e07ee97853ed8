"""Red team, attack 4: resetting the privacy budget by reloading, reordering or deriving a view.

The ledger is keyed by ``Dataset.budget_key``. It used to be the exact-bytes fingerprint only:
``yaleb5`` drew random subjects and a random projection on every load (a new fingerprint, a fresh
budget each time), ``yaleb`` and ``yaleb5`` kept separate budgets over the same people, and a
reordered copy of an upload was a new dataset. Now builders are deterministic, the budget key is
order-invariant and derived views carry their source's key.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core.data import Dataset, get_dataset, list_datasets


def test_attack4_reordered_dense_upload_keeps_its_budget():
    rng = np.random.default_rng(4)
    X = np.round(rng.standard_normal((200, 6)), 2)
    X[10:20] = X[0]  # duplicate rows
    X[:, 3] = np.where(rng.random(200) < 0.5, 0.0, X[:, 3])  # ties in a column
    X[5, 2] = -0.0
    ds = Dataset(X)
    perm = rng.permutation(200)
    shuffled = Dataset(X[perm])
    assert shuffled.budget_key == ds.budget_key
    assert (
        shuffled.fingerprint != ds.fingerprint
    )  # the exact-bytes fingerprint stays order-sensitive
    assert Dataset(np.array(X[perm], order="F")).budget_key == ds.budget_key
    changed = X.copy()
    changed[17, 4] += 0.01
    assert Dataset(changed).budget_key != ds.budget_key
    assert Dataset(X[1:]).budget_key != ds.budget_key  # a dropped row is a different dataset
    # the same records with their columns in another order are the same source (one budget)
    assert Dataset(X[:, ::-1]).budget_key == ds.budget_key


def test_attack4_reordered_sparse_upload_keeps_its_budget():
    rng = np.random.default_rng(44)
    A = sp.random(150, 40, density=0.1, random_state=5, format="csr")
    A.data = np.floor(A.data * 5) + 1
    ds = Dataset(A)
    perm = rng.permutation(150)
    shuffled = Dataset(A[perm])
    assert shuffled.budget_key == ds.budget_key
    assert shuffled.fingerprint != ds.fingerprint
    assert Dataset(sp.coo_matrix(A[perm])).budget_key == ds.budget_key
    B = A.tolil()
    B[3, 7] = B[3, 7] + 1
    assert Dataset(B.tocsr()).budget_key != ds.budget_key


def test_attack4_derived_view_carries_its_source_key():
    rng = np.random.default_rng(3)
    src = Dataset(rng.random((50, 4)))
    view = Dataset(src.X[:20] @ rng.standard_normal((4, 2)), source=src)
    assert view.budget_key == src.budget_key
    assert view.source == src.budget_key
    assert Dataset(view.X, source=src.budget_key).budget_key == src.budget_key
    assert view.record_key != src.record_key
    with pytest.raises(ValueError, match="source"):
        Dataset(view.X, source="yaleb")


def test_attack4_demo_builders_are_deterministic():
    for name in list_datasets():
        if name.available and name.demo:
            a, b = get_dataset(name), get_dataset(name)
            assert a.fingerprint == b.fingerprint, name
            assert a.budget_key == b.budget_key, name


@pytest.mark.realdata
def test_attack4_reloading_yaleb5_keeps_one_budget(data_dir):
    first, second = get_dataset("yaleb5"), get_dataset("yaleb5")
    assert first.fingerprint == second.fingerprint
    assert first.budget_key == second.budget_key


@pytest.mark.realdata
def test_attack4_yaleb_and_its_views_share_one_budget(data_dir):
    yaleb = get_dataset("yaleb")
    assert get_dataset("yaleb5").budget_key == yaleb.budget_key
    assert get_dataset("yaleb5", subjects=[0, 1, 2]).budget_key == yaleb.budget_key
    assert get_dataset("yaleb", drop_bad=True).budget_key == yaleb.budget_key
    assert get_dataset("yaleb5").fingerprint != yaleb.fingerprint


@pytest.mark.realdata
def test_attack4_real_builders_are_deterministic(data_dir):
    for name in ("classic3", "cstr"):
        a, b = get_dataset(name), get_dataset(name)
        assert a.fingerprint == b.fingerprint and a.budget_key == b.budget_key, name
