"""Dataset registry: synthetic presets, scikit-learn's bundled sets, and real data found in
``PRIVCLUST_DATA_DIR`` (classic3, cstr, Extended Yale B and the preprocessing
"yaleb5" of Wang, Wang & Singh, NIPS 2015, Sec. 5).

``public`` = raw values may be shown (synthetic demo data only); real data, including the
scikit-learn sets, is private. ``demo`` = always available (ships with the install).

Large private data sets the operator registered (shards read on Dask; the registry file named by
``PRIVCLUST_DATASETS``, :mod:`.dask_registry`) are listed too, as private data.

Every builder is deterministic (a fixed default ``random_state`` = 0 where randomness is used):
the same load gives the same data and fingerprint. Views derived from one source (``yaleb`` with
``drop_bad``, ``yaleb5``) carry the source's ``budget_key`` (``Dataset.source``), so they share one
privacy budget with it; truth computed from private records is marked evaluation-only
(``Dataset.truth_public`` False).
"""

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._npy_headers import load_npz_arrays
from . import synthetic
from .dask_registry import registered_datasets
from .dataset import Dataset
from .domain import clip_l2
from .loaders import _EXTENSIONS, load

ENV_VAR = "PRIVCLUST_DATA_DIR"
YALEB_FILE = "extended_yaleb_crop_48x42.npz"


def data_dir():
    """The real-data folder named by ``PRIVCLUST_DATA_DIR``, or None if unset or not a folder."""
    value = os.environ.get(ENV_VAR)
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_dir() else None


@dataclass(frozen=True)
class _Entry:
    name: str
    description: str
    public: bool
    demo: bool
    build: Callable
    file: str | None = None  # required file in data_dir()


def _preset(func, **defaults):
    def build(**params):
        return func(**{**defaults, **params})

    return build


def _sklearn(loader_name, title):
    def build():
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, loader_name)()
        return Dataset(
            bunch.data,
            labels=bunch.target,
            name=title,
            feature_names=list(bunch.feature_names),
            public=False,
            description=f"scikit-learn bundled {title} data set",
        )

    return build


def _require(filename):
    root = data_dir()
    path = None if root is None else root / filename
    if path is None or not path.is_file():
        raise ValueError(f"{filename} not found: set {ENV_VAR} to the folder holding it")
    return path


def _counts(key, filename, description):
    def build():
        raw = load(_require(filename), counts=True)
        return Dataset(
            raw.X,
            labels=raw.labels,
            name=key,
            feature_names=raw.feature_names,
            public=False,
            description=description,
        )

    return build


def _yaleb_arrays():
    z = load_npz_arrays(
        _require(YALEB_FILE), ["images", "labels", "subject", "azimuth", "elevation", "bad"]
    )
    images = z["images"]
    X = images.reshape(len(images), -1).astype(np.float64) / 255.0
    meta = {k: z[k] for k in ("subject", "azimuth", "elevation", "bad")}
    return X, z["labels"].astype(np.int64), meta


def _yaleb_source_key(X):
    """Budget key of the full Extended Yale B file (all 2432 images): the source of every view."""
    return Dataset(X, public=False).budget_key


def _build_yaleb(drop_bad=False):
    """All 2432 Extended Yale B images (38 subjects x 64), 48x42 pixels scaled to [0, 1].

    With ``drop_bad`` the subset keeps the full file's budget key (``source``).
    """
    X, y, meta = _yaleb_arrays()
    keep = ~meta["bad"] if drop_bad else np.ones(len(y), bool)
    return Dataset(
        X[keep],
        labels=y[keep],
        name="yaleb",
        public=False,
        truth={k: v[keep] for k, v in meta.items()},
        truth_public=False,
        source=_yaleb_source_key(X) if drop_bad else None,
        description="Extended Yale B, 38 subjects x 64 illuminations, 48x42 pixels",
    )


def _build_yaleb5(
    n_subjects=5, subjects=None, subspace_dim=9, n_features=50, noise=0.0, random_state=0
):
    """Preprocessing of Extended Yale B as in Wang, Wang & Singh, NIPS 2015, Sec. 5.

    1. ``subjects`` (values of the file's ``labels``, 0..37) or ``n_subjects`` drawn at random;
       64 images each (n = 320 for 5). 2. each subject's images projected onto its own
       ``subspace_dim``-dim affine PCA subspace (class mean + top PCs). 3. a Gaussian random
       projection to ``n_features`` (entries N(0, 1/n_features), ``jl_matrix``).
       4. ``clip_l2(., 1)`` per record (every record ends on the unit sphere: raw norms are
       >> 1). Optional ``noise``: N(0, noise^2) added after that and clipped again (the paper's
       "sigma = 0.01" for Yale B is unexplained; default off). labels 0..k-1 in the order of
       ``truth["subjects"]``; truth["subspaces"] (k, n_features, subspace_dim) = per-class top
       left singular vectors of the final data,
       without centring (linear subspaces, as the paper's subspace model assumes).

    Deterministic: ``random_state`` defaults to 0 (same subjects and projection on every load).
    The truth subspaces are computed from the private records: ``truth_public`` is False
    (evaluation only). ``source`` is the full Yale B file's budget key (one budget for all views).
    """
    from ..privacy import as_generator, jl_matrix

    rng = as_generator(random_state)
    X, y, _ = _yaleb_arrays()
    source = _yaleb_source_key(X)
    available = np.unique(y)
    if subjects is None:
        if not 1 <= int(n_subjects) <= len(available):
            raise ValueError(f"n_subjects must be in 1..{len(available)}, got {n_subjects}")
        subjects = np.sort(rng.choice(available, size=int(n_subjects), replace=False))
    subjects = np.asarray(subjects, dtype=np.int64).ravel()
    if len(np.unique(subjects)) != len(subjects) or not np.isin(subjects, available).all():
        raise ValueError(f"subjects must be distinct values of 0..{available.max()}")
    parts, labels = [], []
    for new, s in enumerate(subjects):
        Xs = X[y == s]
        mu = Xs.mean(axis=0)
        _, _, Vt = np.linalg.svd(Xs - mu, full_matrices=False)
        V = Vt[:subspace_dim].T
        parts.append(mu + (Xs - mu) @ V @ V.T)
        labels.append(np.full(len(Xs), new))
    Z = np.vstack(parts)
    labels = np.concatenate(labels)
    G = jl_matrix(n_features, Z.shape[1], rng)
    Z = clip_l2(Z @ G.T, 1.0)
    if noise:
        Z = clip_l2(Z + float(noise) * rng.standard_normal(Z.shape), 1.0)
    bases = np.stack(
        [
            np.linalg.svd(Z[labels == c].T, full_matrices=False)[0][:, :subspace_dim]
            for c in range(len(subjects))
        ]
    )
    truth = {"subspaces": bases, "subjects": subjects, "projection": G, "noise": float(noise)}
    return Dataset(
        Z,
        labels=labels,
        name="yaleb5",
        truth=truth,
        public=False,
        truth_public=False,
        source=source,
        description=f"Extended Yale B, {len(subjects)} subjects, per-subject "
        f"{subspace_dim}-dim affine PCA, Gaussian projection to "
        f"d={n_features}, unit norm (WWS15 Sec. 5)",
    )


_ENTRIES = [
    _Entry(
        "union_of_subspaces",
        "3 random 3-dim subspaces in R^10, n=1000, noise 0.1 (WWS15 Fig. 3)",
        True,
        True,
        _preset(synthetic.make_union_of_subspaces, random_state=0),
    ),
    _Entry(
        "gaussian_mixture",
        "10 Gaussians in R^10, n=10000 (SCH19 Fig. 1, smaller n)",
        True,
        True,
        _preset(synthetic.make_gaussian_mixture, n_samples=10_000, random_state=0),
    ),
    _Entry(
        "planted_ball",
        "500 of 1000 points in a small ball in [0,1]^2 on a grid (NSV16)",
        True,
        True,
        _preset(synthetic.make_planted_ball, random_state=0),
    ),
    _Entry(
        "block_counts",
        "300x200 Poisson counts with 3x3 planted co-clusters",
        True,
        True,
        _preset(synthetic.make_block_counts, sparse=True, random_state=0),
    ),
    _Entry(
        "iris", "scikit-learn iris: 150 x 4, 3 classes", False, True, _sklearn("load_iris", "iris")
    ),
    _Entry(
        "wine", "scikit-learn wine: 178 x 13, 3 classes", False, True, _sklearn("load_wine", "wine")
    ),
    _Entry(
        "digits",
        "scikit-learn digits: 1797 x 64, 10 classes",
        False,
        True,
        _sklearn("load_digits", "digits"),
    ),
    _Entry(
        "classic3",
        "CLUTO classic3 document-word counts, 3891 x 4303, 3 classes",
        False,
        False,
        _counts("classic3", "classic3.npz", "CLUTO/SMART classic3 counts"),
        "classic3.npz",
    ),
    _Entry(
        "cstr",
        "CSTR abstracts word counts, 475 x 1000, 4 classes",
        False,
        False,
        _counts("cstr", "cstr.npz", "CSTR abstracts counts"),
        "cstr.npz",
    ),
    _Entry(
        "yaleb",
        "Extended Yale B faces, 2432 x 2016 pixels in [0,1], 38 subjects",
        False,
        False,
        _build_yaleb,
        YALEB_FILE,
    ),
    _Entry(
        "yaleb5",
        "Yale B, 5 subjects, 9-dim affine PCA, projected to d=50, unit norm (WWS15 Sec. 5)",
        False,
        False,
        _build_yaleb5,
        YALEB_FILE,
    ),
]
_BY_NAME = {e.name: e for e in _ENTRIES}


class DatasetInfo(str):
    """A registered dataset's name (a ``str``, usable wherever a name is expected) carrying
    ``description``, ``public``, ``demo`` and ``available``; ``to_dict()`` gives all four."""

    def __new__(cls, name, description="", public=False, demo=False, available=True):
        self = super().__new__(cls, name)
        self.description, self.public, self.demo = description, public, demo
        self.available = available
        return self

    def __getnewargs__(self):  # copy / pickle keep the details
        return (str(self), self.description, self.public, self.demo, self.available)

    @property
    def name(self):
        return str(self)

    def to_dict(self):
        return {
            "name": str(self),
            "description": self.description,
            "public": self.public,
            "demo": self.demo,
            "available": self.available,
        }


def _extra_files():
    """Other loadable files in data_dir(), registered under their file stem."""
    root = data_dir()
    if root is None:
        return {}
    known = {e.file for e in _ENTRIES if e.file}
    out = {}
    for path in sorted(root.iterdir()):
        stem = path.stem
        if (
            path.is_file()
            and path.suffix.lower() in _EXTENSIONS
            and path.name not in known
            and stem not in _BY_NAME
        ):
            out[stem] = _Entry(
                stem,
                f"file {path.name} in {ENV_VAR}",
                False,
                False,
                (lambda p=path, **kw: load(p, **kw)),
                path.name,
            )
    return out


def _available(entry):
    return entry.file is None or (data_dir() is not None and (data_dir() / entry.file).is_file())


def list_datasets(include_unavailable=False):
    """Names of the registered datasets, as :class:`DatasetInfo` strings that also carry
    ``description``, ``public``, ``demo`` and ``available``.

    Real datasets appear only when their file is in ``PRIVCLUST_DATA_DIR`` unless
    ``include_unavailable``.
    """
    entries = list(_ENTRIES) + list(_extra_files().values())
    infos = [DatasetInfo(e.name, e.description, e.public, e.demo, _available(e)) for e in entries]
    infos += [
        DatasetInfo(
            name,
            ds.description or "large data set on Dask (operator's registry)",
            False,
            False,
            True,
        )
        for name, ds in registered_datasets().items()
        if name not in _BY_NAME
    ]
    return [info for info in infos if include_unavailable or info.available]


def get_dataset(name, **params):
    """Build the dataset registered as ``name``; ``params`` go to its generator or builder."""
    entry = _BY_NAME.get(name) or _extra_files().get(name)
    if entry is None and name in registered_datasets():
        if params:
            raise TypeError(f"dataset {name!r} (registered by the operator) takes no parameters")
        return registered_datasets()[name]
    if entry is None:
        names = ", ".join(list_datasets())
        raise ValueError(f"unknown dataset {name!r}; available: {names}")
    if not _available(entry):
        raise ValueError(
            f"dataset {name!r} needs {entry.file} in {ENV_VAR} (currently "
            f"{os.environ.get(ENV_VAR) or 'unset'})"
        )
    try:
        return entry.build(**params)
    except TypeError as exc:
        raise TypeError(f"dataset {name!r}: {exc}") from None
