"""The served page: a Panel template around the views of one session's :class:`Lab`.

``panel serve app/page.py`` (what ``privclust serve`` runs, see :func:`privclust.app.cli.serve_command`)
executes this file once per browser session, so every session gets its own models;
``create_app()`` returns the page for notebooks and tests. The template is ``BootstrapTemplate``,
whose resources are all served by Panel itself (FastListTemplate, MaterialTemplate and
VanillaTemplate fetch Google Fonts on every load).
"""

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
    is built when the tab is opened (:func:`_lazy_tabs`): building
    all of them was about a third of the server's work per new session (measured with py-spy
    while twelve pages opened at once, benchmarks/app/load.py), and a class opens its pages
    together.
    Outside a session (notebooks, tests) every view is built at once.
    """
    if not (session_hooks.in_session() and "bokeh" in hv.Store.renderers):
        # once per server process (the warm-up's page): again in every session it only rebuilt
        # HoloViews' option builders, the same each time (3.5 % of a new page's server work,
        # py-spy); in a notebook every call loads the notebook's extension, so it stays
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
    """Fill each empty tab with its view (``build(name, cls)``) when it is first opened: a new
    page costs the server little while a class opens its pages.

    Hidden tabs are no longer built in the background once the page has loaded: every
    session's builds ran on the server's one IO thread and competed with the class's first
    results and slider steps (a sixth of that thread's time while six pages slid, in a py-spy
    profile of benchmarks/app/load.py), and a built hidden view re-computed its plots for
    every new result although nothing showed them.
    """

    def fill(index):
        holder = tabs.objects[index]
        if not holder.objects:
            holder.objects = [build(*views[index])]

    tabs.param.watch(lambda event: fill(event.new), "active")


if __name__.startswith("bokeh"):  # executed per session by `panel serve`
    # an estimator's PrivacyWarning is shown on the page (the guarantee's warnings); in the
    # server log it is one line, not a warning with its source context
    logs.warnings_as_one_line()
    logs.closed_pages_as_one_line()
    panel_compat.keep_stylesheets_local()
    panel_compat.keep_text_pane_stylesheets()
    panel_compat.lock_deferred_events()
    panel_compat.tolerate_lost_clients()
    panel_compat.skip_unused_bundles()
    # one index of the document's models when the page is built, not one per root the template
    # adds (each walked the whole graph: server CPU per new page 1.18 -> 0.97 s in an A/B of
    # sessions opened one after another, as benchmarks/app/server_per_page.py does)
    with pn.state.curdoc.models.freeze():
        create_app().servable(title="privclust")
