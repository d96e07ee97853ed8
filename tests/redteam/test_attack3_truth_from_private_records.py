"""Red team, attack 3: ground truth computed from the private records shown to the analyst.

The registry's ``yaleb5`` truth subspaces are the top singular vectors of the records themselves,
so any display of them (or of a distance to them) releases the data without noise. The Dataset
now says so: ``truth_public`` is False and such truth belongs to the data owner view only.
"""

import numpy as np
import pytest

from privclust.core.data import Dataset, get_dataset, list_datasets


@pytest.mark.realdata
def test_attack3_yaleb5_truth_is_evaluation_only(data_dir):
    ds = get_dataset("yaleb5")
    assert ds.truth_public is False
    # why: the truth is a function of the private records (per-class top singular vectors)
    for c in range(len(ds.truth["subjects"])):
        U = np.linalg.svd(ds.X[ds.labels == c].T, full_matrices=False)[0][:, :9]
        B = ds.truth["subspaces"][c]
        np.testing.assert_allclose(np.abs(U.T @ B).max(axis=1), 1.0, atol=1e-6)
    assert get_dataset("yaleb").truth_public is False


def test_attack3_truth_on_private_data_defaults_to_evaluation_only():
    X = np.random.default_rng(0).random((30, 3))
    assert Dataset(X, truth={"center": X.mean(0)}).truth_public is False
    assert Dataset(X, truth={"center": X.mean(0)}, public=True).truth_public is True
    assert Dataset(X, truth={"k": 3}, truth_public=True).truth_public is True


def test_attack3_generator_truth_on_demo_data_stays_public():
    for name in list_datasets():
        if name.demo and name.public:
            assert get_dataset(name).truth_public is True, name
