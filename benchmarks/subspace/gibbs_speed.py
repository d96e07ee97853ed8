"""Speed of the Gibbs sampler's kernels: the pre-fusion reference, the numpy path and the compiled
(numba) path, in the same process, on the Fig. 3 setting of Wang, Wang & Singh (NIPS 2015):
n=1000, d=10, k=q=3, 8 chains, epsilon=100.

    nice -n 10 python benchmarks/subspace/gibbs_speed.py [--iterations 10000] [--threads 1]

Each variant runs the sampling loop (z-update then U-update, all chains batched) from the same
seed and start; the compiled path is also timed end to end through
``GibbsSubspaceClustering.fit`` (records every 100 iterations), and both paths with the live
dashboard's defaults (3 chains, a record every 10 iterations: the Gibbs view steps the
estimator's ``iter_fit``, so its iterations per second are these). ``--threads`` sets
PRIVCLUST_GIBBS_THREADS for the compiled path (parallel loops over chains and bases; default 1).
Wall and CPU seconds are reported with the load average, since other work shares this machine.
Writes gibbs_speed.md and gibbs_speed.csv under benchmarks/results/subspace/ (with
``--threads N`` above 1: gibbs_speed_threadsN.md and .csv).
"""

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

from privclust.core._threads import single_thread
from privclust.core.data import clip_l2, make_union_of_subspaces
from privclust.core.privacy import haar_stiefel
from privclust.core.subspace import GibbsSubspaceClustering, _gibbs_fused
from privclust.core.subspace.gibbs import triu_outer, u_update, z_update

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "subspace"
sys.path.insert(0, str(ROOT / "tests" / "subspace"))
import _gibbs_reference as reference  # noqa: E402  (the kernels before fusion)


def load():
    return ", ".join(f"{v:.1f}" for v in os.getloadavg())


def loop(z_fn, u_fn, X, n_iter, kappa, C=8, k=3, q=3):
    sq = np.einsum("ij,ij->i", X, X)
    outer = triu_outer(X)
    rng = np.random.default_rng(0)
    U = haar_stiefel(X.shape[1], q, rng, size=C * k).reshape(C, k, X.shape[1], q)
    for _ in range(n_iter):
        z, A, counts = z_fn(X, sq, outer, U, kappa, rng)
        U = u_fn(U, A, counts, kappa, rng)
    return U


def timed(fn):
    """Wall and CPU seconds of fn() with BLAS pinned to one thread (as the estimator pins it
    while sampling), and the load average before."""
    load_before = load()
    with single_thread():
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - t0, time.process_time() - c0, load_before


def _dashboard_fit(X, n_iter, compiled):
    """The estimator with the Gibbs view's defaults; the numpy path when not ``compiled``."""
    available = _gibbs_fused.AVAILABLE
    _gibbs_fused.AVAILABLE = available and compiled
    try:
        GibbsSubspaceClustering(
            3, 3, epsilon=100.0, n_iter=n_iter, n_chains=3, record_every=10, random_state=0
        ).fit(X)
    finally:
        _gibbs_fused.AVAILABLE = available


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument(
        "--threads", type=int, default=1, help="threads of the compiled kernels' parallel loops"
    )
    args = ap.parse_args()
    n_iter = args.iterations
    if os.environ.get(_gibbs_fused.THREADS_VARIABLE) != str(args.threads):
        # the kernels are built parallel or serial when the module is imported (above): run
        # again with the variable set, or --threads would change nothing
        env = dict(os.environ, **{_gibbs_fused.THREADS_VARIABLE: str(args.threads)})
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    assert _gibbs_fused.PARALLEL == (args.threads > 1 and _gibbs_fused.AVAILABLE)
    X = clip_l2(make_union_of_subspaces(1000, 10, 3, 3, noise=0.1, random_state=0).X, 1.0)
    kappa = 50.0  # epsilon = 100
    variants = [
        ("reference (before fusion)", reference.z_update, reference.u_update),
        ("numpy path", lambda *a: z_update(*a, fused=False), lambda *a: u_update(*a, fused=False)),
    ]
    if _gibbs_fused.AVAILABLE:
        # every kernel compiled (or loaded from numba's cache) outside timing: the estimator's
        # one-call iteration too (its first compile, right after an update of the kernels,
        # added several seconds to the estimator row)
        _gibbs_fused.warm_up()
        variants.append(
            (
                "compiled path (numba)",
                lambda *a: z_update(*a, fused=True),
                lambda *a: u_update(*a, fused=True),
            )
        )
    rows = []
    for name, zf, uf in variants:
        wall, cpu, before = timed(lambda: loop(zf, uf, X, n_iter, kappa))
        rows.append((name, wall, cpu, before, load()))
        print(rows[-1], flush=True)
    if _gibbs_fused.AVAILABLE:
        wall, cpu, before = timed(
            lambda: GibbsSubspaceClustering(
                3, 3, epsilon=100.0, n_iter=n_iter, n_chains=8, record_every=100, random_state=0
            ).fit(X)
        )
        fit = ("compiled path, estimator fit (records every 100)", wall, cpu, before, load())
        rows.append(fit)
        print(rows[-1], flush=True)
    for compiled in (False, True) if _gibbs_fused.AVAILABLE else (False,):
        wall, cpu, before = timed(lambda: _dashboard_fit(X, n_iter, compiled))
        rows.append(
            (
                f"live view defaults (3 chains, records every 10), "
                f"{'compiled' if compiled else 'numpy'} path",
                wall,
                cpu,
                before,
                load(),
            )
        )
        print(rows[-1], flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    stem = "gibbs_speed" if args.threads == 1 else f"gibbs_speed_threads{args.threads}"
    with open(OUT / f"{stem}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["variant", "iterations", "wall_s", "cpu_s", "load_before", "load_after"])
        for r in rows:
            w.writerow([r[0], n_iter, f"{r[1]:.2f}", f"{r[2]:.2f}", r[3], r[4]])
    ref_cpu = rows[0][2]
    if _gibbs_fused.AVAILABLE:
        verdict = (
            f"Target (<= 6 s wall for 8 chains x 10,000 iterations, estimator fit): "
            f"{fit[1] * 10000 / n_iter:.1f} s wall, {fit[2] * 10000 / n_iter:.1f} s CPU "
            f"(scaled to 10,000 iterations), at a load average of {fit[3]} -> "
            f"{'met' if fit[1] * 10000 / n_iter <= 6.0 else 'NOT met'} on wall time, "
            f"{'met' if fit[2] * 10000 / n_iter <= 6.0 else 'NOT met'} on CPU time."
        )
    else:
        verdict = "numba is not installed: the compiled path was not measured."
    md = [
        f"# Gibbs sampler speed: 8 chains x {n_iter} iterations (n=1000, d=10, k=q=3, eps=100)",
        "",
        f"Compiled kernels' threads: {args.threads}. "
        f"Machine: {os.cpu_count()} cores, shared with other work (load averages below: "
        "1-, 5-, 15-minute). CPU seconds are the steadier measure under load; the issue's "
        "target (<= 6 s for 10,000 iterations) is wall time on an idle machine. BLAS is pinned "
        "to one thread in every row.",
        "",
        verdict,
        "",
        "| variant | wall s | CPU s | CPU vs reference | iterations/s per chain (wall) | "
        "load before | load after |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, wall, cpu, before, after in rows:
        md.append(
            f"| {name} | {wall:.1f} | {cpu:.1f} | {ref_cpu / cpu:.2f}x | "
            f"{n_iter / wall:.0f} | {before} | {after} |"
        )
    md += [
        "",
        "The live-view rows run 3 chains, not 8: their iterations per second per chain "
        "are what the Gibbs view shows. The estimator rows run `GibbsIterations` (one compiled "
        "call per iteration); the 'compiled path' row runs `z_update` and `u_update` with "
        "`fused=True` (allocating per call).",
        "",
        f"Re-run: `nice -n 10 python benchmarks/subspace/gibbs_speed.py "
        f"--iterations {n_iter} --threads {args.threads}` (numba installed: "
        "`pip install .[fast]`).",
    ]
    (OUT / f"{stem}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
