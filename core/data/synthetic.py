"""Synthetic generators reproducing the papers' experimental data; each returns ground truth.

Every random draw comes from ``privclust.core.privacy.as_generator(random_state)``.
"""

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset
from .domain import clip_box, clip_l2, quantize


def _rng(random_state):
    from ..privacy import as_generator

    return as_generator(random_state)


def _int(value, name, low=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _nonneg(value, name):
    value = float(value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a non-negative finite number, got {value}")
    return value


def _orthonormal_bases(rng, k, d, q):
    """k orthonormal d x q bases of the column spaces of N(0,1) matrices (Haar-distributed)."""
    G = rng.standard_normal((k, d, q))
    Q, R = np.linalg.qr(G)
    signs = np.sign(np.diagonal(R, axis1=1, axis2=2))
    signs[signs == 0] = 1.0
    return Q * signs[:, None, :]


def make_union_of_subspaces(
    n_samples=1000,
    n_features=10,
    n_clusters=3,
    subspace_dim=3,
    noise=0.1,
    random_state=None,
    clip_radius=1.0,
):
    """Union of k random q-dim linear subspaces in R^d (Wang, Wang & Singh, NIPS 2015,
    Sec. 5).

    Each subspace is the column space of a d x q N(0,1) matrix (orthonormalised); every point is
    assigned to a subspace uniformly at random; x_i = U_l y_i + w_i with y_i uniform on the unit
    sphere S^{q-1} and w_i ~ N(0, noise^2 I_d); finally each record is clipped to the L2 ball of
    radius ``clip_radius`` (their Sec. 2 assumes ||x|| <= 1; the added noise can exceed it
    slightly and clipping keeps the direction; None skips it). Paper settings: Fig. 2(i)
    n=5000, d=5, k=3, q=3, noise=0.01; Fig. 2(ii)/Fig. 3 n=1000, d=10, k=3, q=3, noise=0.1.

    truth: ``subspaces`` (k, d, q) orthonormal bases, ``coefficients`` (n, q) the y_i, ``noise``.

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 5.
    """
    n = _int(n_samples, "n_samples")
    d = _int(n_features, "n_features", 2)
    k = _int(n_clusters, "n_clusters")
    q = _int(subspace_dim, "subspace_dim")
    if q >= d:
        raise ValueError(f"subspace_dim must be < n_features (1 <= q < d), got q={q}, d={d}")
    sigma = _nonneg(noise, "noise")
    rng = _rng(random_state)
    bases = _orthonormal_bases(rng, k, d, q)
    labels = rng.integers(k, size=n)
    y = rng.standard_normal((n, q))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    X = np.einsum("ndq,nq->nd", bases[labels], y)
    X += sigma * rng.standard_normal((n, d))
    if clip_radius is not None:
        X = clip_l2(X, clip_radius)
    truth = {"subspaces": bases, "coefficients": y, "noise": sigma, "clip_radius": clip_radius}
    return Dataset(
        X,
        labels=labels,
        name="union_of_subspaces",
        truth=truth,
        public=True,
        description=f"{k} random {q}-dim subspaces in R^{d}, noise {sigma:g} (WWS15 Sec. 5)",
    )


def make_gaussian_mixture(
    n_samples=100_000, n_features=10, n_clusters=10, separation=2.5, weights=None, random_state=None
):
    """Gaussian mixture of Schellekens et al., SPARS 2019, Fig. 1.

    k components with identity covariance and centres mu_i ~ N(0, (separation * k^(1/d))^2 I_d)
    (the paper uses separation 2.5, k = d = 10, n = 10^7; the CI configuration uses n = 10^5).
    Each point picks its component i.i.d. from ``weights`` (uniform by default: the paper does not
    state the weights).

    truth: ``centers`` (k, d), ``weights`` (k,), ``scale`` the centre standard deviation.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III,
        Fig. 1.
    """
    n = _int(n_samples, "n_samples")
    d = _int(n_features, "n_features")
    k = _int(n_clusters, "n_clusters")
    separation = _nonneg(separation, "separation")
    if weights is None:
        w = np.full(k, 1.0 / k)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {k} non-negative numbers with a positive sum")
        w = w / w.sum()
    rng = _rng(random_state)
    scale = separation * k ** (1.0 / d)
    centers = scale * rng.standard_normal((k, d))
    labels = rng.choice(k, size=n, p=w)
    X = rng.standard_normal((n, d))
    X += centers[labels]
    truth = {"centers": centers, "weights": w, "scale": scale}
    return Dataset(
        X,
        labels=labels,
        name="gaussian_mixture",
        truth=truth,
        public=True,
        description=f"{k} unit-covariance Gaussians in R^{d}, centres "
        f"N(0, ({separation:g} k^(1/d))^2 I) (SCH19 Fig. 1)",
    )


def make_planted_ball(
    n_samples=1000,
    n_features=2,
    n_inliers=None,
    std=0.01,
    grid_step=2.0**-16,
    center=None,
    random_state=None,
):
    """A small Gaussian cluster planted in uniform background on a grid in [0,1]^d (our benchmark
    for Nissim, Stemmer & Vadhan, PODS 2016, which has no experiments).

    ``n_inliers`` = t points (default n // 2) are drawn from N(center, std^2 I_d), the other n - t
    uniformly on [0,1]^d; then every record is clipped to the public box [0,1]^d and rounded to
    the public grid of step ``grid_step`` (the finite domain the paper requires, its Sec. 3 and
    5). ``center`` defaults to a uniform draw from [0.25, 0.75]^d, so the cluster lies well
    inside the cube.

    truth: ``center`` (d,), ``radius`` = the largest distance from the centre to a planted point
    after clipping and rounding (so B(center, radius) holds all t; r_opt(S, t) <= radius),
    ``inliers`` boolean mask (n,), ``std``, ``grid_step``, ``bounds`` (0, 1). labels: 1 = planted.

    References
    ----------
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016 (the problem; the paper has no experiments).
    """
    n = _int(n_samples, "n_samples")
    d = _int(n_features, "n_features")
    t = n // 2 if n_inliers is None else _int(n_inliers, "n_inliers")
    if t > n:
        raise ValueError(f"n_inliers must be <= n_samples, got {t} > {n}")
    std = _nonneg(std, "std")
    rng = _rng(random_state)
    if center is None:
        c = rng.uniform(0.25, 0.75, size=d)
    else:
        c = np.asarray(center, dtype=np.float64)
        if c.shape != (d,) or np.any(c < 0) or np.any(c > 1):
            raise ValueError(f"center must be a point of [0,1]^{d}")
    inliers = np.zeros(n, dtype=bool)
    inliers[rng.permutation(n)[:t]] = True
    X = rng.uniform(0.0, 1.0, size=(n, d))
    X[inliers] = c + std * rng.standard_normal((t, d))
    X = quantize(clip_box(X, 0.0, 1.0), grid_step)
    X = clip_box(X, 0.0, 1.0)  # a step that does not divide 1 could round just past the box
    radius = float(np.max(np.linalg.norm(X[inliers] - c, axis=1))) if t else 0.0
    truth = {
        "center": c,
        "radius": radius,
        "inliers": inliers,
        "std": std,
        "grid_step": float(grid_step),
        "bounds": (0.0, 1.0),
    }
    return Dataset(
        X,
        labels=inliers.astype(np.int64),
        name="planted_ball",
        truth=truth,
        public=True,
        description=f"{t} of {n} points in a ball of std {std:g} in "
        f"[0,1]^{d}, grid step {grid_step:g} (Nissim, Stemmer & Vadhan, PODS 2016)",
    )


def _default_block_means(K, L, signal, background):
    """Row cluster r concentrates on column clusters l with l % K == r (every l has one r)."""
    M = np.full((K, L), background, dtype=np.float64)
    cols = np.arange(L)
    M[cols % K, cols] = signal
    return M


def make_block_counts(
    n_rows=300,
    n_cols=200,
    n_row_clusters=3,
    n_col_clusters=3,
    model="poisson",
    block_means=None,
    signal=2.0,
    background=0.1,
    doc_length=100,
    sparse=False,
    random_state=None,
):
    """Block-structured count matrix with planted row and column clusters for co-clustering.

    Battaglia & Pensa (SDM 2025) have no synthetic experiment; this is a reconstruction of the standard
    latent-block count model. Row and column labels are drawn uniformly at random.
    - ``model="poisson"``: A_ij ~ Poisson(block_means[r_i, c_j]).
    - ``model="multinomial"``: row i is a document of ``doc_length`` words drawn with
      probabilities proportional to block_means[r_i, c_j] over the columns j.
    ``block_means`` (K, L) defaults to ``background`` everywhere and ``signal`` on the blocks
    (r, l) with l % K == r. ``sparse=True`` returns a CSR matrix.

    labels = row labels; truth: ``row_labels``, ``column_labels``, ``block_means``, ``model``.

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 5.
    """
    n = _int(n_rows, "n_rows")
    m = _int(n_cols, "n_cols")
    K = _int(n_row_clusters, "n_row_clusters")
    L = _int(n_col_clusters, "n_col_clusters")
    if model not in ("poisson", "multinomial"):
        raise ValueError(f"model must be 'poisson' or 'multinomial', got {model!r}")
    if block_means is None:
        M = _default_block_means(K, L, _nonneg(signal, "signal"), _nonneg(background, "background"))
    else:
        M = np.asarray(block_means, dtype=np.float64)
        if M.shape != (K, L):
            raise ValueError(f"block_means must have shape ({K}, {L}), got {M.shape}")
    if not np.all(np.isfinite(M)) or np.any(M < 0):
        raise ValueError("block_means must be non-negative and finite")
    rng = _rng(random_state)
    rows = rng.integers(K, size=n)
    cols = rng.integers(L, size=m)
    if model == "poisson":
        A = rng.poisson(M[rows][:, cols])
    else:
        length = _int(doc_length, "doc_length")
        P = M[rows][:, cols]
        total = P.sum(axis=1, keepdims=True)
        if np.any(total <= 0):
            raise ValueError("every row cluster needs a positive block mean for multinomial")
        A = rng.multinomial(length, P / total)
    A = sp.csr_matrix(A) if sparse else A
    truth = {"row_labels": rows, "column_labels": cols, "block_means": M, "model": model}
    return Dataset(
        A,
        labels=rows,
        name="block_counts",
        truth=truth,
        public=True,
        feature_names=None,
        description=f"{n}x{m} {model} counts with {K}x{L} planted blocks",
    )
