"""Views rendered to Bokeh models without a browser: every tab for every task, the analyst vs
data-owner displays, the trade-off sweep and the Gibbs view's polling."""
import io

import holoviews as hv
import numpy as np
import pytest
from bokeh.document import Document

from privclust.app.models import PRESETS, Lab
from privclust.app.page import create_app

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def csv_payload(n=120, d=4, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d)) / 3
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(f"c{j}" for j in range(d)), comments="")
    return buf.getvalue()


def titles(obj):
    """Every plot title in a (nested) HoloViews object."""
    found = obj.traverse(lambda el: hv.Store.lookup_options("bokeh", el, "plot").kwargs.get(
        "title"))
    return [t for t in found if t]


@pytest.fixture
def ledger_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_view_renders_for_every_task(preset, ledger_env):
    lab = Lab(schedule=lambda fn: fn())
    lab.data.param.update(preset=preset, n_samples=200)
    assert lab.result is not None, lab.message
    app = create_app(lab)
    for name, view in app.views.items():
        view.__panel__().get_root(Document())
    assert lab.settings.task == PRESETS[preset][1]


def test_analyst_sees_only_released_results_owner_view_is_marked(ledger_env):
    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    assert lab.do_release() is not None, lab.message
    app = create_app(lab)
    clusters = app.views["ClustersView"]
    analyst = clusters._plots().object
    names = titles(analyst)
    assert not any("NOT PRIVATE" in t for t in names)
    assert sum(analyst.traverse(len, [hv.Points])) == 0  # no raw record is drawn
    assert any("hidden" in t for t in analyst.traverse(lambda el: el.text, [hv.Text]))
    assert lab.result.baseline is None  # never even computed for the analyst
    metrics = clusters._metrics().__panel__()
    assert "evaluation only" not in getattr(metrics, "object", "")
    lab.settings.owner_view = True
    owner = clusters._plots().object
    assert sum("NOT PRIVATE" in t for t in titles(owner)) >= 2
    assert sum(owner.traverse(len, [hv.Points])) >= 2 * 120
    assert "not private" in clusters._metrics().__panel__().object


def test_tradeoff_sweep_runs_on_demo_only(ledger_env):
    from privclust.app.tradeoff import TradeoffView
    lab = Lab()
    lab.data.param.update(preset="block_counts", n_samples=100)
    view = TradeoffView(lab=lab)
    view.eps.value = [1.0, 10.0]
    view.n_trials = 1
    assert view.start(wait=True)
    assert len(view.result) == 2 and set(view.result["epsilon"]) == {1.0, 10.0}
    assert "Done" in view.status.object and view.progress.value == 100
    lab.data.upload("private.csv", csv_payload())
    assert not view.start() and "demo data only" in view.status.object


def test_gibbs_view_polls_diagnostics_and_sets_the_result(ledger_env):
    from privclust.app.gibbs import GibbsView
    lab = Lab()
    lab.data.param.update(n_samples=200)
    view = GibbsView(lab=lab)
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=30, record_every=5, n_chains=2)
    assert view.start()
    view.runner.join(60)
    view.poll()
    assert view.updates == 1 and len(view.data) == 12  # 6 records x 2 chains, one poll
    assert lab.result.spec.key == "gibbs" and "R-hat" in view.info.object
    assert len(view.buffer.data) == 12


def test_gibbs_private_analyst_gets_progress_only(ledger_env):
    from privclust.app.gibbs import GibbsView
    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    view = GibbsView(lab=lab)
    lab.settings.task = "subspace"
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=20, record_every=5, n_chains=2)
    assert view.start()
    view.runner.join(60)
    view.poll()
    assert lab.ledger.spent[0] == pytest.approx(1.0)
    assert len(view.buffer.data) == 0 and "R-hat" not in view.info.object
    assert "progress only" in view._traces().object
    assert not view.start()  # identical request: from the cache, not charged again
    assert lab.ledger.spent[0] == pytest.approx(1.0)


def test_report_downloads_are_local_and_released_only(ledger_env):
    from privclust.app.views import ClustersView, _plot_html, report_payload
    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    result = lab.do_release()
    html = _plot_html(ClustersView(lab=lab).figure()).getvalue().decode()
    import re
    assert "<script" in html and not re.search(r"<(script|link)[^>]*(src|href)=\"http", html)
    assert "NOT PRIVATE" not in html
    assert set(report_payload(result)["released"]) == {"subspaces_"}


def test_plots_offer_png_download_in_their_toolbar(ledger_env):
    """PNG downloads: each plot's Bokeh toolbar has the save tool (the Report says so)."""
    from bokeh.models import SaveTool
    from privclust.app import teaching
    from privclust.app.views import ClustersView
    lab = Lab()
    fig = hv.render(ClustersView(lab=lab).figure(), backend="bokeh")
    assert len(list(fig.select({"type": SaveTool}))) >= 2  # private and baseline plots
    assert "PNG" in teaching.REPORT
