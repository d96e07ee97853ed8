"""The smallest n at which GoodRadius returns a useful radius: RecConcave against the two practical
variants, on the 1-cluster benchmark's data (docs/algorithms.md, section 5).

Planted ball: t = n/2 points with std 0.01 in [0,1]^2 plus uniform background, grid step 2^-16,
eps = 1 for GoodRadius, delta = 1/n^2 (rec_concave only), 20 trials per n. A radius r is
"useful" when 0 < r <= 4 r_2 (r_2: the non-private 2-approximation, best ball centred at an
input point) and some ball of radius r centred at an input point holds >= 0.9 t points. Rows:
em_geometric, above_threshold, rec_concave with the paper's promise, and rec_concave with the
promise set to twice its stability threshold (not the paper's: no utility theorem; privacy is
the same, since the promise only shapes the quality function).

Run:  OMP_NUM_THREADS=1 nice -n 10 python benchmarks/onecluster/rec_concave_n.py [trials] [n,...] [tag]
Writes benchmarks/results/onecluster/rec_concave_n[tag].{csv,md} (after each n).
"""

import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

from privclust.core.data import make_planted_ball
from privclust.core.onecluster import smallest_ball_2approx
from privclust.core.onecluster.good_radius import good_radius
from privclust.core.onecluster.rec_concave import (
    budget_split,
    good_radius_rec_concave,
    radius_domain,
)
from privclust.core.privacy import BudgetAccountant

OUT = Path(__file__).resolve().parents[1] / "results" / "onecluster"
EPS, STEP, D = 1.0, 2.0**-16, 2
ROWS = (
    "em_geometric",
    "above_threshold",
    "rec_concave (paper's promise)",
    "rec_concave (promise = 2 x stability threshold)",
)


def stability_promise(n):
    """Twice the stability choice's threshold at the per-mechanism budget (public)."""
    T = len(radius_domain((0.0, 1.0), STEP, D, 1024))
    eps_m, delta_m, _ = budget_split(EPS, 1.0 / n**2, T)
    return 2.0 * (2.0 + 2.0 / eps_m * math.log(1.0 / (2.0 * delta_m)))


def run_one(row, X, t, n, rng):
    acc = BudgetAccountant(EPS, 1.0 / n**2)
    bounds = (0.0, 1.0)
    if row.startswith("rec_concave"):
        promise = None if "paper" in row else stability_promise(n)
        return good_radius_rec_concave(
            X, t, EPS, 1.0 / n**2, bounds, STEP, rng, acc, promise=promise
        )
    return good_radius(X, t, EPS, bounds, STEP, rng, acc, variant=row)


def main(trials=20, ns=(250, 500, 1000, 2000, 4000), tag=""):
    OUT.mkdir(parents=True, exist_ok=True)
    records = []
    for n in ns:
        t = n // 2
        for trial in range(trials):
            data = make_planted_ball(n, D, n_inliers=t, std=0.01, random_state=trial)
            _, r2 = smallest_ball_2approx(data.X, t)
            tree = cKDTree(data.X)
            for row in ROWS:
                t0 = time.perf_counter()
                res = run_one(row, data.X, t, n, np.random.default_rng(1000 * trial + n))
                r = res.radius
                best = (
                    int(tree.query_ball_point(data.X, r, return_length=True).max()) if r > 0 else 0
                )
                records.append(
                    {
                        "n": n,
                        "trial": trial,
                        "variant": row,
                        "radius": r,
                        "r2": r2,
                        "gamma": res.gamma,
                        "fired": int(res.fired),
                        "best_ball": best,
                        "useful": int(0 < r <= 4 * r2 and best >= 0.9 * t),
                        "seconds": time.perf_counter() - t0,
                    }
                )
        print(f"n={n} done", flush=True)
        write(records, trials, tuple(m for m in ns if m <= n), tag)  # partial runs keep rows


def write(records, trials, ns, tag):
    with open(OUT / f"rec_concave_n{tag}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    md = [
        "# GoodRadius: smallest n with a useful radius (RecConcave vs the practical variants)",
        "",
        f"Planted ball in [0,1]^2 (t = n/2, std 0.01), eps = {EPS}, delta = 1/n^2, "
        f"{trials} trials per n. Useful: 0 < r <= 4 r_2 and a ball of radius r around an input "
        "point holds >= 0.9 t points. Cells: fraction of useful radii (median r / r_2; "
        "r = 0 when the zero-radius test fired).",
        "",
        f"| variant | Gamma at n = {ns[-1]} | " + " | ".join(f"n = {n}" for n in ns) + " |",
        "|---|---|" + "---|" * len(ns),
    ]
    smallest = {}
    for row in ROWS:
        cells = []
        for n in ns:
            sel = [r for r in records if r["variant"] == row and r["n"] == n]
            frac = np.mean([r["useful"] for r in sel])
            ratio = np.median([r["radius"] / r["r2"] for r in sel])
            cells.append(f"{frac:.2f} ({ratio:.2f})")
        ok = [
            n
            for n in ns
            if all(
                np.mean([r["useful"] for r in records if r["variant"] == row and r["n"] == m])
                >= 0.9
                for m in ns
                if m >= n
            )
        ]
        smallest[row] = ok[0] if ok else None
        gamma = np.median([r["gamma"] for r in records if r["variant"] == row and r["n"] == ns[-1]])
        md.append(f"| {row} | {gamma:.3g} | " + " | ".join(cells) + " |")
    md += [
        "",
        "Smallest tested n from which >= 90 % of the radii are useful (at every larger "
        "tested n too):",
        "",
    ]
    md += [
        f"- {row}: {f'none up to n = {ns[-1]}' if v is None else f'n = {v}'}"
        for row, v in smallest.items()
    ]
    md += [
        "",
        f"Re-run: `OMP_NUM_THREADS=1 nice -n 10 python benchmarks/onecluster/"
        f"rec_concave_n.py {trials} {','.join(map(str, ns))} {tag}`",
    ]
    (OUT / f"rec_concave_n{tag}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        int(args[0]) if args else 20,
        tuple(int(v) for v in args[1].split(","))
        if len(args) > 1
        else (250, 500, 1000, 2000, 4000),
        args[2] if len(args) > 2 else "",
    )
