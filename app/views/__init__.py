"""The page's views, one module per tab plus the sidebar and the banner; each is a
``pn.viewable.Viewer`` of one session's :class:`~privclust.app.state.Lab`."""

from ..server.panel_compat import keep_design_off_bokeh_models
from .banner import Banner
from .clusters import ClustersView
from .coclusters import CoclustersView
from .data import DataPreview
from .gibbs import GibbsView
from .metrics import MetricsTable
from .plan import PlanView
from .releases import ReleasesView
from .report import ReportView
from .sidebar import DataPanel, LedgerPanel, SettingsPanel
from .subspaces import SubspacesView
from .tradeoff import TradeoffView

keep_design_off_bokeh_models()  # the views' Bokeh panes, and HoloViews panes' inner ones

__all__ = [
    "Banner",
    "ClustersView",
    "CoclustersView",
    "DataPanel",
    "DataPreview",
    "GibbsView",
    "LedgerPanel",
    "MetricsTable",
    "PlanView",
    "ReleasesView",
    "ReportView",
    "SettingsPanel",
    "SubspacesView",
    "TradeoffView",
]
