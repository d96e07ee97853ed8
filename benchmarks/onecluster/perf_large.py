"""Time and peak memory of OneCluster at n = 1e5, d = 10 (target: < 60 s, < 1 GB).

Run:  OMP_NUM_THREADS=1 python benchmarks/onecluster/perf_large.py [n] [d]
Writes benchmarks/results/onecluster/perf_large.md. Each configuration runs in a fresh process
so the peak RSS (ru_maxrss) is its own.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "results" / "onecluster"

CHILD = r"""
import json, resource, sys, time
import numpy as np
from privclust.core import OneCluster
from privclust.core.data import make_planted_ball
from privclust.core.onecluster.good_radius import count_profile, radius_grid
n, d = int(sys.argv[1]), int(sys.argv[2])
data = make_planted_ball(n, d, n_inliers=n // 2, std=0.01, random_state=0)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), time.process_time()
count_profile(data.X, n // 2, radius_grid((0.0, 1.0), 2.0 ** -16, d), bounds=(0.0, 1.0))
t_counts, c_counts = time.perf_counter() - t0, time.process_time() - c0
t0, c0 = time.perf_counter(), time.process_time()
m = OneCluster(n // 2, 1.0, 1.0 / n ** 2, bounds=(0.0, 1.0), grid_step=2.0 ** -16,
               random_state=0).fit(data.X)
t_fit, c_fit = time.perf_counter() - t0, time.process_time() - c0
err = float(np.linalg.norm(m.center_ - data.truth["center"]))
print(json.dumps({"n": n, "d": d, "counts_s": t_counts, "fit_s": t_fit, "counts_cpu": c_counts,
                  "fit_cpu": c_fit,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "data_rss_mb": base, "good_radius": m.good_radius_, "radius": m.radius_,
                  "center_error": err, "success": m.success_, "reliable": m.reliable_}))
"""


def main():
    configs = (
        [(int(sys.argv[1]), int(sys.argv[2]))]
        if len(sys.argv) == 3
        else [(100_000, 10), (100_000, 2)]
    )
    rows = []
    load_start = os.getloadavg()
    for n, d in configs:
        t0 = time.time()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n), str(d)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], f"(wall {time.time() - t0:.1f} s)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [
        "# OneCluster at large n (one fit, eps = 1, delta = 1/n^2, t = n/2, std 0.01)",
        "",
        "| n | d | ball counts wall (CPU) s | full fit wall (CPU) s | peak RSS (MB) | r^ | released radius | centre error | reliable |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['d']} | {r['counts_s']:.1f} ({r['counts_cpu']:.1f}) | "
            f"{r['fit_s']:.1f} ({r['fit_cpu']:.1f}) | {r['peak_rss_mb']:.0f} | "
            f"{r['good_radius']:.4g} | {r['radius']:.3g} | {r['center_error']:.3g} | {r['reliable']} |"
        )
    lines += [
        "",
        "The full fit recomputes the ball counts (they are included in its time). CPU = process",
        "time of the single-threaded run (OMP_NUM_THREADS=1); wall time depends on the machine's load.",
        f"Load average (1, 5, 15 min) at start {tuple(round(x, 2) for x in load_start)}, at end "
        f"{tuple(round(x, 2) for x in os.getloadavg())} ({os.cpu_count()} cores, shared).",
        "Command: `OMP_NUM_THREADS=1 python benchmarks/onecluster/perf_large.py`",
    ]
    (OUT / "perf_large.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
