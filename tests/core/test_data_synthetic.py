"""Synthetic generators: shapes, labels and ground truth (the experimental settings of Wang, Wang
& Singh, NIPS 2015, Sec. 5; Schellekens et al., SPARS 2019, Sec. III; Battaglia & Pensa, SDM 2025,
Sec. 5; and the planted ball of our 1-cluster benchmark)."""

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core.data import (
    make_block_counts,
    make_gaussian_mixture,
    make_planted_ball,
    make_union_of_subspaces,
)


def test_union_of_subspaces_noiseless_points_lie_in_their_subspace():
    ds = make_union_of_subspaces(500, 10, 3, 3, noise=0.0, random_state=1)
    U = ds.truth["subspaces"]
    assert ds.X.shape == (500, 10) and U.shape == (3, 10, 3) and ds.public
    np.testing.assert_allclose(
        np.einsum("kdq,kdr->kqr", U, U), np.broadcast_to(np.eye(3), (3, 3, 3)), atol=1e-12
    )
    resid = ds.X - np.einsum(
        "ndq,nq->nd", U[ds.labels], np.einsum("ndq,nd->nq", U[ds.labels], ds.X)
    )
    assert np.max(np.abs(resid)) < 1e-12
    np.testing.assert_allclose(np.linalg.norm(ds.X, axis=1), 1.0)  # y on the unit sphere
    np.testing.assert_allclose(
        ds.X, np.einsum("ndq,nq->nd", U[ds.labels], ds.truth["coefficients"])
    )
    # the other subspaces do not contain the points
    other = U[(ds.labels + 1) % 3]
    far = ds.X - np.einsum("ndq,nq->nd", other, np.einsum("ndq,nd->nq", other, ds.X))
    assert np.min(np.linalg.norm(far, axis=1)) > 1e-3


def test_union_of_subspaces_noise_and_clipping():
    ds = make_union_of_subspaces(5000, 5, 3, 3, noise=0.01, random_state=2)
    assert np.max(np.linalg.norm(ds.X, axis=1)) <= 1.0 + 1e-12
    counts = np.bincount(ds.labels, minlength=3)
    assert counts.min() > 1500  # uniform assignment
    raw = make_union_of_subspaces(2000, 20, 2, 2, noise=0.1, random_state=3, clip_radius=None)
    U = raw.truth["subspaces"]
    clean = np.einsum("ndq,nq->nd", U[raw.labels], raw.truth["coefficients"])
    assert abs(np.std(raw.X - clean) - 0.1) < 0.005
    a = make_union_of_subspaces(50, 4, 2, 1, random_state=7)
    b = make_union_of_subspaces(50, 4, 2, 1, random_state=7)
    assert a.fingerprint == b.fingerprint
    with pytest.raises(ValueError, match="subspace_dim"):
        make_union_of_subspaces(10, 3, 2, 3)


def test_gaussian_mixture_matches_seed_002():
    ds = make_gaussian_mixture(20000, 10, 10, random_state=4)
    C = ds.truth["centers"]
    assert ds.X.shape == (20000, 10) and C.shape == (10, 10) and ds.public
    assert ds.truth["scale"] == pytest.approx(2.5 * 10**0.1)
    resid = ds.X - C[ds.labels]
    assert abs(resid.std() - 1.0) < 0.02 and abs(resid.mean()) < 0.02  # identity covariance
    counts = np.bincount(ds.labels, minlength=10)
    assert counts.min() > 1700 and counts.max() < 2300  # uniform weights
    big = make_gaussian_mixture(10, 10, 2000, random_state=5).truth["centers"]
    assert abs(big.std() - 2.5 * 2000**0.1) / (2.5 * 2000**0.1) < 0.03
    w = make_gaussian_mixture(1000, 2, 2, weights=[1, 0], random_state=0)
    assert np.all(w.labels == 0)
    with pytest.raises(ValueError, match="weights"):
        make_gaussian_mixture(10, 2, 2, weights=[1, 2, 3])


def test_planted_ball_truth():
    ds = make_planted_ball(1000, 10, std=0.01, random_state=6)
    t = ds.truth
    inl = t["inliers"]
    assert inl.sum() == 500 and np.array_equal(ds.labels, inl.astype(int))
    dist = np.linalg.norm(ds.X - t["center"], axis=1)
    assert np.all(dist[inl] <= t["radius"] + 1e-15)
    assert 0.01 * np.sqrt(10) * 0.5 < t["radius"] < 0.01 * 10  # ~ std * sqrt(d) scale
    assert np.all((ds.X >= 0) & (ds.X <= 1))
    grid = ds.X / t["grid_step"]
    np.testing.assert_array_equal(grid, np.round(grid))  # on the public grid
    assert np.mean(dist[~inl] < t["radius"]) < 0.01  # background is spread
    small = make_planted_ball(100, 2, n_inliers=7, std=0.001, center=[0.5, 0.5], random_state=0)
    assert small.truth["inliers"].sum() == 7
    assert np.sum(np.linalg.norm(small.X - 0.5, axis=1) <= small.truth["radius"]) >= 7
    with pytest.raises(ValueError, match="n_inliers"):
        make_planted_ball(10, 2, n_inliers=11)


@pytest.mark.parametrize("model", ["poisson", "multinomial"])
@pytest.mark.parametrize("sparse", [False, True])
def test_block_counts(model, sparse):
    ds = make_block_counts(400, 300, 3, 4, model=model, sparse=sparse, random_state=8)
    A = ds.X
    assert A.shape == (400, 300) and ds.is_sparse == sparse
    dense = A.toarray() if sparse else A
    assert np.all(dense >= 0) and np.array_equal(dense, np.round(dense))
    r, c = ds.truth["row_labels"], ds.truth["column_labels"]
    assert np.array_equal(ds.labels, r) and r.shape == (400,) and c.shape == (300,)
    M = ds.truth["block_means"]
    # empirical block means track the planted ones
    emp = np.array([[dense[np.ix_(r == i, c == j)].mean() for j in range(4)] for i in range(3)])
    if model == "poisson":
        np.testing.assert_allclose(emp, M, atol=0.1)
    else:
        np.testing.assert_array_equal(dense.sum(axis=1), 100)
        assert np.all(np.argmax(emp, axis=0) == np.argmax(M, axis=0))


def test_block_counts_validation():
    with pytest.raises(ValueError, match="model"):
        make_block_counts(model="gamma")
    with pytest.raises(ValueError, match="block_means"):
        make_block_counts(10, 10, 2, 2, block_means=np.ones((3, 3)))
    assert sp.issparse(make_block_counts(10, 10, 2, 2, sparse=True, random_state=0).X)
