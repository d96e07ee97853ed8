"""The 1-cluster utility measurement on 100 seeds (GoodCenter defaults of docs/algorithms.md,
section 5): n = 10,000, d = 2, t = 2,000 points with
std 0.01 in [0,1]^2, eps = 1, delta = 1e-6. A trial passes when the centre is within 0.05 of the
planted centre, the released radius is <= 0.20 and the ball holds >= 90 % of the planted points.

Run:  OMP_NUM_THREADS=1 python benchmarks/onecluster/utility_100.py [trials]
Writes benchmarks/results/onecluster/utility_100.{csv,md}.
"""

import csv
import sys
import time
from pathlib import Path

import numpy as np

from privclust.core import OneCluster
from privclust.core.data import make_planted_ball

OUT = Path(__file__).resolve().parents[1] / "results" / "onecluster"
N, T, STD, EPS, DELTA = 10_000, 2_000, 0.01, 1.0, 1e-6


def main(trials=100):
    rows = []
    for seed in range(trials):
        data = make_planted_ball(N, 2, n_inliers=T, std=STD, random_state=seed)
        t0 = time.perf_counter()
        m = OneCluster(
            T, EPS, DELTA, bounds=(0.0, 1.0), grid_step=2.0**-16, random_state=1000 + seed
        ).fit(data.X)
        elapsed = time.perf_counter() - t0
        err = float(np.linalg.norm(m.center_ - data.truth["center"]))
        inl = data.X[data.truth["inliers"]]
        cov = float(np.mean(np.linalg.norm(inl - m.center_, axis=1) <= m.radius_))
        ok = err <= 0.05 and m.radius_ <= 0.20 and cov >= 0.90
        rows.append(
            {
                "seed": seed,
                "center_error": err,
                "radius": m.radius_,
                "good_radius": m.good_radius_,
                "center_radius": m.center_radius_,
                "coverage": cov,
                "success": m.success_,
                "reliable": m.reliable_,
                "passed": ok,
                "seconds": elapsed,
            }
        )
        print(
            seed,
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in rows[-1].items()},
            flush=True,
        )
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "utility_100.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    col = {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}

    def q(k, p):
        return float(np.percentile(col[k], p))

    text = f"""# 1-cluster utility, planted-ball setting ({trials} seeds)

n = {N}, d = 2, t = {T} planted points (std {STD}) in [0,1]^2, eps = {EPS}, delta = {DELTA},
grid step 2^-16, defaults of `OneCluster` (EM GoodRadius, GoodCenter with our defaults, 2 re-centring steps).

| metric | median | 95th percentile | max |
|---|---|---|---|
| centre error | {q("center_error", 50):.4f} | {q("center_error", 95):.4f} | {col["center_error"].max():.4f} |
| released radius | {q("radius", 50):.4f} | {q("radius", 95):.4f} | {col["radius"].max():.4f} |
| GoodRadius r^ | {q("good_radius", 50):.4f} | {q("good_radius", 95):.4f} | {col["good_radius"].max():.4f} |
| GoodCenter rho_C | {np.nanmedian(col["center_radius"]):.4f} | {np.nanpercentile(col["center_radius"], 95):.4f} | {np.nanmax(col["center_radius"]):.4f} |
| coverage of planted points | {q("coverage", 50):.4f} | (5th pct) {q("coverage", 5):.4f} | (min) {col["coverage"].min():.4f} |
| fit time (s) | {q("seconds", 50):.2f} | {q("seconds", 95):.2f} | {col["seconds"].max():.2f} |

Passed (error <= 0.05, radius <= 0.20, coverage >= 90 %): **{int(col["passed"].sum())} / {trials}**;
GoodCenter failures: {int((1 - col["success"]).sum())}; flagged unreliable: {int((1 - col["reliable"]).sum())}.

Command: `OMP_NUM_THREADS=1 python benchmarks/onecluster/utility_100.py {trials}`
"""
    (OUT / "utility_100.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
