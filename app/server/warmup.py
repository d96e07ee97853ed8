"""``panel serve --setup`` hook of the dashboard (``privclust serve`` passes it).

Before the server starts listening, imports HoloViews, Bokeh's plotting backend, the app and
every estimator class the page offers (scikit-learn, scipy, privclust.core), then builds and
renders one throw-away page on a detached Bokeh document, so that the first browser session
costs what any later one does (targets: server ready <= 3 s, first page <= 2 s; measured by
benchmarks/app/tour.py, results in benchmarks/results/app/). It also starts the Gibbs sampler's
forkserver, so the first Start of a server does not pay for a fresh interpreter, and freezes
what is alive then out of the garbage collector's full passes. The throw-away page has no
session and touches no data beyond the embedded preset generator; it fits the default demo
(and its non-private baseline) into the shared demo cache, so that every session's first
result is a cache hit drawn with the page. Bokeh's document checks run on that page and are then
off for the process's sessions, and in a ``--num-procs`` worker :func:`worker_setup` spreads a
class's connections over the workers.
"""

import gc
import logging
import time

log = logging.getLogger(__name__)


def warm_up():
    """Import and render once; returns the seconds it took (failures are logged, not raised)."""
    t0 = time.perf_counter()
    try:
        from bokeh.document import Document
        from bokeh.settings import settings

        from privclust.app.page import create_app  # imports every estimator of the catalogue
        from privclust.app.server.sampler import start_sampler_server
        from privclust.app.state import Lab, demo_cache

        start_sampler_server()  # a separate process: imports the sampler while we go on
        # the default demo is fitted once, into the cache every session shares (public data):
        # each new page then shows its first result with the page, with no fit and no update
        page = create_app(lab=Lab(demo_cache=demo_cache.SHARED))
        doc = Document()
        page.server_doc(doc)
        # Bokeh's integrity checks (their warnings go to the log) once, on this page, which
        # holds every view: each session's page has the same kinds of models, and checking
        # each was ~5 % of the server's work per new page (py-spy, sessions opened in a row)
        doc.validate()
        settings.perform_document_validation.set_value(False)
        del page, doc
        # the ~300,000 objects alive now (modules, classes, caches) are never garbage: a
        # full collection scanned them all, a ~125 ms pause of the server's IO loop each time
        # (measured), every few hundred thousand allocations; frozen, collections skip them
        gc.collect()
        gc.freeze()
    except Exception:  # warming up is an optimisation: never stop the server for it
        log.warning("privclust warm-up failed", exc_info=True)
    return time.perf_counter() - t0


def worker_setup():
    """In a ``panel serve --num-procs`` worker (nothing in a single-process server; returns
    whether it is one): end with the master, and accept one waiting connection at a time, so
    that a class's pages opened together spread over the workers
    (:func:`~privclust.app.server.panel_compat.accept_one_connection_per_wakeup`)."""
    from tornado.process import task_id

    from privclust.app.server.panel_compat import accept_one_connection_per_wakeup
    from privclust.app.server.parent_watch import watch_master_if_worker

    if task_id() is None:
        return False
    watch_master_if_worker()
    accept_one_connection_per_wakeup()
    return True


# panel serve executes this file as the module "panel_setup_module" (panel 1.9), not under a
# "bokeh..." module name, so the guard tests that name (and __main__ for a direct run)
if __name__ in ("panel_setup_module", "__main__"):
    worker_setup()
    print(f"privclust: warm-up done in {warm_up():.2f} s", flush=True)
