"""The public region of the records for the coreset and DPHD k-means: a box or a Euclidean ball.

Both algorithms clip each record (free: a per-record transformation) to a public ball of centre
c and radius r, so one record moves a sum by at most r in L2 norm. A public box [lo, hi] gives
c = (lo + hi) / 2 and r = ||hi - lo|| / 2 (the box is inside that ball); a public ``radius``
gives the ball around the origin. Dense and scipy.sparse records are handled without
densifying: a clipped, centred record is s_i (x_i - c) with a per-record scale s_i <= 1.

References
----------
Chang, A. and Kamath, P. (2021). Practical differentially private clustering. Google
    Research (public radius; records clipped to it).
Balcan, M.-F., Dick, T., Liang, Y., Mou, W. and Zhang, H. (2017). Differentially private
    clustering in high-dimensional Euclidean spaces. ICML 2017, Sec. 2 (data in a ball of
    public radius).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..privacy._validation import check_box
from .prefix_tree import add_noise


def public_ball(bounds, radius, n_features):
    """(lo, hi, centre, r) from exactly one of a public box ``bounds`` and a public ``radius``
    (lo, hi are None with a radius). ValueError naming the parameter otherwise."""
    if (bounds is None) == (radius is None):
        raise ValueError(
            "give exactly one public region: bounds=(lower, upper) (a box) or "
            "radius=r (a ball around the origin); it is never computed from the data"
        )
    if bounds is not None:
        lo, hi = check_box(bounds, n_features, contains="the records")
        return lo, hi, (lo + hi) / 2.0, float(np.linalg.norm(hi - lo) / 2.0)
    if isinstance(radius, (bool, np.bool_)) or not np.isscalar(radius):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    r = float(radius)
    if not (np.isfinite(r) and r > 0):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    return None, None, np.zeros(n_features), r


class BallRecordsMixin:
    """Data checks of the estimators that clip records to a public ball or box: dense arrays
    and scipy.sparse matrices; sparse records only with ``radius`` or a box containing 0 (the
    implicit zeros must stay inside), refused before any charge."""

    _accepts_sparse = True

    def check_data_kind(self, sparse):
        super().check_data_kind(sparse)
        if sparse and self.bounds is not None:
            try:
                lo, hi = np.broadcast_arrays(*[np.asarray(b, dtype=float) for b in self.bounds])
            except (TypeError, ValueError):
                raise ValueError(
                    f"bounds must be a pair (lower, upper), got {self.bounds!r}"
                ) from None
            if not np.all((lo <= 0.0) & (hi >= 0.0)):
                raise ValueError(
                    "sparse records need a box that contains 0 in every "
                    "coordinate (bounds), or radius="
                )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def predict(self, X):
        """The index of the nearest released centre for each row (dense or sparse X)."""
        if not sp.issparse(X):
            return super().predict(X)
        check_is_fitted(self, "cluster_centers_")
        X = self._check_data(X)
        C = self.cluster_centers_
        if X.shape[1] != C.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features; the centres have {C.shape[1]}")
        return np.argmin((C * C).sum(1)[None, :] - 2.0 * np.asarray(X @ C.T), axis=1)

    def _check_data(self, X):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
            if not np.all(np.isfinite(X.data)):
                raise ValueError("X contains NaN or infinite values")
            return X
        return super()._check_data(X)


def clip_records(X, lo, hi, centre, r):
    """Clip the records to the box (if any) and return (X_box, s): the clipped, centred record i
    is s_i (x_i - centre) with ||.|| <= r. X_box stays sparse when X is."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        if lo is not None:
            cols = X.indices
            X.data = np.clip(X.data, lo[cols], hi[cols])
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        sq = sq - 2.0 * np.asarray(X @ centre).ravel() + float(centre @ centre)
    else:
        X = np.asarray(X, dtype=np.float64)
        if lo is not None:
            X = np.clip(X, lo, hi)
        diff = X - centre
        sq = np.einsum("ij,ij->i", diff, diff)
    norm = np.sqrt(np.maximum(sq, 0.0))
    s = np.where(norm > r, r / np.maximum(norm, np.finfo(float).tiny), 1.0)
    return X, s


def project_centred(X, s, centre, G):
    """(s_i (x_i - centre)) @ G for all records, dense (n, G.shape[1])."""
    return s[:, None] * (np.asarray(X @ G) - centre @ G)


def group_sums(X, s, centre, groups, n_groups):
    """Sums of the clipped, centred records per group (labels in [0, n_groups), -1 ignored);
    dense (n_groups, d)."""
    rows = np.flatnonzero(groups >= 0)
    g = groups[rows]
    ind = sp.csr_matrix((s[rows], (g, rows)), shape=(n_groups, X.shape[0]))
    sums = ind @ X
    sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums)
    weight = np.bincount(g, weights=s[rows], minlength=n_groups)
    return sums - weight[:, None] * centre[None, :]


def noisy_group_sums(X, s, centre, groups, n_groups, scale, noise, rng, size=None):
    """:func:`group_sums` plus i.i.d. Gaussian (``scale`` = sigma) or Laplace (``scale`` = b)
    noise on every coordinate of every group; ``size=N`` prepends a batch axis (audits)."""
    return add_noise(group_sums(X, s, centre, groups, n_groups), scale, noise, rng, size)


def back_to_region(points, lo, hi, centre, r):
    """Post-processing: map centred points back (add the centre) and into the public region."""
    norm = np.linalg.norm(points, axis=1, keepdims=True)
    points = points * np.minimum(1.0, r / np.maximum(norm, np.finfo(float).tiny))
    out = points + centre
    return out if lo is None else np.clip(out, lo, hi)
