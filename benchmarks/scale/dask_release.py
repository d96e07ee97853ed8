"""Private releases on a data set that lives on Dask, through the Curator (issue: "beyond one
machine").

    python benchmarks/scale/dask_release.py scale [--n 1000000 3000000 10000000]
    python benchmarks/scale/dask_release.py quality [--n 1000000] [--runs 5]
    python benchmarks/scale/dask_release.py paired [--n 1000000] [--runs 6]
    python benchmarks/scale/dask_release.py coreset [--n 1000000]

``scale``: for each n, shards of 250 000 x 10 records (a 10-cluster Gaussian mixture, public box
from the generating model) are written to a temporary folder; then, each in a fresh process,
the registration pass, a CompressiveKMeans release (m = 1000) and a DPLloyd release (5
iterations) run through ``Curator.release`` (a) on a 2-worker ``LocalCluster`` (worker
processes) and (b) in one process (dask's synchronous scheduler streaming the same shards).
Reported: wall time, records/s (records read / wall time; DPLloyd reads the data 5 times), the
peak RSS of each worker process and of the driver. The memory bound does not depend on n: a
task holds one block of ``block_rows`` x d values plus the release's per-block work (the sketch
phases, ~2 MB) and one partition result (m complex numbers, or k counts and k x d sums).

``quality``: the relative SSE (SSE of the released centres / SSE of the generating centres) of
releases on the Dask data set and on the same records in memory, ``--runs`` each.

``paired``: CompressiveKMeans with the same generators in both modes (internals called with
fixed seeds 0 .. runs-1, for this comparison only): sketch difference and both relative SSEs.

``coreset``: as ``scale`` for an LSHCoresetKMeans release (depth 20: one pass per tree level
that branches, one for the root and one for the leaves' sums; the passes are counted).

Writes benchmarks/results/scale/<mode>.{json,md}.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[1] / "results" / "scale"
D = K = 10
SHARD = 250_000
BOX = 3 * 2.5 * K ** (1 / D) + 4  # 3 sd of the centres + 4 sd of a cluster (public)
EPS = 1.0


def centres(seed=0):
    return 2.5 * K ** (1 / D) * np.random.default_rng(seed).standard_normal((K, D))


def write_shards(folder, n, seed=0):
    """Shards of the mixture, generated one at a time (never all in memory)."""
    C = centres(seed)
    for i, start in enumerate(range(0, n, SHARD)):
        rng = np.random.default_rng([seed, i])
        rows = min(SHARD, n - start)
        X = C[rng.integers(0, K, rows)] + rng.standard_normal((rows, D))
        np.save(os.path.join(folder, f"shard{i:05d}.npy"), np.clip(X, -BOX, BOX))


def estimators(names=("CompressiveKMeans", "DPLloyd")):
    from privclust.core import CompressiveKMeans, DPLloyd, LSHCoresetKMeans

    every = {
        "CompressiveKMeans": (
            CompressiveKMeans(K, epsilon=EPS, bounds=(-BOX, BOX), n_replicates=1),
            1,
        ),
        "DPLloyd": (
            DPLloyd(K, epsilon=EPS, bounds=(-BOX, BOX), n_iter=5, neighbouring="replace"),
            5,
        ),
        "LSHCoresetKMeans": (
            LSHCoresetKMeans(
                K, epsilon=EPS, delta=1e-6, bounds=(-BOX, BOX), neighbouring="replace"
            ),
            None,
        ),
    }
    return {name: every[name] for name in names}


def _worker_peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_run(folder, n, mode, names):
    """One process of the scale benchmark: registration + the releases; prints a JSON line."""
    import dask

    from privclust.core import Curator, Ledger
    from privclust.core.data.dask_dataset import DaskDataset

    client = cluster = None
    if mode == "dask":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    else:
        dask.config.set(scheduler="synchronous")
    out = {"n": n, "mode": mode}
    try:
        ds = DaskDataset(folder, n_features=D, box=(-BOX, BOX), n_public=True, n_samples=n)
        t = time.perf_counter()
        ds.register(client)
        out["register_s"] = time.perf_counter() - t
        cur = Curator(ds, Ledger(10.0, delta=1e-4, dataset=ds), client=client)
        for name, (est, passes) in estimators(names).items():
            before = cur.progress()["passes"]
            t = time.perf_counter()
            release = cur.release(est)
            wall = time.perf_counter() - t
            passes = cur.progress()["passes"] - before  # passes over the records
            out[name] = {
                "wall_s": wall,
                "passes": passes,
                "records_per_s": n * passes / wall,
                "centres_finite": bool(np.all(np.isfinite(release.attributes["cluster_centers_"]))),
            }
        if client is not None:
            out["worker_peak_rss_mb"] = sorted(client.run(_worker_peak_mb).values())
    finally:
        if client is not None:
            client.close()
            cluster.close()
    out["driver_peak_rss_mb"] = _worker_peak_mb()
    print(json.dumps(out), flush=True)


def sse(X, C):
    d2 = (X * X).sum(1)[:, None] - 2.0 * X @ C.T + (C * C).sum(1)[None, :]
    return float(np.maximum(d2.min(1), 0).sum())


def quality(n, runs):
    from dask.distributed import Client, LocalCluster

    from privclust.core import Curator, Dataset, Ledger
    from privclust.core.data.dask_dataset import DaskDataset

    out = {"n": n, "runs": runs, "epsilon": EPS}
    with tempfile.TemporaryDirectory() as folder:
        write_shards(folder, n)
        X = np.concatenate([np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder))])
        ref = sse(X, np.clip(centres(), -BOX, BOX))
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        try:
            sources = {
                "dask": DaskDataset(
                    folder, n_features=D, box=(-BOX, BOX), n_public=True, n_samples=n
                ).register(client),
                "memory": Dataset(X),
            }
            for name, (est, _) in estimators().items():
                for label, ds in sources.items():
                    vals = []
                    for _ in range(runs):
                        # a fresh ledger (and store) each run: an identical request would be
                        # answered from the store
                        cur = Curator(ds, Ledger(10.0, dataset=ds), client=client)
                        vals.append(
                            sse(X, np.asarray(cur.release(est).attributes["cluster_centers_"]))
                            / ref
                        )
                    out.setdefault(name, {})[label] = vals
                    print(name, label, np.mean(vals), np.std(vals), flush=True)
        finally:
            client.close()
            cluster.close()
    return out


def paired(n, seeds):
    """The same generators in both modes (internals called with fixed seeds, for this
    comparison only): the largest sketch difference and both relative SSEs per seed."""
    from dask.distributed import Client, LocalCluster

    from privclust.core.data.dask_dataset import DaskDataset

    out = {"n": n, "seeds": []}
    with tempfile.TemporaryDirectory() as folder:
        write_shards(folder, n)
        X = np.concatenate([np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder))])
        ref = sse(X, np.clip(centres(), -BOX, BOX))
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        try:
            parts = (
                DaskDataset(folder, n_features=D, box=(-BOX, BOX), n_public=True, n_samples=n)
                .register(client)
                .partitions(client)
            )
            for seed in range(seeds):
                fitted = []
                for data in (X, parts):
                    est = estimators()["CompressiveKMeans"][0]
                    rng = np.random.default_rng(seed)
                    est._before_charge((n, D), rng)
                    if data is X:
                        est._fit(X, rng)
                    else:
                        est._fit_partitioned(parts, rng)
                    fitted.append(est)
                mem, dist = fitted
                row = {
                    "seed": seed,
                    "max_abs_sketch_diff": float(np.abs(mem.sketch_ - dist.sketch_).max()),
                    "memory": sse(X, mem.cluster_centers_) / ref,
                    "dask": sse(X, dist.cluster_centers_) / ref,
                }
                out["seeds"].append(row)
                print(row, flush=True)
        finally:
            client.close()
            cluster.close()
    (RESULTS / "paired.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"# CompressiveKMeans with the same generators on Dask and in memory (n = {n:.0e}, "
        "d = k = 10, epsilon = 1, n_replicates = 1)",
        "",
        "| seed | max abs sketch difference | relative SSE in memory | relative SSE on Dask |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['seed']} | {r['max_abs_sketch_diff']:.1e} | {r['memory']:.4f} | {r['dask']:.4f} |"
        for r in out["seeds"]
    ]
    (RESULTS / "paired.md").write_text("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["scale", "quality", "paired", "coreset", "_one"])
    p.add_argument("--n", type=int, nargs="+")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--folder")
    p.add_argument("--how", default="dask")
    p.add_argument("--names", nargs="+", default=["CompressiveKMeans", "DPLloyd"])
    args = p.parse_args()
    if args.mode == "_one":
        return one_run(args.folder, args.n[0], args.how, args.names)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.mode == "paired":
        return paired((args.n or [1_000_000])[0], args.runs)
    if args.mode == "quality":
        n = (args.n or [1_000_000])[0]
        out = quality(n, args.runs)
        lines = [
            f"# Relative SSE, Dask release vs in-memory release (n = {n:.0e}, d = 10, "
            f"k = 10, epsilon = {EPS}, {args.runs} runs each)",
            "",
            "SSE of the released centres / SSE of the generating centres (mean +- sd).",
            "",
            "| estimator | on Dask (2 workers) | in memory |",
            "|---|---|---|",
        ]
        for name in estimators():
            a, b = out[name]["dask"], out[name]["memory"]
            lines.append(
                f"| {name} | {np.mean(a):.4f} +- {np.std(a):.4f} | "
                f"{np.mean(b):.4f} +- {np.std(b):.4f} |"
            )
        (RESULTS / "quality.json").write_text(json.dumps(out, indent=1))
        (RESULTS / "quality.md").write_text("\n".join(lines) + "\n")
        return None
    coreset = args.mode == "coreset"
    path = RESULTS / ("coreset.json" if coreset else "scale.json")
    names = ["LSHCoresetKMeans"] if coreset else ["CompressiveKMeans", "DPLloyd"]
    write = write_coreset if coreset else write_scale
    rows = json.loads(path.read_text())["rows"] if path.exists() else []
    for n in args.n or ([1_000_000] if coreset else [1_000_000, 3_000_000, 10_000_000]):
        with tempfile.TemporaryDirectory() as folder:
            t = time.perf_counter()
            write_shards(folder, n)
            gen = time.perf_counter() - t
            for how in ("dask", "single"):
                res = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "_one",
                        "--n",
                        str(n),
                        "--folder",
                        folder,
                        "--how",
                        how,
                        "--names",
                        *names,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["generation_s"] = gen
                rows = [r for r in rows if (r["n"], r["mode"]) != (n, how)] + [row]
                print(row, flush=True)
                write(rows)
    return None


def write_coreset(rows):
    """coreset.{json,md} from the rows measured so far (one per n and mode)."""
    rows = sorted(rows, key=lambda r: (r["n"], r["mode"]))
    (RESULTS / "coreset.json").write_text(
        json.dumps(
            {"rows": rows, "cpus": os.cpu_count(), "loadavg_at_end": os.getloadavg()}, indent=1
        )
    )
    lines = [
        "# LSHCoresetKMeans releases on Dask through the Curator (d = 10, k = 10, depth "
        f"20, .npy shards of {SHARD} rows, block_rows = 65536)",
        "",
        "| n | run | register s | release s | passes | rec/s | peak RSS per worker MB "
        "| driver peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ls = r["LSHCoresetKMeans"]
        workers = ", ".join(f"{v:.0f}" for v in r.get("worker_peak_rss_mb", [])) or "-"
        lines.append(
            f"| {r['n']:.0e} | {'2 workers' if r['mode'] == 'dask' else 'one process'} "
            f"| {r['register_s']:.1f} | {ls['wall_s']:.1f} | {ls['passes']} "
            f"| {ls['records_per_s']:.2e} | {workers} | {r['driver_peak_rss_mb']:.0f} |"
        )
    lines += [
        "",
        f"Machine: {os.cpu_count()} cores shared with other jobs; load average at the "
        f"end {os.getloadavg()}.",
    ]
    (RESULTS / "coreset.md").write_text("\n".join(lines) + "\n")


def write_scale(rows, loadavg=None):
    """scale.{json,md} from the rows measured so far (one per n and mode); ``loadavg``: the
    load average to report (default: now, at the end of a run)."""
    rows = sorted(rows, key=lambda r: (r["n"], r["mode"]))
    loadavg = tuple(loadavg or os.getloadavg())
    (RESULTS / "scale.json").write_text(
        json.dumps({"rows": rows, "cpus": os.cpu_count(), "loadavg_at_end": loadavg}, indent=1)
    )
    lines = [
        "# Private releases on Dask through the Curator (d = 10, k = 10, .npy shards of "
        f"{SHARD} rows, block_rows = 65536)",
        "",
        "| n | run | register s | CKM s (passes) | CKM rec/s | DPLloyd s (passes) | DPLloyd rec/s "
        "| peak RSS per worker MB | driver peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ck, dl = r["CompressiveKMeans"], r["DPLloyd"]
        workers = ", ".join(f"{v:.0f}" for v in r.get("worker_peak_rss_mb", [])) or "-"
        lines.append(
            f"| {r['n']:.0e} | {'2 workers' if r['mode'] == 'dask' else 'one process'} "
            f"| {r['register_s']:.1f} | {ck['wall_s']:.1f} ({ck.get('passes', '-')}) "
            f"| {ck['records_per_s']:.2e} | {dl['wall_s']:.1f} ({dl.get('passes', '-')}) "
            f"| {dl['records_per_s']:.2e} | {workers} "
            f"| {r['driver_peak_rss_mb']:.0f} |"
        )
    lines += [
        "",
        "passes: passes over the records counted by the Curator (the check before the charge "
        "included); rec/s = n x passes / wall. Rows without a count (-) are from the first "
        "version of this script, whose rec/s was n / wall for CKM and 5 n / wall for DPLloyd.",
        "",
        f"Machine: {os.cpu_count()} cores shared with other jobs; load average at the "
        f"end {', '.join(f'{v:.1f}' for v in loadavg)}.",
    ]
    (RESULTS / "scale.md").write_text("\n".join(lines) + "\n")
    return None


if __name__ == "__main__":
    main()
