"""Live Gibbs diagnostics: the sampler's mixing statistic and cost traces streamed while it runs
(Wang, Wang & Singh, NIPS 2015, Sec. 4.1 and Fig. 3).

The sampler runs off the server (:mod:`privclust.app.server.sampler`); a per-session periodic
callback drains its queue and streams only the new points into one Bokeh ColumnDataSource
(``ColumnDataSource.stream`` on the session's thread, Panel's "streaming_bokeh" pattern) shared by
three figures built once with the view (a run only streams into them), at most ``MAX_POINTS`` per
chain (the stride between plotted records doubles when the cap is reached). A ``hv.streams.Buffer`` + ``DynamicMap`` would rebuild three overlays and
their ranges on every poll; the direct stream sends only the new rows.
"""

import logging
import math
import threading
import time

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from .. import config
from ..safety import escape
from ..server import session_hooks
from ..server.sampler import GibbsRunner
from ..state import Lab, RunResult, releases
from . import plots, teaching
from .common import teach

log = logging.getLogger(__name__)

METRICS = ("cost", "test_statistic", "distance")
MAX_POINTS = 400  # plotted points per chain and trace
TITLES = {
    "cost": "cost per chain",
    "test_statistic": "test statistic T",
    "distance": "distance to the non-private baseline",
}


def wide_columns(n_chains):
    """The plots' columns: iteration, then ``{metric}_{chain}`` (a row per record)."""
    return ["iteration"] + [f"{m}_{c}" for m in METRICS for c in range(n_chains)]


def _empty_columns(n_chains):
    return {c: np.array([], dtype=float) for c in wide_columns(n_chains)}


def _trace_figure(metric, source, n_chains, x_range):
    """A Bokeh figure with one line per chain (columns ``{metric}_{c}``) on the shared iteration
    axis ``x_range`` (set by the server to the run's length); the y range follows the data in
    the browser. A data-following x range would be recomputed in the browser at every update
    and sent back to the server, once per figure (measured: 3 extra messages and replies per
    poll)."""
    label = {"cost": "cost", "test_statistic": "T", "distance": "distance"}[metric]
    fig = figure(
        width=460,
        height=260,
        title=TITLES[metric],
        x_axis_label="iteration",
        x_range=x_range,
        y_axis_label=label,
        tools="pan,wheel_zoom,box_zoom,reset,save",
        active_scroll=None,
        toolbar_location="above",
    )
    fig.title.text_font_size = "11pt"
    for c in range(n_chains):
        r = fig.line(
            "iteration",
            f"{metric}_{c}",
            source=source,
            line_width=2,
            color=Category10_10[c % 10],
            name=f"chain {c}",
        )
        # drawn by the browser when needed: 2 fewer models per line to send each time the
        # (dynamic) Gibbs tab is opened (190 instead of 238 models for 8 chains)
        r.nonselection_glyph = r.muted_glyph = "auto"
    # While the metric has no value, a note keeps the y range defined: an empty (or all-NaN)
    # data range is NaN, and Bokeh logs "could not set initial ranges" at every draw. The view
    # hides it once there is data (set_has_data), so the y range then follows the data alone.
    note = fig.text(
        x=[0],
        y=[0],
        text=["no data yet"],
        text_align="left",
        text_baseline="middle",
        text_font_size="9pt",
        text_color="#777",
        name="no-data",
    )
    note.nonselection_glyph = note.muted_glyph = "auto"
    return fig


def max_chains(lab):
    """The most chains a Gibbs run of this page may have (the ``n_chains`` parameter's bound)."""
    spec = next((s for s in lab.settings.specs if s.key == "gibbs"), None)
    p = None if spec is None else spec.params.get("n_chains")
    return int(p.bounds[1]) if p is not None and p.bounds else 1


def chain_legend(n_chains):
    """One legend for the three trace figures (HTML above them): a Bokeh legend in each figure
    is redrawn with it at every streamed update, which made tab switches while sampling about
    twice as slow in the browser (benchmarks/app/tour.py)."""
    return " ".join(
        f'<span style="color:{Category10_10[c % 10]};font-weight:bold">&#9644;</span> chain {c}'
        for c in range(n_chains)
    )


def set_has_data(fig, has_data):
    """Show the figure's "no data yet" note only while its traces have no finite value."""
    note = next((r for r in fig.renderers if r.name == "no-data"), None)
    if note is not None and note.visible == bool(has_data):
        note.visible = not has_data


class GibbsView(pn.viewable.Viewer):
    """Start/Stop and live traces (cost, test statistic, distance to baseline, R-hat)."""

    lab = param.ClassSelector(class_=Lab)
    updates = param.Integer(0, doc="diagnostic batches shown so far")
    period_ms = param.Integer(150, doc="how often the traces are refreshed while sampling (ms)")

    def __init__(self, **params):
        super().__init__(**params)
        self.runner = GibbsRunner()
        self._cb = None
        self._doc = None
        self._poll_lock = threading.RLock()
        # the figures are built once, with a line for every chain a run may have (lines of the
        # chains a run does not have are hidden): a run streams data into the same Bokeh models
        self._max_chains = max_chains(self.lab)
        self._wide = wide_columns(self._max_chains)
        self._has_data = {}
        self.source = ColumnDataSource(data=_empty_columns(self._max_chains))
        self.x_range = Range1d(0, 1)
        self.figures = {
            m: _trace_figure(m, self.source, self._max_chains, self.x_range) for m in METRICS
        }
        self._panes = {m: pn.pane.Bokeh(self.figures[m]) for m in METRICS}
        self.legend = pn.pane.HTML("", css_classes=["pc-chain-legend"], margin=(0, 10))
        self._clear_history(1)
        self.start_btn = pn.widgets.Button(
            label="Start sampler", color="primary", css_classes=["pc-gibbs-start"]
        )
        self.stop_btn = pn.widgets.Button(
            label="Stop", color="danger", disabled=True, css_classes=["pc-gibbs-stop"]
        )
        self.start_btn.on_click(lambda e: self.start())
        self.stop_btn.on_click(lambda e: self.runner.stop())
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.info = pn.pane.Markdown("", css_classes=["pc-gibbs-info"], sizing_mode="stretch_width")
        self.message = pn.pane.Alert("", alert_type="danger", visible=False)
        self.spend_demo = pn.pane.Markdown(
            "Demo data: the sampler spends nothing (the page seed applies).",
            css_classes=["pc-gibbs-spend"],
        )
        self.spend_private = pn.pane.Alert(
            "",
            alert_type="warning",
            visible=False,
            css_classes=["pc-gibbs-spend"],
            sizing_mode="stretch_width",
        )
        self._show_spend_note()
        self.runner.param.watch(self._on_running, "running")
        session_hooks.on_session_end(self._cleanup)
        # watched only now that every pane exists: tabs are built lazily on the IO loop while a
        # release on the session's worker thread may already be changing the lab
        lab = self.lab
        lab.param.watch(self._privacy_changed, ["mode"])
        lab.settings.param.watch(self._privacy_changed, ["owner_view"])
        lab.data.param.watch(self._privacy_changed, ["dataset"])
        lab.param.watch(self._show_spend_note, ["mode", "settings_changed"])
        lab.ledger.param.watch(self._show_spend_note, ["spent"])

    # ---- data and plots ------------------------------------------------------------------------
    def _clear_history(self, n_chains, n_iter=1):
        """A new run: empty history and plots, stride 1, the run's chains shown on one iteration
        axis spanning the run."""
        self._n_chains = max(1, min(int(n_chains), self._max_chains))
        self._hist = []  # one wide row (self._wide) per record
        self._last_rhat = None
        self._stride, self._sent, self._final_sent = 1, None, False
        self.source.data = _empty_columns(self._max_chains)
        for fig in self.figures.values():
            # the figure's own renderers, not fig.select_one: a select walks every model the
            # figure references (27 walks were ~60 % of building a session's page)
            lines = {r.name: r for r in fig.renderers}
            for c in range(self._max_chains):
                line = lines[f"chain {c}"]
                if line.visible != (c < self._n_chains):
                    line.visible = c < self._n_chains
        self.legend.object = chain_legend(self._n_chains)
        self._mark_data(None)
        n = max(1, int(n_iter))
        self.x_range.update(start=0, end=n, reset_start=0, reset_end=n)
        self._set_titles()

    def _mark_data(self, columns, append=False):
        """After the source changed: each figure's "no data yet" note stays while its metric
        has no finite value (``columns``: the rows just sent, appended or replacing the source;
        None: the source was emptied)."""
        for m, fig in self.figures.items():
            has = columns is not None and any(
                np.isfinite(columns[f"{m}_{c}"]).any() for c in range(self._n_chains)
            )
            if append:
                has = has or self._has_data.get(m, False)
            if self._has_data.get(m) != has:
                set_has_data(fig, has)
                self._has_data[m] = has

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
                    out[1 + j * self._max_chains + c] = r[m]
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
            self.source.data = cols = self._columns(idx + last)
            self._mark_data(cols)
        else:
            idx = list(range(self._sent * s, n, s))
            self._sent += len(idx)
            if last and not self._final_sent:
                idx += last
                self._final_sent = True
            if not idx:
                return
            cols = self._columns(idx)
            self.source.stream(cols)
            self._mark_data(cols, append=True)
        pn.io.push_notebook(*self._panes.values())  # notebooks only (no-op in a server)

    def _privacy_changed(self, *events):
        """Raw diagnostics in the plots only while they may be shown; re-sent when allowed."""

        def apply():
            with self._poll_lock:
                self._sent = None
                self._set_titles()
                if self._raw_ok():
                    self._stream(final=not self.runner.running)
                else:
                    self.source.data = _empty_columns(self._max_chains)
                    self._mark_data(None)
                if self._hist:
                    self._show_progress()

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
        if (
            (spec is None or spec.key != "gibbs")
            and lab.settings.task == "subspace"
            and "gibbs" in lab.settings.param.algorithm.objects
        ):
            with lab.quietly():  # no blocking demo fit now: the live run's state is the result
                lab.settings.algorithm = "gibbs"
            spec = lab.settings.spec
        if spec is None or spec.key != "gibbs":
            self._alert(
                "The Gibbs sampler belongs to the subspace clustering task: choose it first."
            )
            return False
        if lab.data.dataset is None or self.runner.running:
            return False
        lab.cancel_demo()  # a demo fit of the same sampler still running in the background
        request = lab.capture()  # read once: the run never re-reads the page's state
        spec, values = request.spec, request.settings
        if not request.dataset.public:
            return self._start_private(request)
        est = spec.build(values, random_state=request.random_state, ledger=None)
        reference = self._reference(request)
        self._begin(request, lab.request_key(spec))
        self.runner.start(est, request.dataset.X, reference)
        self._started()
        return True

    def _start_private(self, request):
        """Private data: a live release through the page's release service (the Curator
        refuses or charges first, then samples; the run is stored however it ends)."""
        lab = self.lab
        spec, values, curator = request.spec, request.settings, request.curator
        if curator is None:
            self._alert(
                f"Refused: {lab.ledger.error or 'no budget ledger'}. Nothing was run or charged."
            )
            return False
        try:
            est = spec.build(values, random_state=None, ledger=None)
        except (ValueError, TypeError) as exc:  # the public settings, before anything runs
            self._alert(f"Refused before anything ran: {exc}. Nothing was run or charged.")
            return False
        reference = self._reference(request)
        # the raw traces travel only to a server that offers the data owner view (an operator
        # setting); the view shows them only while that view is on
        started = releases.start_live(
            curator,
            est,
            reference,
            diagnostics=config.owner_view(),
            process=self.runner.process,
            nice=self.runner.nice,
        )
        lab.ledger.refresh()
        if isinstance(started, releases.Outcome):
            if started.not_private and request.owner_view:  # NOT PRIVATE, the owner path
                lab.do_release(request)
                self._alert(
                    "A non-random initialisation is not private: it ran once through "
                    "the data owner path (NOT PRIVATE, no live traces, nothing "
                    "charged).",
                    "warning",
                )
            elif started.not_private:
                self._alert(
                    "Refused: a Gibbs chain started from a non-private solution is not "
                    "private, so it is not offered on private data. Nothing was run or "
                    "charged."
                )
            elif started.status == releases.FROM_STORE:
                lab.do_release(request)
                self._alert(
                    "Identical request: the stored release is shown, nothing was charged.", "info"
                )
            else:
                self._alert(releases.describe(started, spec.label, lab.ledger)[0])
            return False
        self._begin(request, None)
        self.runner.follow(started)
        self._started()
        return True

    def _reference(self, request):
        """The baseline's subspaces for the distance trace (evaluation only: demo data or the
        data owner view; None for the analyst)."""
        base = self.lab.baseline_estimator(request.dataset)
        return None if base is None else getattr(base, "subspaces_", None)

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
            for rec in records:
                self._hist.append(self._wide_row(rec))
                reported = [r["rhat"] for r in rec if np.isfinite(r["rhat"])]
                if reported:
                    self._last_rhat = float(reported[-1])
            if self._raw_ok():
                self._stream()
            self.updates += 1
        self._show_progress()
        if not self.runner.running and self.runner.queue.empty():
            self._finish()

    def _show_progress(self):
        """Progress bar and info line; R-hat (computed on the raw data) only while raw
        diagnostics may be shown."""
        n_iter = self._values.get("n_iter", 1) if hasattr(self, "_values") else 1
        last = float(self._hist[-1][0]) if self._hist else 0.0
        self.progress.value = int(min(100, 100 * last / max(n_iter, 1)))
        r = self._last_rhat if self._raw_ok() and self._n_chains >= 2 else None
        if self.runner.queue_position:  # the server runs at most PRIVCLUST_MAX_SAMPLERS
            self.info.object = (
                f"Waiting for a free sampler: **{self.runner.queue_position}** "
                "in the queue (a class shares this server's samplers; Stop "
                "leaves the queue, nothing is run or charged before it starts)"
            )
            return
        self.info.object = (
            f"iteration **{last:.0f}** of {n_iter} · diagnostic updates "
            f"**{self.updates}**" + (f" · R-hat (cost) **{r:.3f}**" if r is not None else "")
        )

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
            self._alert(lab.failure_text(runner.error, False))
            return
        if getattr(est, "subspaces_", None) is None:
            self._alert(f"Sampler {runner.status}; no state was released.", "warning")
            return
        # the run's own spec/settings/dataset: the controls may have changed while it ran
        result = RunResult(
            key=self._key,
            spec=self._spec,
            settings=self._values,
            estimator=est,
            dataset=self._dataset,
            elapsed=time.perf_counter() - self._t0,
            private_mode=False,
        )
        lab.show(
            result,
            f"Gibbs sampler {runner.status}; the "
            "state is shown in the Clusters, Subspaces and Report tabs.",
        )

    def _finish_private(self):
        lab, runner = self.lab, self.runner
        outcome = releases.live_outcome(runner.live)
        if not outcome.ok:
            self._alert(
                releases.describe(
                    outcome,
                    self._spec.label,
                    lab.ledger,
                    lab.raw_allowed(self._dataset),
                    what="sampler's release",
                )[0]
            )
            return
        release = outcome.release
        result = RunResult(
            key=release.key,
            spec=self._spec,
            settings=self._values,
            estimator=release,
            dataset=self._dataset,
            elapsed=time.perf_counter() - self._t0,
            private_mode=True,
            from_cache=release.from_store,
        )
        stopped = runner.status == "stopped"
        shown = lab.show(
            result,
            f"Gibbs sampler {runner.status}: released the state "
            + ("it reached when stopped" if stopped else "of the last iteration")
            + f", charged ε = {release.cost[0]:g} in full. It is shown in the "
            "Clusters, Subspaces and Report tabs.",
        )
        if not shown:
            self._alert(
                "The dataset changed while the sampler ran: its release is stored with "
                "the other releases of its dataset.",
                "warning",
            )

    def _alert(self, text, kind="danger"):
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
            return pn.pane.Markdown(
                "Private data: the sampler shows progress only. Cost and "
                "distance traces are computed on the raw data (switch on the "
                "data owner view to see them, not private)."
            )
        return pn.Column(
            self.legend,
            pn.Row(self._panes["cost"], self._panes["test_statistic"]),
            self._panes["distance"],
        )

    def _show_spend_note(self, *events):
        """What Start spends, in two panes made once (a re-rendered pane made the next tab
        switch re-style the tab while sampling): only their text and visibility change."""
        lab = self.lab
        private = lab.mode == "private"
        if private:
            spec = lab.settings.spec
            cost = (
                lab.cost_note(spec)
                if spec is not None and spec.key == "gibbs"
                else "Choose the Gibbs sampler to see what Start charges."
            )
            self.spend_private.object = (
                "**Private data: Start is a release.** It is charged to this dataset's budget "
                "before sampling starts (fresh randomness, the seed is ignored); **Stop** still "
                f"releases the state reached so far, charged in full. {escape(cost)}"
            )
        self.spend_demo.visible, self.spend_private.visible = not private, private

    def __panel__(self):
        controls = pn.Row(self.start_btn, self.stop_btn)
        return pn.Column(
            teach(teaching.GIBBS),
            self.spend_demo,
            self.spend_private,
            controls,
            self.progress,
            self.info,
            self.message,
            self._traces,
            sizing_mode="stretch_width",
        )
