"""Experiment grid for 1-cluster (docs/algorithms.md, section 5): radius ratio, coverage, failure rate and time versus eps.

n in {1e3, 1e4}, d in {2, 10, 50}, eps in {0.5, 1, 2, 4, 8}, delta = 1/n^2, 20 trials; one Gaussian
cluster of t = n/2 points with std 0.01 in [0,1]^d plus uniform background, grid step 2^-16.
Reference radius r_2: the non-private 2-approximate baseline (best ball centred at an input point,
r_opt <= r_2 <= 2 r_opt). A trial "misses" when the released ball holds < 90 % of the planted
points; "GoodCenter failed" when no centre was found (the ball of the whole box is released).

Run:  OMP_NUM_THREADS=1 python benchmarks/onecluster/grid.py [trials] [n,...] [d,...] [axis_choice]
Writes benchmarks/results/onecluster/grid_raw.csv, grid_summary.md and grid.png (rows appended
as they finish, so a partial run keeps its results); a non-default ``axis_choice`` (e.g.
"box_ball") writes grid_<axis_choice>_raw.csv etc.
"""

import csv
import sys
import time
from pathlib import Path

import numpy as np

from privclust.core import OneCluster
from privclust.core.data import make_planted_ball
from privclust.core.onecluster import smallest_ball_2approx

OUT = Path(__file__).resolve().parents[1] / "results" / "onecluster"
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
FIELDS = [
    "n",
    "d",
    "trial",
    "epsilon",
    "r2",
    "good_radius_ratio",
    "radius_ratio",
    "center_radius_ratio",
    "coverage",
    "center_error",
    "success",
    "reliable",
    "seconds",
]


def run(trials, ns, ds, axis_choice="em"):
    OUT.mkdir(parents=True, exist_ok=True)
    raw = OUT / f"{_prefix(axis_choice)}_raw.csv"
    with open(raw, "w", newline="") as fh:
        csv.DictWriter(fh, fieldnames=FIELDS).writeheader()
    for n in ns:
        for d in ds:
            for trial in range(trials):
                data = make_planted_ball(n, d, n_inliers=n // 2, std=0.01, random_state=trial)
                inl = data.X[data.truth["inliers"]]
                _, r2 = smallest_ball_2approx(data.X, n // 2)
                for eps in EPSILONS:
                    t0 = time.perf_counter()
                    m = OneCluster(
                        n // 2,
                        eps,
                        1.0 / n**2,
                        bounds=(0.0, 1.0),
                        grid_step=2.0**-16,
                        axis_choice=axis_choice,
                        random_state=10_000 * trial + int(10 * eps),
                    ).fit(data.X)
                    row = {
                        "n": n,
                        "d": d,
                        "trial": trial,
                        "epsilon": eps,
                        "r2": r2,
                        "good_radius_ratio": m.good_radius_ / r2,
                        "radius_ratio": m.radius_ / r2,
                        "center_radius_ratio": m.center_radius_ / r2,
                        "coverage": float(
                            np.mean(np.linalg.norm(inl - m.center_, axis=1) <= m.radius_)
                        ),
                        "center_error": float(np.linalg.norm(m.center_ - data.truth["center"])),
                        "success": int(m.success_),
                        "reliable": int(m.reliable_),
                        "seconds": time.perf_counter() - t0,
                    }
                    with open(raw, "a", newline="") as fh:
                        csv.DictWriter(fh, fieldnames=FIELDS).writerow(row)
                print(f"n={n} d={d} trial={trial} done", flush=True)
            summarise(axis_choice)


def _prefix(axis_choice):
    return "grid" if axis_choice == "em" else f"grid_{axis_choice}"


def load(axis_choice="em"):
    with open(OUT / f"{_prefix(axis_choice)}_raw.csv") as fh:
        rows = list(csv.DictReader(fh))
    return [{k: float(v) for k, v in r.items()} for r in rows]


def summarise(axis_choice="em"):
    rows = load(axis_choice)
    keys = sorted({(r["n"], r["d"], r["epsilon"]) for r in rows})
    lines = [
        "# 1-cluster experiment grid (medians over trials; ratios to the non-private 2-approx radius r_2)",
        "",
        f"GoodCenter axis_choice = {axis_choice!r}; other parameters: OneCluster defaults.",
        "",
        "| n | d | eps | trials | r^/r_2 | released/r_2 | rho_C/r_2 | coverage (mean) | miss rate (<90 %) | GoodCenter failed | unreliable | centre error | time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    table = {}
    for key in keys:
        sel = [r for r in rows if (r["n"], r["d"], r["epsilon"]) == key]
        col = {k: np.array([r[k] for r in sel]) for k in FIELDS}
        stats = {
            "trials": len(sel),
            "gr": np.median(col["good_radius_ratio"]),
            "rel": np.median(col["radius_ratio"]),
            "rhoc": np.nanmedian(col["center_radius_ratio"])
            if np.isfinite(col["center_radius_ratio"]).any()
            else np.nan,
            "cov": col["coverage"].mean(),
            "miss": np.mean(col["coverage"] < 0.9),
            "fail": 1 - col["success"].mean(),
            "unrel": 1 - col["reliable"].mean(),
            "err": np.median(col["center_error"]),
            "sec": np.median(col["seconds"]),
        }
        table[key] = stats
        lines.append(
            f"| {int(key[0])} | {int(key[1])} | {key[2]:g} | {stats['trials']} | {stats['gr']:.2f} | "
            f"{stats['rel']:.2f} | {stats['rhoc']:.1f} | {stats['cov']:.3f} | {stats['miss']:.2f} | "
            f"{stats['fail']:.2f} | {stats['unrel']:.2f} | {stats['err']:.3f} | {stats['sec']:.2f} |"
        )
    lines += [
        "",
        "Command: `OMP_NUM_THREADS=1 python benchmarks/onecluster/grid.py"
        + ("`" if axis_choice == "em" else f" 20 1000,10000 2,10,50 {axis_choice}`"),
    ]
    (OUT / f"{_prefix(axis_choice)}_summary.md").write_text("\n".join(lines) + "\n")
    plot(table, _prefix(axis_choice))


def plot(table, prefix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = sorted({k[0] for k in table})
    ds = sorted({k[1] for k in table})
    fig, axes = plt.subplots(len(ns), 4, figsize=(17, 3.8 * len(ns)), squeeze=False)
    for i, n in enumerate(ns):
        for d in ds:
            ks = sorted(k for k in table if k[0] == n and k[1] == d)
            if not ks:
                continue
            eps = [k[2] for k in ks]
            line = axes[i, 0].plot(
                eps, [table[k]["rel"] for k in ks], "o-", label=f"released, d={int(d)}"
            )
            axes[i, 0].plot(
                eps,
                [table[k]["gr"] for k in ks],
                "x--",
                color=line[0].get_color(),
                label=f"GoodRadius r^, d={int(d)}",
            )
            axes[i, 1].plot(eps, [table[k]["err"] for k in ks], "o-", label=f"d={int(d)}")
            axes[i, 2].plot(eps, [table[k]["cov"] for k in ks], "o-", label=f"d={int(d)}")
            line = axes[i, 3].plot(
                eps, [table[k]["unrel"] for k in ks], "o-", label=f"unreliable, d={int(d)}"
            )
            axes[i, 3].plot(
                eps,
                [table[k]["fail"] for k in ks],
                "x--",
                color=line[0].get_color(),
                label=f"GoodCenter failed, d={int(d)}",
            )
        axes[i, 0].set(
            yscale="log", ylabel="radius / r_2", title=f"n = {int(n)}: radius ratio (median)"
        )
        axes[i, 1].set(
            yscale="log",
            ylabel="distance to planted centre",
            title=f"n = {int(n)}: centre error (median)",
        )
        axes[i, 2].set(
            ylabel="fraction of planted points",
            ylim=(-0.02, 1.02),
            title=f"n = {int(n)}: coverage of the planted cluster (mean)",
        )
        axes[i, 3].set(
            ylabel="rate", ylim=(-0.02, 1.02), title=f"n = {int(n)}: unreliable / failed"
        )
        for ax in axes[i]:
            ax.set_xscale("log")
            ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
            ax.minorticks_off()
            ax.set_xlabel("epsilon")
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / f"{prefix}.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    ns = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else [1000, 10_000]
    ds = [int(v) for v in sys.argv[3].split(",")] if len(sys.argv) > 3 else [2, 10, 50]
    run(trials, ns, ds, sys.argv[4] if len(sys.argv) > 4 else "em")
