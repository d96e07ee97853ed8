"""The public-sample arm of the planner, checked on SYNTHETIC data only.

Before the bracketing rule for public-sample twins (plain and smoothed bootstraps, interval =
envelope of both arms; see ``smoothing_bandwidth`` in the planner) is used on real data, it is
checked here on synthetic "private" data sets drawn from generators the twin does not use:
anisotropic, imbalanced, heavy-tailed, uniform-ball and overlapping mixtures, with feature
scales that differ, as real tables do. For each, the owner publishes a random 10 % of the
records; the planner plans from it; the private releases run (5 seeded runs per epsilon) on
the other 90 %. Coverage of the real median is reported for the plain bootstrap alone, the
smoothed bootstrap alone and the envelope. No real data set is read.

Run: python benchmarks/planner/sample_synthetic.py   (about a minute; writes
benchmarks/results/planner/sample_synthetic.{json,md})
"""
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from privclust.core import metrics
from privclust.core.experiments.planner import ALGORITHMS, QUANTILES, PublicFacts, plan_utility
from privclust.core.experiments.sweep import trial_seeds

RESULTS = Path(__file__).resolve().parents[1] / "results" / "planner"
EPS = (0.5, 2.0, 10.0, 50.0)


def _mixture(rng, n, d, k, weights=None, sep=2.0, shape="gauss", scales=None):
    weights = np.full(k, 1.0 / k) if weights is None else np.asarray(weights)
    labels = rng.choice(k, size=n, p=weights)
    centres = rng.normal(0.0, sep, (k, d))
    X = np.empty((n, d))
    for j in range(k):
        idx = labels == j
        m = int(idx.sum())
        if shape == "gauss":
            A = rng.normal(size=(d, d)) / np.sqrt(d)      # anisotropic covariance
            Z = rng.normal(size=(m, d)) @ A.T
        elif shape == "t":
            Z = rng.standard_t(3, size=(m, d)) / np.sqrt(3.0)
        else:                                              # uniform in a ball
            V = rng.normal(size=(m, d))
            V /= np.linalg.norm(V, axis=1, keepdims=True)
            Z = V * rng.uniform(size=(m, 1)) ** (1.0 / d) * 1.5
        X[idx] = centres[j] + Z
    if scales is not None:
        X = X * np.asarray(scales)
    return X, labels


def cases():
    rng = np.random.default_rng(20240517)
    return [
        ("anisotropic k=3 d=4 n=150", *_mixture(rng, 150, 4, 3, sep=1.5)),
        ("imbalanced k=3 d=8 n=500", *_mixture(rng, 500, 8, 3, weights=[0.6, 0.3, 0.1])),
        ("uniform balls k=4 d=5 n=1000", *_mixture(rng, 1000, 5, 4, shape="ball")),
        ("heavy tails k=3 d=4 n=300", *_mixture(rng, 300, 4, 3, shape="t")),
        ("overlapping k=5 d=6 n=1800", *_mixture(rng, 1800, 6, 5, sep=1.0)),
        ("scaled features k=3 d=13 n=178",
         *_mixture(rng, 178, 13, 3, sep=1.2, scales=np.exp(rng.uniform(-2, 5, 13)))),
    ]


def main():
    warnings.simplefilter("ignore")
    cells = []
    start = time.perf_counter()
    with threadpool_limits(1):
        for name, X, labels in cases():
            k = len(np.unique(labels))
            # the owner's documented range: the data's min/max rounded outward
            box = (np.floor(X.min(axis=0)), np.ceil(X.max(axis=0)))
            perm = np.random.default_rng(7).permutation(len(X))
            m = max(2 * k, len(X) // 10)
            pub, priv = X[perm[:m]], X[perm[m:]]
            facts = PublicFacts("kmeans", len(priv), X.shape[1], k, bounds=box,
                                public_sample=pub)
            plan = plan_utility(facts, epsilons=EPS, n_trials=1, n_twins=8, random_state=0)
            t = plan.trials
            km = KMeans(k, n_init=3, random_state=0).fit(priv)
            makers = ALGORITHMS["kmeans"]()
            seeds = trial_seeds(99, len(makers) * len(EPS), 5)
            for a, alg in enumerate(makers):
                for e_i, e in enumerate(EPS):
                    vals = []
                    for s in seeds[a * len(EPS) + e_i]:
                        est = makers[alg](facts, e, int(s)).fit(priv)
                        vals.append(metrics.relative_sse(priv, est.cluster_centers_,
                                                         km.cluster_centers_))
                    real = float(np.median(vals))
                    cell = {"case": name, "algorithm": alg, "epsilon": e, "real_median": real}
                    for arm in ("plain", "smoothed"):
                        v = t[(t.algorithm == alg) & (t.epsilon == e) & (t.arm == arm)]
                        lo, hi = np.quantile(v.relative_sse, QUANTILES)
                        cell[arm] = [float(lo), float(hi)]
                        cell[f"inside_{arm}"] = bool(lo <= real <= hi)
                    _, lo, hi = plan.predicted(alg, e)
                    cell["bracket"] = [lo, hi]
                    cell["inside_bracket"] = bool(lo <= real <= hi)
                    cells.append(cell)
            print(f"{name}: done ({time.perf_counter() - start:.0f} s)")
    summary = {rule: float(np.mean([c[f"inside_{rule}"] for c in cells]))
               for rule in ("plain", "smoothed", "bracket")}
    summary["cells"] = len(cells)
    summary["seconds"] = round(time.perf_counter() - start, 1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "sample_synthetic.json").write_text(json.dumps(
        {"summary": summary, "cells": cells}, indent=1))
    lines = ["# Public-sample twins on synthetic private data (no real data read)", "",
             "10 % public sample, 8 twins (4 plain bootstraps, 4 smoothed), 5 private runs per "
             "cell on the other 90 %; epsilons " + ", ".join(f"{e:g}" for e in EPS) + ".", "",
             "| rule | cells with the real median inside |", "|---|---|"]
    lines += [f"| {rule} | {summary[rule]:.0%} of {len(cells)} |"
              for rule in ("plain", "smoothed", "bracket")]
    lines += ["", "| case | algorithm | epsilon | plain [q10, q90] | smoothed [q10, q90] | "
              "envelope | real median | inside (plain / smoothed / envelope) |",
              "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        f = lambda iv: f"[{iv[0]:.3g}, {iv[1]:.3g}]"  # noqa: E731
        yn = "/".join("yes" if c[f"inside_{r}"] else "no" for r in ("plain", "smoothed",
                                                                    "bracket"))
        lines.append(f"| {c['case']} | {c['algorithm']} | {c['epsilon']:g} | {f(c['plain'])} | "
                     f"{f(c['smoothed'])} | {f(c['bracket'])} | {c['real_median']:.3g} | {yn} |")
    (RESULTS / "sample_synthetic.md").write_text("\n".join(lines) + "\n")
    print(summary)


if __name__ == "__main__":
    main()
