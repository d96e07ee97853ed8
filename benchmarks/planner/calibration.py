"""Planner calibration on real data: plan from public facts only, then run the private
algorithms on the real records (outside the planner) and check the prediction.

For every (dataset, algorithm, epsilon) cell: is the real median utility inside the predicted
10-90 % interval? For every (dataset, algorithm): does the recommended epsilon reach the target
on the real data? Targets of the issue ("plan before you spend"): >= 80 % of cells inside, >= 80 %
of recommendations reaching the target. Every cell is reported, misses included.

Public facts per dataset (declared, never read from the records): n, d, k (the number of
classes), the public box (k-means: the ranges printed in scikit-learn's dataset documentation,
rounded outward; digits: pixel values 0..16), q = 9 for Yale B (its preprocessing), the mean
document length for the count data (an owner's declaration; here the rounded true mean, which
an owner of a corpus would know roughly). The twin settings are the planner's defaults.

Real runs are evaluation runs of the private estimators (seeded, no ledger); utilities on the
real data use the class labels / class subspaces, which are evaluation only.
Run: PRIVCLUST_DATA_DIR=/work/shared/data python benchmarks/planner/calibration.py [--quick]
Writes benchmarks/results/planner/calibration.{json,md}.
"""
import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from privclust.core import metrics
from privclust.core.data.registry import get_dataset
from privclust.core.experiments.planner import ALGORITHMS, PublicFacts, parse_target, plan_utility
from privclust.core.experiments.sweep import trial_seeds

RESULTS = Path(__file__).resolve().parents[1] / "results" / "planner"

IRIS_BOX = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5])
WINE_BOX = ([11, 0, 1, 10, 70, 0, 0, 0, 0, 1, 0, 1, 250],
            [15, 6, 4, 30, 165, 4, 6, 1, 4, 13, 2, 4, 1700])

KM_EPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
SUB_EPS = (1.0, 10.0, 100.0, 1000.0)
CO_EPS = (0.1, 0.3, 1.0, 3.0, 10.0)


def configs():
    return [
        # name, family, facts kwargs, algorithms, settings, eps grid, target
        ("iris", "kmeans", dict(n_clusters=3, bounds=IRIS_BOX), None, {}, KM_EPS,
         "relative_sse <= 1.2"),
        ("wine", "kmeans", dict(n_clusters=3, bounds=WINE_BOX), None, {}, KM_EPS,
         "relative_sse <= 1.2"),
        ("digits", "kmeans", dict(n_clusters=10, bounds=(0.0, 16.0)),
         ["dplloyd", "dplloyd_improved"], {}, KM_EPS, "relative_sse <= 1.2"),
        ("yaleb5", "subspace", dict(n_clusters=5, subspace_dim=9), None,
         {"gibbs": {"n_iter": 50}}, SUB_EPS, "wasserstein <= 5.0"),
        ("cstr", "cocluster", dict(n_clusters=4, n_col_clusters=4, twin={"doc_length": 130}),
         None, {}, CO_EPS, "nmi >= 0.8 x baseline"),
        ("classic3", "cocluster", dict(n_clusters=3, n_col_clusters=3, twin={"doc_length": 60}),
         None, {}, CO_EPS, "nmi >= 0.8 x baseline"),
    ]


def real_baseline(family, ds, seed):
    X = ds.X
    if family == "kmeans":
        km = KMeans(ds_k(ds), n_init=3, random_state=seed).fit(X)
        return {"relative_sse": 1.0, "_centers": km.cluster_centers_}
    if family == "subspace":
        from privclust.core.subspace import KPlanes
        truth = ds.truth["subspaces"]
        kp = KPlanes(truth.shape[0], truth.shape[2], n_init=3, random_state=seed).fit(X)
        return {"wasserstein": float(metrics.wasserstein_subspaces(kp.subspaces_, truth))}
    from privclust.core.cocluster.fast_taucc import TauCoClustering
    k = len(np.unique(ds.labels))
    tc = TauCoClustering(k, k, random_state=seed).fit(X)
    return {"nmi": float(metrics.nmi(ds.labels, tc.row_labels_))}


def ds_k(ds):
    return len(np.unique(ds.labels))


def real_score(family, ds, est, base):
    X = ds.X
    if family == "kmeans":
        return float(metrics.relative_sse(X, est.cluster_centers_, base["_centers"]))
    if family == "subspace":
        return float(metrics.wasserstein_subspaces(est.subspaces_, ds.truth["subspaces"]))
    return float(metrics.nmi(ds.labels, est.row_labels_))


WHY = """Why the misses (read with the table above). The intervals are the spread of the
private algorithm on ONE kind of twin; they do not include the uncertainty about the data's
structure, which dominates here:

* k-means (iris, wine, digits): the default twin (a Gaussian mixture filling the middle of the
  public box, cluster std 1/(10 k^(1/d)) of each side) is harder than the real data, so the
  real relative SSE is mostly *better* than predicted; and the planner's twin never matches
  the real optimum's scale (wine's box is dominated by proline, digits' pixels are not
  Gaussian blobs). DPLloyd is also bimodal (a run either finds the clusters or merges two), so
  a 10-90 % interval from 10 trials is unstable.
* subspace (Yale B): the union-of-subspaces twin (noise 0.05) is far cleaner than face images
  (the non-private k-plane baseline is at d_W 1.2 on the twin and 4.9 on Yale B), so Gibbs and
  SuLQ are predicted to reach d_W <= 5 at epsilon 100-1000, and on the real data they do not.
* co-clustering (cstr, classic3): the twin's latent-block signal (block means 2.0 vs 0.5) is a
  declaration; the real corpora are sparser and heavy-tailed, so the epsilon at which DP-tauCC
  "switches on" differs (real data earlier on classic3, the NMI plateau lower on cstr).

What would fix it: declare the twin's spread from public knowledge (twin settings), give a
public sample (k-means twin = bootstrap of it), and widen the interval over twin settings."""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="3 trials instead of 5 x 2 twins / 10")
    ap.add_argument("--rewrite", action="store_true", help="rewrite the report from the JSON")
    args = ap.parse_args()
    if args.rewrite:
        data = json.loads((RESULTS / "calibration.json").read_text())
        sm = data["summary"]
        write(data["cells"], data["recommendations"], sm["seconds"], sm["n_trials_per_twin"],
              sm["n_twins"], sm["n_real_trials"])
        return
    n_trials, n_twins, n_real = (3, 1, 3) if args.quick else (5, 2, 10)
    warnings.simplefilter("ignore")
    cells, recs, timing = [], [], {}
    with threadpool_limits(1):
        for name, family, kw, algs, settings, eps, target_text in configs():
            start = time.perf_counter()
            ds = get_dataset(name)
            n, d = (int(s) for s in ds.shape)           # the public shape
            facts = PublicFacts(family, n, d, **kw)
            plan = plan_utility(facts, epsilons=eps, algorithms=algs, n_trials=n_trials,
                                n_twins=n_twins, settings=settings, random_state=0)
            target = parse_target(target_text)
            rec = plan.recommend(target)
            metric = target.metric
            # ---- the real private runs, outside the planner ----
            base = real_baseline(family, ds, 0)
            real_thr = target.threshold({k: v for k, v in base.items() if not k.startswith("_")})
            make_all = ALGORITHMS[family]()
            names = list(make_all) if algs is None else algs
            seeds = trial_seeds(12345, len(names) * len(eps), n_real)
            real = {}
            for a, alg in enumerate(names):
                for e_i, e in enumerate(eps):
                    vals = []
                    for t in range(n_real):
                        est = make_all[alg](facts, e, int(seeds[a * len(eps) + e_i, t]),
                                            **settings.get(alg, {}))
                        try:
                            est.fit(ds.X)
                            vals.append(real_score(family, ds, est, base))
                        except Exception as exc:  # noqa: BLE001 -- reported
                            vals.append(float("nan"))
                            print(f"  {name}/{alg}/{e}: {type(exc).__name__}: {exc}")
                    real[(alg, e)] = float(np.nanmedian(vals)) if np.any(np.isfinite(vals)) \
                        else float("nan")
                    med, q10, q90 = plan.predicted(alg, e, metric)
                    r = real[(alg, e)]
                    cells.append({"dataset": name, "algorithm": alg, "epsilon": e,
                                  "metric": metric, "pred_median": med, "pred_q10": q10,
                                  "pred_q90": q90, "real_median": r,
                                  "inside": bool(q10 <= r <= q90)})
            for alg, info in rec["per_algorithm"].items():
                e = info["epsilon"]
                reached = None
                if e is not None:
                    r = real[(alg, e)]
                    reached = bool(r <= real_thr if target.op == "<=" else r >= real_thr)
                recs.append({"dataset": name, "algorithm": alg, "target": str(target),
                             "twin_threshold": rec["threshold"], "real_threshold": real_thr,
                             "recommended_epsilon": e, "real_median_at_it": None if e is None
                             else real[(alg, e)], "reached": reached})
            timing[name] = round(time.perf_counter() - start, 1)
            print(f"{name}: {timing[name]} s; twin baseline {plan.baseline}; real baseline "
                  f"{ {k: v for k, v in base.items() if not k.startswith('_')} }")
    write(cells, recs, timing, n_trials, n_twins, n_real)


def write(cells, recs, timing, n_trials, n_twins, n_real):
    inside = [c["inside"] for c in cells]
    decided = [r for r in recs if r["reached"] is not None]
    summary = {"cells": len(cells), "inside": int(sum(inside)),
               "inside_fraction": float(np.mean(inside)) if inside else None,
               "recommendations": len(decided),
               "reached": int(sum(r["reached"] for r in decided)),
               "reached_fraction": float(np.mean([r["reached"] for r in decided]))
               if decided else None,
               "no_recommendation": [f"{r['dataset']}/{r['algorithm']}" for r in recs
                                     if r["reached"] is None],
               "seconds": timing, "n_trials_per_twin": n_trials, "n_twins": n_twins,
               "n_real_trials": n_real}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "calibration.json").write_text(json.dumps(
        {"summary": summary, "cells": cells, "recommendations": recs}, indent=1))
    lines = ["# Planner calibration on real data", "",
             f"Predicted interval = 10-90 % quantiles of {n_trials} trials x {n_twins} twins; "
             f"real median over {n_real} seeded runs of the private estimator on the real data.",
             "", f"- cells with the real median inside the interval: {summary['inside']} / "
             f"{summary['cells']} ({summary['inside_fraction']:.0%}; target 80 %)",
             f"- recommendations reaching the target on the real data: {summary['reached']} / "
             f"{summary['recommendations']}"
             + (f" ({summary['reached_fraction']:.0%}; target 80 %)"
                if summary["reached_fraction"] is not None else ""),
             f"- no epsilon of the grid predicted to reach the target: "
             f"{', '.join(summary['no_recommendation']) or 'none'}",
             f"- seconds per dataset: {timing}", "",
             "| dataset | algorithm | epsilon | metric | predicted median [q10, q90] | real median | inside |",
             "|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c['dataset']} | {c['algorithm']} | {c['epsilon']:g} | {c['metric']} | "
                     f"{c['pred_median']:.3g} [{c['pred_q10']:.3g}, {c['pred_q90']:.3g}] | "
                     f"{c['real_median']:.3g} | {'yes' if c['inside'] else '**no**'} |")
    lines += ["", "## Direction of the misses", "",
              "| dataset | cells | inside | real better than predicted | real worse |",
              "|---|---|---|---|---|"]
    for ds in dict.fromkeys(c["dataset"] for c in cells):
        part = [c for c in cells if c["dataset"] == ds]
        lower_is_better = part[0]["metric"] != "nmi"
        better = sum((c["real_median"] < c["pred_q10"]) if lower_is_better
                     else (c["real_median"] > c["pred_q90"]) for c in part)
        worse = sum((c["real_median"] > c["pred_q90"]) if lower_is_better
                    else (c["real_median"] < c["pred_q10"]) for c in part)
        lines.append(f"| {ds} | {len(part)} | {sum(c['inside'] for c in part)} | {better} | "
                     f"{worse} |")
    lines += ["", WHY]
    lines += ["", "## Recommendations", "",
              "| dataset | algorithm | target | recommended epsilon | real median there | real threshold | reached |",
              "|---|---|---|---|---|---|---|"]
    for r in recs:
        e = "none" if r["recommended_epsilon"] is None else f"{r['recommended_epsilon']:g}"
        v = "-" if r["real_median_at_it"] is None else f"{r['real_median_at_it']:.3g}"
        reached = "-" if r["reached"] is None else ("yes" if r["reached"] else "**no**")
        lines.append(f"| {r['dataset']} | {r['algorithm']} | {r['target']} | {e} | {v} | "
                     f"{r['real_threshold']:.3g} | {reached} |")
    (RESULTS / "calibration.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
