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
from importlib import resources

import holoviews as hv
import panel as pn

from privclust.app.gibbs import GibbsView
from privclust.app.models import Lab
from privclust.app.tradeoff import TradeoffView
from privclust.app.views import (Banner, ClustersView, CoclustersView, DataPanel, DataPreview, LedgerPanel,
                    ReportView, SettingsPanel, SubspacesView)

DEBOUNCE_MS = 250


class Debouncer:
    """Runs the last requested call once no new request came for ``delay_ms`` (per session)."""

    def __init__(self, delay_ms=DEBOUNCE_MS):
        self.delay_ms = delay_ms
        self._pending = None

    def __call__(self, fn):
        if pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            fn()
            return
        if self._pending is not None:
            self._pending.stop()

        def fire():
            self._pending = None
            fn()
        self._pending = pn.state.add_periodic_callback(fire, period=self.delay_ms, count=1)


def _asset(name):
    return resources.files("privclust.assets").joinpath(name)


def create_app(lab=None, **lab_params):
    """Build the whole page (a template) for one session; ``lab`` defaults to a fresh Lab."""
    hv.extension("bokeh", logo=False)
    pn.extension("filedropper", throttled=True, notifications=False)
    lab = lab or Lab(schedule=Debouncer(), **lab_params)
    views = [("Data", DataPreview(lab=lab)), ("Clusters", ClustersView(lab=lab)),
             ("Subspaces", SubspacesView(lab=lab)), ("Co-clusters", CoclustersView(lab=lab)),
             ("Gibbs", GibbsView(lab=lab)), ("Trade-off", TradeoffView(lab=lab)),
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
    template.views = {type(v).__name__: v for v in sidebar + [view for _, view in views]}
    return template


if __name__.startswith("bokeh"):  # executed per session by `panel serve`
    create_app().servable(title="privclust")
