"""The served page: a thin Panel template around the views of one session's :class:`Lab`.

``panel serve app/page.py`` (what ``privclust serve`` runs) executes this file once per browser
session, so every session gets its own models. ``create_app()`` returns the page for notebooks
and tests. The template is ``BootstrapTemplate``, whose resources are all served by Panel itself
(FastListTemplate, MaterialTemplate and VanillaTemplate fetch Google Fonts on every load).

Server options worth setting in production (see README): ``--allow-websocket-origin HOST:PORT``
(exact hosts), ``--basic-auth FILE --cookie-secret SECRET``, ``--address 127.0.0.1`` behind TLS,
``--check-unused-sessions`` / ``--unused-session-lifetime``; uploads are capped by
``PRIVCLUST_MAX_UPLOAD_MB`` (chunked FileDropper, re-checked on the server).
"""
import logging
import queue
import threading
from importlib import resources

import holoviews as hv
import panel as pn

from privclust.app import session_hooks
from privclust.app.gibbs import GibbsView
from privclust.app.models import Lab
from privclust.app.plan import PlanView
from privclust.app.tradeoff import TradeoffView
from privclust.app.views import (Banner, ClustersView, CoclustersView, DataPanel, DataPreview, LedgerPanel,
                    ReportView, SettingsPanel, SubspacesView)

log = logging.getLogger(__name__)

DEBOUNCE_MS = 250


class SessionWorker:
    """One daemon thread per session that runs fits one at a time, off the server's IO loop
    (a fit on the loop would freeze every session's page). A job submitted with a ``kind``
    replaces a queued job of the same kind that has not started yet (the newest slider value
    wins); Release jobs are never dropped. :meth:`close` (on session end) stops the thread.
    """

    def __init__(self):
        self._queue = queue.Queue()
        self._latest = {}
        self._thread = None
        self._closed = False
        self._lock = threading.Lock()

    def __call__(self, fn, kind=None):
        self.submit(fn, kind)

    def submit(self, fn, kind=None):
        with self._lock:
            if self._closed:
                return
            gen = None
            if kind is not None:
                gen = self._latest[kind] = self._latest.get(kind, 0) + 1
            self._queue.put((kind, gen, fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="privclust-session-worker")
                self._thread.start()

    def _loop(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            kind, gen, fn = item
            if self._closed:
                return  # the session ended: queued fits are dropped, not run
            if kind is not None and self._latest.get(kind) != gen:
                continue  # superseded before it started
            try:
                fn()
            except Exception:  # the models report their own failures; never kill the worker
                log.warning("session job failed", exc_info=True)

    @property
    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    def close(self, *args):
        with self._lock:
            self._closed = True
            self._queue.put(None)

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)


class Debouncer:
    """Runs the last requested call once no new request came for ``delay_ms`` (per session),
    on the session's :class:`SessionWorker` when one is given.

    In a server session, requests made before the page has loaded in the browser are held until
    :meth:`on_load` (registered with ``pn.state.onload``): a fit that finished on the worker before
    then updated models the browser never received, and the first result never appeared (seen in
    about half of the browser-test runs).
    """

    def __init__(self, delay_ms=DEBOUNCE_MS, worker=None):
        self.delay_ms = delay_ms
        self.worker = worker
        self._pending = None
        self._held = None
        self._loaded = not session_hooks.in_session()

    def __call__(self, fn):
        if not self._loaded:
            self._held = fn
            return
        run = fn if self.worker is None else (lambda: self.worker.submit(fn, kind="demo"))
        if not session_hooks.in_session():
            run()
            return
        if self._pending is not None:
            self._pending.stop()

        def fire():
            self._pending = None
            run()
        self._pending = pn.state.add_periodic_callback(fire, period=self.delay_ms, count=1)

    def on_load(self):
        self._loaded = True
        held, self._held = self._held, None
        if held is not None:
            self(held)

    def stop(self, *args):
        if self._pending is not None:
            self._pending.stop()
            self._pending = None


def _asset(name):
    return resources.files("privclust.assets").joinpath(name)


def create_app(lab=None, **lab_params):
    """Build the whole page (a template) for one session; ``lab`` defaults to a fresh Lab."""
    hv.extension("bokeh", logo=False)
    pn.extension("filedropper", throttled=True, notifications=False)
    worker = None
    if lab is None:
        worker = SessionWorker()
        debounce = Debouncer(worker=worker)
        lab = Lab(schedule=debounce, worker=worker, **lab_params)
        session_hooks.on_session_end(debounce.stop, worker.close)
        if session_hooks.in_session():
            pn.state.onload(debounce.on_load)
    views = [("Data", DataPreview(lab=lab)), ("Clusters", ClustersView(lab=lab)),
             ("Subspaces", SubspacesView(lab=lab)), ("Co-clusters", CoclustersView(lab=lab)),
             ("Gibbs", GibbsView(lab=lab)), ("Plan", PlanView(lab=lab)),
             ("Trade-off", TradeoffView(lab=lab)),
             ("Report", ReportView(lab=lab))]
    tabs = pn.Tabs(*views, active=1, dynamic=True, sizing_mode="stretch_width")
    sidebar = [DataPanel(lab=lab), SettingsPanel(lab=lab), LedgerPanel(lab=lab)]
    template = pn.template.BootstrapTemplate(
        title="privclust — differentially private clustering lab",
        logo=str(_asset("logo.svg")), favicon=str(_asset("logo.svg")),
        header_background="#1f3a5f", sidebar_width=380,
        sidebar=sidebar,
        main=[Banner(lab=lab), tabs],
        raw_css=[_asset("privclust.css").read_text()],
    )
    template.lab = lab
    template.worker = worker
    template.views = {type(v).__name__: v for v in sidebar + [view for _, view in views]}
    return template


def keep_stylesheets_local():
    """Served page only: never let Panel rewrite a stylesheet URL to its CDN.

    Measured (panel 1.9.4, app/tour.py): with dynamic tabs, a component updated while its tab
    is hidden (the Gibbs info line and traces, updated by the sampler's periodic callback) has
    no document, so Panel patches its shared stylesheets with ``dist_url = CDN_DIST``; the next
    render then makes the browser fetch ``cdn.holoviz.org/.../loading.css`` and
    ``markdown.css``, telling a third party who is looking. With resources served locally
    (``use_cdn()`` false) such a rewrite is skipped; the stylesheets keep their local URLs.
    Process-wide and idempotent; notebooks (which load from the CDN) never call it.
    """
    from panel import reactive
    from panel.io import resources as res
    if getattr(res.patch_stylesheet, "_privclust_local", False):
        return
    original = res.patch_stylesheet

    def patch_stylesheet(stylesheet, dist_url):
        if dist_url == res.CDN_DIST and not res.use_cdn():
            return None
        return original(stylesheet, dist_url)

    patch_stylesheet._privclust_local = True
    res.patch_stylesheet = reactive.patch_stylesheet = patch_stylesheet


if __name__.startswith("bokeh"):  # executed per session by `panel serve`
    keep_stylesheets_local()
    create_app().servable(title="privclust")
