"""Every override of Panel internals the dashboard needs, in one place.

Each was written for panel ``PANEL_VERSION`` (with bokeh 3.9) and reaches into a private member
that may change in another release; ``tests/app/test_panel_compat.py`` checks that the installed
Panel still has each of them and fails when the version moves, so whoever upgrades Panel re-reads
this module first.

- :class:`BoundedFileDropper`: ``FileDropper._process_event`` (the server-side upload limit).
- :func:`keep_design_off_bokeh_models`: ``pane.Bokeh._track_overrides`` (a design forwarded to
  a Bokeh model).
- :func:`keep_stylesheets_local`: ``panel.io.resources.patch_stylesheet`` (no CDN stylesheet URL
  on the served page).
- :func:`keep_text_pane_stylesheets`: ``pane.markup.HTMLBasePane._update`` (a text pane's new
  text leaves its stylesheets alone).
- :func:`lock_deferred_events`: ``reactive.Syncable._server_event`` (a click deferred behind
  pending changes runs with the document lock).
- :func:`inline_updated_stylesheets`: the same function in a notebook kernel (stylesheets of a
  pane's later updates as ``data:`` URLs instead of cdn.holoviz.org; holoviz/panel#7073).
- :func:`no_web_font`: ``template.EditableTemplate._resources`` (a served notebook's page asks
  Google for its web font).
- :func:`tolerate_lost_clients`: bokeh's ``WSHandler.on_close`` (a page whose keep-alive ping
  already found its socket closed raised an AssertionError when the close arrived).
- :func:`skip_unused_bundles`: ``panel.io.server.bundle_resources`` (every served page loaded
  BokehJS's MathJax and WebGL bundles, which it never uses).
- :func:`accept_one_connection_per_wakeup`: tornado's ``netutil._DEFAULT_BACKLOG`` (with
  ``--num-procs``, a class's pages opened together all went to one process); not Panel's, but
  the same kind of reach into the server's stack.
"""

import base64
import functools
import logging
import os

import panel as pn

PANEL_VERSION = "1.9"


class BoundedFileDropper(pn.widgets.FileDropper):
    """A ``FileDropper`` whose size limit holds on the server.

    Panel's ``FileDropper`` checks ``max_file_size`` only in the browser (FilePond) and buffers
    every chunk it is sent, so a client that skips that check could fill the server's memory.
    Here the bytes of all unfinished uploads together may not exceed ``max_bytes``: the first
    chunk over the limit discards that file's buffer and calls ``on_reject(name, message)``.
    """

    def __init__(self, max_bytes, on_reject=None, **params):
        super().__init__(**params)
        self._max_bytes = int(max_bytes)
        self._on_reject = on_reject
        self._sizes = {}
        self._rejected = set()

    def _process_event(self, event):
        data = event.data if isinstance(event.data, dict) else {}
        if event.event_name != "upload_event":
            return super()._process_event(event)
        name = str(data.get("name"))
        chunk = data.get("data")
        if data.get("chunk") == 1:
            self._rejected.discard(name)
            self._sizes[name] = 0
        elif name in self._rejected or name not in self._file_buffer:
            return None  # the rest of a refused file, or a chunk without a first chunk
        self._sizes[name] = self._sizes.get(name, 0) + (
            len(chunk) if isinstance(chunk, (bytes, bytearray, memoryview, str)) else 0
        )
        if sum(self._sizes.values()) > self._max_bytes:
            self._file_buffer.pop(name, None)
            self._sizes.pop(name, None)
            self._rejected.add(name)
            if self._on_reject is not None:
                self._on_reject(
                    name,
                    f"{os.path.basename(name)}: the file is too large for the "
                    f"server limit of {self._max_bytes / 2**20:g} MB",
                )
            return None
        if data.get("chunk") == data.get("total_chunks"):
            self._sizes.pop(name, None)
        return super()._process_event(event)


def keep_design_off_bokeh_models():
    """Every Bokeh pane keeps Panel's ``design`` to itself, Panel's own inner panes of a
    HoloViews pane included. Panel 1.9.4's Bokeh pane records a changed ``design`` among the
    layout properties it forwards to its Bokeh model, which has no such property: the next
    forwarded change (a HoloViews pane hidden or shown, a served notebook's template giving
    every output its design) raised AttributeError ("unexpected attribute 'design' to figure")
    in the middle of whatever changed it (the Plan tab's plot hidden while a new data set is
    loaded). Installed when ``privclust.app.views`` is imported; idempotent."""
    bokeh = pn.pane.Bokeh
    if getattr(bokeh._track_overrides, "_privclust_design", False):
        return
    init, track = bokeh.__init__, bokeh._track_overrides

    def __init__(self, object=None, **params):
        init(self, object, **params)
        self._overrides = [p for p in self._overrides if p != "design"]  # given at creation

    def track_overrides(self, *events):
        track(self, *(e for e in events if e.name != "design"))

    track_overrides._privclust_design = True
    bokeh.__init__, bokeh._track_overrides = __init__, track_overrides


def keep_stylesheets_local():
    """Served page only: every stylesheet URL points at this server, never at Panel's CDN.

    Panel's components declare their stylesheets as CDN URLs and rewrite them with the
    document's ``dist_url`` (set by ``server_html_page_for_session`` when the page's HTML is
    rendered); where no such document is known, the rewrite is asked for with ``dist_url =
    CDN_DIST`` and the CDN URL stays (and a local URL would be turned back into a CDN one). Two
    such cases:

    - with dynamic tabs, a component updated while its tab is hidden (the Gibbs info line,
      updated by the sampler's periodic callback) has no document;
    - a page whose websocket connects later than ``--unused-session-lifetime`` after its HTML
      (under load) finds its session discarded; Bokeh then builds a *new* session for the
      socket, whose document never went through the HTML handler and has no ``dist_url``, so
      every stylesheet of that page would come from the CDN.

    With resources served locally (``use_cdn()`` false) a rewrite asked for with ``CDN_DIST``
    goes to the server's own ``dist`` path instead (:func:`panel.io.resources.get_dist_path`).
    Process-wide and idempotent; notebooks (which load from the CDN) never call it.
    """
    from panel import reactive
    from panel.io import resources as res

    if getattr(res.patch_stylesheet, "_privclust_local", False):
        return
    original = res.patch_stylesheet

    def patch_stylesheet(stylesheet, dist_url):
        if dist_url == res.CDN_DIST and not res.use_cdn():
            dist_url = res.get_dist_path(cdn=False)
        return original(stylesheet, dist_url)

    patch_stylesheet._privclust_local = True
    res.patch_stylesheet = reactive.patch_stylesheet = patch_stylesheet


def keep_text_pane_stylesheets():
    """Served page only: a text pane (HTML, Markdown, Alert...) whose ``object`` changes sends its
    new text, not a new list of stylesheets.

    Panel 1.9.4's ``HTMLBasePane._update`` re-sends every property of the pane on a new
    ``object``, stylesheets included, computed as for a component outside a template (the whole
    Bootstrap stylesheet added to its shadow root); the template's next design pass, run on every
    tab switch for every rendered tab, takes them out again. The browser would re-style each such
    pane twice, which makes tab switches slow while a pane updates often (the Gibbs sampler's
    info line, updated every poll). A pane's stylesheets change through its ``stylesheets``
    parameter, which this leaves alone. Process-wide, idempotent.
    """
    from panel.pane.markup import HTMLBasePane

    original = HTMLBasePane._update
    if getattr(original, "_privclust_keep_stylesheets", False):
        return

    def _update(self, ref, model):
        get_properties = self._get_properties

        def without_stylesheets(doc):
            props = get_properties(doc)
            props.pop("stylesheets", None)
            return props

        self._get_properties = without_stylesheets
        try:
            original(self, ref, model)
        finally:
            del self._get_properties

    _update._privclust_keep_stylesheets = True
    HTMLBasePane._update = _update


def tolerate_lost_clients():
    """Served page only: the close of a websocket whose connection Bokeh has already dropped is
    logged, not raised.

    Bokeh 3.9's keep-alive job pings every page; a ping that finds the socket closed calls
    ``client_lost``, which detaches the connection from its session. When tornado then reports
    the close, ``WSHandler.on_close`` asks that connection for its session and Bokeh's own
    ``assert self._session is not None`` fails: an "Uncaught exception GET /page/ws" traceback
    in the server log (seen under the class load, a page closing while the server was busy).
    Nothing is lost: the client was already counted as gone. Process-wide, idempotent.
    """
    from bokeh.server.views.ws import WSHandler

    original = WSHandler.on_close
    if getattr(original, "_privclust_lost_clients", False):
        return

    @functools.wraps(original)
    def on_close(self):
        connection = getattr(self, "connection", None)
        if connection is not None and getattr(connection, "_session", True) is None:
            # bokeh.server.views.ws's logger, as bokeh logs every close
            log = logging.getLogger(WSHandler.__module__)
            log.info("WebSocket connection closed after its client was lost")
            return
        original(self)

    on_close._privclust_lost_clients = True
    WSHandler.on_close = on_close


def skip_unused_bundles():
    """Served page only: the page loads neither BokehJS's MathJax bundle (1.8 MB) nor its WebGL
    bundle (0.2 MB), about 40 % of the JavaScript every new page parses and compiles.

    Panel 1.9.4 adds ``bokeh-mathjax`` to any page holding one of its HTML models (every
    Markdown pane), whether or not a text holds TeX, and always adds ``bokeh-gl``. The page's
    texts hold no TeX, and its plots draw on a canvas (the ``plots.CANVAS`` hook; a plot that
    asks for WebGL without the bundle is drawn on a canvas by BokehJS). Without the MathJax
    bundle, BokehJS's MathJax provider finds no module and every text, a user's column or file
    name included, shows as plain text. The bundle is kept when a Bokeh model of the page asks
    for TeX by Bokeh's own test (a TeX axis label). Measured with ``benchmarks/app/page_cost.py``
    (2 x 4 pages, interleaved): CPU per page up to its first result 3.50 -> 3.34 s.
    Process-wide, idempotent.
    """
    from bokeh.embed.bundle import _use_mathjax
    from panel.io import server

    original = server.bundle_resources
    if getattr(original, "_privclust_bundles", False):
        return

    @functools.wraps(original)
    def bundle_resources(roots, resources, *args, **kwargs):
        kwargs.setdefault("enable_mathjax", bool(roots) and _use_mathjax(roots))
        if resources is not None and "bokeh-gl" in resources.components:
            resources = resources.clone(
                components=[c for c in resources.components if c != "bokeh-gl"]
            )
        return original(roots, resources, *args, **kwargs)

    bundle_resources._privclust_bundles = True
    server.bundle_resources = bundle_resources


def lock_deferred_events():
    """Served page only: a widget event (a button click) that Panel defers because the page has
    other changes pending is handled with the session's document lock held.

    Panel 1.9.4's ``Syncable._server_event`` defers such an event as a coroutine through
    ``state.execute``, which runs it on the IO loop *without* the document lock; the click's
    handlers then change Bokeh models, Bokeh raises and the click is lost (a Release, a
    Re-open or a Gibbs Start pressed while other changes of the page were pending). Deferred
    through the document's next-tick callbacks, Bokeh runs it under the lock. Process-wide,
    idempotent.
    """
    from functools import partial

    from panel.io.state import state
    from panel.reactive import Syncable

    if getattr(Syncable._server_event, "_privclust_locked", False):
        return

    def _server_event(self, doc, event):
        if doc.session_context and (not state._unblocked(doc) or doc in state._change_callbacks):
            doc.add_next_tick_callback(partial(self._event_coroutine, doc, event))
        else:
            self._comm_event(doc, event)

    _server_event._privclust_locked = True
    Syncable._server_event = _server_event


def inline_updated_stylesheets():
    """In a kernel: a stylesheet Panel would point at its CDN (no ``dist_url`` is known for an
    output's document), or at its server path, becomes a ``data:`` URL holding the same file from Panel's installed
    ``dist`` folder. Panel 1.9.4 calls ``patch_stylesheet`` from ``panel.reactive`` (imported
    there by name, in ``Syncable._get_properties`` and ``_update_model``) and from
    ``panel.io.resources`` (looked up at call time by ``panel.theme.base``); both names are
    replaced, and nothing is replaced on a Panel without the function."""
    from panel import reactive
    from panel.io import resources

    original = getattr(resources, "patch_stylesheet", None)
    if original is None or getattr(original, "_privclust_inline", False):
        return

    def patch_stylesheet(stylesheet, dist_url):
        try:
            url = stylesheet.url
        except Exception:  # noqa: BLE001 -- a stylesheet without a readable url is left as it is
            url = None
        if dist_url == resources.CDN_DIST and isinstance(url, str):
            for prefix in (resources.CDN_DIST, resources.LOCAL_DIST):
                if not url.startswith(prefix):
                    continue
                path = resources.DIST_DIR / url[len(prefix) :].split("?")[0]
                if path.is_file():
                    data = base64.b64encode(path.read_bytes()).decode("ascii")
                    stylesheet.url = f"data:text/css;base64,{data}"
                    return None
        return original(stylesheet, dist_url)

    patch_stylesheet._privclust_inline = True
    resources.patch_stylesheet = reactive.patch_stylesheet = patch_stylesheet


def no_web_font():
    """Served notebooks: the notebook page template (EditableTemplate) requests the Lato font
    from Google; the page renders with the browser's own fonts instead."""
    pn.template.EditableTemplate._resources["css"].pop("lato", None)


def accept_one_connection_per_wakeup():
    """Each server process accepts one waiting connection each time its event loop finds the
    listening socket readable, not up to 128.

    With ``--num-procs`` every process listens on one shared socket, and tornado's accept
    handler takes all pending connections at once (``netutil.add_accept_handler`` loops up to
    ``_DEFAULT_BACKLOG`` times): a class's pages, opened together, were all accepted by the
    process that woke first and built one after another on its one thread while the other
    process idled. Taking one at a time, a process busy building a page leaves the next
    connection to a free one. Measured with ``benchmarks/app/load.py --protocol wire -- --num-procs
    2`` (10 sliding users + 2 samplers): first result p95 12.3 s before, 8.1-9.7 s in three runs
    after; with twelve Chromium pages and two processes no worse (2 interleaved runs each way).
    A single-process server gains nothing to balance and accepts a browser's many connections
    one loop turn (possibly a page build) apart, so the warm-up calls this in ``--num-procs``
    workers only (12 Chromium pages, one process, first result p95 21.4 / 25.0 s without,
    25.5 / 27.3 s with). The listen backlog itself is set when the socket is bound, before this
    runs. Process-wide, idempotent.
    """
    from tornado import netutil

    netutil._DEFAULT_BACKLOG = 1
