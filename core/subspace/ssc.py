"""Sparse subspace clustering (Elhamifar & Vidal 2013). NONPRIVATE.

The program of Elhamifar & Vidal (2013, Sec. 3.2-3.3, Eq. (13)-(14)), with Y = X^T (d x n),

    min_{C, E}  ||C||_1 + lambda_e ||E||_1 + (lambda_z / 2) ||Y - Y C - E||_F^2
    s.t.        diag(C) = 0   and, for affine subspaces (Sec. 3.3), 1^T C = 1^T,

solved by the ADMM of their Sec. 4 / appendix in our own restatement: an auxiliary A = C carries
the smooth term, C takes the l1 proximal step, E takes an elementwise soft-threshold. The
regularisers follow Sec. 3.2: lambda_z = alpha_z / mu_z and lambda_e = alpha_e / mu_e with
mu_z = min_i max_{j != i} |y_i^T y_j| and mu_e = min_i max_{j != i} ||y_j||_1, which makes the
program invariant to the scale of the data. With the corruption term, mu_z is taken over the
dictionary [Y, I / lambda_e] that term adds (see ``_mu_z``).

Without the dense-noise term (``noise=False``; the "faces" preset) the program is
min ||C||_1 + lambda_e ||E||_1 s.t. Y = Y C + E, diag(C) = 0 (Sec. 3.1-3.2 with Z = 0), solved by
a two-block ADMM with a multiplier on Y = Y A + E (see ``ssc_coefficients``).

The A-step solves an n x n system K A = R with K = lambda_z Y^T Y + rho I (+ rho 1 1^T in the
affine case). K only needs the Gram matrix Y^T Y: when n <= d (faces: n ~ 320, d = 2016) the
n x n system is factored once; when d < n it is applied through the Woodbury identity with a
(d + 1) x (d + 1) factor. Memory is O(n^2 + n d) in both cases.
"""

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import validate_data

from .._threads import single_threaded
from ..constraints import POSITIVE_INT, RANDOM_STATES, Interval, Real, StrOptions
from ..privacy import as_generator
from .projection import check_data, resolve_preset, spectral_fit

#: Published settings of Elhamifar & Vidal (2013, Sec. 7): faces (Extended Yale B, Sec. 7.2)
#: use the corruption term with alpha_e = 20 on linear subspaces, the data represented exactly
#: up to the sparse errors (Y = Y C + E, as the authors' released face code enforces; alpha_z =
#: 20 only matters with the dense-noise term); motion segmentation (Hopkins 155, Sec. 7.1) uses
#: affine subspaces, alpha_z = 800, the dense-noise term and no corruption term.
SSC_PRESETS = {
    "faces": {"alpha": 20.0, "alpha_e": 20.0, "affine": False, "outliers": True, "noise": False},
    "motion": {"alpha": 800.0, "affine": True, "outliers": False, "noise": True},
}
SSC_PRESETS["lighting"] = SSC_PRESETS["faces"]

_DEFAULTS = {"alpha": 20.0, "alpha_e": None, "affine": False, "outliers": False, "noise": True}


def _mu_z(G, Y=None, lam_e=None):
    """mu_z = min_i max_{j != i} |y_i^T y_j| over the points that have a non-orthogonal
    neighbour; (mu_z, mask of those points, the per-point maxima). A zero (or
    orthogonal-to-all) point has the zero representation for every lambda_z and is left out of
    the minimum instead of making it 0.

    With the corruption term (``Y`` and ``lam_e`` given) the dictionary of each point is
    [Y_{-i}, I / lam_e] (E = (I / lam_e) F with ||F||_1 = lam_e ||E||_1), so the zero solution
    (c_i, e_i) = 0 is optimal iff lam_z max(max_{j != i} |y_j^T y_i|, ||y_i||_inf / lam_e) <= 1
    (the argument of Elhamifar & Vidal 2013, Sec. 3.2, applied to that dictionary). The
    maximum then includes ||y_i||_inf / lam_e. Without it, one near-black face image
    (|y_i^T y_j| ~ 0.03 against a median of ~360 on 2-subject Extended Yale B sets) made
    lambda_z ~ 1e4 times too large and SSC erred 40-47 % on such sets.
    """
    A = np.abs(G)
    np.fill_diagonal(A, 0.0)
    top = A.max(axis=1)
    if Y is not None and lam_e is not None:
        top = np.maximum(top, np.abs(Y).max(axis=0) / lam_e)
    scale = float(top.max()) if top.size else 0.0
    ok = top > 1e-12 * scale if scale > 0 else np.zeros(len(top), bool)
    return (float(top[ok].min()) if ok.any() else 0.0), ok, top


def _mu_e(Y):
    """mu_e = min_i max_{j != i} ||y_j||_1: the second largest column l1 norm (the largest when
    two columns share it)."""
    l1 = np.abs(Y).sum(axis=0)
    if l1.size < 2:
        return float(l1.max(initial=0.0))
    return float(np.partition(l1, -2)[-2])


def ssc_coefficients(
    X,
    alpha=20.0,
    rho=None,
    tol=2e-4,
    max_iter=200,
    *,
    affine=False,
    outliers=False,
    alpha_e=None,
    noise=True,
    return_errors=False,
    single_precision=True,
):
    """ADMM for the SSC programs of Elhamifar & Vidal (2013, Sec. 3).

    ``noise=True``: the noisy program (Sec. 3.2, Eq. (13)-(14); ADMM of the appendix),

        min ||C||_1 + lambda_e ||E||_1 + (lambda_z / 2) ||Y - Y C - E||_F^2,

    with an auxiliary A = C for the smooth term (penalty rho) and the E-step after the A-step.

    ``noise=False``: no dense-noise term, the data are represented exactly up to the sparse
    errors (Sec. 3.1-3.2 with Z = 0),

        min ||C||_1 + lambda_e ||E||_1   s.t.   Y = Y C + E,

    (noiseless SSC, Y = Y C, when ``outliers`` is False). This is the program the authors'
    released face-clustering ADMM enforces (a multiplier on Y = Y C + E); on Extended Yale B it
    erred 7.3 / 9.4 % on 3-subject sets {1, 4, 10} / {4, 7, 10} where the noisy program (any
    mu_z) erred 17 / 19 %. Solved by a two-block ADMM with blocks A and (C, E), constraints
    A = C (penalty rho) and Y = Y A + E (penalty mu = 10 rho / median_i m_i, where m_i is the
    per-point maximum of ``_mu_z``: the median, not the minimum, so that one near-black image
    does not slow the ADMM down), over-relaxation 1.6 (Boyd et al. 2011, Sec. 3.4.3). The
    solution does not depend on mu or rho; they only set the speed (on 3-subject Yale B sets
    the objective is within 5e-4 of its optimum after 150 iterations).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Points as rows (the paper's Y is ``X.T``).
    alpha : float
        alpha_z > 1; lambda_z = alpha_z / mu_z (Sec. 3.2). Unused when ``noise`` is False.
    rho : float or None
        ADMM penalty of A = C; default ``alpha`` (noisy program) or 40 (``noise=False``).
    tol, max_iter : float, int
        Stop when ||A - C||_inf, ||A_t - A_{t-1}||_inf (noisy program) or
        ||Y - Y A - E||_inf / ||Y||_inf (``noise=False``), and ||A^T 1 - 1||_inf when affine,
        are all below ``tol``, or after ``max_iter`` iterations.
    affine : bool
        Add the affine constraint 1^T C = 1^T (Sec. 3.3).
    outliers : bool
        Add the sparse-corruption term lambda_e ||E||_1 (Sec. 3.2, Eq. (14)).
    alpha_e : float or None
        alpha_e > 1; lambda_e = alpha_e / mu_e. Default ``alpha``.
    noise : bool
        Keep the dense-noise term (lambda_z / 2) ||Z||_F^2 (True) or require Z = 0 (False).
    return_errors : bool
        Also return E (d x n; zeros when ``outliers`` is False).
    single_precision : bool
        Run the two d x n x n products of each iteration (Y A and Y^T E, the cost of an
        iteration when d > n) in float32. Measured on 5-subject Yale B sets: the same labels
        and half the time; pass False for a double-precision solve.

    Returns
    -------
    C : ndarray (n, n), n_iter : int[, E : ndarray (d, n)]

    References
    ----------
    Elhamifar, E. and Vidal, R. (2013). Sparse subspace clustering: algorithm, theory, and
        applications. IEEE TPAMI 35(11), 2765-2781, Sec. 3 and the appendix (ADMM).
    Boyd, S., Parikh, N., Chu, E., Peleato, B. and Eckstein, J. (2011). Distributed optimization
        and statistical learning via the alternating direction method of multipliers. Found. Trends
        Mach. Learn. 3(1).
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    Y = X.T
    G = X @ X.T
    exact = not noise
    lam_e = None
    if outliers:
        lam_e = float(alpha if alpha_e is None else alpha_e) / max(_mu_e(Y), 1e-300)
    mu_z, active, top = _mu_z(G, Y if outliers else None, lam_e)
    if mu_z <= 0:  # every point is zero or orthogonal to all others
        C = np.zeros((n, n))
        return (C, 0, np.zeros((d, n))) if return_errors else (C, 0)
    if exact:
        rho = 40.0 if rho is None else float(rho)
        pen = 10.0 * rho / float(np.median(top[active]))  # penalty of Y = Y A + E
        relax = 1.6
        y_scale = float(np.abs(Y).max())
    else:
        pen = float(alpha) / mu_z  # lambda_z
        rho = float(alpha) if rho is None else float(rho)
        relax = 1.0
    thr_e = lam_e / pen if outliers else None
    use_e = outliers or exact  # exact: the E-step also updates the multiplier
    ones = np.ones(n)
    if use_e:
        dt = np.float32 if single_precision else np.float64
        Yd = Y.astype(dt)
        Xd = np.ascontiguousarray(X, dtype=dt)

    # K = pen G + rho I (+ rho 1 1^T) = rho I + B B^T with B = [sqrt(pen) X, sqrt(rho) 1]
    if d + int(affine) < n:
        B = np.sqrt(pen) * X
        if affine:
            B = np.hstack([B, np.full((n, 1), np.sqrt(rho))])
        small = cho_factor(rho * np.eye(B.shape[1]) + B.T @ B)

        def solve(R):
            return (R - B @ cho_solve(small, B.T @ R)) / rho
    else:
        K = pen * G + rho * np.eye(n)
        if affine:
            K += rho
        Kinv = cho_solve(cho_factor(K), np.eye(n))

        def solve(R):
            return Kinv @ R

    P = solve(pen * G + (rho if affine else 0.0))  # K^{-1}(pen G + rho 1 1^T)
    k1 = solve(ones[:, None])[:, 0] if affine else None
    C = np.zeros((n, n))
    Delta = np.zeros((n, n))
    delta = np.zeros(n)
    E = np.zeros((d, n), dtype=Yd.dtype) if use_e else None
    # exact: U = (multiplier of Y = Y A + E) / pen; the (C, E)-step gives U = clip(T, thr_e)
    # and E = T - U for T = relaxed residual + U, so U is all the dual state the data term needs
    U = np.zeros((d, n), dtype=Yd.dtype) if exact else None
    thr_u = (thr_e if outliers else np.inf) if exact else None
    A_prev = np.zeros((n, n))
    it = 0
    for it in range(1, int(max_iter) + 1):
        R = rho * C - Delta
        if exact:  # Y^T (pen E - Lam) = pen Y^T (E - U)
            R -= pen * (Xd @ (E - U))
        elif outliers:
            R -= pen * (Xd @ E)
        A = P + solve(R)
        if affine:
            A -= np.outer(k1, delta)
        A_hat = relax * A + (1.0 - relax) * C if exact else A
        J = A_hat + Delta / rho
        C_new = J - np.clip(J, -1.0 / rho, 1.0 / rho)  # soft threshold at 1/rho
        np.fill_diagonal(C_new, 0.0)
        check = not exact or it % 10 == 0 or it == max_iter
        if exact:
            T = Yd @ A.astype(Yd.dtype)
            np.subtract(Yd, T, out=T)  # Y - Y A
            T *= relax  # over-relaxed residual ...
            E *= 1.0 - relax
            T += E
            T += U  # ... plus the scaled multiplier
            U_new = np.clip(T, -thr_u, thr_u)
            np.subtract(T, U_new, out=T)  # E: soft threshold at lam_e/pen
            E = T
            if check:  # ||Y - Y A_hat - E||_inf = ||U_new - U||_inf
                np.subtract(U_new, U, out=U)
                feas = float(np.abs(U).max()) / y_scale
                err = max(float(np.abs(A - C_new).max()), feas)
            U = U_new
        elif outliers:
            Res = Yd - Yd @ A.astype(Yd.dtype)
            E = Res - np.clip(Res, -thr_e, thr_e)  # soft threshold at lam_e/lam_z
        Delta += rho * (A_hat - C_new)
        C = C_new
        if not exact:
            err = max(np.abs(A - C).max(), np.abs(A - A_prev).max())
        if affine:
            gap = A.sum(axis=0) - 1.0
            delta += rho * (relax * gap)
            err = max(err, np.abs(gap).max()) if check else err
        if check and err < tol:
            break
        A_prev = A
    C[:, ~active] = 0.0  # zero points: the zero representation
    if return_errors:
        return C, it, (E.astype(float) if outliers else np.zeros((d, n)))
    return C, it


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
    noise : bool or None
        Keep the dense-noise term (lambda_z / 2) ||Y - Y C - E||_F^2 (Sec. 3.2, Eq. (13)); with
        False the program is min ||C||_1 + lambda_e ||E||_1 s.t. Y = Y C + E (no Z), which
        erred about half as much on Extended Yale B (see ``ssc_coefficients``). Default True
        (False in the "faces" preset).
    preset : {None, "faces", "lighting", "motion"}
        The published settings (Sec. 7): "faces" (alias "lighting"): alpha_e = 20, linear,
        with E, no dense-noise term; "motion": alpha_z = 800, affine, no E. Parameters given
        explicitly (not None) override the preset.
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

    Examples
    --------
    >>> from privclust.core import SparseSubspaceClustering
    >>> from privclust.core.data import make_union_of_subspaces
    >>> data = make_union_of_subspaces(n_samples=100, n_features=4, n_clusters=2, subspace_dim=1,
    ...                                noise=0.01, random_state=0)
    >>> est = SparseSubspaceClustering(n_clusters=2, subspace_dim=1, random_state=0).fit(data.X)
    >>> est.labels_.shape
    (100,)
    """

    _parameter_constraints = {
        "n_clusters": [POSITIVE_INT],
        "subspace_dim": [POSITIVE_INT],
        "alpha": [None, Interval(Real, 0, None, closed="neither")],
        "affine": [None, "boolean"],
        "outliers": [None, "boolean"],
        "alpha_e": [None, Interval(Real, 0, None, closed="neither")],
        "noise": [None, "boolean"],
        "preset": [None, StrOptions(set(SSC_PRESETS))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [POSITIVE_INT],
        "random_state": RANDOM_STATES,
    }

    def __init__(
        self,
        n_clusters=3,
        subspace_dim=1,
        alpha=None,
        affine=None,
        outliers=None,
        alpha_e=None,
        noise=None,
        preset=None,
        tol=2e-4,
        max_iter=200,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.alpha = alpha
        self.affine = affine
        self.outliers = outliers
        self.alpha_e = alpha_e
        self.noise = noise
        self.preset = preset
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def resolved_params(self):
        """The (alpha, alpha_e, affine, outliers, noise) the fit uses: explicit > preset >
        default."""
        return resolve_preset(
            self.preset,
            SSC_PRESETS,
            {
                "alpha": self.alpha,
                "alpha_e": self.alpha_e,
                "affine": self.affine,
                "outliers": self.outliers,
                "noise": self.noise,
            },
            _DEFAULTS,
        )

    @single_threaded
    def fit(self, X, y=None):
        self._validate_params()
        X = check_data(validate_data(self, X, dtype=np.float64), self.n_clusters, self.subspace_dim)
        if len(X) < 2:
            raise ValueError("SSC needs at least 2 samples")
        p = self.resolved_params()
        rng = as_generator(self.random_state)
        C, self.n_iter_ = ssc_coefficients(
            X,
            p["alpha"],
            tol=self.tol,
            max_iter=self.max_iter,
            affine=bool(p["affine"]),
            outliers=bool(p["outliers"]),
            alpha_e=p["alpha_e"],
            noise=bool(p["noise"]),
        )
        self.coef_ = C
        W = np.abs(C)
        W /= np.maximum(W.max(axis=0, keepdims=True), 1e-300)
        return spectral_fit(self, X, W + W.T, rng)
