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

from privclust.app.server import logs, panel_compat
from privclust.app.server.worker import session_lab
from privclust.app.views import (Banner, ClustersView, CoclustersView, DataPanel, DataPreview,
                                 GibbsView, LedgerPanel, PlanView, ReportView, SettingsPanel,
                                 SubspacesView, TradeoffView)


def _asset(name):
    return resources.files("privclust.assets").joinpath(name)


def create_app(lab=None, **lab_params):
    """Build the whole page (a template) for one session; ``lab`` defaults to a fresh Lab."""
    hv.extension("bokeh", logo=False)
    pn.extension("filedropper", throttled=True, notifications=False)
    worker = None
    if lab is None:
        lab, worker = session_lab(**lab_params)
    views = [("Data", DataPreview(lab=lab)), ("Clusters", ClustersView(lab=lab)),
             ("Subspaces", SubspacesView(lab=lab)), ("Co-clusters", CoclustersView(lab=lab)),
             ("Gibbs", GibbsView(lab=lab)), ("Plan", PlanView(lab=lab)),
             ("Trade-off", TradeoffView(lab=lab)),
             ("Report", ReportView(lab=lab))]
    # the result views show a busy state while a result is computing; the Gibbs, Plan and
    # Trade-off tabs have their own progress bars and controls (Start must stay clickable)
    busy = {"Data", "Clusters", "Subspaces", "Co-clusters", "Report"}
    tabs = pn.Tabs(*((name, pn.Column(view, loading=lab.param.running,
                                      sizing_mode="stretch_width") if name in busy else view)
                     for name, view in views),
                   active=1, dynamic=True, sizing_mode="stretch_width")
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


if __name__.startswith("bokeh"):  # executed per session by `panel serve`
    # an estimator's PrivacyWarning is shown on the page (the guarantee's warnings); in the
    # server log it is one line, not a warning with its source context
    logs.warnings_as_one_line()
    panel_compat.keep_stylesheets_local()
    panel_compat.keep_text_pane_stylesheets()
    create_app().servable(title="privclust")
