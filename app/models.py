"""Session state of the dashboard as ``param.Parameterized`` models (no widgets, no Panel):
the dataset, the task + algorithm settings, the dataset's Curator and budget ledger, and the
run controller.

The page is a client of the release protocol: on private data every release goes through
``privclust.core.Curator`` (which alone refuses, seeds, charges and decides what leaves), the
page holds the returned ``Release`` objects, and non-private algorithms run only in the data
owner view through the Curator's owner path, marked NOT PRIVATE. The design follows the
"mediated access" of OpenDP and the session of Tumult Analytics.

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

from . import algorithms, config
from .safety import UploadError, parse_upload

log = logging.getLogger(__name__)

STATE_DIR_ENV = config.STATE_DIR.env
BUDGET_EPSILON_ENV = config.BUDGET_EPSILON.env
BUDGET_DELTA_ENV = config.BUDGET_DELTA.env
OWNER_VIEW_ENV = config.OWNER_VIEW.env

PRESETS = {
    "union_of_subspaces": ("Union of subspaces (WWS15)", "subspace"),
    "gaussian_mixture": ("Gaussian mixture (SCH19)", "kmeans"),
    "planted_ball": ("Planted small ball (NSV16)", "onecluster"),
    "block_counts": ("Block count matrix (BP25)", "cocluster"),
}


def state_dir():
    """Where the persistent ledger and release store live: $PRIVCLUST_STATE_DIR or ~/.privclust."""
    return str(config.state_dir())


def budget_policy():
    """Total (epsilon, delta) per dataset, a server-side policy (env), not a page control."""
    return config.budget()


def owner_view_allowed():
    """May this server offer the data owner view? An operator setting ($PRIVCLUST_OWNER_VIEW=1,
    or ``privclust serve --owner-view``) for a server the data owner runs for themselves; off
    by default, because whoever is at the browser could otherwise switch on displays computed
    on the raw records (the analyst is not trusted)."""
    return config.owner_view()


def random_state_for(dataset, seed):
    """The page seed on public demo data; None (fresh OS entropy) on anything private, the data
    owner's own NOT PRIVATE runs included (a seed is public; private releases go through the
    Curator, which ignores seeds anyway)."""
    return seed if getattr(dataset, "public", False) else None


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
    seed = param.Integer(0, bounds=(0, 10**6), label="random seed (demo data only)",
                         doc="seeds the estimators on public demo data; a private release "
                             "always draws fresh randomness (a seed is public)")
    owner_view = param.Boolean(False, label="data owner view (not private)")
    owner_allowed = param.Boolean(False, constant=True, precedence=-1,
                                  doc="the operator enabled the data owner view on this server "
                                      "(owner_view_allowed); without it owner_view stays off")
    private_mode = param.Boolean(False, precedence=-1,
                                 doc="private data loaded: only private algorithms are offered "
                                     "outside the data owner view")
    algo = param.Parameter(default=None, doc="param.Parameterized of the algorithm's params")

    def __init__(self, specs=None, **params):
        self._specs = algorithms.SPECS if specs is None else specs
        params.setdefault("owner_allowed", owner_view_allowed())
        super().__init__(**params)
        self._update_algorithms()

    @param.depends("owner_view", watch=True, on_init=True)
    def _guard_owner_view(self):
        """The data owner view exists only where the operator allowed it (server side: a
        message from the browser cannot switch it on)."""
        if self.owner_view and not self.owner_allowed:
            self.owner_view = False

    @property
    def specs(self):
        return self._specs

    def offered(self, spec):
        """Is ``spec`` offered now? On private data a non-private algorithm (kind "none") runs
        only in the data owner view, marked NOT PRIVATE."""
        return spec.private or not self.private_mode or bool(self.owner_view)

    @param.depends("task", "private_mode", "owner_view", watch=True)
    def _update_algorithms(self):
        keys = [s.key for s in algorithms.for_task(self.task, self._specs) if self.offered(s)]
        self.param.algorithm.objects = keys
        private = [k for k in keys if algorithms.by_key(k, self._specs).private]
        if self.algorithm not in keys:
            self.algorithm = (private or keys or [None])[0]
        elif self.algo is None or type(self.algo).__name__ != f"{self.algorithm}_params":
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
    """One result shown by the page.

    On private data ``estimator`` is the :class:`~privclust.core.Release` the Curator returned
    (it forwards the released attributes, e.g. ``result.estimator.cluster_centers_``; nothing
    else of the fit exists here), or, for ``owner_only`` results, an estimator fitted through
    the Curator's data owner path (NOT PRIVATE: never downloaded or listed as a release). On
    demo data it is the fitted estimator.
    """

    key: object
    spec: algorithms.AlgorithmSpec
    settings: dict
    estimator: object
    dataset: object
    elapsed: float
    private_mode: bool
    from_cache: bool = False
    baseline: object = None
    baseline_spec: object = None
    owner_only: bool = False

    @property
    def release(self):
        """The Release of a private result (None on demo data and for owner-only results)."""
        from privclust.core import Release
        return self.estimator if isinstance(self.estimator, Release) else None

    @property
    def guarantee(self):
        release = self.release
        if release is not None:
            return release.guarantee
        return getattr(self.estimator, "privacy_", None)


@dataclasses.dataclass(frozen=True)
class Request:
    """What a Release (or a demo run) works on, captured once when it is asked for: the
    dataset, its Curator (None on demo data), the algorithm and its settings values, the data
    owner view switch and the page seed (used on demo data only)."""

    dataset: object
    curator: object
    spec: algorithms.AlgorithmSpec
    settings: dict
    owner_view: bool
    seed: int

    @property
    def random_state(self):
        """What the estimators of this request are seeded with (:func:`random_state_for`)."""
        return random_state_for(self.dataset, self.seed)


class LedgerModel(param.Parameterized):
    """The Curator and persistent budget ledger of the current private dataset, for display.

    The ledger is keyed by the dataset's budget key (order-invariant, shared by views derived
    from one source), so reloading, reordering or deriving a view never gives a fresh budget.
    """

    total = param.Tuple(default=(0.0, 0.0), length=2)
    spent = param.Tuple(default=(0.0, 0.0), length=2)
    remaining = param.Tuple(default=(0.0, 0.0), length=2)
    history = param.List(default=[])
    releases = param.List(default=[], doc="stored releases of this source, oldest first")
    unit = param.String(default="replace")
    active = param.Boolean(False)
    error = param.String(default="", doc="why no release is possible on this dataset")

    def __init__(self, path=None, **params):
        super().__init__(**params)
        self._path = path
        self.ledger = None
        self.curator = None
        self.dataset = None

    def open(self, dataset, trusted=()):
        """Open (or create) the ledger and the Curator of ``dataset``; demo data gets none.
        ``trusted``: the private estimator classes of the page's algorithm catalogue (server
        code), which the Curator may run besides privclust.core's own."""
        self.ledger = self.curator = None
        self.dataset = dataset
        if dataset is None or getattr(dataset, "public", True):
            self.param.update(active=False, history=[], releases=[], error="")
            return
        from privclust.core import Curator
        from privclust.core.privacy import Ledger
        eps, delta = budget_policy()
        path = self._path or os.path.join(state_dir(), "ledger.sqlite")
        try:
            ledger = Ledger(eps, delta, path=path, dataset=budget_key(dataset))
            self.curator = Curator(dataset, ledger, trusted=trusted)
        except (ValueError, TypeError) as exc:
            self.param.update(active=False, history=[], releases=[],
                              error=f"no release is possible on this dataset: {exc}")
            return
        self.ledger = ledger
        self.refresh()
        self.param.update(active=True, unit=ledger.unit, error="")

    def refresh(self):
        if self.ledger is None:
            return
        lg = self.ledger
        self.param.update(total=_pair(*lg.total), spent=_pair(*lg.spent),
                          remaining=_pair(*lg.remaining),
                          history=[_entry(h, lg.unit) for h in lg.history],
                          releases=[release_row(r) for r in self.curator.releases()])

    def public_facts(self):
        """What may be shown about the private data without a release (Curator.public_facts:
        the number of records only under the replace-one unit); {} on demo data."""
        return {} if self.curator is None else self.curator.public_facts()

    def can_release(self, estimator):
        """(fits, (epsilon, delta) cost in the ledger's unit, plan) of releasing ``estimator``,
        checked exactly (decimal) by the ledger; a stored identical release costs nothing.
        Raises what ``Curator.prepare`` raises (PrivacyRefused, ValueError) before anything
        runs."""
        est, plan, cost, _ = self.curator.prepare(estimator)
        if self.curator.cost(estimator) == (0.0, 0.0):
            return True, (0.0, 0.0), plan
        fits = self.ledger.can_charge(plan.epsilon, plan.delta, relation=plan.neighbouring,
                                      **est.ledger_options())
        return fits, cost, plan


def budget_key(dataset):
    """The key of ``dataset``'s budget: its order-invariant budget key (a derived view shares
    its source's), or its fingerprint for a Dataset without one."""
    return getattr(dataset, "budget_key", None) or dataset.fingerprint


def release_row(release):
    """A stored release as a plain dict for the ledger panel."""
    eps, delta = release.cost
    return {"id": release.id, "time": release.time, "estimator": release.estimator,
            "guarantee": release.guarantee.summary(), "epsilon": float(eps),
            "delta": float(delta), "unit": release.unit}


def _pair(a, b):
    return (float(a) if a is not None else float("nan"), float(b or 0.0))


def _entry(h, unit="replace"):
    """A ledger charge as a plain dict: when, what, relation, requested and charged (converted
    to the ledger's unit) epsilon and delta."""
    d = dataclasses.asdict(h) if dataclasses.is_dataclass(h) else dict(h)
    req = d.get("requested")
    d["relation"] = d.get("relation") or unit
    d["requested_epsilon"], d["requested_delta"] = (
        (float(req[0]), float(req[1])) if req is not None else (d["epsilon"], d["delta"]))
    return d


def relation_note(relation, requested_eps, charged_eps, unit):
    """Plain words for a converted charge, e.g. an add/remove release on a replace-one
    ledger (group privacy: one replacement is a removal and an addition)."""
    if relation == unit or requested_eps == charged_eps:
        return ""
    if relation == "add_remove" and unit == "replace":
        return (f"an add/remove release of ε {requested_eps:g} costs 2 x ε = {charged_eps:g} on "
                "this replace-one ledger")
    if relation == "cell":
        return (f"a cell-level release of ε {requested_eps:g} costs ε {charged_eps:g} for one "
                "record (its row sum is capped)")
    return f"a {relation} release of ε {requested_eps:g} costs ε {charged_eps:g} in {unit} units"


def spec_for_release(release, specs=None):
    """The page's spec of a stored release's estimator class (or a plain description)."""
    for spec in (algorithms.SPECS if specs is None else specs):
        if spec.class_path.rsplit(".", 1)[-1] == release.estimator:
            return spec
    names = set(release.attributes)
    task = ("subspace" if "subspaces_" in names else "cocluster" if "table_" in names else
            "onecluster" if names & {"center_", "centers_"} else "kmeans")
    return algorithms.AlgorithmSpec(release.estimator, release.estimator, task, "",
                                    release.guarantee.kind if release.guarantee.kind in
                                    algorithms.KIND_TEXT else "approx")


class Lab(param.Parameterized):
    """The run controller of one session (two modes, demo and private; private runs follow the
    release protocol of :class:`privclust.core.Curator`).

    Demo data (``dataset.public``): every settings change re-runs (through ``schedule``, which
    the page debounces), nothing is charged, seeds apply. Private data: nothing runs until
    Release, and a release goes only through the dataset's :class:`~privclust.core.Curator`
    (it refuses what is not private, ignores seeds, charges the ledger exactly before it fits,
    answers identical requests from its store at no charge and returns a frozen Release).
    Non-private algorithms run on private data only in the data owner view, through the
    Curator's owner path, marked NOT PRIVATE.
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
        self._cache = {}  # demo results only (public data); private ones live in the store
        self._quiet = False
        self._generation = 0  # bumped by every new demo request: a running demo fit stops
        self._failure_detail = None  # the withheld message of a failure on private data
        self.settings.param.watch(self._on_owner_view, "owner_view")
        self.data.param.watch(self._on_dataset, ["dataset"])
        self.settings.param.watch(self._on_settings, [
            p for p in self.settings.param if p not in ("name", "owner_view", "private_mode")])
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
        self.ledger.open(ds, trusted=self._catalogue_classes())
        self.cancel_demo()
        self.result = None
        self._quiet = True
        try:
            self.settings.param.update(owner_view=False if private else self.settings.owner_view,
                                       private_mode=private)
            if ds is not None:
                self.settings.adapt_to(ds, self.data.suggested_task)
        finally:
            self._quiet = False
        self._watch_algo()
        if private:
            self._say("Private data: nothing runs until you press Release. Each release is "
                      "charged to this dataset's budget first; seeds are ignored (fresh "
                      "randomness).", "warning")
            self.stale = True
        else:
            self.request_run()

    def _catalogue_classes(self):
        """The private estimator classes the page's catalogue offers (the operator's code)."""
        from privclust.core.privacy.estimator import PrivateEstimator
        out = set()
        for spec in self.settings.specs:
            if not spec.private:
                continue
            try:
                cls = spec.load_class()
            except (ImportError, AttributeError):
                continue
            if isinstance(cls, type) and issubclass(cls, PrivateEstimator):
                out.add(cls)
        return tuple(out)

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
        request = self.capture()  # once, now: the job never re-reads the page's state

        def job():  # runs on the session's worker
            if request is None or self.data.dataset is not request.dataset:
                self._say("The dataset changed before the release started: nothing was run "
                          "or charged.", "warning")
                return None
            return self.do_release(request)
        self.worker(job)

    # ---- requests ---------------------------------------------------------------------------
    def capture(self):
        """The current dataset, its Curator and the settings values, read once (None when no
        dataset or algorithm is chosen)."""
        ds, spec = self.data.dataset, self.settings.spec
        if ds is None or spec is None:
            return None
        private = not ds.public
        curator = self.ledger.curator if private and self.ledger.dataset is ds else None
        return Request(dataset=ds, curator=curator, spec=spec, settings=self.settings.values(spec),
                       owner_view=bool(self.settings.owner_view) and private,
                       seed=int(self.settings.seed))

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
        """The demo cache key of the current settings (public data only)."""
        spec = spec or self.settings.spec
        return _demo_key(self.data.dataset, spec, self.settings.values(spec), self.settings.seed)

    def run_demo(self):
        """Fit on demo data; never touches a ledger, never runs on private data."""
        request = self.capture()
        if request is None or not request.dataset.public:
            return None
        return self._fit_demo(request)

    def do_release(self, request=None):
        """Release ``request`` (default: captured now). Private data: through the Curator only;
        demo data: a demo run."""
        request = request or self.capture()
        if request is None:
            self._say("Choose a dataset and an algorithm first.", "warning")
            return None
        if request.dataset.public:
            return self._fit_demo(request)
        if request.curator is None:
            self._say(f"Refused: {self.ledger.error or 'this dataset has no budget ledger'}. "
                      "Nothing was run or charged.", "danger")
            return None
        spec, values = request.spec, request.settings
        if not spec.private or spec.effective_kind(values) == "none":
            if request.owner_view:
                return self._owner_run(request)
            self._say(f"Refused: {spec.label} with these settings is not private, so it is not "
                      "offered on private data (only the data owner view runs it, marked NOT "
                      "PRIVATE). Nothing was run or charged.", "danger")
            return None
        return self._release(request)

    def _release(self, request):
        from privclust.core.privacy import BudgetExceeded
        from privclust.core.release import PrivacyRefused, ReleaseFailed
        spec, values, curator = request.spec, request.settings, request.curator
        self.running = True
        t0 = time.perf_counter()
        try:
            # no seed and no ledger: the Curator draws fresh entropy and charges its ledger
            est = spec.build(values, random_state=None, ledger=None)
            fits, cost, plan = self.ledger.can_release(est)
            if not fits:
                return self._refuse(cost, plan)
            release = curator.release(est)
        except BudgetExceeded as exc:  # another session spent the budget meanwhile
            _, cost, plan = self.ledger.can_release(est)
            return self._refuse(cost, plan, str(exc))
        except PrivacyRefused as exc:
            self._say(f"Refused: {exc}. Nothing was run or charged.", "danger")
            return None
        except ReleaseFailed as exc:
            log.warning("release failed: %s", exc.detail)
            text = (f"The release failed ({exc.kind}) after it was charged; its message may "
                    "describe the private data: the data owner view (not private) shows it. "
                    "The budget charged for it stays spent.")
            full = f"The release failed: {exc.detail}. The budget charged for it stays spent."
            if request.owner_view:
                self._say(full + " (data owner view: not private)", "danger")
            else:
                self._say(text, "danger")
                self._failure_detail = full
            self.result = None
            return None
        except (ValueError, TypeError) as exc:  # parameters or relation, before any charge
            self._say(f"Refused before anything ran ({type(exc).__name__}): {exc}. Nothing was "
                      "run or charged.", "danger")
            return None
        except Exception as exc:  # noqa: BLE001 -- shown as a message, never a traceback
            log.warning("release failed: %s", traceback.format_exc(limit=3))
            self._say(f"The release failed ({type(exc).__name__}).", "danger")
            return None
        finally:
            self.running = False
            self.ledger.refresh()
        if not release.from_store:
            self.n_runs += 1
        result = RunResult(key=release.key, spec=spec, settings=values, estimator=release,
                           dataset=request.dataset, elapsed=time.perf_counter() - t0,
                           private_mode=True, from_cache=release.from_store)
        if request.dataset is not self.data.dataset:
            self._say("The dataset changed while the release ran: it is stored with the other "
                      "releases of its dataset (the ledger panel lists them).", "warning")
            return None
        self.param.update(result=result, stale=False)
        if release.from_store:
            self._say("Identical request: answered from the release store. Nothing was "
                      "charged.", "info")
        else:
            eps, delta = release.cost
            note = relation_note(release.guarantee.neighbouring, release.guarantee.epsilon, eps,
                                 release.unit)
            self._say(f"Released {spec.label}: charged ε = {eps:g}" +
                      (f", δ = {delta:g}" if delta else "") + (f" ({note})" if note else "") +
                      " to the ledger before it ran; fresh randomness, the seed was ignored.",
                      "success")
        return result

    def _owner_run(self, request):
        """Data owner view: a non-private algorithm on the raw data (Curator.owner_fit),
        NOT PRIVATE, never stored, listed or downloaded as a release."""
        spec, values = request.spec, request.settings
        self.running = True
        t0 = time.perf_counter()
        try:
            est = spec.build(values, random_state=request.random_state, ledger=None)
            fitted = request.curator.owner_fit(est).value
            self.n_runs += 1
        except Exception as exc:  # noqa: BLE001 -- the owner may read the message
            log.warning("owner run failed: %s", traceback.format_exc(limit=3))
            self._say(f"The run failed ({type(exc).__name__}): {exc} (data owner view: not "
                      "private)", "danger")
            return None
        finally:
            self.running = False
        result = RunResult(key=None, spec=spec, settings=values, estimator=fitted,
                           dataset=request.dataset, elapsed=time.perf_counter() - t0,
                           private_mode=True, owner_only=True)
        if request.dataset is not self.data.dataset or not self.settings.owner_view:
            return None
        self.param.update(result=result, stale=False)
        self._say(f"{spec.label} ran on the raw data: NOT PRIVATE (data owner view only; not a "
                  "release, not downloadable). Nothing was charged.", "warning")
        return result

    def open_release(self, release_id):
        """Show a stored release of the current private dataset again (no charge)."""
        curator = self.ledger.curator
        if curator is None:
            return None
        try:
            release = curator.get_release(int(release_id))
        except (KeyError, ValueError, TypeError):
            self._say("No such release for this dataset.", "warning")
            return None
        spec = spec_for_release(release, self.settings.specs)
        settings = {k: v for k, v in release.params.items() if not isinstance(v, dict)}
        result = RunResult(key=release.key, spec=spec, settings=settings, estimator=release,
                           dataset=self.data.dataset, elapsed=0.0, private_mode=True,
                           from_cache=True)
        self.param.update(result=result)
        self._say(f"Re-opened release #{release.id} ({release.time:%Y-%m-%d %H:%M} UTC): "
                  "nothing was charged.", "info")
        return result

    def _refuse(self, cost, plan, detail=""):
        left = self.ledger.remaining
        eps, delta = cost
        note = relation_note(plan.neighbouring, plan.epsilon, eps, self.ledger.unit)
        self._say(f"Refused: this release costs ε = {eps:g}" + (f", δ = {delta:g}" if delta else "")
                  + (f" ({note})" if note else "")
                  + f" but only ε = {left[0]:g}, δ = {left[1]:g} remain for this dataset. "
                  "Nothing was run or charged.", "danger")
        return None

    def _fit_demo(self, request):
        """Fit on public demo data (seeded by the page seed; no ledger)."""
        spec, ds, values = request.spec, request.dataset, request.settings
        if not ds.public:
            return None  # never: private data goes through the Curator only
        key = _demo_key(ds, spec, values, request.seed)
        if key in self._cache:
            self.result = self._cache[key]
            return self.result
        self.running = True
        t0 = time.perf_counter()
        try:
            est = spec.build(values, random_state=request.random_state, ledger=None)
            self.n_runs += 1
            if hasattr(est, "iter_fit"):
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
        except Exception as exc:
            log.warning("run failed: %s", traceback.format_exc(limit=3))
            self._say(self._failure_text(exc, False), "danger")
            self.result = None
            return None
        finally:
            self.running = False
        result = RunResult(key=key, spec=spec, settings=values, estimator=est, dataset=ds,
                           elapsed=time.perf_counter() - t0, private_mode=False)
        self._cache[key] = result
        if ds is not self.data.dataset:  # the data changed while this ran (worker thread)
            return None
        self.param.update(result=result, stale=False)
        self._say("Demo data: results follow the sliders, no budget is spent.", "info")
        return result

    def baseline(self, result=None):
        """The non-private baseline for a result (computed lazily, kept on the result).

        On private data only in the data owner view, through the Curator's owner path
        (NOT PRIVATE); never for the analyst.
        """
        result = result or self.result
        bspec = self.settings.baseline_spec
        if result is None or bspec is None or result.owner_only:
            return None
        if result.baseline is None:
            values = self.settings.values(bspec)
            try:
                est = bspec.build(values, random_state=random_state_for(result.dataset,
                                                                        self.settings.seed))
                if result.dataset.public:
                    est.fit(result.dataset.X)
                else:
                    if not self.raw_allowed(result.dataset) or self.ledger.curator is None:
                        return None
                    est = self.ledger.curator.owner_fit(est).value
            except Exception:
                log.warning("baseline failed: %s", traceback.format_exc(limit=3))
                return None
            result.baseline, result.baseline_spec = est, bspec
        return result.baseline

    def _failure_text(self, exc, private, about_data=True, charged=True):
        """The message shown for a failed run. A failure while reading private data may
        describe the records in its message (a count, a value), so outside the data owner view
        only its type is shown; errors in the settings (``about_data=False``: before any data
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
        """Switching the data owner view on shows the message of a failure withheld above;
        switching it off hides a NOT PRIVATE result."""
        if event.new and self._failure_detail:
            self._say(self._failure_detail + " (data owner view: not private)", "danger")
        if not event.new and self.result is not None and self.result.owner_only:
            self.result = None
            self._say("Data owner view off: the NOT PRIVATE result is hidden.", "info")

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


def _demo_key(ds, spec, values, seed):
    return (ds.fingerprint if ds is not None else None, spec.key,
            tuple(sorted((k, _hashable(v)) for k, v in values.items())), seed)


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return v
