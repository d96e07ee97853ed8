"""GibbsSubspaceClustering (Wang, Wang & Singh, NIPS 2015, Sec. 4.1): privacy labels, ledger,
released chain, iter_fit, the release protocol, stream_steps, utility."""

import numpy as np
import pytest

from privclust.core.metrics import wasserstein_subspaces
from privclust.core.privacy import BudgetExceeded, Ledger, PrivacyWarning
from privclust.core.subspace import GibbsSubspaceClustering


def test_privacy_label_and_mechanisms(two_planes):
    g = GibbsSubspaceClustering(
        2, 2, epsilon=0.7, n_iter=20, n_chains=3, record_every=10, random_state=0
    ).fit(two_planes.X)
    assert g.privacy_.kind == "asymptotic" and g.privacy_.neighbouring == "replace"
    assert g.privacy_.epsilon == pytest.approx(0.7) and g.privacy_.delta == 0.0
    assert len(g.privacy_.mechanisms) == 1
    g.set_params(release="all").fit(two_planes.X)
    assert g.privacy_.epsilon == pytest.approx(2.1) and len(g.privacy_.mechanisms) == 3
    assert g.chain_subspaces_.shape == (3, 2, 6, 2) and g.chain_labels_.shape == (3, 300)


def test_solver_init_is_not_private_and_warns(two_planes):
    with pytest.warns(PrivacyWarning, match="NOT private"):
        g = GibbsSubspaceClustering(
            2, 2, epsilon=1.0, n_iter=10, n_chains=2, record_every=5, init="kplanes", random_state=0
        ).fit(two_planes.X)
    assert g.privacy_.kind == "none" and not g.privacy_.is_private


def test_ledger_charged_before_sampling(two_planes):
    ledger = Ledger(1.0)
    g = GibbsSubspaceClustering(
        2, 2, epsilon=0.6, n_iter=10, n_chains=2, record_every=5, ledger=ledger, random_state=0
    )
    g.fit(two_planes.X)
    assert ledger.spent[0] == pytest.approx(0.6)
    g2 = GibbsSubspaceClustering(
        2, 2, epsilon=0.6, n_iter=10, n_chains=2, record_every=5, ledger=ledger, random_state=0
    )
    with pytest.raises(BudgetExceeded):
        g2.fit(two_planes.X)
    assert not hasattr(g2, "subspaces_")  # nothing ran
    g3 = GibbsSubspaceClustering(2, 2, epsilon=0.2, n_chains=3, release="all", ledger=ledger)
    with pytest.raises(BudgetExceeded):  # 3 x 0.2 > 0.4 remaining
        next(g3.iter_fit(two_planes.X))


def test_released_chain_does_not_depend_on_data(two_planes, union_of_subspaces):
    other = union_of_subspaces(300, 6, 2, 2, noise=0.3, seed=9)
    picks = []
    for seed in range(6):
        a = GibbsSubspaceClustering(
            2, 2, epsilon=1.0, n_iter=2, n_chains=5, record_every=1, random_state=seed
        ).fit(two_planes.X)
        b = GibbsSubspaceClustering(
            2, 2, epsilon=1.0, n_iter=2, n_chains=5, record_every=1, random_state=seed
        ).fit(other.X)
        assert a.released_chain_ == b.released_chain_
        picks.append(a.released_chain_)
    assert len(set(picks)) > 1
    first = GibbsSubspaceClustering(2, 2, n_iter=2, n_chains=5, release="first").fit(two_planes.X)
    assert first.released_chain_ == 0


def test_iter_fit_records_and_early_stop(two_planes):
    g = GibbsSubspaceClustering(
        2, 2, epsilon=50.0, n_iter=60, n_chains=4, record_every=10, random_state=1
    )
    ref = two_planes.truth["subspaces"]
    recs = []
    for rec in g.iter_fit(two_planes.X, reference=ref):
        recs.append(rec)
        if rec["iteration"] == 40:
            break
    assert [r["iteration"] for r in recs] == [10, 20, 30, 40]
    assert g.n_iter_ == 40 and g.subspaces_.shape == (2, 6, 2)
    assert recs[-1]["cost"].shape == (4,) and recs[-1]["wasserstein"].shape == (4,)
    assert np.isnan(recs[2]["rhat"]) and np.isfinite(recs[3]["rhat"])
    assert g.trace_["cost"].shape == (4, 4) and g.trace_["wasserstein"].shape == (4, 4)
    assert np.all((g.trace_["test_statistic"] >= 0) & (g.trace_["test_statistic"] <= 1))
    g2 = GibbsSubspaceClustering(2, 2, n_iter=25, n_chains=2, record_every=10).fit(two_planes.X)
    assert list(g2.trace_["iteration"]) == [10, 20, 25] and "wasserstein" not in g2.trace_


def test_seeded_runs_are_reproducible(two_planes):
    kw = dict(epsilon=5.0, n_iter=15, n_chains=2, record_every=5, random_state=3)
    a = GibbsSubspaceClustering(2, 2, **kw).fit(two_planes.X)
    b = GibbsSubspaceClustering(2, 2, **kw).fit(two_planes.X)
    np.testing.assert_array_equal(a.subspaces_, b.subspaces_)
    np.testing.assert_array_equal(a.labels_, b.labels_)


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": np.inf}, ValueError),
        ({"n_chains": 0}, ValueError),
        ({"release": "best"}, ValueError),
        ({"neighbouring": "add_remove"}, NotImplementedError),
    ],
)
def test_parameter_validation(two_planes, kwargs, exc):
    with pytest.raises(exc):
        GibbsSubspaceClustering(2, 2, **kwargs).fit(two_planes.X)


def test_utility_close_at_large_epsilon_and_degrades_as_epsilon_falls(two_planes):
    ref = two_planes.truth["subspaces"]
    med = {}
    for eps in (1000.0, 10.0, 0.1):
        dist = []
        for seed in range(3):
            g = GibbsSubspaceClustering(
                2, 2, epsilon=eps, n_iter=150, n_chains=1, record_every=150, random_state=seed
            ).fit(two_planes.X)
            dist.append(wasserstein_subspaces(g.subspaces_, ref))
        med[eps] = np.median(dist)
    assert med[1000.0] < 0.15
    assert med[1000.0] < med[10.0] < med[0.1]


def test_array_init_is_not_private_and_validated(two_planes):
    ref = two_planes.truth["subspaces"]
    with pytest.warns(PrivacyWarning):
        g = GibbsSubspaceClustering(
            2, 2, epsilon=1000.0, n_iter=5, n_chains=2, record_every=5, init=ref, random_state=0
        ).fit(two_planes.X)
    assert g.privacy_.kind == "none"
    assert wasserstein_subspaces(g.subspaces_, ref) < 0.3
    ledger = Ledger(5.0)
    with pytest.raises(ValueError, match="init array"):
        GibbsSubspaceClustering(2, 2, init=ref[:, :, :1], ledger=ledger).fit(two_planes.X)
    assert ledger.spent[0] == 0.0  # refused before charging


def _histories():
    """Random (n_chains, R) histories: iid, chains at different levels far from 0, a drift
    (burn-in) then noise, and tiny noise on a large level (cancellation-prone)."""
    rng = np.random.default_rng(11)
    yield rng.normal(size=(3, 41))
    yield 1e3 + rng.normal(size=(4, 40)) + np.arange(4)[:, None]
    yield rng.normal(size=(1, 37))
    burn = np.exp(-np.arange(60) / 8.0)[None, :] * 300
    yield 250 + burn + rng.normal(scale=2.0, size=(2, 60))
    yield 5e4 + rng.normal(scale=1e-3, size=(3, 33))


def test_running_split_rhat_equals_split_rhat_at_every_length():
    from privclust.core.metrics import split_rhat
    from privclust.core.subspace.gibbs import RunningSplitRhat

    checked = 0
    for H in _histories():
        acc = RunningSplitRhat(H.shape[0], capacity=4)  # also exercises the regrowth
        for r in range(H.shape[1]):
            got = acc.append(H[:, r])
            if r + 1 < 4:
                assert np.isnan(got)
                continue
            h = H[:, : r + 1]
            # split_rhat itself rounds at ~1e-9 on the last history (spread 1e-8 of the level);
            # R-hat is shift-invariant, so re-centred it is the same value, computed exactly
            assert got == pytest.approx(split_rhat(h), rel=1e-8, abs=0), (H.shape, r)
            assert got == pytest.approx(split_rhat(h - h.mean()), rel=1e-12, abs=0), (H.shape, r)
            checked += 1
        np.testing.assert_array_equal(acc.history, H)
    assert checked > 150
    # the comparison is sensitive: the histories are far from R-hat = 1 (separated chains,
    # trends) and a common slip (population instead of sample variances) moves R-hat a lot
    H = next(_histories())
    n = H.shape[1] // 2
    halves = np.concatenate([H[:, :n], H[:, -n:]])
    slip = np.sqrt(
        ((n - 1) / n * halves.var(axis=1).mean() + halves.mean(axis=1).var())
        / halves.var(axis=1).mean()
    )
    assert abs(slip - split_rhat(H)) > 1e-3


def test_running_split_rhat_edge_cases_match_split_rhat():
    from privclust.core.metrics import split_rhat
    from privclust.core.subspace.gibbs import RunningSplitRhat

    acc = RunningSplitRhat(2)
    for _ in range(6):  # constant chains: W = 0
        got = acc.append([3.0, 3.0])
    assert np.isnan(got) and np.isnan(split_rhat(np.full((2, 6), 3.0)))
    acc = RunningSplitRhat(2)
    for v in (1.0, 1.0, 1.0, 1.0, 1.0):
        got = acc.append([v, v + 1.0])  # W = 0 < B: inf
    assert got == np.inf == split_rhat(np.array([[1.0] * 5, [2.0] * 5]))
    acc = RunningSplitRhat(1)
    for v in (1.0, 2.0, 3.0):
        acc.append([v])
    with pytest.raises(ValueError, match="NaN or infinite"):
        acc.append([np.nan])


def test_iter_fit_rhat_is_split_rhat_of_the_cost_so_far(two_planes):
    from privclust.core.metrics import split_rhat

    g = GibbsSubspaceClustering(
        2, 2, epsilon=2.0, n_iter=90, n_chains=3, record_every=5, random_state=4
    )
    for rec in g.iter_fit(two_planes.X):
        R = len(g.trace_["iteration"])
        assert rec["iteration"] == g.trace_["iteration"][-1] == 5 * R
        if R < 4:
            assert np.isnan(rec["rhat"])
        else:
            assert rec["rhat"] == pytest.approx(split_rhat(g.trace_["cost"].T), rel=1e-9)
    assert g.trace_["cost"].shape == (18, 3) and not g.trace_["cost"].flags.writeable


def test_reference_and_init_are_checked_before_the_charge(two_planes):
    """``reference`` (public, evaluation only) is checked against (k, d, q) before the ledger is
    charged, by fit and by iter_fit; a non-random init has a plan of kind "none": a ledger
    cannot pay for it and the curator refuses it, before anything runs."""
    from privclust.core import Curator
    from privclust.core.release.curator import PrivacyRefused

    ledger = Ledger(2.0)
    g = GibbsSubspaceClustering(2, 2, epsilon=0.4, n_chains=3, release="all", ledger=ledger)
    with pytest.raises(ValueError, match="reference"):
        g.fit(two_planes.X, reference=np.zeros((2, 6, 1)))
    with pytest.raises(ValueError, match="reference"):
        next(g.iter_fit(two_planes.X, reference=np.zeros((3, 6, 2))))
    assert ledger.history == [] and not hasattr(g, "subspaces_")
    assert g.plan(300, 6).kind == "asymptotic" and g.plan(300, 6).epsilon == pytest.approx(1.2)
    for init in ("kplanes", two_planes.truth["subspaces"]):
        est = GibbsSubspaceClustering(2, 2, n_iter=5, init=init, ledger=ledger)
        assert est.plan(300, 6).kind == "none"
        with pytest.raises(ValueError, match="not private"):
            est.fit(two_planes.X)
        with pytest.raises(PrivacyRefused):
            Curator(two_planes.X, ledger).release(
                GibbsSubspaceClustering(2, 2, n_iter=5, init=init)
            )
        assert not hasattr(est, "subspaces_")
    assert ledger.history == []
    with pytest.raises(ValueError, match="solver"):
        GibbsSubspaceClustering(2, 2, init="pca").plan(300, 6)


def test_released_attributes_depend_on_release():
    assert GibbsSubspaceClustering().released_attributes() == (
        "subspaces_",
        "labels_",
        "released_chain_",
    )
    assert GibbsSubspaceClustering(release="all").released_attributes() == (
        "subspaces_",
        "labels_",
        "released_chain_",
        "chain_subspaces_",
        "chain_labels_",
    )


def test_stream_steps_sends_records_then_the_released_state(two_planes):
    """The child-process target, driven here through a pipe in this process: records (with the
    state reached now and then), the final state (equal to an in-process fit with the same
    seed), then "done"; a set stop event ends it after the first record with that record's
    state."""
    import multiprocessing as mp
    import threading

    from privclust.core.release.live import stream_steps

    params = GibbsSubspaceClustering(
        2, 2, epsilon=3.0, n_iter=20, n_chains=2, record_every=5, random_state=7
    ).get_params()

    def run(stop, p=params):
        r, w = mp.Pipe(duplex=False)
        est = GibbsSubspaceClustering(**p)
        child = threading.Thread(target=stream_steps, args=(est, two_planes.X, None, w, stop))
        child.start()
        out = []
        while True:
            try:
                out.append(r.recv())
            except EOFError:  # stream_steps closed its end
                break
        child.join()
        return out

    msgs = run(threading.Event())
    kinds = [m[0] for m in msgs]
    assert kinds.count("record") == 4 and kinds[-2:] == ["state", "done"]
    assert msgs[-1][1] == "finished" and msgs[-1][2] == []
    ref = GibbsSubspaceClustering(**params).fit(two_planes.X)
    state = msgs[-2][1]
    np.testing.assert_array_equal(state["subspaces_"], ref.subspaces_)
    np.testing.assert_array_equal(state["labels_"], ref.labels_)
    np.testing.assert_array_equal(state["trace_"]["cost"], ref.trace_["cost"])
    assert state["privacy_"] == ref.privacy_ and state["n_iter_"] == 20
    stop = threading.Event()
    stop.set()
    msgs = run(stop)
    assert [m[0] for m in msgs] == ["record", "state", "state", "done"]
    assert msgs[-1][1] == "stopped" and msgs[-2][1]["n_iter_"] == 5
    with pytest.raises(ValueError, match="ledger=None"):
        stream_steps(GibbsSubspaceClustering(ledger=Ledger(1.0)), two_planes.X, None, None, stop)
    [(kind, name, text)] = run(threading.Event(), dict(params, epsilon=-1.0))
    # scikit-learn's parameter validation (a ValueError) names the parameter
    assert kind == "error" and name == "InvalidParameterError" and "epsilon" in text


@pytest.mark.parametrize("process", [False, True])
def test_curator_live_release_samples_the_vouched_clone(two_planes, process):
    from privclust.core import Curator

    ledger = Ledger(5.0)
    live = (
        Curator(two_planes.X, ledger)
        .live(
            GibbsSubspaceClustering(
                2,
                2,
                epsilon=0.5,
                n_iter=10,
                n_chains=2,
                record_every=5,
                release="all",
                random_state=3,
            ),
            process=process,
        )
        .start()
    )
    # charged once, in the parent, the whole amount (2 chains x 0.5), before sampling ends
    assert [(r.epsilon, r.relation) for r in ledger.history] == [(1.0, "replace")]
    assert live.join(60) and live.status == "finished", live.error
    # the sampled clone: no ledger, no seed (fresh entropy)
    assert live._prepared.estimator.ledger is None
    assert live._prepared.estimator.random_state is None
    progress = [live.queue.get_nowait() for _ in range(live.queue.qsize())]
    assert progress == [{"iteration": 5, "n_iter": 10}, {"iteration": 10, "n_iter": 10}]
    release = live.release
    assert set(release.attributes) == {
        "subspaces_",
        "labels_",
        "released_chain_",
        "chain_subspaces_",
        "chain_labels_",
    }
    assert release.guarantee.kind == "asymptotic" and release.guarantee.epsilon == 1.0
    assert release.chain_labels_.shape == (2, 300) and release.subspaces_.shape == (2, 6, 2)
