"""Plots a person reads without help: each axis says what it is, heatmaps keep their own axes,
legends name the chains, cell numbers fit, thinned matrices and clipped text are announced,
plots use the page width. Render tests (HoloViews -> Bokeh models, no browser) and one browser
test of what the Clusters tab shows."""

import re

import holoviews as hv
import numpy as np
import pandas as pd
import pytest
from bokeh.models import Legend, Plot, Title

from privclust.app.state import Lab
from privclust.app.views import ClustersView, GibbsView, plots

hv.extension("bokeh", logo=False)


def figures(obj):
    """The Bokeh figures of a rendered HoloViews object, in layout order."""
    root = hv.render(obj)
    return list(root.select({"type": Plot})) if not isinstance(root, Plot) else [root]


def by_title(figs):
    return {f.title.text: f for f in figs}


def test_subspace_heatmaps_axis_titles_match_their_ticks_and_keep_their_own_rows():
    rng = np.random.default_rng(0)
    grid = plots.grid(
        [
            plots.distance_heatmap(rng.random((2, 3)), "vs truth", "true", "private"),
            plots.distance_heatmap(rng.random((2, 4)), "vs baseline", "baseline", "private"),
        ]
    )
    figs = by_title(figures(grid))
    for title, ref, k in (("vs truth", "true", 3), ("vs baseline", "baseline", 4)):
        f = figs[title]
        assert f.xaxis[0].axis_label == ref and f.yaxis[0].axis_label == "private"
        # ticks under the axis title they belong to; no row of the other heatmap
        assert sorted(f.x_range.factors) == [f"{ref} {j}" for j in range(k)]
        assert sorted(f.y_range.factors) == ["private 0", "private 1"]
        # row 0 of the matrix at the top, as printed
        assert list(f.y_range.factors)[-1] == "private 0"


def test_cluster_axes_say_which_features_or_which_projection():
    X = np.random.default_rng(1).normal(size=(200, 5))
    for use_data, labels in ((False, ("feature 0", "feature 1")), (True, ("PC 1", "PC 2"))):
        P, mean = plots.projection(X, use_data)
        assert plots.axis_labels(P, mean) == labels
        over = plots.points(X, None, P, mean, "t") * plots.centres(X[:3], P, mean)
        f = figures(over)[0]
        assert (f.xaxis[0].axis_label, f.yaxis[0].axis_label) == labels
        f = figures(plots.empty("analyst", "hidden: computed on raw data", P, mean))[0]
        assert (f.xaxis[0].axis_label, f.yaxis[0].axis_label) == labels


def test_clusters_view_labels_demo_axes_as_principal_components(ledger_env):
    lab = Lab(schedule=lambda fn: fn())
    lab.data.param.update(n_samples=200)
    assert lab.result is not None, lab.message
    figs = figures(ClustersView(lab=lab).figure())
    assert len(figs) == 2
    for f in figs:
        assert (f.xaxis[0].axis_label, f.yaxis[0].axis_label) == ("PC 1", "PC 2")
        assert f.sizing_mode in ("stretch_width", "stretch_both")  # uses the page width


def test_empty_plots_have_defined_ranges_and_a_wrapped_note():
    """An empty plot with NaN ranges makes Bokeh log "could not set initial ranges"; a note on
    one long line is clipped by a narrow plot."""
    f = figures(
        plots.empty("non-private baseline", "hidden: computed on raw data (data owner view)")
    )[0]
    for r in (f.x_range, f.y_range):
        assert np.isfinite(r.start) and np.isfinite(r.end) and r.end > r.start
    texts = [t for r in f.renderers for t in r.data_source.data.get("text", [])]
    assert texts and all(max(len(line) for line in t.split("\n")) <= 30 for t in texts)


def test_tradeoff_plot_ticks_every_epsilon_pads_its_points_and_puts_the_legend_aside():
    eps = [0.1, 0.3, 1.0, 3.0, 10.0]
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"epsilon": np.repeat(eps, 3), "score": rng.random(15), "method": "A"})
    f = figures(plots.tradeoff(df, "score", "score vs ε"))[0]
    ticker = f.xaxis[0].ticker
    assert list(ticker.ticks) == eps
    assert [f.xaxis[0].major_label_overrides[e] for e in eps] == ["0.1", "0.3", "1", "3", "10"]
    assert f.x_range.start < 0.1 and f.x_range.end > 10.0  # padding around the points
    lo, hi = df.groupby("epsilon")["score"].median().agg(["min", "max"])
    assert f.y_range.start < lo and f.y_range.end > hi
    assert any(isinstance(m, Legend) for m in f.right)  # beside the plot
    assert not any(isinstance(m, Legend) for m in f.center)  # not over the data


def test_plan_plot_ticks_every_planned_epsilon():
    """A log axis alone labels only the powers of ten: 0.1, 0.5 and 2 would be unlabelled."""
    from privclust.app.views.plan import figure
    from privclust.core.experiments.planner import PublicFacts, plan_utility

    eps = [0.1, 0.5, 2.0]
    res = plan_utility(
        PublicFacts("kmeans", 300, 3, 3, bounds=(-1, 1)),
        epsilons=eps,
        algorithms=["dplloyd"],
        n_trials=2,
        random_state=0,
    )
    f = figures(figure(res, "relative_sse", 1.2))[0]
    assert list(f.xaxis[0].ticker.ticks) == eps
    assert [f.xaxis[0].major_label_overrides[e] for e in eps] == ["0.1", "0.5", "2"]


@pytest.mark.slow
def test_gibbs_traces_have_a_chain_legend_and_one_shared_source(ledger_env):
    lab = Lab()
    lab.data.param.update(n_samples=200)
    view = GibbsView(lab=lab)
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=30, record_every=5, n_chains=3)
    assert view.start()
    view.runner.join(60)
    view.poll()
    # one legend above the three figures, in the lines' colours
    assert [f"chain {c}" in view.legend.object for c in range(4)] == [True, True, True, False]
    for fig in view.figures.values():
        lines = [r for r in fig.renderers if (r.name or "").startswith("chain ") and r.visible]
        assert [r.name for r in lines] == ["chain 0", "chain 1", "chain 2"]
        for c, line in enumerate(lines):
            assert line.glyph.line_color in view.legend.object
            assert (
                line.data_source is view.source and line.glyph.y == f"{fig_metric(view, fig)}_{c}"
            )
        # the "no data yet" note (it keeps an empty y range defined) is gone once there is data
        note = fig.select_one({"name": "no-data"})
        assert note is not None and not note.visible


def fig_metric(view, fig):
    return next(m for m, f in view.figures.items() if f is fig)


def test_gibbs_traces_before_a_run_have_a_defined_y_range(ledger_env):
    view = GibbsView(lab=Lab())
    for fig in view.figures.values():
        note = fig.select_one({"name": "no-data"})
        assert note is not None and note.visible


def test_contingency_numbers_are_compact_and_sized_by_the_table():
    T = np.array([[123456.0, 5546.0, 7.25], [0.5, 99321.0, 12.0], [3.0, 4.0, 1e7]])
    f = figures(plots.table(T, "released contingency table"))[0]
    labels = [
        (r.glyph.text_font_size, list(r.data_source.data["text"]))
        for r in f.renderers
        if "text" in r.data_source.data
    ]
    texts = [t for _, ts in labels for t in ts]
    assert sorted(texts) == sorted(["123k", "5546", "7.25", "0.5", "99.3k", "12", "3", "4", "10M"])
    assert all(len(t) <= 5 for t in texts)
    assert {size for size, _ in labels} == {"10pt"}
    big = figures(plots.table(np.arange(100.0).reshape(10, 10), "t"))[0]
    sizes = {r.glyph.text_font_size for r in big.renderers if "text" in r.data_source.data}
    assert sizes == {"6pt"}


def test_a_subsampled_matrix_says_so():
    A = np.random.default_rng(3).poisson(1.0, size=(1000, 200))
    f = figures(plots.matrix(A, np.arange(1000), np.arange(200), "reordered by X"))[0]
    text = " ".join(t.text for t in f.select({"type": Title}))
    assert "subsampled" in f.title.text
    assert re.search(r"every 4th row", text) and "column" not in text.split("shown")[0]
    f = figures(plots.matrix(A[:200], np.arange(200), np.arange(200), "reordered by X"))[0]
    assert "subsampled" not in f.title.text


@pytest.mark.ui
def test_clusters_tab_uses_the_page_width_and_names_its_axes(browser, server):
    from browser import open_page, titles, wait_for

    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    try:
        open_page(page, server)
        wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
        labels = page.evaluate("""() => { const out = [];
          for (const d of window.Bokeh.documents) for (const m of d.all_models)
            if (m.axis_label !== undefined && m.axis_label !== null) out.push(m.axis_label);
          return out; }""")
        assert "PC 1" in labels and "PC 2" in labels and "x" not in labels
        plot = page.locator(".pc-clusters-plot").first
        banner = page.locator(".pc-banner").first  # spans the main area
        wait_for(page, lambda: (plot.bounding_box() or {}).get("width", 0) > 0, what="plot")
        assert plot.bounding_box()["width"] > 0.9 * banner.bounding_box()["width"]
    finally:
        context.close()
