"""The :class:`Dataset` container shared by loaders, generators, the registry and the app."""

import hashlib

import numpy as np
import scipy.sparse as sp

from .record_key import record_key

_FINGERPRINT_VERSION = b"privclust-dataset-v1"
_BUDGET_KEY_VERSION = b"privclust-budget-key-v1"


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


def _check_source(source):
    """``source`` as a budget key (64 hex characters) or None; a Dataset gives its budget_key."""
    if source is None:
        return None
    if isinstance(source, Dataset):
        return source.budget_key
    if (
        not isinstance(source, str)
        or len(source) != 64
        or any(c not in "0123456789abcdef" for c in source)
    ):
        raise ValueError(
            "source must be a Dataset or a budget_key (64 lowercase hex characters), "
            f"got {source!r}"
        )
    return source


def _csr_row_digests(A):
    """SHA-256 of each row's (column indices, values) of a canonical CSR matrix (a list)."""
    idx = np.ascontiguousarray(A.indices, dtype="<i8")
    val = np.ascontiguousarray(A.data, dtype="<f8")
    ptr = A.indptr
    out = []
    for i in range(A.shape[0]):
        a, b = int(ptr[i]), int(ptr[i + 1])
        h = hashlib.sha256(b"%d|" % (b - a))
        h.update(idx[a:b].data)
        h.update(val[a:b].data)
        out.append(h.digest())
    return out


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
    source : str or Dataset, optional
        For a view derived from other records (a subset, a projection, a preprocessing such as
        the registry's ``yaleb5`` of ``yaleb``): the source's :attr:`budget_key` (or the source
        Dataset itself, whose key is taken). The view then shares its source's privacy budget.
    truth_public : bool, optional
        Whether ``truth`` may be shown to an analyst. False means *evaluation only*: the truth
        was computed from the (private) records themselves (e.g. top singular vectors of the raw
        data), so it and every metric against it belong to the data owner view. Default: the
        value of ``public`` (a generator's truth on public data is public; the truth attached to
        private data is evaluation-only unless declared otherwise).

    Identity
    --------
    ``fingerprint``: SHA-256 of the exact canonical bytes of X, order-sensitive (row order,
    dense/sparse kind and shape enter it). For caching and for naming exactly these values.
    ``budget_key``: the key of the privacy budget (the ledger). Canonical -- the same for any row
    order, column order, dtype and storage (dense or sparse) of the same records -- and equal to
    ``source`` for a derived view, so loads, reorderings, conversions and views of one source
    share one budget. It cannot link a modified copy (rows dropped or changed) to its original.
    """

    def __init__(
        self,
        X,
        labels=None,
        name="",
        feature_names=None,
        truth=None,
        public=False,
        description="",
        source=None,
        truth_public=None,
    ):
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
        self.truth_public = self.public if truth_public is None else bool(truth_public)
        self.source = _check_source(source)
        self._fingerprint = None
        self._record_key = None
        self._legacy_key = None

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

    def _shape_hash(self, version):
        """A SHA-256 started with ``version``, the storage kind and the shape: two digests of
        different kinds or shapes never collide on equal contents."""
        h = hashlib.sha256(version)
        kind = b"csr" if self.is_sparse else b"dense"
        h.update(kind + b"|%d|%d|<f8|" % self.X.shape)
        return h

    @property
    def fingerprint(self):
        """SHA-256 hex digest of the canonical bytes of X (kind, shape, dtype, contents).

        Stable across loads of the same values (whatever the file format or original dtype);
        labels, names and truth do not enter it. Keys the persistent budget ledger.
        """
        if self._fingerprint is None:
            h = self._shape_hash(_FINGERPRINT_VERSION)
            if self.is_sparse:
                parts = ((self.X.indptr, "<i8"), (self.X.indices, "<i8"), (self.X.data, "<f8"))
                for arr, dt in parts:
                    h.update(np.ascontiguousarray(arr, dtype=dt).data)
            else:
                h.update(np.ascontiguousarray(self.X, dtype="<f8").data)
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    @property
    def budget_key(self):
        """Key of this data's privacy budget: ``source`` if set, else :attr:`record_key`."""
        return self.source if self.source is not None else self.record_key

    @property
    def record_key(self):
        """Canonical key of the records (:func:`~privclust.core.data.record_key.record_key`):
        the same for any row order, column order, dtype and storage (dense or sparse), and for
        the same records streamed in blocks. Labels, names and truth do not enter it."""
        if self._record_key is None:
            self._record_key = record_key(self.X)
        return self._record_key

    @property
    def legacy_budget_keys(self):
        """Budget keys earlier versions gave these records (a ledger file written by them is
        adopted under :attr:`budget_key`, never started afresh): the row-order-invariant key of
        version 1 (rows sorted, or sparse rows ordered by their digests, hashed with the shape
        and the storage kind)."""
        if self.source is not None:
            return ()
        if self._legacy_key is None:
            h = self._shape_hash(_BUDGET_KEY_VERSION)
            n, d = self.X.shape
            if self.is_sparse:
                for digest in sorted(_csr_row_digests(self.X)):
                    h.update(digest)
            elif n:
                order = np.lexsort(self.X.T[::-1]) if d else np.arange(n)
                h.update(np.ascontiguousarray(self.X[order], dtype="<f8").data)
            self._legacy_key = h.hexdigest()
        return (self._legacy_key,)

    def toarray(self):
        """Dense float64 copy of X."""
        return self.X.toarray() if self.is_sparse else np.array(self.X)

    def __len__(self):
        return self.n_samples

    def __repr__(self):
        kind = "sparse" if self.is_sparse else "dense"
        lab = "" if self.labels is None else f", {len(np.unique(self.labels))} classes"
        pub = "public" if self.public else "private"
        return (
            f"Dataset(name={self.name!r}, {self.n_samples}x{self.n_features} {kind}{lab}, "
            f"{pub}, fingerprint={self.fingerprint[:12]})"
        )
