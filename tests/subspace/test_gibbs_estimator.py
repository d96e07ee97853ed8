"""GibbsSubspaceClustering (spec 2.4): privacy labels, ledger, released chain, iter_fit, utility."""
import warnings

import numpy as np
import pytest

from privclust.core.data import make_union_of_subspaces
from privclust.core.metrics import wasserstein_subspaces
from privclust.core.privacy import BudgetExceeded, Ledger, PrivacyWarning
from privclust.core.subspace import GibbsSubspaceClustering


@pytest.fixture(scope="module")
def data():
    return make_union_of_subspaces(300, 6, 2, 2, noise=0.05, random_state=0)


def test_privacy_label_and_mechanisms(data):
    g = GibbsSubspaceClustering(2, 2, epsilon=0.7, n_iter=20, n_chains=3, record_every=10,
                                random_state=0).fit(data.X)
    assert g.privacy_.kind == "asymptotic" and g.privacy_.neighbouring == "replace"
    assert g.privacy_.epsilon == pytest.approx(0.7) and g.privacy_.delta == 0.0
    assert len(g.privacy_.mechanisms) == 1
    g.set_params(release="all").fit(data.X)
    assert g.privacy_.epsilon == pytest.approx(2.1) and len(g.privacy_.mechanisms) == 3
    assert g.chain_subspaces_.shape == (3, 2, 6, 2) and g.chain_labels_.shape == (3, 300)


def test_solver_init_is_not_private_and_warns(data):
    with pytest.warns(PrivacyWarning, match="NOT private"):
        g = GibbsSubspaceClustering(2, 2, epsilon=1.0, n_iter=10, n_chains=2, record_every=5,
                                    init="kplanes", random_state=0).fit(data.X)
    assert g.privacy_.kind == "none" and not g.privacy_.is_private


def test_ledger_charged_before_sampling(data):
    ledger = Ledger(1.0)
    g = GibbsSubspaceClustering(2, 2, epsilon=0.6, n_iter=10, n_chains=2, record_every=5,
                                ledger=ledger, random_state=0)
    g.fit(data.X)
    assert ledger.spent[0] == pytest.approx(0.6)
    g2 = GibbsSubspaceClustering(2, 2, epsilon=0.6, n_iter=10, n_chains=2, record_every=5,
                                 ledger=ledger, random_state=0)
    with pytest.raises(BudgetExceeded):
        g2.fit(data.X)
    assert not hasattr(g2, "subspaces_")                          # nothing ran
    g3 = GibbsSubspaceClustering(2, 2, epsilon=0.2, n_chains=3, release="all", ledger=ledger)
    with pytest.raises(BudgetExceeded):                           # 3 x 0.2 > 0.4 remaining
        next(g3.iter_fit(data.X))


def test_released_chain_does_not_depend_on_data(data):
    other = make_union_of_subspaces(300, 6, 2, 2, noise=0.3, random_state=9)
    picks = []
    for seed in range(6):
        a = GibbsSubspaceClustering(2, 2, epsilon=1.0, n_iter=2, n_chains=5, record_every=1,
                                    random_state=seed).fit(data.X)
        b = GibbsSubspaceClustering(2, 2, epsilon=1.0, n_iter=2, n_chains=5, record_every=1,
                                    random_state=seed).fit(other.X)
        assert a.released_chain_ == b.released_chain_
        picks.append(a.released_chain_)
    assert len(set(picks)) > 1
    first = GibbsSubspaceClustering(2, 2, n_iter=2, n_chains=5, release="first").fit(data.X)
    assert first.released_chain_ == 0


def test_iter_fit_records_and_early_stop(data):
    g = GibbsSubspaceClustering(2, 2, epsilon=50.0, n_iter=60, n_chains=4, record_every=10,
                                random_state=1)
    ref = data.truth["subspaces"]
    recs = []
    for rec in g.iter_fit(data.X, reference=ref):
        recs.append(rec)
        if rec["iteration"] == 40:
            break
    assert [r["iteration"] for r in recs] == [10, 20, 30, 40]
    assert g.n_iter_ == 40 and g.subspaces_.shape == (2, 6, 2)
    assert recs[-1]["cost"].shape == (4,) and recs[-1]["wasserstein"].shape == (4,)
    assert np.isnan(recs[2]["rhat"]) and np.isfinite(recs[3]["rhat"])
    assert g.trace_["cost"].shape == (4, 4) and g.trace_["wasserstein"].shape == (4, 4)
    assert np.all((g.trace_["test_statistic"] >= 0) & (g.trace_["test_statistic"] <= 1))
    g2 = GibbsSubspaceClustering(2, 2, n_iter=25, n_chains=2, record_every=10).fit(data.X)
    assert list(g2.trace_["iteration"]) == [10, 20, 25] and "wasserstein" not in g2.trace_


def test_seeded_runs_are_reproducible(data):
    kw = dict(epsilon=5.0, n_iter=15, n_chains=2, record_every=5, random_state=3)
    a = GibbsSubspaceClustering(2, 2, **kw).fit(data.X)
    b = GibbsSubspaceClustering(2, 2, **kw).fit(data.X)
    np.testing.assert_array_equal(a.subspaces_, b.subspaces_)
    np.testing.assert_array_equal(a.labels_, b.labels_)


@pytest.mark.parametrize("kwargs,exc", [
    ({"epsilon": 0.0}, ValueError), ({"epsilon": np.inf}, ValueError),
    ({"n_chains": 0}, ValueError), ({"release": "best"}, ValueError),
    ({"neighbouring": "add_remove"}, NotImplementedError),
])
def test_parameter_validation(data, kwargs, exc):
    with pytest.raises(exc):
        GibbsSubspaceClustering(2, 2, **kwargs).fit(data.X)


def test_utility_close_at_large_epsilon_and_degrades_as_epsilon_falls(data):
    ref = data.truth["subspaces"]
    med = {}
    for eps in (1000.0, 10.0, 0.1):
        dist = []
        for seed in range(3):
            g = GibbsSubspaceClustering(2, 2, epsilon=eps, n_iter=150, n_chains=1,
                                        record_every=150, random_state=seed).fit(data.X)
            dist.append(wasserstein_subspaces(g.subspaces_, ref))
        med[eps] = np.median(dist)
    assert med[1000.0] < 0.15
    assert med[1000.0] < med[10.0] < med[0.1]


def test_array_init_is_not_private_and_validated(data):
    ref = data.truth["subspaces"]
    with pytest.warns(PrivacyWarning):
        g = GibbsSubspaceClustering(2, 2, epsilon=1000.0, n_iter=5, n_chains=2, record_every=5,
                                    init=ref, random_state=0).fit(data.X)
    assert g.privacy_.kind == "none"
    assert wasserstein_subspaces(g.subspaces_, ref) < 0.3
    ledger = Ledger(5.0)
    with pytest.raises(ValueError, match="init array"):
        GibbsSubspaceClustering(2, 2, init=ref[:, :, :1], ledger=ledger).fit(data.X)
    assert ledger.spent[0] == 0.0                       # refused before charging
