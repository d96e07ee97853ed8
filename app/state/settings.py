"""The task, algorithm and privacy settings of one session (the sidebar's model)."""
import numpy as np
import param

from privclust.core import algorithms as registry

from .. import catalogue, config

# the epsilon slider's log-spaced grid
EPSILON_GRID = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0,
                500.0, 1000.0]

class SettingsModel(param.Parameterized):
    """Task, algorithm and privacy settings; ``algo`` holds the estimator-specific parameters."""

    task = param.Selector(default="subspace", objects=list(catalogue.TASKS))
    algorithm = param.Selector(default=None, objects=[], allow_None=True)
    epsilon = param.Number(1.0, bounds=(0.01, 1000.0), label="ε (epsilon)")
    delta = param.Number(1e-5, bounds=(0.0, 0.1), label="δ (delta)")
    n_clusters = param.Integer(3, bounds=(1, 20), label="k (clusters)")
    subspace_dim = param.Integer(3, bounds=(1, 20), label="q (subspace dim)")
    n_row_clusters = param.Integer(3, bounds=(1, 20), label="row clusters")
    n_col_clusters = param.Integer(3, bounds=(1, 20), label="column clusters")
    n_points = param.Integer(500, bounds=(1, 10**7), label="t (points in the ball)")
    lower = param.Number(-5.0, label="public box: lower",
                         doc="every record is clipped to [lower, upper] in each feature before "
                             "the algorithm sees it; the noise is scaled to this box")
    upper = param.Number(5.0, label="public box: upper",
                         doc="every record is clipped to [lower, upper] in each feature before "
                             "the algorithm sees it; the noise is scaled to this box")
    bounds_epsilon = param.Number(0.1, bounds=(0.001, 10.0), label="ε for suggested bounds",
                                  doc="spent once on private quantiles of each feature")
    outer_lower = param.Number(-100.0, label="widest plausible range: lower",
                               doc="public: a range surely holding the data (e.g. a sensor's "
                                   "limits); the suggestion is searched inside it")
    outer_upper = param.Number(100.0, label="widest plausible range: upper",
                               doc="public: a range surely holding the data")
    seed = param.Integer(0, bounds=(0, 10**6), label="random seed (demo data only)",
                         doc="seeds the estimators on public demo data; a private release "
                             "always draws fresh randomness (a seed is public)")
    owner_view = param.Boolean(False, label="data owner view (not private)")
    owner_allowed = param.Boolean(False, constant=True, precedence=-1,
                                  doc="the operator enabled the data owner view on this server "
                                      "(PRIVCLUST_OWNER_VIEW); without it owner_view stays off")
    private_mode = param.Boolean(False, precedence=-1,
                                 doc="private data loaded: only private algorithms are offered "
                                     "outside the data owner view")
    algo = param.Parameter(default=None, doc="param.Parameterized of the algorithm's params")

    def __init__(self, specs=None, **params):
        self._specs = catalogue.SPECS if specs is None else specs
        params.setdefault("owner_allowed", config.owner_view())
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
        keys = [s.key for s in catalogue.for_task(self.task, self._specs) if self.offered(s)]
        self.param.algorithm.objects = keys
        private = [k for k in keys if catalogue.by_key(k, self._specs).private]
        if self.algorithm not in keys:
            self.algorithm = (private or keys or [None])[0]
        elif self.algo is None or type(self.algo).__name__ != f"{self.algorithm}_params":
            self._update_algo()

    @param.depends("algorithm", watch=True)
    def _update_algo(self):
        self.algo = self.spec.parameterized() if self.spec is not None else None

    @property
    def spec(self):
        return None if self.algorithm is None else catalogue.by_key(self.algorithm, self._specs)

    @property
    def baseline_spec(self):
        """The spec of the task's non-private baseline (the registry's ``task_baseline``), or
        None when this session's specs do not hold it."""
        entry = registry.task_baseline(self.task)
        key = None if entry is None else entry.key
        for spec in self._specs:
            if spec.task == self.task and spec.key == key:
                return spec
        return None

    def title(self, spec):
        """``spec``'s label with the privacy kind of its current settings ("private" when the
        settings are not valid yet)."""
        try:
            kind = spec.kind(self.values(spec))
        except ValueError:
            kind = "private"
        return spec.title(kind)

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
        if spec.uses_box:
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
