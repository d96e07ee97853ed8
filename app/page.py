"""The served page: a Panel template around the views of one session's :class:`Lab`.

``panel serve app/page.py`` (what ``privclust serve`` runs, see :func:`privclust.app.cli.serve_command`)
executes this file once per browser session, so every session gets its own models;
``create_app()`` returns the page for notebooks and tests. The template is ``BootstrapTemplate``,
whose resources are all served by Panel itself (FastListTemplate, MaterialTemplate and
VanillaTemplate fetch Google Fonts on every load).
"""

import time
from importlib import resources

import holoviews as hv
import panel as pn

from privclust.app.server import connection, logs, panel_compat, session_hooks
from privclust.app.server.worker import session_lab
from privclust.app.state import DataModel, browsers
from privclust.app.views import (
    Banner,
    ClustersView,
    CoclustersView,
    DataPanel,
    DataPreview,
    GibbsView,
    LedgerPanel,
    PlanView,
    ReleasesView,
    ReportView,
    SettingsPanel,
    SubspacesView,
    TradeoffView,
    page_scripts,
)


def _asset(name):
    return resources.files("privclust.assets").joinpath(name)


def create_app(lab=None, **lab_params):
    """Build the whole page (a template) for one session; ``lab`` defaults to a fresh Lab.

    In a server session only the first tab's view is built with the page; every other tab's view
    is built after the page has loaded or when the tab is opened (:func:`_lazy_tabs`): building
    all of them was about a third of the server's work per new session (measured with py-spy
    while twelve pages opened at once, benchmarks/app/load.py), and a class opens its pages
    together.
    Outside a session (notebooks, tests) every view is built at once.
    """
    hv.extension("bokeh", logo=False)
    pn.extension("filedropper", throttled=True, notifications=False)
    worker = None
    if lab is None:
        if session_hooks.in_session() and "data" not in lab_params:
            lab_params["data"] = _browser_data()
        lab, worker = session_lab(**lab_params)
    views = [
        ("Data", DataPreview),
        ("Clusters", ClustersView),
        ("Subspaces", SubspacesView),
        ("Co-clusters", CoclustersView),
        ("Gibbs", GibbsView),
        ("Plan", PlanView),
        ("Trade-off", TradeoffView),
        ("Report", ReportView),
        ("Releases", ReleasesView),
    ]
    built = {}

    def build(name, cls):
        view = built[cls.__name__] = cls(lab=lab)
        # the result views show a busy state while a result is computing; the Gibbs, Plan and
        # Trade-off tabs have their own progress bars and controls (Start must stay clickable)
        if name in BUSY:
            return pn.Column(view, loading=lab.param.running, sizing_mode="stretch_width")
        return view

    active = 1
    lazy = session_hooks.in_session()
    tabs = pn.Tabs(
        *(
            (
                name,
                pn.Column(sizing_mode="stretch_width")
                if lazy and i != active
                else build(name, cls),
            )
            for i, (name, cls) in enumerate(views)
        ),
        active=active,
        dynamic=True,
        sizing_mode="stretch_width",
    )
    if lazy:
        _lazy_tabs(tabs, views, build)
    sidebar = [DataPanel(lab=lab), SettingsPanel(lab=lab), LedgerPanel(lab=lab)]
    template = pn.template.BootstrapTemplate(
        title="privclust — differentially private clustering lab",
        logo=str(_asset("logo.svg")),
        favicon=str(_asset("logo.svg")),
        header_background="#1f3a5f",
        sidebar_width=380,
        # no header spinner: Panel syncs the template's spinner of *every* live session with
        # the server's busy state, which each session's periodic callbacks flip, so the cost
        # grew with the square of the sessions (a third of the server's main thread with twelve
        # pages open); each result view shows its own loading state instead
        busy_indicator=None,
        sidebar=sidebar,
        main=[Banner(lab=lab), tabs, connection.LostNotice()],
        raw_css=[_asset("privclust.css").read_text()],
    )
    template.lab = lab
    template.worker = worker
    built.update((type(v).__name__, v) for v in sidebar)
    template.views = built  # views of tabs not opened yet are added when they are built
    return template


def _browser_data():
    """The session's DataModel, restoring this browser's data choice and listing its uploads
    (found by the per-browser cookie, :mod:`privclust.app.state.browsers`); the page's scripts
    are installed here too (a new token is set as the cookie)."""
    token, record, known = browsers.SHARED.session(pn.state.cookies.get(browsers.COOKIE))
    page_scripts.install(pn.state.curdoc, None if known else (browsers.COOKIE, token))
    return DataModel(browser=record)


BUSY = {"Data", "Clusters", "Subspaces", "Co-clusters", "Report", "Releases"}


def _lazy_tabs(tabs, views, build):
    """Fill each empty tab with its view (``build(name, cls)``) when it is first opened, or in
    the background once the page has loaded (one view every ``PREBUILD_MS`` while the server is
    idle; hidden tabs are not rendered, so nothing is sent), whichever comes first: a new page
    costs the server little while a class opens its pages, and a tab is usually built before it
    is opened.

    The server is taken as busy when this background callback runs more than ``BUSY_LATE_S``
    late (the IO loop was doing other work): while twelve pages open and slide at once, the
    prebuilds of every page competed with their first results and slider moves for the one
    main thread (a quarter of the server's time in the profile of benchmarks/app/load.py);
    they now wait until the class's requests are served.
    """

    def fill(index):
        holder = tabs.objects[index]
        if not holder.objects:
            holder.objects = [build(*views[index])]

    tabs.param.watch(lambda event: fill(event.new), "active")
    pending = [i for i, holder in enumerate(tabs.objects) if not holder.objects]
    callback = []
    last = [time.monotonic()]

    def prebuild():
        now = time.monotonic()
        late, last[0] = now - last[0] - PREBUILD_MS / 1000, now
        if late > BUSY_LATE_S:
            return  # the server is busy: try again at the next tick
        while pending and tabs.objects[pending[0]].objects:
            pending.pop(0)  # opened (and built) since
        if pending:
            fill(pending.pop(0))
            last[0] = time.monotonic()  # the build's own time is not lateness
        elif callback:
            callback.pop().stop()

    def start():
        last[0] = time.monotonic()
        callback.append(pn.state.add_periodic_callback(prebuild, period=PREBUILD_MS))

    pn.state.onload(start)


PREBUILD_MS = 1000
BUSY_LATE_S = 0.2


if __name__.startswith("bokeh"):  # executed per session by `panel serve`
    # an estimator's PrivacyWarning is shown on the page (the guarantee's warnings); in the
    # server log it is one line, not a warning with its source context
    logs.warnings_as_one_line()
    panel_compat.keep_stylesheets_local()
    panel_compat.keep_text_pane_stylesheets()
    panel_compat.lock_deferred_events()
    create_app().servable(title="privclust")
