"""The Plan tab's model: predict each private algorithm's utility at each epsilon from public
facts alone, before anything is spent, with :func:`privclust.core.experiments.planner.plan_utility`.

The facts are what may be known without a release: the Curator's public facts on private data
(number of features, and the number of records only under the replace-one unit; under add/remove
the user declares n), the dataset's shape on demo data, and the sidebar's task, k, q, t, box and
delta. The planner runs every algorithm of the task on synthetic *twins* (:data:`TWIN_MODES`: one
twin at default settings, an ensemble drawn from the papers' ranges, or bootstraps of a public
sample the owner uploads here), in a worker thread (off the server's IO loop) with progress and
Stop. The caveats of every recommendation name the mode and its calibration on real data
(:data:`CALIBRATION`). Planning reads no record,
calls no release and leaves the ledger untouched; :meth:`PlanModel.apply` only sets the
sidebar's algorithm and epsilon. :meth:`PlanModel.commit` is the one action that spends: the
chosen fixed plan (the cheapest recommended release, or all of them) is charged ONCE at its tight
total, through :meth:`privclust.core.experiments.planner.PlanResult.commit` and
:meth:`privclust.core.release.Curator.release_plan`, and then its releases run; a plan that does
not fit the remaining budget is refused before anything is charged or run.

Totals are computed by :func:`privclust.core.privacy.accounting.plan_accounting.account_plan` (basic
composition, Dwork & Roth 2014, Thm 3.16, and privacy loss distributions, Koskela, Jalko &
Honkela, AISTATS 2020).
"""

import logging
import math
import threading

import param

from privclust.core import algorithms as registry

from . import releases as releases_service
from .lab import Lab
from .settings import EPSILON_GRID

log = logging.getLogger(__name__)

DEFAULT_EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]  # a subset of the sidebar's slider grid
PLAN_GRID = [e for e in EPSILON_GRID if e <= 100.0]

# target metrics per task (what the planner measures), the default target, and the direction
METRICS = {
    "kmeans": ["relative_sse"],
    "subspace": ["wasserstein"],
    "onecluster": ["centre_error", "radius", "coverage"],
    "cocluster": ["nmi"],
}
DEFAULT_TARGET = {
    "kmeans": ("relative_sse", 1.2, False),
    "subspace": ("wasserstein", 1.0, False),
    "onecluster": ("radius", 4.0, True),
    "cocluster": ("nmi", 0.8, True),
}
HIGHER_IS_BETTER = {"nmi", "coverage"}

ONE_TWIN, ENSEMBLE, SAMPLE = "one twin (defaults)", "ensemble (papers' ranges)", "public sample"
TWIN_MODES = [ONE_TWIN, ENSEMBLE, SAMPLE]
SAMPLE_DECLARATION = (
    "Public by your declaration: records you publish, never a part of the "
    "private data; they are used as-is to build twins."
)
# measured on real data: share of (dataset, algorithm, epsilon) cells whose real median fell
# inside the predicted 10-90 % interval (iris, wine, digits, Yale B, cstr, classic3; held-out:
# breast cancer, Yale B with other subjects, digits as counts)
CALIBRATION_FILE = "benchmarks/results/planner/calibration.md"
CALIBRATION = {
    ONE_TWIN: "one twin at defaults: 29 % (23 / 78, measured before the LSH coreset and "
    "Balcan et al. joined the k-means candidates)",
    ENSEMBLE: "facts alone (ensemble of 16 twins): 40 % (42 / 106)",
    SAMPLE: (
        "with a 10 % public sample (16 bootstrap twins): 89 % (94 / 106; k-means 81 / 84, "
        "subspace 11 / 12, co-clustering 2 / 10), 92 % (48 / 52) on held-out and 96 % "
        "(50 / 52) on fresh data sets"
    ),
}
MODE_TEXT = {
    ONE_TWIN: "one twin at default settings, from the public facts only",
    ENSEMBLE: "an ensemble of {n} twins whose difficulty is drawn from the papers' ranges, from "
    "the public facts only",
    SAMPLE: "{n} bootstrap twins (plain and smoothed, envelope of their intervals) of the public "
    "sample {name} ({m} records{labels})",
}


def _box(settings):
    return (float(settings.lower), float(settings.upper))


def planner_settings(settings, family):
    """{planner algorithm: parameters} taken from the sidebar's current algorithm (e.g. the
    sketch size of compressive k-means, DP-τCC's row cap), for the planner variants of its
    registry entry (:mod:`privclust.core.algorithms`), without the parameters a variant sets
    itself (``PlannerVariant.not_passed``)."""
    spec = settings.spec
    out = {}
    if spec is None or settings.algo is None or spec.task != family:
        return out
    values = {p: getattr(settings.algo, p) for p in spec.params}
    for entry, variant in registry.planner_variants(family):
        if entry.key == spec.key:
            out[variant.name] = {
                p: v for p, v in values.items() if v is not None and p not in variant.not_passed
            }
    return out


def kmeans_advice(n, d, k, epsilon, unit="add_remove"):
    """Which private k-means to use for n records (public or declared), d features, k clusters
    at ``epsilon``: markdown from :func:`privclust.core.recommend_kmeans` (the real-data
    benchmark's nearest cells), or a line saying what is missing.  Public facts only."""
    from privclust.core import recommend_kmeans

    if n is None:
        return (
            "**Which private k-means:** declare the number of records (Plan tab) to get a "
            "recommendation from the real-data benchmark."
        )
    relation = unit if unit in ("add_remove", "replace") else "add_remove"
    rec = recommend_kmeans(int(n), int(d), int(k), float(epsilon), relation=relation)
    entry = registry.for_class_name(rec.estimator)
    label = entry.label if entry is not None else rec.estimator
    return (
        f"**Which private k-means** for n = {int(n)}, d = {int(d)}, k = {int(k)}, "
        f"ε = {float(epsilon):g}: **{label}** (expected SSE about "
        f"{rec.expected_relative_sse:.2f} x k-means++; {rec.reason}; "
        "benchmarks/results/sketch/real_data.md)."
    )


def public_shape(lab, n_declared=None):
    """(n or None, d, unit) of the loaded dataset from public facts only (the Curator's on
    private data: n only under the replace-one unit, else ``n_declared``); None without data."""
    ds = lab.data.dataset
    if ds is None:
        return None
    if ds.public:
        n, d = (int(v) for v in ds.shape)
        return n, d, "replace"
    if lab.ledger.curator is None or lab.ledger.dataset is not ds:
        return None
    facts = lab.ledger.public_facts()
    n = facts.get("n_samples")
    return (n if n is not None else n_declared), int(facts["n_features"]), facts["unit"]


def algorithm_label(algorithm):
    """The label of a planner algorithm (its registry variant's), or None when unknown."""
    try:
        return registry.planner_variant(algorithm)[1].label
    except KeyError:
        return None


class PlanModel(param.Parameterized):
    """What the Plan tab asks and shows: the grid, the target, the run state and the results.

    ``start()`` reads the public facts once and runs the plan in a thread; ``stop()`` stops it
    at the next trial; ``apply(algorithm)`` sets the sidebar (no release).
    """

    lab = param.ClassSelector(class_=Lab)
    epsilons = param.List(default=list(DEFAULT_EPSILONS), item_type=float, label="ε grid")
    n_trials = param.Integer(
        10,
        bounds=(1, 20),
        label="trials per ε",
        doc="runs per ε; with an ensemble or a sample, one run on each of this many twins",
    )
    n_declared = param.Integer(
        None,
        bounds=(2, 10**9),
        allow_None=True,
        label="n (records, declared)",
        doc="the number of records: not public under an add/remove "
        "ledger, so the data owner declares it",
    )
    metric = param.Selector(
        default="relative_sse", objects=sum(METRICS.values(), []), label="target metric"
    )
    op = param.Selector(default="<=", objects=["<=", ">="], label="")
    threshold = param.Number(1.2, bounds=(0, None), label="threshold")
    relative = param.Boolean(False, label="x non-private baseline on the twin")
    twin_seed = param.Integer(0, bounds=(0, 10**6), label="twin seed (public)")
    twin = param.Selector(
        default=ENSEMBLE,
        objects=TWIN_MODES,
        label="twins",
        doc="how the twins are built; the public sample mode is chosen when a sample is loaded",
    )
    sample_label = param.String("", label="label column of the sample (CSV header, optional)")
    sample = param.Parameter(None, doc="the loaded public sample: {name, X, labels}")
    sample_error = param.String("", doc="plain text (escape to render)")

    running = param.Boolean(False)
    progress = param.Integer(0, bounds=(0, 100))
    status = param.String("", doc="plain text (escape to render)")
    result = param.Parameter(None, doc="the PlanResult")
    recommendation = param.Parameter(None, doc="PlanResult.recommend(...) of the target")
    totals = param.Parameter(None, doc="[(label, PlanAccounting)] of the recommended releases")
    totals_error = param.String("")
    commit_which = param.Selector(
        default="best",
        objects=["best", "all"],
        label="plan to commit",
        doc="'best': the cheapest recommended release alone; 'all': "
        "every recommended release, composed",
    )
    committed = param.Parameter(
        None, doc="the last committed plan: {accounting, releases, before, after, charge_id}"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._stop = threading.Event()
        self._thread = None
        self._generation = 0
        self._mode = (self.twin, int(self.n_trials), None)
        self.lab.settings.param.watch(self._on_task, "task")
        self.lab.data.param.watch(self._on_dataset, "dataset")
        self.param.watch(self._on_target, ["metric", "op", "threshold", "relative"])
        self._on_task()

    # ---- reactions ----------------------------------------------------------------------------
    def _on_task(self, *events):
        metric, value, relative = DEFAULT_TARGET[self.lab.settings.task]
        self.clear()  # first: a plan of another task has no prediction for the new metrics
        self.param.metric.objects = METRICS[self.lab.settings.task]
        self.param.update(
            metric=metric,
            threshold=value,
            relative=relative,
            op=">=" if metric in HIGHER_IS_BETTER else "<=",
        )

    def _on_dataset(self, *events):
        self.clear()
        if self.sample is not None:  # a sample of the previous data
            self.clear_sample()

    def _on_target(self, *events):
        if any(e.name == "metric" for e in events):
            self.op = ">=" if self.metric in HIGHER_IS_BETTER else "<="
        if self.result is not None and not self.running:
            self._launch(self._evaluate, wait=False)

    def clear(self):
        self._generation += 1
        self._stop.set()
        self.param.update(
            result=None,
            recommendation=None,
            totals=None,
            totals_error="",
            progress=0,
            status="",
            committed=None,
        )

    # ---- public sample --------------------------------------------------------------------------
    def load_sample(self, filename, payload):
        """Parse an uploaded public sample (CSV/TSV with an optional label column named by
        ``sample_label``; .npy; .npz with an optional 'labels' array) with the dashboard's
        upload validation; its features must match the loaded data's. True and the sample mode
        on success; else False and ``sample_error`` naming the file (and row and column)."""
        from ..safety import UploadError, parse_upload

        text = str(filename).lower().endswith((".csv", ".tsv", ".txt"))
        label = (self.sample_label.strip() or None) if text else None  # .npz: 'labels' array
        try:
            d = self.public_info()["n_features"]
            ds = parse_upload(filename, payload, label_column=label)
        except (UploadError, ValueError) as exc:
            hint = (
                "; if that column holds labels, name it as the label column"
                if label is None and "is not a number" in str(exc)
                else ""
            )
            self.sample_error = str(exc) + hint
            return False
        m, d_s = (int(v) for v in ds.shape)
        if d_s != d:
            self.sample_error = (
                f"{ds.name}: {d_s} feature columns, but the loaded data has "
                f"{d}: a public sample needs the same features"
                + ("" if label else " (name its label column, if it has one)")
            )
            return False
        if m < 2:
            self.sample_error = f"{ds.name}: a public sample needs at least 2 records, got {m}"
            return False
        self.clear()
        self.param.update(
            sample={"name": ds.name, "X": ds.X, "labels": ds.labels}, sample_error="", twin=SAMPLE
        )
        return True

    def clear_sample(self):
        """Forget the public sample; back to the ensemble if the sample mode was chosen."""
        self.clear()
        self.param.update(
            sample=None, sample_error="", twin=ENSEMBLE if self.twin == SAMPLE else self.twin
        )

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
            return {
                "name": ds.name,
                "n_samples": n,
                "n_features": d,
                "unit": "replace",
                "n_public": True,
                "private": False,
            }
        if lab.ledger.curator is None or lab.ledger.dataset is not ds:
            raise ValueError(f"this dataset has no budget ledger ({lab.ledger.error or 'none'})")
        facts = lab.ledger.public_facts()
        n = facts.get("n_samples")
        return {
            "name": facts.get("name", ""),
            "n_samples": n if n is not None else self.n_declared,
            "n_features": int(facts["n_features"]),
            "unit": facts["unit"],
            "n_public": n is not None,
            "private": True,
        }

    def facts(self):
        """The :class:`PublicFacts` of the plan (raises ValueError naming what is missing)."""
        from privclust.core.experiments.planner import PublicFacts

        info = self.public_info()
        s, family = self.lab.settings, self.family
        n = info["n_samples"]
        if n is None:
            raise ValueError(
                "the number of records is not public under this ledger's "
                "add/remove unit: declare n (records) first"
            )
        declared = {"delta": float(s.delta) if 0 < s.delta < 1 else None}
        if self.twin == SAMPLE:
            if self.sample is None:
                raise ValueError("load a public sample first (or choose other twins)")
            declared.update(public_sample=self.sample["X"], public_labels=self.sample["labels"])
        if family == "kmeans":
            declared.update(n_clusters=int(s.n_clusters), bounds=_box(s))
        elif family == "subspace":
            declared.update(n_clusters=int(s.n_clusters), subspace_dim=int(s.subspace_dim))
        elif family == "onecluster":
            declared.update(n_points=int(min(s.n_points, n)), bounds=_box(s))
        else:
            declared.update(n_clusters=int(s.n_row_clusters), n_col_clusters=int(s.n_col_clusters))
        try:
            if info["private"]:
                return PublicFacts.from_curator(
                    self.lab.ledger.curator, family, n_samples=int(n), **declared
                )
            return PublicFacts(
                family=family,
                n_samples=int(n),
                n_features=info["n_features"],
                unit=info["unit"],
                **declared,
            )
        except ValueError as exc:
            if "public_" in str(exc) and self.sample is not None:
                raise ValueError(f"{self.sample['name']}: {exc}") from None
            raise

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
        n_trials, seed, mode = int(self.n_trials), int(self.twin_seed), self.twin
        # an ensemble or a sample: one run on each of n_trials twins, as calibrated
        prior = "papers" if mode == ENSEMBLE else None
        n_twins, runs = (None, n_trials) if mode == ONE_TWIN else (n_trials, 1)
        sample = self.sample if mode == SAMPLE else None
        where = {
            ONE_TWIN: "one twin",
            ENSEMBLE: f"{n_trials} ensemble twins",
            SAMPLE: f"{n_trials} bootstrap twins of the public sample",
        }[mode]
        self.clear()
        self._stop = stop = threading.Event()
        gen = self._generation

        def progress(done, total):
            self.progress = int(100 * done / max(total, 1))

        def work():
            from privclust.core.experiments.planner import plan_utility

            result = plan_utility(
                facts,
                epsilons=eps,
                n_trials=runs,
                n_twins=n_twins,
                settings=settings,
                random_state=seed,
                progress=progress,
                should_stop=stop.is_set,
                prior=prior,
            )
            if gen != self._generation:
                return  # the data or the task changed meanwhile: this plan is obsolete
            self._mode = (mode, n_trials, sample)
            self.result = result
            self._evaluate()
            n_alg = result.summary["algorithm"].nunique() if len(result.summary) else 0
            self.status = (
                f"Stopped after {result.seconds:.1f} s: partial plan shown "
                f"({len(result.trials)} runs on the twin)."
                if result.stopped
                else f"Done in {result.seconds:.1f} s: {n_alg} algorithms x {len(eps)} ε "
                f"x {n_trials} trials on {where} of {facts.n_samples} x "
                f"{facts.n_features}."
            ) + " Nothing was charged."

        self.status = (
            f"Planning {len(eps)} ε values x {n_trials} trials on {where} of "
            f"{facts.n_samples} x {facts.n_features}..."
        )
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
            self.param.update(recommendation=None, totals=None, totals_error="no prediction yet")
            return
        if self.metric not in set(result.summary["metric"]):
            self.param.update(
                recommendation=None,
                totals=None,
                totals_error=f"this plan did not measure {self.metric}",
            )
            return
        rec = result.recommend(self.target())
        rec["caveats"] = [self.mode_caveat()] + rec["caveats"]
        totals, error = [], ""
        try:
            totals = recommended_totals(result, rec, float(self.lab.settings.delta))
        except Exception as exc:  # noqa: BLE001 -- e.g. a relation the ledger cannot count
            error = f"{type(exc).__name__}: {exc}"
        self.param.update(recommendation=rec, totals=totals, totals_error=error)

    def mode_caveat(self):
        """Which twins the current plan used, and the measured calibration of each mode."""
        mode, n, sample = self._mode
        text = MODE_TEXT[mode].format(
            n=n,
            name=repr(sample["name"]) if sample else "",
            m=sample["X"].shape[0] if sample else 0,
            labels=", with labels" if sample and sample["labels"] is not None else "",
        )
        measured = "; ".join(
            ("THIS MODE, " if k == mode else "") + CALIBRATION[k] for k in TWIN_MODES
        )
        why = (
            ""
            if mode == SAMPLE
            else ". The public facts do not state the data's geometry "
            "(spread, overlap, subspace angles); a public sample does"
        )
        return (
            f"twins: {text}. Measured on real data ({CALIBRATION_FILE}), the real median "
            f"fell inside the predicted interval in: {measured}{why}"
        )

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
            self.status = (
                "Commit is for private data: demo data has no budget (press Run in "
                "the sidebar instead)."
            )
            return False
        releases = result.recommended_releases(rec, which)
        if not releases:
            self.status = (
                "Nothing to commit: no algorithm reaches the target at a cost this "
                "ledger can count."
            )
            return False
        delta = float(self.lab.settings.delta)
        lab = self.lab
        gen = self._generation

        def work():
            ledger = curator.ledger
            before, n_before = ledger.spent, len(ledger.history)
            try:
                outcome = releases_service.commit_plan(curator, result, releases, delta)
            finally:
                lab.ledger.refresh()
            if outcome.status == releases_service.REFUSED:
                self.status = f"Refused: {outcome.reason}"
                return
            failed = ""
            if outcome.status == releases_service.FAILED:  # charged; details withheld
                failed = (
                    f" Some releases failed after the charge ({outcome.kind}); the budget "
                    "stays spent."
                )
            acc, released = outcome.accounting, outcome.releases
            after, history = ledger.spent, ledger.history
            entry = history[-1] if len(history) == n_before + 1 else None
            names = dict(releases)
            info = {
                "which": which,
                "accounting": acc,
                "before": before,
                "after": after,
                "charge_id": None if entry is None else entry.id,
                "releases": [
                    {"id": r.id, "estimator": r.estimator, "algorithm": alg, "epsilon": names[alg]}
                    for r, (alg, _) in zip(released, releases, strict=True)
                ],
            }
            if gen == self._generation:
                self.committed = info
            eps, dlt = acc.charge
            ids = ", ".join(f"#{r['id']}" for r in info["releases"]) or "none"
            self.status = (
                f"Committed: charged ε {eps:.6g}, δ {dlt:.3g} once (ledger entry "
                f"#{info['charge_id']}), then ran {len(info['releases'])} "
                f"release(s): {ids}. Spent ε {before[0]:.6g} → {after[0]:.6g}." + failed
            )

        eps_total = result.account(releases, delta=delta).charge
        self.status = (
            f"Committing {len(releases)} release(s) at ε {eps_total[0]:.6g}, "
            f"δ {eps_total[1]:.3g}..."
        )
        return self._launch(work, wait)

    # ---- apply ----------------------------------------------------------------------------------
    def reached(self):
        """Planner algorithms that reach the target, cheapest first (uncountable ones last)."""
        rec = self.recommendation
        if rec is None:
            return []
        per = {a: v for a, v in rec["per_algorithm"].items() if v["epsilon"] is not None}
        return sorted(
            per,
            key=lambda a: (
                per[a]["cost"] is None,
                per[a]["cost"] or (math.inf, math.inf),
                a != rec["best"],
            ),
        )

    def apply(self, algorithm=None):
        """Set the sidebar's task, algorithm (and its variant) and epsilon to the recommendation
        for ``algorithm`` (default: the cheapest). Runs nothing on private data, charges nothing."""
        rec, result = self.recommendation, self.result
        reached = self.reached()
        algorithm = algorithm or (
            rec["best"] if rec and rec["best"] else (reached[0] if reached else None)
        )
        if algorithm is None or algorithm not in reached:
            self.status = "Nothing to apply: no algorithm reaches the target on this plan."
            return False
        eps = rec["per_algorithm"][algorithm]["epsilon"]
        entry, variant = registry.planner_variant(algorithm)
        key, fixed = entry.key, {p: variant.params[p] for p in variant.selects}
        s = self.lab.settings
        if s.task != result.facts.family:
            s.task = result.facts.family
        if key not in s.param.algorithm.objects:
            self.status = f"{variant.label} is not offered here."
            return False
        s.algorithm = key
        for name, value in fixed.items():
            if s.algo is not None and name in s.algo.param:
                setattr(s.algo, name, value)
        s.epsilon = float(eps)
        self.status = (
            f"Applied: {variant.label} at ε = {eps:g} in the sidebar. Nothing was "
            "released or charged"
            + (": press Release to spend it." if self.lab.mode == "private" else ".")
        )
        return True


def plan_choices(result, rec):
    """[(label, which, releases)] of the fixed plans a recommendation offers: the cheapest
    recommended release alone ("best") and, when several algorithms reach the target, all of
    them composed ("all"); ``releases`` as :meth:`PlanResult.recommended_releases` gives them."""
    out = []
    best = result.recommended_releases(rec, "best")
    if best:
        out.append((f"{algorithm_label(rec['best']) or rec['best']} alone", "best", best))
    every = result.recommended_releases(rec, "all")
    if len(every) > 1:
        out.append((f"all {len(every)} recommended releases", "all", every))
    return out


def recommended_totals(result, rec, delta=0.0):
    """[(label, PlanAccounting)] of :func:`plan_choices`, by
    :meth:`~privclust.core.experiments.planner.PlanResult.account`: tight totals at
    max(basic delta, ``delta``) so a pure plan is compared at the page's delta. The
    ``charge`` of each is exactly what "Commit plan" charges."""
    return [
        (label, result.account(releases, delta=delta))
        for label, _, releases in plan_choices(result, rec)
    ]


# ---- figure -------------------------------------------------------------------------------------
