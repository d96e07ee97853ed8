"""Live Gibbs diagnostics: ``GibbsSubspaceClustering.iter_fit`` runs in a worker thread that fills
a queue; a per-session periodic callback drains it into ``hv.streams.Buffer`` plots (panel.md
"Live streaming"; design.md "Gibbs diagnostics"). Stop ends the generator; session end stops both.
"""
import logging
import queue
import threading
import time

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from . import plots, teaching
from .models import Lab, RunResult
from .views import _teach

log = logging.getLogger(__name__)

YIELD_S = 0.003
COLUMNS = ["iteration", "chain", "cost", "test_statistic", "distance", "rhat"]


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


class GibbsRunner(param.Parameterized):
    """Runs ``iter_fit`` in a daemon thread; diagnostics go to ``self.queue``."""

    running = param.Boolean(False)
    status = param.String("")
    produced = param.Integer(0, doc="diagnostic batches produced so far")

    def __init__(self, **params):
        super().__init__(**params)
        self.queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = None
        self.estimator = None
        self.error = None

    def start(self, estimator, X, reference=None):
        if self.running:
            raise RuntimeError("the sampler is already running")
        self._stop.clear()
        self.estimator, self.error = estimator, None
        self.param.update(running=True, status="running", produced=0)
        self._thread = threading.Thread(target=self._run, args=(estimator, X, reference),
                                        daemon=True, name="privclust-gibbs")
        self._thread.start()

    def _run(self, estimator, X, reference):
        gen = None
        try:
            gen = estimator.iter_fit(X, reference=reference)
            for item in gen:
                self.queue.put(diagnostic_rows(item))
                self.produced += 1
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
            self.running = False

    def stop(self):
        self._stop.set()

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def drain(self):
        rows = []
        while True:
            try:
                rows.extend(self.queue.get_nowait())
            except queue.Empty:
                break
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
        self._empty = pd.DataFrame({c: np.array([], dtype=float) for c in COLUMNS})
        self.buffer = hv.streams.Buffer(self._empty, length=200_000, index=False)
        self.data = self._empty
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
        self.traces = {k: hv.DynamicMap(self._trace_fn(k), streams=[self.buffer])
                       for k in ("cost", "test_statistic", "distance")}
        self.runner.param.watch(self._on_running, "running")
        try:
            pn.state.on_session_destroyed(self._cleanup)
        except Exception:  # outside a server session
            pass

    def _trace_fn(self, column):
        def fn(data):
            title = {"cost": "cost per chain", "test_statistic": "test statistic T",
                     "distance": "distance to the non-private baseline"}[column]
            title = plots.mark(title, self.lab.mode == "private")
            curves = {int(c): hv.Curve(_thin(g), "iteration", column)
                      for c, g in data.groupby("chain")} if len(data) else {
                0: hv.Curve(([], []), "iteration", column)}
            return hv.NdOverlay(curves, kdims="chain").opts(
                width=380, height=260, title=title, framewise=True, show_legend=False)
        return fn

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
        values = lab.settings.values(spec)
        private = lab.mode == "private"
        key = lab.request_key(spec)
        if private and key in lab._cache:
            lab.do_release()  # identical request: shown from the cache, no charge
            self._alert("Identical request: the released state is shown from the session "
                        "cache, nothing was charged.", "info")
            return False
        if private and lab.ledger.would_exceed(values["epsilon"], 0.0):
            lab._refuse(values["epsilon"], 0.0)
            self._alert(lab.message)
            return False
        ledger = lab.ledger.ledger if private else None
        est = spec.build(values, random_state=lab.settings.seed, ledger=ledger)
        reference = None
        if lab.raw_allowed(lab.data.dataset):
            base = _baseline(lab)
            reference = None if base is None else getattr(base, "subspaces_", None)
        self._reset()
        self._spec, self._values, self._key = spec, values, key
        self._dataset, self._t0 = lab.data.dataset, time.perf_counter()
        self.message.visible = False
        self.runner.start(est, lab.data.dataset.X, reference)
        self.start_btn.disabled, self.stop_btn.disabled = True, False
        if pn.state.curdoc is not None and self._cb is None:
            self._cb = pn.state.add_periodic_callback(self.poll, period=self.period_ms)
        return True

    def _reset(self):
        self.data = self._empty
        self.buffer.clear()
        self.updates = 0
        self.progress.value = 0

    def poll(self):
        """Drain the queue into the buffer (periodic callback on the session's thread)."""
        df = self.runner.drain()
        if df is not None:
            self.data = pd.concat([self.data, df], ignore_index=True)
            if self._raw_ok():
                self.buffer.send(df)
            self.updates += 1
        n_iter = self._values.get("n_iter", 1) if hasattr(self, "_values") else 1
        last = float(self.data["iteration"].max()) if len(self.data) else 0.0
        self.progress.value = int(min(100, 100 * last / max(n_iter, 1)))
        r = rhat(self.data) if self._raw_ok() else None
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
        if not event.new and self._cb is None:
            self.poll()

    def _finish(self):
        if self._cb is not None:
            self._cb.stop()
            self._cb = None
        self.start_btn.disabled, self.stop_btn.disabled = False, True
        lab, est = self.lab, self.runner.estimator
        if self.runner.error is not None:
            self._alert(lab._failure_text(self.runner.error, lab.mode == "private"))
            lab.ledger.refresh()
            return
        lab.ledger.refresh()
        if getattr(est, "subspaces_", None) is None:
            self._alert(f"Sampler {self.runner.status}; no state was released.", "warning")
            return
        # the run's own spec/settings/dataset: the controls may have changed while it ran
        result = RunResult(key=self._key, spec=self._spec, settings=self._values,
                           estimator=est, dataset=self._dataset,
                           elapsed=time.perf_counter() - self._t0,
                           private_mode=lab.mode == "private")
        lab._cache[self._key] = result
        if self._dataset is not lab.data.dataset:
            self._alert("The dataset changed while the sampler ran: its released state is kept "
                        "in this session's cache, not shown.", "warning")
            return
        lab.param.update(result=result, stale=False)
        lab._say(f"Gibbs sampler {self.runner.status}; the released state is shown in the "
                 "Clusters, Subspaces and Report tabs.", "success")

    def _alert(self, text, kind="danger"):
        from .safety import escape
        self.message.param.update(object=escape(text), alert_type=kind, visible=True)

    def _cleanup(self, session_context=None):
        self.runner.stop()
        if self._cb is not None:
            self._cb.stop()
            self._cb = None

    @param.depends("lab.mode", "lab.settings.owner_view")
    def _traces(self):
        if not self._raw_ok():
            return pn.pane.Markdown("Private data: the sampler shows progress only. Cost and "
                                    "distance traces are computed on the raw data (switch on the "
                                    "data owner view to see them, not private).")
        return pn.Column(pn.Row(pn.pane.HoloViews(self.traces["cost"]),
                                pn.pane.HoloViews(self.traces["test_statistic"])),
                         pn.pane.HoloViews(self.traces["distance"]))

    def __panel__(self):
        controls = pn.Row(self.start_btn, self.stop_btn)
        return pn.Column(_teach(teaching.GIBBS), controls, self.progress, self.info, self.message,
                         self._traces, sizing_mode="stretch_width")


MAX_POINTS = 400


def _thin(df, max_points=MAX_POINTS):
    """At most ``max_points`` evenly spaced rows (always the last): each refresh re-sends the
    whole trace to the browser, so its cost must not grow with the run."""
    if len(df) <= max_points:
        return df
    idx = np.unique(np.r_[np.linspace(0, len(df) - 1, max_points).astype(int), len(df) - 1])
    return df.iloc[idx]


def _baseline(lab):
    bspec = lab.settings.baseline_spec
    if bspec is None:
        return None
    try:
        est = bspec.build(lab.settings.values(bspec), random_state=lab.settings.seed)
        return est.fit(lab.data.dataset.X)
    except Exception:
        log.warning("baseline failed", exc_info=True)
        return None
