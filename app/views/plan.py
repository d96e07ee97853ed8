"""The Plan tab: predicted utility versus epsilon per algorithm (bands for the intervals, the
target line, analytic predictors), the recommendation with Apply, the plan's totals under basic
and tight composition with Commit, and the risk of each epsilon in words (Dwork & Roth 2014,
Sec. 2.3, via :mod:`privclust.core.privacy.risk`). The model is
:class:`privclust.app.state.plan.PlanModel`.
"""

import logging

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from .. import catalogue
from ..safety import escape
from ..server import session_hooks
from ..state import Lab
from ..state.plan import (
    CALIBRATION_FILE,
    PLAN_GRID,
    SAMPLE,
    SAMPLE_DECLARATION,
    PlanModel,
    algorithm_label,
    kmeans_advice,
)
from . import plots
from .common import md, teach, upload_dropper

log = logging.getLogger(__name__)

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
ANALYTIC_FOR = {
    "analytic_relative_sse": "relative_sse",
    "good_radius_bound": "radius",
    "guaranteed_count_fraction": "coverage",
}
TEACH = """**Plan before you spend.** The planner builds synthetic *twins* of your data from
public facts only (size, features, k, the public box), or from a public sample you publish, and
runs every private algorithm on them at each epsilon, so you see which epsilon gives a usable
result before any release. The curves are predictions on the twins, not measurements on your
records."""
TWINS = (
    "**Twins.** From the public facts alone (one twin at default settings, or an ensemble "
    "whose difficulty is drawn from the papers' ranges), or bootstraps of a **public "
    "sample** you upload here. The facts do not state the data's geometry; a sample does: "
    "on real data the predicted interval held the real median in 40 % of cells from facts "
    f"alone and in 89 % with a 10 % public sample ({CALIBRATION_FILE})."
)
SAMPLE_TYPES = [".csv", ".tsv", ".txt", ".npy", ".npz"]
FREE = (
    "**Planning is free:** it reads no record and charges nothing to the ledger; only "
    "Release spends budget."
)


def figure(result, metric, threshold=None):
    """Predicted ``metric`` vs epsilon per algorithm: median (Curve), 10-90 % band (Area), the
    analytic predictor where one exists (dashed), the target (horizontal line); log x axis."""
    s = result.summary[result.summary.metric == metric] if result is not None else None
    title = f"predicted {metric} vs ε (twins; 10–90 % band)"
    if s is None or s.empty:
        return hv.Curve([], "epsilon", metric).opts(title=title, logx=True, width=640, height=360)
    layers = []
    an = result.analytic
    for i, (alg, g) in enumerate(s.groupby("algorithm", sort=False)):
        g = g.sort_values("epsilon")
        color = PALETTE[i % len(PALETTE)]
        eps = g["epsilon"].to_numpy(float)
        label = algorithm_label(alg) or alg
        layers.append(
            hv.Area(
                (eps, g["q10"].to_numpy(float), g["q90"].to_numpy(float)),
                "epsilon",
                [metric, "q90"],
            ).opts(color=color, alpha=0.18, line_alpha=0)
        )
        layers.append(
            hv.Curve((eps, g["median"].to_numpy(float)), "epsilon", metric, label=label).opts(
                color=color, line_width=2
            )
        )
        layers.append(
            hv.Scatter((eps, g["median"].to_numpy(float)), "epsilon", metric).opts(
                color=color, size=5
            )
        )
        for name, target_metric in ANALYTIC_FOR.items():
            a = an[(an.algorithm == alg) & (an.name == name)] if len(an) else an
            if target_metric == metric and len(a):
                a = a.sort_values("epsilon")
                layers.append(
                    hv.Curve(
                        (a["epsilon"].to_numpy(float), a["value"].to_numpy(float)),
                        "epsilon",
                        metric,
                        label=f"{label}: analytic",
                    ).opts(color=color, line_dash="dashed", line_width=1.5)
                )
    if threshold is not None and np.isfinite(threshold):
        layers.append(
            hv.HLine(float(threshold)).opts(color="black", line_dash="dotted", line_width=1.5)
        )
    values = s[["median", "q10", "q90"]].to_numpy(float)
    positive = values[np.isfinite(values)]
    # a wide positive range (relative SSE from ~1 to ~50) reads better on a log axis
    logy = bool(positive.size and positive.min() > 0 and positive.max() / positive.min() > 20)
    # a tick at every planned ε: a log axis alone labels only the powers of ten
    ticks = [(e, f"{e:g}") for e in sorted(set(s["epsilon"].astype(float)))]
    return hv.Overlay(layers).opts(
        logx=True,
        logy=logy,
        responsive=True,
        min_width=500,
        height=380,
        title=title,
        legend_position="right",
        show_grid=True,
        xlabel="ε",
        xticks=ticks,
        padding=0.05,
        fontsize=plots.FONTS,
        hooks=plots.CANVAS,
    )


# ---- texts --------------------------------------------------------------------------------------
def _cost_text(cost, unit):
    if cost is None:
        return "cannot be counted on this ledger"
    eps, delta = cost
    unit_words = "replace-one record" if unit == "replace" else "add/remove one record"
    return f"ε {eps:g}" + (f", δ {delta:.2g}" if delta else "") + f" per {unit_words}"


def recommendation_text(result, rec):
    if rec is None:
        return ""
    unit = result.facts.unit
    lines = [
        f"**Target:** {escape(rec['target'])} (threshold {rec['threshold']:.4g}, "
        f"{rec['statistic']} of the trials)."
    ]
    rows = []
    for alg, v in rec["per_algorithm"].items():
        name = algorithm_label(alg) or escape(alg)
        if v["epsilon"] is None:
            rows.append(f"- {name}: does not reach the target on this grid")
        else:
            med, lo, hi = v["predicted"]
            rows.append(
                f"- {name}: smallest ε **{v['epsilon']:g}** "
                f"(predicted {med:.3g}, 10–90 %: {lo:.3g}–{hi:.3g}); costs "
                f"{_cost_text(v['cost'], unit)}"
            )
    lines.append("\n".join(rows))
    best = rec["best"]
    if best is not None:
        v = rec["per_algorithm"][best]
        name = algorithm_label(best) or escape(best)
        lines.append(
            f"**Cheapest: {name} at ε = {v['epsilon']:g}**, costing {_cost_text(v['cost'], unit)}."
        )
    elif any(v["epsilon"] is not None for v in rec["per_algorithm"].values()):
        lines.append(
            "**Reached, but not at a cost this ledger can count.** A cell-level "
            "release (DP-τCC) needs a public row cap: choose DP-τCC in the sidebar, "
            "set its row cap, and plan again."
        )
    else:
        lines.append(
            "**No algorithm reaches the target on this grid.** Relax the target, "
            "widen the ε grid, or check the declared facts (k, the box)."
        )
    lines.append(
        "*Caveats:* " + " ".join(f"({i + 1}) {escape(c)}." for i, c in enumerate(rec["caveats"]))
    )
    return "\n\n".join(lines)


def totals_text(totals, error=""):
    if error:
        return f"**Plan total:** not available ({escape(error)})."
    if not totals:
        return ""
    rows = [
        "| releases | basic composition | tight (PLD) | charged if committed |",
        "|---|---|---|---|",
    ]
    for label, acc in totals:
        eb, db = acc.basic
        rows.append(
            f"| {escape(label)} | ε {eb:.4g}, δ {db:.2g} | ε {acc.pld_epsilon:.4g} at "
            f"δ {acc.delta:.2g} | ε {acc.charge[0]:.6g}, δ {acc.charge[1]:.2g} |"
        )
    unit = totals[0][1].unit
    return (
        "**Plan total** (in the ledger's unit, "
        + ("replace-one" if unit == "replace" else "add/remove")
        + "): a fixed list of releases chosen before any runs is one mechanism, "
        "so its total can be composed tightly (privacy loss distributions) instead of "
        "summed. **Commit plan** charges the last column once, then runs the releases; "
        "releases made later one by one are added on top.\n\n" + "\n".join(rows)
    )


def committed_text(info):
    """The last committed plan: the one ledger entry, the ledger before and after, and the
    releases it ran (their ids, as the ledger panel lists them)."""
    if not info:
        return ""
    acc = info["accounting"]
    eps, dlt = acc.charge
    before, after = info["before"], info["after"]
    rows = ["| release | algorithm | ε as set | estimator |", "|---|---|---|---|"]
    rows += [
        f"| #{r['id']} | {algorithm_label(r['algorithm']) or escape(r['algorithm'])} | "
        f"{r['epsilon']:g} | {escape(r['estimator'])} |"
        for r in info["releases"]
    ]
    return (
        f"**Plan committed** (ledger entry #{info['charge_id']}): charged **ε {eps:.6g}, "
        f"δ {dlt:.3g}** once ({acc.accounting.upper()}; the basic sum would be ε "
        f"{acc.basic[0]:.6g}, δ {acc.basic[1]:.3g}). Ledger spent: ε {before[0]:.6g}, "
        f"δ {before[1]:.3g} → ε {after[0]:.6g}, δ {after[1]:.3g}. Each release is stored "
        "and can be re-opened from the ledger panel.\n\n" + "\n".join(rows)
    )


def risk_text(rec, totals):
    """Risk in words for the recommended (cheapest) release's charged epsilon."""
    from privclust.core.privacy.risk import risk_sentence

    if rec is None or rec["best"] is None:
        return ""
    best = rec["per_algorithm"][rec["best"]]
    eps, delta = best["cost"]
    where = (
        f"the cheapest release (ε {best['epsilon']:g} as set"
        + (f", ε {eps:g} charged in the ledger's unit" if eps != best["epsilon"] else "")
        + ")"
    )
    return f"**Risk in words**, for {where}: " + risk_sentence(eps, delta if delta < 1 else 0.0)


def risk_frame(epsilons, rec=None):
    """A small table of what the grid's epsilons (and the recommended cost) mean."""
    from privclust.core.privacy.risk import risk_table

    eps = {float(e) for e in epsilons}
    if rec is not None and rec["best"] is not None:
        eps.add(float(rec["per_algorithm"][rec["best"]]["cost"][0]))
    rows = risk_table(sorted(eps))
    return pd.DataFrame(
        [
            {
                "ε": r["epsilon"],
                "odds × at most": f"{r['odds_factor']:.3g}",
                "1 % prior → at most": f"{r['max_posterior_0.01']:.1%}",
                "50 % prior → at most": f"{r['max_posterior_0.5']:.1%}",
            }
            for r in rows
        ]
    )


# ---- view ---------------------------------------------------------------------------------------
class PlanView(pn.viewable.Viewer):
    """The Plan tab (see the module docstring)."""

    lab = param.ClassSelector(class_=Lab)

    def __init__(self, **params):
        super().__init__(**params)
        self.model = m = PlanModel(lab=self.lab)
        # buttons, not a MultiChoice (Bokeh 3.9's MultiChoice logs a console warning)
        self.eps = pn.widgets.CheckButtonGroup.from_param(
            m.param.epsilons,
            options=PLAN_GRID,
            color="primary",
            variant="outline",
            css_classes=["pc-plan-eps"],
        )
        self.trials = pn.widgets.IntSlider.from_param(m.param.n_trials, width=200)
        self.n_declared = pn.widgets.IntInput.from_param(
            m.param.n_declared, css_classes=["pc-plan-n"]
        )
        self.metric = pn.widgets.Select.from_param(m.param.metric, width=160)
        self.op = pn.widgets.Select.from_param(m.param.op, label="compare", width=70)
        self.threshold = pn.widgets.FloatInput.from_param(
            m.param.threshold, step=0.05, width=120, css_classes=["pc-plan-threshold"]
        )
        self.relative = pn.widgets.Checkbox.from_param(m.param.relative)
        self.twin = pn.widgets.Select.from_param(
            m.param.twin, width=240, css_classes=["pc-plan-twin"]
        )
        self.sample_label = pn.widgets.TextInput.from_param(
            m.param.sample_label,
            placeholder="e.g. class",
            width=300,
            css_classes=["pc-plan-sample-label"],
        )
        self.sample_file = self._new_dropper()
        self.sample_md = md("", css_classes=["pc-plan-sample-info"])
        self.forget_btn = pn.widgets.Button(
            label="Forget the sample", visible=False, css_classes=["pc-plan-sample-forget"]
        )
        self.forget_btn.on_click(self._forget)
        self.twins = pn.Column(
            md(TWINS, css_classes=["pc-plan-twins-help"]),
            pn.Row(self.twin, self.sample_label, self.forget_btn),
            self.sample_file,
            self.sample_md,
            sizing_mode="stretch_width",
        )
        self.run_btn = pn.widgets.Button(
            label="Run plan", color="primary", css_classes=["pc-plan-run"]
        )
        self.stop_btn = pn.widgets.Button(
            label="Stop", color="danger", disabled=True, css_classes=["pc-plan-stop"]
        )
        self.run_btn.on_click(lambda e: m.start())
        self.stop_btn.on_click(m.stop)
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.status = md("", css_classes=["pc-plan-status"])
        self.facts_md = md("", css_classes=["pc-plan-facts"])
        self.kmeans_md = md("", css_classes=["pc-plan-kmeans-advice"])
        self.no_plan = md(
            "The plan's predictions, recommendation and totals appear here.",
            css_classes=["pc-plan-none"],
        )
        self.plot = pn.pane.HoloViews(None, visible=False, css_classes=["pc-plan-plot"])
        self.rec_md = md("", css_classes=["pc-plan-rec"])
        self.apply_choice = pn.widgets.Select(
            label="algorithm to apply", options={}, visible=False, width=340
        )
        self.apply_btn = pn.widgets.Button(
            label="Apply to the sidebar",
            color="success",
            visible=False,
            css_classes=["pc-plan-apply"],
        )
        self.apply_btn.on_click(lambda e: m.apply(self.apply_choice.value))
        self.totals_md = md("", css_classes=["pc-plan-total"])
        self.commit_choice = pn.widgets.Select(
            label="plan to commit",
            options={},
            visible=False,
            width=340,
            css_classes=["pc-plan-commit-choice"],
        )
        self.commit_btn = pn.widgets.Button(
            label="Commit plan", color="warning", visible=False, css_classes=["pc-plan-commit"]
        )
        self.commit_btn.on_click(lambda e: m.commit(self.commit_choice.value))
        self.committed_md = md("", css_classes=["pc-plan-committed"])
        self.risk_md = md("", css_classes=["pc-plan-risk"])
        self.risk_table = pn.pane.DataFrame(
            None, index=False, escape=True, visible=False, css_classes=["pc-plan-risk-table"]
        )
        m.param.watch(self._on_run_state, ["running", "progress", "status"])
        m.param.watch(self._on_results, ["result", "recommendation", "totals", "totals_error"])
        m.param.watch(self._on_committed, "committed")
        m.param.watch(self._on_sample, ["sample", "sample_error", "twin"])
        s = self.lab.settings
        s.param.watch(
            self._on_facts,
            [
                "task",
                "n_clusters",
                "subspace_dim",
                "n_points",
                "n_row_clusters",
                "n_col_clusters",
                "lower",
                "upper",
                "delta",
                "epsilon",
            ],
        )
        self.lab.data.param.watch(self._on_facts, "dataset")
        self.lab.ledger.param.watch(self._on_facts, ["active", "unit"])
        m.param.watch(self._on_facts, "n_declared")
        session_hooks.on_session_end(m.stop)
        self._on_facts()
        self._on_run_state()
        self._on_sample()

    def _new_dropper(self):
        return upload_dropper(self._on_sample_file, self._on_reject, SAMPLE_TYPES, "pc-plan-sample")

    def _reset_dropper(self):
        """A refused or forgotten file must not stay listed: a fresh, empty drop zone."""
        self.sample_file = self._new_dropper()
        self.twins[2] = self.sample_file

    def _on_sample_file(self, name, payload):
        if not self.model.load_sample(name, payload):
            pn.state.execute(self._reset_dropper)  # after the dropper's own event

    def _on_reject(self, name, message):
        self.model.sample_error = message
        pn.state.execute(self._reset_dropper)

    def _forget(self, event):
        self.model.clear_sample()
        self._reset_dropper()

    def _on_sample(self, *events):
        m = self.model
        sample = m.sample
        lines = [f"*{SAMPLE_DECLARATION}*"]
        if sample is not None:
            labels = sample["labels"]
            lines.append(
                f"**Public sample loaded:** {escape(sample['name'])}, "
                f"{sample['X'].shape[0]} records x {sample['X'].shape[1]} features, "
                + ("with labels" if labels is not None else "no labels")
                + ("." if m.twin == SAMPLE else " (not used: choose the twins 'public sample').")
            )
        if m.sample_error:
            lines.append(f"**Sample not loaded:** {escape(m.sample_error)}")
        self.sample_md.object = "\n\n".join(lines)
        self.forget_btn.visible = sample is not None

    def _on_facts(self, *events):
        m, s = self.model, self.lab.settings
        try:
            info = m.public_info()
        except ValueError as exc:
            self.facts_md.object = f"**Facts:** {escape(exc)}"
            self.n_declared.visible = False
            self.kmeans_md.object = ""
            return
        self.n_declared.visible = not info["n_public"]
        family = s.task
        if info["n_samples"] is None:
            n_text = "n not public under the add/remove unit: **declare it below**"
        else:
            n_text = f"n = {info['n_samples']}" + ("" if info["n_public"] else " (declared)")
        extra = {
            "kmeans": f"k = {s.n_clusters}, box [{s.lower:g}, {s.upper:g}]",
            "subspace": f"k = {s.n_clusters}, q = {s.subspace_dim}",
            "onecluster": f"t = {s.n_points}, box [{s.lower:g}, {s.upper:g}]",
            "cocluster": f"{s.n_row_clusters} x {s.n_col_clusters} co-clusters",
        }[family]
        where = "private data (the Curator's public facts)" if info["private"] else "demo data"
        self.facts_md.object = (
            f"**Facts used** ({where}: {escape(info['name'])}): task "
            f"{catalogue.TASKS[family]}, {n_text}, d = {info['n_features']}, "
            f"{extra}, δ {s.delta:g}. Set k, q, the box and δ in the "
            "sidebar."
        )
        # numbers and the benchmark's own data set names only: nothing user-derived to escape
        self.kmeans_md.object = (
            kmeans_advice(
                info["n_samples"], info["n_features"], s.n_clusters, s.epsilon, info["unit"]
            )
            if family == "kmeans"
            else ""
        )

    def _on_run_state(self, *events):
        m = self.model
        self.run_btn.disabled, self.stop_btn.disabled = m.running, not m.running
        self.commit_btn.disabled = m.running
        self.progress.value = m.progress
        self.status.object = escape(m.status)

    def _on_committed(self, *events):
        self.committed_md.object = committed_text(self.model.committed)

    def _on_results(self, *events):
        m = self.model
        result, rec = m.result, m.recommendation
        self.no_plan.visible = result is None
        if result is None:
            self.plot.param.update(object=None, visible=False)
            for pane in (self.rec_md, self.totals_md, self.risk_md):
                pane.object = ""
            self.apply_choice.visible = self.apply_btn.visible = self.risk_table.visible = False
            self.commit_choice.visible = self.commit_btn.visible = False
            return
        thr = rec["threshold"] if rec is not None else None
        self.plot.param.update(object=figure(result, m.metric, thr), visible=True)
        self.rec_md.object = recommendation_text(result, rec)
        reached = m.reached()
        self.apply_choice.options = {
            f"{algorithm_label(a) or a} at ε {rec['per_algorithm'][a]['epsilon']:g}": a
            for a in reached
        }
        if reached:
            self.apply_choice.value = reached[0]
        self.apply_choice.visible = self.apply_btn.visible = bool(reached)
        self.totals_md.object = totals_text(m.totals, m.totals_error)
        choices = m.commit_choices() if m.totals else {}
        self.commit_choice.options = choices
        if choices:
            self.commit_choice.value = next(iter(choices.values()))
        self.commit_choice.visible = self.commit_btn.visible = bool(choices)
        self.risk_md.object = risk_text(rec, m.totals)
        self.risk_table.object = risk_frame(result.epsilons, rec)
        self.risk_table.visible = True

    def __panel__(self):
        target = pn.Row(self.metric, self.op, self.threshold, self.relative)
        # the plan's results are busy (Panel's loading state) while a plan runs; Run, Stop and
        # the progress bar stay outside, so Stop can be pressed
        results = pn.Column(
            self.no_plan,
            self.plot,
            self.rec_md,
            pn.Row(self.apply_choice, self.apply_btn),
            self.totals_md,
            pn.Row(self.commit_choice, self.commit_btn),
            self.committed_md,
            self.risk_md,
            self.risk_table,
            loading=self.model.param.running,
            css_classes=["pc-plan-results"],
            sizing_mode="stretch_width",
        )
        return pn.Column(
            teach(TEACH),
            md(FREE, css_classes=["pc-plan-free"]),
            self.facts_md,
            self.kmeans_md,
            self.n_declared,
            self.twins,
            pn.Row(self.eps, self.trials, sizing_mode="stretch_width"),
            "**Utility target**",
            target,
            pn.Row(self.run_btn, self.stop_btn),
            self.progress,
            self.status,
            results,
            sizing_mode="stretch_width",
        )
