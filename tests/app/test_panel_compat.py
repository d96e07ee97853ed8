"""The overrides of Panel internals (privclust.app.server.panel_compat) still have something to
override: each private member they replace exists with the signature they were written for, and
the installed Panel is the version they were written for (an upgrade fails here first)."""

import inspect

import panel as pn
import pytest
from panel.io import resources

from privclust.app.server import panel_compat


def test_panel_is_the_version_the_overrides_were_written_for():
    assert pn.__version__.startswith(panel_compat.PANEL_VERSION + "."), (
        f"panel {pn.__version__}: re-check every override in privclust/app/server/panel_compat.py "
        f"(written for {panel_compat.PANEL_VERSION}.x), then update PANEL_VERSION"
    )


def test_the_overridden_members_exist_with_their_signatures():
    assert list(inspect.signature(pn.widgets.FileDropper._process_event).parameters) == [
        "self",
        "event",
    ]
    assert "_file_buffer" in inspect.getsource(pn.widgets.FileDropper)
    assert list(inspect.signature(pn.pane.Bokeh._track_overrides).parameters) == ["self", "events"]
    assert list(inspect.signature(resources.patch_stylesheet).parameters) == [
        "stylesheet",
        "dist_url",
    ]
    assert hasattr(resources, "CDN_DIST") and callable(resources.use_cdn)
    from panel.reactive import Syncable

    assert list(inspect.signature(Syncable._server_event).parameters) == ["self", "doc", "event"]
    assert "state.execute(cb, schedule=True)" in inspect.getsource(Syncable._server_event) or (
        Syncable._server_event._privclust_locked
    )


def test_keep_stylesheets_local_rewrites_no_url_to_the_cdn():
    panel_compat.keep_stylesheets_local()
    panel_compat.keep_stylesheets_local()  # idempotent
    from panel import reactive

    assert resources.patch_stylesheet is reactive.patch_stylesheet
    assert resources.patch_stylesheet._privclust_local


def test_the_notebook_overrides_have_their_targets():
    import panel as pn

    assert "lato" in pn.template.EditableTemplate._resources["css"] or "lato" not in str(
        pn.template.EditableTemplate._resources
    )  # already removed here
    assert hasattr(resources, "DIST_DIR") and hasattr(resources, "LOCAL_DIST")


def test_a_text_pane_s_new_text_leaves_its_stylesheets_to_the_template():
    """Panel 1.9.4 re-sent a text pane's stylesheets with each new text (the Bootstrap stylesheet
    of a stand-alone component); the template's next pass, at every tab switch, took them out
    again, so the browser re-styled the pane twice."""
    from bokeh.document import Document
    from panel.pane.markup import HTMLBasePane

    assert list(inspect.signature(HTMLBasePane._update).parameters) == ["self", "ref", "model"]
    panel_compat.keep_text_pane_stylesheets()
    panel_compat.keep_text_pane_stylesheets()  # idempotent
    text = pn.pane.Markdown("a")
    tabs = pn.Tabs(("A", pn.Column(text)), ("B", pn.pane.Markdown("b")), dynamic=True)
    pn.template.BootstrapTemplate(main=[tabs]).server_doc(Document())
    model = next(iter(text._models.values()))[0]
    rendered = list(model.stylesheets)
    text.object = "new text"
    assert "new text" in model.text and list(model.stylesheets) == rendered
    tabs.active = 1
    assert list(model.stylesheets) == rendered


def test_a_holoviews_pane_with_a_design_can_be_hidden_and_shown_again():
    """The Plan tab's plot is hidden when a new data set clears the plan; with the page's design
    recorded on the HoloViews pane's inner Bokeh pane, hiding it raised "unexpected attribute
    'design' to figure" in the middle of loading the data set (a server traceback in the tour)."""
    import holoviews as hv
    from bokeh.document import Document

    import privclust.app.views  # noqa: F401 -- installs keep_design_off_bokeh_models

    given = pn.pane.HoloViews(hv.Curve([1, 2]), design=pn.theme.Material)  # at creation
    later = pn.pane.HoloViews(hv.Curve([1, 2]), visible=False)
    pn.Column(given, later).get_root(Document())
    later.param.update(object=hv.Curve([1, 3]), visible=True)
    later.design = pn.theme.Material
    for pane in (given, later):
        pane.param.update(object=None, visible=False)
        pane.param.update(object=hv.Curve([2, 3]), visible=True)
        assert pane.visible and pane.object is not None


class _LostClient:
    """A websocket handler whose connection Bokeh's keep-alive has already dropped."""

    close_code, close_reason = 1001, None

    def __init__(self):
        from bokeh.server.connection import ServerConnection

        self.lost = []
        self.connection = ServerConnection.__new__(ServerConnection)
        self.connection._session = None  # what client_lost -> detach_session leaves
        self.application = self

    def client_lost(self, connection):
        self.lost.append(connection)


def test_the_close_of_a_lost_client_is_no_traceback(monkeypatch):
    from bokeh.server.views.ws import WSHandler

    monkeypatch.setattr(WSHandler, "on_close", WSHandler.on_close)  # undone after the test
    handler = _LostClient()
    with pytest.raises(AssertionError):  # bokeh's own on_close (the guard is needed)
        inspect.unwrap(WSHandler.on_close)(handler)
    panel_compat.tolerate_lost_clients()
    panel_compat.tolerate_lost_clients()  # idempotent
    WSHandler.on_close(handler)  # no AssertionError
    assert handler.lost == []
    assert list(inspect.signature(WSHandler.on_close).parameters) == ["self"]


def _bundle_scripts(roots):
    from bokeh.resources import Resources
    from panel.io import server

    bundle = server.bundle_resources(roots, Resources(mode="server"))
    return " ".join(map(str, bundle.js_files))


def test_a_served_page_loads_no_mathjax_or_webgl_bundle_unless_a_model_asks_for_tex(
    monkeypatch,
):
    """Panel adds BokehJS's MathJax bundle to every page with a Markdown pane and always the
    WebGL one; the page uses neither. A Bokeh model with a TeX label still gets MathJax."""
    from bokeh.document import Document
    from bokeh.models import Div
    from panel.io import server

    monkeypatch.setattr(server, "bundle_resources", server.bundle_resources)  # undone after
    doc = Document()
    markdown = pn.pane.Markdown("ε = 1, $5 and $$x$$ as a user may type them").get_root(doc)
    assert "bokeh-mathjax" in _bundle_scripts(
        [markdown]
    )  # Panel's own choice: the override is needed
    assert "bokeh-gl" in _bundle_scripts([markdown])
    panel_compat.skip_unused_bundles()
    panel_compat.skip_unused_bundles()  # idempotent
    scripts = _bundle_scripts([markdown])
    assert "bokeh-mathjax" not in scripts and "bokeh-gl" not in scripts
    assert "bokeh.min.js" in scripts and "bokeh-widgets" in scripts and "bokeh-tables" in scripts
    tex = Div(text=r"$$\varepsilon$$")
    assert "bokeh-mathjax" in _bundle_scripts([markdown, tex])
    assert list(inspect.signature(server.bundle_resources).parameters)[:2] == ["roots", "resources"]


def _accepted_at_first_wakeup(waiting):
    """Connections a tornado accept handler takes on the first wake-up of its event loop, with
    ``waiting`` connections already queued on the listening socket."""
    import asyncio
    import socket

    from tornado import netutil

    async def run():
        (listener,) = netutil.bind_sockets(0, "127.0.0.1")
        port = listener.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(waiting)]
        accepted = []
        remove = netutil.add_accept_handler(listener, lambda conn, addr: accepted.append(conn))
        while not accepted:
            await asyncio.sleep(0)
        first = len(accepted)
        remove()
        for s in [*accepted, *clients, listener]:
            s.close()
        return first

    return asyncio.run(run())


def test_a_process_accepts_one_waiting_connection_per_wakeup(monkeypatch):
    """With ``--num-procs`` a class's pages, opened together, all went to the process that woke
    first (tornado took every waiting connection at once); after the override it takes one, and
    a process busy building a page leaves the next to another."""
    from tornado import netutil

    monkeypatch.setattr(netutil, "_DEFAULT_BACKLOG", netutil._DEFAULT_BACKLOG)
    assert "range(_DEFAULT_BACKLOG)" in inspect.getsource(netutil.add_accept_handler)
    assert _accepted_at_first_wakeup(5) == 5  # tornado's own: all at once
    panel_compat.accept_one_connection_per_wakeup()
    assert _accepted_at_first_wakeup(5) == 1
