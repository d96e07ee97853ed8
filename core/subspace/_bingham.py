"""Vector Bingham sampling on the sphere S^{p-1}: the column draw inside the Gibbs sampler of
Wang, Wang & Singh, NIPS 2015, Sec. 4.1, Eq. (12) (Hoff 2009, JCGS 18(2), column-wise Gibbs).

Target density (w.r.t. the uniform measure) proportional to exp(sum_j a_j y_j^2), batched over
rows of ``a``. Default: exact rejection sampling with an angular-central-Gaussian (ACG) envelope
(Kent, Ganeiber & Mardia 2018, JCGS; we re-derived the bound exp(-t) <= e^{-(p-b)/2} (p/b)^{p/2}
(1 + 2t/b)^{-p/2} by maximising over t >= 0, which gives log M below). Fallback after
``max_proposals`` proposals: Hoff's (2009) coordinate Gibbs update (approximate, slow mixing at
high concentration), with a warning.
"""

import warnings

import numpy as np

from . import _gibbs_fused as _fused

_MAX_PROPOSALS = 100_000  # per row, before Hoff's coordinate update takes over
_ROUND = 16  # proposals drawn per pending row and round (p = 8, concentrated: ~99 %
# of rows accept in the first round; acceptance >= ~0.13 up to p = 42)


def acg_parameters(lam):
    """For lam (B, p) >= 0 with row minimum 0: b solving sum_j 1/(b + 2 lam_j) = 1 (b in [1, p]),
    omega = 1 + 2 lam / b and log M = -(p - b)/2 + (p/2) ln(p/b). Vectorised Newton iteration
    started at b = 1 (left of the root of a convex decreasing function: monotone convergence).

    References
    ----------
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    """
    p = lam.shape[-1]
    b = np.ones(lam.shape[:-1])
    two_lam = 2.0 * lam
    add, big = np.add.reduce, np.maximum.reduce  # ufunc reductions: less call overhead
    for _ in range(100):
        inv = np.add(b[..., None], two_lam)
        np.reciprocal(inv, out=inv)
        f = add(inv, axis=-1) - 1.0
        if big(np.abs(f), axis=None) < 1e-13:
            break
        inv *= inv
        b = np.minimum(b + f / add(inv, axis=-1), p)
    omega = 1.0 + two_lam / b[..., None]
    log_m = -(p - b) / 2.0 + (p / 2.0) * np.log(p / b)
    return b, omega, log_m


def sample_vector_bingham(a, rng, y0=None, max_proposals=None, fused=None):
    """One exact draw y (B, p), density proportional to exp(sum_j a_j y_j^2) per row of a (B, p).

    ``y0`` (B, p), optional, is the current state used only by the Hoff fallback (or a callable
    ``y0(rows)`` returning those rows, evaluated only if the fallback runs), which takes over
    after ``max_proposals`` proposals per row (default ``_MAX_PROPOSALS``). ``fused`` (None:
    when numba is installed) runs the envelope and the acceptance tests in compiled kernels
    (:mod:`._gibbs_fused`); the random draws, and so the draw for a given seed, are the same.

    ACG rejection (Kent, Ganeiber & Mardia 2018): a proposal y = w/||w||, w ~ N(0, diag(1/omega)), is
    accepted when ln U <= -sum lam_j y_j^2 + (p/2) ln(sum omega_j y_j^2) - log M. The three sums
    over j come from one batched product of w*w with (1, lam, omega), divided by ||w||^2, and
    only accepted proposals are normalised. The first accepted proposal of a round is returned:
    it is the first success in a sequence of i.i.d. trials, so the draw stays exact.

    References
    ----------
    Kent, J. T., Ganeiber, A. M. and Mardia, K. V. (2018). A new unified approach for the
        simulation of a wide class of directional distributions. J. Comput. Graph. Stat. 27(2),
        291-301.
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4.1, Eq. (12).
    """
    a = np.asarray(a, dtype=float)
    B, p = a.shape
    max_proposals = _MAX_PROPOSALS if max_proposals is None else max_proposals
    lam = a.max(axis=1, keepdims=True) - a
    if _fused.AVAILABLE if fused is None else fused:
        out = _sample_fused(lam, rng, max_proposals)
        pending = np.flatnonzero(np.isnan(out[:, 0]))
        if pending.size:
            _hoff_fallback(a, out, pending, rng, y0, max_proposals)
        return out
    _, omega, log_m = acg_parameters(lam)
    scale = 1.0 / np.sqrt(omega)
    weights = np.stack([np.ones_like(lam), lam, omega], axis=2)  # (B, p, 3)
    out = np.empty((B, p))
    pending = np.arange(B)
    used = 0
    while pending.size and used < max_proposals:
        rows = slice(None) if pending.size == B else pending  # no gather in round 1
        w = rng.standard_normal((pending.size, _ROUND, p))
        w *= scale[rows, None, :]
        sums = np.matmul(w * w, weights[rows])  # (P, R, 3)
        log_acc = (
            0.5 * p * np.log(sums[..., 2] / sums[..., 0])
            - sums[..., 1] / sums[..., 0]
            - log_m[rows, None]
        )
        ok = np.log(rng.random((pending.size, _ROUND))) <= log_acc
        hit = ok.any(axis=1)
        first = ok.argmax(axis=1)
        done = pending[hit]
        wa = w[hit, first[hit]]
        out[done] = wa / np.sqrt(sums[hit, first[hit], 0])[:, None]
        pending = pending[~hit]
        used += _ROUND
    if pending.size:
        _hoff_fallback(a, out, pending, rng, y0, max_proposals)
    return out


def _sample_fused(lam, rng, max_proposals):
    """The ACG rejection loop of :func:`sample_vector_bingham` in one compiled call, drawing
    from ``rng`` the same numbers in the same order. Rows still pending after
    ``max_proposals`` are NaN."""
    out = np.full(lam.shape, np.nan)
    _fused.use_threads()
    _fused.acg_sample(np.ascontiguousarray(lam), rng, -(-max_proposals // _ROUND), _ROUND, out)
    return out


def _hoff_fallback(a, out, pending, rng, y0, max_proposals):
    """Rows ``pending`` of ``out`` by Hoff's coordinate update, with a warning."""
    warnings.warn(
        f"ACG rejection sampler exceeded {max_proposals} proposals for "
        f"{pending.size} row(s); used Hoff's coordinate Gibbs update instead",
        RuntimeWarning,
        stacklevel=3,
    )
    if y0 is None:
        start = rng.standard_normal((pending.size, a.shape[1]))
        start /= np.linalg.norm(start, axis=1, keepdims=True)
    elif callable(y0):
        start = np.asarray(y0(pending), dtype=float)
    else:
        start = np.asarray(y0, dtype=float)[pending]
    out[pending] = hoff_coordinate_update(a[pending], start, rng)


def _theta(A, kp, rng, max_tries=1_000_000):
    """theta in (0,1) with density proportional to theta^{-1/2} (1-theta)^{kp-1} exp(A theta),
    by rejection from Beta(1/2, g) (Hoff 2009). Two guards of ours: g is capped at kp, which avoids
    a NaN bound for p = 2 and 0 < A < 0.72, and a draw theta == 1.0 from ``rng.beta`` is redrawn."""
    if A <= 0:
        g, log_bound = kp, 0.0
    else:
        g = min(kp, max(1.0 / (1.0 + np.log(2.0 + A)), kp - A))
        log_bound = A if g == kp else A - (kp - g) + (kp - g) * np.log((kp - g) / A)
    for _ in range(max_tries):
        th = rng.beta(0.5, g)
        if th >= 1.0:
            continue
        if np.log(rng.random()) <= A * th + (kp - g) * np.log1p(-th) - log_bound:
            return th
    raise RuntimeError("Hoff theta sampler did not accept")


def hoff_coordinate_update(a, y, rng, n_sweeps=1):
    """Hoff's (2009) coordinate-wise Gibbs sweep(s) for the vector Bingham exp(sum a_j y_j^2),
    started at unit rows y (B, p). An approximate (Markov) update, used only as fallback.

    References
    ----------
    Hoff, P. D. (2009). Simulation of the matrix Bingham-von Mises-Fisher distribution, with
        applications to multivariate and relational data. J. Comput. Graph. Stat. 18(2), 438-456.
    """
    y = np.array(y, dtype=float)
    B, p = y.shape
    kp = (p - 1) / 2.0
    for b in range(B):
        for _ in range(n_sweeps):
            for i in rng.permutation(p):
                rest = 1.0 - y[b, i] ** 2
                if rest < 1e-12:  # the other coordinates vanish: pick their direction
                    v = rng.standard_normal(p)
                    v[i] = 0.0
                    v /= np.linalg.norm(v)
                else:
                    v = y[b].copy()
                    v[i] = 0.0
                    v /= np.sqrt(rest)
                A = a[b, i] - np.sum(a[b] * v * v)
                th = _theta(A, kp, rng)
                y[b] = v * np.sqrt(1.0 - th)
                y[b, i] = np.sqrt(th) * (1.0 if rng.random() < 0.5 else -1.0)
            y[b] /= np.linalg.norm(y[b])
    return y
