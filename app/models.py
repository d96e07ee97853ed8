"""Session state of the dashboard as ``param.Parameterized`` models (no widgets, no Panel):
the dataset, the task + algorithm settings, the budget ledger and the run controller
(design.md "The dashboard", "Privacy rules"; dp-reliability.md 3.1).

One :class:`Lab` per browser session holds everything user-derived; nothing is kept in module
globals or ``pn.state.cache``.
"""
import dataclasses
import os
import time
import traceback
import logging

import numpy as np
import param

from . import algorithms
from .safety import UploadError, parse_upload

log = logging.getLogger(__name__)

STATE_DIR_ENV = "PRIVCLUST_STATE_DIR"
BUDGET_EPSILON_ENV = "PRIVCLUST_BUDGET_EPSILON"
BUDGET_DELTA_ENV = "PRIVCLUST_BUDGET_DELTA"

PRESETS = {
    "union_of_subspaces": ("Union of subspaces (WWS15)", "subspace"),
    "gaussian_mixture": ("Gaussian mixture (SCH19)", "kmeans"),
    "planted_ball": ("Planted small ball (NSV16)", "onecluster"),
    "block_counts": ("Block count matrix (BP25)", "cocluster"),
}


def state_dir():
    """Where the persistent ledger lives: $PRIVCLUST_STATE_DIR or ~/.privclust."""
    path = os.environ.get(STATE_DIR_ENV) or os.path.join(os.path.expanduser("~"), ".privclust")
    os.makedirs(path, exist_ok=True)
    return path


def budget_policy():
    """Total (epsilon, delta) per dataset, a server-side policy (env), not a page control."""
    eps = float(os.environ.get(BUDGET_EPSILON_ENV, "3.0"))
    delta = float(os.environ.get(BUDGET_DELTA_ENV, "1e-4"))
    return eps, delta


class DataModel(param.Parameterized):
    """The dataset of this session: a synthetic preset, a registry set, or an upload."""

    source = param.Selector(default="preset", objects=["preset", "registry", "upload"])
    preset = param.Selector(default="union_of_subspaces", objects=list(PRESETS))
    registry_name = param.Selector(default=None, objects=[], allow_None=True, label="dataset")
    n_samples = param.Integer(1000, bounds=(20, 20000), label="n (records)")
    n_features = param.Integer(10, bounds=(2, 50), label="d (features)")
    n_clusters = param.Integer(3, bounds=(1, 10), label="k (clusters)")
    subspace_dim = param.Integer(3, bounds=(1, 10), label="q (subspace dim)")
    noise = param.Number(0.1, bounds=(0.0, 1.0), step=0.01, label="noise")
    seed = param.Integer(0, bounds=(0, 10**6), label="data seed")

    dataset = param.Parameter(default=None, doc="the current privclust.core.data.Dataset")
    error = param.String(default="", doc="plain-text load/upload error (escape to render)")

    def __init__(self, **params):
        super().__init__(**params)
        self._upload = None
        try:
            from privclust.core.data import list_datasets
            names = [n for n in list_datasets() if n not in PRESETS]
        except Exception:  # registry not available yet or no data dir
            names = []
        self.param.registry_name.objects = names
        if names and self.registry_name is None:
            self.registry_name = names[0]
        self.load()

    @param.depends("source", "preset", "registry_name", "n_samples", "n_features", "n_clusters",
                   "subspace_dim", "noise", "seed", watch=True)
    def load(self):
        """(Re)build the dataset from the current choice; errors go to ``error``."""
        try:
            if self.source == "preset":
                ds = self._make_preset()
            elif self.source == "registry":
                if not self.registry_name:
                    raise ValueError("no registry dataset available")
                from privclust.core.data import get_dataset
                ds = get_dataset(self.registry_name)
            else:
                ds = self._upload
                if ds is None:
                    self.error = ""
                    return
        except UploadError as exc:
            self.error = str(exc)
            return
        except (ValueError, TypeError, KeyError, OSError) as exc:
            self.error = f"could not load the dataset: {exc}"
            return
        self.param.update(dataset=ds, error="")

    def _make_preset(self):
        from privclust.core import data
        d, k = self.n_features, self.n_clusters
        if self.preset == "union_of_subspaces":
            q = min(self.subspace_dim, d - 1)
            return data.make_union_of_subspaces(n_samples=self.n_samples, n_features=d,
                                                n_clusters=k, subspace_dim=q, noise=self.noise,
                                                random_state=self.seed)
        if self.preset == "gaussian_mixture":
            return data.make_gaussian_mixture(n_samples=self.n_samples, n_features=d,
                                              n_clusters=k, random_state=self.seed)
        if self.preset == "planted_ball":
            return data.make_planted_ball(n_samples=self.n_samples, n_features=d,
                                          std=max(self.noise, 1e-3) / 5,
                                          random_state=self.seed)
        return data.make_block_counts(n_rows=self.n_samples, n_cols=max(20, self.n_samples // 2),
                                      n_row_clusters=k, n_col_clusters=k,
                                      random_state=self.seed)

    def upload(self, filename, payload):
        """Parse an uploaded file (validated, size-capped); it becomes this session's dataset."""
        try:
            ds = parse_upload(filename, payload)
        except UploadError as exc:
            self.error = str(exc)
            return False
        self._upload = ds
        if self.source == "upload":
            self.param.update(dataset=ds, error="")
        else:
            self.source = "upload"
        return True

    @property
    def suggested_task(self):
        if self.source == "preset":
            return PRESETS[self.preset][1]
        return None


class SettingsModel(param.Parameterized):
    """Task, algorithm and privacy settings; ``algo`` holds the estimator-specific parameters."""

    task = param.Selector(default="subspace", objects=list(algorithms.TASKS))
    algorithm = param.Selector(default=None, objects=[], allow_None=True)
    epsilon = param.Number(1.0, bounds=(0.01, 1000.0), label="ε (epsilon)")
    delta = param.Number(1e-5, bounds=(0.0, 0.1), label="δ (delta)")
    n_clusters = param.Integer(3, bounds=(1, 20), label="k (clusters)")
    subspace_dim = param.Integer(3, bounds=(1, 20), label="q (subspace dim)")
    n_row_clusters = param.Integer(3, bounds=(1, 20), label="row clusters")
    n_col_clusters = param.Integer(3, bounds=(1, 20), label="column clusters")
    n_points = param.Integer(500, bounds=(1, 10**7), label="t (points in the ball)")
    lower = param.Number(-5.0, label="public box: lower")
    upper = param.Number(5.0, label="public box: upper")
    seed = param.Integer(0, bounds=(0, 10**6), label="random seed")
    owner_view = param.Boolean(False, label="data owner view (not private)")
    algo = param.Parameter(default=None, doc="param.Parameterized of the algorithm's params")

    def __init__(self, specs=None, **params):
        self._specs = algorithms.SPECS if specs is None else specs
        super().__init__(**params)
        self._update_algorithms()

    @property
    def specs(self):
        return self._specs

    @param.depends("task", watch=True)
    def _update_algorithms(self):
        keys = [s.key for s in algorithms.for_task(self.task, self._specs)]
        self.param.algorithm.objects = keys
        private = [k for k in keys if algorithms.by_key(k, self._specs).private]
        if self.algorithm not in keys:
            self.algorithm = (private or keys or [None])[0]
        else:
            self._update_algo()

    @param.depends("algorithm", watch=True)
    def _update_algo(self):
        self.algo = self.spec.parameterized() if self.spec is not None else None

    @property
    def spec(self):
        return None if self.algorithm is None else algorithms.by_key(self.algorithm, self._specs)

    @property
    def baseline_spec(self):
        key = algorithms.BASELINE.get(self.task)
        for spec in self._specs:
            if spec.task == self.task and spec.key == key and spec.available():
                return spec
        return None

    def values(self, spec=None):
        """The flat settings dict an estimator is built from (only what ``spec`` uses)."""
        spec = spec or self.spec
        out = {name: getattr(self, name) for name in spec.task_params}
        if spec is self.spec and self.algo is not None:
            out.update({name: getattr(self.algo, name) for name in spec.params})
        else:
            out.update({name: p.default for name, p in spec.params.items()})
        if spec.uses_epsilon:
            out["epsilon"] = float(self.epsilon)
        if spec.uses_delta:
            out["delta"] = float(self.delta)
        if spec.bounds:
            out["lower"], out["upper"] = float(self.lower), float(self.upper)
        return out

    def adapt_to(self, dataset, task=None):
        """Take k, q, box and task defaults from public generator settings (never from data)."""
        if task is not None and task != self.task:
            self.task = task
        truth = getattr(dataset, "truth", {}) or {}
        if not getattr(dataset, "public", False):
            return
        upd = {}
        if "subspaces" in truth:
            k, _, q = np.shape(truth["subspaces"])
            upd.update(n_clusters=int(k), subspace_dim=int(q), lower=-1.0, upper=1.0)
        if "centers" in truth:
            upd.update(n_clusters=len(truth["centers"]))
            if "scale" in truth:  # public generator setting: centres N(0, scale^2), unit noise
                half = float(np.ceil(3 * truth["scale"] + 4))
                upd.update(lower=-half, upper=half)
        if "bounds" in truth:
            upd.update(lower=float(truth["bounds"][0]), upper=float(truth["bounds"][1]))
        if "inliers" in truth:
            upd.update(n_points=max(1, int(np.sum(truth["inliers"]))))
        if "row_labels" in truth:
            upd.update(n_row_clusters=int(np.max(truth["row_labels"]) + 1),
                       n_col_clusters=int(np.max(truth["column_labels"]) + 1))
        self.param.update(**upd)


@dataclasses.dataclass
class RunResult:
    """One run: the fitted private estimator, its guarantee, and how it was obtained."""

    key: tuple
    spec: algorithms.AlgorithmSpec
    settings: dict
    estimator: object
    dataset: object
    elapsed: float
    private_mode: bool
    from_cache: bool = False
    baseline: object = None
    baseline_spec: object = None

    @property
    def guarantee(self):
        return getattr(self.estimator, "privacy_", None)


class LedgerModel(param.Parameterized):
    """The persistent budget ledger of the current private dataset, for display."""

    total = param.Tuple(default=(0.0, 0.0), length=2)
    spent = param.Tuple(default=(0.0, 0.0), length=2)
    remaining = param.Tuple(default=(0.0, 0.0), length=2)
    history = param.List(default=[])
    active = param.Boolean(False)

    def __init__(self, path=None, **params):
        super().__init__(**params)
        self._path = path
        self.ledger = None

    def open(self, dataset):
        """Open (or create) the ledger of ``dataset``; demo data gets none."""
        if dataset is None or getattr(dataset, "public", True):
            self.ledger = None
            self.param.update(active=False, history=[])
            return
        from privclust.core.privacy import Ledger
        eps, delta = budget_policy()
        path = self._path or os.path.join(state_dir(), "ledger.sqlite")
        self.ledger = Ledger(eps, delta, path=path, dataset=dataset.fingerprint)
        self.refresh()
        self.active = True

    def refresh(self):
        if self.ledger is None:
            return
        lg = self.ledger
        self.param.update(total=_pair(getattr(lg, "epsilon", None), getattr(lg, "delta", 0.0)),
                          spent=_pair(*_as_pair(lg.spent)), remaining=_pair(*_as_pair(lg.remaining)),
                          history=[_entry(h) for h in lg.history])

    def would_exceed(self, epsilon, delta):
        """True when a charge of (epsilon, delta) cannot fit (an early, clearer refusal)."""
        if self.ledger is None:
            return False
        eps_left, delta_left = _as_pair(self.ledger.remaining)
        tol = 1e-9
        return epsilon > eps_left * (1 + tol) + 1e-15 or delta > delta_left * (1 + tol) + 1e-18


def _as_pair(value):
    if isinstance(value, (tuple, list)):
        return float(value[0]), float(value[1]) if len(value) > 1 else 0.0
    return float(value), 0.0


def _pair(a, b):
    return (float(a) if a is not None else float("nan"), float(b or 0.0))


def _entry(h):
    """A history row as a plain dict: when, what, epsilon, delta."""
    if isinstance(h, dict):
        d = dict(h)
    elif dataclasses.is_dataclass(h):
        d = dataclasses.asdict(h)
    elif isinstance(h, (tuple, list)):
        d = dict(zip(("when", "what", "epsilon", "delta"), h))
    else:
        d = {k: getattr(h, k) for k in ("when", "what", "epsilon", "delta") if hasattr(h, k)}
    return d


class Lab(param.Parameterized):
    """The run controller of one session (design.md "Two modes").

    Demo data (``dataset.public``): every settings change re-runs (through ``schedule``, which
    the page debounces), nothing is charged. Private data: nothing runs until :meth:`release`;
    the ledger is charged first (by the estimator, before it touches the data), identical
    requests come from the session cache, and a request over budget is refused.
    """

    mode = param.Selector(default="demo", objects=["demo", "private"], constant=True)
    result = param.Parameter(default=None)
    message = param.String(default="", doc="plain text shown in the status alert")
    message_kind = param.Selector(default="info", objects=["info", "success", "warning", "danger"])
    running = param.Boolean(False)
    stale = param.Boolean(False, doc="private mode: settings changed since the last release")
    release = param.Event(label="Release")
    n_runs = param.Integer(0, doc="estimator fits started by this session")

    def __init__(self, data=None, settings=None, ledger=None, specs=None, schedule=None,
                 worker=None, ledger_path=None, **params):
        super().__init__(**params)
        self.data = data or DataModel()
        self.settings = settings or SettingsModel(specs=specs)
        self.ledger = ledger or LedgerModel(path=ledger_path)
        # schedule(fn): how a demo re-run is requested (the page debounces it and runs it off the
        # server's IO loop); worker(fn): where a Release runs (the page: the session's worker
        # thread). Both default to running inline, which is what model tests want.
        self.schedule = schedule or (lambda fn: fn())
        self.worker = worker or (lambda fn: fn())
        self._cache = {}
        self._quiet = False
        self._generation = 0  # bumped by every new demo request: a running demo fit stops
        self._failure_detail = None  # the withheld message of a failure on private data
        self.settings.param.watch(self._on_owner_view, "owner_view")
        self.data.param.watch(self._on_dataset, ["dataset"])
        self.settings.param.watch(self._on_settings, [
            p for p in self.settings.param if p not in ("name", "owner_view")])
        self._algo_watcher = None
        self._watch_algo()
        self._on_dataset()

    # ---- reactions --------------------------------------------------------------------------
    def _watch_algo(self):
        if self._algo_watcher is not None:
            self._algo_watcher[0].param.unwatch(self._algo_watcher[1])
            self._algo_watcher = None
        algo = self.settings.algo
        if algo is not None:
            names = [p for p in algo.param if p != "name"]
            self._algo_watcher = (algo, algo.param.watch(self._on_settings, names))

    def _on_dataset(self, *events):
        ds = self.data.dataset
        private = ds is not None and not ds.public
        with param.edit_constant(self):
            self.mode = "private" if private else "demo"
        self.settings.owner_view = False if private else self.settings.owner_view
        self.ledger.open(ds)
        self.cancel_demo()
        self.result = None
        if ds is not None:
            self._quiet = True
            try:
                self.settings.adapt_to(ds, self.data.suggested_task)
            finally:
                self._quiet = False
            self._watch_algo()
        if private:
            self._say("Private data: nothing runs until you press Release. Each release is "
                      "charged to this dataset's budget first.", "warning")
            self.stale = True
        else:
            self.request_run()

    def _on_settings(self, *events):
        if any(e.name == "algo" for e in events):
            self._watch_algo()
        if self._quiet:
            return
        if self.mode == "demo":
            self.request_run()
        else:
            self.stale = True

    @param.depends("release", watch=True)
    def _on_release(self):
        ds = self.data.dataset

        def job():  # runs on the session's worker: only for the data the person released on
            if self.data.dataset is not ds:
                self._say("The dataset changed before the release started: nothing was run "
                          "or charged.", "warning")
                return None
            return self.do_release()
        self.worker(job)

    # ---- actions ----------------------------------------------------------------------------
    def request_run(self):
        """Demo mode: (re-)run through the debouncing scheduler."""
        self.cancel_demo()
        if self.mode == "demo":
            self.schedule(self.run_demo)

    def cancel_demo(self):
        """Stop a demo fit that is still running (one with ``iter_fit``, e.g. the Gibbs sampler,
        stops at its next record); a newer request or other data supersedes it."""
        self._generation += 1

    def request_key(self, spec=None):
        spec = spec or self.settings.spec
        values = self.settings.values(spec)
        ds = self.data.dataset
        return (ds.fingerprint if ds is not None else None, spec.key,
                tuple(sorted((k, _hashable(v)) for k, v in values.items())), self.settings.seed)

    def run_demo(self):
        """Fit on demo data; never touches a ledger."""
        if self.mode != "demo" or self.data.dataset is None or self.settings.spec is None:
            return None
        return self._fit(ledger=None)

    def do_release(self):
        """Private mode: cache hit, or refuse over budget, or charge-then-fit."""
        if self.data.dataset is None or self.settings.spec is None:
            self._say("Choose a dataset and an algorithm first.", "warning")
            return None
        if self.mode == "demo":
            return self.run_demo()
        key = self.request_key()
        if key in self._cache:
            cached = dataclasses.replace(self._cache[key], from_cache=True)
            self.param.update(result=cached, stale=False)
            self._say("Identical request: shown from this session's cache. Nothing was charged.",
                      "info")
            return cached
        spec = self.settings.spec
        values = self.settings.values(spec)
        eps, delta = values.get("epsilon", 0.0), values.get("delta", 0.0)
        if spec.private and self.ledger.would_exceed(eps, delta):
            return self._refuse(eps, delta)
        return self._fit(ledger=self.ledger.ledger, key=key)

    def _refuse(self, eps, delta, detail=""):
        left = self.ledger.remaining
        self._say(f"Refused: this release needs ε = {eps:g}" + (f", δ = {delta:g}" if delta else "")
                  + f" but only ε = {left[0]:g}, δ = {left[1]:g} remain for this dataset. "
                  "Nothing was run or charged." + (f" ({detail})" if detail else ""), "danger")
        return None

    def _fit(self, ledger, key=None):
        from privclust.core.privacy import BudgetExceeded
        spec = self.settings.spec
        ds = self.data.dataset
        values = self.settings.values(spec)
        key = key or self.request_key(spec)
        private = self.mode == "private"
        if not private and key in self._cache:
            self.result = self._cache[key]
            return self.result
        self.running = True
        t0 = time.perf_counter()
        reading = False  # has the failure (if any) happened while reading the data?
        try:
            est = spec.build(values, random_state=self.settings.seed, ledger=ledger)
            if private and spec.private and getattr(est, "ledger", None) is not ledger:
                # an estimator that does not take ledger= is charged here, still before fit
                from privclust.core.privacy import charge
                charge(ledger, values.get("epsilon", 0.0), values.get("delta", 0.0),
                       what=_what(spec, values))
            self.n_runs += 1
            reading = True
            if not private and hasattr(est, "iter_fit"):
                token = self._generation
                steps = est.iter_fit(ds.X)
                try:
                    for _ in steps:
                        if self._generation != token:
                            return None  # superseded: a newer request will show its result
                finally:
                    steps.close()
            else:
                est.fit(ds.X)
        except BudgetExceeded as exc:
            self.ledger.refresh()
            return self._refuse(values.get("epsilon", 0.0), values.get("delta", 0.0), str(exc))
        except Exception as exc:
            self.ledger.refresh()
            log.warning("run failed: %s", traceback.format_exc(limit=3))
            text = self._failure_text(exc, private, about_data=reading)
            self._say(text, "danger")
            full = self._failure_text(exc, private, about_data=False)
            self._failure_detail = full if full != text else None
            self.result = None
            return None
        finally:
            self.running = False
        result = RunResult(key=key, spec=spec, settings=values, estimator=est, dataset=ds,
                           elapsed=time.perf_counter() - t0, private_mode=private)
        self._cache[key] = result
        self.ledger.refresh()
        if ds is not self.data.dataset:  # the data changed while this ran (worker thread)
            if private:
                self._say("The dataset changed while the release ran: its result is kept in "
                          "this session's cache (an identical Release shows it, uncharged).",
                          "warning")
            return None
        self.param.update(result=result, stale=False)
        if private:
            self._say(f"Released {spec.label} at ε = {values.get('epsilon', 0):g}; charged to "
                      "the ledger before it ran.", "success")
        else:
            self._say("Demo data: results follow the sliders, no budget is spent.", "info")
        return result

    def baseline(self, result=None):
        """The non-private baseline for a result (computed lazily, cached per session).

        On private data it is evaluation only: views show it only in the data owner view.
        """
        result = result or self.result
        bspec = self.settings.baseline_spec
        if result is None or bspec is None:
            return None
        if result.baseline is None:
            values = self.settings.values(bspec)
            try:
                est = bspec.build(values, random_state=self.settings.seed)
                est.fit(result.dataset.X)
            except Exception:
                log.warning("baseline failed: %s", traceback.format_exc(limit=3))
                return None
            result.baseline, result.baseline_spec = est, bspec
        return result.baseline

    def _failure_text(self, exc, private, about_data=True, charged=True):
        """The message shown for a failed run. A failure while reading private data (``fit``,
        or the Gibbs sampler's checks before its charge) may describe the records in its
        message (a count, a value), so outside the data owner view only its type is shown;
        errors in the settings (``about_data=False``: building the estimator, before any data
        is read) are always shown in full. ``charged``: whether the budget was spent."""
        kind = type(exc).__name__
        if private and about_data and not self.settings.owner_view:
            text = (f"The run failed ({kind}). Its message may describe the private data: the "
                    "data owner view (not private) shows it.")
        elif isinstance(exc, (ValueError, TypeError)):
            text = f"The run failed ({kind}): {exc}"
        else:
            text = f"The run failed ({kind})."
        if private:
            text += (" The budget charged for it stays spent." if charged
                     else " Nothing was run or charged.")
        return text

    def _on_owner_view(self, event):
        """Switching the data owner view on shows the message of a failure withheld above."""
        if event.new and self._failure_detail:
            self._say(self._failure_detail + " (data owner view: not private)", "danger")

    def _say(self, text, kind="info"):
        self._failure_detail = None
        self.param.update(message=text, message_kind=kind)

    def raw_allowed(self, dataset):
        """May the page show things computed on the raw records of ``dataset``? Public (demo)
        data: yes. Private data: only in the data owner view, and only for the dataset now
        loaded (a run that finished after the data changed never unlocks raw displays)."""
        if dataset is None:
            return False
        if getattr(dataset, "public", False):
            return True
        return bool(self.settings.owner_view) and dataset is self.data.dataset

    @property
    def show_raw(self):
        """May the page show things computed on the raw data of the current result (or of the
        loaded dataset when there is no result)? See :meth:`raw_allowed`."""
        result = self.result
        return self.raw_allowed(result.dataset if result is not None else self.data.dataset)


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return v


def _what(spec, values):
    main = ", ".join(f"{k}={v}" for k, v in values.items())
    return f"{spec.label}: {main}"

