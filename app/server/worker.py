"""Where a session's work runs: one worker thread per session (fits off the server's IO loop)
and the debouncer that turns a burst of slider moves into one run."""

import logging
import queue
import threading

import panel as pn

from ..state import Lab, demo_cache
from . import session_hooks
from .sampler import fit_in_child

log = logging.getLogger(__name__)

DEBOUNCE_MS = 250
LEDGER_POLL_MS = 1000


class SessionWorker:
    """One daemon thread per session that runs fits one at a time, off the server's IO loop
    (a fit on the loop would freeze every session's page). A job submitted with a ``kind``
    replaces a queued job of the same kind that has not started yet (the newest slider value
    wins); Release jobs are never dropped. :meth:`close` (on session end) stops the thread.
    A job that raises is logged and ``on_error()`` is called (the page says so; no traceback).
    """

    def __init__(self, on_error=None):
        self.on_error = on_error
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
                self._thread = threading.Thread(
                    target=self._loop, daemon=True, name="privclust-session-worker"
                )
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
                self._report_failure()

    def _report_failure(self):
        if self.on_error is None:
            return
        try:
            self.on_error()
        except Exception:  # noqa: BLE001 -- the report of a failure must not kill the worker
            log.warning("reporting a failed session job failed", exc_info=True)

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
    :meth:`on_load` (registered with ``pn.state.onload``): models updated before then are not sent
    to the browser, so a result computed earlier would never be shown.
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


def session_lab(**lab_params):
    """(Lab, SessionWorker) of a new browser session: releases and demo runs go to the worker,
    demo re-runs are debounced and held until the page has loaded, and both stop when the
    session ends. Demo results come from the server's shared cache (computed once for all
    sessions; public data only)."""
    worker = SessionWorker()
    debounce = Debouncer(worker=worker)
    lab_params.setdefault("demo_cache", demo_cache.SHARED)  # public results, all sessions
    if session_hooks.in_session():
        # a large Gibbs demo fit runs in a low-priority child process; a script or notebook fits
        # inline (its main module need not be importable by a child)
        lab_params.setdefault("fit_stepping", fit_in_child)
    lab = Lab(schedule=debounce, worker=worker, **lab_params)
    worker.on_error = lab.report_failure
    session_hooks.on_session_end(debounce.stop, worker.close)
    if session_hooks.in_session():
        pn.state.onload(debounce.on_load)
        # other sessions (and this session's own Gibbs run, charged at Start) spend from the
        # same ledger file: every session sees the spending within LEDGER_POLL_MS
        pn.state.add_periodic_callback(lab.ledger.refresh, period=LEDGER_POLL_MS)
    return lab, worker
