"""The Clusters figure redrawn in place (app/views/live_figure.py): what it copies into the page's
figure makes that figure the new one, property for property; figures of another shape are
refused; on a server page the view redraws on the session's thread, once for the results that
came meanwhile."""

import dataclasses
import types
import warnings

import pytest
from bokeh.models import Title
from bokeh.plotting import figure
from bokeh.util.warnings import BokehDeprecationWarning

from privclust.app.state import Lab
from privclust.app.views import ClustersView
from privclust.app.views import live_figure as lf


@pytest.fixture
def demo(ledger_env):
    lab = Lab(schedule=lambda fn: fn())
    return lab, ClustersView(lab=lab)


def _step(lab, eps):
    lab.settings.epsilon = eps
    lab.run_demo()
    assert lab.result.settings["epsilon"] == eps


def _all_properties_equal(live, new):
    """Brute force: every property of every model (defaults included), not only those set."""
    pairs = {}
    assert lf._pair(live, new, pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BokehDeprecationWarning)
        for a, b in pairs.values():
            for name in b.properties():
                if b.lookup(name).property.readonly:
                    continue
                value = getattr(b, name)
                if not lf._has_model(value):
                    assert lf._equal(getattr(a, name), value), (type(a).__name__, name)
    return len(pairs)


def test_the_changes_found_make_the_page_figure_the_new_one(demo):
    lab, view = demo
    live = lf.LiveFigure(view._overlays())
    for fig in live.model.select({"type": figure}):  # what a browser reports of the page
        fig.set_from_json("inner_width", 480)
    _step(lab, 2.0)
    new = lf._Plot(view._overlays()).model
    found = lf.changes(live.model, new)
    kinds = {(type(m).__name__, name) for m, name, _ in found}
    assert ("Title", "text") in kinds and ("ColumnDataSource", "data") in kinds
    titles = [t.text for t in live.model.select({"type": Title})]
    assert not any("ε=2" in t for t in titles)
    lf.apply(found)
    assert any("ε=2" in t.text for t in live.model.select({"type": Title}))
    assert _all_properties_equal(live.model, new) > 50
    assert lf.changes(live.model, new) == []  # nothing left to copy


def test_a_figure_of_another_shape_is_refused(demo):
    lab, view = demo
    live = lf.LiveFigure(view._overlays())
    lab.settings.task = "kmeans"  # other layers: centres, no subspace directions
    other = view._overlays()
    assert lf.layers(other) != live.layers
    assert lf.changes(live.model, lf._Plot(other).model) is None
    assert not live.redraw(other)


def test_no_redraw_in_place_outside_a_server_page(demo):
    lab, view = demo
    live = lf.LiveFigure(view._overlays())
    _step(lab, 2.0)
    assert live.model.document is None
    assert not live.redraw(view._overlays())  # a notebook or a test: a new figure instead


def test_on_a_server_page_the_figure_is_redrawn_in_place(demo, monkeypatch):
    lab, view = demo
    live = lf.LiveFigure(view._overlays())
    page = types.SimpleNamespace(session_context=object())
    monkeypatch.setattr(live, "_page", lambda: page)  # this figure only, not the view's
    for eps in (2.0, 5.0):
        _step(lab, eps)
        assert live.redraw(view._overlays())
        titles = [t.text for t in live.model.select({"type": Title})]
        assert any(f"ε={eps:g}" in t for t in titles)
    assert _all_properties_equal(live.model, lf._Plot(view._overlays()).model)


def test_the_view_redraws_on_the_session_thread_once_for_results_that_came_meanwhile(
    demo, monkeypatch
):
    lab, view = demo
    ticks = []
    view._doc = types.SimpleNamespace(add_next_tick_callback=ticks.append)  # a server page
    page = types.SimpleNamespace(session_context=object())
    monkeypatch.setattr(lf.LiveFigure, "_page", lambda self: page)
    shown = view._plots()
    model = shown.objects[0].object
    _step(lab, 2.0)
    _step(lab, 5.0)
    assert len(ticks) == 1  # one redraw for both results, when the session's thread is free
    assert not any("ε=5" in t.text for t in model.select({"type": Title}))
    ticks.pop()()
    assert view._plots() is shown  # the same figure, redrawn in place
    assert any("ε=5" in t.text for t in model.select({"type": Title}))
    lab.settings.task = "kmeans"  # other layers: a new figure
    ticks.pop()()
    assert view._plots() is not shown


def _on_a_page(live, monkeypatch):
    page = types.SimpleNamespace(session_context=object())
    monkeypatch.setattr(live, "_page", lambda: page)
    return live


def _count_plots(monkeypatch):
    built = []
    real = lf._Plot.__init__

    def counting(self, frames):
        built.append(1)
        real(self, frames)

    monkeypatch.setattr(lf._Plot, "__init__", counting)
    return built


def _two_pages_after_a_step(demo, eps, monkeypatch):
    """Two pages' figures of the demo result (each a plot of its own), then a step to ``eps``,
    counting the plots built from then on, with no shared shadow left (the view's own new figure
    of the step's result shares one)."""
    lab, view = demo
    monkeypatch.setattr(lf, "PUBLIC_SHADOWS", lf.collections.OrderedDict())
    first = _on_a_page(lf.LiveFigure(view._overlays()), monkeypatch)
    second = _on_a_page(lf.LiveFigure(view._overlays()), monkeypatch)
    built = _count_plots(monkeypatch)
    _step(lab, eps)
    lf.PUBLIC_SHADOWS.clear()
    return first, second, built


def _shadows_of(layers):
    return [s for s in lf.PUBLIC_SHADOWS.values() if s.layers == layers]


def test_pages_of_public_results_share_one_shadow_and_show_their_own_frames(demo, monkeypatch):
    """With one shadow per layers, a second page's first redraw of another public result builds
    no plot; what it shows is its own result, property for property, although the shared shadow
    last drew another page's."""
    lab, view = demo
    monkeypatch.setattr(lf, "PUBLIC_SHADOWS_PER_LAYERS", 1)
    first, second, built = _two_pages_after_a_step(demo, 5.0, monkeypatch)
    n = len(built)
    assert first.redraw(view._overlays(), public=True) and len(built) == n + 1
    (shadow,) = lf.PUBLIC_SHADOWS.values()
    _step(lab, 2.0)
    n = len(built)
    assert second.redraw(view._overlays(), public=True) and len(built) == n  # no plot built
    assert list(lf.PUBLIC_SHADOWS.values()) == [shadow]
    titles = [t.text for t in second.model.select({"type": Title})]
    assert any("ε=2" in t for t in titles) and not any("ε=5" in t for t in titles)
    assert _all_properties_equal(second.model, lf._Plot(view._overlays()).model)
    assert first._shadow is None and second._shadow is None


def test_steps_back_to_a_public_result_reuse_the_shadow_that_shows_it(demo, monkeypatch):
    """Slider steps back and forth over demo results: each result gets a shadow of its own (up
    to ``PUBLIC_SHADOWS_PER_LAYERS``), a step back to one is neither a plot nor a redraw, and
    the page shows the step's result; beyond the limit the least recently used is redrawn."""
    lab, view = demo
    monkeypatch.setattr(lf, "PUBLIC_SHADOWS_PER_LAYERS", 2)
    live, _, built = _two_pages_after_a_step(demo, 5.0, monkeypatch)
    redraws = []
    real = lf._Plot.draw
    monkeypatch.setattr(lf._Plot, "draw", lambda self, *a: (redraws.append(1), real(self, *a)))
    n = len(built)
    for eps in (2.0, 5.0, 2.0, 5.0):
        _step(lab, eps)
        assert live.redraw(view._overlays(), public=True)
        assert any(f"ε={eps:g}" in t.text for t in live.model.select({"type": Title}))
        assert _all_properties_equal(live.model, lf._Plot(view._overlays()).model)
        n += 1  # the reference plot just built
    assert len(built) == n + 2 and not redraws  # one shadow per result, none redrawn
    assert len(_shadows_of(live.layers)) == 2
    _step(lab, 10.0)
    assert live.redraw(view._overlays(), public=True) and len(built) == n + 2
    assert len(_shadows_of(live.layers)) == 2 and len(redraws) == 1
    assert any("ε=10" in t.text for t in live.model.select({"type": Title}))


def test_a_private_result_s_shadow_is_its_figure_s_own(demo, monkeypatch):
    """``public=False`` (private data, the data owner view of it) never draws on the shared
    shadow nor leaves its frames there: each figure builds and keeps a shadow of its own."""
    view = demo[1]
    first, second, built = _two_pages_after_a_step(demo, 2.0, monkeypatch)
    n = len(built)
    assert first.redraw(view._overlays()) and second.redraw(view._overlays())
    assert len(built) == n + 2 and not lf.PUBLIC_SHADOWS
    assert first._shadow is not None and first._shadow is not second._shadow


def test_the_view_shares_shadows_for_demo_data_only(demo, monkeypatch):
    lab, view = demo
    calls = []
    monkeypatch.setattr(lf.LiveFigure, "redraw", lambda self, f, public=False: calls.append(public))
    view._live = lf.LiveFigure(view._overlays())
    view._show()
    lab.result = dataclasses.replace(lab.result, private_mode=True)  # shown at once (no server)
    assert calls == [True, False]


def test_a_clone_is_the_plot_model_for_model_with_models_of_its_own(demo):
    lab, view = demo
    plot = lf._Plot(view._overlays()).model
    copy = lf.clone(plot)
    originals = {m.id: m for m in plot.references()}
    copies = list(copy.references())
    assert len(copies) == len(originals) > 50
    assert not originals.keys() & {m.id for m in copies}
    assert copy.document is None
    assert _all_properties_equal(copy, plot) > 50 and _all_properties_equal(plot, copy) > 50
    source = next(m for m in copies if type(m).__name__ == "ColumnDataSource" and m.data)
    column = next(v for v in source.data.values() if hasattr(v, "shape"))
    assert not any(
        getattr(o, "data", None) is not None and any(v is column for v in o.data.values())
        for o in originals.values()
    )  # data are copied, not shared: the original is redrawn for other results
    _step(lab, 2.0)  # a redraw of the original's plot copies into the clone
    new = lf._Plot(view._overlays()).model
    lf.apply(lf.changes(copy, new))
    assert any("ε=2" in t.text for t in copy.select({"type": Title}))
    assert _all_properties_equal(copy, new)


def test_a_clone_keeps_shared_models_shared_and_cycles_cycles():
    from bokeh.models import CustomJS

    plot = figure()
    renderer = plot.scatter([1, 2], [3, 4])
    plot.js_on_event("tap", CustomJS(args={"plot": plot, "r": renderer}, code=""))
    copy = lf.clone(plot)
    args = copy.js_event_callbacks["tap"][0].args
    assert args["plot"] is copy and args["r"] is copy.renderers[0]
    assert copy.renderers[0] is not renderer
    assert len(copy.tools) == len(plot.tools) and copy.toolbar is not plot.toolbar


def test_a_new_figure_of_a_public_result_copies_the_shared_shadow(demo, monkeypatch):
    """A page's first figure of a public result builds no plot when another page's built the
    shadow of its layers; the figure shows its own result, and the first page's is untouched."""
    lab, view = demo
    monkeypatch.setattr(lf, "PUBLIC_SHADOWS", lf.collections.OrderedDict())
    monkeypatch.setattr(lf, "PUBLIC_SHADOWS_PER_LAYERS", 1)
    first = lf.LiveFigure(view._overlays(), public=True)
    assert [s.layers for s in lf.PUBLIC_SHADOWS.values()] == [first.layers]
    built = _count_plots(monkeypatch)
    _step(lab, 2.0)
    second = lf.LiveFigure(view._overlays(), public=True)
    assert not built  # neither the view's new figure nor this one built a plot
    assert any("ε=2" in t.text for t in second.model.select({"type": Title}))
    assert not any("ε=2" in t.text for t in first.model.select({"type": Title}))
    assert _all_properties_equal(second.model, lf._Plot(view._overlays()).model)
    (shared,) = lf.PUBLIC_SHADOWS.values()
    lf.LiveFigure(view._overlays())  # private: a plot of its own, the shared shadow untouched
    assert len(built) == 2 and list(lf.PUBLIC_SHADOWS.values()) == [shared]


def _count_redraws(plot, monkeypatch):
    redrawn = []
    real = plot._stream.event

    def counting(**kwargs):
        redrawn.append(1)
        real(**kwargs)

    monkeypatch.setattr(plot._stream, "event", counting)
    return redrawn


def test_a_shadow_skips_frames_it_already_shows_and_redraws_any_other(demo, monkeypatch):
    """The pages of a class open on one demo result: a shadow asked to draw frames equal to
    those it shows does nothing, and the copy it gives is still the plot of those frames; a
    new ε, a layer of other data, a hook made anew or an option value of an unknown kind all
    redraw it."""
    lab, view = demo
    plot = lf._Plot(view._overlays())
    redrawn = _count_redraws(plot, monkeypatch)
    plot.draw(view._overlays())  # equal frames, built anew
    assert not redrawn
    assert _all_properties_equal(lf.clone(plot.model), lf._Plot(view._overlays()).model)
    _step(lab, 2.0)
    plot.draw(view._overlays())
    assert len(redrawn) == 1
    assert any("ε=2" in t.text for t in plot.model.select({"type": Title}))
    frames = view._overlays()
    assert lf._equal(lf.content(frames), lf.content(view._overlays()))
    left = frames[0]
    points = left.get(0)
    data = dict(points.data)
    data["x"] = data["x"] + 1e-9
    moved = left.clone([points.clone(data), *list(left.values())[1:]])
    hooked = left.opts(hooks=[lambda plot, element: None], clone=True)
    other_kind = left.opts(title=object(), clone=True)
    for changed in (moved, hooked, other_kind):
        assert not lf._equal(lf.content([changed, frames[1]]), lf.content(frames))
    plot.draw([hooked, frames[1]])
    assert len(redrawn) == 2


def test_values_compare_and_hold_models_as_walked_one_by_one():
    """The fast paths (a list compared in one call, scalars and arrays skipped) keep the answers
    of a walk of every item: NaNs of different objects equal, arrays inside lists compared by
    value, and a model found after thousands of labels."""
    import numpy as np
    from bokeh.models import Range1d

    labels = [f"c{i}" for i in range(5000)]
    assert lf._equal(labels + [float("nan")], list(labels) + [float("nan")])
    assert not lf._equal(labels + ["x"], labels + ["y"])
    assert lf._equal([np.arange(3), 1], [np.arange(3), 1])
    assert not lf._equal([np.arange(3), 1], [np.arange(3) + 1, 1])
    assert not lf._has_model(labels + [np.arange(4), 2.0, None])
    assert lf._has_model(labels + [{"r": Range1d()}])
    assert lf._has_model((1, [labels, Range1d()]))
