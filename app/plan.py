"""Plan tab: predict each private algorithm's utility at each epsilon from public facts alone,
before anything is spent, with :func:`privclust.core.experiments.planner.plan_utility`.

The facts are what may be known without a release: the Curator's public facts on private data
(number of features, and the number of records only under the replace-one unit; under add/remove
the user declares n), the dataset's shape on demo data, and the sidebar's task, k, q, t, box and
delta. The planner runs every algorithm of the task on a synthetic *twin* built from these facts,
in a worker thread (off the server's IO loop) with a progress bar and Stop. Planning reads no
record, calls no release and leaves the ledger untouched; "Apply" only sets the sidebar's
algorithm and epsilon. "Commit plan" is the one action that spends: the chosen fixed plan (the
cheapest recommended release, or all of them) is charged ONCE at the tight total shown, through
:meth:`privclust.core.experiments.planner.PlanResult.commit` and
:meth:`privclust.core.release.Curator.release_plan`, and then its releases run; a plan that does
not fit the remaining budget is refused before anything is charged or run.

Totals of the recommended releases are computed by
:func:`privclust.core.privacy.plan_accounting.account_plan` (basic composition, Dwork & Roth
2014, Thm 3.16, and privacy loss distributions, Koskela, Jalko & Honkela, AISTATS 2020); the
risk sentence and table come from :mod:`privclust.core.privacy.risk` (Dwork & Roth 2014,
Sec. 2.3).
"""
import logging
import math
import threading

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from . import catalogue
from .safety import escape
from .server import session_hooks
from .state import Lab
from .views.common import EPSILON_GRID, md as _md, teach as _teach

log = logging.getLogger(__name__)

DEFAULT_EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]   # a subset of the sidebar's slider grid
PLAN_GRID = [e for e in EPSILON_GRID if e <= 100.0]

# planner algorithm -> (sidebar spec key, sidebar parameters that select this variant)
SIDEBAR = {"ckm": ("compressive", {}),
           "dplloyd": ("dplloyd", {"init": "uniform"}),
           "dplloyd_improved": ("dplloyd", {"init": "sphere_packing"}),
           "gibbs": ("gibbs", {}), "sulq": ("sulq", {}),
           "sample_aggregate": ("sample_aggregate", {}),
           "onecluster": ("onecluster", {}), "dp_taucc": ("dptaucc", {})}
LABELS = {"ckm": "Compressive k-means", "dplloyd": "DPLloyd (uniform init)",
          "dplloyd_improved": "DPLloyd (sphere-packing init)", "gibbs": "Gibbs sampler",
          "sulq": "SuLQ k-planes", "sample_aggregate": "Sample-and-aggregate",
          "onecluster": "1-cluster", "dp_taucc": "DP-τCC"}
# sidebar parameters the planner does not take over: the twin runs short Gibbs chains (a plan
# takes seconds), and the DPLloyd variant is chosen by the planner algorithm itself
NOT_PASSED = {"gibbs": ("n_iter", "n_chains", "record_every", "init"), "dplloyd": ("init",),
              "dplloyd_improved": ("init",)}

# target metrics per task (what the planner measures), the default target, and the direction
METRICS = {"kmeans": ["relative_sse"], "subspace": ["wasserstein"],
           "onecluster": ["centre_error", "radius", "coverage"], "cocluster": ["nmi"]}
DEFAULT_TARGET = {"kmeans": ("relative_sse", 1.2, False), "subspace": ("wasserstein", 1.0, False),
                  "onecluster": ("radius", 4.0, True), "cocluster": ("nmi", 0.8, True)}
HIGHER_IS_BETTER = {"nmi", "coverage"}
# analytic predictors drawn beside the simulated metric they predict
ANALYTIC_FOR = {"analytic_relative_sse": "relative_sse", "good_radius_bound": "radius",
                "guaranteed_count_fraction": "coverage"}

TEACH = """**Plan before you spend.** The planner builds a synthetic *twin* of your data from
public facts only (size, features, k, the public box) and runs every private algorithm on it at
each epsilon, so you see which epsilon gives a usable result before any release. The curves are
predictions on the twin, not measurements on your records."""

FREE = ("**Planning is free:** it reads no record and charges nothing to the ledger; only "
        "Release spends budget.")


def _box(settings):
    return (float(settings.lower), float(settings.upper))


def planner_settings(settings, family):
    """{planner algorithm: parameters} taken from the sidebar's current algorithm (e.g. the
    sketch size of compressive k-means, DP-τCC's row cap), for the planner algorithms it maps to."""
    spec = settings.spec
    out = {}
    if spec is None or settings.algo is None:
        return out
    for name, (key, fixed) in SIDEBAR.items():
        if key != spec.key or spec.task != family:
            continue
        values = {p: getattr(settings.algo, p) for p in spec.params}
        out[name] = {p: v for p, v in values.items()
                     if v is not None and p not in NOT_PASSED.get(name, ()) and p not in fixed}
    return out


class PlanModel(param.Parameterized):
    """What the Plan tab asks and shows: the grid, the target, the run state and the results.

    ``start()`` reads the public facts once and runs the plan in a thread; ``stop()`` stops it
    at the next trial; ``apply(algorithm)`` sets the sidebar (no release).
    """

    lab = param.ClassSelector(class_=Lab)
    epsilons = param.List(default=list(DEFAULT_EPSILONS), item_type=float, label="ε grid")
    n_trials = param.Integer(3, bounds=(1, 20), label="trials per ε")
    n_declared = param.Integer(None, bounds=(2, 10**9), allow_None=True,
                               label="n (records, declared)",
                               doc="the number of records: not public under an add/remove "
                                   "ledger, so the data owner declares it")
    metric = param.Selector(default="relative_sse", objects=sum(METRICS.values(), []),
                            label="target metric")
    op = param.Selector(default="<=", objects=["<=", ">="], label="")
    threshold = param.Number(1.2, bounds=(0, None), label="threshold")
    relative = param.Boolean(False, label="x non-private baseline on the twin")
    twin_seed = param.Integer(0, bounds=(0, 10**6), label="twin seed (public)")

    running = param.Boolean(False)
    progress = param.Integer(0, bounds=(0, 100))
    status = param.String("", doc="plain text (escape to render)")
    result = param.Parameter(None, doc="the PlanResult")
    recommendation = param.Parameter(None, doc="PlanResult.recommend(...) of the target")
    totals = param.Parameter(None, doc="[(label, PlanAccounting)] of the recommended releases")
    totals_error = param.String("")
    commit_which = param.Selector(default="best", objects=["best", "all"],
                                  label="plan to commit",
                                  doc="'best': the cheapest recommended release alone; 'all': "
                                      "every recommended release, composed")
    committed = param.Parameter(None, doc="the last committed plan: {accounting, releases, "
                                          "before, after, charge_id}")

    def __init__(self, **params):
        super().__init__(**params)
        self._stop = threading.Event()
        self._thread = None
        self._generation = 0
        self.lab.settings.param.watch(self._on_task, "task")
        self.lab.data.param.watch(self._on_dataset, "dataset")
        self.param.watch(self._on_target, ["metric", "op", "threshold", "relative"])
        self._on_task()

    # ---- reactions ----------------------------------------------------------------------------
    def _on_task(self, *events):
        metric, value, relative = DEFAULT_TARGET[self.lab.settings.task]
        self.clear()  # first: a plan of another task has no prediction for the new metrics
        self.param.metric.objects = METRICS[self.lab.settings.task]
        self.param.update(metric=metric, threshold=value, relative=relative,
                          op=">=" if metric in HIGHER_IS_BETTER else "<=")

    def _on_dataset(self, *events):
        self.clear()

    def _on_target(self, *events):
        if any(e.name == "metric" for e in events):
            self.op = ">=" if self.metric in HIGHER_IS_BETTER else "<="
        if self.result is not None and not self.running:
            self._launch(self._evaluate, wait=False)

    def clear(self):
        self._generation += 1
        self._stop.set()
        self.param.update(result=None, recommendation=None, totals=None, totals_error="",
                          progress=0, status="", committed=None)

    # ---- facts --------------------------------------------------------------------------------
    @property
    def family(self):
        return self.lab.settings.task

    def public_info(self):
        """What is public about the loaded data: {name, n_features, unit, n_samples (or None),
        n_public}; from the Curator on private data, the shape on demo data. Never the records."""
        lab = self.lab
        ds = lab.data.dataset
        if ds is None:
            raise ValueError("load a dataset first")
        if ds.public:
            n, d = (int(v) for v in ds.shape)
            return {"name": ds.name, "n_samples": n, "n_features": d, "unit": "replace",
                    "n_public": True, "private": False}
        if lab.ledger.curator is None or lab.ledger.dataset is not ds:
            raise ValueError(f"this dataset has no budget ledger ({lab.ledger.error or 'none'})")
        facts = lab.ledger.public_facts()
        n = facts.get("n_samples")
        return {"name": facts.get("name", ""), "n_samples": n if n is not None else self.n_declared,
                "n_features": int(facts["n_features"]), "unit": facts["unit"],
                "n_public": n is not None, "private": True}

    def facts(self):
        """The :class:`PublicFacts` of the plan (raises ValueError naming what is missing)."""
        from privclust.core.experiments.planner import PublicFacts
        info = self.public_info()
        s, family = self.lab.settings, self.family
        n = info["n_samples"]
        if n is None:
            raise ValueError("the number of records is not public under this ledger's "
                             "add/remove unit: declare n (records) first")
        declared = {"delta": float(s.delta) if 0 < s.delta < 1 else None}
        if family == "kmeans":
            declared.update(n_clusters=int(s.n_clusters), bounds=_box(s))
        elif family == "subspace":
            declared.update(n_clusters=int(s.n_clusters), subspace_dim=int(s.subspace_dim))
        elif family == "onecluster":
            declared.update(n_points=int(min(s.n_points, n)), bounds=_box(s))
        else:
            declared.update(n_clusters=int(s.n_row_clusters), n_col_clusters=int(s.n_col_clusters))
        if info["private"]:
            return PublicFacts.from_curator(self.lab.ledger.curator, family, n_samples=int(n),
                                            **declared)
        return PublicFacts(family=family, n_samples=int(n), n_features=info["n_features"],
                           unit=info["unit"], **declared)

    def target(self):
        from privclust.core.experiments.planner import Target
        return Target(self.metric, self.op, float(self.threshold), bool(self.relative))

    # ---- run ------------------------------------------------------------------------------------
    def start(self, wait=False):
        """Run the plan in a worker thread; False (and a status) when it cannot start."""
        if self.running:
            return False
        eps = sorted({float(e) for e in self.epsilons})
        if not eps:
            self.status = "Choose at least one ε."
            return False
        try:
            facts = self.facts()
        except (ValueError, TypeError) as exc:
            self.status = f"Cannot plan yet: {exc}"
            return False
        settings = planner_settings(self.lab.settings, facts.family)
        n_trials, seed = int(self.n_trials), int(self.twin_seed)
        self.clear()
        self._stop = stop = threading.Event()
        gen = self._generation

        def progress(done, total):
            self.progress = int(100 * done / max(total, 1))

        def work():
            from privclust.core.experiments.planner import plan_utility
            result = plan_utility(facts, epsilons=eps, n_trials=n_trials, settings=settings,
                                  random_state=seed, progress=progress, should_stop=stop.is_set)
            if gen != self._generation:
                return  # the data or the task changed meanwhile: this plan is obsolete
            self.result = result
            self._evaluate()
            n_alg = result.summary["algorithm"].nunique() if len(result.summary) else 0
            self.status = ((f"Stopped after {result.seconds:.1f} s: partial plan shown "
                            f"({len(result.trials)} runs on the twin)." if result.stopped else
                            f"Done in {result.seconds:.1f} s: {n_alg} algorithms x {len(eps)} ε "
                            f"x {n_trials} trials on a twin of {facts.n_samples} x "
                            f"{facts.n_features}.") + " Nothing was charged.")

        self.status = (f"Planning {len(eps)} ε values x {n_trials} trials on a twin of "
                       f"{facts.n_samples} x {facts.n_features}...")
        return self._launch(work, wait)

    def _launch(self, fn, wait):
        def run():
            try:
                fn()
            except Exception as exc:  # the twin is public: its messages may be shown
                log.warning("plan failed", exc_info=True)
                self.status = f"Plan failed ({type(exc).__name__}): {exc}"
            finally:
                self.running = False
        self.running = True
        self._thread = threading.Thread(target=run, daemon=True, name="privclust-plan")
        self._thread.start()
        if wait:
            self._thread.join()
        return True

    def stop(self, *args):
        self._stop.set()

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def _evaluate(self):
        """Recommendation and totals of the current result for the current target."""
        result = self.result
        if result is None or result.summary.empty:
            self.param.update(recommendation=None, totals=None,
                              totals_error="no prediction yet")
            return
        if self.metric not in set(result.summary["metric"]):
            self.param.update(recommendation=None, totals=None,
                              totals_error=f"this plan did not measure {self.metric}")
            return
        rec = result.recommend(self.target())
        totals, error = [], ""
        try:
            totals = recommended_totals(result, rec, float(self.lab.settings.delta))
        except Exception as exc:  # noqa: BLE001 -- e.g. a relation the ledger cannot count
            error = f"{type(exc).__name__}: {exc}"
        self.param.update(recommendation=rec, totals=totals, totals_error=error)

    # ---- commit ---------------------------------------------------------------------------------
    def commit_choices(self):
        """{label: "best" or "all"} of the fixed plans that can be committed now: the rows of the
        totals table (the same labels), on private data only."""
        result, rec = self.result, self.recommendation
        if result is None or rec is None or not self._private_curator():
            return {}
        return {label: which for label, which, _ in plan_choices(result, rec)}

    def _private_curator(self):
        lab = self.lab
        ds = lab.data.dataset
        if ds is None or ds.public or lab.ledger.curator is None or lab.ledger.dataset is not ds:
            return None
        return lab.ledger.curator

    def commit(self, which=None, wait=False):
        """Commit a fixed plan on the private data: charged ONCE at the tight total shown in the
        totals table, then its releases run (in the worker thread). ``which``: "best" (the
        cheapest recommended release) or "all" (every recommended release); default
        ``commit_which``. A plan that does not fit the remaining budget is refused before
        anything is charged or run. Returns False (and a status) when it cannot start."""
        which = which or self.commit_which
        if self.running:
            return False
        result, rec = self.result, self.recommendation
        if result is None or rec is None:
            self.status = "Run a plan first: there is nothing to commit."
            return False
        curator = self._private_curator()
        if curator is None:
            self.status = ("Commit is for private data: demo data has no budget (press Run in "
                           "the sidebar instead).")
            return False
        releases = result.recommended_releases(rec, which)
        if not releases:
            self.status = ("Nothing to commit: no algorithm reaches the target at a cost this "
                           "ledger can count.")
            return False
        delta = float(self.lab.settings.delta)
        lab = self.lab
        gen = self._generation

        def work():
            from privclust.core.privacy import BudgetExceeded
            from privclust.core.release import PrivacyRefused, ReleaseFailed
            ledger = curator.ledger
            before, n_before = ledger.spent, len(ledger.history)
            failed = ""
            try:
                acc, released = result.commit(curator, releases, delta=delta)
            except BudgetExceeded as exc:
                text = str(exc).rstrip(".")
                self.status = f"Refused: {text}." + (
                    "" if "nothing was charged" in text else " Nothing was charged or run.")
                return
            except ReleaseFailed as exc:   # charged; str(exc) names only the error type
                log.warning("a release of a committed plan failed: %s", exc.detail)
                acc = result.account(releases, delta=delta)
                released = getattr(exc, "releases", [])
                failed = f" Some releases failed after the charge ({exc}); the budget stays spent."
            except (PrivacyRefused, ValueError, TypeError) as exc:  # before any charge
                self.status = (f"Refused ({type(exc).__name__}): {exc}. Nothing was charged "
                               "or run.")
                return
            finally:
                lab.ledger.refresh()
            after, history = ledger.spent, ledger.history
            entry = history[-1] if len(history) == n_before + 1 else None
            names = dict(releases)
            info = {"which": which, "accounting": acc, "before": before, "after": after,
                    "charge_id": None if entry is None else entry.id,
                    "releases": [{"id": r.id, "estimator": r.estimator,
                                  "algorithm": alg, "epsilon": names[alg]}
                                 for r, (alg, _) in zip(released, releases)]}
            if gen == self._generation:
                self.committed = info
            eps, dlt = acc.charge
            ids = ", ".join(f"#{r['id']}" for r in info["releases"]) or "none"
            self.status = (f"Committed: charged ε {eps:.6g}, δ {dlt:.3g} once (ledger entry "
                           f"#{info['charge_id']}), then ran {len(info['releases'])} "
                           f"release(s): {ids}. Spent ε {before[0]:.6g} → {after[0]:.6g}."
                           + failed)

        eps_total = result.account(releases, delta=delta).charge
        self.status = (f"Committing {len(releases)} release(s) at ε {eps_total[0]:.6g}, "
                       f"δ {eps_total[1]:.3g}...")
        return self._launch(work, wait)

    # ---- apply ----------------------------------------------------------------------------------
    def reached(self):
        """Planner algorithms that reach the target, cheapest first (uncountable ones last)."""
        rec = self.recommendation
        if rec is None:
            return []
        per = {a: v for a, v in rec["per_algorithm"].items() if v["epsilon"] is not None}
        return sorted(per, key=lambda a: (per[a]["cost"] is None,
                                          per[a]["cost"] or (math.inf, math.inf), a != rec["best"]))

    def apply(self, algorithm=None):
        """Set the sidebar's task, algorithm (and its variant) and epsilon to the recommendation
        for ``algorithm`` (default: the cheapest). Runs nothing on private data, charges nothing."""
        rec, result = self.recommendation, self.result
        reached = self.reached()
        algorithm = algorithm or (rec["best"] if rec and rec["best"] else
                                  (reached[0] if reached else None))
        if algorithm is None or algorithm not in reached:
            self.status = "Nothing to apply: no algorithm reaches the target on this plan."
            return False
        eps = rec["per_algorithm"][algorithm]["epsilon"]
        key, fixed = SIDEBAR[algorithm]
        s = self.lab.settings
        if s.task != result.facts.family:
            s.task = result.facts.family
        if key not in s.param.algorithm.objects:
            self.status = f"{LABELS[algorithm]} is not offered here."
            return False
        s.algorithm = key
        for name, value in fixed.items():
            if s.algo is not None and name in s.algo.param:
                setattr(s.algo, name, value)
        s.epsilon = float(eps)
        self.status = (f"Applied: {LABELS[algorithm]} at ε = {eps:g} in the sidebar. Nothing was "
                       "released or charged" + (": press Release to spend it." if
                                                self.lab.mode == "private" else "."))
        return True


def plan_choices(result, rec):
    """[(label, which, releases)] of the fixed plans a recommendation offers: the cheapest
    recommended release alone ("best") and, when several algorithms reach the target, all of
    them composed ("all"); ``releases`` as :meth:`PlanResult.recommended_releases` gives them."""
    out = []
    best = result.recommended_releases(rec, "best")
    if best:
        out.append((f"{LABELS.get(rec['best'], rec['best'])} alone", "best", best))
    every = result.recommended_releases(rec, "all")
    if len(every) > 1:
        out.append((f"all {len(every)} recommended releases", "all", every))
    return out


def recommended_totals(result, rec, delta=0.0):
    """[(label, PlanAccounting)] of :func:`plan_choices`, by
    :meth:`~privclust.core.experiments.planner.PlanResult.account`: tight totals at
    max(basic delta, ``delta``) so a pure plan is compared at the page's delta. The
    ``charge`` of each is exactly what "Commit plan" charges."""
    return [(label, result.account(releases, delta=delta))
            for label, _, releases in plan_choices(result, rec)]


# ---- figure -------------------------------------------------------------------------------------
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def figure(result, metric, threshold=None):
    """Predicted ``metric`` vs epsilon per algorithm: median (Curve), 10-90 % band (Area), the
    analytic predictor where one exists (dashed), the target (horizontal line); log x axis."""
    s = result.summary[result.summary.metric == metric] if result is not None else None
    title = f"predicted {metric} vs ε (twin; 10–90 % band)"
    if s is None or s.empty:
        return hv.Curve([], "epsilon", metric).opts(title=title, logx=True, width=640,
                                                    height=360)
    layers = []
    an = result.analytic
    for i, (alg, g) in enumerate(s.groupby("algorithm", sort=False)):
        g = g.sort_values("epsilon")
        color = PALETTE[i % len(PALETTE)]
        eps = g["epsilon"].to_numpy(float)
        label = LABELS.get(alg, alg)
        layers.append(hv.Area((eps, g["q10"].to_numpy(float), g["q90"].to_numpy(float)),
                              "epsilon", [metric, "q90"]).opts(color=color, alpha=0.18,
                                                               line_alpha=0))
        layers.append(hv.Curve((eps, g["median"].to_numpy(float)), "epsilon", metric,
                               label=label).opts(color=color, line_width=2))
        layers.append(hv.Scatter((eps, g["median"].to_numpy(float)), "epsilon", metric).opts(
            color=color, size=5))
        for name, target_metric in ANALYTIC_FOR.items():
            a = an[(an.algorithm == alg) & (an.name == name)] if len(an) else an
            if target_metric == metric and len(a):
                a = a.sort_values("epsilon")
                layers.append(hv.Curve((a["epsilon"].to_numpy(float), a["value"].to_numpy(float)),
                                       "epsilon", metric, label=f"{label}: analytic").opts(
                    color=color, line_dash="dashed", line_width=1.5))
    if threshold is not None and np.isfinite(threshold):
        layers.append(hv.HLine(float(threshold)).opts(color="black", line_dash="dotted",
                                                      line_width=1.5))
    values = s[["median", "q10", "q90"]].to_numpy(float)
    positive = values[np.isfinite(values)]
    # a wide positive range (relative SSE from ~1 to ~50) reads better on a log axis
    logy = bool(positive.size and positive.min() > 0 and positive.max() / positive.min() > 20)
    return hv.Overlay(layers).opts(logx=True, logy=logy, width=860, height=380, title=title,
                                   legend_position="right", show_grid=True, xlabel="ε")


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
    lines = [f"**Target:** {escape(rec['target'])} (threshold {rec['threshold']:.4g}, "
             f"{rec['statistic']} of the trials)."]
    rows = []
    for alg, v in rec["per_algorithm"].items():
        if v["epsilon"] is None:
            rows.append(f"- {LABELS.get(alg, escape(alg))}: does not reach the target on this grid")
        else:
            med, lo, hi = v["predicted"]
            rows.append(f"- {LABELS.get(alg, escape(alg))}: smallest ε **{v['epsilon']:g}** "
                        f"(predicted {med:.3g}, 10–90 %: {lo:.3g}–{hi:.3g}); costs "
                        f"{_cost_text(v['cost'], unit)}")
    lines.append("\n".join(rows))
    best = rec["best"]
    if best is not None:
        v = rec["per_algorithm"][best]
        lines.append(f"**Cheapest: {LABELS.get(best, escape(best))} at ε = {v['epsilon']:g}**, "
                     f"costing {_cost_text(v['cost'], unit)}.")
    elif any(v["epsilon"] is not None for v in rec["per_algorithm"].values()):
        lines.append("**Reached, but not at a cost this ledger can count.** A cell-level "
                     "release (DP-τCC) needs a public row cap: choose DP-τCC in the sidebar, "
                     "set its row cap, and plan again.")
    else:
        lines.append("**No algorithm reaches the target on this grid.** Relax the target, "
                     "widen the ε grid, or check the declared facts (k, the box).")
    lines.append("*Caveats:* " + " ".join(f"({i + 1}) {escape(c)}."
                                          for i, c in enumerate(rec["caveats"])))
    return "\n\n".join(lines)


def totals_text(totals, error=""):
    if error:
        return f"**Plan total:** not available ({escape(error)})."
    if not totals:
        return ""
    rows = ["| releases | basic composition | tight (PLD) | charged if committed |",
            "|---|---|---|---|"]
    for label, acc in totals:
        eb, db = acc.basic
        rows.append(f"| {escape(label)} | ε {eb:.4g}, δ {db:.2g} | ε {acc.pld_epsilon:.4g} at "
                    f"δ {acc.delta:.2g} | ε {acc.charge[0]:.6g}, δ {acc.charge[1]:.2g} |")
    unit = totals[0][1].unit
    return ("**Plan total** (in the ledger's unit, " + ("replace-one" if unit == "replace" else
            "add/remove") + "): a fixed list of releases chosen before any runs is one mechanism, "
            "so its total can be composed tightly (privacy loss distributions) instead of "
            "summed. **Commit plan** charges the last column once, then runs the releases; "
            "releases made later one by one are added on top.\n\n" + "\n".join(rows))


def committed_text(info):
    """The last committed plan: the one ledger entry, the ledger before and after, and the
    releases it ran (their ids, as the ledger panel lists them)."""
    if not info:
        return ""
    acc = info["accounting"]
    eps, dlt = acc.charge
    before, after = info["before"], info["after"]
    rows = ["| release | algorithm | ε as set | estimator |", "|---|---|---|---|"]
    rows += [f"| #{r['id']} | {LABELS.get(r['algorithm'], escape(r['algorithm']))} | "
             f"{r['epsilon']:g} | {escape(r['estimator'])} |" for r in info["releases"]]
    return (f"**Plan committed** (ledger entry #{info['charge_id']}): charged **ε {eps:.6g}, "
            f"δ {dlt:.3g}** once ({acc.accounting.upper()}; the basic sum would be ε "
            f"{acc.basic[0]:.6g}, δ {acc.basic[1]:.3g}). Ledger spent: ε {before[0]:.6g}, "
            f"δ {before[1]:.3g} → ε {after[0]:.6g}, δ {after[1]:.3g}. Each release is stored "
            "and can be re-opened from the ledger panel.\n\n" + "\n".join(rows))


def risk_text(rec, totals):
    """Risk in words for the recommended (cheapest) release's charged epsilon."""
    from privclust.core.privacy.risk import risk_sentence
    if rec is None or rec["best"] is None:
        return ""
    best = rec["per_algorithm"][rec["best"]]
    eps, delta = best["cost"]
    where = (f"the cheapest release (ε {best['epsilon']:g} as set"
             + (f", ε {eps:g} charged in the ledger's unit" if eps != best["epsilon"] else "")
             + ")")
    return (f"**Risk in words**, for {where}: "
            + risk_sentence(eps, delta if delta < 1 else 0.0))


def risk_frame(epsilons, rec=None):
    """A small table of what the grid's epsilons (and the recommended cost) mean."""
    from privclust.core.privacy.risk import risk_table
    eps = {float(e) for e in epsilons}
    if rec is not None and rec["best"] is not None:
        eps.add(float(rec["per_algorithm"][rec["best"]]["cost"][0]))
    rows = risk_table(sorted(eps))
    return pd.DataFrame([{"ε": r["epsilon"], "odds × at most": f"{r['odds_factor']:.3g}",
                          "1 % prior → at most": f"{r['max_posterior_0.01']:.1%}",
                          "50 % prior → at most": f"{r['max_posterior_0.5']:.1%}"}
                         for r in rows])


# ---- view ---------------------------------------------------------------------------------------
class PlanView(pn.viewable.Viewer):
    """The Plan tab (see the module docstring)."""

    lab = param.ClassSelector(class_=Lab)

    def __init__(self, **params):
        super().__init__(**params)
        self.model = m = PlanModel(lab=self.lab)
        self.eps = pn.widgets.MultiChoice.from_param(m.param.epsilons, options=PLAN_GRID,
                                                     sizing_mode="stretch_width",
                                                     css_classes=["pc-plan-eps"])
        self.trials = pn.widgets.IntSlider.from_param(m.param.n_trials)
        self.n_declared = pn.widgets.IntInput.from_param(m.param.n_declared,
                                                         css_classes=["pc-plan-n"])
        self.metric = pn.widgets.Select.from_param(m.param.metric, width=160)
        self.op = pn.widgets.Select.from_param(m.param.op, width=70)
        self.threshold = pn.widgets.FloatInput.from_param(m.param.threshold, step=0.05, width=120,
                                                         css_classes=["pc-plan-threshold"])
        self.relative = pn.widgets.Checkbox.from_param(m.param.relative)
        self.run_btn = pn.widgets.Button(label="Run plan", color="primary",
                                         css_classes=["pc-plan-run"])
        self.stop_btn = pn.widgets.Button(label="Stop", color="danger", disabled=True,
                                          css_classes=["pc-plan-stop"])
        self.run_btn.on_click(lambda e: m.start())
        self.stop_btn.on_click(m.stop)
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width")
        self.status = _md("", css_classes=["pc-plan-status"])
        self.facts_md = _md("", css_classes=["pc-plan-facts"])
        self.plot = pn.pane.HoloViews(None, visible=False, css_classes=["pc-plan-plot"])
        self.rec_md = _md("", css_classes=["pc-plan-rec"])
        self.apply_choice = pn.widgets.Select(label="algorithm to apply", options={},
                                              visible=False, width=340)
        self.apply_btn = pn.widgets.Button(label="Apply to the sidebar", color="success",
                                           visible=False, css_classes=["pc-plan-apply"])
        self.apply_btn.on_click(lambda e: m.apply(self.apply_choice.value))
        self.totals_md = _md("", css_classes=["pc-plan-total"])
        self.commit_choice = pn.widgets.Select(label="plan to commit", options={}, visible=False,
                                               width=340, css_classes=["pc-plan-commit-choice"])
        self.commit_btn = pn.widgets.Button(label="Commit plan", color="warning", visible=False,
                                            css_classes=["pc-plan-commit"])
        self.commit_btn.on_click(lambda e: m.commit(self.commit_choice.value))
        self.committed_md = _md("", css_classes=["pc-plan-committed"])
        self.risk_md = _md("", css_classes=["pc-plan-risk"])
        self.risk_table = pn.pane.DataFrame(None, index=False, escape=True, visible=False,
                                            css_classes=["pc-plan-risk-table"])
        m.param.watch(self._on_run_state, ["running", "progress", "status"])
        m.param.watch(self._on_results, ["result", "recommendation", "totals", "totals_error"])
        m.param.watch(self._on_committed, "committed")
        s = self.lab.settings
        s.param.watch(self._on_facts, ["task", "n_clusters", "subspace_dim", "n_points",
                                       "n_row_clusters", "n_col_clusters", "lower", "upper",
                                       "delta"])
        self.lab.data.param.watch(self._on_facts, "dataset")
        self.lab.ledger.param.watch(self._on_facts, ["active", "unit"])
        m.param.watch(self._on_facts, "n_declared")
        session_hooks.on_session_end(m.stop)
        self._on_facts()
        self._on_run_state()

    def _on_facts(self, *events):
        m, s = self.model, self.lab.settings
        try:
            info = m.public_info()
        except ValueError as exc:
            self.facts_md.object = f"**Facts:** {escape(exc)}"
            self.n_declared.visible = False
            return
        self.n_declared.visible = not info["n_public"]
        family = s.task
        if info["n_samples"] is None:
            n_text = "n not public under the add/remove unit: **declare it below**"
        else:
            n_text = f"n = {info['n_samples']}" + ("" if info["n_public"] else " (declared)")
        extra = {"kmeans": f"k = {s.n_clusters}, box [{s.lower:g}, {s.upper:g}]",
                 "subspace": f"k = {s.n_clusters}, q = {s.subspace_dim}",
                 "onecluster": f"t = {s.n_points}, box [{s.lower:g}, {s.upper:g}]",
                 "cocluster": f"{s.n_row_clusters} x {s.n_col_clusters} co-clusters"}[family]
        where = "private data (the Curator's public facts)" if info["private"] else "demo data"
        self.facts_md.object = (f"**Facts used** ({where}: {escape(info['name'])}): task "
                                f"{catalogue.TASKS[family]}, {n_text}, d = {info['n_features']}, "
                                f"{extra}, δ {s.delta:g}. Set k, q, the box and δ in the "
                                "sidebar.")

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
        self.apply_choice.options = {f"{LABELS.get(a, a)} at ε "
                                     f"{rec['per_algorithm'][a]['epsilon']:g}": a for a in reached}
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
        return pn.Column(
            _teach(TEACH), _md(FREE, css_classes=["pc-plan-free"]), self.facts_md,
            self.n_declared, pn.Row(self.eps, self.trials, sizing_mode="stretch_width"),
            "**Utility target**", target, pn.Row(self.run_btn, self.stop_btn), self.progress,
            self.status, self.plot, self.rec_md, pn.Row(self.apply_choice, self.apply_btn),
            self.totals_md, pn.Row(self.commit_choice, self.commit_btn), self.committed_md,
            self.risk_md, self.risk_table, sizing_mode="stretch_width")
