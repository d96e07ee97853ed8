"""Timing and memory of DP-tauCC / Fast-tauCC against the performance targets below.

Targets: one DP-tauCC run (I = 4) on classic3 <= 0.2 s and <= 150 MB peak; Fast-tauCC to
convergence on classic3 <= 1 s; a 5000 x 20000 sparse matrix at 1 % density <= 2 s per DP run.
Peak memory is reported twice: the tracemalloc peak of the fit (numpy allocations included) and
the peak RSS of a fresh process that imports the estimator, loads classic3 and runs one fit
(resource.ru_maxrss; this includes the interpreter, numpy/scipy and the data, like a process
measurement of the authors' code would).

Run:  PRIVCLUST_DATA_DIR=/path/to/data python benchmarks/cocluster/performance.py
Writes benchmarks/results/cocluster/performance.md.
"""

import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from _common import RESULTS, load

from privclust.core.cocluster import DPTauCoClustering, TauCoClustering


def measure(make, X, repeats):
    times, peaks = [], []
    for r in range(repeats):
        est = make(r)
        tracemalloc.start()
        t = time.perf_counter()
        est.fit(X)
        times.append(time.perf_counter() - t)
        peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
    return float(np.median(times)), float(np.max(times)), float(np.max(peaks))


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_child():
    """Fresh process: peak RSS after loading classic3, then after one DP-tauCC fit."""
    X, _, k = load("classic3")
    before = _rss_mb()
    DPTauCoClustering(k, k, epsilon=1.0, n_iter=4, random_state=0).fit(X)
    print(f"{before:.1f} {_rss_mb():.1f}")


def main():
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child"],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    rss_loaded, rss_fit = map(float, out.stdout.split())
    load_avg = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    X, _, k = load("classic3")
    rng = np.random.default_rng(0)
    n, m = 5000, 20000
    nnz = n * m // 100
    big = sp.csr_matrix(
        (
            rng.integers(1, 6, nnz).astype(float),
            (rng.integers(n, size=nnz), rng.integers(m, size=nnz)),
        ),
        shape=(n, m),
    )
    cases = [
        (
            "DP-tauCC, classic3 (I = 4, eps = 1)",
            "<= 0.2 s, <= 150 MB",
            lambda r: DPTauCoClustering(k, k, epsilon=1.0, n_iter=4, random_state=r),
            X,
            10,
        ),
        (
            "Fast-tauCC, classic3 (to convergence)",
            "<= 1 s",
            lambda r: TauCoClustering(k, k, random_state=r),
            X,
            5,
        ),
        (
            f"DP-tauCC, 5000 x 20000 sparse, 1 % density ({big.nnz} nnz, K0 = L0 = 5)",
            "<= 2 s",
            lambda r: DPTauCoClustering(5, 5, epsilon=1.0, n_iter=4, random_state=r),
            big,
            3,
        ),
    ]
    lines = [
        "# DP-tauCC / Fast-tauCC performance (this machine, 2 shared cores)",
        "",
        f"Load average (1 / 5 / 15 min) when the timings started: {load_avg}.",
        "",
        "| case | target | median s | max s | peak MB (tracemalloc) |",
        "|---|---|---|---|---|",
    ]
    for label, target, make, data, repeats in cases:
        med, worst, peak = measure(make, data, repeats)
        lines.append(f"| {label} | {target} | {med:.3f} | {worst:.3f} | {peak:.1f} |")
        print(lines[-1], flush=True)
    lines += [
        "",
        "Fresh process (import privclust.core.cocluster, load classic3 as CSR, one DP-tauCC fit,",
        "I = 4, eps = 1): peak RSS "
        f"{rss_loaded:.1f} MB before the fit, {rss_fit:.1f} MB after it (target <= 150 MB).",
    ]
    print(lines[-2] + " " + lines[-1])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "performance.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    rss_child() if sys.argv[1:] == ["--rss-child"] else main()
