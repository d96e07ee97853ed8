"""The dataset of one session: a synthetic preset (public demo data), a registry set or an upload
(private)."""

import param

from ..safety import UploadError, parse_upload
from .browsers import CHOICE

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
# kept no box"); block counts as before (DP-tauCC NMI 1.0). Planted balls: two balls (apart) in
# 20000 records, t = half a ball's planted points, so that k balls (k = 2, epsilon 1/2 per ball)
# finds both: radii 0.081, centres 0.008-0.009 from the planted ones, no warning, data seeds 0-2
# (one ball in 2000 records: "stable histogram kept no box" for every k >= 2); 1-cluster on it:
# radius 0.070, centre 0.003-0.004 away.
PRESET_SIZES = {
    "union_of_subspaces": dict(n_samples=3000, n_features=5, n_clusters=2, subspace_dim=2),
    "gaussian_mixture": dict(n_samples=3000, n_features=2, n_clusters=3),
    "planted_ball": dict(n_samples=20000, n_features=2, n_clusters=2),
    "block_counts": dict(n_samples=1000, n_clusters=3),
}


def planted_balls(n_samples, n_features, n_balls, std, seed):
    """``n_balls`` small clusters planted in uniform background on [0,1]^d: the planted-ball
    generator of :mod:`privclust.core.data` run once per ball on n / k records (half of them
    in the ball), stacked. Truth: the balls' ``centers`` (``center``: the first), the largest
    planted ``radius``, ``inliers``, ``bounds`` (0, 1) and ``n_points``, the public target t
    of the demo: half of one ball's planted points (the 1-cluster algorithm looks for a ball
    holding t points; k balls for k such balls, one after the other).

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Obs. 3.5 (k clusters by repeated 1-cluster).
    """
    import numpy as np

    from privclust.core import data

    k = max(1, min(int(n_balls), n_samples // 2))
    sizes = [n_samples // k + (j < n_samples % k) for j in range(k)]
    rng = np.random.default_rng(seed)
    # centres apart: evenly spaced on a circle of radius 0.25 about the middle of the cube (in
    # its first two coordinates), turned by a random angle; 0.5 elsewhere
    angles = rng.uniform(0, 2 * np.pi) + 2 * np.pi * np.arange(k) / k
    centers = np.full((k, n_features), 0.5)
    if k > 1:
        centers[:, 0] += 0.25 * np.cos(angles)
        centers[:, 1] += 0.25 * np.sin(angles)
    seeds = rng.integers(2**31, size=k)
    parts = [
        data.make_planted_ball(
            n_samples=m, n_features=n_features, std=std, center=c, random_state=int(s)
        )
        for m, c, s in zip(sizes, centers, seeds, strict=False)
    ]
    inliers = np.concatenate([p.truth["inliers"] for p in parts])
    labels = np.concatenate([p.truth["inliers"] * (j + 1) for j, p in enumerate(parts)])
    centers = np.stack([p.truth["center"] for p in parts])
    truth = {
        "center": centers[0],
        "centers": centers,
        "radius": max(p.truth["radius"] for p in parts),
        "inliers": inliers,
        "std": std,
        "grid_step": parts[0].truth["grid_step"],
        "bounds": (0.0, 1.0),
        "n_points": max(1, min(int(p.truth["inliers"].sum()) for p in parts) // 2),
    }
    return data.Dataset(
        np.vstack([p.X for p in parts]),
        labels=labels.astype(np.int64),
        name="planted_balls",
        truth=truth,
        public=True,
        description=f"{k} balls of std {std:g}, each with half of its "
        f"{n_samples // k} records, in [0,1]^{n_features} "
        "(Nissim, Stemmer & Vadhan, PODS 2016)",
    )


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

    upload_id = param.Selector(
        default=None,
        objects=[],
        allow_None=True,
        label="your uploads",
        doc="which of this browser's uploads is loaded (an opaque id)",
    )
    dataset = param.Parameter(default=None, doc="the current privclust.core.data.Dataset")
    error = param.String(default="", doc="plain-text load/upload error (escape to render)")

    def __init__(self, browser=None, **params):
        """``browser``: this browser's :class:`~.browsers.BrowserRecord` (the served page), whose
        data choice and uploads a reload restores; None (notebooks, tests): nothing is kept."""
        self._browser = browser
        self._sized_for = None
        self._upload = None
        if browser is not None and browser.choice and not params:
            params = dict(browser.choice)
            if params.get("source") == "preset":
                self._sized_for = params.get("preset")  # keep the restored sizes
            self._upload = browser.upload(browser.upload_id)
            if params.get("source") == "upload" and self._upload is None:
                params.pop("source")  # forgotten (oldest of too many)
        super().__init__(**params)
        self._sync_uploads(browser.upload_id if self._upload is not None else None)
        try:
            from privclust.core.data import list_datasets

            names = [n for n in list_datasets() if n not in PRESETS]
        except Exception:  # noqa: BLE001 -- registry not available yet or no data dir
            names = []
        self.param.registry_name.objects = names
        if names and self.registry_name is None:
            self.registry_name = names[0]
        self.load()

    @param.depends(*CHOICE, watch=True)
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
        self._remember()

    def _remember(self):
        if self._browser is not None:
            self._browser.remember(
                self.param.values(), self.upload_id if self.source == "upload" else None
            )

    def _sync_uploads(self, selected=None):
        """The upload list of this browser (empty without one); ``selected`` id is chosen."""
        uploads = self._browser.uploads() if self._browser is not None else []
        self.param.upload_id.objects = [uid for uid, _ in uploads]
        if selected:
            self.upload_id = selected  # its dataset is already loaded: nothing reruns

    def upload_names(self):
        """{label: id} of this browser's uploads, oldest first (what the sidebar lists)."""
        uploads = self._browser.uploads() if self._browser is not None else []
        return {f"{i + 1}. {name}": uid for i, (uid, name) in enumerate(uploads)}

    @param.depends("upload_id", watch=True)
    def _pick_upload(self):
        """Another of this browser's uploads was chosen: it becomes the dataset."""
        ds = self._browser.upload(self.upload_id) if self._browser is not None else None
        if ds is None or ds is self._upload:
            return
        self._upload = ds
        if self.source == "upload":
            self.param.update(dataset=ds, error="")
            self._remember()
        else:
            self.source = "upload"

    def _make_preset(self):
        """The synthetic preset: public demo data, so its generator takes the page's data seed
        (a public setting; nothing private is drawn here)."""
        from privclust.core import data

        d, k = self.n_features, self.n_clusters
        if self.preset == "union_of_subspaces":
            q = min(self.subspace_dim, d - 1)
            return data.make_union_of_subspaces(
                n_samples=self.n_samples,
                n_features=d,
                n_clusters=k,
                subspace_dim=q,
                noise=self.noise,
                random_state=self.seed,
            )
        if self.preset == "gaussian_mixture":
            return data.make_gaussian_mixture(
                n_samples=self.n_samples, n_features=d, n_clusters=k, random_state=self.seed
            )
        if self.preset == "planted_ball":
            return planted_balls(self.n_samples, d, k, max(self.noise, 1e-3) / 5, self.seed)
        return data.make_block_counts(
            n_rows=self.n_samples,
            n_cols=max(20, self.n_samples // 2),
            n_row_clusters=k,
            n_col_clusters=k,
            random_state=self.seed,
        )

    def upload(self, filename, payload):
        """Parse an uploaded file (validated, size-capped); it becomes this session's dataset."""
        try:
            ds = parse_upload(filename, payload)
        except UploadError as exc:
            self.error = str(exc)
            return False
        shown = self.dataset
        if (
            self.source == "upload"
            and shown is not None
            and (shown.name, shown.fingerprint) == (ds.name, ds.fingerprint)
        ):
            self.error = ""
            return True  # the file shown now, again: it stays, with its result and status
        self._upload = ds
        if self._browser is not None:
            # kept for this browser only, for the server's lifetime (see .browsers)
            uid = self._browser.add_upload(filename, ds)
            self._sync_uploads(uid)
        if self.source == "upload":
            self.param.update(dataset=ds, error="")
            self._remember()
        else:
            self.source = "upload"
        return True

    @property
    def suggested_task(self):
        if self.source == "preset":
            return PRESETS[self.preset][1]
        return None
