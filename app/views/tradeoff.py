"""Trade-off view: utility versus epsilon over a grid x trials (as in the papers' figures), computed
with :func:`privclust.core.experiments.run_sweep` in a worker thread, with progress and Cancel.
Demo data only: on private data every point of the sweep would be a charged release.
"""
import logging
import threading

import numpy as np
import panel as pn
import param

from ..safety import escape
from ..server import session_hooks
from ..state import evaluation, random_state_for
from . import plots, teaching
from .common import View, teach

log = logging.getLogger(__name__)

GRID = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]


def score_for(lab):
    """(metric name, score(estimator, X)) for the current task; uses public truth when present."""
    from privclust.core import metrics as m
    ds = lab.data.dataset
    truth = getattr(ds, "truth", {}) or {}
    task = lab.settings.task
    if task == "subspace":
        if "subspaces" in truth:
            return "Wasserstein distance to truth", lambda est, X: m.wasserstein_subspaces(
                est.subspaces_, truth["subspaces"])
        return "subspace cost", lambda est, X: m.subspace_cost(X, est.subspaces_)
    if task == "kmeans":
        base = lab.baseline(lab.result) if lab.result is not None else None
        if base is not None:
            ref = base.cluster_centers_
            return "relative SSE", lambda est, X: m.relative_sse(X, est.cluster_centers_, ref)
        return "SSE", lambda est, X: m.sse(X, est.cluster_centers_)
    if task == "onecluster":
        if "center" in truth:
            return "centre error", lambda est, X: float(np.linalg.norm(
                evaluation.balls_of(est)[0][0] - truth["center"]))
        return "radius", lambda est, X: float(np.max(evaluation.balls_of(est)[1]))
    if ds.labels is not None:
        return "NMI rows vs labels", lambda est, X: m.nmi(ds.labels, est.row_labels_)
    return "tau(R|C)", lambda est, X: m.tau_rows(est.table_)


class TradeoffView(View):
    """Utility versus epsilon over a grid of epsilons and trials (demo data only)."""

    n_trials = param.Integer(3, bounds=(1, 20), label="trials per ε")
    running = param.Boolean(False)

    def __init__(self, **params):
        super().__init__(**params)
        self._stop = threading.Event()
        self.run_btn = pn.widgets.Button(label="Run sweep", color="primary")
        self.cancel_btn = pn.widgets.Button(label="Cancel", color="danger", disabled=True)
        self.run_btn.on_click(lambda e: self.start())
        self.cancel_btn.on_click(lambda e: self._stop.set())
        # buttons, not a MultiChoice: Bokeh's MultiChoice logs a deprecation warning (Choices.js
        # "allowHTML") in the browser console each time it is drawn
        self.eps = pn.widgets.CheckButtonGroup(name="ε grid", options=GRID, value=GRID[:5],
                                               button_type="primary", button_style="outline",
                                               css_classes=["pc-sweep-eps"])
        self.trials = pn.widgets.IntSlider.from_param(self.param.n_trials)
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.plan = pn.pane.Markdown("", css_classes=["pc-sweep-plan"],
                                     sizing_mode="stretch_width")
        self.eps.param.watch(self._plan, "value")
        self.param.watch(self._plan, "n_trials")
        self._plan()
        # no empty axes before the first sweep: the tab stays light to render (the
        # server renders the tab each time it is opened, inside the round-trip target)
        self.plot = pn.pane.HoloViews(None, visible=False, sizing_mode="stretch_width",
                                      css_classes=["pc-tradeoff-plot"])
        self.result = None
        session_hooks.on_session_end(lambda ctx: self._stop.set())

    def _plan(self, *events):
        n_eps, n = len(self.eps.value or GRID[:5]), self.n_trials
        self.plan.object = (f"Sweep plan: {n_eps} ε values x {n} trial{'s' * (n != 1)} = "
                            f"**{n_eps * n} fits**")

    def start(self, wait=False):
        lab = self.lab
        ds = lab.data.dataset            # read once: the sweep runs on this dataset only
        if ds is not None and not ds.public:
            self.status.object = ("Sweeps run on demo data only: on private data every point "
                                  "would be a release charged to the budget.")
            return False
        spec = lab.settings.spec
        if spec is None or not spec.private or ds is None or self.running:
            self.status.object = "Choose a private algorithm first."
            return False
        values = dict(lab.settings.values(spec))
        name, score = score_for(lab)
        X = ds.X
        eps = sorted(float(e) for e in (self.eps.value or GRID[:5]))

        def make(epsilon, seed):
            return spec.build({**values, "epsilon": epsilon}, random_state=int(seed))

        def progress(done, total):
            self.progress.value = int(100 * done / max(total, 1))

        def work():
            from privclust.core.experiments import run_sweep
            try:
                df = run_sweep(make, X, eps, n_trials=self.n_trials,
                               score=lambda est, X: {name: score(est, X)},
                               random_state=random_state_for(ds, lab.settings.seed),
                               progress=progress,
                               should_stop=self._stop.is_set, errors="record")
                df["method"] = spec.label
                self.result = df
                self.plot.param.update(object=plots.tradeoff(df, name,
                                                             f"{name} vs ε ({spec.label})"),
                                       visible=True)
                self.status.object = ("Cancelled: partial sweep shown." if df.attrs.get("stopped")
                                      else f"Done: {len(df)} fits.")
            except Exception as exc:
                log.warning("sweep failed", exc_info=True)
                self.status.object = f"Sweep failed: {escape(exc)}"
            finally:
                self.running = False
                self.run_btn.disabled, self.cancel_btn.disabled = False, True

        self._stop.clear()
        self.running = True
        self.run_btn.disabled, self.cancel_btn.disabled = True, False
        self.status.object = f"Running {len(eps)} ε values x {self.n_trials} trials..."
        thread = threading.Thread(target=work, daemon=True, name="privclust-sweep")
        thread.start()
        if wait:
            thread.join()
        return True

    def __panel__(self):
        return pn.Column(teach(teaching.TRADEOFF), pn.Row(self.run_btn, self.cancel_btn),
                         pn.pane.Markdown("ε grid"), self.eps, self.trials, self.plan,
                         self.progress, self.status, self.plot,
                         sizing_mode="stretch_width")
