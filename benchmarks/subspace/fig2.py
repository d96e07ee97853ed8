"""Reproduce seed 001 Fig. 2 (utility vs epsilon) in reduced form; spec 2.6.

    python benchmarks/subspace/fig2.py --quick            # minutes: 5 epsilons, 2 trials, 1000 Gibbs its
    python benchmarks/subspace/fig2.py                     # full: 9 epsilons, 10 trials, 10000 Gibbs its
    python benchmarks/subspace/fig2.py --quick --columns 2 # one column

Columns: 1 synthetic n=5000, d=5, k=3, q=3, sigma=0.01; 2 synthetic n=1000, d=10, sigma=0.1;
3 Extended Yale B 5 subjects (registry "yaleb5", needs PRIVCLUST_DATA_DIR; one subject draw).
Methods: s.a.+TSC/SSC/LRR (Alg. 1), exp.+SSC/LRR (Gibbs initialised with the non-private
solution: NOT private, as in the paper), exp.+random (data-independent init), SuLQ-10/50.
One data draw per column; trials differ by the algorithms' randomness. Gibbs: one chain per
trial (chains run batched); the reported value is the mean of the metric
over the last 100 iterations (recorded every 10), an average of per-state utilities: releasing
those states would cost 100 epsilon. Metrics on the clipped data: cost (Eq. 3) and d_W (Eq. 2).
Writes fig2_<mode>.md/.csv/.png under benchmarks/results/subspace/.
"""
import argparse
import csv
import os
import time
import warnings
from pathlib import Path

import numpy as np

from privclust.core.data import clip_l2, make_union_of_subspaces
from privclust.core.metrics import subspace_cost, wasserstein_subspaces
from privclust.core.privacy import PrivacyWarning
from privclust.core.subspace import (GibbsSubspaceClustering, KPlanes, LowRankRepresentation,
                                     SampleAggregateSubspaceClustering, SparseSubspaceClustering,
                                     SuLQSubspaceClustering)

OUT = Path(__file__).resolve().parents[1] / "results" / "subspace"
INIT_SUBSET = 1500          # the SSC/LRR initialiser runs on at most this many points (n x n memory)


def load_column(col, seed):
    if col == 1:
        ds = make_union_of_subspaces(5000, 5, 3, 3, noise=0.01, random_state=seed)
        return "synthetic (i) n=5000 d=5 k=3 q=3 sigma=0.01", ds.X, ds.truth["subspaces"], 3, 3
    if col == 2:
        ds = make_union_of_subspaces(1000, 10, 3, 3, noise=0.1, random_state=seed)
        return "synthetic (ii) n=1000 d=10 k=3 q=3 sigma=0.1", ds.X, ds.truth["subspaces"], 3, 3
    from privclust.core.data.registry import get_dataset
    ds = get_dataset("yaleb5", random_state=0)
    return "Extended Yale B, 5 subjects, n=320 d=50 k=5 q=9", ds.X, ds.truth["subspaces"], 5, 9


def init_bases(name, X, k, q, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(X))[:INIT_SUBSET]
    cls = SparseSubspaceClustering if name == "ssc" else LowRankRepresentation
    return cls(k, q, random_state=seed).fit(X[idx]).subspaces_


def run_column(col, eps_grid, trials, n_iter, log):
    rows = []                       # (method, eps, trial, cost, wdist)
    title, X, truth, k, q = load_column(col, seed=100)
    Xc = clip_l2(X, 1.0)
    for trial in range(trials):

        def add(method, eps, U, tr=trial):
            rows.append((method, eps, tr, subspace_cost(Xc, U), wasserstein_subspaces(U, truth)))

        t0 = time.time()
        add("non-private k-plane", np.inf, KPlanes(k, q, random_state=trial).fit(Xc).subspaces_)
        for eps in eps_grid:
            for solver in ("tsc", "ssc", "lrr"):
                sa = SampleAggregateSubspaceClustering(k, q, epsilon=eps, solver=solver,
                                                       random_state=1000 * trial + 7)
                add(f"s.a.+{solver.upper()}", eps, sa.fit(X).subspaces_)
            for T in (10, 50):
                su = SuLQSubspaceClustering(k, q, epsilon=eps, n_iter=T, random_state=trial)
                add(f"SuLQ-{T}", eps, su.fit(X).subspaces_)
        log(f"  col {col} trial {trial}: s.a. + SuLQ {time.time() - t0:.1f}s")
    # Gibbs: trials are batched chains
    inits = {"random": "random", "ssc": init_bases("ssc", X, k, q, 0),
             "lrr": init_bases("lrr", X, k, q, 0)}
    for name, init in inits.items():
        t0 = time.time()
        for eps in eps_grid:
            g = GibbsSubspaceClustering(k, q, epsilon=eps, n_iter=n_iter, n_chains=trials,
                                        init=init, record_every=10, release="all",
                                        random_state=int(eps * 1000) % 2**31 + 11)
            g.fit(X, reference=truth)
            last = max(1, min(10, len(g.trace_["iteration"])))
            cost = g.trace_["cost"][-last:].mean(axis=0)
            wd = g.trace_["wasserstein"][-last:].mean(axis=0)
            label = "exp.+random" if name == "random" else f"exp.+{name.upper()} (non-private init)"
            for c in range(trials):
                rows.append((label, eps, c, float(cost[c]), float(wd[c])))
        log(f"  col {col} Gibbs init={name}: {time.time() - t0:.1f}s")
    return title, rows


def summarise(rows):
    methods = list(dict.fromkeys(r[0] for r in rows))
    eps_vals = sorted({r[1] for r in rows})
    table = {}
    for m in methods:
        for e in eps_vals:
            vals = [(r[3], r[4]) for r in rows if r[0] == m and r[1] == e]
            if vals:
                arr = np.array(vals)
                table[m, e] = (np.median(arr[:, 0]), np.median(arr[:, 1]), len(arr))
    return methods, eps_vals, table


def markdown(title, methods, eps_vals, table):
    lines = [f"### {title}", ""]
    for idx, metric in ((1, "Wasserstein distance d_W (median over trials)"),
                        (0, "k-means subspace cost (median over trials)")):
        lines.append(f"**{metric}**")
        lines.append("")
        head = ["method"] + [("inf" if not np.isfinite(e) else f"{e:g}") for e in eps_vals]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for m in methods:
            cells = [m] + [f"{table[m, e][idx]:.3f}" if (m, e) in table else "" for e in eps_vals]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(results), figsize=(5 * len(results), 7), squeeze=False)
    for j, (title, methods, eps_vals, table) in enumerate(results):
        finite = [e for e in eps_vals if np.isfinite(e)]
        for i, idx in enumerate((0, 1)):
            ax = axes[i, j]
            for m in methods:
                if m.startswith("non-private"):
                    ax.axhline(table[m, np.inf][idx], color="k", ls=":", label=m)
                    continue
                xs = [e for e in finite if (m, e) in table]
                ax.plot(np.log10(xs), [table[m, e][idx] for e in xs], marker="o", label=m)
            ax.set_xlabel("log10 epsilon")
            ax.set_ylabel("k-means cost" if idx == 0 else "Wasserstein distance")
            if i == 0:
                ax.set_title(title, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--columns", type=int, nargs="*", default=[1, 2, 3])
    ap.add_argument("--trials", type=int)
    ap.add_argument("--iterations", type=int)
    args = ap.parse_args()
    mode = "quick" if args.quick else "full"
    eps_grid = [0.1, 1.0, 10.0, 100.0, 1000.0] if args.quick else list(10 ** np.arange(-1, 3.01, 0.5))
    trials = args.trials or (2 if args.quick else 10)
    n_iter = args.iterations or (1000 if args.quick else 10000)
    OUT.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore", PrivacyWarning)
    warnings.filterwarnings("ignore", message="Graph is not fully connected")
    log_lines = []

    def log(msg):
        print(msg, flush=True)
        log_lines.append(msg)

    results, md, all_rows = [], [], []
    start = time.time()
    for col in args.columns:
        if col == 3 and not os.environ.get("PRIVCLUST_DATA_DIR"):
            log("column 3 skipped: PRIVCLUST_DATA_DIR is not set")
            continue
        title, rows = run_column(col, eps_grid, trials, n_iter, log)
        methods, eps_vals, table = summarise(rows)
        results.append((title, methods, eps_vals, table))
        md += markdown(title, methods, eps_vals, table)
        all_rows += [(col,) + r for r in rows]
    header = [f"# Seed 001 Fig. 2, {mode} run", "",
              f"epsilons {eps_grid}; {trials} trials; Gibbs {n_iter} iterations (mean metric over "
              f"the last 100, recorded every 10); delta = 1/(n ln n); total {time.time() - start:.0f}s"
              " wall on a shared 2-core machine.",
              "exp.+SSC/LRR start from the non-private SSC/LRR solution (on at most "
              f"{INIT_SUBSET} points): NOT private; exp.+random is data-independent.", ""]
    (OUT / f"fig2_{mode}.md").write_text("\n".join(header + md + ["", "```"] + log_lines + ["```"]))
    with open(OUT / f"fig2_{mode}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["column", "method", "epsilon", "trial", "cost", "wasserstein"])
        w.writerows(all_rows)
    if results:
        plot(results, OUT / f"fig2_{mode}.png")
    print(f"wrote {OUT}/fig2_{mode}.* in {time.time() - start:.0f}s")


if __name__ == "__main__":
    main()
