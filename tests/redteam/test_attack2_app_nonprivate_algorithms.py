"""Red team, attack 2 at the page: non-private algorithms on private data, uncharged.

In private mode the algorithm list used to offer k-means, k-plane, TSC/SSC/LRR, Fast-tauCC and
the smallest-ball reference; Release fitted them on the raw records, charged nothing, drew their
exact outputs for the analyst and put them in the downloads. A Gibbs run started from a
non-private solution (init="ssc") was charged but just as non-private. Now the analyst is not
offered them, and a client that sends one anyway is refused by the Curator before anything
runs: no result, no download, no charge, no stored release.
"""

import io

import numpy as np
import pytest

from privclust.app.catalogue import by_key
from privclust.app.state import Lab

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NON_PRIVATE = [
    ("kmeans", "kmeans"),
    ("subspace", "kplanes"),
    ("cocluster", "fasttaucc"),
    ("onecluster", "smallest_ball"),
]


@pytest.fixture
def private_lab(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")
    X = np.abs(np.round(np.random.default_rng(0).normal(size=(60, 6)) * 3))  # counts too
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(f"c{j}" for j in range(6)), comments="")
    lab = Lab()
    assert lab.data.upload("records.csv", buf.getvalue().encode())
    assert lab.mode == "private" and not lab.settings.owner_view
    return lab


def _nothing_left(lab):
    from privclust.app.views import ReportView

    assert lab.result is None
    assert "Refused" in lab.message
    assert lab.ledger.spent == (0.0, 0.0) and lab.ledger.history == []
    assert lab.ledger.releases == [] and lab.ledger.curator.releases() == []
    report = ReportView(lab=lab)._report()
    assert "No result yet" in report.object  # nothing to download


def _force(lab, key):
    """What a modified client can do: send an algorithm the page did not offer."""
    objects = list(lab.settings.param.algorithm.objects)
    lab.settings.param.algorithm.objects = objects + [key]
    lab.settings.algorithm = key


@pytest.mark.parametrize("task, key", NON_PRIVATE, ids=[k for _, k in NON_PRIVATE])
def test_attack2_analyst_cannot_run_a_non_private_algorithm(private_lab, task, key):
    lab = private_lab
    lab.settings.task = task
    assert key not in lab.settings.param.algorithm.objects  # not offered to the analyst
    assert all(by_key(k).private for k in lab.settings.param.algorithm.objects)
    _force(lab, key)
    runs = lab.n_runs
    lab.param.trigger("release")
    assert lab.n_runs == runs  # nothing was fitted
    _nothing_left(lab)


def test_attack2_analyst_cannot_run_gibbs_from_a_non_private_init(private_lab):
    from privclust.app.views import GibbsView

    lab = private_lab
    lab.settings.task = "subspace"
    lab.settings.param.update(algorithm="gibbs", n_clusters=2, subspace_dim=1)
    lab.settings.algo.param.update(init="ssc", n_iter=10, n_chains=1, record_every=5)
    runs = lab.n_runs
    lab.param.trigger("release")
    assert lab.n_runs == runs
    _nothing_left(lab)
    view = GibbsView(lab=lab)
    assert not view.start()  # the live sampler refuses too: no process, no charge
    view.runner.join(30)
    assert view.runner.pid is None and "Refused" in view.message.object
    _nothing_left(lab)


def test_attack2_owner_view_runs_them_marked_and_never_exports(private_lab):
    """The data owner may run a baseline, through the Curator's owner path: NOT PRIVATE,
    uncharged, never stored, listed or downloaded."""
    from privclust.app.export import report_csv, report_payload
    from privclust.app.views import ClustersView, ReportView

    lab = private_lab
    lab.settings.task = "kmeans"
    lab.settings.owner_view = True
    assert "kmeans" in lab.settings.param.algorithm.objects
    lab.settings.algorithm = "kmeans"
    result = lab.do_release()
    assert result is not None and result.owner_only and result.release is None
    assert lab.ledger.spent == (0.0, 0.0) and lab.ledger.curator.releases() == []
    fig = ClustersView(lab=lab).figure()
    import holoviews as hv

    titles = fig.traverse(
        lambda el: hv.Store.lookup_options("bokeh", el, "plot").kwargs.get("title")
    )
    assert any(t and t.startswith("NOT PRIVATE") for t in titles)
    assert ClustersView(lab=lab).figure(analyst=True) is None
    with pytest.raises(ValueError):
        report_payload(result)
    with pytest.raises(ValueError):
        report_csv(result)
    assert "NOT PRIVATE" in ReportView(lab=lab)._report()[0].object
    lab.settings.owner_view = False  # back to the analyst: the result is gone
    assert lab.result is None
