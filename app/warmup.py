"""``panel serve --setup`` hook of the dashboard (``privclust serve`` passes it).

Starts a daemon thread that imports HoloViews, Bokeh's plotting backend, the app and every
estimator class the page offers (scikit-learn, scipy, privclust.core), so that the first browser
session does not pay for them (issue 7: first page <= 2 s) while the server still answers at once
(server ready <= 3 s). A session that arrives before the imports finish waits on Python's import
lock for the rest of them only. It creates no session state and touches no data.
"""
import logging
import threading

log = logging.getLogger(__name__)


def warm_up():
    try:
        import holoviews as hv

        import privclust.app.gibbs  # noqa: F401
        import privclust.app.page  # noqa: F401  (panel, holoviews, the views)
        import privclust.app.tradeoff  # noqa: F401
        import privclust.core.data  # noqa: F401  (the preset generators)
        from privclust.app import algorithms
        hv.extension("bokeh", logo=False)
        algorithms.status()  # imports each estimator's module (failures: just unavailable)
    except Exception:  # warming up is an optimisation: never stop the server for it
        log.warning("privclust warm-up failed", exc_info=True)


if __name__.startswith("bokeh") or __name__ == "__main__":
    threading.Thread(target=warm_up, daemon=True, name="privclust-warmup").start()
