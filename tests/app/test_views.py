"""Views rendered to Bokeh models without a browser: every tab for every task, the analyst vs
data-owner displays, the trade-off sweep and the Gibbs view's polling."""

import json

import holoviews as hv
import numpy as np
import pytest
from bokeh.document import Document

from privclust.app import catalogue
from privclust.app.page import create_app
from privclust.app.state import PRESETS, Lab
from privclust.app.views import SettingsPanel

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _gibbs_on_release_protocol():
    from privclust.core import GibbsSubspaceClustering, PrivateEstimator

    return issubclass(GibbsSubspaceClustering, PrivateEstimator)


# a private Gibbs run is a Curator release: the Curator refuses estimators not on the base
needs_private_gibbs = pytest.mark.skipif(
    not _gibbs_on_release_protocol(),
    reason="GibbsSubspaceClustering is not a PrivateEstimator yet (the Curator refuses it)",
)


def _private_kmeans(lab):
    lab.settings.task = "kmeans"
    lab.settings.algorithm = "dplloyd"


def titles(obj):
    """Every plot title in a (nested) HoloViews object."""
    found = obj.traverse(
        lambda el: hv.Store.lookup_options("bokeh", el, "plot").kwargs.get("title")
    )
    return [t for t in found if t]


def shown_titles(clusters):
    """The titles of the Bokeh figure the Clusters view shows now."""
    from bokeh.models import Title

    return [t.text for t in clusters._live.model.select({"type": Title})]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_view_renders_for_every_task(preset, ledger_env):
    lab = Lab(schedule=lambda fn: fn())
    lab.data.param.update(preset=preset, n_samples=200)
    assert lab.result is not None, lab.message
    app = create_app(lab)
    for view in app.views.values():
        view.__panel__().get_root(Document())
    assert lab.settings.task == PRESETS[preset][1]


def test_analyst_sees_only_released_results_owner_view_is_marked(ledger_env, csv_payload):
    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    _private_kmeans(lab)
    assert lab.do_release() is not None, lab.message
    app = create_app(lab)
    clusters = app.views["ClustersView"]
    analyst = clusters.figure()
    names = titles(analyst)
    assert not any("NOT PRIVATE" in t for t in names)
    assert not any("NOT PRIVATE" in t for t in shown_titles(clusters))
    drawn = analyst.traverse(lambda el: (el.label, len(el)), [hv.Points])
    assert sum(n for label, n in drawn if label != "centres") == 0  # no raw record is drawn
    assert ("centres", lab.settings.n_clusters) in drawn  # the released centres are
    assert any("hidden" in t for t in analyst.traverse(lambda el: el.text, [hv.Text]))
    assert lab.result.baseline is None  # never even computed for the analyst
    metrics = clusters._metrics()
    assert "evaluation only" not in getattr(metrics, "object", "")
    lab.settings.owner_view = True
    owner = clusters.figure()
    assert sum("NOT PRIVATE" in t for t in titles(owner)) >= 2
    assert sum("NOT PRIVATE" in t for t in shown_titles(clusters)) >= 2
    assert sum(owner.traverse(len, [hv.Points])) >= 2 * 120
    assert "not private" in clusters._metrics().object


def test_the_release_picker_holds_the_release_the_browser_shows_as_chosen(ledger_env, csv_payload):
    """The picker's first option (the newest release) is what the browser shows as chosen, so it
    is the server's value too: Panel kept a Select's value None when only its options changed,
    and a Re-open pressed before the browser sent its choice back did nothing (browser test
    test_release_store_then_refusal_and_the_list_survives_a_reload)."""
    from privclust.app.views import LedgerPanel

    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    _private_kmeans(lab)
    lab.settings.epsilon = 0.5  # two releases within the test budget
    panel = LedgerPanel(lab=lab)
    assert panel.picker.value is None and not panel.reopen.visible
    first = lab.do_release()
    assert panel.picker.value == first.estimator.id and panel.reopen.visible
    lab.settings.n_clusters += 1
    second = lab.do_release()
    assert second is not None, lab.message
    assert panel.picker.value == first.estimator.id  # a choice the user made is kept
    panel.picker.value = second.estimator.id
    lab.say("")
    panel.reopen.clicks += 1
    assert "Re-opened release" in lab.message and lab.result.estimator.id == second.estimator.id


def test_tradeoff_sweep_runs_on_demo_only(ledger_env, csv_payload):
    from privclust.app.views import TradeoffView

    lab = Lab()
    lab.data.param.update(preset="block_counts", n_samples=100)
    view = TradeoffView(lab=lab)
    assert "5 ε values x 3 trials = **15 fits**" in view.plan.object
    assert not view.plot.visible and view.plot.object is None  # no empty axes before a sweep
    view.eps.value = [1.0, 10.0]
    view.n_trials = 1
    assert "2 ε values x 1 trial = **2 fits**" in view.plan.object
    assert view.start(wait=True)
    assert len(view.result) == 2 and set(view.result["epsilon"]) == {1.0, 10.0}
    assert "Done" in view.status.object and view.progress.value == 100
    assert view.plot.visible and view.plot.object is not None
    lab.data.upload("private.csv", csv_payload())
    assert not view.start() and "demo data only" in view.status.object


def test_gibbs_view_polls_diagnostics_and_sets_the_result(ledger_env):
    from privclust.app.views import GibbsView

    lab = Lab()
    lab.data.param.update(n_samples=200)
    view = GibbsView(lab=lab)
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=30, record_every=5, n_chains=2)
    assert view.start()
    view.runner.join(60)
    view.poll()
    assert view.updates == 1 and len(view.source.data["iteration"]) == 6  # 6 records, one poll
    assert lab.result.spec.key == "gibbs" and "R-hat" in view.info.object
    # the plots' source holds one row per record (a column per chain and metric): 6 records
    data = view.source.data
    assert list(data["iteration"]) == [5, 10, 15, 20, 25, 30]
    assert np.all(np.isfinite(data["cost_0"])) and np.all(np.isfinite(data["cost_1"]))
    assert np.all(np.isnan(data["cost_2"]))  # 2 chains: 2 lines shown per figure
    assert all(
        len([r for r in f.renderers if r.glyph.__class__.__name__ == "Line" and r.visible]) == 2
        for f in view.figures.values()
    )
    # one iteration axis for the three figures, spanning the run (set by the server)
    assert all(f.x_range is view.x_range for f in view.figures.values())
    assert (view.x_range.start, view.x_range.end) == (0, 30)


def _private_gibbs_run(csv_payload):
    """A short Gibbs run on uploaded (private) data, polled once after it finished."""
    from privclust.app.views import GibbsView

    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    view = GibbsView(lab=lab)
    lab.settings.task = "subspace"
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=20, record_every=5, n_chains=2)
    assert view.start()
    view.runner.join(60)
    view.poll()
    return lab, view


@needs_private_gibbs
def test_gibbs_start_refused_by_the_plan_on_private_data(ledger_env, csv_payload):
    """The Curator plans from the parameters and the public shape before anything runs: an
    impossible request (more clusters than records) is refused, nothing is charged."""
    from privclust.app.views import GibbsView

    lab = Lab()
    lab.data.upload("private.csv", csv_payload(n=3))
    view = GibbsView(lab=lab)
    lab.settings.task = "subspace"
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=20, record_every=5, n_chains=2)
    lab.settings.n_clusters = 5
    assert not view.start()
    text = view.message.object.replace("\\", "")  # the alert escapes Markdown
    assert "Refused before anything ran" in text and "Nothing was run" in text
    assert lab.ledger.spent[0] == 0.0 and view.runner.pid is None


@needs_private_gibbs
def test_rhat_of_the_owner_view_is_hidden_when_it_is_switched_off(ledger_env, csv_payload):
    """R-hat is computed on the raw data: visible in the data owner view, gone (with the
    traces) as soon as the view is switched off, also after the run has ended."""
    from privclust.app.views import GibbsView

    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    lab.settings.owner_view = True
    view = GibbsView(lab=lab)
    lab.settings.param.update(task="subspace", algorithm="gibbs")
    lab.settings.algo.param.update(n_iter=20, record_every=5, n_chains=2)
    assert view.start()
    view.runner.join(60)
    view.poll()
    assert "R-hat" in view.info.object and len(view.source.data["iteration"]) > 0
    lab.settings.owner_view = False
    assert "R-hat" not in view.info.object and len(view.source.data["iteration"]) == 0


@needs_private_gibbs
def test_gibbs_private_analyst_gets_progress_only(ledger_env, csv_payload):
    lab, view = _private_gibbs_run(csv_payload)
    assert lab.ledger.spent[0] == pytest.approx(1.0)
    assert len(view.source.data["iteration"]) == 0 and "R-hat" not in view.info.object
    assert "progress only" in view._traces().object
    assert lab.result.release is not None
    assert not view.start()  # identical request: from the release store, not charged again
    assert lab.ledger.spent[0] == pytest.approx(1.0) and lab.result.from_cache


def test_report_downloads_are_local_and_released_only(ledger_env, csv_payload):
    from privclust.app.export import plot_html, report_payload
    from privclust.app.views import ClustersView

    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    _private_kmeans(lab)
    result = lab.do_release()
    lab.settings.owner_view = True  # the download is the analyst's figure all the same
    html = plot_html(ClustersView(lab=lab).figure(analyst=True)).getvalue().decode()
    import re

    assert "<script" in html and not re.search(r"<(script|link)[^>]*(src|href)=\"http", html)
    assert "NOT PRIVATE" not in html
    assert set(report_payload(result)["released"]) == {"cluster_centers_"}


def test_plots_offer_png_download_in_their_toolbar(ledger_env):
    """PNG downloads: each plot's Bokeh toolbar has the save tool (the Report says so)."""
    from bokeh.models import SaveTool

    from privclust.app.views import ClustersView, teaching

    lab = Lab()
    fig = hv.render(ClustersView(lab=lab).figure(), backend="bokeh")
    assert len(list(fig.select({"type": SaveTool}))) >= 2  # private and baseline plots
    assert "PNG" in teaching.REPORT


def test_gibbs_runs_show_their_chains_in_the_figures_built_with_the_view(ledger_env):
    """A run with another number of chains reuses the view's figures and source (new Bokeh
    models sent at Start made the next tab switch slow) and shows only its own chains' lines."""
    from privclust.app.views import GibbsView

    view = GibbsView(lab=Lab(schedule=lambda fn: None))
    figures, source = dict(view.figures), view.source
    for n in (5, 2):
        view._reset(n)
        assert view.figures == figures and view.source is source
        for fig in view.figures.values():
            shown = [
                r.name for r in fig.renderers if (r.name or "").startswith("chain ") and r.visible
            ]
            assert shown == [f"chain {c}" for c in range(n)]
        assert f"chain {n - 1}" in view.legend.object and f"chain {n}" not in view.legend.object


def test_gibbs_traces_stream_new_rows_and_thin_to_the_cap(ledger_env, monkeypatch):
    """Polls stream only the new records into the plots' source; when the cap (400 per chain)
    would be exceeded the stride doubles and the thinned trace replaces the plotted one (a
    few times per run, not at every poll); the last record is plotted when the run ends."""
    from privclust.app.server.sampler import diagnostic_rows
    from privclust.app.views import GibbsView
    from privclust.app.views import gibbs as gibbs_mod

    lab = Lab(schedule=lambda fn: None)
    view = GibbsView(lab=lab)
    view._reset(3)
    view._values, view._dataset = {"n_iter": 10_000}, lab.data.dataset
    streamed, changed = [], []
    real_stream = type(view.source).stream
    monkeypatch.setattr(
        type(view.source),
        "stream",
        lambda self, data, *a, **k: (
            streamed.append(len(data["iteration"])),
            real_stream(self, data, *a, **k),
        ),
    )
    view.source.on_change("data", lambda attr, old, new: changed.append(len(new["iteration"])))
    rng = np.random.default_rng(0)
    view.runner.running = True
    for it in range(10, 10_001, 10):  # 1000 records, 4 per poll
        view.runner.queue.put(
            diagnostic_rows(
                {
                    "iteration": it,
                    "cost": rng.random(3),
                    "test_statistic": rng.random(3),
                    "wasserstein": None,
                    "rhat": 1.0,
                }
            )
        )
        if it % 40 == 0:
            view.poll()
    data = view.source.data
    n = len(data["iteration"])
    assert n <= gibbs_mod.MAX_POINTS and view._stride == 4 and n == 250
    assert np.all(np.diff(data["iteration"]) == 40)  # evenly thinned: every 4th record
    replaced = len(changed) - len(streamed)  # a stream is a change event too
    assert 1 <= replaced <= 3 and len(streamed) >= 200  # streamed at (nearly) every poll
    assert max(streamed) <= 4 * 1 + 1
    assert np.all(np.isnan(data["distance_0"])) and np.all(np.isnan(data["cost_3"]))
    view.runner.running = False
    view.runner.queue.put(
        diagnostic_rows(
            {
                "iteration": 10_010,
                "cost": rng.random(3),
                "test_statistic": rng.random(3),
                "wasserstein": None,
                "rhat": 1.0,
            }
        )
    )
    view.poll()  # finishes: the last record is shown
    assert view.source.data["iteration"][-1] == 10_010
    assert len(view.source.data["iteration"]) <= gibbs_mod.MAX_POINTS


@needs_private_gibbs
def test_gibbs_owner_view_toggles_the_raw_traces(ledger_env, csv_payload):
    """Private data: the traces' source stays empty for the analyst, is filled when the data
    owner view is switched on, and emptied again when it is switched off."""
    lab, view = _private_gibbs_run(csv_payload)
    assert len(view.source.data["iteration"]) == 0
    lab.settings.owner_view = True
    assert list(view.source.data["iteration"]) == [5, 10, 15, 20]
    assert all(f.title.text.startswith("NOT PRIVATE") for f in view.figures.values())
    assert "R-hat" in (view.poll() or view.info.object)
    lab.settings.owner_view = False
    assert len(view.source.data["iteration"]) == 0


# every algorithm the dashboard offers, by task: a missing one fails its test (by_key raises)
# rather than shrinking the parametrisation
OFFERED = {
    "subspace": ["kplanes", "tsc", "ssc", "lrr", "sample_aggregate", "gibbs", "sulq"],
    "kmeans": ["kmeans", "compressive", "dplloyd", "lsh_kmeans", "balcan_kmeans"],
    "onecluster": ["smallest_ball", "onecluster", "kballs"],
    "cocluster": ["fasttaucc", "dptaucc"],
}


def test_the_catalogue_offers_exactly_the_listed_algorithms():
    assert {t: [s.key for s in catalogue.for_task(t)] for t in catalogue.TASKS} == OFFERED


@pytest.mark.parametrize("key", [k for keys in OFFERED.values() for k in keys])
def test_settings_panel_renders_for_every_algorithm(key, ledger_env):
    """Every algorithm's parameter widgets can be drawn (an optional integer such as DP-tauCC's
    unset row cap used to become a valueless slider that Bokeh refused to serialise)."""
    spec = catalogue.by_key(key)
    # no demo fit: the widgets are what is drawn here (SSC's fit on the demo data took minutes
    # on a busy machine); every view with its fitted result is drawn by the test above
    lab = Lab(schedule=lambda fn: None)
    lab.settings.task = spec.task
    lab.settings.algorithm = spec.key
    doc = Document()
    doc.add_root(SettingsPanel(lab=lab).__panel__().get_root(doc))
    doc.to_json()  # what is sent to the browser
    names = [p for p in lab.settings.algo.param if p != "name"] if lab.settings.algo else []
    assert sorted(names) == sorted(spec.params)


@pytest.mark.parametrize(
    "name",
    [
        "Banner",
        "DataPanel",
        "SettingsPanel",
        "LedgerPanel",
        "DataPreview",
        "ClustersView",
        "SubspacesView",
        "CoclustersView",
        "GibbsView",
        "PlanView",
        "TradeoffView",
        "ReportView",
        "ReleasesView",
    ],
)
def test_a_view_built_while_a_release_changes_the_lab_does_not_break(
    name, ledger_env, csv_payload, monkeypatch
):
    """The served page builds its tabs lazily on the IO loop while a release on the session's
    worker thread may change the lab (its ledger refresh, the result, the mode). A watcher the
    view registers before its panes exist fired half-way through the constructor, raised, and
    the release's result was never shown (CI, GibbsView: no attribute 'spend_private'). Here
    every such change happens right after ``Viewer.__init__``, before the view's own body."""
    import panel as pn

    from privclust.app import views

    lab = Lab()
    lab.data.upload("private.csv", csv_payload())
    _private_kmeans(lab)
    viewer_init = pn.viewable.Viewer.__init__

    def init_then_change_the_lab(self, **params):
        viewer_init(self, **params)
        if params.get("lab") is lab:
            lab.ledger.param.trigger("spent")
            lab.param.trigger("settings_changed", "mode", "result", "running")
            lab.settings.param.trigger("owner_view")
            lab.data.param.trigger("dataset")

    monkeypatch.setattr(pn.viewable.Viewer, "__init__", init_then_change_the_lab)
    view = getattr(views, name)(lab=lab)
    monkeypatch.undo()
    lab.ledger.param.trigger("spent")  # and the built view still follows the lab
    pn.panel(view).get_root(Document())  # and renders: either raised before the fix


def test_the_epsilon_slider_and_the_settings_follow_each_other(ledger_env):
    """The ε slider holds a grid index: a step sets the grid's ε, a value set elsewhere (the
    Plan tab's Apply) moves the handle to the nearest grid point on the log scale, and the
    title the browser formats from the index names that grid value."""
    from privclust.app.state.settings import EPSILON_GRID

    lab = Lab(schedule=lambda fn: None)
    panel = SettingsPanel(lab=lab)
    slider, s = panel.epsilon, lab.settings
    assert EPSILON_GRID[slider.value] == s.epsilon == 1.0
    slider.value += 1
    assert s.epsilon == 2.0
    s.epsilon = 50.0
    assert EPSILON_GRID[slider.value] == 50.0
    s.epsilon = 3.0  # log-nearest grid point: 2 (log 3/2 = 0.41 < log 5/3 = 0.51)
    assert EPSILON_GRID[slider.value] == 2.0 and s.epsilon == 2.0  # snapped to the grid
    code = slider.format.code  # `return [labels][tick] ...`: the title of index `tick`
    labels = json.loads(code[code.index("[") : code.index("]") + 1])
    assert [float(t) for t in labels] == EPSILON_GRID
