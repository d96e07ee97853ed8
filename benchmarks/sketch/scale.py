"""Scale of the sketch: the full n = 1e7, d = 10, m = 1000 sketch streamed
(r = m and r = 1), peak memory, and the Dask path with 2 local worker processes.

    python benchmarks/sketch/scale.py [--n 10000000] [--skip-dask]

Writes benchmarks/results/sketch/scale.{json,md}.  Data are generated block by block (100k rows)
and never held in memory; the timings count sketching only (generation is reported apart).
"""

import argparse
import resource
import time

import numpy as np
from _common import machine_note, sch19_blocks, write

from privclust.core.sketch import CompressiveKMeans, Sketch, sketch_dask

BLOCK = 100_000


def streamed(n, op, r, seed=0):
    """Returns (sketch, wall seconds, CPU seconds, generation wall seconds) of the sketching only.
    CPU time shows the work done when the shared machine time-slices the process."""
    sk = Sketch(op, r, random_state=seed)
    t_sketch = t_gen = cpu = 0.0
    t = time.perf_counter()
    for block in sch19_blocks(n, BLOCK, seed):
        t0, c0 = time.perf_counter(), time.process_time()
        t_gen += t0 - t
        sk.update(block)
        t = time.perf_counter()
        t_sketch += t - t0
        cpu += time.process_time() - c0
    return sk, t_sketch, cpu, t_gen


def _block(i, n, seed):
    """Block i of :func:`_common.sch19_blocks` (same seeds), generated inside a worker."""
    start = i * BLOCK
    rng = np.random.default_rng(seed)
    centres = 2.5 * 10**0.1 * rng.standard_normal((10, 10))
    b = np.random.default_rng([seed, i])
    rows = min(BLOCK, n - start)
    return centres[b.integers(0, 10, rows)] + b.standard_normal((rows, 10))


def dask_run(n, op, r, workers=2, seed=0):
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    try:
        n_blocks = -(-n // BLOCK)
        arrays = [
            da.from_delayed(
                dask.delayed(_block)(i, n, seed), shape=(min(BLOCK, n - i * BLOCK), 10), dtype=float
            )
            for i in range(n_blocks)
        ]
        data = da.concatenate(arrays, axis=0)
        t = time.perf_counter()
        sk = sketch_dask(data, op, r, random_state=seed, client=client)
        return sk, time.perf_counter() - t
    finally:
        client.close()
        cluster.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--skip-dask", action="store_true")
    p.add_argument("--out", default="scale", help="result file stem")
    args = p.parse_args()
    B = 3 * 2.5 * 10**0.1 + 4
    op = CompressiveKMeans(10, bounds=(-B, B), sketch_size=1000).make_operator(10, random_state=0)
    out = {"n": args.n, "m": 1000, "d": 10}
    sk_full, t_full, c_full, g_full = streamed(args.n, op, None)
    out["r_m"] = {"sketch_s": t_full, "cpu_s": c_full, "generation_s": g_full}
    print(out, flush=True)
    sk_one, t_one, c_one, g_one = streamed(args.n, op, 1)
    out["r_1"] = {"sketch_s": t_one, "cpu_s": c_one, "generation_s": g_one}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(out, flush=True)
    if not args.skip_dask:
        sk_dask, t_dask = dask_run(args.n, op, None)
        out["dask_2_workers_r_m"] = {
            "wall_s_incl_generation": t_dask,
            "max_abs_diff_vs_single": float(np.abs(sk_dask.mean - sk_full.mean).max()),
        }
        print(out, flush=True)
    out["machine"] = machine_note()
    lines = [
        f"# Sketch scale (n = {args.n:.0e}, d = 10, m = 1000, float32 phases/trig, float64 accumulation)",
        "",
        "| run | wall s | CPU s | note |",
        "|---|---|---|---|",
        f"| streamed, r = m | {t_full:.1f} | {c_full:.1f} | generation {g_full:.1f} s not counted |",
        f"| streamed, r = 1 | {t_one:.1f} | {c_one:.1f} | generation {g_one:.1f} s not counted |",
    ]
    if "dask_2_workers_r_m" in out:
        dk = out["dask_2_workers_r_m"]
        lines.append(
            f"| Dask, 2 local worker processes, r = m | {dk['wall_s_incl_generation']:.1f} | - | includes "
            f"generation in the workers; max abs diff vs single process {dk['max_abs_diff_vs_single']:.1e} |"
        )
    lines += [
        "",
        f"Peak RSS of the single-process runs: {out['peak_rss_mb']:.0f} MB.",
        f"Machine: {out['machine']}",
    ]
    write(args.out, out, lines)


if __name__ == "__main__":
    main()
