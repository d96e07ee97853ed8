"""DPNMF (Saha & Imtiaz, ACM TKDD 2024) as a co-clustering competitor: its honest plan (kind
"none") and the Curator's refusal on private data, the sensitivity of its private step on
adversarial neighbours, a statistical audit of the noisy basis update on neighbouring data sets,
planted bugs the audit must catch, and the clustering it gives on planted blocks."""

from unittest import mock

import numpy as np
import pytest

import privclust.core.cocluster.dpnmf as dpnmf
from privclust.core import DPNMF, Curator, Dataset, Ledger
from privclust.core.data import make_block_counts
from privclust.core.metrics import nmi
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.release.curator import PrivacyRefused

C, LAM = 1.0, 0.5  # public bounds of the audit: ||h_i|| <= C, ||r_i|| <= LAM


def _blocks(seed=0, sparse=False):
    data = make_block_counts(
        n_rows=90,
        n_cols=30,
        n_row_clusters=3,
        n_col_clusters=3,
        signal=3.0,
        background=0.1,
        sparse=sparse,
        random_state=seed,
    )
    return data.X, np.asarray(data.labels)


def test_plan_is_not_private_and_names_the_non_private_steps():
    plan = DPNMF(3, epsilon=0.5, delta=1e-5, n_iter=4).plan(90, 30)
    assert plan.kind == "none" and not plan.is_private
    text = " ".join(plan.warnings)
    for step in ("randomized-SVD initialisation", "coefficient", "row_labels_"):
        assert step in text
    # the basis releases are listed with their share of (epsilon, delta)
    assert len(plan.mechanisms) == 4
    assert sum(m.epsilon for m in plan.mechanisms) == pytest.approx(0.5)
    assert sum(m.delta for m in plan.mechanisms) == pytest.approx(1e-5)


def test_curator_refuses_dpnmf_on_private_data():
    X, _ = _blocks()
    ledger = Ledger(100.0, 0.5)
    curator = Curator(Dataset(X, public=False), ledger)
    with pytest.raises(PrivacyRefused, match="not private"):
        curator.release(DPNMF(3, epsilon=0.5))
    assert ledger.spent == (0.0, 0.0) and ledger.history == []


def test_a_ledger_refuses_to_pay_for_it():
    X, _ = _blocks()
    with pytest.raises(ValueError, match="not private"):
        DPNMF(3, ledger=Ledger(100.0, 0.5)).fit(X)


@pytest.mark.parametrize(
    "bad",
    [
        dict(epsilon=0.0),
        dict(delta=0.0),
        dict(n_iter=0),
        dict(coef_bound=0.0),
        dict(outlier_bound=-1.0),
        dict(learning_rate=float("nan")),
        dict(neighbouring="cell"),
        dict(n_clusters=31),
    ],
)
def test_invalid_parameters_are_refused_at_plan_time(bad):
    with pytest.raises((ValueError, TypeError)):
        DPNMF(**{"n_clusters": 3, **bad}).plan(90, 30)


@pytest.mark.parametrize("sparse", [False, True])
def test_rows_clustered_by_the_argmax_of_the_coefficients(sparse):
    """On planted blocks DPNMF recovers the rows, and at large epsilon it is the noiseless
    algorithm (its SVD start is good; this checks the updates do not spoil it)."""
    X, y = _blocks(seed=3, sparse=sparse)
    est = DPNMF(3, epsilon=1e6, delta=1e-5, random_state=0).fit(X)
    assert est.components_.shape == (3, 30) and est.coefficients_.shape == (90, 3)
    np.testing.assert_array_equal(est.row_labels_, est.coefficients_.argmax(axis=1))
    assert nmi(y, est.row_labels_) > 0.9
    assert est.privacy_.kind == "none" and len(est.privacy_.mechanisms) == 4


def _noiseless(X, H, s, W):
    """The release of noisy_basis_statistics with the Gaussian noise switched off."""
    with mock.patch.object(dpnmf, "gaussian", lambda value, *a, **k: value):
        return dpnmf.noisy_basis_statistics(X, H, s, W, 1.0, 1e-5, C, LAM, None)


def _dense_statistics(X, H, s, W):
    """(A, B) computed with the outlier matrix R formed explicitly (reference)."""
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    H = dpnmf.clip_rows(np.maximum(H, 0.0), C)
    E = X - H @ W.T
    e = np.linalg.norm(E, axis=1)
    s = np.minimum(np.maximum(s, 0.0), LAM / np.maximum(e, 1e-12))
    R = s[:, None] * E
    n = X.shape[0]
    return H.T @ H / n, (X - R).T @ H / n, R


def _random_case(rng, n=5, d=4, k=2):
    X = rng.poisson(rng.choice([0.5, 3.0]), size=(n, d)).astype(float)
    X[rng.integers(n)] = 0.0  # an empty record
    H = rng.exponential(rng.choice([0.2, 2.0]), size=(n, k))  # some rows beyond the bound C
    s = rng.uniform(0.0, 3.0, size=n)  # some outliers beyond LAM
    W = np.abs(rng.normal(size=(d, k)))
    return X, H, s, W / np.linalg.norm(W, axis=0)


def test_sensitivity_holds_on_random_adversarial_neighbours(rng):
    """Replacing one record (x_i, h_i, s_i) moves (A, B) by at most basis_sensitivity in
    Frobenius norm; the bounds are enforced inside the mechanism (for any input), and the
    low-rank form equals the explicit-R computation."""
    worst = 0.0
    for _ in range(300):
        X, H, s, W = _random_case(rng)
        X2, H2, s2, _ = _random_case(rng)
        i = rng.integers(X.shape[0])
        Xb, Hb, sb = X.copy(), H.copy(), s.copy()
        Xb[i], Hb[i], sb[i] = X2[i], H2[i], s2[i]
        A, B, R = _dense_statistics(X, H, s, W)
        Ab, Bb, Rb = _dense_statistics(Xb, Hb, sb, W)
        assert np.linalg.norm(R, axis=1).max() <= LAM + 1e-12
        got = dpnmf.noisy_basis_statistics(X, H, s, W, 1.0, 1e-5, C, LAM, rng, size=1)
        big = _noiseless(X, H, s, W)
        np.testing.assert_allclose(big[0], A, atol=1e-9)
        np.testing.assert_allclose(big[1], B, atol=1e-9)
        assert got[0].shape == (1, 2, 2) and got[1].shape == (1, 4, 2)
        diff = np.hypot(np.linalg.norm(A - Ab), np.linalg.norm(B - Bb))
        worst = max(worst, diff / dpnmf.basis_sensitivity(X.shape[0], C, LAM))
    assert 0.3 < worst <= 1.0 + 1e-9


# Worst-case neighbours for the audit: the record that differs has ||h|| = C and x - r of norm
# 1 + LAM in one direction on one side, and points elsewhere on the other.
W_AUDIT = np.eye(3)[:, :2]


def _neighbours():
    X = np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 2.0], [1.0, 0.0, 0.0]])
    H = np.array([[0.3, 0.2], [0.5, 0.5], [0.1, 0.4], [C, 0.0]])
    s = np.zeros(4)
    s[3] = 10.0  # r_3 = residual of row 3, clipped to LAM
    Xb, Hb, sb = X.copy(), H.copy(), s.copy()
    Xb[3], Hb[3], sb[3] = [0.0, 1.0, 0.0], [0.0, C], 0.0
    return (X, H, s), (Xb, Hb, sb)


def _audit_outputs(data, eps, delta, runs, rng):
    """The release reduced to its projection on the direction in which the neighbours differ
    (the most distinguishing statistic of a Gaussian mechanism)."""
    (X, H, s), (Xb, Hb, sb) = _neighbours()
    A0, B0 = _noiseless(X, H, s, W_AUDIT)
    A1, B1 = _noiseless(Xb, Hb, sb, W_AUDIT)
    u = np.concatenate([(A0 - A1).ravel(), (B0 - B1).ravel()])
    A, B = dpnmf.noisy_basis_statistics(*data, W_AUDIT, eps, delta, C, LAM, rng, size=runs)
    return np.concatenate([A.reshape(runs, -1), B.reshape(runs, -1)], axis=1) @ u


def _epsilon_lb(eps, delta, rng, runs=200_000):
    D, Db = _neighbours()
    return epsilon_lower_bound(
        _audit_outputs(D, eps, delta, runs, rng),
        _audit_outputs(Db, eps, delta, runs, rng),
        delta=delta,
    )


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_audit_noisy_basis_update_on_neighbouring_data(rng, eps):
    """Clopper-Pearson lower bound on the epsilon of one noisy basis release (delta = 1e-5):
    never above the claim. The Gaussian mechanism at small delta is far from tight for a
    threshold test (the lower bound reaches about 0.25 eps at eps = 1), so its teeth are the
    planted bug below."""
    lb = _epsilon_lb(eps, 1e-5, rng)
    assert 0.1 * eps < lb <= eps


def test_planted_bug_one_over_n_twice_fails_the_audit(rng, monkeypatch):
    """Planted bug: the 1/n of A and B applied twice to the sensitivity (noise 4x too small on
    these 4 records). The audit must flag it."""
    real = dpnmf.basis_sensitivity
    monkeypatch.setattr(dpnmf, "basis_sensitivity", lambda n, *a: real(n, *a) / n)
    assert _epsilon_lb(1.0, 1e-5, rng) > 1.0


def test_planted_bug_unclipped_coefficients_breaks_the_sensitivity(rng, monkeypatch):
    """Planted bug: coefficient rows not clipped to the public bound. A record with a large h
    then moves the statistics beyond the sensitivity, which the check above must see."""
    monkeypatch.setattr(dpnmf, "clip_rows", lambda M, bound: M)
    X, H, s, W = _random_case(rng)
    Hb = H.copy()
    Hb[0] = [50.0, 0.0]
    a0, b0 = _noiseless(X, H, s, W)
    a1, b1 = _noiseless(X, Hb, s, W)
    moved = np.hypot(np.linalg.norm(a0 - a1), np.linalg.norm(b0 - b1))
    assert moved > dpnmf.basis_sensitivity(X.shape[0], C, LAM)
