"""Performance of the subspace family: time and memory of each estimator at the paper's sizes.

    python benchmarks/subspace/perf.py [--iterations 10000] [--profile-iterations 500]

1. Gibbs, Fig. 3 setting (n=1000, d=10, k=3, q=3), 8 chains: wall and CPU time, chain-iterations
   per second, and a cProfile breakdown (z-update / Gumbel-max, eigh, QR, Bingham sampler).
2. Non-private SSC and LRR on n=1000, next to scikit-learn's SpectralClustering on the same
   affinity (the spectral step alone) as a yardstick.
Writes perf.md under benchmarks/results/subspace/.
"""

import argparse
import cProfile
import io
import os
import platform
import pstats
import time
from pathlib import Path

from sklearn.cluster import SpectralClustering

from privclust.core.data import make_union_of_subspaces
from privclust.core.subspace import (
    GibbsSubspaceClustering,
    LowRankRepresentation,
    SparseSubspaceClustering,
)

OUT = Path(__file__).resolve().parents[1] / "results" / "subspace"
GROUPS = {
    "gumbel_max": "Gumbel-max (privacy.gumbel_max)",
    "z_update": "z-update (own time)",
    "_gumbel_argmax_middle": "Gumbel-max of the z-update (noise + k-1 comparisons)",
    "eigh": "batched eigh",
    "qr": "batched QR",
    "sample_vector_bingham": "ACG rejection",
    "acg_parameters": "ACG envelope (Newton)",
    "u_update": "U-update (own time)",
}


def load():
    """1-, 5- and 15-minute load averages (other work shares this machine)."""
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def timed(fn):
    t0, c0 = time.time(), time.process_time()
    out = fn()
    return out, time.time() - t0, time.process_time() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--profile-iterations", type=int, default=500)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    ds = make_union_of_subspaces(1000, 10, 3, 3, noise=0.1, random_state=0)
    md = ["# Subspace family performance", ""]

    def gibbs(n):
        return GibbsSubspaceClustering(
            3, 3, epsilon=100.0, n_iter=n, n_chains=8, record_every=100, random_state=0
        ).fit(ds.X)

    before = load()
    _, wall, cpu = timed(lambda: gibbs(args.iterations))
    md += [
        f"Machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; "
        f"before the Gibbs run: {before}; after it: {load()}. Wall time depends on the load "
        "(other work runs on this machine); CPU time much less.",
        "",
        f"## Gibbs, 8 chains x {args.iterations} iterations (n=1000, d=10, k=3, q=3, eps=100)",
        "",
        f"- wall {wall:.1f} s, CPU {cpu:.1f} s (target <= 20 s wall)",
        f"- per chain: {args.iterations / wall:.0f} iterations/s wall, "
        f"{args.iterations / cpu:.0f} iterations/s per CPU second (the 8 chains advance "
        "together: one batched iteration updates all of them)",
        f"- {1e3 * wall / args.iterations:.2f} ms wall, {1e3 * cpu / args.iterations:.2f} ms CPU"
        " per iteration of all 8 chains",
        "",
    ]
    prof = cProfile.Profile()
    prof.enable()
    gibbs(args.profile_iterations)
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())
    md += [
        f"Profile of {args.profile_iterations} iterations (own time, share of the total "
        "under cProfile):",
        "",
        "| part | seconds | share |",
        "|---|---|---|",
    ]
    for (_, _, name), v in sorted(stats.stats.items(), key=lambda kv: -kv[1][2]):
        if name in GROUPS:
            md.append(f"| {GROUPS[name]} | {v[2]:.3f} | {100 * v[2] / total:.0f} % |")
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
    md += ["", "```", buf.getvalue().strip()[-3000:], "```", ""]
    md += [
        "## Non-private SSC / LRR, n=1000 (d=10, k=3, q=3, sigma=0.1)",
        "",
        "| solver | fit wall s | fit CPU s | SpectralClustering on its affinity: wall s |",
        "|---|---|---|---|",
    ]
    for cls in (SparseSubspaceClustering, LowRankRepresentation):
        est, w, c = timed(lambda: cls(3, 3, random_state=0).fit(ds.X))
        _, ws, _ = timed(
            lambda: SpectralClustering(3, affinity="precomputed", random_state=0).fit(
                est.affinity_matrix_
            )
        )
        md.append(f"| {cls.__name__} ({est.n_iter_} iterations) | {w:.2f} | {c:.2f} | {ws:.2f} |")
    (OUT / "perf.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
