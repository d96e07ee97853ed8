"""Shared pieces of the subspace-clustering family (Wang, Wang & Singh, NIPS 2015, Sec. 2).

``fit_subspaces`` maps labels to orthonormal bases (top-q left singular vectors per cluster, no
centring); ``squared_residuals`` gives d^2(x, S) = ||x||^2 - ||U^T x||^2; ``spectral_labels`` is
the spectral step shared by TSC, SSC and LRR: normalised spectral clustering (Ng, Jordan & Weiss
2002) with a dense eigensolver for small graphs, then ``KMeans``.
"""

import numbers
import warnings

import numpy as np
from scipy import sparse
from scipy.linalg import eigh
from sklearn.cluster import KMeans
from sklearn.manifold import spectral_embedding

from ..privacy import as_generator, haar_stiefel


def check_data(X, n_clusters, subspace_dim, name="X"):
    """Validate X (n, d) and the (k, q) parameters; return X as a float64 array."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features); got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    n, d = X.shape
    if not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive integer; got {n_clusters!r}")
    if not isinstance(subspace_dim, numbers.Integral) or not 1 <= subspace_dim < d:
        raise ValueError(
            "subspace_dim must be an integer with 1 <= subspace_dim < "
            f"n_features={d}; got {subspace_dim!r}"
        )
    if n_clusters > n:
        raise ValueError(f"n_clusters={n_clusters} exceeds n_samples={n}")
    return X


def squared_residuals(X, bases):
    """(n, k) matrix of d^2(x_i, S_l) = ||x_i||^2 - ||U_l^T x_i||^2, clamped at 0.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2, Eq. (3).
    """
    bases = np.asarray(bases, dtype=float)
    k, d, q = bases.shape
    # (n, q*k) product with q as the slow axis: the sum over q runs over contiguous k-blocks
    proj = X @ bases.transpose(1, 2, 0).reshape(d, q * k)
    proj2 = (proj * proj).reshape(len(X), q, k).sum(axis=1)
    return np.maximum(np.einsum("ij,ij->i", X, X)[:, None] - proj2, 0.0)


def complete_basis(V, q, rng):
    """Complete the orthonormal columns V (d, r) to q columns with Haar-random directions
    of the orthogonal complement. Used when a cluster has fewer than q points: the completion is
    data-independent, so the solver still returns q-dimensional subspaces at no privacy cost."""
    d, r = V.shape
    if r >= q:
        return V[:, :q]
    G = rng.standard_normal((d, q - r))
    G -= V @ (V.T @ G)
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.where(np.diag(R) == 0, 1.0, np.diag(R)))
    return np.hstack([V, Q])


def fit_subspaces(X, labels, q, n_clusters=None, random_state=None):
    """Top-q left singular vectors of each cluster's points (linear subspaces, no centring).

    Returns bases of shape (k, d, q). A cluster with r < q points (or rank r < q) is completed
    with Haar-random orthonormal directions of the complement; an empty cluster gets a Haar
    basis. ``n_clusters`` defaults to ``labels.max() + 1``.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 2.2 (a clustering as k linear subspaces).
    """
    X = np.asarray(X, dtype=float)
    labels = np.asarray(labels)
    rng = as_generator(random_state)
    n, d = X.shape
    if labels.shape != (n,):
        raise ValueError(f"labels must have shape ({n},); got {labels.shape}")
    if not 1 <= q < d:
        raise ValueError(f"q must satisfy 1 <= q < n_features={d}; got {q}")
    k = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    bases = np.empty((k, d, q))
    for ell in range(k):
        Xl = X[labels == ell]
        if len(Xl) == 0:
            bases[ell] = haar_stiefel(d, q, rng)
            continue
        U, s, _ = np.linalg.svd(Xl.T, full_matrices=False)
        rank = int(np.sum(s > s[0] * 1e-12)) if s[0] > 0 else 0
        bases[ell] = complete_basis(U[:, : min(rank, q)], q, rng)
    return bases


def sklearn_seed(rng):
    """An int seed for scikit-learn estimators, drawn from our Generator."""
    return int(rng.integers(2**31 - 1))


#: Largest n for which ``spectral_labels`` uses a dense symmetric eigensolver (LAPACK, exact to
#: machine precision; about 0.05 s at n = 700); larger graphs use LOBPCG.
DENSE_EIGEN_MAX = 1000


def spectral_labels(W, n_clusters, rng, n_init=20):
    """Spectral clustering of the symmetric non-negative affinity W (dense or sparse).

    The normalised spectral clustering of Ng, Jordan & Weiss (2002), as in Elhamifar & Vidal
    (2013, Alg. 1, step 3): the top-k eigenvectors of D^{-1/2} W D^{-1/2}, each row scaled to
    unit norm, then k-means with ``n_init`` restarts (default 20). The row normalisation
    matters on real data: without it (scikit-learn's ``SpectralClustering``, which clusters the
    unnormalised embedding) SSC erred 17-39 % on 5-subject Extended Yale B sets where the same
    affinities give 1-7 % with it (an isolated or weakly connected point has a tiny embedding
    row that k-means cannot place). Isolated vertices (zero degree) get a zero row.

    Eigen solver: for n <= ``DENSE_EIGEN_MAX`` a dense LAPACK ``eigh`` of the top-k eigenpairs
    (exact; the repeated eigenvalue 1 of a block-diagonal affinity is no difficulty for it);
    above, scikit-learn's ``spectral_embedding`` with LOBPCG. Its default ARPACK path runs
    shift-invert at the eigenvalue 1, which is repeated (singular shift) exactly when the
    affinity is block-diagonal, the ideal case for subspace clustering; it then returned mixed
    eigenvectors and TSC-full failed noiseless recovery for 3 of 6 seeds (n=300, d=10, k=q=3,
    s=5). LOBPCG recovered all.

    References
    ----------
    Ng, A. Y., Jordan, M. I. and Weiss, Y. (2002). On spectral clustering: analysis and an
        algorithm. NIPS 2001.
    Elhamifar, E. and Vidal, R. (2013). Sparse subspace clustering: algorithm, theory, and
        applications. IEEE TPAMI 35(11), 2765-2781, Alg. 1, step 3.
    """
    if n_clusters == 1:
        return np.zeros(W.shape[0], dtype=int)
    seed = sklearn_seed(rng)
    n = W.shape[0]
    if n <= DENSE_EIGEN_MAX:
        Wd = W.toarray() if sparse.issparse(W) else np.asarray(W, dtype=float)
        deg = Wd.sum(axis=1)
        inv = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
        M = inv[:, None] * Wd * inv[None, :]
        _, V = eigh(M, subset_by_index=[n - n_clusters, n - 1])
    else:
        with warnings.catch_warnings():  # a block-diagonal (disconnected) affinity is the ideal
            warnings.filterwarnings("ignore", message="Graph is not fully connected")
            V = spectral_embedding(
                W,
                n_components=n_clusters,
                eigen_solver="lobpcg",
                random_state=seed,
                norm_laplacian=True,
                drop_first=False,
            )
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    V = V / np.where(norms > 0, norms, 1.0)
    km = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=seed)
    return km.fit_predict(V).astype(int)


def spectral_fit(estimator, X, W, rng):
    """Finish an affinity-based fit (SSC, LRR): set ``affinity_matrix_`` = W, ``labels_`` by
    :func:`spectral_labels` and ``subspaces_`` by :func:`fit_subspaces`; return ``estimator``."""
    estimator.affinity_matrix_ = W
    estimator.labels_ = spectral_labels(W, estimator.n_clusters, rng)
    estimator.subspaces_ = fit_subspaces(
        X,
        estimator.labels_,
        estimator.subspace_dim,
        n_clusters=estimator.n_clusters,
        random_state=rng,
    )
    return estimator


def resolve_preset(preset, presets, explicit, defaults):
    """Parameters from ``explicit`` (values not None) over ``presets[preset]`` over
    ``defaults``; an unknown ``preset`` is a ValueError naming the accepted ones."""
    if preset is None:
        base = {}
    else:
        try:
            base = presets[preset]
        except KeyError:
            raise ValueError(
                f"preset must be None or one of {sorted(presets)}; got {preset!r}"
            ) from None
    out = dict(defaults)
    out.update(base)
    out.update({key: value for key, value in explicit.items() if value is not None})
    return out
