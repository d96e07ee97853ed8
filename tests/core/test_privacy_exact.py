"""Exact-distribution privacy checks on tiny inputs (every output probability
compared with e^eps times its neighbour's).

Output probabilities of AboveThreshold and of the stable histogram's released cell are computed
by numerical integration over the Laplace noise; every neighbouring pair must satisfy
P(o|X) <= e^eps P(o|X') + delta. A chi-square test ties the formulas to the implementation, and
planted bugs (no threshold noise, no keep threshold) must violate the inequality.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad

from privclust.core import privacy as P

T_GRID = np.linspace(-100.0, 100.0, 200_001)  # step 1e-3: the kinks at 0 and +-0.5 are grid points


def _lap_cdf(x, scale):
    return np.where(
        x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale), 1 - 0.5 * np.exp(-np.maximum(x, 0) / scale)
    )


def _lap_pdf(x, scale):
    return np.exp(-np.abs(x) / scale) / (2 * scale)


def above_threshold_probabilities(q, threshold, eps, threshold_noise=True):
    """P(first 'above' = i) for i = 0..m-1, then P(none above), by integrating over T^."""
    q = np.asarray(q, dtype=float)
    if threshold_noise:
        t, w = T_GRID + threshold, _lap_pdf(T_GRID, 2 / eps)
    else:
        t, w = np.array([float(threshold)]), np.array([1.0])
    below = _lap_cdf(t[None, :] - q[:, None], 4 / eps)  # P(q_i + nu_i < t), shape (m, T)
    before = np.vstack([np.ones_like(t), np.cumprod(below, axis=0)])  # all earlier below
    dens = np.vstack([before[:-1] * (1 - below), before[-1:]]) * w
    probs = np.trapezoid(dens, t, axis=1) if threshold_noise else dens[:, 0]
    return probs


def _max_violation(probs_by_input, pairs, eps, delta=0.0):
    worst = 0.0
    for i, j in pairs:
        p, q = probs_by_input[i], probs_by_input[j]
        worst = max(worst, float(np.max(p - math.exp(eps) * q - delta)))
    return worst


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_above_threshold_exact(eps):
    m = 4
    inputs = [np.array(v, dtype=float) for v in itertools.product([0.0, 1.0], repeat=m)]
    pairs = [(i, j) for i in range(len(inputs)) for j in range(len(inputs)) if i != j]
    probs = [above_threshold_probabilities(q, 0.5, eps) for q in inputs]
    assert all(abs(p.sum() - 1) < 1e-6 for p in probs)
    assert _max_violation(probs, pairs, eps) <= 1e-7
    worst_ratio = max(np.max(np.log(probs[i] / probs[j])) for i, j in pairs)
    assert worst_ratio > 0.5 * eps


def test_above_threshold_exact_planted_no_threshold_noise():
    eps, m = 1.0, 6
    probs = [
        above_threshold_probabilities(np.full(m, v), 0.0, eps, threshold_noise=False)
        for v in (0.0, 1.0)
    ]
    assert _max_violation(probs, [(0, 1), (1, 0)], eps) > 0


def test_above_threshold_implementation_matches_formula():
    q, eps = np.array([0.0, 2.0, -1.0, 3.0]), 1.0
    expected = above_threshold_probabilities(q, 2.0, eps)
    out = P.above_threshold(q, 2.0, eps, np.random.default_rng(5), size=200_000)
    counts = np.bincount(np.where(out < 0, len(q), out), minlength=len(q) + 1)
    assert stats.chisquare(counts, expected * 200_000 / expected.sum()).pvalue > 1e-4


def histogram_key_probabilities(counts, eps, delta, threshold=True):
    """P(released cell = b) for each non-empty cell b, then P(nothing released) (quadrature)."""
    counts = np.asarray([c for c in counts if c > 0], dtype=float)
    scale = 2 / eps
    tau = P.stable_histogram_threshold(eps, delta) if threshold else counts.min() - 80 * scale
    out = []
    for b, c in enumerate(counts):
        others = np.delete(counts, b)

        def dens(x):
            return float(_lap_pdf(x - c, scale) * np.prod(_lap_cdf(x - others, scale)))

        out.append(
            quad(
                dens,
                tau,
                counts.max() + 80 * scale,
                points=list(counts),
                limit=200,
                epsabs=1e-13,
                epsrel=1e-10,
            )[0]
        )
    none = float(np.prod(_lap_cdf(tau - counts, scale))) if threshold else 0.0
    return np.array(out + [none])


def _replace_neighbours(n_cells, n_records):
    """All count vectors over n_cells cells with n_records records, and replace-one moves."""
    vecs = [
        v for v in itertools.product(range(n_records + 1), repeat=n_cells) if sum(v) == n_records
    ]
    for v in vecs:
        for i in range(n_cells):
            for j in range(n_cells):
                if i != j and v[i] > 0:
                    w = list(v)
                    w[i] -= 1
                    w[j] += 1
                    yield v, tuple(w)


def _keyed(counts, probs):
    """Map cell index -> probability (absent cells have 0), plus the 'none' output."""
    cells = [b for b, c in enumerate(counts) if c > 0]
    full = np.zeros(len(counts) + 1)
    full[cells] = probs[:-1]
    full[-1] = probs[-1]
    return full


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-3), (0.5, 0.05)])
def test_stable_histogram_exact(eps, delta):
    worst = 0.0
    cache = {}
    for v, w in _replace_neighbours(3, 3):
        for key in (v, w):
            if key not in cache:
                cache[key] = _keyed(key, histogram_key_probabilities(key, eps, delta))
        pv, pw = cache[v], cache[w]
        assert abs(pv.sum() - 1) < 1e-6
        worst = max(worst, float(np.max(pv - math.exp(eps) * pw)))
    # a cell non-empty in only one dataset is released w.p. delta/2: delta is needed, and enough
    assert delta / 4 < worst <= delta + 1e-7


def test_stable_histogram_exact_planted_no_threshold():
    eps, delta = 1.0, 1e-3
    pv = _keyed((1, 0), histogram_key_probabilities((1, 0), eps, delta, threshold=False))
    pw = _keyed((0, 1), histogram_key_probabilities((0, 1), eps, delta, threshold=False))
    assert np.max(pv - math.exp(eps) * pw - delta) > 0.5


def test_stable_histogram_implementation_matches_formula():
    eps, delta, counts = 1.0, 0.05, (9, 7, 1)
    expected = histogram_key_probabilities(counts, eps, delta)
    keys = np.repeat(np.arange(3), counts)
    got_keys, got_counts = P.stable_histogram(
        keys, eps, delta, np.random.default_rng(6), size=200_000
    )
    released = np.where(np.isnan(got_counts), 3, got_keys[:, 0])
    observed = np.bincount(released, minlength=4)
    nonzero = expected > 1e-9
    assert observed[~nonzero].sum() == 0
    assert (
        stats.chisquare(
            observed[nonzero], expected[nonzero] * 200_000 / expected[nonzero].sum()
        ).pvalue
        > 1e-4
    )
