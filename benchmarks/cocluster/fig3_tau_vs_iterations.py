"""[BP25] Fig. 3: de-normalised tau_{R|C} of the RELEASED noisy table versus the number of
iterations I in {2..10} and epsilon in [0.1, 10] (log scale), on classic3 and cstr.

Run:  PRIVCLUST_DATA_DIR=/path/to/data python benchmarks/cocluster/fig3_tau_vs_iterations.py [runs]
Writes benchmarks/results/cocluster/fig3_tau.csv, fig3_summary.md, fig3_<dataset>.png.
"""

import sys

import numpy as np
from _common import RESULTS, load, permuted, write_csv

from privclust.core.cocluster import DPTauCoClustering, TauCoClustering
from privclust.core.metrics import tau_rows

ITERS = list(range(2, 11))
EPS = [float(f"{e:.3g}") for e in np.logspace(-1, 1, 9)]


def main(runs=10):
    rows, fast_tau = [], {}
    for name in ("classic3", "cstr"):
        X0, y0, k = load(name)
        fast_tau[name] = []
        for run in range(runs):
            X, _ = permuted(X0, y0, seed=2000 + run)
            fast_tau[name].append(TauCoClustering(k, k, random_state=run).fit(X).tau_rows_)
            for n_iter in ITERS:
                for eps in EPS:
                    est = DPTauCoClustering(k, k, epsilon=eps, n_iter=n_iter, random_state=run).fit(
                        X
                    )
                    rows.append((name, n_iter, eps, run, tau_rows(est.table_)))
        print(name, "done", flush=True)
    write_csv("fig3_tau.csv", rows, ["dataset", "n_iter", "epsilon", "run", "tau_rows"])
    summarise(rows, fast_tau, runs)


def summarise(rows, fast_tau, runs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [f"# Fig. 3 reproduction: mean tau_R|C of the released table ({runs} runs)", ""]
    for name in ("classic3", "cstr"):
        ref = float(np.mean(fast_tau[name]))
        lines += [
            f"## {name}",
            "",
            f"Fast-tauCC (non-private, exact table): mean tau_R|C {ref:.4f}",
            "",
            "| I \\ eps | " + " | ".join(str(e) for e in EPS) + " |",
            "|---" * (len(EPS) + 1) + "|",
        ]
        fig, ax = plt.subplots(figsize=(6, 4))
        top = ref
        for n_iter in ITERS:
            means = [
                np.mean([r[4] for r in rows if r[0] == name and r[1] == n_iter and r[2] == e])
                for e in EPS
            ]
            lines.append(f"| {n_iter} | " + " | ".join(f"{m:.4f}" for m in means) + " |")
            top = max(top, max(means))
            ax.plot(
                EPS,
                means,
                marker=".",
                label=f"I = {n_iter}",
                color=plt.cm.viridis((n_iter - 2) / 8),
            )
        ax.axhline(ref, color="k", ls="--", label="Fast-tauCC")
        ax.set(
            xscale="log",
            xlabel="epsilon",
            ylabel="mean tau_R|C of released T",
            title=f"{name}: tau vs epsilon and iterations",
            ylim=(0, 1.1 * top),
        )
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(RESULTS / f"fig3_{name}.png", dpi=120)
        plt.close(fig)
        lines.append("")
    (RESULTS / "fig3_summary.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
