"""The public facts a plan is built from: declared by the owner, never read from the records."""

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...metrics import data_matrix

FAMILIES = ("kmeans", "subspace", "onecluster", "cocluster")
DEFAULT_EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)


@dataclass
class PublicFacts:
    """Everything the planner may use: public by declaration, never read from the records.

    ``family`` one of :data:`FAMILIES`; ``n_samples`` (records, or rows of a count matrix),
    ``n_features`` (features, or columns); ``n_clusters`` (k, or row clusters K);
    ``subspace_dim`` (q, subspace family); ``n_col_clusters`` (L, co-clustering);
    ``n_points`` (t, the ball size of 1-cluster; default n/2); ``bounds`` (lo, hi) of the
    public box (k-means, 1-cluster; the subspace family uses the unit ball); ``delta`` for the
    approximate algorithms (default 1/(n ln n), n public); ``unit`` the ledger's unit;
    ``twin``: public settings of the twin (see :func:`build_twin`); ``public_sample``: an
    optional array of public records the owner publishes (any family; a scipy sparse count
    matrix for co-clustering): the twins are then bootstraps of it (see :data:`SAMPLE_RULE`);
    ``public_labels``: optional labels of those records (same length), published with them.
    The subspace and co-clustering families need them with a sample: their utilities are
    measured against the classes (the class subspaces; NMI with the class labels).

    Raises
    ------
    ValueError
        Naming the parameter: a sample that is not a finite (m, n_features) array (m >= 2;
        counts must be non-negative; subspace records must lie in the unit ball), labels that
        are not a finite 1-D array of the sample's length, a subspace sample whose labels do
        not give ``n_clusters`` classes of at least ``subspace_dim`` records each.
    """

    family: str
    n_samples: int
    n_features: int
    n_clusters: int = 2
    subspace_dim: int | None = None
    n_col_clusters: int | None = None
    n_points: int | None = None
    bounds: tuple | None = None
    delta: float | None = None
    unit: str = "replace"
    twin: dict = field(default_factory=dict)
    public_sample: object = None
    public_labels: object = None

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        for name in ("n_samples", "n_features", "n_clusters"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.family == "subspace" and (
            self.subspace_dim is None or not 1 <= self.subspace_dim < self.n_features
        ):
            raise ValueError("the subspace family needs subspace_dim q with 1 <= q < n_features")
        if self.family == "cocluster" and self.n_col_clusters is None:
            self.n_col_clusters = self.n_clusters
        if self.family in ("kmeans", "onecluster") and self.bounds is None:
            raise ValueError(f"the {self.family} family needs public bounds (lo, hi)")
        if self.delta is None:
            n = self.n_samples
            self.delta = 1.0 / (n * math.log(n)) if n > 1 else 1e-6
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if self.public_sample is not None:
            self.public_sample = self._check_sample(self.public_sample)
        if self.public_labels is not None:
            self.public_labels = self._check_labels(self.public_labels)
        elif self.public_sample is not None and self.family in ("subspace", "cocluster"):
            what = "the class subspaces" if self.family == "subspace" else "the NMI"
            raise ValueError(
                f"public_labels are needed with a public_sample of the "
                f"{self.family} family ({what} of the twin are measured against "
                "the sample's classes)"
            )

    def _check_sample(self, sample):
        d = self.n_features
        if sp.issparse(sample) and self.family != "cocluster":
            raise ValueError("public_sample may be sparse only for the cocluster family")
        sample = data_matrix(sample, "public_sample")
        if sample.shape[1] != d or sample.shape[0] < 2:
            raise ValueError(
                f"public_sample must be an (m, {d}) array with m >= 2, got shape {sample.shape}"
            )
        values = sample.data if sp.issparse(sample) else sample
        if self.family == "cocluster" and np.any(values < 0):
            raise ValueError(
                "public_sample of the cocluster family holds counts: negative values found"
            )
        if self.family == "subspace" and np.any(np.linalg.norm(sample, axis=1) > 1.0 + 1e-9):
            raise ValueError(
                "public_sample of the subspace family must lie in the unit ball "
                "(the algorithms' public bound), as the private records do"
            )
        return sample

    def _check_labels(self, labels):
        if self.public_sample is None:
            raise ValueError("public_labels were given without a public_sample")
        labels = np.asarray(labels)
        m = self.public_sample.shape[0]
        if labels.ndim != 1 or labels.shape[0] != m:
            raise ValueError(
                f"public_labels must be a 1-D array of the public_sample's length "
                f"{m}, got shape {labels.shape}"
            )
        if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
            raise ValueError("public_labels must be finite (NaN or inf found)")
        if labels.dtype.kind not in "biufUSO":
            raise ValueError(f"public_labels must hold class labels, got dtype {labels.dtype}")
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.ravel()
        if self.family == "subspace":
            sizes = np.bincount(codes)
            if len(sizes) != self.n_clusters or sizes.min() < self.subspace_dim:
                raise ValueError(
                    f"public_labels must give n_clusters={self.n_clusters} classes "
                    f"of at least subspace_dim={self.subspace_dim} records each "
                    f"(a class subspace is estimated per label); got class sizes "
                    f"{sizes.tolist()}"
                )
        return codes

    @property
    def shape(self):
        return (int(self.n_samples), int(self.n_features))

    @classmethod
    def from_curator(cls, curator, family, n_samples=None, **declared):
        """Facts from ``curator.public_facts()`` (name, n_features, unit, and n only under the
        replace-one unit) plus what the owner declares; never touches the records."""
        facts = curator.public_facts()
        n = facts.get("n_samples", n_samples)
        if n is None:
            raise ValueError(
                "the number of records is not public under this ledger's unit: "
                "declare n_samples (or release a noisy count first)"
            )
        return cls(
            family=family,
            n_samples=int(n),
            n_features=int(facts["n_features"]),
            unit=facts["unit"],
            **declared,
        )

    @classmethod
    def from_shape(cls, dataset, family, **declared):
        """Facts from a dataset's public shape only (``dataset.shape``), plus declarations."""
        n, d = (int(s) for s in dataset.shape)
        return cls(family=family, n_samples=n, n_features=d, **declared)


def _box(facts):
    lo, hi = facts.bounds
    d = facts.n_features
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (d,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (d,)).copy()
    if np.any(hi <= lo):
        raise ValueError("bounds must satisfy lo < hi on every feature")
    return lo, hi
