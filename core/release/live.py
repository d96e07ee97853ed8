"""A stepping release at the door: charged when it starts, stored however it ends.

The Gibbs sampler runs for as long as its user lets it, and its user watches it run. At the
door this is one more mode of the release pipeline: :meth:`LiveRelease.start` answers an
identical request from the store, or charges the ledger with the request recorded as pending,
then samples in a child process (or a thread) on the Curator's records. What leaves while it
runs is progress only -- the iteration reached -- unless the data owner asked for the
evaluation-only diagnostics (``diagnostics=True``: traces computed on the raw records, NOT
PRIVATE). The state reached is stored as the request's :class:`~.record.Release` when the run
finishes, when it is stopped, and when its page goes away (:meth:`LiveRelease.abandon` stops it
the same way); a run whose process itself dies is completed later at no new charge
(:meth:`~.curator.Curator.recover`). Warnings and exception texts of the run are withheld.
"""

import logging
import multiprocessing
import pickle
import queue
import threading
import time
from typing import Any

from ..privacy.errors import DuplicateRequest
from .prepared import PreparedRelease, ReleaseFailed, withheld
from .record import Release
from .store import ReleaseStore
from .vouch import PrivacyRefused

log = logging.getLogger(__name__)

STATE_EVERY_S = 0.5  # the child sends the state reached at most this often (and at the end)
UNRESPONSIVE_S = 600.0  # a stopped child that sends nothing for this long is terminated


def mp_context() -> Any:
    """ "forkserver" (children fork from a clean server that has the sampler preloaded: no fork
    of a threaded server, and a fast start after the first) where available, else "spawn"."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["privclust.core.subspace.gibbs", "privclust.core.release.live"])
        return ctx
    return multiprocessing.get_context("spawn")


def state_of(estimator: Any) -> dict[str, Any]:
    """The fitted state a stepping run sends back: its released attributes, its guarantee and,
    for the data owner, its trace and iteration count."""
    names = tuple(estimator.released_attributes()) + ("privacy_", "n_iter_", "trace_")
    return {name: getattr(estimator, name) for name in names if hasattr(estimator, name)}


def stream_steps(
    estimator: Any, X: Any, reference: Any, conn: Any, stop: Any, nice: int = 0
) -> None:
    """Child-process target: ``estimator.iter_fit(X, reference)`` (its own ``random_state``:
    None at the door, i.e. fresh entropy in this process; ``ledger`` must be None: the parent
    charged) sending over ``conn`` ``("record", record)`` for each record, ``("state", state)``
    at most every ``STATE_EVERY_S`` and after the last record (also after an early stop), then
    ``("done", "finished" | "stopped", withheld warnings)``; or ``("error", type name, text)``.
    ``stop`` (an Event) is checked after each record; ``nice`` > 0 lowers this process's
    priority first (an interactive parent keeps the CPU)."""
    if getattr(estimator, "ledger", None) is not None:
        raise ValueError("stream_steps runs with ledger=None: the parent charges first")
    if nice:
        import os

        try:
            os.nice(int(nice))
        except (AttributeError, OSError):  # not on this platform: run at normal priority
            pass
    warned: list[str] = []
    status, last = "finished", 0.0
    try:
        with withheld(warned):
            gen = estimator.iter_fit(X, reference=reference)
            try:
                for record in gen:
                    conn.send(("record", record))
                    if time.monotonic() - last >= STATE_EVERY_S:
                        conn.send(("state", state_of(estimator)))
                        last = time.monotonic()
                    if stop.is_set():
                        status = "stopped"
                        break
            finally:
                gen.close()
        conn.send(("state", state_of(estimator)))
        conn.send(("done", status, warned))
    except BaseException as exc:  # noqa: BLE001 -- reported to the parent, never a traceback
        try:
            conn.send(("error", type(exc).__name__, f"{type(exc).__name__}: {exc}"))
        except (OSError, EOFError, pickle.PicklingError):
            pass
    finally:
        conn.close()


class LiveRelease:
    """A stepping release of one prepared request (see the module docstring).

    Attributes
    ----------
    queue : queue.Queue
        Progress items as they come: ``{"iteration", "n_iter"}``, or the whole evaluation-only
        record with ``diagnostics=True``.
    status : str
        "ready", "running", "finished", "stopped", "from store" or "failed".
    release : Release or None
        The stored release once the run has ended.
    error : Exception or None
        What went wrong (:class:`ReleaseFailed` after the charge).
    """

    def __init__(
        self,
        prepared: PreparedRelease,
        X: Any,
        store: ReleaseStore,
        unit: str,
        reference: Any = None,
        diagnostics: bool = False,
        process: bool = True,
        nice: int = 0,
    ) -> None:
        self._prepared, self._X, self._store, self._unit = prepared, X, store, unit
        self._reference, self._diagnostics = reference, bool(diagnostics)
        self._process, self._nice = bool(process), int(nice)
        self.queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self.status = "ready"
        self.release: Release | None = None
        self.error: ReleaseFailed | None = None
        self._stop = threading.Event()
        self._mp_stop: Any = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._charge_id: int | None = None
        self._notes: tuple[str, ...] = ()
        self.n_iter = int(prepared.estimator.n_iter)

    # ---- control -----------------------------------------------------------------------------
    def start(self) -> "LiveRelease":
        """Answer from the store, or charge (with the request pending) and start sampling in
        the background. Refusals (budget, parameters) raise here, before anything runs."""
        p = self._prepared
        stored = self._store.find(p.key)
        if stored is not None:
            return self._finish_with(stored, "from store")
        try:
            record = p.pay(pending=True)
            self._charge_id = record.id
        except DuplicateRequest as dup:
            if dup.done:
                return self._finish_with(self._store.find(p.key), "from store")
            pending = p.ledger.pending(p.key)
            if not pending:
                return self._finish_with(self._store.find(p.key), "from store")
            if pending[0]["running"]:
                raise PrivacyRefused(
                    "an identical run is sampling now (paid for, not yet "
                    "stored): ask again when it is done; nothing was charged"
                ) from dup
            self._charge_id = pending[0]["charge_id"]
            self._notes = (
                "completed after the first run of this paid request was lost; fresh "
                "randomness, no new charge",
            )
        self.status = "running"
        self._thread = threading.Thread(
            target=self._main, daemon=True, name="privclust-live-release"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after the current record; the state reached is stored as the release."""
        self._stop.set()
        if self._mp_stop is not None:
            self._mp_stop.set()

    def abandon(self) -> None:
        """The watcher went away (a closed or reloaded page): stop as :meth:`stop` does; the run
        still ends as a stored release, found later among the source's releases."""
        self.stop()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the run has ended and its release is stored; True when it has."""
        return self._done.wait(timeout)

    @property
    def running(self) -> bool:
        return self.status == "running"

    # ---- the run -----------------------------------------------------------------------------
    def _finish_with(self, release: Release | None, status: str) -> "LiveRelease":
        self.release, self.status = release, status
        self._done.set()
        return self

    def _publish(self, record: Any) -> None:
        if self._diagnostics:
            self.queue.put(record)
        else:
            self.queue.put({"iteration": int(record["iteration"]), "n_iter": self.n_iter})

    def _main(self) -> None:
        p = self._prepared
        try:
            status = self._run_process() if self._process else self._run_thread()
            self.release = p.store(self._store, self._unit, self._charge_id, self._notes)
            self.status = status
        except Exception as exc:  # noqa: BLE001 -- the message may describe the records
            p.ledger.abandon(p.key)
            self.error = (
                exc
                if isinstance(exc, ReleaseFailed)
                else ReleaseFailed(type(exc).__name__, f"{type(exc).__name__}: {exc}")
            )
            self.status = "failed"
            log.warning("live release failed (%s)", self.error.kind)
        finally:
            self._done.set()

    def _run_thread(self) -> str:
        p = self._prepared
        status = "finished"
        with withheld(p.withheld):
            gen = p.steps(self._X, charged=True, reference=self._reference)
            try:
                for record in gen:
                    self._publish(record)
                    if self._stop.wait(0.003):  # hand the GIL over for a moment
                        status = "stopped"
                        break
            finally:
                gen.close()
        return status

    def _run_process(self) -> str:
        """Start the child on the vouched clone, forward its records, keep the latest state,
        set it on the clone when the run ends (finished, stopped or unresponsive)."""
        p = self._prepared
        ctx = mp_context()
        conn, w = ctx.Pipe(duplex=False)
        self._mp_stop = ctx.Event()
        if self._stop.is_set():
            self._mp_stop.set()
        proc = ctx.Process(
            target=stream_steps,
            daemon=True,
            name="privclust-live-release",
            args=(p.estimator, self._X, self._reference, w, self._mp_stop, self._nice),
        )
        try:
            proc.start()
        finally:
            w.close()  # the child holds the only write end: its exit is our EOF
        state, status, failure = None, None, None
        quiet_since = time.monotonic()
        try:
            while True:
                if not conn.poll(0.2):
                    if self._stop.is_set() and time.monotonic() - quiet_since > UNRESPONSIVE_S:
                        proc.terminate()
                        break
                    continue
                quiet_since = time.monotonic()
                try:
                    message = conn.recv()
                except EOFError:
                    break
                if message[0] == "record":
                    self._publish(message[1])
                elif message[0] == "state":
                    state = message[1]
                elif message[0] == "done":
                    status = message[1]
                    p.withheld.extend(message[2])
                elif message[0] == "error":
                    failure = ReleaseFailed(message[1], message[2])
        finally:
            conn.close()
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
        if failure is not None:
            raise failure
        if state is None:
            raise RuntimeError(
                f"the sampler process ended before it reached a state (exit code {proc.exitcode})"
            )
        for name, value in state.items():
            setattr(p.estimator, name, value)
        return status or "stopped"
