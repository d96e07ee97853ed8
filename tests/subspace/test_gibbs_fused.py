"""The Gibbs kernels against the pre-fusion reference (tests/subspace/_gibbs_reference.py) and
the compiled path against the numpy path (Wang, Wang & Singh, NIPS 2015, Sec. 4.1)."""

import numpy as np
import pytest
from _gibbs_reference import u_update as reference_u_update
from _gibbs_reference import z_update as reference_z_update
from scipy.stats import ks_2samp

from privclust.core.privacy import haar_stiefel
from privclust.core.subspace import _gibbs_fused
from privclust.core.subspace._gibbs_fused import canonical_signs
from privclust.core.subspace.gibbs import GibbsIterations, triu_outer, u_update, z_update

needs_numba = pytest.mark.skipif(not _gibbs_fused.AVAILABLE, reason="numba is not installed")
PATHS = [False, pytest.param(True, marks=needs_numba)]


def _problem(n=300, d=6, k=3, q=2, seed=0):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((k, d, q)))[0]
    lab = rng.integers(k, size=n)
    X = np.einsum("ndq,nq->nd", basis[lab], rng.standard_normal((n, q)))
    X += 0.05 * rng.standard_normal((n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    return X, (X * X).sum(1), triu_outer(X)


def _chain(X, sq, outer, fused, q, n_iter, kappa, C=4, k=3, seed=7):
    rng = np.random.default_rng(seed)
    U = haar_stiefel(X.shape[1], q, rng, size=C * k).reshape(C, k, X.shape[1], q)
    for _ in range(n_iter):
        z, A, counts = z_update(X, sq, outer, U, kappa, rng, fused=fused)
        U = u_update(U, A, counts, kappa, rng, fused=fused)
    return U, z, rng.random()


@needs_numba
@pytest.mark.parametrize("q", [1, 2, 3])
def test_compiled_path_gives_the_same_chain_as_the_numpy_path(q):
    """Same seed, same chain: labels equal, bases equal to rounding, and the Generator ends in
    the same state (the same random numbers were consumed)."""
    X, sq, outer = _problem(q=q)
    Uf, zf, nf = _chain(X, sq, outer, True, q, 150, kappa=20.0)
    Un, zn, nn = _chain(X, sq, outer, False, q, 150, kappa=20.0)
    np.testing.assert_array_equal(zf, zn)
    np.testing.assert_allclose(Uf, Un, atol=1e-9)
    assert nf == nn


@pytest.mark.parametrize("fused", PATHS)
def test_z_update_gives_the_reference_labels_and_scatter(fused):
    X, sq, outer = _problem(n=500, d=5)
    U = np.linalg.qr(np.random.default_rng(1).standard_normal((6, 3, 5, 2)))[0]
    z, A, counts = z_update(X, sq, outer, U, 15.0, np.random.default_rng(4), fused=fused)
    zr, Ar, cr = reference_z_update(X, sq, outer, U, 15.0, np.random.default_rng(4))
    np.testing.assert_array_equal(z, zr)
    np.testing.assert_allclose(A, Ar, atol=1e-11)
    np.testing.assert_array_equal(counts, cr)


def test_canonical_signs_flip_to_a_positive_largest_entry():
    V = np.array([[[0.1, -0.9], [-0.5, 0.2]]])
    out = canonical_signs(V)
    np.testing.assert_array_equal(out, [[[-0.1, 0.9], [0.5, -0.2]]])
    np.testing.assert_array_equal(canonical_signs(-V), out)


def _one_sweep(update, kappa, fused=None, replicates=6000, d=5, q=2, seed=0):
    """One U-update of the same state (U, A), replicated over the chain axis; returns the
    new columns projected on two fixed directions (sign-sensitive statistics)."""
    rng = np.random.default_rng(11)
    U0 = np.linalg.qr(rng.standard_normal((d, q)))[0]
    Y = rng.standard_normal((40, d)) * np.array([1.0, 0.8, 0.5, 0.3, 0.1])
    A0 = Y.T @ Y / 40
    U = np.broadcast_to(U0, (replicates, 1, d, q))
    A = np.broadcast_to(A0, (replicates, 1, d, d))
    counts = np.ones((replicates, 1), dtype=np.int64)
    kw = {} if fused is None else {"fused": fused}
    out = update(U, A, counts, kappa, np.random.default_rng(seed), **kw)[:, 0]
    dirs = np.linalg.qr(np.random.default_rng(3).standard_normal((d, 2)))[0]
    return np.einsum("cdq,de->cqe", out, dirs).reshape(replicates, -1)


@pytest.mark.parametrize("fused", PATHS)
def test_u_update_has_the_reference_distribution(fused):
    """The sign rule changes the draw for a given seed, not its distribution: one sweep from a
    fixed state, replicated, against the reference on sign-sensitive projections (two-sample
    KS, Bonferroni over 4 statistics); doubling kappa (a wrong target) is detected."""
    ref = _one_sweep(reference_u_update, 8.0, seed=1)
    new = _one_sweep(u_update, 8.0, fused=fused, seed=2)
    assert min(ks_2samp(ref[:, j], new[:, j]).pvalue for j in range(4)) > 0.01 / 4
    wrong = _one_sweep(u_update, 16.0, fused=fused, seed=2)
    assert min(ks_2samp(ref[:, j], wrong[:, j]).pvalue for j in range(4)) < 1e-4


@needs_numba
def test_compiled_path_hands_the_same_rows_to_hoffs_update(monkeypatch):
    """With one proposal allowed per row, many column draws fall back to Hoff's update; the
    compiled path hands over the same rows at the same point of the random stream."""
    import privclust.core.subspace._bingham as bingham

    monkeypatch.setattr(bingham, "_MAX_PROPOSALS", 1)
    monkeypatch.setattr(bingham, "_ROUND", 1)
    X, sq, outer = _problem(q=3)
    with pytest.warns(RuntimeWarning, match="Hoff"):
        Uf, zf, nf = _chain(X, sq, outer, True, 3, 20, kappa=20.0)
    with pytest.warns(RuntimeWarning, match="Hoff"):
        Un, zn, nn = _chain(X, sq, outer, False, 3, 20, kappa=20.0)
    np.testing.assert_array_equal(zf, zn)
    np.testing.assert_allclose(Uf, Un, atol=1e-9)
    assert nf == nn


_THREADS_CHILD = """
import sys
import numpy as np
sys.path.insert(0, {here!r})
from test_gibbs_fused import _chain, _iterations_chain, _problem
from privclust.core.subspace import _gibbs_fused
assert _gibbs_fused.PARALLEL
U, z, nxt = _chain(*_problem(q=3), True, 3, 30, kappa=20.0)
Ui, zi, nxti = _iterations_chain(_problem(q=3)[0], True, 3, 30, kappa=20.0)
np.save({out!r}, np.concatenate([U.ravel(), z.ravel().astype(float), [nxt],
                                 Ui.ravel(), zi.ravel().astype(float), [nxti]]))
"""


@needs_numba
@pytest.mark.slow
def test_the_chain_does_not_depend_on_the_number_of_threads(tmp_path):
    """With PRIVCLUST_GIBBS_THREADS=2 at import the kernels are parallel builds (chains in the
    label kernel, also inside the one-call iteration; bases in the column set-up; rows in the
    acceptance tests: disjoint outputs, no draws); the chain is the serial one exactly,
    Generator state included, for the separate kernels and for GibbsIterations."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "chain.npy"
    env = dict(os.environ, **{_gibbs_fused.THREADS_VARIABLE: "2"})
    code = _THREADS_CHILD.format(here=str(Path(__file__).parent), out=str(out))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=1200)
    U, z, nxt = _chain(*_problem(q=3), True, 3, 30, kappa=20.0)
    Ui, zi, nxti = _iterations_chain(_problem(q=3)[0], True, 3, 30, kappa=20.0)
    serial = [U.ravel(), z.ravel().astype(float), [nxt], Ui.ravel(), zi.ravel().astype(float)]
    np.testing.assert_array_equal(np.load(out), np.concatenate([*serial, [nxti]]))


@needs_numba
@pytest.mark.parametrize("value", ["0", "two"])
def test_a_bad_thread_count_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv(_gibbs_fused.THREADS_VARIABLE, value)
    with pytest.raises(ValueError, match="PRIVCLUST_GIBBS_THREADS"):
        _gibbs_fused.use_threads()


def _iterations_chain(X, fused, q, n_iter, kappa, C=4, k=3, seed=7):
    """The estimator's loop (GibbsIterations.step)."""
    rng = np.random.default_rng(seed)
    U = haar_stiefel(X.shape[1], q, rng, size=C * k).reshape(C, k, X.shape[1], q)
    iterations = GibbsIterations(X, C, k, q, kappa, fused=fused)
    assert iterations.compiled == fused
    for _ in range(n_iter):
        z, U = iterations.step(U, rng)
    return U.copy(), z.copy(), rng.random()


@needs_numba
@pytest.mark.parametrize("q", [1, 2, 3])
def test_one_compiled_call_per_iteration_gives_the_numpy_chain(q):
    """GibbsIterations on the compiled path (one kernel call per iteration, preallocated
    buffers) follows the numpy path's chain and the separate compiled kernels' chain: labels
    equal, bases equal to rounding, the Generator in the same state."""
    X, sq, outer = _problem(q=q)
    Uf, zf, nf = _iterations_chain(X, True, q, 150, kappa=20.0)
    Un, zn, nn = _iterations_chain(X, False, q, 150, kappa=20.0)
    np.testing.assert_array_equal(zf, zn)
    np.testing.assert_allclose(Uf, Un, atol=1e-9)
    assert nf == nn
    Uk, zk, nk = _chain(X, sq, outer, True, q, 150, kappa=20.0)
    np.testing.assert_array_equal(zf, zk)
    np.testing.assert_allclose(Uf, Uk, atol=1e-9)
    assert nf == nk


@needs_numba
def test_one_compiled_call_per_iteration_redraws_empty_clusters_as_the_numpy_path():
    """Three planes in the first four coordinates of R^6 (with noise in all six) and a fourth
    basis spanning e5, e6: at kappa = 50 no record picks it, and its Haar redraw consumes the
    Generator at the same point on both paths. (Clusters of fewer than p records have repeated
    eigenvalues, whose eigenvectors the two eigensolvers choose differently: only non-empty
    clusters with many records are compared.)"""
    rng = np.random.default_rng(3)
    planes = np.zeros((3, 6, 2))
    planes[:, :4] = np.linalg.qr(rng.standard_normal((3, 4, 2)))[0]
    lab = rng.integers(3, size=300)
    X = np.einsum("ndq,nq->nd", planes[lab], rng.standard_normal((300, 2)))
    X = 0.5 * X / np.linalg.norm(X, axis=1, keepdims=True) + 0.05 * rng.standard_normal((300, 6))
    U0 = np.concatenate([planes, np.eye(6)[None, :, 4:]])
    out = []
    for fused in (True, False):
        U = np.ascontiguousarray(np.broadcast_to(U0, (4, 4, 6, 2)))
        step_rng = np.random.default_rng(5)
        z, U = GibbsIterations(X, 4, 4, 2, 50.0, fused=fused).step(U, step_rng)
        assert not np.isin(3, z)  # the fourth cluster is empty in every chain
        out.append((z.copy(), U.copy(), step_rng.random()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-9)
    assert out[0][2] == out[1][2]
    assert not np.allclose(out[0][1][:, 3], U0[3])  # redrawn


@needs_numba
def test_one_compiled_call_per_iteration_hands_the_same_rows_to_hoffs_update(monkeypatch):
    """With one proposal per row the sweep stops inside the compiled call; the rest of the
    sweep (Hoff's update, then the compiled columns after it) gives the numpy path's chain."""
    import privclust.core.subspace._bingham as bingham

    monkeypatch.setattr(bingham, "_MAX_PROPOSALS", 1)
    monkeypatch.setattr(bingham, "_ROUND", 1)
    X, _, _ = _problem(q=3)
    with pytest.warns(RuntimeWarning, match="Hoff"):
        Uf, zf, nf = _iterations_chain(X, True, 3, 20, kappa=20.0)
    with pytest.warns(RuntimeWarning, match="Hoff"):
        Un, zn, nn = _iterations_chain(X, False, 3, 20, kappa=20.0)
    np.testing.assert_array_equal(zf, zn)
    np.testing.assert_allclose(Uf, Un, atol=1e-9)
    assert nf == nn


@needs_numba
def test_label_kernel_clamps_a_zero_exponential_draw_as_the_numpy_path():
    """A draw E = 0 reaches the kernel as log E = -inf and counts as the smallest normal float,
    as gumbel_perturbed clamps it: here it makes label 2 win against a much larger logit."""
    P = np.array([[0.9], [0.1], [0.1]])  # q = 1, C = 1, k = 3: ||U^T x||^2 = P^2
    sq = np.array([1.0])
    with np.errstate(divide="ignore"):
        log_e = np.log(np.array([[[1e-300], [1.0], [0.0]]]))  # -inf for the third candidate
    z, counts = np.empty((1, 1), np.int64), np.zeros((1, 3), np.int64)
    A_tri = np.zeros((3, 8))
    outer = np.arange(8.0)[None]
    _gibbs_fused.z_labels(P, sq, log_e, 1.0, z)
    _gibbs_fused.scatter(z, outer, counts, A_tri)
    logits = np.minimum(P[:, 0] ** 2 - 1.0, 0.0)
    noisy = logits - np.log(np.maximum([1e-300, 1.0, 0.0], np.finfo(np.float64).tiny))
    assert z[0, 0] == np.argmax(noisy) == 2
    np.testing.assert_array_equal(counts, [[0, 0, 1]])
    np.testing.assert_array_equal(A_tri[2], outer[0])


@needs_numba
def test_the_estimator_gives_the_same_chain_without_numba(monkeypatch):
    """GibbsSubspaceClustering with the compiled kernels and with the numpy fallback (numba
    hidden): the same released labels and bases and the same trace for the same seed."""
    from privclust.core.subspace import GibbsSubspaceClustering

    X, _, _ = _problem(q=2)
    fits = []
    for available in (True, False):
        monkeypatch.setattr(_gibbs_fused, "AVAILABLE", available)
        g = GibbsSubspaceClustering(3, 2, epsilon=40.0, n_iter=60, n_chains=3, record_every=20)
        fits.append(g.set_params(random_state=4).fit(X))
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    np.testing.assert_allclose(fits[0].subspaces_, fits[1].subspaces_, atol=1e-9)
    np.testing.assert_allclose(fits[0].trace_["cost"], fits[1].trace_["cost"], rtol=1e-9)


@needs_numba
def test_updated_scatter_matrices_equal_the_full_sums():
    """Between two full sums, the compiled iterations update the scatter matrices by the records
    whose label changed: after each step they equal the sums over the current labels."""
    X, _, _ = _problem(q=2)
    C, k, d, q = 4, 3, X.shape[1], 2
    rng = np.random.default_rng(2)
    U = haar_stiefel(d, q, rng, size=C * k).reshape(C, k, d, q)
    iterations = GibbsIterations(X, C, k, q, 20.0, fused=True)
    changed = 0
    z_prev = None
    for _ in range(40):
        z, U = iterations.step(U, rng)
        changed += 0 if z_prev is None else int((z != z_prev).sum())
        z_prev = z.copy()
        onehot = (z[:, :, None] == np.arange(k)).astype(float)  # (C, n, k)
        A = np.einsum("cnl,nd,ne->clde", onehot, X, X).reshape(C * k, d, d)
        np.testing.assert_allclose(iterations.A, A, atol=1e-11)
        np.testing.assert_array_equal(iterations.counts, onehot.sum(axis=1))
    assert iterations.since_full == 40 and changed > 0  # one full sum, then updates only


@needs_numba
def test_data_beyond_one_chunk_stay_on_the_compiled_kernels(monkeypatch):
    """When the records do not fit one z-update chunk, GibbsIterations runs the chunked
    z_update and u_update on the compiled path (not the numpy fallback): the same chain as
    those functions with fused=True and the same chunks (each chunk draws its own Exp(1)
    block, so the chunk size is part of the seed's chain, as before)."""
    import privclust.core.subspace.gibbs as gibbs

    X, sq, outer = _problem(q=2)
    monkeypatch.setattr(gibbs, "_CHUNK_FLOATS", 1000)  # 300 rows of 4 x 3 x 6 floats: 3 chunks
    assert not GibbsIterations(X, 4, 3, 2, 20.0).fused
    chunked = _iterations_chain(X, True, 2, 30, kappa=20.0)
    reference = _chain(X, sq, outer, True, 2, 30, kappa=20.0)
    np.testing.assert_array_equal(chunked[1], reference[1])
    np.testing.assert_allclose(chunked[0], reference[0], atol=1e-9)
    assert chunked[2] == reference[2]
    calls = []
    monkeypatch.setattr(gibbs._fused, "u_sweep", lambda *a: calls.append(1) or -1)
    U = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 3, 6, 2)))[0]
    GibbsIterations(X, 4, 3, 2, 20.0).step(U, np.random.default_rng(1))
    assert calls  # the compiled column sweep ran
