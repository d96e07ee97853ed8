"""The dataset of one session: a synthetic preset (public demo data), a registry set or an upload
(private)."""
import param

from ..safety import UploadError, parse_upload

PRESETS = {
    "union_of_subspaces": ("Union of subspaces (WWS15)", "subspace"),
    "gaussian_mixture": ("Gaussian mixture (SCH19)", "kmeans"),
    "planted_ball": ("Planted small ball (NSV16)", "onecluster"),
    "block_counts": ("Block count matrix (BP25)", "cocluster"),
}

# Each preset's sizes, chosen so that the task's default private algorithm visibly works at the
# default epsilon = 1 (measured over seeds 0-2/0-5, see tests/app/test_defaults.py):
# union of subspaces n=3000, d=5, k=2, q=2: SuLQ k-planes Wasserstein distance to the truth
# 0.35-0.39 (at the former 1000 x 10, k=3, q=3: 3.3, no better than random); Gaussian mixture
# n=3000, d=2, k=3: compressive k-means SSE 1.0-1.1 x the non-private one (1000 x 10: 12-18 x);
# planted ball n=2000, d=2: 1-cluster found the ball 6/6 (1000 x 10: never, "stable histogram
# kept no box"); block counts as before (DP-tauCC NMI 1.0).
PRESET_SIZES = {
    "union_of_subspaces": dict(n_samples=3000, n_features=5, n_clusters=2, subspace_dim=2),
    "gaussian_mixture": dict(n_samples=3000, n_features=2, n_clusters=3),
    "planted_ball": dict(n_samples=2000, n_features=2),
    "block_counts": dict(n_samples=1000, n_clusters=3),
}


class DataModel(param.Parameterized):
    """The dataset of this session: a synthetic preset, a registry set, or an upload."""

    source = param.Selector(default="preset", objects=["preset", "registry", "upload"])
    preset = param.Selector(default="union_of_subspaces", objects=list(PRESETS))
    registry_name = param.Selector(default=None, objects=[], allow_None=True, label="dataset")
    n_samples = param.Integer(3000, bounds=(20, 20000), label="n (records)")
    n_features = param.Integer(5, bounds=(2, 50), label="d (features)")
    n_clusters = param.Integer(2, bounds=(1, 10), label="k (clusters)")
    subspace_dim = param.Integer(2, bounds=(1, 10), label="q (subspace dim)")
    noise = param.Number(0.1, bounds=(0.0, 1.0), step=0.01, label="noise")
    seed = param.Integer(0, bounds=(0, 10**6), label="data seed")

    dataset = param.Parameter(default=None, doc="the current privclust.core.data.Dataset")
    error = param.String(default="", doc="plain-text load/upload error (escape to render)")

    def __init__(self, **params):
        self._sized_for = None
        super().__init__(**params)
        self._upload = None
        try:
            from privclust.core.data import list_datasets
            names = [n for n in list_datasets() if n not in PRESETS]
        except Exception:  # noqa: BLE001 -- registry not available yet or no data dir
            names = []
        self.param.registry_name.objects = names
        if names and self.registry_name is None:
            self.registry_name = names[0]
        self.load()

    @param.depends("source", "preset", "registry_name", "n_samples", "n_features", "n_clusters",
                   "subspace_dim", "noise", "seed", watch=True)
    def load(self):
        """(Re)build the dataset from the current choice; errors go to ``error``."""
        if self.source == "preset" and self._sized_for != self.preset:
            # a preset comes with its sizes (PRESET_SIZES); setting them loads again
            self._sized_for = self.preset
            sizes = {k: v for k, v in PRESET_SIZES[self.preset].items() if getattr(self, k) != v}
            if sizes:
                self.param.update(**sizes)
                return
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
        """The synthetic preset: public demo data, so its generator takes the page's data seed
        (a public setting; nothing private is drawn here)."""
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


