"""Sparse subspace clustering (Elhamifar & Vidal 2013). NONPRIVATE.

The program of Elhamifar & Vidal (2013, Sec. 3.2-3.3, Eq. (13)-(14)), with Y = X^T (d x n),

    min_{C, E}  ||C||_1 + lambda_e ||E||_1 + (lambda_z / 2) ||Y - Y C - E||_F^2
    s.t.        diag(C) = 0   and, for affine subspaces (Sec. 3.3), 1^T C = 1^T,

solved by the ADMM of their Sec. 4 / appendix in our own restatement: an auxiliary A = C carries
the smooth term, C takes the l1 proximal step, E takes an elementwise soft-threshold. The
regularisers follow Sec. 3.2: lambda_z = alpha_z / mu_z and lambda_e = alpha_e / mu_e with
mu_z = min_i max_{j != i} |y_i^T y_j| and mu_e = min_i max_{j != i} ||y_j||_1, which makes the
program invariant to the scale of the data.

The A-step solves an n x n system K A = R with K = lambda_z Y^T Y + rho I (+ rho 1 1^T in the
affine case). K only needs the Gram matrix Y^T Y: when n <= d (faces: n ~ 320, d = 2016) the
n x n system is factored once; when d < n it is applied through the Woodbury identity with a
(d + 1) x (d + 1) factor. Memory is O(n^2 + n d) in both cases.
"""
import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClusterMixin

from ..privacy import as_generator
from .projection import check_data, fit_subspaces, single_threaded, spectral_labels

#: Published settings of Elhamifar & Vidal (2013, Sec. 7): faces (Extended Yale B, Sec. 7.2)
#: use the corruption term with alpha_z = alpha_e = 20 on linear subspaces; motion segmentation
#: (Hopkins 155, Sec. 7.1) uses affine subspaces, alpha_z = 800 and no corruption term.
SSC_PRESETS = {
    "faces": {"alpha": 20.0, "alpha_e": 20.0, "affine": False, "outliers": True},
    "motion": {"alpha": 800.0, "affine": True, "outliers": False},
}
SSC_PRESETS["lighting"] = SSC_PRESETS["faces"]

_DEFAULTS = {"alpha": 20.0, "alpha_e": None, "affine": False, "outliers": False}


def _mu_z(G):
    """mu_z = min_i max_{j != i} |y_i^T y_j| over the points that have a non-orthogonal
    neighbour; (mu_z, mask of those points). A zero (or orthogonal-to-all) point has the zero
    representation for every lambda_z and is left out of the minimum instead of making it 0."""
    A = np.abs(G)
    np.fill_diagonal(A, 0.0)
    top = A.max(axis=1)
    scale = float(top.max()) if top.size else 0.0
    ok = top > 1e-12 * scale if scale > 0 else np.zeros(len(top), bool)
    return (float(top[ok].min()) if ok.any() else 0.0), ok


def _mu_e(Y):
    """mu_e = min_i max_{j != i} ||y_j||_1: the second largest column l1 norm (the largest when
    two columns share it)."""
    l1 = np.abs(Y).sum(axis=0)
    if l1.size < 2:
        return float(l1.max(initial=0.0))
    return float(np.partition(l1, -2)[-2])


def ssc_coefficients(X, alpha=20.0, rho=None, tol=2e-4, max_iter=200, *, affine=False,
                     outliers=False, alpha_e=None, return_errors=False, single_precision=True):
    """ADMM for the SSC program of Elhamifar & Vidal (2013, Eq. (13)-(14)).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Points as rows (the paper's Y is ``X.T``).
    alpha : float
        alpha_z > 1; lambda_z = alpha_z / mu_z (Sec. 3.2).
    rho : float or None
        ADMM penalty; default ``alpha``.
    tol, max_iter : float, int
        Stop when ||A - C||_inf, ||A_t - A_{t-1}||_inf (and ||A^T 1 - 1||_inf when affine) are
        all below ``tol``, or after ``max_iter`` iterations.
    affine : bool
        Add the affine constraint 1^T C = 1^T (Sec. 3.3).
    outliers : bool
        Add the sparse-corruption term lambda_e ||E||_1 (Sec. 3.2, Eq. (14)).
    alpha_e : float or None
        alpha_e > 1; lambda_e = alpha_e / mu_e. Default ``alpha``.
    return_errors : bool
        Also return E (d x n; zeros when ``outliers`` is False).
    single_precision : bool
        Run the two d x n x n products of the E-step (Y A and Y^T E, the cost of each
        iteration when d > n) in float32. Measured on 5-subject Yale B sets: the same labels
        and half the time; pass False for a double-precision solve.

    Returns
    -------
    C : ndarray (n, n), n_iter : int[, E : ndarray (d, n)]
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    Y = X.T
    G = X @ X.T
    mu_z, active = _mu_z(G)
    if mu_z <= 0:                      # every point is zero or orthogonal to all others
        C = np.zeros((n, n))
        return (C, 0, np.zeros((d, n))) if return_errors else (C, 0)
    lam_z = float(alpha) / mu_z
    rho = float(alpha) if rho is None else float(rho)
    if outliers:
        mu_e = _mu_e(Y)
        lam_e = float(alpha if alpha_e is None else alpha_e) / max(mu_e, 1e-300)
        thr_e = lam_e / lam_z
    ones = np.ones(n)
    if outliers:
        dt = np.float32 if single_precision else np.float64
        Yd = Y.astype(dt)
        Xd = np.ascontiguousarray(X, dtype=dt)

    # K = lam_z G + rho I (+ rho 1 1^T) = rho I + B B^T with B = [sqrt(lam_z) X, sqrt(rho) 1]
    if d + int(affine) < n:
        B = np.sqrt(lam_z) * X
        if affine:
            B = np.hstack([B, np.full((n, 1), np.sqrt(rho))])
        small = cho_factor(rho * np.eye(B.shape[1]) + B.T @ B)

        def solve(R):
            return (R - B @ cho_solve(small, B.T @ R)) / rho
    else:
        K = lam_z * G + rho * np.eye(n)
        if affine:
            K += rho
        Kinv = cho_solve(cho_factor(K), np.eye(n))

        def solve(R):
            return Kinv @ R

    rhs0 = lam_z * G + (rho if affine else 0.0)
    P = solve(rhs0)                       # K^{-1}(lam_z G + rho 1 1^T)
    k1 = solve(ones[:, None])[:, 0] if affine else None
    C = np.zeros((n, n))
    Delta = np.zeros((n, n))
    delta = np.zeros(n)
    E = np.zeros((d, n), dtype=Yd.dtype) if outliers else None
    A_prev = np.zeros((n, n))
    it = 0
    for it in range(1, int(max_iter) + 1):
        R = rho * C - Delta
        if outliers:
            R -= lam_z * (Xd @ E)
        A = P + solve(R)
        if affine:
            A -= np.outer(k1, delta)
        J = A + Delta / rho
        C = J - np.clip(J, -1.0 / rho, 1.0 / rho)          # soft threshold at 1/rho
        np.fill_diagonal(C, 0.0)
        if outliers:
            Res = Yd - Yd @ A.astype(Yd.dtype)
            E = Res - np.clip(Res, -thr_e, thr_e)           # soft threshold at lam_e/lam_z
        Delta += rho * (A - C)
        err = max(np.abs(A - C).max(), np.abs(A - A_prev).max())
        if affine:
            gap = A.sum(axis=0) - 1.0
            delta += rho * gap
            err = max(err, np.abs(gap).max())
        if err < tol:
            break
        A_prev = A
    C[:, ~active] = 0.0                    # zero points: the zero representation
    if return_errors:
        return C, it, (E.astype(float) if outliers else np.zeros((d, n)))
    return C, it


def resolve_preset(preset, presets, explicit, defaults):
    """Parameters from ``explicit`` (values not None) over ``presets[preset]`` over
    ``defaults``."""
    if preset is None:
        base = {}
    else:
        try:
            base = presets[preset]
        except KeyError:
            raise ValueError(f"preset must be None or one of {sorted(presets)}; "
                             f"got {preset!r}") from None
    out = dict(defaults)
    out.update(base)
    out.update({key: value for key, value in explicit.items() if value is not None})
    return out


class SparseSubspaceClustering(ClusterMixin, BaseEstimator):
    """Sparse subspace clustering (SSC) of Elhamifar & Vidal (2013).

    Sparse self-representation by ADMM (Sec. 3-4), affinity W = |C| + |C|^T after scaling each
    column of C by its largest absolute value (Alg. 1, step 2), then spectral clustering.

    Parameters
    ----------
    n_clusters : int
        Number of subspaces k.
    subspace_dim : int
        Dimension q of the fitted subspaces (``subspaces_``); SSC itself does not use it.
    alpha : float or None
        alpha_z > 1, lambda_z = alpha_z / mu_z (Sec. 3.2). Default 20 (800 in the "motion"
        preset).
    affine : bool or None
        Affine constraint 1^T C = 1^T (Sec. 3.3), for data on affine subspaces such as the
        trajectories of rigid motions. Default False (True in the "motion" preset).
    outliers : bool or None
        Sparse-corruption term lambda_e ||E||_1 (Sec. 3.2, Eq. (14)), for sparse gross errors
        such as shadows and specularities in face images. Default False (True in the "faces"
        preset).
    alpha_e : float or None
        alpha_e > 1, lambda_e = alpha_e / mu_e. Default ``alpha`` (20 in the "faces" preset).
    preset : {None, "faces", "lighting", "motion"}
        The published settings (Sec. 7): "faces" (alias "lighting"): alpha_z = alpha_e = 20,
        linear, with E; "motion": alpha_z = 800, affine, no E. Parameters given explicitly
        (not None) override the preset.
    tol : float
        ADMM tolerance (default 2e-4).
    max_iter : int
        ADMM iteration cap (default 200).
    random_state : None, int or Generator
        Seeds the spectral step and the completion of ``subspaces_``.

    Attributes
    ----------
    labels_ : ndarray (n,)
    subspaces_ : ndarray (k, d, q)
        Top-q linear subspaces of the clusters (``fit_subspaces``).
    affinity_matrix_ : ndarray (n, n)
    coef_ : ndarray (n, n)
        The self-representation C (column i represents point i).
    n_iter_ : int
        ADMM iterations run.

    Notes
    -----
    Points that are zero (or orthogonal to every other point) have the zero representation for
    every lambda_z; they are left out of mu_z instead of making lambda_z infinite, and are
    isolated vertices of the affinity graph. With ``preset=None`` and the defaults the program
    is the linear noisy formulation (Eq. (13) without E), the one used inside
    sample-and-aggregate.

    References
    ----------
    E. Elhamifar and R. Vidal, "Sparse subspace clustering: algorithm, theory, and
    applications", IEEE TPAMI 35(11), 2013.
    """

    def __init__(self, n_clusters=3, subspace_dim=1, alpha=None, affine=None, outliers=None,
                 alpha_e=None, preset=None, tol=2e-4, max_iter=200, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.alpha = alpha
        self.affine = affine
        self.outliers = outliers
        self.alpha_e = alpha_e
        self.preset = preset
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def resolved_params(self):
        """The (alpha, alpha_e, affine, outliers) the fit uses: explicit > preset > default."""
        return resolve_preset(self.preset, SSC_PRESETS,
                              {"alpha": self.alpha, "alpha_e": self.alpha_e,
                               "affine": self.affine, "outliers": self.outliers}, _DEFAULTS)

    @single_threaded
    def fit(self, X, y=None):
        X = check_data(X, self.n_clusters, self.subspace_dim)
        if len(X) < 2:
            raise ValueError("SSC needs at least 2 samples")
        p = self.resolved_params()
        if not p["alpha"] > 0:
            raise ValueError(f"alpha must be > 0; got {p['alpha']!r}")
        if p["alpha_e"] is not None and not p["alpha_e"] > 0:
            raise ValueError(f"alpha_e must be > 0; got {p['alpha_e']!r}")
        rng = as_generator(self.random_state)
        C, self.n_iter_ = ssc_coefficients(X, p["alpha"], tol=self.tol, max_iter=self.max_iter,
                                           affine=bool(p["affine"]),
                                           outliers=bool(p["outliers"]), alpha_e=p["alpha_e"])
        self.coef_ = C
        W = np.abs(C)
        W /= np.maximum(W.max(axis=0, keepdims=True), 1e-300)
        W = W + W.T
        self.affinity_matrix_ = W
        self.labels_ = spectral_labels(W, self.n_clusters, rng)
        self.subspaces_ = fit_subspaces(X, self.labels_, self.subspace_dim,
                                        n_clusters=self.n_clusters, random_state=rng)
        return self
