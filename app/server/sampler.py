"""The Gibbs sampler's run off the server's IO loop, for the Gibbs view.

On private data the run is the Curator's live release
(:class:`privclust.core.release.LiveRelease`, started by the page's release service): the core
charges, samples in a child process and stores the release however the run ends; the runner
only follows it (:meth:`GibbsRunner.follow`), forwarding its progress. On demo data the runner
starts the same child itself (:func:`privclust.core.release.live.stream_steps`, seeded, nothing
charged), so that the sampler's numpy work never competes with the Bokeh IO loop for this
process's GIL. A reader thread puts each record's diagnostic rows on a queue, which the Gibbs
view drains. Stop sets an Event: the child stops after its current record and returns its state;
a demo child that has not stopped after ``STOP_GRACE_S`` (``CLOSE_GRACE_S`` at session end) is
terminated. A private run is never terminated by the page: it is stored when it stops.
A large demo fit of the sampler that a setting change asks for (not a Start) runs in the same
kind of child (:func:`fit_in_child`), so it does not take a core beside the IO loop either.
A demo run starts only when the server admits it (:mod:`.admission`: at most
``PRIVCLUST_MAX_SAMPLERS`` at once, the others queued in order of arrival). A private run is
charged when Start is pressed, so it is not queued: it counts against no slot.
"""

import logging
import queue
import signal
import threading
import time

import numpy as np
import param

from privclust.core.release.live import mp_context, stream_steps

from ..state.lab import fit_steps
from . import admission as admissions

log = logging.getLogger(__name__)

YIELD_S = 0.003  # thread mode only: GIL hand-over to the IO loop after each record
STOP_GRACE_S = 15.0  # Stop: the child finishes its current record, else it is terminated
CLOSE_GRACE_S = 2.0  # session end: the same, with a shorter wait
SAMPLER_NICE = 10  # the sampler process yields the CPU to the server (and browser)
# a demo fit this large (iterations x chains x records) runs in a child: ~1 s of one core on
# the default demo (3000 records, 5 features), measured; smaller ones run inline
CHILD_WORK = 25_000_000
# a child killed by one of these was stopped with its server (panel serve's process group);
# 255 is multiprocessing's code for a forkserver child whose exit status was lost because the
# forkserver itself had ended, which it does only with the server's process group
_SHUTDOWN_EXIT_CODES = (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP, 255)
COLUMNS = ["iteration", "chain", "cost", "test_statistic", "distance", "rhat"]


def diagnostic_rows(item):
    """Normalise one yielded diagnostic into rows {iteration, chain, cost, test_statistic,
    distance}: accepts a dict per chain, a dict of per-chain arrays, or a list of either."""
    if isinstance(item, (list, tuple)):
        return [r for x in item for r in diagnostic_rows(x)]
    if not isinstance(item, dict):
        item = {
            k: getattr(item, k) for k in COLUMNS + ["distance_to_reference"] if hasattr(item, k)
        }
    item = dict(item)
    if "distance" not in item:
        item["distance"] = item.get("wasserstein", item.get("distance_to_reference"))
    chain = item.get("chain")
    if chain is not None and np.ndim(chain) == 0:
        return [{k: _num(item.get(k)) for k in COLUMNS}]
    n = max(
        (np.size(item[k]) for k in ("cost", "test_statistic") if item.get(k) is not None), default=1
    )
    rows = []
    for c in range(n):
        row = {
            "iteration": _num(item.get("iteration")),
            "chain": float(c),
            "rhat": _num(item.get("rhat")),
        }
        for k in ("cost", "test_statistic", "distance"):
            v = item.get(k)
            row[k] = _num(np.ravel(v)[c] if v is not None and np.size(v) == n else v)
        rows.append(row)
    return rows


def _num(v):
    if v is None:
        return np.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan


def start_sampler_server():
    """Start the forkserver (with the sampler module preloaded) now rather than at the first
    Start: the dashboard's warm-up calls it, so the first run of a server does not wait for
    a fresh interpreter to import numpy, scipy and the sampler. No-op under "spawn"."""
    if mp_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def run_child(estimator, X, reference, nice, on_record, should_stop, grace_s, on_start=None):
    """``estimator.iter_fit(X, reference)`` in a child process (:func:`stream_steps`, its own
    seed, ``ledger`` None, at niceness ``nice``): ``on_record(record)`` for each record;
    ``should_stop()`` is polled every 0.2 s and, once true, asks the child to stop after its
    current record; a child still running ``grace_s()`` seconds after that is terminated.
    ``on_start(process)`` is called once the child runs. Returns ``(status, state, error)``:
    "finished" or "stopped" (None when the child sent no end), the last state the child sent
    (None if none) and the child's failure as a RuntimeError (None if none)."""
    status, state, error, stop_at = None, None, None, None
    ctx = mp_context()
    conn, w = ctx.Pipe(duplex=False)
    stop = ctx.Event()
    if should_stop():
        conn.close()
        w.close()
        return "stopped", None, None
    proc = ctx.Process(
        target=stream_steps,
        daemon=True,
        name="privclust-gibbs-sampler",
        args=(estimator, X, reference, w, stop, nice),
    )
    try:
        try:
            proc.start()
        finally:
            w.close()  # the child holds the only write end: its exit is our EOF
        if on_start is not None:
            on_start(proc)
        while True:
            if stop_at is None and should_stop():
                stop.set()
                stop_at = time.monotonic()
            if stop_at is not None and time.monotonic() - stop_at > grace_s():
                proc.terminate()
                break
            if not conn.poll(0.2):
                continue
            try:
                message = conn.recv()
            except EOFError:
                break
            if message[0] == "record":
                on_record(message[1])
            elif message[0] == "state":
                state = message[1]
            elif message[0] == "done":
                status = message[1]
            elif message[0] == "error":
                error = RuntimeError(message[2])
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
        if error is None and status is None and stop_at is None and not should_stop():
            if proc.exitcode in _SHUTDOWN_EXIT_CODES:
                return "stopped", state, None  # the server's process group is shutting down
            error = RuntimeError(
                f"the sampler process ended unexpectedly (exit code {proc.exitcode})"
            )
        return status, state, error
    finally:
        conn.close()
        if proc.is_alive():
            proc.kill()


def fit_in_child(estimator, X, superseded):
    """A demo fit of a stepping estimator (the Gibbs sampler; public data, its own seed, no
    ledger) in a child process at ``SAMPLER_NICE``, as :class:`privclust.app.state.Lab` runs
    it in a server: a long demo fit (20,000 iterations x 8 chains: ~13 CPU s) would otherwise
    take a core from the server's IO loop and every other session's page at full priority.
    ``superseded()`` stops it (returns False); else the estimator gets the child's released
    state and True is returned. A failure of the fit is raised as RuntimeError. A fit of less
    than ``CHILD_WORK`` iteration x chain x record steps runs inline (:func:`fit_steps`): a
    child's start (~0.2 s, measured) would cost more than the fit."""
    work = int(estimator.n_iter) * int(estimator.n_chains) * int(np.shape(X)[0])
    if work < CHILD_WORK:
        return fit_steps(estimator, X, superseded)
    status, state, error = run_child(
        estimator.set_params(ledger=None),
        X,
        None,
        nice=SAMPLER_NICE,
        on_record=lambda record: None,
        should_stop=superseded,
        grace_s=lambda: CLOSE_GRACE_S,
    )
    if error is not None:
        raise error
    if status != "finished" or state is None:
        return False
    for name, value in state.items():
        setattr(estimator, name, value)
    return True


class GibbsRunner(param.Parameterized):
    """Runs ``iter_fit`` in a child process (``process=True``) or a daemon thread; diagnostics
    go to ``self.queue``, one list of rows per record. On private data the run is wrapped in
    the Curator's live release (:meth:`follow`)."""

    running = param.Boolean(False)
    status = param.String("")
    queue_position = param.Integer(0, doc="place in the queue for a free sampler (0: not waiting)")
    produced = param.Integer(0, doc="diagnostic batches produced so far")
    process = param.Boolean(True, doc="sample in a child process (else a thread of this one)")
    nice = param.Integer(
        SAMPLER_NICE,
        bounds=(0, 19),
        doc="niceness increment of the sampler process (0: same priority)",
    )

    def __init__(self, admission=None, **params):
        super().__init__(**params)
        self.admission = admission  # None: the server's (admission.shared()) at each Start
        self.queue = queue.Queue()
        self._stop = threading.Event()
        self._stop_at = None
        self._closing = False
        self._proc = None
        self._thread = None
        self.estimator = None
        self.error = None
        self.live = None

    def _reset_run(self, estimator):
        if self.running:
            raise RuntimeError("the sampler is already running")
        self._stop.clear()
        self._stop_at, self._closing, self._proc = None, False, None
        self.estimator, self.error, self.live = estimator, None, None

    def _launch(self, target, args=(), on_refused=None):
        """Run ``target`` in the background once the server admits the run (a slot among
        ``PRIVCLUST_MAX_SAMPLERS``; waiting in the queue, ``queue_position`` says where).
        Stopped while waiting: ``target`` never runs (nothing is charged) and
        ``on_refused()`` says so."""
        self.param.update(running=True, status="waiting", produced=0)
        admission = self.admission or admissions.shared()

        def main():
            ticket = None
            try:
                ticket = admission.ticket()
                if not ticket.wait(self._stop, on_position=self._queued):
                    self.param.update(status="stopped", queue_position=0)
                    if on_refused is not None:
                        on_refused()
                    return
                self.param.update(status="running", queue_position=0)
                target(*args)
            finally:
                if ticket is not None:
                    ticket.close()
                self.running = False

        self._thread = threading.Thread(target=main, daemon=True, name="privclust-gibbs")
        self._thread.start()

    def _queued(self, position):
        self.param.update(
            status=f"waiting for a free sampler (position {position})", queue_position=position
        )

    def start(self, estimator, X, reference=None):
        """Demo data: run ``estimator`` (its own seed, no ledger) on ``X`` in the background."""
        self._reset_run(estimator)
        if self.process:
            self._launch(self._run_process, (estimator, X, reference))
        else:
            self._launch(self._run_thread, (estimator, X, reference))
        return True

    def follow(self, live):
        """Private data: follow a started live release (its progress goes to ``queue``); at the
        end ``live`` holds the stored release or the error. Stop stops it after the current
        record; it is never terminated by the page (the core stores it however it ends)."""
        self._reset_run(None)
        self.live = live

        def main():
            try:
                while not live.join(0.1) or not live.queue.empty():
                    self._drain_live(live)
                self.status = live.status
            finally:
                self.running = False

        self.param.update(running=True, status="running", produced=0)
        self._thread = threading.Thread(target=main, daemon=True, name="privclust-gibbs")
        self._thread.start()
        return True

    def _drain_live(self, live):
        while True:
            try:
                self._put(live.queue.get_nowait())
            except queue.Empty:
                return

    def _put(self, item):
        self.queue.put(diagnostic_rows(item))
        self.produced += 1

    def _run_thread(self, estimator, X, reference):
        gen = None
        try:
            gen = estimator.iter_fit(X, reference=reference)
            for item in gen:
                self._put(item)
                # hand the GIL to the server's IO loop for a moment after each record, so the
                # page stays responsive while the sampler runs in this thread
                if self._stop.wait(YIELD_S):
                    break
            stopped = self._stop.is_set()
            self.status = "stopped" if stopped else "finished"
        except Exception as exc:  # shown as a message, never a traceback
            self.error = exc
            log.warning("Gibbs run failed", exc_info=True)
            self.status = f"failed ({type(exc).__name__})"
        finally:
            if gen is not None:
                gen.close()

    def _run_process(self, estimator, X, reference):
        """Reader thread (demo data): run the child (:func:`run_child`), forward its records,
        set the returned state on ``estimator``."""
        try:
            status, state, self.error = run_child(
                estimator.set_params(ledger=None),
                X,
                reference,
                nice=self.nice,
                on_record=self._put,
                should_stop=self._stop.is_set,
                grace_s=lambda: CLOSE_GRACE_S if self._closing else STOP_GRACE_S,
                on_start=lambda proc: setattr(self, "_proc", proc),
            )
        except Exception as exc:
            self.error, state, status = exc, None, None
            log.warning("Gibbs run failed", exc_info=True)
        else:
            if self.error is not None:
                log.warning("Gibbs run failed: %r", self.error)
        if state is not None and self.error is None:
            for name, value in state.items():  # the released state of the run
                setattr(self.estimator, name, value)
        self.status = (
            f"failed ({type(self.error).__name__})"
            if self.error is not None
            else status or "stopped"
        )

    def stop(self):
        """Stop after the current record (the state so far is shown or, on private data,
        released); a demo child that has not stopped after STOP_GRACE_S is terminated."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()
        self._stop.set()
        if self.live is not None:
            self.live.stop()

    def close(self):
        """Session end: stop. A private run is abandoned -- it stops after its current record
        and is stored all the same; a demo child still running after CLOSE_GRACE_S is
        terminated."""
        self._closing = True
        if self.live is not None:
            self.live.abandon()
        self.stop()

    @property
    def pid(self):
        """The sampler process id (None in thread mode or before it started)."""
        return None if self._proc is None else self._proc.pid

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def drain_records(self):
        """The rows of each record produced since the last drain, one list per record."""
        out = []
        while True:
            try:
                out.append(self.queue.get_nowait())
            except queue.Empty:
                return out
