"""Reproduction of Fig. 1 and Fig. 3 of [SCH19] = Schellekens, Chatalic, Houssiau, de Montjoye,
Jacques & Gribonval, "Compressive k-means with differential privacy", SPARS 2019, Sec. III.

    python benchmarks/sketch/figures.py fig1 --quick
    python benchmarks/sketch/figures.py fig3 --quick
    python benchmarks/sketch/figures.py fig1 --paper --workers 2   # n = 1e7, 13 eps, 50 trials
    python benchmarks/sketch/figures.py fig1 --paper-lite   # n = 1e7, m = 10kd, ~10 min

Fig. 1: relative SSE (to KMeans with 3 replicates) versus eps for CKM with f_e and f_q, r = m and
r = 1, m = 10kd and 100kd, and DPLloyd (uniform init, "improved" sphere-packing init); medians.
Per trial the data, frequencies and masks are drawn once and the clean sketch is released at every
eps with fresh noise (the noise is the only thing eps changes).
Fig. 3 left: relative SSE versus SNR_e (m = 10kd, f_e, alpha_r in {1/m, 0.01, 0.1, 1} x eps).
Fig. 3 right: relative SSE over a (SNR x m/kd) grid, the SNR set through sigma_xi (Eq. (4)).
Writes benchmarks/results/sketch/fig1_<cfg>.{json,md,png}, fig3_<cfg>.{json,md,png}, again after
every dataset (trial); finished trials are kept in <figure>_<cfg>.partial.jsonl until the figure
is complete, so an interrupted run resumes at its first unfinished trial. ``--workers N`` runs
trials in N processes.
"""

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
from _common import (
    RESULTS,
    D,
    K,
    kmeans_reference,
    machine_note,
    sch19_blocks,
    sch19_box,
    write,
)

from privclust.core.data import make_gaussian_mixture
from privclust.core.metrics import relative_sse, sse_many
from privclust.core.sketch import (
    DPLloyd,
    Sketch,
    SketchOperator,
    clompr,
    default_frequency_scale,
    gmm_true_sketch,
    noise_std_for_snr,
    sigma_xi,
    snr_complex_exp,
)

CONFIGS = {
    "quick": {
        "n": 100_000,
        "eps": [0.01, 0.1, 1.0, 10.0],
        "trials": 2,
        "big_m_trials": 1,
        "big_m_replicates": 1,
    },
    "smoke": {"n": 5_000, "eps": [1.0], "trials": 1, "big_m_trials": 0, "big_m_replicates": 1},
    "paper": {
        "n": 10_000_000,
        "eps": list(np.logspace(-3, 1, 13)),
        "trials": 50,
        "big_m_trials": 50,
        "big_m_replicates": 3,
    },
    # the paper's n = 1e7 at a cost that fits a shared 2-core machine (~10 min): one dataset, the
    # sketches computed once, medians over 3 noise draws + decodes per eps; m = 100kd skipped
    "paper_lite": {
        "n": 10_000_000,
        "eps": list(np.logspace(-3, 1, 9)),
        "trials": 1,
        "big_m_trials": 0,
        "big_m_replicates": 3,
        "noise_draws": 3,
    },
}


def _noise(values, scale, rng):
    return values + rng.laplace(0, scale, values.shape) + 1j * rng.laplace(0, scale, values.shape)


def _box():
    """[SCH19]'s public box (``sch19_box``) and the frequency scale it sets."""
    bounds = (-sch19_box(), sch19_box())
    return bounds, default_frequency_scale(bounds, K, D)


def fig1_trial(cfg, trial):
    """One dataset of Fig. 1 (its own seeds: trials are independent units): its rows and the CPU
    seconds of its sketches."""
    bounds, scale = _box()
    rows, timings = [], {}
    ds = make_gaussian_mixture(cfg["n"], D, K, random_state=trial) if cfg["n"] <= 10**6 else None
    X = ds.X if ds is not None else np.vstack(list(sch19_blocks(cfg["n"], 100_000, trial)))
    rng = np.random.default_rng(trial)
    centres = []  # each row's centres: their SSEs over all n points are computed in one pass
    for m_factor in (10, 100):
        m = m_factor * K * D
        if m_factor == 100 and trial >= cfg["big_m_trials"]:
            continue
        reps = 3 if m_factor == 10 else cfg["big_m_replicates"]
        for signature in ("complex_exp", "quantized"):
            op = SketchOperator.draw(D, m, scale, signature=signature, random_state=rng)
            for r in (m, 1):
                t0 = time.process_time()
                sk = Sketch.from_array(X, op, r, random_state=rng)
                timings[f"{signature} m={m} r={r}"] = time.process_time() - t0
                for eps in cfg["eps"]:
                    for draw in range(cfg.get("noise_draws", 1)):
                        s = sk.release(eps, random_state=rng)
                        C, _, _ = clompr(s, op, K, bounds, n_replicates=reps, random_state=rng)
                        centres.append(C)
                        rows.append(
                            {
                                "trial": trial,
                                "draw": draw,
                                "method": f"CKM {signature} m={m_factor}kd r={'m' if r == m else 1}",
                                "eps": eps,
                            }
                        )
    for init in ("uniform", "sphere_packing"):
        for eps in cfg["eps"]:
            for draw in range(cfg.get("noise_draws", 1)):
                # n_iter=5: the SPARS 2019 baselines (T = 5), not the defaults' Su et al. rule
                C = (
                    DPLloyd(K, eps, bounds=bounds, init=init, n_iter=5, random_state=rng)
                    .fit(X)
                    .cluster_centers_
                )
                centres.append(C)
                rows.append({"trial": trial, "draw": draw, "method": f"DPLloyd {init}", "eps": eps})
    ref_sse, *errors = sse_many(X, [kmeans_reference(X, trial), *centres])
    for row, error in zip(rows, errors, strict=True):
        row["rel_sse"] = float(error / ref_sse)
    return {"rows": rows, "sketch_cpu_s": timings}


def fig1(cfg, name, trials):
    """Write Fig. 1's table, JSON and plot from the finished ``trials`` (``run_trials``)."""
    rows = [r for t in trials for r in t["rows"]]
    timings = trials[-1]["sketch_cpu_s"]
    methods = sorted({r["method"] for r in rows})
    lines = [
        f"# [SCH19] Fig. 1 ({name}: n = {cfg['n']:.0e}, {_progress('fig1', trials, cfg)} dataset(s) x "
        f"{cfg.get('noise_draws', 1)} noise draw(s), medians; m = 100kd uses "
        f"{cfg['big_m_trials']} trial(s), {cfg['big_m_replicates']} decoder replicate(s))",
        "",
        "| method | " + " | ".join(f"eps={e:.3g}" for e in cfg["eps"]) + " |",
        "|---|" + "---|" * len(cfg["eps"]),
    ]
    table = {}
    for meth in methods:
        meds = []
        for eps in cfg["eps"]:
            v = [r["rel_sse"] for r in rows if r["method"] == meth and r["eps"] == eps]
            meds.append(float(np.median(v)))
        table[meth] = meds
        lines.append(f"| {meth} | " + " | ".join(f"{v:.3f}" for v in meds) + " |")
    lines += [
        "",
        "Sketch CPU seconds (last dataset): "
        + ", ".join(f"{k}: {v:.1f}" for k, v in timings.items()),
        f"Machine: {machine_note()}",
    ]
    write(
        f"fig1_{name}",
        {
            "config": cfg,
            "trials_finished": len(trials),
            "trial_seconds": [t["seconds"] for t in trials],
            "rows": rows,
            "medians": table,
            "sketch_cpu_s": timings,
            "machine": machine_note(),
        },
        lines,
    )
    _plot(f"fig1_{name}", cfg["eps"], table, "epsilon", "relative SSE (median)")


def fig3_trial(cfg, trial, name):
    """One dataset of Fig. 3 (its own seeds: trials are independent units): its left-panel rows
    (SNR_e vs eps and alpha_r) and right-panel rows (SNR x m/kd grid)."""
    bounds, scale = _box()
    n = min(cfg["n"], 100_000)
    left, right = [], []
    ds = make_gaussian_mixture(n, D, K, random_state=trial)
    X, ref = ds.X, kmeans_reference(ds.X, trial)
    rng = np.random.default_rng(100 + trial)
    m = 10 * K * D
    op = SketchOperator.draw(D, m, scale, random_state=rng)
    z = gmm_true_sketch(op, ds.truth["centers"])
    for r in sorted({1, int(0.01 * m), int(0.1 * m), m}):
        sk = Sketch.from_array(X, op, r, random_state=rng)
        for eps in np.logspace(-3, 1, 5 if name != "paper" else 9):
            s = sk.release(eps, random_state=rng)
            C, _, _ = clompr(s, op, K, bounds, random_state=rng)
            snr = snr_complex_exp(z, n, m, r, sigma_xi(eps, n, m, r))
            left.append(
                {
                    "trial": trial,
                    "alpha_r": r / m,
                    "eps": eps,
                    "snr": snr,
                    "rel_sse": relative_sse(X, C, ref),
                }
            )
    grid = {"quick": 4, "smoke": 2}.get(name, 12)
    for mkd in np.logspace(-0.5, 1.5, grid):
        m2 = max(K, int(round(mkd * K * D)))
        op2 = SketchOperator.draw(D, m2, scale, random_state=rng)
        z2 = gmm_true_sketch(op2, ds.truth["centers"])
        clean = Sketch.from_array(X, op2).mean
        for target in np.logspace(-1, 3, grid):
            try:
                sxi = noise_std_for_snr(target, z2, n, m2, m2)
            except ValueError:
                continue
            s = _noise(clean, sxi / 2 / np.sqrt(m2 * n), rng)  # Eq. (3) with alpha_r = 1
            C, _, _ = clompr(s, op2, K, bounds, n_replicates=1, random_state=rng)
            right.append(
                {
                    "trial": trial,
                    "m_over_kd": m2 / (K * D),
                    "snr": target,
                    "rel_sse": relative_sse(X, C, ref),
                }
            )
    return {"left": left, "right": right}


def fig3(cfg, name, trials):
    """Write Fig. 3's tables, JSON and plot from the finished ``trials`` (``run_trials``)."""
    n = min(cfg["n"], 100_000)
    left = [r for t in trials for r in t["left"]]
    right = [r for t in trials for r in t["right"]]
    lines = [
        f"# [SCH19] Fig. 3 ({name}: n = {n:.0e}, {_progress('fig3', trials, cfg)} trial(s))",
        "",
        "## Left: relative SSE vs SNR_e (m = 10kd, f_e); medians over trials",
        "",
        "| alpha_r | eps | SNR_e | relative SSE |",
        "|---|---|---|---|",
    ]
    for a in sorted({r["alpha_r"] for r in left}):
        for eps in sorted({r["eps"] for r in left}):
            sel = [r for r in left if r["alpha_r"] == a and r["eps"] == eps]
            lines.append(
                f"| {a:.4g} | {eps:.3g} | {np.median([r['snr'] for r in sel]):.3g} | "
                f"{np.median([r['rel_sse'] for r in sel]):.3f} |"
            )
    snr = np.array([r["snr"] for r in left])
    rel = np.array([r["rel_sse"] for r in left])
    rho = float(np.corrcoef(np.log(snr), np.log(rel))[0, 1])
    lines += [
        "",
        f"Correlation of log SNR and log relative SSE: {rho:.2f}",
        "",
        "## Right: mean relative SSE over SNR (rows) x m/kd (columns)",
        "",
    ]
    mkds = sorted({r["m_over_kd"] for r in right})
    snrs = sorted({r["snr"] for r in right})
    lines += [
        "| SNR \\ m/kd | " + " | ".join(f"{v:.2f}" for v in mkds) + " |",
        "|---|" + "---|" * len(mkds),
    ]
    for t in snrs:
        cells = []
        for v in mkds:
            sel = [r["rel_sse"] for r in right if r["snr"] == t and r["m_over_kd"] == v]
            cells.append(f"{np.mean(sel):.2f}" if sel else "-")
        lines.append(f"| {t:.3g} | " + " | ".join(cells) + " |")
    write(
        f"fig3_{name}",
        {
            "config": cfg,
            "trials_finished": len(trials),
            "trial_seconds": [t["seconds"] for t in trials],
            "left": left,
            "right": right,
            "log_correlation": rho,
            "machine": machine_note(),
        },
        lines,
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 4))
        for a in sorted({r["alpha_r"] for r in left}):
            sel = [r for r in left if r["alpha_r"] == a]
            ax.loglog(
                [r["snr"] for r in sel], [r["rel_sse"] for r in sel], "o", label=f"alpha_r={a:.3g}"
            )
        ax.set_xlabel("SNR_e")
        ax.set_ylabel("relative SSE")
        ax.legend()
        fig.tight_layout()
        fig.savefig(RESULTS / f"fig3_{name}.png", dpi=110)
    except ImportError:
        pass


def n_trials(figure, cfg):
    """Datasets a figure draws: ``trials`` for Fig. 1, one fewer (at least one) for Fig. 3."""
    return cfg["trials"] if figure == "fig1" else max(1, cfg["trials"] - 1)


def _progress(figure, trials, cfg):
    total = n_trials(figure, cfg)
    return f"{len(trials)}" if len(trials) == total else f"{len(trials)} of {total} (unfinished)"


def _timed_trial(figure, cfg, trial, name):
    t0 = time.perf_counter()
    out = fig1_trial(cfg, trial) if figure == "fig1" else fig3_trial(cfg, trial, name)
    return dict(out, seconds=round(time.perf_counter() - t0, 1))


def run_trials(figure, name, cfg, workers=1):
    """Every trial of ``figure`` under configuration ``name``, in trial order; finished trials are
    appended to ``<figure>_<name>.partial.jsonl`` (resumed on a rerun with the same
    configuration) and the figure's files are rewritten after each one, so an interrupted run
    leaves its figure so far. ``workers`` > 1 runs trials in that many processes (one core each;
    each trial has its own seeds, so the rows do not depend on the order)."""
    path = RESULTS / f"{figure}_{name}.partial.jsonl"
    settings = {k: v for k, v in cfg.items() if k != "trials"}
    done = {}
    if path.exists():
        lines = path.read_text().splitlines()
        if json.loads(lines[0]) != json.loads(json.dumps(settings)):
            raise SystemExit(
                f"{path} holds trials of other settings than {settings}: "
                "delete it to start over, or rerun with its settings"
            )
        done = {rec["trial"]: rec["result"] for rec in map(json.loads, lines[1:])}
    else:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings) + "\n")
    todo = [t for t in range(n_trials(figure, cfg)) if t not in done]
    write_figure = fig1 if figure == "fig1" else fig3

    def keep(trial, result):
        with open(path, "a") as fh:
            fh.write(json.dumps({"trial": trial, "result": result}, default=float) + "\n")
        done[trial] = result
        print(f"{figure} {name}: trial {trial} done in {result['seconds']} s", flush=True)
        write_figure(cfg, name, [done[t] for t in sorted(done)])

    if workers > 1 and len(todo) > 1:
        with ProcessPoolExecutor(min(workers, len(todo))) as pool:
            running = {pool.submit(_timed_trial, figure, cfg, t, name): t for t in todo}
            for future in as_completed(running):
                keep(running[future], future.result())
    else:
        for t in todo:
            keep(t, _timed_trial(figure, cfg, t, name))
    if not todo and done:
        write_figure(cfg, name, [done[t] for t in sorted(done)])
    path.unlink()  # finished: every trial is in the figure's JSON


def _plot(stem, eps, table, xlabel, ylabel):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for meth, vals in table.items():
        ax.loglog(eps, vals, "o-" if "CKM" in meth else "s--", label=meth)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}.png", dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("figure", choices=["fig1", "fig3"])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="n = 1e5 (default)")
    g.add_argument("--paper", action="store_true", help="n = 1e7, 13 eps, 50 trials (hours)")
    g.add_argument(
        "--paper-lite",
        action="store_true",
        help="n = 1e7, m = 10kd, 9 eps, 1 dataset x 3 noise draws (~10 min)",
    )
    g.add_argument("--smoke", action="store_true", help="seconds: checks the script runs")
    p.add_argument(
        "--trials",
        type=int,
        default=None,
        help="override the configuration's number of datasets (Fig. 3 uses trials - 1)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run the datasets (trials) in this many processes, one core each",
    )
    args = p.parse_args()
    if args.workers < 1:
        p.error(f"--workers must be at least 1; got {args.workers}")
    name = (
        "paper"
        if args.paper
        else "paper_lite"
        if args.paper_lite
        else "smoke"
        if args.smoke
        else "quick"
    )
    cfg = dict(CONFIGS[name])
    if args.trials is not None:
        cfg["trials"] = args.trials
    run_trials(args.figure, name, cfg, args.workers)


if __name__ == "__main__":
    main()
