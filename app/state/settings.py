"""The task, algorithm and privacy settings of one session (the sidebar's model)."""

import numpy as np
import param

from privclust.core import algorithms as registry

from .. import catalogue, config

# the epsilon slider's log-spaced grid
EPSILON_GRID = [
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    20.0,
    50.0,
    100.0,
    200.0,
    500.0,
    1000.0,
]


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
    lower = param.Number(
        -5.0,
        label="public box: lower (all columns)",
        doc="every record is clipped to [lower, upper] in each feature before "
        "the algorithm sees it; the noise is scaled to this box. Setting "
        "it applies one value to every column",
    )
    upper = param.Number(
        5.0,
        label="public box: upper (all columns)",
        doc="every record is clipped to [lower, upper] in each feature before "
        "the algorithm sees it; the noise is scaled to this box. Setting "
        "it applies one value to every column",
    )
    feature_box = param.Parameter(
        default=None,
        doc="the public box per column: None (lower/upper for every "
        "column) or a pair of tuples (lowers, uppers), one value "
        "per column of the loaded data",
    )
    feature_names = param.List(
        default=[],
        doc="the loaded data's column names (public: the header; 'feature j' where it has none)",
    )
    bounds_epsilon = param.Number(
        0.1,
        bounds=(0.001, 100.0),
        label="ε for suggested bounds",
        doc="spent once on a noisy histogram of each column over power-of-two buckets",
    )
    bounds_largest = param.Number(
        1e5,
        bounds=(1e-300, 1e300),
        label="largest plausible |value|",
        doc="public: no column holds values beyond ± this (e.g. a "
        "sensor's limit); the search covers magnitudes up to it",
    )
    bounds_smallest = param.Number(
        1e-3,
        bounds=(1e-300, 1e300),
        label="smallest magnitude to resolve",
        doc="public: magnitudes below it share one bucket around 0",
    )
    bounds_anyway = param.Boolean(
        False,
        label="suggest even when the forecast says unreliable",
        doc="without it, Suggest bounds spends nothing when the "
        "forecast (from public facts) says the result would be "
        "unreliable",
    )
    seed = param.Integer(
        0,
        bounds=(0, 10**6),
        label="random seed (demo data only)",
        doc="seeds the estimators on public demo data; a private release "
        "always draws fresh randomness (a seed is public)",
    )
    owner_view = param.Boolean(False, label="data owner view (not private)")
    owner_allowed = param.Boolean(
        False,
        constant=True,
        precedence=-1,
        doc="the operator enabled the data owner view on this server "
        "(PRIVCLUST_OWNER_VIEW); without it owner_view stays off",
    )
    private_mode = param.Boolean(
        False,
        precedence=-1,
        doc="private data loaded: only private algorithms are offered outside the data owner view",
    )
    algo = param.Parameter(default=None, doc="param.Parameterized of the algorithm's params")

    def __init__(self, specs=None, **params):
        self._specs = catalogue.SPECS if specs is None else specs
        self._setting_box = False
        params.setdefault("owner_allowed", config.owner_view())
        super().__init__(**params)
        self._update_algorithms()

    @param.depends("lower", "upper", watch=True)
    def _one_value_for_all(self):
        """The scalar lower/upper is the shortcut: typing one applies it to every column."""
        if not self._setting_box:
            self.feature_box = None

    def set_feature_box(self, lower, upper):
        """Set the public box per column (``lower``, ``upper``: one number or one per column of
        the loaded data); ValueError naming the column when a pair is not finite with
        lower < upper. Equal values for every column become the one-value shortcut."""
        lo, hi = np.atleast_1d(np.asarray(lower, float)), np.atleast_1d(np.asarray(upper, float))
        d = len(self.feature_names) or max(len(lo), len(hi))
        try:
            lo, hi = np.broadcast_to(lo, (d,)), np.broadcast_to(hi, (d,))
        except ValueError:
            raise ValueError(
                f"the box needs one lower and one upper value per column ({d} "
                f"columns), got {len(lo)} and {len(hi)}"
            ) from None
        for j in range(d):
            if not (np.isfinite(lo[j]) and np.isfinite(hi[j]) and lo[j] < hi[j]):
                raise ValueError(
                    f"column {self.column_name(j)}: the box needs finite numbers "
                    f"with lower < upper, got [{lo[j]:g}, {hi[j]:g}]"
                )
        if np.all(lo == lo[0]) and np.all(hi == hi[0]):
            self.param.update(lower=float(lo[0]), upper=float(hi[0]), feature_box=None)
            return
        self._setting_box = True
        try:
            self.param.update(
                lower=float(lo.min()),
                upper=float(hi.max()),
                feature_box=(tuple(map(float, lo)), tuple(map(float, hi))),
            )
        finally:
            self._setting_box = False

    def box(self):
        """The public box as an estimator takes it: two floats (one value for all columns) or
        two tuples (one value per column)."""
        if self.feature_box is not None:
            return self.feature_box
        return float(self.lower), float(self.upper)

    def box_arrays(self, n_features):
        """The public box as two float arrays of length ``n_features``."""
        lo, hi = self.box()
        return (
            np.broadcast_to(np.asarray(lo, float), (n_features,)).copy(),
            np.broadcast_to(np.asarray(hi, float), (n_features,)).copy(),
        )

    def column_name(self, j):
        """The name of column ``j``: its header name, else "feature j"."""
        names = self.feature_names
        return str(names[j]) if j < len(names) else f"feature {j}"

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
        preferred = catalogue.DEFAULT_ALGORITHM.get(self.task)
        if preferred in private:
            private.insert(0, preferred)
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
            out["lower"], out["upper"] = self.box()
        return out

    def adapt_to(self, dataset, task=None):
        """Take k, q, box and task defaults from public generator settings (never from data)."""
        if task is not None and task != self.task:
            self.task = task
        names = getattr(dataset, "feature_names", None) or [
            f"feature {j}" for j in range(dataset.n_features)
        ]
        self.param.update(feature_box=None, feature_names=[str(n) for n in names])
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
            upd.update(n_points=int(truth.get("n_points", max(1, int(np.sum(truth["inliers"]))))))
        if "row_labels" in truth:
            upd.update(
                n_row_clusters=int(np.max(truth["row_labels"]) + 1),
                n_col_clusters=int(np.max(truth["column_labels"]) + 1),
            )
        self.param.update(**upd)
