"""Reproduction of Fig. 1 and Fig. 3 of [SCH19] = Schellekens, Chatalic, Houssiau, de Montjoye,
Jacques & Gribonval, "Compressive k-means with differential privacy", SPARS 2019, Sec. III.

    python benchmarks/sketch/figures.py fig1 --quick
    python benchmarks/sketch/figures.py fig3 --quick
    python benchmarks/sketch/figures.py fig1 --paper   # n = 1e7, 13 eps, 50 trials
    python benchmarks/sketch/figures.py fig1 --paper-lite   # n = 1e7, m = 10kd, ~10 min

Fig. 1: relative SSE (to KMeans with 3 replicates) versus eps for CKM with f_e and f_q, r = m and
r = 1, m = 10kd and 100kd, and DPLloyd (uniform init, "improved" sphere-packing init); medians.
Per trial the data, frequencies and masks are drawn once and the clean sketch is released at every
eps with fresh noise (the noise is the only thing eps changes).
Fig. 3 left: relative SSE versus SNR_e (m = 10kd, f_e, alpha_r in {1/m, 0.01, 0.1, 1} x eps).
Fig. 3 right: relative SSE over a (SNR x m/kd) grid, the SNR set through sigma_xi (Eq. (4)).
Writes benchmarks/results/sketch/fig1_<cfg>.{json,md,png}, fig3_<cfg>.{json,md,png}.
"""

import argparse
import time

import numpy as np
from _common import RESULTS, D, K, kmeans_reference, machine_note, sch19_blocks, write

from privclust.core.data import make_gaussian_mixture
from privclust.core.metrics import relative_sse
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


def fig1(cfg, name):
    B = 3 * 2.5 * K ** (1 / D) + 4
    bounds = (-B, B)
    scale = default_frequency_scale(bounds, K, D)
    rows, timings = [], {}
    for trial in range(cfg["trials"]):
        ds = (
            make_gaussian_mixture(cfg["n"], D, K, random_state=trial) if cfg["n"] <= 10**6 else None
        )
        X = ds.X if ds is not None else np.vstack(list(sch19_blocks(cfg["n"], 100_000, trial)))
        ref = kmeans_reference(X, trial)
        rng = np.random.default_rng(trial)
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
                            rows.append(
                                {
                                    "trial": trial,
                                    "draw": draw,
                                    "method": f"CKM {signature} m={m_factor}kd r={'m' if r == m else 1}",
                                    "eps": eps,
                                    "rel_sse": relative_sse(X, C, ref),
                                }
                            )
                print(trial, m, signature, timings, flush=True)
        for init in ("uniform", "sphere_packing"):
            for eps in cfg["eps"]:
                for draw in range(cfg.get("noise_draws", 1)):
                    # n_iter=5: the SPARS 2019 baselines (T = 5), not the defaults' Su et al. rule
                    C = (
                        DPLloyd(K, eps, bounds=bounds, init=init, n_iter=5, random_state=rng)
                        .fit(X)
                        .cluster_centers_
                    )
                    rows.append(
                        {
                            "trial": trial,
                            "draw": draw,
                            "method": f"DPLloyd {init}",
                            "eps": eps,
                            "rel_sse": relative_sse(X, C, ref),
                        }
                    )
    methods = sorted({r["method"] for r in rows})
    lines = [
        f"# [SCH19] Fig. 1 ({name}: n = {cfg['n']:.0e}, {cfg['trials']} dataset(s) x "
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
            "rows": rows,
            "medians": table,
            "sketch_cpu_s": timings,
            "machine": machine_note(),
        },
        lines,
    )
    _plot(f"fig1_{name}", cfg["eps"], table, "epsilon", "relative SSE (median)")


def fig3(cfg, name):
    B = 3 * 2.5 * K ** (1 / D) + 4
    bounds = (-B, B)
    scale = default_frequency_scale(bounds, K, D)
    n = min(cfg["n"], 100_000)
    trials = max(1, cfg["trials"] - 1)
    left, right = [], []
    for trial in range(trials):
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
        print("fig3 left", trial, flush=True)
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
        print("fig3 right", trial, flush=True)
    lines = [
        f"# [SCH19] Fig. 3 ({name}: n = {n:.0e}, {trials} trial(s))",
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
        {"left": left, "right": right, "log_correlation": rho, "machine": machine_note()},
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
    args = p.parse_args()
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
    (fig1 if args.figure == "fig1" else fig3)(cfg, name)


if __name__ == "__main__":
    main()
