"""Live Gibbs diagnostics: the sampler's mixing statistic and cost traces streamed while it runs
(Wang, Wang & Singh, NIPS 2015, Sec. 4.1 and Fig. 3).

``GibbsSubspaceClustering.iter_fit`` runs in a separate process (multiprocessing, "forkserver"
context where available, else "spawn"): the sampler's numpy work then never competes with the
Bokeh IO loop for this process's GIL. On private data the run is a release through the
dataset's Curator: ``curator.release(estimator, runner=...)`` plans, refuses or charges the
ledger first, then calls the runner, which starts the child with the prepared clone's
parameters (``ledger=None``, ``random_state=None``: fresh entropy) and sets the state the child
returns (also after Stop) on that clone, from which the Curator builds the Release. On demo
data the same child runs without a Curator (seeded, nothing charged). A reader thread turns records into rows on a queue; a per-session periodic
callback drains the queue and streams only the new points into one Bokeh ColumnDataSource
(``ColumnDataSource.stream`` on the session's thread, Panel's "streaming_bokeh" pattern) shared by
three figures, at most ``MAX_POINTS`` per chain (the stride between plotted records doubles when
the cap is reached). Measured: a ``hv.streams.Buffer`` + ``DynamicMap`` update cost the server
about 25 ms of CPU per poll (element construction and framewise ranges for three overlays),
the direct stream about 1-2 ms. Stop sets an Event (the child stops after its current record and returns its state,
or is terminated after ``STOP_GRACE_S``); session end does the same with ``CLOSE_GRACE_S``.
"""
import logging
import math
import queue
import threading
import time

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from . import plots, session_hooks, teaching
from .models import Lab, RunResult
from .views import _teach

log = logging.getLogger(__name__)

YIELD_S = 0.003          # thread mode only: GIL hand-over to the IO loop after each record
STOP_GRACE_S = 15.0      # Stop: the child finishes its current record, else it is terminated
CLOSE_GRACE_S = 2.0      # session end: the same, with a shorter wait
SAMPLER_NICE = 10        # the sampler process yields the CPU to the server (and browser)
COLUMNS = ["iteration", "chain", "cost", "test_statistic", "distance", "rhat"]
METRICS = ("cost", "test_statistic", "distance")
MAX_POINTS = 400         # plotted points per chain and trace
TITLES = {"cost": "cost per chain", "test_statistic": "test statistic T",
          "distance": "distance to the non-private baseline"}


def wide_columns(n_chains):
    """The plots' columns: iteration, then ``{metric}_{chain}`` (a row per record)."""
    return ["iteration"] + [f"{m}_{c}" for m in METRICS for c in range(n_chains)]


def _empty_columns(n_chains):
    return {c: np.array([], dtype=float) for c in wide_columns(n_chains)}


class _TracePane(pn.pane.Bokeh):
    """A Bokeh pane that keeps Panel's ``design`` to itself. ``panel serve`` on a notebook gives
    every output object the template's design; panel 1.9.4's Bokeh pane then forwards it to the
    figure, which has no such property, and the whole page fails (AttributeError: unexpected
    attribute 'design' to figure)."""

    def _track_overrides(self, *events):
        super()._track_overrides(*(e for e in events if e.name != "design"))


def _trace_figure(metric, source, n_chains, x_range):
    """A Bokeh figure with one line per chain (columns ``{metric}_{c}``) on the shared iteration
    axis ``x_range`` (set by the server to the run's length); the y range follows the data in
    the browser. A data-following x range would be recomputed in the browser at every update
    and sent back to the server, once per figure (measured: 3 extra messages and replies per
    poll)."""
    label = {"cost": "cost", "test_statistic": "T", "distance": "distance"}[metric]
    fig = figure(width=380, height=260, title=TITLES[metric], x_axis_label="iteration",
                 x_range=x_range,
                 y_axis_label=label, tools="pan,wheel_zoom,box_zoom,reset,save",
                 toolbar_location="right")
    for c in range(n_chains):
        r = fig.line("iteration", f"{metric}_{c}", source=source, line_width=2,
                     color=Category10_10[c % 10])
        # drawn by the browser when needed: 2 fewer models per line to send each time the
        # (dynamic) Gibbs tab is opened (190 instead of 238 models for 8 chains)
        r.nonselection_glyph = r.muted_glyph = "auto"
    return fig


def diagnostic_rows(item):
    """Normalise one yielded diagnostic into rows {iteration, chain, cost, test_statistic,
    distance}: accepts a dict per chain, a dict of per-chain arrays, or a list of either."""
    if isinstance(item, (list, tuple)):
        return [r for x in item for r in diagnostic_rows(x)]
    if not isinstance(item, dict):
        item = {k: getattr(item, k) for k in COLUMNS + ["distance_to_reference"]
                if hasattr(item, k)}
    item = dict(item)
    if "distance" not in item:
        item["distance"] = item.get("wasserstein", item.get("distance_to_reference"))
    chain = item.get("chain")
    if chain is not None and np.ndim(chain) == 0:
        return [{k: _num(item.get(k)) for k in COLUMNS}]
    n = max((np.size(item[k]) for k in ("cost", "test_statistic") if item.get(k) is not None),
            default=1)
    rows = []
    for c in range(n):
        row = {"iteration": _num(item.get("iteration")), "chain": float(c),
               "rhat": _num(item.get("rhat"))}
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


def rhat(df):
    """R-hat of the cost across chains: the sampler's own value when it reports one, else the
    split R-hat over the second half of the trace."""
    if df is None or df.empty or df["chain"].nunique() < 2:
        return None
    reported = df["rhat"].dropna()
    if len(reported):
        return float(reported.iloc[-1])
    from privclust.core.metrics import split_rhat
    wide = df.pivot_table(index="iteration", columns="chain", values="cost").dropna()
    if len(wide) < 4:
        return None
    half = wide.iloc[len(wide) // 2:]
    try:
        return float(split_rhat(half.to_numpy().T))
    except Exception:
        return None


def _mp_context():
    """"forkserver" (children fork from a clean server that has the sampler module preloaded:
    no fork of this threaded server, and a fast start after the first) or "spawn"."""
    import multiprocessing as mp
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["privclust.core.subspace.gibbs"])
        return ctx
    return mp.get_context("spawn")


def start_sampler_server():
    """Start the forkserver (with the sampler module preloaded) now rather than at the first
    Start: the dashboard's warm-up calls it, so the first run of a server does not wait for
    a fresh interpreter to import numpy, scipy and the sampler. No-op under "spawn"."""
    ctx = _mp_context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver
        forkserver.ensure_running()


class GibbsRunner(param.Parameterized):
    """Runs ``iter_fit`` in a child process (``process=True``) or a daemon thread; diagnostics
    go to ``self.queue``, one list of rows per record. On private data the run is wrapped in
    ``curator.release`` (:meth:`start_release`)."""

    running = param.Boolean(False)
    status = param.String("")
    produced = param.Integer(0, doc="diagnostic batches produced so far")
    process = param.Boolean(True, doc="sample in a child process (else a thread of this one)")
    nice = param.Integer(SAMPLER_NICE, bounds=(0, 19),
                         doc="niceness increment of the sampler process (0: same priority)")

    def __init__(self, **params):
        super().__init__(**params)
        self.queue = queue.Queue()
        self._stop = threading.Event()
        self._stop_at = None
        self._closing = False
        self._mp_stop = None
        self._proc = None
        self._thread = None
        self.estimator = None
        self.error = None
        self.release = None

    def _reset_run(self, estimator):
        if self.running:
            raise RuntimeError("the sampler is already running")
        self._stop.clear()
        self._stop_at, self._closing, self._mp_stop, self._proc = None, False, None, None
        self.estimator, self.error, self.release = estimator, None, None

    def _launch(self, target, args=()):
        self.param.update(running=True, status="running", produced=0)

        def main():
            try:
                target(*args)
            finally:
                self.running = False
        self._thread = threading.Thread(target=main, daemon=True, name="privclust-gibbs")
        self._thread.start()

    def start(self, estimator, X, reference=None):
        """Demo data: run ``estimator`` (its own seed, no ledger) on ``X`` in the background."""
        self._reset_run(estimator)
        if self.process:
            params = dict(estimator.get_params(), ledger=None)
            self._launch(self._run_process, (params, X, reference))
        else:
            self._launch(self._run_thread, (estimator, X, reference))
        return True

    def start_release(self, curator, estimator, reference=None):
        """Private data: ``curator.release(estimator, runner=...)`` in the background. The
        Curator refuses or charges first; the runner then samples the prepared clone (no seed,
        no ledger) in the child process and sets its returned state on the clone. A stopped
        run still releases the state it reached (charged in full). ``release`` holds the
        Release at the end, ``error`` what went wrong (ReleaseFailed after the charge)."""
        self._reset_run(estimator)

        def runner(est, X):
            self.estimator = est
            if self.process:
                params = dict(est.get_params(), ledger=None, random_state=None)
                self._run_process(params, X, reference)
            else:
                self._run_thread(est, X, reference)
            if self.error is not None:
                raise self.error
            if getattr(est, "subspaces_", None) is None:
                raise RuntimeError("the sampler ended before it reached a state")

        def main():
            try:
                self.release = curator.release(estimator, runner=runner)
            except Exception as exc:  # noqa: BLE001 -- reported by the view, never a traceback
                self.error = exc
                self.status = f"failed ({type(exc).__name__})"
        self._launch(main)
        return True

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

    def _run_process(self, params, X, reference):
        """Reader thread: start the child, forward its records, set the returned state."""
        from privclust.core.subspace.gibbs import stream_fit
        status, state, proc, conn = None, None, None, None
        try:
            if self._stop.is_set():
                self.status = "stopped"
                return
            ctx = _mp_context()
            conn, w = ctx.Pipe(duplex=False)
            self._mp_stop = ctx.Event()
            proc = ctx.Process(target=stream_fit, daemon=True, name="privclust-gibbs-sampler",
                               args=(params, X, reference, w, self._mp_stop, self.nice))
            try:
                proc.start()
            finally:
                w.close()   # the child holds the only write end: its exit is our EOF
            self._proc = proc
            if self._stop.is_set():
                self._mp_stop.set()
            while True:
                if self._stop_at is not None and time.monotonic() - self._stop_at > (
                        CLOSE_GRACE_S if self._closing else STOP_GRACE_S):
                    proc.terminate()
                    break
                if not conn.poll(0.2):
                    continue
                try:
                    kind, payload = conn.recv()
                except EOFError:
                    break
                if kind == "record":
                    self._put(payload)
                elif kind == "state":
                    state = payload
                elif kind == "done":
                    status = payload
                elif kind == "error":
                    self.error = payload
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
            if self.error is None and status is None and not self._stop.is_set():
                self.error = RuntimeError(f"the sampler process ended unexpectedly (exit code "
                                          f"{proc.exitcode})")
            if state is not None and self.error is None:
                for name, value in state.items():   # the released state of the run
                    setattr(self.estimator, name, value)
            if self.error is not None:
                log.warning("Gibbs run failed: %r", self.error)
                self.status = f"failed ({type(self.error).__name__})"
            else:
                self.status = status or "stopped"
        except Exception as exc:
            self.error = exc
            log.warning("Gibbs run failed", exc_info=True)
            self.status = f"failed ({type(exc).__name__})"
            if proc is not None and proc.is_alive():
                proc.kill()
        finally:
            if conn is not None:
                conn.close()

    def stop(self):
        """Stop after the current record (the state so far is released); a child process that
        has not stopped after STOP_GRACE_S is terminated (nothing is released then)."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()
        self._stop.set()
        if self._mp_stop is not None:
            self._mp_stop.set()

    def close(self):
        """Session end: stop; a child process still running after CLOSE_GRACE_S (a long
        record) is terminated."""
        self._closing = True
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

    def drain(self):
        rows = [r for rec in self.drain_records() for r in rec]
        return pd.DataFrame(rows, columns=COLUMNS) if rows else None


class GibbsView(pn.viewable.Viewer):
    """Start/Stop and live traces (cost, test statistic, distance to baseline, R-hat)."""

    lab = param.ClassSelector(class_=Lab)
    updates = param.Integer(0, doc="diagnostic batches shown so far")
    period_ms = param.Integer(100)

    def __init__(self, **params):
        super().__init__(**params)
        self.runner = GibbsRunner()
        self._cb = None
        self._doc = None
        self._poll_lock = threading.RLock()
        self._empty = pd.DataFrame({c: np.array([], dtype=float) for c in COLUMNS})
        self._panes = {m: _TracePane() for m in METRICS}
        self._fig_chains = None
        self.x_range = Range1d(0, 1)
        self._clear_history(1)
        self.start_btn = pn.widgets.Button(label="Start sampler", color="primary",
                                           css_classes=["pc-gibbs-start"])
        self.stop_btn = pn.widgets.Button(label="Stop", color="danger", disabled=True,
                                          css_classes=["pc-gibbs-stop"])
        self.start_btn.on_click(lambda e: self.start())
        self.stop_btn.on_click(lambda e: self.runner.stop())
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.info = pn.pane.Markdown("", css_classes=["pc-gibbs-info"],
                                     sizing_mode="stretch_width")
        self.message = pn.pane.Alert("", alert_type="danger", visible=False)
        self.runner.param.watch(self._on_running, "running")
        session_hooks.on_session_end(self._cleanup)

    # ---- data and plots ------------------------------------------------------------------------
    @property
    def data(self):
        """Every diagnostic row of the current run (long format: one row per record and chain)."""
        if self._data is None:
            self._data = (pd.concat(self._chunks, ignore_index=True) if self._chunks
                          else self._empty)
            self._chunks = [self._data] if len(self._data) else []
        return self._data

    def _clear_history(self, n_chains, n_iter=1):
        """A new run: empty history and plots, stride 1. One source for the three trace
        figures (a row per record, a column per chain and metric; each poll streams only the
        new rows); figures with one line per chain of the run (the browser redraws only those),
        rebuilt when the number of chains changes, on one iteration axis spanning the run."""
        self._n_chains = max(1, int(n_chains))
        self._wide = wide_columns(self._n_chains)
        self._chunks, self._data = [], None
        self._hist = []                  # one wide row (self._wide) per record
        self._last_rhat = None
        self._stride, self._sent, self._final_sent = 1, None, False
        if self._fig_chains != self._n_chains:
            self.source = ColumnDataSource(data=_empty_columns(self._n_chains))
            self.figures = {m: _trace_figure(m, self.source, self._n_chains, self.x_range)
                            for m in METRICS}
            for m in METRICS:
                self._panes[m].object = self.figures[m]
            self._fig_chains = self._n_chains
        else:
            self.source.data = _empty_columns(self._n_chains)
        n = max(1, int(n_iter))
        self.x_range.update(start=0, end=n, reset_start=0, reset_end=n)
        self._set_titles()

    def _set_titles(self):
        raw_private = self.lab.mode == "private"
        for m, fig in self.figures.items():
            fig.title.text = plots.mark(TITLES[m], raw_private)

    def _wide_row(self, rows):
        out = np.full(len(self._wide), np.nan)
        out[0] = rows[0]["iteration"] if rows else np.nan
        for r in rows:
            c = int(r["chain"]) if np.isfinite(r["chain"]) else 0
            if 0 <= c < self._n_chains:
                for j, m in enumerate(METRICS):
                    out[1 + j * self._n_chains + c] = r[m]
        return out

    def _columns(self, idx):
        rows = np.asarray([self._hist[i] for i in idx]).reshape(len(idx), len(self._wide))
        return {c: rows[:, j] for j, c in enumerate(self._wide)}

    def _stream(self, final=False):
        """Send the records not yet plotted: records 0, s, 2s, ... (stride s, doubled whenever
        that would exceed MAX_POINTS - 1, which replaces the plotted trace by its thinned
        version once: log2(records / MAX_POINTS) times per run), plus the last record when the
        run is over. Only the data owner view or demo data ever gets here. Runs on the
        session's thread (periodic or next-tick callback) in a server, else inline."""
        n = len(self._hist)
        if n == 0:
            return
        s = self._stride
        while math.ceil(n / s) > MAX_POINTS - 1:
            s *= 2
        last = [n - 1] if final and (n - 1) % s else []
        if self._sent is None or s != self._stride:
            idx = list(range(0, n, s))
            self._stride, self._sent = s, len(idx)
            self._final_sent = bool(last)
            self.source.data = self._columns(idx + last)
        else:
            idx = list(range(self._sent * s, n, s))
            self._sent += len(idx)
            if last and not self._final_sent:
                idx += last
                self._final_sent = True
            if not idx:
                return
            self.source.stream(self._columns(idx))
        pn.io.push_notebook(*self._panes.values())  # notebooks only (no-op in a server)

    @param.depends("lab.mode", "lab.settings.owner_view", "lab.data.dataset", watch=True)
    def _privacy_changed(self):
        """Raw diagnostics in the plots only while they may be shown; re-sent when allowed."""
        def apply():
            with self._poll_lock:
                self._sent = None
                self._set_titles()
                if self._raw_ok():
                    self._stream(final=not self.runner.running)
                else:
                    self.source.data = _empty_columns(self._n_chains)
        self._on_session_thread(apply)

    def _on_session_thread(self, fn):
        """Run ``fn`` where Bokeh models may be changed: on the session's IO loop (next tick)
        when the plots live in a server document, else now."""
        doc = self.source.document or self._doc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(fn)
        else:
            fn()

    # ---- control -----------------------------------------------------------------------------
    def start(self):
        lab = self.lab
        spec = lab.settings.spec
        if (spec is None or spec.key != "gibbs") and lab.settings.task == "subspace" and \
                "gibbs" in lab.settings.param.algorithm.objects:
            lab._quiet = True  # no blocking demo fit now: the live run's state becomes the result
            try:
                lab.settings.algorithm = "gibbs"
            finally:
                lab._quiet = False
            spec = lab.settings.spec
        if spec is None or spec.key != "gibbs":
            self._alert("The Gibbs sampler belongs to the subspace clustering task: choose it "
                        "first.")
            return False
        if lab.data.dataset is None or self.runner.running:
            return False
        lab.cancel_demo()  # a demo fit of the same sampler still running in the background
        request = lab.capture()  # read once: the run never re-reads the page's state
        spec, values = request.spec, request.settings
        if not request.dataset.public:
            return self._start_private(request)
        est = spec.build(values, random_state=request.random_state, ledger=None)
        base = _baseline(lab, request)
        reference = None if base is None else getattr(base, "subspaces_", None)
        self._begin(request, lab.request_key(spec))
        self.runner.start(est, request.dataset.X, reference)
        self._started()
        return True

    def _start_private(self, request):
        """Private data: a release through the dataset's Curator (see GibbsRunner.start_release).
        Refusals come from the Curator and the ledger, before anything runs."""
        from privclust.core.release import PrivacyRefused
        lab = self.lab
        spec, values, curator = request.spec, request.settings, request.curator
        if curator is None:
            self._alert(f"Refused: {lab.ledger.error or 'no budget ledger'}. Nothing was run or "
                        "charged.")
            return False
        if spec.effective_kind(values) == "none":
            if request.owner_view:  # NOT PRIVATE, through the Curator's owner path
                lab.do_release(request)
                self._alert("A non-random initialisation is not private: it ran once through "
                            "the data owner path (NOT PRIVATE, no live traces, nothing "
                            "charged).", "warning")
            else:
                self._alert("Refused: a Gibbs chain started from a non-private solution is not "
                            "private, so it is not offered on private data. Nothing was run or "
                            "charged.")
            return False
        try:
            est = spec.build(values, random_state=None, ledger=None)
            fits, cost, plan = lab.ledger.can_release(est)
        except (PrivacyRefused, ValueError, TypeError) as exc:
            self._alert(f"Refused before anything ran: {exc}. Nothing was run or charged.")
            return False
        if cost == (0.0, 0.0):  # an identical release is stored: answered at no charge
            lab.do_release(request)
            self._alert("Identical request: the stored release is shown, nothing was charged.",
                        "info")
            return False
        if not fits:
            lab._refuse(cost, plan)
            self._alert(lab.message)
            return False
        base = _baseline(lab, request)
        reference = None if base is None else getattr(base, "subspaces_", None)
        self._begin(request, None)
        # the Curator charges the ledger before it calls the runner that starts the process
        self.runner.start_release(curator, est, reference)
        self._started()
        return True

    def _begin(self, request, key):
        values = request.settings
        self._reset(values.get("n_chains", 1), values.get("n_iter", 1))
        self._spec, self._values, self._key = request.spec, values, key
        self._dataset, self._t0 = request.dataset, time.perf_counter()
        self.message.visible = False

    def _started(self):
        self.start_btn.disabled, self.stop_btn.disabled = True, False
        if pn.state.curdoc is not None and self._cb is None:
            self._doc = pn.state.curdoc
            self._cb = pn.state.add_periodic_callback(self.poll, period=self.period_ms)

    def _reset(self, n_chains=1, n_iter=1):
        self._clear_history(n_chains, n_iter)
        self.updates = 0
        self.progress.value = 0

    def poll(self):
        """Drain the queue and stream the new points (periodic callback, session's thread); the
        poll's changes (traces, progress, info line) go to the browser as one message."""
        with self._poll_lock, pn.io.hold():
            self._poll()

    def _poll(self):
        records = self.runner.drain_records()
        if records:
            rows = [r for rec in records for r in rec]
            self._chunks.append(pd.DataFrame(rows, columns=COLUMNS))
            self._data = None
            for rec in records:
                self._hist.append(self._wide_row(rec))
                reported = [r["rhat"] for r in rec if np.isfinite(r["rhat"])]
                if reported:
                    self._last_rhat = float(reported[-1])
            if self._raw_ok():
                self._stream()
            self.updates += 1
        n_iter = self._values.get("n_iter", 1) if hasattr(self, "_values") else 1
        last = float(self._hist[-1][0]) if self._hist else 0.0
        self.progress.value = int(min(100, 100 * last / max(n_iter, 1)))
        r = self._last_rhat if self._raw_ok() and self._n_chains >= 2 else None
        self.info.object = (f"iteration **{last:.0f}** of {n_iter} · diagnostic updates "
                            f"**{self.updates}**" + (f" · R-hat (cost) **{r:.3f}**"
                                                     if r is not None else ""))
        if not self.runner.running and self.runner.queue.empty():
            self._finish()

    def _raw_ok(self):
        """Raw-data diagnostics (cost, distance, R-hat) only for public data or the data owner
        view of the dataset the sampler runs on."""
        ds = getattr(self, "_dataset", None)
        return self.lab.raw_allowed(self.lab.data.dataset if ds is None else ds)

    def _on_running(self, event):
        # the reader thread: a run that ended before the periodic callback existed (or outside
        # a server) is polled once more, on the session's thread when there is a session
        if not event.new and self._cb is None:
            self._on_session_thread(self.poll)

    def _finish(self):
        if self._cb is not None:
            self._cb.stop()
            self._cb = None
        if self._raw_ok():
            self._stream(final=True)
        self.start_btn.disabled, self.stop_btn.disabled = False, True
        lab, runner = self.lab, self.runner
        private = not self._dataset.public
        lab.ledger.refresh()
        if private:
            return self._finish_private()
        est = runner.estimator
        if runner.error is not None:
            self._alert(lab._failure_text(runner.error, False))
            return
        if getattr(est, "subspaces_", None) is None:
            self._alert(f"Sampler {runner.status}; no state was released.", "warning")
            return
        # the run's own spec/settings/dataset: the controls may have changed while it ran
        result = RunResult(key=self._key, spec=self._spec, settings=self._values,
                           estimator=est, dataset=self._dataset,
                           elapsed=time.perf_counter() - self._t0, private_mode=False)
        lab._cache[self._key] = result
        if self._dataset is not lab.data.dataset:
            return
        lab.param.update(result=result, stale=False)
        lab._say(f"Gibbs sampler {runner.status} (demo data: nothing is spent); the state is "
                 "shown in the Clusters, Subspaces and Report tabs.", "success")

    def _finish_private(self):
        from privclust.core.privacy import BudgetExceeded
        from privclust.core.release import ReleaseFailed
        lab, runner = self.lab, self.runner
        release, exc = runner.release, runner.error
        if release is None:
            if isinstance(exc, ReleaseFailed):
                owner = lab.raw_allowed(self._dataset)
                text = (f"The sampler's release failed ({exc.kind}) after it was charged"
                        + (f": {exc.detail}" if owner else
                           "; its message may describe the private data (the data owner view "
                           "shows it)") + ". The budget charged for it stays spent.")
                self._alert(text)
            elif isinstance(exc, BudgetExceeded):
                self._alert("Refused: another release spent the budget first. Nothing was run "
                            "or charged.")
            else:
                self._alert(f"Refused before anything ran ({type(exc).__name__}): {exc}. "
                            "Nothing was run or charged.")
            return
        result = RunResult(key=release.key, spec=self._spec, settings=self._values,
                           estimator=release, dataset=self._dataset,
                           elapsed=time.perf_counter() - self._t0, private_mode=True,
                           from_cache=release.from_store)
        if self._dataset is not lab.data.dataset:
            self._alert("The dataset changed while the sampler ran: its release is stored with "
                        "the other releases of its dataset.", "warning")
            return
        lab.param.update(result=result, stale=False)
        eps = release.cost[0]
        stopped = runner.status == "stopped"
        lab._say(f"Gibbs sampler {runner.status}: released the state " +
                 ("it reached when stopped" if stopped else "of the last iteration") +
                 f", charged ε = {eps:g} in full. It is shown in the Clusters, Subspaces and "
                 "Report tabs.", "success")

    def _alert(self, text, kind="danger"):
        from .safety import escape
        self.message.param.update(object=escape(text), alert_type=kind, visible=True)

    def _cleanup(self, session_context=None):
        self.runner.close()
        self.lab.cancel_demo()  # a demo fit of the sampler still running on the session worker
        if self._cb is not None:
            self._cb.stop()
            self._cb = None

    @param.depends("lab.mode", "lab.settings.owner_view", "lab.data.dataset")
    def _traces(self):
        if not self._raw_ok():
            return pn.pane.Markdown("Private data: the sampler shows progress only. Cost and "
                                    "distance traces are computed on the raw data (switch on the "
                                    "data owner view to see them, not private).")
        return pn.Column(pn.Row(self._panes["cost"], self._panes["test_statistic"]),
                         self._panes["distance"])

    @param.depends("lab.mode", "lab.settings.epsilon")
    def _spend_note(self):
        if self.lab.mode != "private":
            return pn.pane.Markdown("Demo data: the sampler spends nothing (the page seed "
                                    "applies).", css_classes=["pc-gibbs-spend"])
        return pn.pane.Alert(
            f"**Private data: Start is a release.** It charges ε = {self.lab.settings.epsilon:g} "
            "per released chain to this dataset's budget before sampling starts (fresh "
            "randomness, the seed is ignored). **Stop** still releases the state reached so "
            "far, charged in full.", alert_type="warning", css_classes=["pc-gibbs-spend"],
            sizing_mode="stretch_width")

    def __panel__(self):
        controls = pn.Row(self.start_btn, self.stop_btn)
        return pn.Column(_teach(teaching.GIBBS), self._spend_note, controls, self.progress,
                         self.info, self.message, self._traces, sizing_mode="stretch_width")


def _baseline(lab, request):
    """The non-private baseline for the distance trace (evaluation only): demo data, or the
    data owner view through the Curator's owner path; None for the analyst."""
    bspec = lab.settings.baseline_spec
    ds = request.dataset
    if bspec is None or not lab.raw_allowed(ds):
        return None
    try:
        est = bspec.build(lab.settings.values(bspec), random_state=request.random_state)
        if ds.public:
            return est.fit(ds.X)
        return request.curator.owner_fit(est).value
    except Exception:
        log.warning("baseline failed", exc_info=True)
        return None
