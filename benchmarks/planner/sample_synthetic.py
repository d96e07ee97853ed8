"""The public-sample arm of the planner, checked on SYNTHETIC data only, for every family.

Before a bootstrap rule for public-sample twins is used on real data (plain bootstrap,
smoothed bootstrap, or the envelope of both; see ``SAMPLE_RULE`` and ``_sample_twin`` in the
planner), it is checked here on synthetic "private" data sets drawn from generators the twin
does not use:

* k-means: anisotropic, imbalanced, heavy-tailed, uniform-ball and overlapping mixtures, with
  feature scales that differ, as real tables do (10 % public sample);
* subspace: unions of linear subspaces with shared directions, non-Gaussian coefficients and
  unequal class sizes, on the unit sphere (20 % public sample, stratified by class, so every
  class subspace can be estimated from the sample);
* 1-cluster: a Gaussian cluster in uniform background noise, and an elongated cluster
  (10 % public sample);
* co-clustering: topic-mixture documents (each document mixes its class topic with a shared
  background, Zipf vocabulary, log-normal lengths) -- not the latent-block twin (10 %).

For each, the owner publishes the sample (with its labels); the planner plans from it; the
private releases run (5 seeded runs per epsilon) on the rest. Coverage of the private median
is reported for the plain bootstrap alone, the smoothed bootstrap alone and the envelope, with
the median relative width of each. The rule per family, fixed from this check and nothing
else: the narrowest of the three with >= 80 % coverage, else the envelope.
No real data set is read.

Run: python benchmarks/planner/sample_synthetic.py [--family kmeans subspace ...]
(about three minutes for all; writes benchmarks/results/planner/sample_synthetic.{json,md},
merging families run separately)
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
from privclust.core.experiments.planner import (
    PRIMARY,
    QUANTILES,
    PublicFacts,
    makers,
    plan_utility,
)
from privclust.core.experiments.sweep import trial_seeds
from privclust.core.metrics import class_subspaces

RESULTS = Path(__file__).resolve().parents[1] / "results" / "planner"
EPS = {
    "kmeans": (0.5, 2.0, 10.0, 50.0),
    "subspace": (1.0, 10.0, 100.0, 1000.0),
    "onecluster": (0.5, 2.0, 10.0, 50.0),
    "cocluster": (0.1, 1.0, 10.0),
}
FRACTION = {"kmeans": 0.1, "subspace": 0.2, "onecluster": 0.1, "cocluster": 0.1}
SETTINGS = {"subspace": {"gibbs": {"n_iter": 50}}}
RULES = ("plain", "smoothed", "bracket")


def _mixture(rng, n, d, k, weights=None, sep=2.0, shape="gauss", scales=None):
    weights = np.full(k, 1.0 / k) if weights is None else np.asarray(weights)
    labels = rng.choice(k, size=n, p=weights)
    centres = rng.normal(0.0, sep, (k, d))
    X = np.empty((n, d))
    for j in range(k):
        idx = labels == j
        m = int(idx.sum())
        if shape == "gauss":
            A = rng.normal(size=(d, d)) / np.sqrt(d)  # anisotropic covariance
            Z = rng.normal(size=(m, d)) @ A.T
        elif shape == "t":
            Z = rng.standard_t(3, size=(m, d)) / np.sqrt(3.0)
        else:  # uniform in a ball
            V = rng.normal(size=(m, d))
            V /= np.linalg.norm(V, axis=1, keepdims=True)
            Z = V * rng.uniform(size=(m, 1)) ** (1.0 / d) * 1.5
        X[idx] = centres[j] + Z
    if scales is not None:
        X = X * np.asarray(scales)
    return X, labels


def _subspaces(rng, n, d, k, q, sizes, shared, coef="t"):
    """Union of linear subspaces that share ``shared`` directions, coefficients t(3) or
    uniform, small isotropic noise, rows on the unit sphere; labels by class."""
    common = np.linalg.qr(rng.normal(size=(d, shared)))[0]
    X, labels = [], []
    for c, m in enumerate(np.round(np.asarray(sizes) * n).astype(int)):
        own = rng.normal(size=(d, q - shared))
        B = np.linalg.qr(np.hstack([common, own]))[0]
        Y = rng.standard_t(3, (m, q)) if coef == "t" else rng.uniform(-1, 1, (m, q))
        Xc = Y @ B.T + 0.02 * rng.normal(size=(m, d))
        X.append(Xc / np.linalg.norm(Xc, axis=1, keepdims=True))
        labels.append(np.full(m, c))
    return np.vstack(X), np.concatenate(labels)


def _ball(rng, n, d, frac, std, elong=1.0):
    t = int(frac * n)
    centre = rng.uniform(0.3, 0.7, d)
    scale = np.full(d, std)
    scale[0] *= elong
    X = np.vstack([centre + rng.normal(size=(t, d)) * scale, rng.uniform(0, 1, (n - t, d))])
    return np.clip(X, 0, 1), np.r_[np.zeros(t, int), np.ones(n - t, int)]


def _topics(rng, n, d, k, mix, mean_len):
    """Documents mixing a class topic (weight ``mix``) and a shared background; Zipf
    vocabulary; log-normal lengths (a topic-mixture model, not the latent-block twin)."""
    import scipy.sparse as sp

    zipf = 1.0 / np.arange(1, d + 1)
    back = zipf / zipf.sum()
    topics = rng.dirichlet(np.full(d, 0.05), size=k)
    labels = rng.integers(k, size=n)
    P = mix * topics[labels] + (1 - mix) * back
    lengths = np.maximum(5, rng.lognormal(np.log(mean_len), 0.5, n).astype(int))
    X = np.vstack([rng.multinomial(L, p) for L, p in zip(lengths, P, strict=True)])
    return sp.csr_matrix(X.astype(np.float64)), labels


def cases():
    rng = np.random.default_rng(20240517)
    out = [
        ("kmeans", name, X, y, {})
        for name, X, y in [
            ("anisotropic k=3 d=4 n=150", *_mixture(rng, 150, 4, 3, sep=1.5)),
            ("imbalanced k=3 d=8 n=500", *_mixture(rng, 500, 8, 3, weights=[0.6, 0.3, 0.1])),
            ("uniform balls k=4 d=5 n=1000", *_mixture(rng, 1000, 5, 4, shape="ball")),
            ("heavy tails k=3 d=4 n=300", *_mixture(rng, 300, 4, 3, shape="t")),
            ("overlapping k=5 d=6 n=1800", *_mixture(rng, 1800, 6, 5, sep=1.0)),
            (
                "scaled features k=3 d=13 n=178",
                *_mixture(rng, 178, 13, 3, sep=1.2, scales=np.exp(rng.uniform(-2, 5, 13))),
            ),
        ]
    ]
    rng = np.random.default_rng(20240518)
    out += [
        (
            "subspace",
            "shared direction k=4 d=30 q=5 n=320",
            *_subspaces(rng, 320, 30, 4, 5, [0.25] * 4, 1),
            {"subspace_dim": 5},
        ),
        (
            "subspace",
            "imbalanced uniform k=3 d=20 q=4 n=300",
            *_subspaces(rng, 300, 20, 3, 4, [0.5, 0.3, 0.2], 0, coef="u"),
            {"subspace_dim": 4},
        ),
        (
            "onecluster",
            "blob in noise d=2 n=1000",
            *_ball(rng, 1000, 2, 0.6, 0.05),
            {"bounds": (0.0, 1.0)},
        ),
        (
            "onecluster",
            "elongated d=3 n=600",
            *_ball(rng, 600, 3, 0.7, 0.03, elong=4.0),
            {"bounds": (0.0, 1.0)},
        ),
        (
            "cocluster",
            "topics k=3 d=300 n=600",
            *_topics(rng, 600, 300, 3, 0.5, 60),
            {"n_col_clusters": 3},
        ),
        (
            "cocluster",
            "weak topics k=4 d=500 n=800",
            *_topics(rng, 800, 500, 4, 0.3, 100),
            {"n_col_clusters": 4},
        ),
    ]
    return out


def split(y, fraction, stratified, seed=7):
    """Seeded random split: the public rows (a ``fraction`` of every class when stratified)."""
    rng = np.random.default_rng(seed)
    if stratified:
        pub = np.concatenate(
            [
                rng.permutation(np.flatnonzero(y == c))[: int(round(fraction * np.sum(y == c)))]
                for c in np.unique(y)
            ]
        )
    else:
        pub = rng.permutation(len(y))[: max(2 * len(np.unique(y)), int(len(y) * fraction))]
    priv = np.setdiff1d(np.arange(len(y)), pub)
    return np.sort(pub), priv


def real_reference(family, X, y, kw, k):
    """The private data's reference, computed the way the real calibration does."""
    if family == "kmeans":
        return KMeans(k, n_init=3, random_state=0).fit(X).cluster_centers_
    if family == "subspace":
        return class_subspaces(X, y, kw["subspace_dim"])
    if family == "onecluster":
        from privclust.core.onecluster.baseline import smallest_ball_2approx

        return smallest_ball_2approx(X, len(X) // 2)[0]
    return None


def real_utility(family, X, y, est, ref):
    if family == "kmeans":
        return metrics.relative_sse(X, est.cluster_centers_, ref)
    if family == "subspace":
        return metrics.wasserstein_subspaces(est.subspaces_, ref)
    if family == "onecluster":
        return float(np.linalg.norm(est.center_ - ref))
    return metrics.nmi(y, est.row_labels_)


def width(lo, hi, med):
    return (hi - lo) / abs(med) if med else float("inf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", nargs="*", default=None, help="families to run (default all)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    path = RESULTS / "sample_synthetic.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    cells = [
        c
        for c in old.get("cells", [])
        if args.family and c.get("family", "kmeans") not in args.family
    ]
    start = time.perf_counter()
    with threadpool_limits(1):
        for family, name, X, labels, kw in cases():
            if args.family and family not in args.family:
                continue
            k = len(np.unique(labels))
            if family in ("kmeans", "onecluster") and "bounds" not in kw:
                # the owner's documented range: the data's min/max rounded outward
                kw = {**kw, "bounds": (np.floor(X.min(axis=0)), np.ceil(X.max(axis=0)))}
            pub, priv = split(labels, FRACTION[family], stratified=family == "subspace")
            Xp, yp = X[priv], labels[priv]
            lab = labels[pub] if family in ("subspace", "cocluster") else None
            eps = EPS[family]
            settings = SETTINGS.get(family, {})
            arms = {}
            for arm, smooth in (("plain", False), ("smoothed", True)):
                # one kind of twin per plan (declared), 8 twins each (the 16 twins of the real
                # calibration), whatever the rule says
                facts = PublicFacts(
                    family,
                    len(priv),
                    X.shape[1],
                    1 if family == "onecluster" else k,
                    public_sample=X[pub],
                    public_labels=lab,
                    twin={"smooth": smooth},
                    **kw,
                )
                arms[arm] = plan_utility(
                    facts,
                    epsilons=eps,
                    n_trials=1,
                    n_twins=8,
                    random_state=int(smooth),
                    settings=settings,
                ).trials
            metric = PRIMARY[family][0]
            ref = real_reference(family, Xp, yp, kw, k)
            table = makers(family)
            seeds = trial_seeds(99, len(table) * len(eps), 5)
            for a, alg in enumerate(table):
                for e_i, e in enumerate(eps):
                    vals = []
                    for s in seeds[a * len(eps) + e_i]:
                        est = table[alg](facts, e, int(s), **settings.get(alg, {})).fit(Xp)
                        vals.append(real_utility(family, Xp, yp, est, ref))
                    real = float(np.median(vals))
                    cell = {
                        "family": family,
                        "case": name,
                        "algorithm": alg,
                        "epsilon": e,
                        "real_median": real,
                    }
                    both = []
                    for arm, t in arms.items():
                        v = t[(t.algorithm == alg) & (t.epsilon == e)][metric].to_numpy()
                        both.append(v)
                        lo, hi = np.quantile(v, QUANTILES)
                        cell[arm] = [float(lo), float(hi)]
                        cell[f"inside_{arm}"] = bool(lo <= real <= hi)
                        cell[f"width_{arm}"] = width(lo, hi, float(np.median(v)))
                    # the envelope of the arms' 10-90 % intervals, as the planner forms it
                    lo, hi = (
                        min(cell["plain"][0], cell["smoothed"][0]),
                        max(cell["plain"][1], cell["smoothed"][1]),
                    )
                    med = float(np.median(np.concatenate(both)))
                    cell["bracket"] = [lo, hi]
                    cell["inside_bracket"] = bool(lo <= real <= hi)
                    cell["width_bracket"] = width(lo, hi, med)
                    cells.append(cell)
            print(f"{family} / {name}: done ({time.perf_counter() - start:.0f} s)")
    for c in cells:
        c.setdefault("family", "kmeans")
    families = list(dict.fromkeys(c["family"] for c in cells))
    summary = {
        "per_family": {},
        "cells": len(cells),
        "seconds": round(time.perf_counter() - start, 1),
    }
    for fam in families:
        part = [c for c in cells if c["family"] == fam]
        row = {"cells": len(part)}
        for rule in RULES:
            row[rule] = float(np.mean([c[f"inside_{rule}"] for c in part]))
            ws = [c.get(f"width_{rule}") for c in part if c.get(f"width_{rule}") is not None]
            row[f"width_{rule}"] = float(np.median(ws)) if ws else None
        ok = [r for r in RULES if row[r] >= 0.8 and row[f"width_{r}"] is not None]
        best = min(ok, key=lambda r: row[f"width_{r}"]) if ok else "bracket"
        row["rule"] = "envelope" if best == "bracket" else best
        summary["per_family"][fam] = row
    for rule in RULES:  # all families together (the k-means-only keys)
        summary[rule] = float(np.mean([c[f"inside_{rule}"] for c in cells]))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"summary": summary, "cells": cells}, indent=1))
    lines = [
        "# Public-sample twins on synthetic private data (no real data read)",
        "",
        "Public sample: 10 % of the records (subspace: 20 %, stratified by class), 16 twins "
        "(8 plain bootstraps, 8 smoothed), 5 private runs per cell on the rest. The rule "
        "per family: the narrowest interval with >= 80 % coverage, else the envelope.",
        "",
        "| family | cells | plain: inside, median rel. width | smoothed | envelope | rule |",
        "|---|---|---|---|---|---|",
    ]
    for fam, row in summary["per_family"].items():

        def fmt(r, row=row):
            w = row[f"width_{r}"]
            return f"{row[r]:.0%}, {'-' if w is None else f'{w:.2f}'}"

        lines.append(
            f"| {fam} | {row['cells']} | {fmt('plain')} | {fmt('smoothed')} | "
            f"{fmt('bracket')} | {row['rule']} |"
        )
    lines += [
        "",
        "| family | case | algorithm | epsilon | plain [q10, q90] | smoothed [q10, q90] "
        "| envelope | private median | inside (plain / smoothed / envelope) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        f = lambda iv: f"[{iv[0]:.3g}, {iv[1]:.3g}]"  # noqa: E731
        yn = "/".join("yes" if c[f"inside_{r}"] else "no" for r in RULES)
        lines.append(
            f"| {c['family']} | {c['case']} | {c['algorithm']} | {c['epsilon']:g} | "
            f"{f(c['plain'])} | {f(c['smoothed'])} | {f(c['bracket'])} | "
            f"{c['real_median']:.3g} | {yn} |"
        )
    (RESULTS / "sample_synthetic.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(summary["per_family"], indent=1))


if __name__ == "__main__":
    main()
