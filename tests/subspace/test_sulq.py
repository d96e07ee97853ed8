"""SuLQ k-plane baseline (Wang, Wang & Singh, NIPS 2015, Sec. 5 and App. E; Blum, Dwork,
McSherry & Nissim, PODS 2005): scatter sensitivity on adversarial neighbours, statistical audit
of the noisy release, accounting, utility."""

import math

import numpy as np
import pytest

from privclust.core.data import clip_l2
from privclust.core.metrics import wasserstein_subspaces
from privclust.core.privacy import Ledger
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.subspace import SuLQSubspaceClustering
from privclust.core.subspace.sulq import (
    cluster_scatter,
    noisy_scatter,
    scatter_sensitivity,
    zcdp_rho,
)


def _adversarial_pairs(rng, d, count):
    e = np.eye(d)
    fixed = [(e[0], e[1]), (e[0], -e[0]), (e[0], (e[0] + e[1]) / math.sqrt(2)), (e[0], 0 * e[0])]
    yield from fixed
    for _ in range(count):
        x, y = rng.standard_normal((2, d))
        yield x / np.linalg.norm(x), y / np.linalg.norm(y) * rng.choice([1.0, rng.random()])


def test_scatter_sensitivity_on_adversarial_neighbours():
    rng = np.random.default_rng(0)
    d, k, n = 5, 3, 40
    X = clip_l2(rng.standard_normal((n, d)), 1.0)
    worst = 0.0
    for x, y in _adversarial_pairs(rng, d, 300):
        X1, X2 = X.copy(), X.copy()
        X1[7], X2[7] = x, y
        z1 = rng.integers(k, size=n)
        z2 = z1.copy()
        z2[7] = rng.integers(k)  # the changed record may switch cluster
        diff = cluster_scatter(X1, z1, k) - cluster_scatter(X2, z2, k)
        worst = max(worst, np.linalg.norm(diff))
    assert worst <= scatter_sensitivity("replace") + 1e-12
    assert worst > 1.4  # the bound is attained (orthogonal pair)
    # add/remove: one record's scatter has Frobenius norm <= 1
    for x, _ in _adversarial_pairs(rng, d, 50):
        assert np.linalg.norm(np.outer(x, x)) <= scatter_sensitivity("add_remove") + 1e-12
    # planted bug: records not clipped to the unit ball break the bound
    big = np.zeros(d)
    big[0] = 2.0
    assert np.linalg.norm(np.outer(big, big) - np.outer(np.eye(d)[1], np.eye(d)[1])) > math.sqrt(2)
    with pytest.raises(NotImplementedError):
        scatter_sensitivity("cell")


@pytest.mark.audit
def test_noisy_scatter_audit_on_neighbouring_datasets():
    """One round's release on D (a record e_1) and D' (e_2 instead), same public labels; the
    attacker reads entry (0, 0) of the first cluster's matrix."""
    rng = np.random.default_rng(1)
    d, k, n, N, eps, delta = 3, 2, 6, 200_000, 1.0, 1e-5
    X = clip_l2(rng.standard_normal((n, d)), 1.0)
    z = np.array([0, 1, 0, 1, 0, 1])
    X2 = X.copy()
    X[0], X2[0] = np.eye(d)[0], np.eye(d)[1]
    A, A2 = cluster_scatter(X, z, k), cluster_scatter(X2, z, k)
    sens = scatter_sensitivity("replace")
    a = noisy_scatter(A, sens, rng, eps, delta, size=N)[:, 0, 0, 0]
    b = noisy_scatter(A2, sens, rng, eps, delta, size=N)[:, 0, 0, 0]
    assert epsilon_lower_bound(a, b, delta=delta, rng=rng) <= eps
    a = noisy_scatter(A, sens / 8, rng, eps, delta, size=N)[:, 0, 0, 0]  # planted bug
    b = noisy_scatter(A2, sens / 8, rng, eps, delta, size=N)[:, 0, 0, 0]
    assert epsilon_lower_bound(a, b, delta=delta, rng=rng) > eps


def test_noisy_scatter_is_symmetric():
    rng = np.random.default_rng(2)
    out = noisy_scatter(np.zeros((2, 4, 4)), 1.0, rng, 1.0, 1e-5, size=3)
    assert out.shape == (3, 2, 4, 4)
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))


def test_zcdp_conversion():
    rho = zcdp_rho(2.0, 1e-6)
    assert rho + 2 * math.sqrt(rho * math.log(1e6)) == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("accounting", ["basic", "zcdp"])
def test_accounting_totals_and_ledger(accounting, two_planes):
    ds = two_planes
    ledger = Ledger(1.0, 1e-3)
    est = SuLQSubspaceClustering(
        2,
        2,
        epsilon=0.8,
        delta=1e-4,
        n_iter=7,
        accounting=accounting,
        ledger=ledger,
        random_state=0,
    ).fit(ds.X)
    g = est.privacy_
    assert g.kind == "approx" and len(g.mechanisms) == 7
    assert abs(g.epsilon - 0.8) < 1e-12 and abs(g.delta - 1e-4) < 1e-12
    assert ledger.spent == pytest.approx((0.8, 1e-4))
    assert est.subspaces_.shape == (2, 6, 2)


def test_zcdp_adds_less_noise_for_many_rounds(two_planes):
    ds = two_planes
    kw = dict(epsilon=1.0, delta=1e-5, n_iter=50, random_state=0)
    basic = SuLQSubspaceClustering(2, 2, accounting="basic", **kw).fit(ds.X)
    zcdp = SuLQSubspaceClustering(2, 2, accounting="zcdp", **kw).fit(ds.X)
    assert zcdp.noise_scale_ < basic.noise_scale_


def test_validation():
    X = np.random.default_rng(0).standard_normal((30, 4))
    for kwargs, exc in [
        ({"epsilon": 0}, ValueError),
        ({"delta": 0.0}, ValueError),
        ({"n_iter": 0}, ValueError),
        ({"accounting": "rdp"}, ValueError),
        ({"neighbouring": "cell"}, NotImplementedError),
    ]:
        with pytest.raises(exc):
            SuLQSubspaceClustering(2, 2, **kwargs).fit(X)


def test_utility_close_at_large_epsilon_and_monotone(union_of_subspaces):
    ds = union_of_subspaces(1000, 5, 3, 3, noise=0.01, seed=3)
    med = {}
    for eps in (1000.0, 10.0, 0.1):
        med[eps] = np.median(
            [
                wasserstein_subspaces(
                    SuLQSubspaceClustering(3, 3, epsilon=eps, n_iter=10, random_state=s)
                    .fit(ds.X)
                    .subspaces_,
                    ds.truth["subspaces"],
                )
                for s in range(3)
            ]
        )
    assert med[1000.0] < 0.1
    assert med[1000.0] < med[10.0] < med[0.1]


def test_large_delta_warns():
    from privclust.core.privacy import PrivacyWarning

    X = np.random.default_rng(0).standard_normal((30, 4))
    with pytest.warns(PrivacyWarning, match="exceeds 1/n"):
        est = SuLQSubspaceClustering(2, 2, delta=0.1, random_state=0).fit(X)
    assert any("1/n" in w for w in est.privacy_.warnings)


def test_refused_charge_runs_nothing(two_planes):
    from privclust.core.privacy import BudgetExceeded

    ds = two_planes
    ledger = Ledger(1.0, 1e-3)
    SuLQSubspaceClustering(2, 2, epsilon=0.7, delta=1e-4, ledger=ledger, random_state=0).fit(ds.X)
    est = SuLQSubspaceClustering(2, 2, epsilon=0.4, delta=1e-4, ledger=ledger, random_state=0)
    with pytest.raises(BudgetExceeded):
        est.fit(ds.X)
    assert not hasattr(est, "subspaces_") and not hasattr(est, "privacy_")
    assert ledger.spent == pytest.approx((0.7, 1e-4))
