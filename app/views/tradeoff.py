"""Trade-off view: utility versus epsilon over a grid x trials (as in the papers' figures), computed
with :func:`privclust.core.experiments.run_sweep` in a worker thread, with progress and Cancel.
Demo data only: on private data every point of the sweep would be a charged release.
"""

import logging
import threading
import time

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

# A sweep fits the algorithm once per point and trial (15 fits by default), so it runs with light
# settings: each parameter is capped here (the sidebar's value is kept when smaller). A Gibbs
# demo of 8 chains x 20,000 iterations would otherwise be repeated 15 times (about 30 s each).
LIGHT = {
    "gibbs": {"n_iter": 200, "n_chains": 2},
    "compressive": {"n_replicates": 1},
    "sulq": {"n_iter": 10},
    "dptaucc": {"n_iter": 4},
}
# the parameters a fit's time grows with (in proportion), for the time estimate
WORK = ("n_iter", "n_chains", "n_replicates")


def light_settings(spec, values):
    """(values with the light caps of ``spec`` applied, {name: (page value, sweep value)} of
    the parameters changed)."""
    out, changed = dict(values), {}
    for name, cap in LIGHT.get(spec.key, {}).items():
        if name in out and out[name] is not None and out[name] > cap:
            changed[name] = (out[name], cap)
            out[name] = cap
    return out, changed


def seconds_per_fit(result, spec, changed):
    """A fit's expected time in the sweep: the last demo fit of the same algorithm (its own
    time, public on demo data), scaled down by the light settings; None without one."""
    if result is None or result.spec.key != spec.key or result.private_mode:
        return None
    scale = 1.0
    for name, (page, light) in changed.items():
        if name in WORK:
            scale *= light / page
    return max(result.elapsed * scale, 0.01)


class SweepCancelled(Exception):
    """Cancel was pressed while a fit was running (the fit stops at its next step)."""


class _Stoppable:
    """An estimator whose ``fit`` stops at its next step once ``stop`` is set (through
    ``iter_fit`` where the estimator steps, e.g. the Gibbs sampler), so Cancel does not wait
    for a long fit to end. Attributes are read from the estimator."""

    def __init__(self, estimator, stop):
        self._estimator, self._stop = estimator, stop

    def __getattr__(self, name):
        return getattr(self._estimator, name)

    def fit(self, X):
        if self._stop.is_set():
            raise SweepCancelled()
        if not hasattr(self._estimator, "iter_fit"):
            self._estimator.fit(X)
            return self
        steps = self._estimator.iter_fit(X)
        try:
            for _ in steps:
                if self._stop.is_set():
                    raise SweepCancelled()
        finally:
            steps.close()
        return self


def score_for(lab):
    """(metric name, score(estimator, X)) for the current task; uses public truth when present."""
    from privclust.core import metrics as m

    ds = lab.data.dataset
    truth = getattr(ds, "truth", {}) or {}
    task = lab.settings.task
    if task == "subspace":
        if "subspaces" in truth:
            return "Wasserstein distance to truth", lambda est, X: m.wasserstein_subspaces(
                est.subspaces_, truth["subspaces"]
            )
        return "subspace cost", lambda est, X: m.subspace_cost(X, est.subspaces_)
    if task == "kmeans":
        base = lab.baseline(lab.result) if lab.result is not None else None
        if base is not None:
            ref = base.cluster_centers_
            return "relative SSE", lambda est, X: m.relative_sse(X, est.cluster_centers_, ref)
        return "SSE", lambda est, X: m.sse(X, est.cluster_centers_)
    if task == "onecluster":
        if "center" in truth:
            return "centre error", lambda est, X: evaluation.planted_distance(
                evaluation.balls_of(est)[0][0], truth
            )
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
        self.cancel_btn.on_click(lambda e: self.cancel())
        self._cancelled_at = None
        # buttons, not a MultiChoice: Bokeh's MultiChoice logs a deprecation warning (Choices.js
        # "allowHTML") in the browser console each time it is drawn
        self.eps = pn.widgets.CheckButtonGroup(
            label="ε grid",
            options=GRID,
            value=GRID[:5],
            color="primary",
            variant="outline",
            css_classes=["pc-sweep-eps"],
        )
        self.trials = pn.widgets.IntSlider.from_param(self.param.n_trials)
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.status = pn.pane.Markdown(
            "", css_classes=["pc-sweep-status"], sizing_mode="stretch_width"
        )
        self.plan = pn.pane.Markdown("", css_classes=["pc-sweep-plan"], sizing_mode="stretch_width")
        self.eps.param.watch(self._plan, "value")
        self.param.watch(self._plan, "n_trials")
        self.lab.param.watch(self._plan, ["result", "settings_changed"])
        self._plan()
        # no empty axes before the first sweep: the tab stays light to render (the
        # server renders the tab each time it is opened, inside the round-trip target)
        self.plot = pn.pane.HoloViews(
            None, visible=False, sizing_mode="stretch_width", css_classes=["pc-tradeoff-plot"]
        )
        self.result = None
        session_hooks.on_session_end(lambda ctx: self._stop.set())

    def cancel(self):
        """Stop the sweep: the running fit stops at its next step, no other fit starts."""
        self._cancelled_at = time.perf_counter()
        self._stop.set()

    def _plan(self, *events):
        """The sweep's size, its light settings and a time estimate, before it runs."""
        n_eps, n = len(self.eps.value or GRID[:5]), self.n_trials
        text = f"Sweep plan: {n_eps} ε values x {n} trial{'s' * (n != 1)} = **{n_eps * n} fits**"
        spec = self.lab.settings.spec
        if spec is not None and spec.private:
            _, changed = light_settings(spec, self.lab.settings.values(spec))
            if changed:
                text += (
                    " with light settings ("
                    + ", ".join(
                        f"{self._label(name)} {light} instead of {page}"
                        for name, (page, light) in changed.items()
                    )
                    + ")"
                )
            per_fit = seconds_per_fit(self.lab.result, spec, changed)
            text += (
                f"; about **{_duration(per_fit * n_eps * n)}**"
                if per_fit is not None
                else "; the time left is estimated after the first fit"
            )
        self.plan.object = text + "."

    def _label(self, name):
        algo = self.lab.settings.algo
        p = algo.param[name] if algo is not None and name in algo.param else None
        return p.label if p is not None and p.label else name

    def start(self, wait=False):
        lab = self.lab
        ds = lab.data.dataset  # read once: the sweep runs on this dataset only
        if ds is not None and not ds.public:
            self.status.object = (
                "Sweeps run on demo data only: on private data every point "
                "would be a release charged to the budget."
            )
            return False
        spec = lab.settings.spec
        if spec is None or not spec.private or ds is None or self.running:
            self.status.object = "Choose a private algorithm first."
            return False
        values, changed = light_settings(spec, lab.settings.values(spec))
        name, score = score_for(lab)
        X = ds.X
        eps = sorted(float(e) for e in (self.eps.value or GRID[:5]))
        stop = self._stop
        t0 = time.perf_counter()
        light = " (light settings)" if changed else ""

        def make(epsilon, seed):
            return _Stoppable(
                spec.build({**values, "epsilon": epsilon}, random_state=int(seed)), stop
            )

        def progress(done, total):
            self.progress.value = int(100 * done / max(total, 1))
            if 0 < done < total and not stop.is_set():
                left = (time.perf_counter() - t0) / done * (total - done)
                self.status.object = (
                    f"Running {len(eps)} ε values x {self.n_trials} trials"
                    f"{light}: {done} of {total} fits done, about "
                    f"{_duration(left)} left."
                )

        def work():
            from privclust.core.experiments import run_sweep

            try:
                df = run_sweep(
                    make,
                    X,
                    eps,
                    n_trials=self.n_trials,
                    score=lambda est, X: {name: score(est, X)},
                    random_state=random_state_for(ds, lab.settings.seed),
                    progress=progress,
                    should_stop=stop.is_set,
                    errors="record",
                )
                if "error" in df:  # a fit stopped by Cancel is not a result
                    df = df[~df["error"].astype(str).str.startswith("SweepCancelled")]
                    df.attrs["stopped"] = True if stop.is_set() else df.attrs.get("stopped")
                df["method"] = spec.label
                self.result = df
                self.plot.param.update(
                    object=plots.tradeoff(df, name, f"{name} vs ε ({spec.label})"), visible=True
                )
                self.status.object = (
                    f"Cancelled: stopped {time.perf_counter() - (self._cancelled_at or t0):.1f} s "
                    f"after Cancel; partial sweep shown ({len(df)} fits)."
                    if stop.is_set()
                    else f"Done: {len(df)} fits{light} in {time.perf_counter() - t0:.1f} s."
                )
            except Exception as exc:
                log.warning("sweep failed", exc_info=True)
                self.status.object = f"Sweep failed: {escape(exc)}"
            finally:
                self.running = False
                self.run_btn.disabled, self.cancel_btn.disabled = False, True

        self._stop.clear()
        self.running = True
        self.run_btn.disabled, self.cancel_btn.disabled = True, False
        self.status.object = f"Running {len(eps)} ε values x {self.n_trials} trials{light}..."
        thread = threading.Thread(target=work, daemon=True, name="privclust-sweep")
        thread.start()
        if wait:
            thread.join()
        return True

    def __panel__(self):
        return pn.Column(
            teach(teaching.TRADEOFF),
            pn.Row(self.run_btn, self.cancel_btn),
            pn.pane.Markdown("ε grid"),
            self.eps,
            self.trials,
            self.plan,
            self.progress,
            self.status,
            self.plot,
            sizing_mode="stretch_width",
        )


def _duration(seconds):
    """Plain words for a duration estimate."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    return f"{seconds / 60:.1f} min"
