"""LRR (Liu et al. 2013) and TSC (Heckel & Bolcskei 2015) options."""

import math

import numpy as np
import pytest

from privclust.core.metrics import clustering_accuracy
from privclust.core.subspace import LowRankRepresentation, ThresholdSubspaceClustering
from privclust.core.subspace.lrr import lrr_coefficients, lrr_postprocess
from privclust.core.subspace.solvers import PRESETS


def test_lrr_column_sparse_errors_are_isolated(union_of_subspaces):
    """Whole-column corruptions (sample-specific outliers): the l_{2,1} term puts them in E and
    the remaining points are still segmented."""
    ds = union_of_subspaces(120, 30, 3, 3, seed=0)
    X = ds.X.copy()
    rng = np.random.default_rng(0)
    bad = rng.choice(len(X), 6, replace=False)
    X[bad] = rng.standard_normal((6, 30)) * np.linalg.norm(X, axis=1).mean() / np.sqrt(30)
    est = LowRankRepresentation(3, 3, lam=0.3, random_state=0).fit(X)
    good = np.setdiff1d(np.arange(len(X)), bad)
    assert clustering_accuracy(ds.labels[good], est.labels_[good]) >= 0.98


def test_lrr_high_dimensional_path_solves_the_program():
    """n < d: the ALM in the column space must still satisfy Y = YZ + E with small residual."""
    X = np.random.default_rng(1).standard_normal((20, 200))
    Z, it = lrr_coefficients(X, lam=0.5)
    assert it < 1000 and Z.shape == (20, 20)
    # clean data spanning the whole row space: Z = I is feasible with E = 0, nuclear norm 20;
    # the solution costs no more than that
    U, s, Vt = np.linalg.svd(Z)
    E = X.T - X.T @ Z
    assert s.sum() + 0.5 * np.linalg.norm(E, axis=0).sum() <= 20 + 1e-4


def test_lrr_postprocess_option_and_presets(union_of_subspaces):
    ds = union_of_subspaces(90, 10, 3, 2, noise=0.01, seed=2)
    est = LowRankRepresentation(3, 2, postprocess=True, random_state=0).fit(ds.X)
    W = est.affinity_matrix_
    assert np.allclose(W, W.T) and W.min() >= 0 and np.allclose(np.diag(W), 1.0)
    assert clustering_accuracy(ds.labels, est.labels_) >= 0.95
    np.testing.assert_allclose(lrr_postprocess(est.coef_), W)
    assert LowRankRepresentation(preset="motion").resolved_lam() == PRESETS["lrr"]["motion"]["lam"]
    assert LowRankRepresentation(preset="faces", lam=2.0).resolved_lam() == 2.0
    with pytest.raises(ValueError, match="preset"):
        LowRankRepresentation(preset="nope").fit(ds.X)


@pytest.mark.parametrize("n,k,q", [(300, 3, 9), (640, 10, 9), (90, 3, 2)])
def test_tsc_neighbour_count_follows_samples_per_subspace(n, k, q):
    X = np.random.default_rng(0).standard_normal((n, 20))
    est = ThresholdSubspaceClustering(k, q, random_state=0).fit(X)
    assert est.n_neighbors_ == max(3, math.ceil(n / (20 * k)))


def test_tsc_segments_noiseless_lines(union_of_subspaces):
    """Noiseless lines in R^6 with q = 3 neighbours are segmented exactly."""
    ds = union_of_subspaces(60, 6, 2, 1, seed=3)
    est = ThresholdSubspaceClustering(2, 1, n_neighbors=3, random_state=0).fit(ds.X)
    assert clustering_accuracy(ds.labels, est.labels_) == 1.0
