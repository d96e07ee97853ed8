"""DPNMF: non-negative matrix factorisation with an outlier term whose basis is updated with
Gaussian noise (Saha & Imtiaz, ACM TKDD 2024), as a row-clustering competitor of DP-tauCC
(Battaglia & Pensa, SDM 2025, Sec. 5: "DPNMF", evaluated by the argmax of the coefficients).

Only the basis update is a DP mechanism. The randomized-SVD initialisation and the coefficient
and outlier updates read the records without noise, as in the paper, so the estimator's plan has
kind "none": the :class:`~privclust.core.release.Curator` refuses it on private data, and it runs
only as a benchmark competitor on public (or owner) data.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize
from sklearn.utils.extmath import randomized_svd

from ..constraints import DELTA, POSITIVE_INT, RELATION, Interval, Real
from ..estimator import PrivateEstimator, check_positive_int, delta_param, epsilon_param
from ..privacy import BudgetAccountant, gaussian
from ._inputs import check_count_matrix

NOT_PRIVATE_WARNING = (
    "NOT PRIVATE: the randomized-SVD initialisation of the basis and the "
    "coefficient and outlier updates (and so row_labels_) read the records "
    "without noise, as in Saha & Imtiaz (2024); only the basis updates are "
    "Gaussian mechanisms. Benchmark competitor only."
)
_INNER_SWEEPS = 10  # HALS sweeps of the (non-private) coefficient update per iteration
_FLOOR = 1e-12


def basis_sensitivity(n_samples, coef_bound, outlier_bound):
    """L2 (Frobenius) sensitivity of the pair (A, B) = (H^T H / n, (X - R)^T H / n) when one
    record (x_i, h_i, r_i) is replaced, with ||x_i|| <= 1, 0 <= h_i, ||h_i|| <= coef_bound and
    ||r_i|| <= outlier_bound.

    A changes by (h h^T - h' h'^T) / n, of Frobenius norm <= sqrt(2) c^2 / n (the cross term
    (h . h')^2 is >= 0); B by ((x - r) h^T - (x' - r') h'^T) / n, of norm <= 2 (1 + lambda) c / n.

    References
    ----------
    Saha, S. and Imtiaz, H. (2024). Privacy-preserving non-negative matrix factorization with
        outliers. ACM TKDD 18(3); arXiv:2211.01451 (the L2 sensitivities of A and B; the
        bounds on h and r and the constants here are ours).
    """
    c, lam = float(coef_bound), float(outlier_bound)
    return math.hypot(math.sqrt(2.0) * c * c, 2.0 * (1.0 + lam) * c) / n_samples


def clip_rows(M, bound):
    """Each row of ``M`` scaled down to L2 norm at most ``bound`` (per record)."""
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    return M * np.minimum(1.0, bound / np.maximum(norms, _FLOOR))


def residual_norms(X, H, W):
    """||x_i - W h_i|| for every row, without forming the dense residual."""
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else (X * X).sum(axis=1)
    e2 = sq - 2.0 * (np.asarray(X @ W) * H).sum(axis=1) + ((H @ (W.T @ W)) * H).sum(axis=1)
    return np.sqrt(np.maximum(e2, 0.0))


def noisy_basis_statistics(X, H, s, W, epsilon, delta, coef_bound, outlier_bound, rng, size=None):
    """The private step: (A, B) = (H^T H / n, (X - R)^T H / n) plus Gaussian noise, with the
    outliers in the form R = diag(s) (X - H W^T) (r_i = s_i times the residual of row i).

    Every record is first forced into the bounds the sensitivity assumes (x_i to unit norm,
    h_i >= 0 to norm ``coef_bound``, s_i >= 0 so that ||r_i|| <= ``outlier_bound``), so the
    release is (epsilon, delta)-DP under replace-one neighbours for ANY input, given the public
    basis ``W`` (n public). ``X``: (n, d) array or sparse; ``H``: (n, k); ``s``: (n,); ``W``:
    (d, k). ``size=S`` prepends a batch axis of S independent releases (audits). Returns
    (A, B) of shapes (k, k) and (d, k) (or (S, k, k) and (S, d, k)).

    References
    ----------
    Saha, S. and Imtiaz, H. (2024). ACM TKDD 18(3); arXiv:2211.01451 (Gaussian noise on A
        and B, the statistics of the basis gradient W A - B).
    Balle, B. and Wang, Y.-X. (2018). ICML 2018, Thm. 8 (analytic calibration used here).
    """
    X = normalize(X)
    H = clip_rows(np.maximum(np.asarray(H, dtype=float), 0.0), coef_bound)
    e = residual_norms(X, H, W)
    s = np.minimum(
        np.maximum(np.asarray(s, dtype=float), 0.0), outlier_bound / np.maximum(e, _FLOOR)
    )
    n, k = H.shape
    # (X - R)^T H = X^T diag(1 - s) H + W H^T diag(s) H: R is never formed
    B = (np.asarray(X.T @ ((1.0 - s)[:, None] * H)) + W @ (H.T @ (s[:, None] * H))) / n
    noisy = gaussian(
        np.concatenate([H.T @ H / n, B]),
        basis_sensitivity(n, coef_bound, outlier_bound),
        epsilon,
        delta,
        rng,
        size=size,
    )
    return noisy[..., :k, :], noisy[..., k:, :]


def _hals(F, G, M, sweeps):
    """HALS sweeps on min_{F >= 0} ||M - F G||-type problems given the Gram G (k, k) and the
    cross term M (rows, k): f_j <- max(0, f_j + (m_j - F g_j) / g_jj) (Cichocki & Phan 2009)."""
    diag = np.maximum(np.diag(G), _FLOOR)
    for _ in range(sweeps):
        for j in range(G.shape[0]):
            F[:, j] = np.maximum(F[:, j] + (M[:, j] - F @ G[:, j]) / diag[j], 0.0)
    return F


def _nndsvd(X, k, seed):
    """NNDSVD start (Boutsidis & Gallopoulos 2008) from a randomized SVD (Halko et al. 2011).
    Reads the data without noise."""
    U, S, Vt = randomized_svd(X, k, random_state=seed)
    Up, Un, Vp, Vn = (
        np.maximum(U, 0),
        np.maximum(-U, 0),
        np.maximum(Vt.T, 0),
        np.maximum(-Vt.T, 0),
    )
    nup, nun = np.linalg.norm(Up, axis=0), np.linalg.norm(Un, axis=0)
    nvp, nvn = np.linalg.norm(Vp, axis=0), np.linalg.norm(Vn, axis=0)
    pos = nup * nvp >= nun * nvn
    u = np.where(pos, Up / np.maximum(nup, _FLOOR), Un / np.maximum(nun, _FLOOR))
    v = np.where(pos, Vp / np.maximum(nvp, _FLOOR), Vn / np.maximum(nvn, _FLOOR))
    scale = np.sqrt(S * np.where(pos, nup * nvp, nun * nvn))
    return u * scale, v * scale


class DPNMF(PrivateEstimator):
    """DPNMF (Saha & Imtiaz 2024): X ~ H W^T + R with an outlier matrix R, Gaussian noise on the
    basis update; rows clustered by the argmax of their coefficients.

    Our restatement for row clustering (records = rows of X; the paper's V is X^T). Every row
    is scaled to unit L2 norm. Start: NNDSVD from a randomized SVD of X (not private). Each of
    ``n_iter`` iterations then

    1. updates the coefficients H (HALS on ||X - R - H W^T||, not private) and clips each row
       h_i to norm ``coef_bound``;
    2. updates the outliers r_i = shrink(x_i - W h_i) by the column-group soft threshold
       ``outlier_penalty`` of the L2,1 penalty, then clips them to norm ``outlier_bound`` (not
       private);
    3. releases A = H^T H / n and B = (X - R)^T H / n with Gaussian noise of (epsilon/I,
       delta/I) each (sensitivity :func:`basis_sensitivity`; basic composition over the I
       iterations, where the paper uses Renyi accounting), and takes one projected gradient
       step of the basis from the noisy (A, B) alone, W <- max(0, W - eta (W A - B))
       (post-processing), columns rescaled to unit norm.

    Steps 1, 2 and the start read the records without noise, so ``privacy_`` has kind "none"
    (its mechanisms list the basis releases and their spend) and the Curator refuses it on
    private data. A benchmark competitor only.

    Parameters
    ----------
    n_clusters : int >= 1
        Rank k of the factorisation = the number of row clusters.
    epsilon : float > 0
        Budget of the basis updates (the paper's protocol in Battaglia & Pensa: eps < 1).
    delta : float in (0, 1)
        Delta of the basis updates (1e-5 in Battaglia & Pensa's protocol).
    n_iter : int >= 1
        Iterations I (4 in Battaglia & Pensa's Fig. 2).
    coef_bound : float > 0
        Public bound on the L2 norm of a row of H (rows are clipped to it).
    outlier_bound : float >= 0
        Public bound on the L2 norm of a row of R (rows are clipped to it).
    outlier_penalty : float >= 0
        Weight of the L2,1 outlier penalty (the group soft threshold).
    learning_rate : float > 0
        Step size eta of the noisy basis step. It sets how far the noise moves the basis from
        its (non-private) start: on classic3 / cstr at eps = 1, eta = 0.01 / 0.1 / 1 give row
        NMI 0.50 / 0.50 / 0.38 and 0.65 / 0.65 / 0.03 (benchmarks/cocluster/fig2_competitors.py).
    neighbouring : "replace"
    random_state : None, int or numpy.random.Generator
    ledger : Ledger or None
        A ledger refuses this estimator (its plan is not private).

    Attributes
    ----------
    components_ : ndarray (k, n_features)
        The basis W^T after the last noisy update.
    coefficients_ : ndarray (n_samples, k)
        NOT PRIVATE: H.
    row_labels_ : ndarray (n_samples,)
        NOT PRIVATE: argmax of each row of H.
    privacy_ : Guarantee
        Kind "none"; mechanisms: the I Gaussian basis releases.

    References
    ----------
    Saha, S. and Imtiaz, H. (2024). Privacy-preserving non-negative matrix factorization with
        outliers. ACM Trans. Knowl. Discov. Data 18(3); arXiv:2211.01451 (the objective
        V ~ WH + R with bounded outliers, the noisy gradient of the basis from A and B, the
        randomized-SVD start). The paper's text was not at hand: this is a restatement from
        its published summary, and the section numbers are not cited. Where it may differ
        (HALS for H, the L2,1 shrink for R, basic composition instead of Renyi accounting, the
        fixed step size) the choices are ours and stated above.
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 5 (DPNMF as a competitor: delta = 1e-5, eps < 1, row argmax).
    Cichocki, A. and Phan, A.-H. (2009). Fast local algorithms for large scale nonnegative
        matrix and tensor factorizations. IEICE Trans. Fundamentals E92-A(3) (HALS).
    Boutsidis, C. and Gallopoulos, E. (2008). SVD based initialization: a head start for
        nonnegative matrix factorization. Pattern Recognition 41(4) (NNDSVD).

    Examples
    --------
    >>> from privclust.core import DPNMF
    >>> from privclust.core.data import make_block_counts
    >>> data = make_block_counts(n_rows=120, n_cols=80, random_state=0)
    >>> est = DPNMF(n_clusters=3, epsilon=1.0, random_state=0).fit(data.X)
    >>> est.row_labels_.shape
    (120,)
    >>> print(est.privacy_.summary())
    not differentially private (no guarantee); 1 warning
    """

    _released = ("components_", "row_labels_")
    _accepts_sparse = True

    _parameter_constraints = {
        **PrivateEstimator._parameter_constraints,
        "n_clusters": [POSITIVE_INT],
        "delta": [DELTA],
        "n_iter": [POSITIVE_INT],
        "coef_bound": [Interval(Real, 0, None, closed="neither")],
        "outlier_bound": [Interval(Real, 0, None, closed="left")],
        "outlier_penalty": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "neighbouring": [RELATION],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # non-negative count matrices
        tags.input_tags.sparse = True  # dense or scipy.sparse
        return tags

    def __init__(
        self,
        n_clusters=2,
        epsilon=0.5,
        delta=1e-5,
        n_iter=4,
        coef_bound=1.0,
        outlier_bound=0.5,
        outlier_penalty=0.5,
        learning_rate=0.1,
        neighbouring="replace",
        random_state=None,
        ledger=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.coef_bound = coef_bound
        self.outlier_bound = outlier_bound
        self.outlier_penalty = outlier_penalty
        self.learning_rate = learning_rate
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _params(self):
        if self.neighbouring != "replace":
            raise ValueError(
                f"neighbouring must be 'replace' (the sensitivity divides by the "
                f"public n), got {self.neighbouring!r}"
            )
        out = [
            epsilon_param(self.epsilon),
            delta_param(self.delta, positive=True),
            check_positive_int(self.n_iter, "n_iter"),
        ]
        for name in ("coef_bound", "outlier_bound", "outlier_penalty", "learning_rate"):
            value = getattr(self, name)
            positive = name in ("coef_bound", "learning_rate")
            if (
                isinstance(value, (bool, np.bool_))
                or not isinstance(value, numbers.Real)
                or not math.isfinite(value)
                or value < 0
                or (positive and value == 0)
            ):
                raise ValueError(
                    f"{name} must be a finite number {'> 0' if positive else '>= 0'}, got {value!r}"
                )
            out.append(float(value))
        return out

    def _plan(self, n_samples, n_features):
        eps, delta, n_iter, *_ = self._params()
        if n_samples is None:
            raise ValueError("DPNMF's plan needs the public number of rows (replace-one)")
        k = check_positive_int(self.n_clusters, "n_clusters")
        if k > min(n_samples, n_features):
            raise ValueError(
                f"n_clusters={k} exceeds the rank limit min(n_rows, n_columns) = "
                f"{min(n_samples, n_features)}"
            )
        return self._guarantee(eps, delta, n_iter)

    def _guarantee(self, eps, delta, n_iter, sensitivity=None):
        acct = BudgetAccountant(eps, delta)
        for t in range(n_iter):
            acct.spend(
                f"Gaussian noisy basis statistics (A, B), iteration {t + 1}",
                eps / n_iter,
                delta / n_iter,
                sensitivity,
            )
        return acct.guarantee("none", "replace", [NOT_PRIVATE_WARNING])

    def _check_data(self, X):
        A, _ = check_count_matrix(X)
        return normalize(A)  # each record to unit L2 norm

    def _fit(self, X, rng):
        eps, delta, n_iter, c, lam, alpha, eta = self._params()
        n, d = X.shape
        k = int(self.n_clusters)
        sens = basis_sensitivity(n, c, lam)
        H, W = _nndsvd(X, k, int(rng.integers(2**31 - 1)))
        W = W / np.maximum(np.linalg.norm(W, axis=0), _FLOOR)
        s, Hr, Wr = np.zeros(n), H, W  # R = diag(s) (X - Hr Wr^T), never formed
        for _ in range(n_iter):
            XW = np.asarray(X @ W)
            M = XW - s[:, None] * (XW - Hr @ (Wr.T @ W))  # (X - R) W
            H = clip_rows(_hals(H.copy(), W.T @ W, M, _INNER_SWEEPS), c)
            e = np.maximum(residual_norms(X, H, W), _FLOOR)
            s = np.minimum(np.maximum(1.0 - alpha / e, 0.0), lam / e)  # L2,1 shrink, clip
            Hr, Wr = H, W
            A, B = noisy_basis_statistics(X, H, s, W, eps / n_iter, delta / n_iter, c, lam, rng)
            W = np.maximum(W - eta * (W @ A - B), 0.0)  # noisy projected gradient
            W = W / np.maximum(np.linalg.norm(W, axis=0), _FLOOR)
        self.components_ = W.T
        self.coefficients_ = H
        self.row_labels_ = np.argmax(H, axis=1)
        self.n_features_in_ = d
        self.privacy_ = self._guarantee(eps, delta, n_iter, sens)
        return self
