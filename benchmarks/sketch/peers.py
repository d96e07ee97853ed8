"""Utility and speed of privclust's compressive k-means against pycle 1.2 and diffprivlib 0.6.6,
same data, same process.

    python benchmarks/sketch/peers.py [--trials 10] [--pycle-trials 10] [--n 100000] [--skip-utility]

Writes benchmarks/results/sketch/peers.{json,md}.  Like with like: pycle's "UDP" mode is
add/remove with a noisy count, compared with ours at neighbouring="add_remove" on the *same*
frequencies (our operator passed to pycle's SimpleFeatureMap) and the same number of decoder
replicates (3).  For the utility runs pycle's (deterministic) clean sketch is computed once per
dataset and reused through computeSketch_DP, which then adds its own noise: only the noise and the
decoder vary between trials.  diffprivlib's KMeans is charged what its mechanisms really receive
(measured from its own _split_epsilon and the number of _update_centers calls).
"""

import argparse
import os
import time

import numpy as np
from _common import dataset, kmeans_reference, machine_note, timed, write
from threadpoolctl import threadpool_limits

from privclust.core import CompressiveKMeans, DPLloyd
from privclust.core.metrics import relative_sse
from privclust.core.sketch import Sketch, clompr

M = 1000


def pycle_fit(X, op, eps, bounds, replicates, clean=None):
    import pycle.compressive_learning as pcl
    import pycle.sketching as psk

    phi = psk.SimpleFeatureMap(
        "ComplexExponential", op.frequencies, c_norm=1 / np.sqrt(op.sketch_size)
    )
    original = psk.computeSketch
    if clean is not None:
        psk.computeSketch = lambda *a, **k: clean
    try:
        z = psk.computeSketch_DP(X, phi, eps, DPdef="UDP")
    finally:
        psk.computeSketch = original
    lo, hi = bounds
    box = np.array([np.full(op.n_features, lo), np.full(op.n_features, hi)], dtype=float)
    solver = pcl.CLOMP_CKM(phi, 10, box, z)
    solver.fit_several_times(replicates)
    return solver.get_centroids()


def diffprivlib_fit(X, eps, bounds, seed):
    from diffprivlib.models import KMeans as DPKMeans

    lo, hi = bounds
    model = DPKMeans(
        10,
        epsilon=eps,
        bounds=(np.full(X.shape[1], lo), np.full(X.shape[1], hi)),
        random_state=seed,
    )
    calls = []
    original = model._update_centers

    def counting(*a, **k):
        calls.append(1)
        return original(*a, **k)

    model._update_centers = counting
    model.fit(X)
    iters = model.n_iter_
    e_count, e_dim = model._split_epsilon(X.shape[1], iters)  # unpacked as in diffprivlib
    real = len(calls) * (e_count + X.shape[1] * e_dim)
    return model.cluster_centers_, real


def utility(args):
    rows = []
    for name in args.datasets:
        for trial in range(args.trials):
            X, bounds = dataset(name, args.n, trial)
            ref = kmeans_reference(X, trial)
            clean_cache = {}
            for eps in args.eps:
                seed = 1000 * trial + int(round(100 * eps))
                rec = {"dataset": name, "trial": trial, "eps": eps}
                for label, neigh in (("ckm_replace", "replace"), ("ckm_add_remove", "add_remove")):
                    est, t = timed(
                        CompressiveKMeans(
                            10,
                            eps,
                            sketch_size=M,
                            bounds=bounds,
                            neighbouring=neigh,
                            random_state=seed,
                        ).fit,
                        X,
                    )
                    rec[label] = relative_sse(X, est.cluster_centers_, ref)
                    rec[label + "_time"] = t
                    if neigh == "add_remove":
                        op = est.operator_
                for init in ("uniform", "sphere_packing"):
                    # n_iter=5: the SPARS 2019 baselines (T = 5), not the defaults' Su et al. rule
                    est = DPLloyd(
                        10, eps, bounds=bounds, init=init, n_iter=5, random_state=seed
                    ).fit(X)
                    rec[f"dplloyd_{init}"] = relative_sse(X, est.cluster_centers_, ref)
                with threadpool_limits(1):
                    centres, real = diffprivlib_fit(X, eps, bounds, seed)
                rec["diffprivlib"] = relative_sse(X, centres, ref)
                rec["diffprivlib_real_eps"] = real
                if trial < args.pycle_trials:
                    key = id(op)
                    if key not in clean_cache:
                        clean_cache = {key: Sketch.from_array(X, op).sum / X.shape[0]}
                    np.random.seed(seed)  # noqa: NPY002 -- pycle draws from numpy's global RNG
                    with threadpool_limits(1):
                        centres, t = timed(pycle_fit, X, op, eps, bounds, 3, clean_cache[key])
                    rec["pycle_udp"] = relative_sse(X, centres, ref)
                    rec["pycle_udp_decode_time"] = t
                rows.append(rec)
                print(
                    {k: (round(v, 3) if isinstance(v, float) else v) for k, v in rec.items()},
                    flush=True,
                )
    return rows


def _cpu_timed(fn, *a, **k):
    """(result, wall s, CPU s of this process): CPU time is robust to a time-sliced machine
    (for the pinned runs it equals the wall time on an idle one)."""
    c = time.process_time()
    out, wall = timed(fn, *a, **k)
    return out, wall, time.process_time() - c


def speed(args, repeats=3):
    """End to end (private sketch + decode) on the same frequencies, n = args.n, m = 1000."""
    X, bounds = dataset("sch19", args.n, 0)
    est = CompressiveKMeans(10, 1.0, sketch_size=M, bounds=bounds, neighbouring="add_remove")
    op = est.make_operator(X.shape[1], random_state=0)
    out = {"loadavg_at_start": os.getloadavg()}
    for reps in (1, 3):
        wall = {k: [] for k in ("ours_sk", "ours_dec", "py_sk", "py_dec")}
        cpu = {k: [] for k in wall}
        for rep in range(repeats):
            rng = np.random.default_rng(rep)
            with threadpool_limits(1):
                s, w1, c1 = _cpu_timed(
                    lambda: Sketch.from_array(X, op, random_state=rng).release(
                        1.0, "add_remove", random_state=rng
                    )
                )
                _, w2, c2 = _cpu_timed(
                    clompr, s, op, 10, bounds, n_replicates=reps, random_state=rng
                )
                import pycle.compressive_learning as pcl
                import pycle.sketching as psk

                phi = psk.SimpleFeatureMap(
                    "ComplexExponential", op.frequencies, c_norm=1 / np.sqrt(M)
                )
                np.random.seed(rep)  # noqa: NPY002 -- pycle draws from numpy's global RNG
                z, w3, c3 = _cpu_timed(psk.computeSketch_DP, X, phi, 1.0, DPdef="UDP")
                box = np.array([np.full(10, bounds[0]), np.full(10, bounds[1])])
                _, w4, c4 = _cpu_timed(
                    lambda: pcl.CLOMP_CKM(phi, 10, box, z).fit_several_times(reps)
                )
            for key, w, c in (
                ("ours_sk", w1, c1),
                ("ours_dec", w2, c2),
                ("py_sk", w3, c3),
                ("py_dec", w4, c4),
            ):
                wall[key].append(w)
                cpu[key].append(c)

        def med(v):
            return float(np.median(v))

        res = {}
        for kind, src in (("", wall), ("cpu_", cpu)):
            res.update(
                {
                    f"{kind}ours_sketch_s": med(src["ours_sk"]),
                    f"{kind}ours_decode_s": med(src["ours_dec"]),
                    f"{kind}pycle_sketch_s": med(src["py_sk"]),
                    f"{kind}pycle_decode_s": med(src["py_dec"]),
                    f"{kind}sketch_ratio": med(src["py_sk"]) / med(src["ours_sk"]),
                    f"{kind}end_to_end_ratio": (med(src["py_sk"]) + med(src["py_dec"]))
                    / (med(src["ours_sk"]) + med(src["ours_dec"])),
                }
            )
        out[f"replicates_{reps}"] = res
        print(reps, res, flush=True)
    # pycle as shipped: no thread pinning (OpenBLAS threads free), 1 decoder run
    import pycle.compressive_learning as pcl
    import pycle.sketching as psk

    phi = psk.SimpleFeatureMap("ComplexExponential", op.frequencies, c_norm=1 / np.sqrt(M))
    np.random.seed(0)  # noqa: NPY002 -- pycle draws from numpy's global RNG
    z, t3 = timed(psk.computeSketch_DP, X, phi, 1.0, DPdef="UDP")
    box = np.array([np.full(10, bounds[0]), np.full(10, bounds[1])])
    _, t4 = timed(lambda: pcl.CLOMP_CKM(phi, 10, box, z).fit_several_times(1))
    ours = out["replicates_1"]["ours_sketch_s"] + out["replicates_1"]["ours_decode_s"]
    out["pycle_unpinned_1rep"] = {
        "sketch_s": t3,
        "decode_s": t4,
        "end_to_end_ratio_vs_ours_pinned": (t3 + t4) / ours,
    }
    print(out["pycle_unpinned_1rep"], flush=True)
    return out


def summarise(rows, args):
    methods = [
        "ckm_replace",
        "ckm_add_remove",
        "pycle_udp",
        "diffprivlib",
        "dplloyd_uniform",
        "dplloyd_sphere_packing",
    ]
    lines = [
        "| dataset | eps | " + " | ".join(methods) + " | diffprivlib real eps |",
        "|---|---|" + "---|" * (len(methods) + 1),
    ]
    summary = {}
    for name in args.datasets:
        for eps in args.eps:
            sel = [r for r in rows if r["dataset"] == name and r["eps"] == eps]
            cells = []
            for m in methods:
                vals = [r[m] for r in sel if m in r]
                if not vals:
                    cells.append("-")
                    continue
                summary[f"{name}/{eps}/{m}"] = {
                    "median": float(np.median(vals)),
                    "min": float(np.min(vals)),
                    "max": float(np.max(vals)),
                    "trials": len(vals),
                }
                cells.append(
                    f"{np.median(vals):.3f} [{np.min(vals):.3f}, {np.max(vals):.3f}] ({len(vals)})"
                )
            real = np.median([r["diffprivlib_real_eps"] for r in sel])
            lines.append(f"| {name} | {eps:g} | " + " | ".join(cells) + f" | {real:.3f} |")
    return lines, summary


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--pycle-trials", type=int, default=10)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    p.add_argument("--datasets", nargs="+", default=["sch19", "blobs"])
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--skip-utility", action="store_true")
    args = p.parse_args()
    payload = {"config": vars(args), "m": M}
    lines = [
        f"# CKM vs pycle / diffprivlib (n = {args.n}, m = {M}, k = d = 10)",
        "",
        "Relative SSE (to scikit-learn KMeans, 3 replicates): median [min, max] (trials).",
        "pycle = computeSketch_DP(DPdef='UDP') + CLOMP_CKM.fit_several_times(3) on our frequencies;",
        "ckm_add_remove is the like-with-like comparison. diffprivlib reports eps but its",
        "mechanisms receive 'diffprivlib real eps' (its _split_epsilon shares are swapped).",
        "",
    ]
    if not args.skip_utility:
        rows = utility(args)
        tab, summary = summarise(rows, args)
        payload.update(rows=rows, summary=summary)
        lines += tab
    if not args.skip_speed:
        sp = speed(args)
        payload["speed"] = sp
        lines += [
            "",
            "## Speed (BLAS pinned to one thread for both; medians of 3 runs; wall s, CPU s in brackets)",
            "",
            "| replicates | ours sketch s | ours decode s | pycle sketch s | pycle decode s | sketch ratio | end-to-end ratio |",
            "|---|---|---|---|---|---|---|",
        ]
        for reps in (1, 3):
            s = sp[f"replicates_{reps}"]
            cells = [
                f"{s[k]:.2f} ({s['cpu_' + k]:.2f})"
                for k in ("ours_sketch_s", "ours_decode_s", "pycle_sketch_s", "pycle_decode_s")
            ]
            cells += [
                f"{s[k]:.1f}x ({s['cpu_' + k]:.1f}x)" for k in ("sketch_ratio", "end_to_end_ratio")
            ]
            lines.append(f"| {reps} | " + " | ".join(cells) + " |")
        lines.append(f"\nLoad average at the start of the speed runs: {sp['loadavg_at_start']}")
        u = sp["pycle_unpinned_1rep"]
        lines.append(
            f"\npycle as shipped (unpinned, 1 replicate): sketch {u['sketch_s']:.2f} s + decode "
            f"{u['decode_s']:.2f} s = {u['end_to_end_ratio_vs_ours_pinned']:.1f}x ours (1 replicate)."
        )
    payload["machine"] = machine_note()
    lines.append(f"\nMachine: {payload['machine']}")
    write("peers" if not args.skip_utility else "peers_speed", payload, lines)


if __name__ == "__main__":
    main()
