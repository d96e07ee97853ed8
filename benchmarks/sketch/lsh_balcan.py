"""LSHCoresetKMeans and BalcanKMeans (DPHD) on real data, beside diffprivlib 0.6.6 run in the same
process and Google's published LSH-clustering figures.

UCI Letter (20,000 x 16, public box [0, 15]: the documented attribute range), the set the public
defaults were tuned on, and scikit-learn's digits (1,797 x 64, box [0, 16]: the documented pixel
range), never used for tuning. epsilon = 1 under add/remove, delta = 1e-6 for the Gaussian
methods (diffprivlib is pure DP). SSE divided by scikit-learn k-means++'s best of 10; mean and
sd over ``--runs`` seeds; seconds per fit (wall clock, single thread).

Run: PRIVCLUST_DATA_DIR=... OMP_NUM_THREADS=1 python benchmarks/sketch/lsh_balcan.py [--runs 5]
Writes benchmarks/results/sketch/lsh_balcan_eps<eps>.{json,md}.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
from _common import machine_note, write
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits

from privclust.core import BalcanKMeans, LSHCoresetKMeans
from privclust.core.metrics import sse

# Google differential-privacy, learning/clustering README, "Benchmark Comparisons" plots
# (eps = 1, delta = 1e-6, 20 runs), read approximately from the plots.
GOOGLE = {("letter", 8): 1.2, ("letter", 16): 1.44, ("letter", 64): 2.1}


def letter():
    path = Path(os.environ["PRIVCLUST_DATA_DIR"]) / "letter-recognition.csv"
    X = np.loadtxt(path, delimiter=",", skiprows=1, usecols=range(1, 17))
    return X, (0.0, 15.0)


def digits():
    return load_digits().data.astype(float), (0.0, 16.0)


def diffprivlib_fit(X, k, eps, bounds, seed):
    from diffprivlib.models import KMeans as DPKMeans

    lo, hi = bounds
    d = X.shape[1]
    return (
        DPKMeans(k, epsilon=eps, bounds=(np.full(d, lo), np.full(d, hi)), random_state=seed)
        .fit(X)
        .cluster_centers_
    )


def methods(k, eps, bounds):
    return {
        "LSHCoresetKMeans": lambda X, s: (
            LSHCoresetKMeans(k, epsilon=eps, delta=1e-6, bounds=bounds, random_state=s)
            .fit(X)
            .cluster_centers_
        ),
        "BalcanKMeans": lambda X, s: (
            BalcanKMeans(k, epsilon=eps, delta=1e-6, bounds=bounds, random_state=s)
            .fit(X)
            .cluster_centers_
        ),
        "diffprivlib": lambda X, s: diffprivlib_fit(X, k, eps, bounds, s),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--ks", type=int, nargs="+", default=[8, 16, 64])
    args = ap.parse_args()
    rows = []
    with threadpool_limits(1):
        for name, load in (("letter", letter), ("digits", digits)):
            X, bounds = load()
            for k in args.ks:
                ref = min(KMeans(k, n_init=1, random_state=s).fit(X).inertia_ for s in range(10))
                for method, fit in methods(k, args.eps, bounds).items():
                    ratios, secs = [], []
                    for seed in range(args.runs):
                        t = time.perf_counter()
                        centres = fit(X, seed)
                        secs.append(time.perf_counter() - t)
                        ratios.append(sse(X, centres) / ref)
                    row = dict(
                        data=name,
                        k=k,
                        method=method,
                        mean=float(np.mean(ratios)),
                        sd=float(np.std(ratios, ddof=1)),
                        seconds=float(np.mean(secs)),
                        ratios=ratios,
                    )
                    rows.append(row)
                    print(
                        f"{name} k={k} {method}: {row['mean']:.3f} (sd {row['sd']:.3f}) "
                        f"{row['seconds']:.2f} s/fit",
                        flush=True,
                    )
    lines = [
        f"# Private k-means on real data: eps = {args.eps}, add/remove, delta = 1e-6 "
        f"(Gaussian methods), {args.runs} runs",
        "",
        "SSE / scikit-learn k-means++ (best of 10): mean (sd), seconds per fit. Letter was "
        "used to choose the public defaults; digits was not.",
        "",
        "| data | k | LSHCoresetKMeans | BalcanKMeans | diffprivlib 0.6.6 | Google (published) |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("letter", "digits"):
        for k in args.ks:
            cells = []
            for method in ("LSHCoresetKMeans", "BalcanKMeans", "diffprivlib"):
                (r,) = [
                    r for r in rows if r["data"] == name and r["k"] == k and r["method"] == method
                ]
                cells.append(f"{r['mean']:.2f}x ({r['sd']:.2f}), {r['seconds']:.2f} s")
            google = GOOGLE.get((name, k))
            lines.append(
                f"| {name} | {k} | "
                + " | ".join(cells)
                + f" | {f'~{google:.2f}x' if google and args.eps == 1.0 else '-'} |"
            )
    lines += [
        "",
        "Google: differential-privacy `learning/clustering` README plots (eps = 1, "
        "delta = 1e-6, 20 runs), read approximately. diffprivlib is pure eps-DP and its "
        "mechanisms receive somewhat more than the eps it reports (see peers.py).",
        f"Machine: {os.cpu_count()} cores shared with other jobs, load average "
        f"{os.getloadavg()[1]:.1f} at the end: seconds include that contention.",
    ]
    write(
        f"lsh_balcan_eps{args.eps:g}",
        {"rows": rows, "args": vars(args), "machine": machine_note()},
        lines,
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
