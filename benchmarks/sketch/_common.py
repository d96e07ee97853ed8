"""Shared pieces of the sketch benchmarks: datasets with their public boxes, the k-means
reference (scikit-learn KMeans, 3 replicates, [SCH19] Fig. 3), result writing."""

import json
import os
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from privclust.core.data import make_gaussian_mixture

RESULTS = Path(__file__).resolve().parents[1] / "results" / "sketch"
K = D = 10


def sch19_box(k=K, d=D):
    """Public box for [SCH19]'s mixture: +-(3 * 2.5 k^(1/d) + 4): three standard deviations of the
    centres (2.5 k^(1/d)) plus four of a cluster (1); public because it follows from the
    generating model, never from the drawn data."""
    return 3 * 2.5 * k ** (1 / d) + 4


def dataset(name, n, seed):
    """(X, (lo, hi)) for 'sch19' ([SCH19] Sec. III mixture, k = d = 10) or 'blobs' (centres uniform
    in [-1, 1]^10, cluster std 0.2, public box [-2, 2]^10: an easy mixture shared with the peer comparison)."""
    if name == "sch19":
        B = sch19_box()
        return make_gaussian_mixture(n, D, K, random_state=seed).X, (-B, B)
    if name == "blobs":
        rng = np.random.default_rng(10_000 + seed)
        centres = rng.uniform(-1, 1, size=(K, D))
        X = centres[rng.integers(0, K, n)] + 0.2 * rng.standard_normal((n, D))
        return X, (-2.0, 2.0)
    raise ValueError(name)


def kmeans_reference(X, seed=0):
    with threadpool_limits(1):
        return KMeans(K, n_init=3, random_state=seed).fit(X).cluster_centers_


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def write(name, payload, table_lines=None):
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=1, default=float))
    if table_lines is not None:
        (RESULTS / f"{name}.md").write_text("\n".join(table_lines) + "\n")


def machine_note():
    return {"cpus": os.cpu_count(), "loadavg_at_end": os.getloadavg()}


def sch19_blocks(n, block_size, seed=0):
    """Seed 002's mixture generated block by block (for streaming n = 1e7 without holding it):
    centres N(0, (2.5 k^(1/d))^2 I), uniform weights, unit covariances."""
    rng = np.random.default_rng(seed)
    centres = 2.5 * K ** (1 / D) * rng.standard_normal((K, D))
    for i, start in enumerate(range(0, n, block_size)):
        b = np.random.default_rng([seed, i])
        rows = min(block_size, n - start)
        yield centres[b.integers(0, K, rows)] + b.standard_normal((rows, D))
