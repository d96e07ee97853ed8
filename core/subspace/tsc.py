"""Thresholding-based subspace clustering (TSC). NONPRIVATE.

``variant="full"`` (default): Heckel & Bolcskei (2015, Alg. 1): points normalised to unit norm,
each point keeps its q most correlated others with weights exp(-2 arccos|<x_i, x_j>|), the
symmetrised graph is clustered spectrally.
``variant="simplified"``: the TSC of Wang, Wang & Singh (2015, Alg. 2): the q-nearest-neighbour
graph in |<x_i, x_j>|, its connected components, one subspace per component; when the number of
components is not k that algorithm is undefined and we fall back to the full variant.
The neighbour search runs over row chunks: no n x n matrix is formed.
"""

import math

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import validate_data

from .._threads import single_threaded
from ..constraints import POSITIVE_INT, RANDOM_STATES, StrOptions
from ..privacy import as_generator
from .projection import check_data, complete_basis, fit_subspaces, spectral_labels

_CHUNK = 1024


def top_correlations(X, s):
    """Indices (n, s) and |inner products| (n, s) of each point's s most correlated others.

    References
    ----------
    Heckel, R. and Bolcskei, H. (2015). Robust subspace clustering via thresholding. IEEE
        Trans. Inf. Theory 61(11), 6320-6342, Sec. 2 (the thresholding step).
    """
    n = len(X)
    idx = np.empty((n, s), dtype=np.intp)
    val = np.empty((n, s))
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        G = np.abs(X[start:stop] @ X.T)
        G[np.arange(stop - start), np.arange(start, stop)] = -np.inf
        part = np.argpartition(G, -s, axis=1)[:, -s:]
        idx[start:stop] = part
        val[start:stop] = np.take_along_axis(G, part, axis=1)
    return idx, val


class ThresholdSubspaceClustering(ClusterMixin, BaseEstimator):
    """Thresholding-based subspace clustering (Heckel & Bolcskei 2015).

    Parameters
    ----------
    n_clusters : int
        Number of subspaces k.
    subspace_dim : int
        Dimension of the fitted subspaces (``subspaces_``); it does not set the neighbour count.
    n_neighbors : int or None
        The paper's q, the number of neighbours kept per point. It must be small relative to
        the number of points per subspace n_l (the analysis of Heckel & Bolcskei 2015, Thm. 1,
        takes q <= n_l / 6). Default None: q = max(3, ceil(n_l / 20)) with n_l = n / k, a
        neighbour count that grows with the samples per subspace and stays inside that range
        once n_l >= 18.
    variant : {"full", "simplified"}
        Spectral clustering of the weighted graph (default) or the connected-components
        variant of Wang, Wang & Singh (2015, Alg. 2).
    subspace_method : {"svd", "random_points"}
        Simplified variant only: top-q SVD of each component (default) or the span of q random
        points of the component, as in that Alg. 2.
    random_state : None, int or Generator

    Attributes
    ----------
    labels_, subspaces_ (k, d, q), n_components_ (simplified variant), fallback_ (True when
    the simplified variant fell back to spectral clustering), n_neighbors_ (q used).

    References
    ----------
    R. Heckel and H. Bolcskei, "Robust subspace clustering via thresholding", IEEE Trans. Inf.
    Theory 61(11), 2015. Y. Wang, Y.-X. Wang and A. Singh, "Differentially private subspace
    clustering", NeurIPS 2015.

    Examples
    --------
    >>> from privclust.core import ThresholdSubspaceClustering
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=300, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.01, random_state=0)
    >>> est = ThresholdSubspaceClustering(n_clusters=2, subspace_dim=1, random_state=0).fit(data.X)
    >>> est.labels_.shape
    (300,)
    """

    _parameter_constraints = {
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "n_neighbors": [None, POSITIVE_INT],
        "variant": [StrOptions({"simplified", "full"})],
        "subspace_method": [StrOptions({"svd", "random_points"})],
        "random_state": RANDOM_STATES,
    }

    def __init__(
        self,
        n_clusters=3,
        subspace_dim=1,
        n_neighbors=None,
        variant="full",
        subspace_method="svd",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_neighbors = n_neighbors
        self.variant = variant
        self.subspace_method = subspace_method
        self.random_state = random_state

    @single_threaded
    def fit(self, X, y=None):
        self._validate_params()
        X = check_data(validate_data(self, X, dtype=np.float64), self.n_clusters, self.subspace_dim)
        rng = as_generator(self.random_state)
        n, k, q = len(X), self.n_clusters, self.subspace_dim
        s = self.n_neighbors
        if s is None:
            s = max(3, math.ceil(n / (20 * k)))
        s = int(min(max(int(s), 1), n - 1))
        self.n_neighbors_ = s
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        Xn = X / np.where(norms > 0, norms, 1.0)
        rows = np.repeat(np.arange(n), s)
        self.fallback_ = False
        if self.variant == "simplified":
            idx, _ = top_correlations(X, s)
            G = coo_matrix((np.ones(n * s), (rows, idx.ravel())), shape=(n, n)).tocsr()
            G = G.maximum(G.T)
            self.n_components_, comp = connected_components(G, directed=False)
            if self.n_components_ == k:
                self.labels_ = comp.astype(int)
                self.subspaces_ = self._component_bases(X, comp, rng)
                return self
            self.fallback_ = True
        idx, val = top_correlations(Xn, s)
        w = np.exp(-2.0 * np.arccos(np.clip(val.ravel(), 0.0, 1.0)))
        Z = coo_matrix((w, (rows, idx.ravel())), shape=(n, n)).tocsr()
        self.labels_ = spectral_labels(Z + Z.T, k, rng)
        self.subspaces_ = fit_subspaces(X, self.labels_, q, n_clusters=k, random_state=rng)
        return self

    def _component_bases(self, X, comp, rng):
        k, q = self.n_clusters, self.subspace_dim
        if self.subspace_method == "svd":
            return fit_subspaces(X, comp, q, n_clusters=k, random_state=rng)
        bases = np.empty((k, X.shape[1], q))
        for ell in range(k):
            members = np.flatnonzero(comp == ell)
            pick = rng.choice(members, size=min(q, len(members)), replace=False)
            U, sv, _ = np.linalg.svd(X[pick].T, full_matrices=False)
            rank = int(np.sum(sv > sv[0] * 1e-12)) if sv[0] > 0 else 0
            bases[ell] = complete_basis(U[:, :rank], q, rng)
        return bases
