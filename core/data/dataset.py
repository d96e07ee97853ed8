"""The :class:`Dataset` container shared by loaders, generators, the registry and the app."""
import hashlib

import numpy as np
import scipy.sparse as sp

_FINGERPRINT_VERSION = b"privclust-dataset-v1"


def _as_matrix(X):
    """Return X as a read-only float64 C-contiguous 2-D array or a canonical float64 CSR matrix."""
    if sp.issparse(X):
        A = sp.csr_matrix(X, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.eliminate_zeros()
        A.sort_indices()
        A.indices = A.indices.astype(np.int64, copy=False)
        A.indptr = A.indptr.astype(np.int64, copy=False)
        for arr in (A.data, A.indices, A.indptr):
            arr.flags.writeable = False
        if A.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got {A.ndim} dimensions")
        return A
    try:
        arr = np.array(X, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be a numeric array: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got shape {arr.shape}")
    arr += 0.0  # canonical zero: -0.0 -> 0.0 so equal data hash equally
    arr.flags.writeable = False
    return arr


class Dataset:
    """A data matrix with optional labels, ground truth and provenance.

    Parameters
    ----------
    X : array-like (n_samples, n_features) or scipy.sparse matrix
        Stored as a read-only float64 C-contiguous array, or as a canonical float64 CSR matrix
        (duplicates summed, explicit zeros removed, sorted indices) for sparse count data.
    labels : array-like (n_samples,), optional
        Reference labels (evaluation only; never used by private estimators).
    name : str
    feature_names : sequence of str, optional
        Kept verbatim as plain strings (user-controlled text: escape before rendering).
    truth : dict, optional
        Ground truth of a generator (subspaces, centres, radius, ...).
    public : bool
        True for synthetic/demo data whose raw values may be shown; real data is private.
    description : str
    """

    def __init__(self, X, labels=None, name="", feature_names=None, truth=None, public=False,
                 description=""):
        if feature_names is None and hasattr(X, "columns") and not sp.issparse(X):
            feature_names = list(X.columns)  # a pandas DataFrame
        self.X = _as_matrix(X)
        n, d = self.X.shape
        if labels is not None:
            labels = np.asarray(labels)
            if labels.ndim != 1 or labels.shape[0] != n:
                raise ValueError(f"labels must have shape ({n},), got {labels.shape}")
        self.labels = labels
        self.name = str(name)
        if feature_names is not None:
            feature_names = [str(f) for f in feature_names]
            if len(feature_names) != d:
                raise ValueError(f"feature_names has {len(feature_names)} entries for {d} features")
        self.feature_names = feature_names
        self.truth = dict(truth) if truth else {}
        self.public = bool(public)
        self.description = str(description)
        self._fingerprint = None

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def shape(self):
        return self.X.shape

    @property
    def is_sparse(self):
        return sp.issparse(self.X)

    @property
    def fingerprint(self):
        """SHA-256 hex digest of the canonical bytes of X (kind, shape, dtype, contents).

        Stable across loads of the same values (whatever the file format or original dtype);
        labels, names and truth do not enter it. Keys the persistent budget ledger.
        """
        if self._fingerprint is None:
            h = hashlib.sha256(_FINGERPRINT_VERSION)
            n, d = self.X.shape
            kind = b"csr" if self.is_sparse else b"dense"
            h.update(kind + b"|%d|%d|<f8|" % (n, d))
            if self.is_sparse:
                parts = ((self.X.indptr, "<i8"), (self.X.indices, "<i8"), (self.X.data, "<f8"))
                for arr, dt in parts:
                    h.update(np.ascontiguousarray(arr, dtype=dt).data)
            else:
                h.update(np.ascontiguousarray(self.X, dtype="<f8").data)
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def toarray(self):
        """Dense float64 copy of X."""
        return self.X.toarray() if self.is_sparse else np.array(self.X)

    def __len__(self):
        return self.n_samples

    def __repr__(self):
        kind = "sparse" if self.is_sparse else "dense"
        lab = "" if self.labels is None else f", {len(np.unique(self.labels))} classes"
        pub = "public" if self.public else "private"
        return (f"Dataset(name={self.name!r}, {self.n_samples}x{self.n_features} {kind}{lab}, "
                f"{pub}, fingerprint={self.fingerprint[:12]})")
