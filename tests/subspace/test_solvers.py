"""Non-private subspace solvers (k-plane, TSC, SSC, LRR) and fit_subspaces: noiseless recovery and
edge cases."""

import numpy as np
import pytest

from privclust.core.metrics import wasserstein_subspaces
from privclust.core.subspace import (
    KPlanes,
    LowRankRepresentation,
    SparseSubspaceClustering,
    ThresholdSubspaceClustering,
    fit_subspaces,
)
from privclust.core.subspace.solvers import make_solver


@pytest.fixture(scope="module")
def noiseless(union_of_subspaces):
    return union_of_subspaces(300, 10, 3, 3, seed=3)


@pytest.mark.parametrize(
    "est",
    [
        KPlanes(3, 3, random_state=0),
        ThresholdSubspaceClustering(3, 3, variant="full", random_state=0),
        ThresholdSubspaceClustering(3, 3, variant="simplified", random_state=0),
        ThresholdSubspaceClustering(
            3, 3, variant="simplified", subspace_method="random_points", random_state=0
        ),
        SparseSubspaceClustering(3, 3, random_state=0),
        LowRankRepresentation(3, 3, random_state=0),
    ],
    ids=["kplanes", "tsc-full", "tsc-simplified", "tsc-random-points", "ssc", "lrr"],
)
def test_noiseless_recovery(noiseless, est):
    est.fit(noiseless.X)
    assert est.subspaces_.shape == (3, 10, 3)
    assert est.labels_.shape == (300,)
    assert wasserstein_subspaces(est.subspaces_, noiseless.truth["subspaces"]) < 1e-6
    # orthonormal bases
    gram = np.einsum("kdq,kdr->kqr", est.subspaces_, est.subspaces_)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(3), gram.shape), atol=1e-10)


def test_noisy_recovery_close_to_truth(union_of_subspaces):
    ds = union_of_subspaces(600, 10, 3, 3, noise=0.05, seed=4)
    for est in (
        KPlanes(3, 3, random_state=1),
        LowRankRepresentation(3, 3, random_state=1),
        ThresholdSubspaceClustering(3, 3, random_state=1),
    ):
        assert wasserstein_subspaces(est.fit(ds.X).subspaces_, ds.truth["subspaces"]) < 0.2


def test_tsc_simplified_falls_back_when_components_differ_from_k(union_of_subspaces):
    ds = union_of_subspaces(200, 6, 3, 2, seed=5)
    est = ThresholdSubspaceClustering(
        3, 2, n_neighbors=1, variant="simplified", random_state=0
    ).fit(ds.X)
    assert est.fallback_ and est.n_components_ > 3  # a 1-NN graph has many components
    assert len(np.unique(est.labels_)) == 3
    ok = ThresholdSubspaceClustering(3, 2, variant="simplified", random_state=0).fit(ds.X)
    assert ok.fallback_ == (ok.n_components_ != 3)


def test_fit_subspaces_span_small_and_empty_clusters():
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((8, 3)))[0]
    X = np.vstack([rng.standard_normal((40, 3)) @ U.T, [[1.0] + [0.0] * 7]])
    labels = np.r_[np.zeros(40, int), 1]  # cluster 1 has one point
    bases = fit_subspaces(X, labels, 3, n_clusters=3, random_state=1)  # cluster 2 is empty
    assert bases.shape == (3, 8, 3)
    np.testing.assert_allclose(
        np.einsum("kdq,kdr->kqr", bases, bases), np.broadcast_to(np.eye(3), (3, 3, 3)), atol=1e-12
    )
    P0 = bases[0] @ bases[0].T
    np.testing.assert_allclose(P0, U @ U.T, atol=1e-10)
    assert abs(abs(bases[1][0, 0]) - 1.0) < 1e-12  # the single point's direction kept
    # completion directions are random (data-independent): two seeds differ
    other = fit_subspaces(X, labels, 3, n_clusters=3, random_state=2)
    assert not np.allclose(bases[1], other[1])


def test_fit_subspaces_validation():
    X = np.ones((5, 4))
    with pytest.raises(ValueError, match="labels"):
        fit_subspaces(X, np.zeros(4, int), 2)
    with pytest.raises(ValueError, match="q"):
        fit_subspaces(X, np.zeros(5, int), 4)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_clusters": 3, "subspace_dim": 4}, "subspace_dim"),
        ({"n_clusters": 0, "subspace_dim": 1}, "n_clusters"),
        ({"n_clusters": 20, "subspace_dim": 1}, "n_clusters"),
    ],
)
def test_solver_parameter_validation(kwargs, match):
    X = np.random.default_rng(0).standard_normal((10, 4))
    with pytest.raises(ValueError, match=match):
        KPlanes(**kwargs).fit(X)


def test_nan_input_rejected():
    X = np.random.default_rng(0).standard_normal((10, 4))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SparseSubspaceClustering(2, 1).fit(X)


def test_make_solver_names_and_estimators():
    assert isinstance(make_solver("ssc", 3, 2, 0), SparseSubspaceClustering)
    est = make_solver(KPlanes(2, 1, n_init=3), 3, 2, random_state=7)
    assert isinstance(est, KPlanes) and est.n_init == 3 and est.random_state == 7
    assert (est.n_clusters, est.subspace_dim) == (3, 2)
    with pytest.raises(ValueError, match="solver"):
        make_solver("nope", 3, 2)
    with pytest.raises(TypeError, match="solver"):
        make_solver(42, 3, 2)


def test_seeded_solvers_are_reproducible(noiseless):
    a = KPlanes(3, 3, random_state=11).fit(noiseless.X)
    b = KPlanes(3, 3, random_state=11).fit(noiseless.X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
