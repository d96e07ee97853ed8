"""privclust.app: the Panel dashboard (param models, Viewer views, the served page).

``privclust serve`` / ``panel serve app/page.py`` serves it. In a notebook::

    import panel as pn; pn.extension("filedropper")
    from privclust.app import Lab, ClustersView, GibbsView
    lab = Lab()            # one session's state: dataset, settings, ledger, runs
    ClustersView(lab=lab)  # any view displays inline; create_app(lab) is the whole page
"""

from importlib import import_module

_EXPORTS = {
    "create_app": "page",
    "Lab": "state",
    "DataModel": "state",
    "SettingsModel": "state",
    "LedgerModel": "state",
    "Banner": "views",
    "DataPanel": "views",
    "DataPreview": "views",
    "SettingsPanel": "views",
    "LedgerPanel": "views",
    "ClustersView": "views",
    "SubspacesView": "views",
    "CoclustersView": "views",
    "ReportView": "views",
    "GibbsView": "views",
    "TradeoffView": "views",
    "PlanView": "views",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__():
    return __all__
