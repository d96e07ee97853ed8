"""Statistical DP audits: a Clopper-Pearson lower bound on the epsilon a mechanism really spends.

Method (hypothesis-test auditing, Ding, Wang, Wang, Zhang & Kifer, CCS 2018; Clopper-Pearson
bounds as in Jagielski, Ullman & Oprea, NeurIPS 2020): run the mechanism N times on a dataset D and on a
neighbour D', reduce each release to a scalar (or a category) and call
:func:`epsilon_lower_bound`. Each side is split in halves: the first halves choose the event S
(a threshold event {x > t} or {x <= t} in either direction for scalars, a single category for
categorical outputs) that looks most distinguishing; the second halves count
k1 = #{M(D) in S}, k2 = #{M(D') in S} out of m1, m2. With Clopper-Pearson bounds
p_lo = Beta^-1(alpha/2; k1, m1-k1+1), q_hi = Beta^-1(1-alpha/2; k2+1, m2-k2),
eps_lb = ln((p_lo - delta) / q_hi). If M is (eps, delta)-DP then P[eps_lb > eps] <= alpha, so a
test asserting ``eps_lb <= claimed`` fails for a correct mechanism with probability <= alpha;
a planted bug (half the noise, wrong sensitivity) must make it fail.
"""

import numpy as np
from scipy.special import betaincinv

from ._validation import check_delta

_MAX_THRESHOLDS = 512


def clopper_pearson_epsilon(k1, m1, k2, m2, delta=0.0, alpha=1e-3):
    """ln((p_lo - delta)/q_hi) from counts k1/m1 (larger side) and k2/m2; -inf when p_lo <= delta.

    Vectorised over array-valued counts.

    References
    ----------
    Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits
        illustrated in the case of the binomial. Biometrika 26(4), 404-413.
    Ding, Z., Wang, Y., Wang, G., Zhang, D. and Kifer, D. (2018). Detecting violations of
        differential privacy. CCS 2018.
    """
    k1, m1, k2, m2 = (np.asarray(v, dtype=np.float64) for v in (k1, m1, k2, m2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_lo = np.where(k1 > 0, betaincinv(np.maximum(k1, 1), m1 - k1 + 1, alpha / 2), 0.0)
        q_hi = np.where(k2 < m2, betaincinv(k2 + 1, np.maximum(m2 - k2, 1), 1 - alpha / 2), 1.0)
        num = p_lo - delta
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / q_hi), -np.inf)


def _as_outputs(values, name):
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size < 4:
        raise ValueError(f"{name} must be a 1-D array of at least 4 outputs, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric (encode categories as integers), got {arr.dtype}")
    arr = arr.astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN: encode 'no output' as a number")
    return arr


def _event_counts(sorted_x, points, categorical):
    """Counts of each candidate event in a sorted sample: rows = events."""
    right = np.searchsorted(sorted_x, points, side="right")
    if categorical:
        return right - np.searchsorted(sorted_x, points, side="left")
    return np.concatenate([len(sorted_x) - right, right])  # {x > t} then {x <= t}


def epsilon_lower_bound(outputs_a, outputs_b, delta=0.0, alpha=1e-3, categorical=False, rng=None):
    """Clopper-Pearson lower bound on epsilon from i.i.d. outputs of M(D) and M(D').

    ``outputs_a``, ``outputs_b``: 1-D numeric arrays (scalar reductions or integer categories).
    ``delta``: the mechanism's claimed delta (subtracted, for approximate DP). ``alpha``: the
    false-alarm probability for a correct mechanism. ``categorical=True`` uses single-category
    events instead of thresholds. ``rng``: a Generator to shuffle before splitting (None splits
    the arrays in the given order, which is fine for i.i.d. batched releases). Returns a float
    >= 0 (0 when no event gives evidence).

    References
    ----------
    Ding, Z., Wang, Y., Wang, G., Zhang, D. and Kifer, D. (2018). Detecting violations of
        differential privacy. CCS 2018.
    Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits
        illustrated in the case of the binomial. Biometrika 26(4), 404-413.
    """
    a = _as_outputs(outputs_a, "outputs_a")
    b = _as_outputs(outputs_b, "outputs_b")
    delta = check_delta(delta)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if rng is not None:
        a, b = rng.permutation(a), rng.permutation(b)
    ha, hb = len(a) // 2, len(b) // 2
    sel_a, est_a = np.sort(a[:ha]), np.sort(a[ha:])
    sel_b, est_b = np.sort(b[:hb]), np.sort(b[hb:])
    pooled = np.unique(np.concatenate([sel_a, sel_b]))
    if categorical or len(pooled) <= _MAX_THRESHOLDS:
        points = pooled
    else:
        points = np.unique(np.quantile(pooled, np.linspace(0, 1, _MAX_THRESHOLDS)))
    ka, kb = _event_counts(sel_a, points, categorical), _event_counts(sel_b, points, categorical)
    scores = np.concatenate(
        [
            clopper_pearson_epsilon(ka, ha, kb, hb, delta, alpha),
            clopper_pearson_epsilon(kb, hb, ka, ha, delta, alpha),
        ]
    )
    best = int(np.argmax(scores))
    n_events = len(ka)
    event, swap = best % n_events, best >= n_events
    ka2 = _event_counts(est_a, points, categorical)[event]
    kb2 = _event_counts(est_b, points, categorical)[event]
    ma, mb = len(est_a), len(est_b)
    if swap:
        value = clopper_pearson_epsilon(kb2, mb, ka2, ma, delta, alpha)
    else:
        value = clopper_pearson_epsilon(ka2, ma, kb2, mb, delta, alpha)
    return float(max(0.0, value))
