"""Planner calibration on real data: plan from public facts only, then run the private
algorithms on the real records (outside the planner) and check the prediction.

For every (dataset, algorithm, epsilon) cell: is the real median utility inside the predicted
10-90 % interval? For every (dataset, algorithm): does the recommended epsilon reach the target
on the real data? Targets of the planner: >= 80 % of cells inside, >= 80 %
of recommendations reaching the target. Every cell is reported, misses included.

Public facts per dataset (declared, never read from the records): n, d, k (the number of
classes), the public box (k-means: the ranges printed in scikit-learn's dataset documentation,
rounded outward; digits: pixel values 0..16), q = 9 for Yale B (its preprocessing), the mean
document length for the count data (an owner's declaration; here the rounded true mean, which
an owner of a corpus would know roughly). The twins' difficulty (separation and box fill,
subspace noise, block contrast) is drawn from the planner's structural prior
(``privclust.core.experiments.planner.PRIORS``: the papers' experimental settings widened by a
factor of two, fixed before this benchmark was run and not fitted to these data sets); the
interval is over 16 twins x 1 run. The recommendation is the planner's default, conservative
one (the pessimistic end of the interval must reach the target). The first version (one fixed
twin, 2 twins x 5 trials, median recommendation) is kept in calibration_before.json and
compared in the report.

With ``--sample`` (every data set) the owner publishes a seeded random 10 % of every class with
its labels (20 % for Yale B, so that each 9-dimensional class subspace has >= 9 public records)
and the twins are bootstraps of it, half plain and half smoothed, with the envelope of both
arms as the interval (``SAMPLE_RULE`` and ``_sample_twin`` in the planner; the rule was fixed
from synthetic data only, benchmarks/planner/sample_synthetic.py). ``--heldout`` runs the same
rule once on data sets not used to design it (breast cancer, Yale B with 5 other subjects,
digits as counts). An earlier plain-bootstrap k-means run (another split) is kept in
calibration_sample_before.json. With a public sample the planner recommended by the median rule
until the design and held-out results showed it landing just above the targets; it now uses the
pessimistic end of the interval, as with a prior. That change was made after seeing those sets,
so they are not blind for it; ``--fresh`` (data sets fixed and committed before it was run, run
once) is the only blind test of it. Every run records both rules.

Besides each data set's primary target, every run judges the recommendations on a fixed grid of
targets per family (``TARGET_GRID``, stated before the analysis, the same for design and
held-out data), on the same plans and the same real runs.

Real runs are evaluation runs of the private estimators (seeded, no ledger); utilities on the
real data use the class labels / class subspaces, which are evaluation only.
Run: PRIVCLUST_DATA_DIR=/work/shared/data python benchmarks/planner/calibration.py [--quick]
(about 95 s), then ``--sample`` (about 75 s), ``--heldout`` (about 70 s), ``--fresh``, then
``--rewrite`` to write the report with all four.
Writes benchmarks/results/planner/calibration.{json,md}, calibration_sample.json,
calibration_heldout.json and calibration_fresh.json.
"""

import argparse
import json
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from privclust.core import metrics
from privclust.core.data.registry import get_dataset
from privclust.core.experiments.planner import (
    PublicFacts,
    makers,
    parse_target,
    plan_utility,
)
from privclust.core.experiments.sweep import trial_seeds
from privclust.core.metrics import class_subspaces

RESULTS = Path(__file__).resolve().parents[1] / "results" / "planner"

IRIS_BOX = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5])
WINE_BOX = (
    [11, 0, 1, 10, 70, 0, 0, 0, 0, 1, 0, 1, 250],
    [15, 6, 4, 30, 165, 4, 6, 1, 4, 13, 2, 4, 1700],
)

# Held-out k-means set: scikit-learn's breast cancer data (569 x 30, 2 classes); the public box
# is the Min / Max table of scikit-learn's documentation of the data set (breast_cancer.rst),
# rounded outward to two significant digits of each feature's maximum.
BC_MIN = [
    6.981,
    9.71,
    43.79,
    143.5,
    0.053,
    0.019,
    0.0,
    0.0,
    0.106,
    0.05,
    0.112,
    0.36,
    0.757,
    6.802,
    0.002,
    0.002,
    0.0,
    0.0,
    0.008,
    0.001,
    7.93,
    12.02,
    50.41,
    185.2,
    0.071,
    0.027,
    0.0,
    0.0,
    0.156,
    0.055,
]
BC_MAX = [
    28.11,
    39.28,
    188.5,
    2501.0,
    0.163,
    0.345,
    0.427,
    0.201,
    0.304,
    0.097,
    2.873,
    4.885,
    21.98,
    542.2,
    0.031,
    0.135,
    0.396,
    0.053,
    0.079,
    0.03,
    36.04,
    49.54,
    251.2,
    4254.0,
    0.223,
    1.058,
    1.252,
    0.291,
    0.664,
    0.208,
]


def outward_box(lo, hi):
    """(lo, hi) widened by 1 % of the range (the documented values are themselves rounded to
    three decimals) and rounded outward at two significant digits of each maximum; a lower
    bound is not taken below 0 when the documented minimum is non-negative."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    pad = 0.01 * (hi - lo)
    scale = 10.0 ** (np.floor(np.log10(hi)) - 1)
    out_lo = np.floor((lo - pad) / scale) * scale
    out_lo = np.where(lo >= 0, np.maximum(out_lo, 0.0), out_lo)
    return (
        np.round(out_lo, 12).tolist(),
        np.round(np.ceil((hi + pad) / scale) * scale, 12).tolist(),
    )


# Held-out Yale B view: 5 subjects other than those of the default view (9, 11, 18, 22, 28),
# fixed before the run.
HELDOUT_SUBJECTS = [2, 7, 15, 26, 34]
# Public fractions of the sample arm (a seeded random sample of every class, published with its
# labels): 10 %; 20 % for the subspace family, because a q = 9 dimensional class subspace needs
# at least 9 public records per class (10 % of Yale B's 64 images per subject is 6).
SAMPLE_FRACTION = {"kmeans": 0.1, "subspace": 0.2, "onecluster": 0.1, "cocluster": 0.1}

KM_EPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
SUB_EPS = (1.0, 10.0, 100.0, 1000.0)
CO_EPS = (0.1, 0.3, 1.0, 3.0, 10.0)

# The standard set of targets a user states, per family, fixed before this analysis (before any
# recommendation on the grid was looked at) and the same for the design and the held-out data
# sets. Each (dataset, algorithm, target) is one recommendation to check; the single target of
# ``configs()`` stays the primary one. Subspace: the Wasserstein distance between subspace sets
# saturates near 8.5 on Yale B, so targets above ~7 would be met by any release.
TARGET_GRID = {
    "kmeans": (
        "relative_sse <= 1.2",
        "relative_sse <= 1.5",
        "relative_sse <= 2",
        "relative_sse <= 3",
    ),
    "subspace": ("wasserstein <= 5", "wasserstein <= 6", "wasserstein <= 7"),
    "cocluster": ("nmi >= 0.8 x baseline", "nmi >= 0.5 x baseline"),
}


def configs():
    return [
        # name, family, facts kwargs, algorithms, settings, eps grid, target
        (
            "iris",
            "kmeans",
            dict(n_clusters=3, bounds=IRIS_BOX),
            None,
            {},
            KM_EPS,
            "relative_sse <= 1.2",
        ),
        (
            "wine",
            "kmeans",
            dict(n_clusters=3, bounds=WINE_BOX),
            None,
            {},
            KM_EPS,
            "relative_sse <= 1.2",
        ),
        (
            "digits",
            "kmeans",
            dict(n_clusters=10, bounds=(0.0, 16.0)),
            ["dplloyd", "dplloyd_improved"],
            {},
            KM_EPS,
            "relative_sse <= 1.2",
        ),
        (
            "yaleb5",
            "subspace",
            dict(n_clusters=5, subspace_dim=9),
            None,
            {"gibbs": {"n_iter": 50}},
            SUB_EPS,
            "wasserstein <= 5.0",
        ),
        (
            "cstr",
            "cocluster",
            dict(n_clusters=4, n_col_clusters=4, twin={"doc_length": 130}),
            None,
            {},
            CO_EPS,
            "nmi >= 0.8 x baseline",
        ),
        (
            "classic3",
            "cocluster",
            dict(n_clusters=3, n_col_clusters=3, twin={"doc_length": 60}),
            None,
            {},
            CO_EPS,
            "nmi >= 0.8 x baseline",
        ),
    ]


def heldout_configs():
    """Data sets NOT used to design the public-sample rule (a blind check, run once after the
    rule was frozen): breast cancer (k-means, k = 2), Yale B with 5 other subjects (subspace),
    digits as a count matrix (co-clustering: pixel values 0..16 are counts; k = 10 row
    clusters, 10 column clusters -- a corpus-like table of another domain, unlike a re-split
    of classic3 which would share its vocabulary and classes)."""
    return [
        (
            "breast_cancer",
            "kmeans",
            dict(n_clusters=2, bounds=outward_box(BC_MIN, BC_MAX)),
            None,
            {},
            KM_EPS,
            "relative_sse <= 1.2",
        ),
        (
            "yaleb5_other",
            "subspace",
            dict(n_clusters=5, subspace_dim=9),
            None,
            {"gibbs": {"n_iter": 50}},
            SUB_EPS,
            "wasserstein <= 5.0",
        ),
        (
            "digits_counts",
            "cocluster",
            dict(n_clusters=10, n_col_clusters=10),
            None,
            {},
            CO_EPS,
            "nmi >= 0.8 x baseline",
        ),
    ]


# Fresh blind check of the conservative public-sample recommendation (the pessimistic end of the
# interval, made the planner's default for a public sample AFTER the design and held-out results
# were seen, so those sets are no longer blind for it). Fixed and committed before it was run.
# * scikit-learn's diabetes table (442 x 10, k-means, k = 3 declared; no class labels, so the
#   public sample is a seeded random 10 % of all rows, stratified on nothing, and the twins get
#   no labels). Its documentation states each column is mean-centred and scaled to unit sum of
#   squares, i.e. x = z / sqrt(442) for a standard score z; the declared box [-0.25, 0.25] is
#   |z| <= 5.26 standard deviations, a rounded bound stated before looking at the records
#   (records outside it would be clipped by the estimators, as any record outside a box is).
#   Relative SSE needs no labels (against non-private k-means with k = 3).
# * Yale B with 5 subjects used neither by the default view (9, 11, 18, 22, 28) nor by the
#   held-out one (2, 7, 15, 26, 34): a seeded draw (numpy default_rng(2024)) of 5 of the other 28,
#   20 % public as before.
# * digits classes 5..9 only, as a count matrix, k = 5 row and 5 column clusters. The held-out
#   check used all ten digits (10 x 10); these rows are a subset of its rows, so this set is
#   NOT new data: it is a different task (five classes, a 5 x 5 block structure, a public
#   sample drawn from these classes only, so other twins and another baseline NMI).
FRESH_SUBJECTS = [3, 6, 12, 23, 36]
FRESH_DIGITS = (5, 6, 7, 8, 9)


def fresh_configs():
    """Data sets used neither to design the public-sample rule nor for the held-out check,
    run once after the conservative sample recommendation was committed (see above)."""
    return [
        (
            "diabetes",
            "kmeans",
            dict(n_clusters=3, bounds=(-0.25, 0.25)),
            None,
            {},
            KM_EPS,
            "relative_sse <= 1.2",
        ),
        (
            "yaleb5_fresh",
            "subspace",
            dict(n_clusters=5, subspace_dim=9),
            None,
            {"gibbs": {"n_iter": 50}},
            SUB_EPS,
            "wasserstein <= 5.0",
        ),
        (
            "digits59_counts",
            "cocluster",
            dict(n_clusters=5, n_col_clusters=5),
            None,
            {},
            CO_EPS,
            "nmi >= 0.8 x baseline",
        ),
    ]


def load(name):
    """The data set of a configuration (held-out views built here)."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        b = load_breast_cancer()
        return SimpleNamespace(X=b.data, labels=b.target, shape=b.data.shape, truth=None)
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        X = load_diabetes().data
        return SimpleNamespace(X=X, labels=None, shape=X.shape, truth=None)
    if name == "yaleb5_fresh":
        return get_dataset("yaleb5", subjects=FRESH_SUBJECTS)
    if name == "digits59_counts":
        import scipy.sparse as sp

        d = get_dataset("digits")
        keep = np.isin(d.labels, FRESH_DIGITS)
        X = sp.csr_matrix(np.asarray(d.X, dtype=np.float64)[keep])
        return SimpleNamespace(X=X, labels=np.asarray(d.labels)[keep], shape=X.shape, truth=None)
    if name == "yaleb5_other":
        return get_dataset("yaleb5", subjects=HELDOUT_SUBJECTS)
    if name == "digits_counts":
        import scipy.sparse as sp

        d = get_dataset("digits")
        X = sp.csr_matrix(np.asarray(d.X, dtype=np.float64))
        return SimpleNamespace(X=X, labels=d.labels, shape=X.shape, truth=None)
    return get_dataset(name)


def sample_split(labels, fraction, seed=2024):
    """Seeded random split: ``fraction`` of every class is public (rounded), the rest private."""
    rng = np.random.default_rng(seed)
    pub = np.concatenate(
        [
            rng.permutation(np.flatnonzero(labels == c))[
                : max(1, int(round(fraction * np.sum(labels == c))))
            ]
            for c in np.unique(labels)
        ]
    )
    pub = np.sort(pub)
    return pub, np.setdiff1d(np.arange(len(labels)), pub)


def real_baseline(family, ds, seed, n_clusters=None):
    """Non-private reference on the real (private) records; k-means uses the declared k
    (``n_clusters``, default: the number of classes)."""
    X = ds.X
    if family == "kmeans":
        k = ds_k(ds) if n_clusters is None else n_clusters
        km = KMeans(k, n_init=3, random_state=seed).fit(X)
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


WHY = """How to read it. Three parts. (1) Public facts only: the predicted interval is taken
over an ensemble of twins whose difficulty is drawn from the planner's structural prior (the
papers' experimental settings widened by a factor of two; ``PRIORS`` in the planner), fixed
from the papers before this run and NOT tuned on these data sets (doing so now, after seeing the
cells, would fit the test set). (2) A public sample, every family (design data sets): the owner
publishes a labelled random sample; twins are bootstraps of it. (3) The same public-sample rule
on held-out data sets, run once after the rule was frozen. The relative width is reported beside
the coverage so that a trivially wide interval shows.

Status against the targets (>= 80 % of cells inside, >= 80 % of recommendations reaching the
target on the real data), from the run of 2026-11-27: the first with DPLloyd's new defaults
(Su et al. 2017 budget split, one iteration where the budget is small, k' <= k distinct centres)
and with the LSH coreset (``lsh_kmeans``) and Balcan et al. (``balcan_kmeans``) as k-means
candidates, so the k-means data sets have 35 cells each instead of 21. The fresh sets had been
run once before (2026-11-25); this second run is blind for the two new estimators and for
DPLloyd's new defaults (tuned on Letter and Yale B, never on these tables), not for the rule.
* Public facts only: NOT met (42 / 106 cells, 40 %: k-means 33 / 84, subspace 4 / 12,
  co-clustering 5 / 10; 0 / 1 primary recommendation reached). Fundamentally underdetermined:
  utility depends on geometry (within-cluster spread, subspace angles, block signal) that n, d,
  k and the box do not state.
* Public sample, design data sets: cells met (94 / 106, 89 %: k-means 81 / 84, subspace
  11 / 12, co-clustering 2 / 10 -- co-clustering misses); primary-target recommendations 5 / 5
  at the pessimistic end (right decisions 14 / 17); the median rule gave 3 / 8.
* Public sample, held-out check (blind for the twins' rule, not for the recommendation rule):
  48 / 52 cells (92 %: k-means 32 / 35, subspace 11 / 12, co-clustering 5 / 5); primary-target
  recommendations 1 / 1 (right decisions 7 / 9); median rule 0 / 2.
* Public sample, fresh check (diabetes, Yale B subjects 3, 6, 12, 23, 36, digits 5..9 as
  counts): 50 / 52 cells (96 %: k-means 35 / 35, subspace 10 / 12, co-clustering 5 / 5);
  primary-target recommendations 3 / 3 (right decisions 7 / 9); median rule 5 / 6.
* On the fixed grid of targets (``TARGET_GRID``, the table "Recommendations on a fixed grid of
  targets"): public facts 11 / 15 reaching (73 %; right decisions 26 / 61), NOT met; public
  sample, design sets 31 / 32 (97 %; right 49 / 61; median rule 27 / 42), held-out 11 / 11
  (100 %; right 28 / 31; median rule 7 / 14), fresh 19 / 19 (100 %; right 28 / 31; median rule
  18 / 23). The 80 % target for recommendations is met with a public sample in every mode.
* The price of the pessimistic end is abstention: with a public sample it recommends nothing in
  11 design, 3 held-out and 3 fresh cases that the real data reach somewhere on the grid (the
  column "none recommended, reachable on the grid" of that table).

The explanations below were written for the previous run (before the two new k-means
estimators and DPLloyd's new defaults; it is in the history of this file's results); the
mechanisms they describe are unchanged, but their example numbers and counts are that run's.
The current cells and recommendations are the tables of this report.

Why the grid recommendations miss (pessimistic end, public sample).
* Recommended but not reached: 1 of 30 in the three sample modes, cstr DP-tauCC, NMI >= 0.5 x
  baseline at epsilon 1 (real 0.30 against the real threshold 0.31): the twin's baseline NMI is
  0.11 against 0.62 on the private rows, so the relative threshold on the twin is 0.05 (the
  vocabulary gap, below); the twin, not the rule, is at fault.
* Nothing recommended though the real data reach the target (design 11, held-out 2, fresh 2):
  the interval's pessimistic end stays above the target at every grid epsilon from some point
  on, while the real median (inside the interval) is below it. Iris (6: CKM <= 1.2 and <= 1.5,
  improved DPLloyd <= 1.2 and <= 1.5, DPLloyd <= 2 and <= 3): q90 at epsilon 50 is 1.61 (CKM),
  1.71 (improved), 3.11 (DPLloyd) -- with 15 public records the twins' trials spread widely --
  against real 1.20, 1.12, 1.85. Digits improved DPLloyd <= 1.5: q90 1.56 at 50, real 1.32.
  Yale B Gibbs <= 7 on all three views: q90 at 1000 is 7.15 / 7.44 / 7.35 (design / held-out /
  fresh) against real 6.55 / 6.29 / 6.27 (the short Gibbs chains on the twins vary widely).
  Diabetes DPLloyd <= 1.2 (fresh): q90 1.37 at 20 and 1.48 at 50 against real 1.15 and 1.11.
  classic3 (both targets) and wine / breast cancer CKM <= 3: as under the median rule (the
  twin's baseline gap; a real curve that is not monotone in epsilon), below.
* Under the earlier median rule (kept for comparison): 9 design and 2 held-out recommended-but-
  missed; every k-means one was INSIDE its interval with the real median above the twins'
  median (41 of 56 design and 19 of 21 held-out k-means cells), so the median rule landed just
  above the target (e.g. 1.52, 1.53, 1.60 against 1.5; 3.07 and 3.23 against 3). The fresh
  sets show the same (diabetes: all 4 median-rule misses are one grid step early, e.g.
  improved DPLloyd <= 1.5 at 5, real 1.504). The bootstrap twins are optimistic at their median
  on these tables (plausibly because a twin repeats 15-180 public records about ten times each,
  a tighter structure than the private rows; not tested).
* Public sample, co-clustering (cstr, both targets, epsilon 1): the twin's baseline NMI is
  0.11 against 0.62 on the private rows (the vocabulary gap above), so the relative thresholds
  on the twin are 0.09 / 0.05 against 0.50 / 0.31 on the real data; the real NMI 0.30 misses
  both. classic3 gets no recommendation though the real data reach both targets (at 10 and 3):
  the same gap the other way round. Twin, not real data, is at fault in all four.
* Public sample, no recommendation though the real data reach the target (3 design, 1
  held-out): wine CKM, relative SSE <= 3: the real curve is not monotone (2.66 at epsilon 0.5,
  4.36 at 1, 2.25-2.26 at 2-5, 3.52-6.8 at 10-50), nor is the twins' median, and the planner
  recommends only an epsilon from which every larger grid point reaches the target; breast
  cancer CKM <= 3: the same, the real median is 2.45-3.22 and the twins' 2.93-3.26 from epsilon
  2 on, crossing 3 both ways.
* Public facts only: 5 recommended-but-missed, all where the cell is OUTSIDE the interval --
  wine CKM at epsilon 10 (twin 1.43 [1.20, 1.78], real 3.37: the real CKM curve on wine worsens
  above epsilon 5, which no Gaussian-mixture twin shows), Yale B Gibbs at 100 (twin 2.65, real
  7.66) and SuLQ at 1000 (twin 4.79, real 7.47): the union-of-subspaces twin is far easier than
  the faces (baseline d_W 0.8 against 4.9). 18 no-recommendation-but-reachable cases: the
  conservative rule on k-means twins that are harder than the real tables (real below the
  interval in 44 cells), and on co-clustering, where the intervals are wide (q10 of the NMI
  0.03-0.40 at epsilon 3 and 10) and the conservative rule, judged twin by twin, finds no
  epsilon.

Why the public-facts arm misses, per family (every cell is listed below).
* k-means (iris, wine, digits; 56 cells, 8 inside): the real relative SSE lies BELOW the
  interval in 44 cells. The Gaussian-mixture generator of Schellekens et al. (SPARS 2019),
  even at half its separation and at any box fill of the prior, has a small within-cluster SSE
  relative to the noise the mechanisms add; real tables have overlapping, anisotropic classes
  and a large baseline SSE, so the same noise costs them less. The public facts (n, d, k, box)
  do not say how large the baseline SSE is; that is exactly what a public sample supplies.
* subspace (Yale B, 12 cells, 4 inside): the real Wasserstein distance lies ABOVE the
  interval at large epsilon: the twin's baseline d_W is ~0.8 against 4.9 on the real faces
  (affine, normalised subspaces with shared directions are outside the union-of-subspaces
  generator of Wang, Wang & Singh, NIPS 2015, at any noise level of the prior), and d_W
  saturates near 8.5 at small epsilon, which makes the intervals there narrow.
* co-clustering (cstr, classic3; 10 cells, 5 inside): at epsilon >= 1 the latent-block twin
  (contrast 2..8) is cleaner than the corpora (cstr's real baseline NMI is 0.65; the twin's
  0.67-0.87), so the twin's NMI rises earlier and higher than the real one; at small epsilon
  both are ~0 and the cells are inside.
Widening the prior is not enough when the generator family does not contain the real data.

Why the public-sample arm misses, per family.
* co-clustering (design: cstr 0 / 5, classic3 2 / 5): at epsilon >= 1 the real NMI is ABOVE
  the interval (cstr 0.30-0.33 against q90 0.22-0.29; classic3 0.35-0.74 against 0.33-0.37), and
  on cstr also at 0.1 and 0.3 around NMI ~0.01. A bootstrap of 10 % of the documents (47 for
  cstr, 389 for classic3) repeats each document ~9 times: the twin's NON-PRIVATE tau
  co-clustering already reaches only NMI 0.11 (cstr) and 0.37 (classic3) against 0.62 and 0.92
  on the private rows, because few distinct documents cover few words and the tau criterion
  (Battaglia & Pensa, SDM 2025) is unstable on repeated rows (a plain bootstrap of ALL 475
  cstr documents gives 0.22-0.32 against 0.59-0.65 on the documents themselves); the Poisson
  smoothed arm does not restore the missing vocabulary. The twin is harder than the data, so
  the relative target "0.8 x baseline" is judged against a far too low twin baseline: cstr
  DP-tauCC is recommended at epsilon 1 and reaches NMI 0.30 against the real threshold 0.50
  (the one recommendation miss). The held-out digits counts (64 columns, every value seen in a
  small sample) have no such vocabulary gap and are covered 5 / 5. A larger public fraction or
  a sample-size correction of the baseline would be needed; neither was tried here, since it
  would be designed on these cells.
* subspace: 1 miss of 12 on each Yale B view (design: sample-and-aggregate at epsilon 1000,
  real 8.22 just below q10 8.23; held-out: Gibbs at 1000, real 6.29 below q10 6.33). The twin's
  reference, the per-label subspaces of ~13 public faces per subject, is close to the private
  class subspaces but fits those few faces exactly, and at the largest epsilon the private
  runs do slightly better than on the twin. The intervals are narrow (d_W saturates near 8.5),
  so small biases show.
* k-means: held-out breast cancer improved DPLloyd at epsilon 20 and 50 (real 1.036 and 1.016
  against q90 1.032 and 1.015): near the non-private optimum the interval is only 1-3 %
  wide, and 57 public records repeated ~9 times make the twin's noisy Lloyd land slightly
  closer to its own optimum than on the 512 private records. Design k-means: none.

The public-sample rule, stated honestly: the envelope (plain and smoothed bootstraps, interval
= envelope of both) was first suggested by an earlier run on the three k-means design sets
(plain bootstrap alone 62 %, smoothed alone 45 %), so those cells are not blind. For the other
families it was fixed, and written in the planner (``SAMPLE_RULE``), from synthetic checks only
(benchmarks/planner/sample_synthetic.py: the narrowest of plain / smoothed / envelope holding
>= 80 % of synthetic cells, else the envelope; no single arm held 80 % in any family, so every
family uses the envelope), committed before the real runs; the held-out sets were run once
after that. It has no fitted constant (the bandwidth is the normal-reference rule of Silverman
1986, Eq. 4.14; the count kernel is Poisson). Recommendations with a sample first used the
median rule; after the design and held-out results above they use the pessimistic end of the
interval (the calibrated object is the interval, not its median), and the fresh sets, fixed and
committed before they were run, are the only blind test of that choice."""


FAMILY = {
    "iris": "kmeans",
    "wine": "kmeans",
    "digits": "kmeans",
    "yaleb5": "subspace",
    "cstr": "cocluster",
    "classic3": "cocluster",
    "breast_cancer": "kmeans",
    "yaleb5_other": "subspace",
    "digits_counts": "cocluster",
    "diabetes": "kmeans",
    "yaleb5_fresh": "subspace",
    "digits59_counts": "cocluster",
}


def sample_sections():
    """Report lines of the public-sample arm (design data sets) and of the held-out check."""
    out = []
    syn_path = RESULTS / "sample_synthetic.json"
    syn = json.loads(syn_path.read_text())["summary"] if syn_path.exists() else None
    for fname, title, intro in (
        (
            "calibration_sample.json",
            "With a public sample, every family (design data sets)",
            "The owner publishes a seeded random 10 % of every class WITH its labels (20 % for "
            "Yale B: a 9-dimensional class subspace needs >= 9 public records per class, and "
            "10 % of 64 images is 6); the private releases run on the rest. Same estimators, "
            "grids and targets; 16 bootstrap twins of the sample, 8 plain and 8 smoothed, the "
            "interval the envelope of the two arms' 10-90 % intervals (``SAMPLE_RULE`` in the "
            "planner, one rule for every family, frozen from synthetic checks before this run). "
            "The k-means sets were used when the envelope was first designed (an earlier run "
            "on another split of these sets suggested it), so their cells are not blind.",
        ),
        (
            "calibration_heldout.json",
            "Held-out check (public sample; blind for the twins' rule, "
            "not for the recommendation rule)",
            "Data sets not used to design the rule, run once after the rule was frozen and "
            "committed: scikit-learn's breast cancer (k-means, k = 2, the box of the Min/Max "
            "table of its documentation widened by 1 % and rounded outward), Yale B with 5 "
            "other subjects (2, 7, 15, 26, 34; 20 % public), digits as a count matrix "
            "(co-clustering, pixel values 0..16 as counts, 10 x 10 co-clusters). Same split, "
            "rule, grids and targets as above. Blind for the twins' rule (the envelope); NOT "
            "blind for the conservative recommendation, which was made the default for a "
            "public sample after these results were seen.",
        ),
        (
            "calibration_fresh.json",
            "Fresh blind check of the conservative sample recommendation",
            "The only blind test of the recommendation rule now used with a public sample "
            "(the pessimistic end of the interval, q90 for <=, q10 for >=): data sets defined "
            "and committed before they were run, and run once: scikit-learn's diabetes table "
            "(k-means, k = 3 declared; no class labels, so the 10 % public sample is stratified "
            "on nothing and relative SSE is against non-private k-means with k = 3; box "
            "[-0.25, 0.25]: its documentation scales every column to unit sum of squares, so "
            "this is 5.26 standard deviations; checked after the run: every record lies inside, max |x| "
            "0.199, nothing clipped), Yale B with 5 subjects used neither in the "
            "design nor in the held-out check (3, 6, 12, 23, 36; 20 % public), and digits "
            "classes 5..9 as a count matrix (5 x 5 co-clusters). The digits rows are a subset "
            "of the held-out digits rows: a different task (five classes, another block "
            "structure, a sample of these classes only), not new data. Same split rule, "
            "twins, grids and targets as above.",
        ),
    ):
        path = RESULTS / fname
        if not path.exists():
            continue
        sm = json.loads(path.read_text())
        ss = sm["summary"]
        out += ["", f"## {title}", "", intro, ""]
        if syn and fname == "calibration_sample.json":
            fam_txt = "; ".join(
                f"{f} plain {_pct(r['plain'])} / smoothed {_pct(r['smoothed'])} / envelope "
                f"{_pct(r['bracket'])} of {r['cells']} cells -> {r['rule']}"
                for f, r in syn.get("per_family", {}).items()
            )
            out.append(
                f"- the rule's synthetic check (benchmarks/planner/sample_synthetic.py, no "
                f"real data): {fam_txt}"
            )
        med = [r for r in sm["recommendations"] if r.get("median_rule_reached") is not None]
        out += [
            f"- cells inside: {ss['inside']} / {ss['cells']} ({_pct(ss['inside_fraction'])})"
            f"; median relative width {ss['median_relative_width']:.2f}",
            f"- primary targets, recommendations reaching the target (pessimistic end): "
            f"{ss['reached']} / {ss['recommendations']} ({_pct(ss['reached_fraction'])}); "
            f"right decisions {ss['right_decisions']} / {ss['decisions']}; median rule "
            f"(the earlier default): {sum(r['median_rule_reached'] for r in med)} / "
            f"{len(med)} reaching; seconds {ss['seconds']}",
            "",
            "| family | data set | cells inside | real better than the interval | real worse |",
            "|---|---|---|---|---|",
        ]
        for ds in dict.fromkeys(c["dataset"] for c in sm["cells"]):
            part = [c for c in sm["cells"] if c["dataset"] == ds]
            lower = part[0]["metric"] != "nmi"
            better = sum(
                (c["real_median"] < c["pred_q10"]) if lower else (c["real_median"] > c["pred_q90"])
                for c in part
            )
            worse = len(part) - better - sum(c["inside"] for c in part)
            out.append(
                f"| {FAMILY.get(ds, '-')} | {ds} | {sum(c['inside'] for c in part)} / "
                f"{len(part)} | {better} | {worse} |"
            )
        out += [
            "",
            "| dataset | algorithm | epsilon | predicted median [q10, q90] | real median "
            "(private part) | inside |",
            "|---|---|---|---|---|---|",
        ]
        for c in sm["cells"]:
            out.append(
                f"| {c['dataset']} | {c['algorithm']} | {c['epsilon']:g} | "
                f"{c['pred_median']:.3g} [{c['pred_q10']:.3g}, {c['pred_q90']:.3g}] | "
                f"{c['real_median']:.3g} | {'yes' if c['inside'] else '**no**'} |"
            )
        out += [
            "",
            "| dataset | algorithm | recommended epsilon (pessimistic end) | real "
            "median there | reached | median rule: epsilon, reached | smallest grid epsilon "
            "reaching it |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in sm["recommendations"]:
            e = "none" if r["recommended_epsilon"] is None else f"{r['recommended_epsilon']:g}"
            v = "-" if r["real_median_at_it"] is None else f"{r['real_median_at_it']:.3g}"
            rr = "-" if r["reached"] is None else ("yes" if r["reached"] else "**no**")
            me = r.get("median_rule_epsilon")
            mr = r.get("median_rule_reached")
            mt = (
                f"{'none' if me is None else f'{me:g}'}, "
                f"{'-' if mr is None else ('yes' if mr else '**no**')}"
            )
            sm_e = r["real_smallest_reaching"]
            out.append(
                f"| {r['dataset']} | {r['algorithm']} | {e} | {v} | {rr} | {mt} | "
                f"{'none' if sm_e is None else f'{sm_e:g}'} |"
            )
    return out


def width(c):
    """Relative width of a predicted interval: (q90 - q10) / |median|."""
    m = abs(c["pred_median"])
    return (c["pred_q90"] - c["pred_q10"]) / m if m > 0 else float("inf")


def stats(cells, recs):
    for r in recs:  # the first version's JSON lacks it: from its cells
        if "real_smallest_reaching" not in r:
            ok = [
                c["epsilon"]
                for c in cells
                if (c["dataset"], c["algorithm"]) == (r["dataset"], r["algorithm"])
                and (
                    c["real_median"] <= r["real_threshold"]
                    if "<=" in r["target"]
                    else c["real_median"] >= r["real_threshold"]
                )
            ]
            r["real_smallest_reaching"] = min(ok) if ok else None
    inside = [c["inside"] for c in cells]
    decided = [r for r in recs if r["reached"] is not None]
    return {
        "cells": len(cells),
        "inside": int(sum(inside)),
        "inside_fraction": float(np.mean(inside)) if inside else None,
        "median_relative_width": float(np.median([width(c) for c in cells])) if cells else None,
        "recommendations": len(decided),
        "reached": int(sum(r["reached"] for r in decided)),
        "reached_fraction": float(np.mean([r["reached"] for r in decided])) if decided else None,
        "no_recommendation": [
            f"{r['dataset']}/{r['algorithm']}" for r in recs if r["reached"] is None
        ],
        # a right decision: the recommended epsilon reaches the target on the real data, or
        # none is recommended and no grid epsilon reaches it on the real data
        "right_decisions": int(
            sum(
                r["reached"]
                if r["reached"] is not None
                else r.get("real_smallest_reaching", 0) is None
                for r in recs
            )
        ),
        "decisions": len(recs),
    }


def meets(op, value, threshold):
    """Does a real median meet ``op threshold``? (NaN: no.)"""
    return bool(value <= threshold if op == "<=" else value >= threshold)


def grid_stats(grecs):
    """Summary of the target-grid recommendations: recommendations reaching the target on the
    real data, and right decisions (the recommended epsilon reaches it, or none is recommended
    and no grid epsilon reaches it on the real data), overall and per family."""

    def one(rs):
        dec = [r for r in rs if r["reached"] is not None]
        return {
            "decisions": len(rs),
            "recommendations": len(dec),
            "reached": int(sum(r["reached"] for r in dec)),
            "reached_fraction": float(np.mean([r["reached"] for r in dec])) if dec else None,
            "right_decisions": int(
                sum(
                    r["reached"]
                    if r["reached"] is not None
                    else r["real_smallest_reaching"] is None
                    for r in rs
                )
            ),
            "missed_reachable": int(
                sum(r["reached"] is None and r["real_smallest_reaching"] is not None for r in rs)
            ),
        }

    out = one(grecs)
    out["per_family"] = {
        f: one([r for r in grecs if r["family"] == f])
        for f in dict.fromkeys(r["family"] for r in grecs)
    }
    return out


GRID_MODES = (
    ("public facts only (ensemble, conservative rule)", "calibration.json"),
    (
        "public sample, design data sets (conservative rule; not blind for it)",
        "calibration_sample.json",
    ),
    (
        "public sample, held-out sets (conservative rule; not blind for it)",
        "calibration_heldout.json",
    ),
    (
        "public sample, FRESH blind sets (conservative rule; its only blind test)",
        "calibration_fresh.json",
    ),
)


def median_rule_view(grecs):
    """The same grid recommendations judged by the median rule (the earlier default with a
    public sample), or None when the run did not record it."""
    if not grecs or any("median_rule_epsilon" not in r for r in grecs):
        return None
    return [
        {**r, "recommended_epsilon": r["median_rule_epsilon"], "reached": r["median_rule_reached"]}
        for r in grecs
    ]


def grid_section(facts_grid=None):
    """Report lines of the fixed target grid: a summary per mode, then every recommendation."""
    modes = []
    for title, fname in GRID_MODES:
        if fname == "calibration.json" and facts_grid is not None:
            modes.append((title, facts_grid))
            continue
        path = RESULTS / fname
        g = json.loads(path.read_text()).get("grid_recommendations") if path.exists() else None
        if g is not None:
            modes.append((title, g))
    if not modes:
        return []
    grid_txt = "; ".join(f"{f}: {', '.join(t)}" for f, t in TARGET_GRID.items())
    out = [
        "",
        "## Recommendations on a fixed grid of targets",
        "",
        "One target per data set decides too few cases, so every (dataset, algorithm) is also "
        "judged against the standard set of targets a user states, per family, fixed before "
        f"this analysis and the same for design and held-out data ({grid_txt}; "
        "``TARGET_GRID`` in calibration.py). The primary targets above are part of the grid. "
        "Recommended epsilon: the planner's default rule, the pessimistic end of the interval "
        "(q90 for <=, q10 for >=) both with the public-facts ensemble and with a public sample "
        "(with a sample it was the median rule until these design and held-out results were "
        "seen; its numbers are kept beside); relative targets on "
        "several twins are judged per twin (the predicted values of a relative target are then "
        "each twin's ratio to its own baseline times the median twin baseline, compared with "
        "the twin threshold), on the same plans and the same real runs as the cells. A right decision: the recommended epsilon reaches the target on the real "
        "data, or none is recommended and no grid epsilon reaches it on the real data.",
        "",
        "| mode | recommendations reaching the target (target >= 80 %) | right decisions | "
        "recommended but not reached | none recommended, reachable on the grid | "
        "k-means: reached, right | subspace: reached, right | co-clustering: reached, "
        "right | median rule (earlier sample default): reached, right |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for title, g in modes:
        s = grid_stats(g)
        fam = []
        for f in ("kmeans", "subspace", "cocluster"):
            p = s["per_family"].get(f)
            fam.append(
                "-"
                if p is None
                else f"{p['reached']} / {p['recommendations']}, {p['right_decisions']} / "
                f"{p['decisions']}"
            )
        mv = median_rule_view(g)
        if mv is None:
            mtxt = "-"
        else:
            m = grid_stats(mv)
            mtxt = (
                f"{m['reached']} / {m['recommendations']} ({_pct(m['reached_fraction'])}), "
                f"{m['right_decisions']} / {m['decisions']}"
            )
        out.append(
            f"| {title} | {s['reached']} / {s['recommendations']} "
            f"({_pct(s['reached_fraction'])}) | {s['right_decisions']} / "
            f"{s['decisions']} ({_pct(s['right_decisions'] / s['decisions'])}) | "
            f"{s['recommendations'] - s['reached']} | {s['missed_reachable']} | "
            + " | ".join(fam)
            + f" | {mtxt} |"
        )
    for title, g in modes:
        out += [
            "",
            f"### {title[0].upper() + title[1:]}",
            "",
            "| dataset | algorithm | target | twin threshold | real threshold | recommended "
            "epsilon | predicted median [q10, q90] there | real median there | reached | "
            "smallest grid epsilon reaching it on the real data | right decision | median "
            "rule: epsilon, reached |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in g:
            e = r["recommended_epsilon"]
            p = r.get("predicted_at_it")
            pt = "-" if p is None else f"{p[0]:.3g} [{p[1]:.3g}, {p[2]:.3g}]"
            v = "-" if r["real_median_at_it"] is None else f"{r['real_median_at_it']:.3g}"
            rr = "-" if r["reached"] is None else ("yes" if r["reached"] else "**no**")
            sm_e = r["real_smallest_reaching"]
            right = r["reached"] if r["reached"] is not None else sm_e is None
            if "median_rule_epsilon" in r:
                me, mr = r["median_rule_epsilon"], r["median_rule_reached"]
                mt = (
                    f"{'none' if me is None else f'{me:g}'}, "
                    f"{'-' if mr is None else ('yes' if mr else '**no**')}"
                )
            else:
                mt = "-"
            out.append(
                f"| {r['dataset']} | {r['algorithm']} | {r['target']} | "
                f"{r['twin_threshold']:.3g} | {r['real_threshold']:.3g} | "
                f"{'none' if e is None else f'{e:g}'} | "
                f"{pt} | {v} | {rr} | {'none' if sm_e is None else f'{sm_e:g}'} | "
                f"{'yes' if right else '**no**'} | {mt} |"
            )
    return out


def _pct(x):
    return "-" if x is None else f"{x:.0%}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4 twins x 1 run, 3 real runs")
    ap.add_argument("--rewrite", action="store_true", help="rewrite the report from the JSON")
    ap.add_argument(
        "--sample",
        action="store_true",
        help="every data set with a public sample: a seeded random 10 %% of every "
        "class (20 %% for Yale B) is published with its labels, the planner "
        "bootstraps it, the private release runs on the rest (writes "
        "calibration_sample.json)",
    )
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="the blind check of the public-sample rule on held-out data sets "
        "(writes calibration_heldout.json)",
    )
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="the fresh blind check of the conservative public-sample "
        "recommendation on data sets used neither for the design nor for the "
        "held-out check (writes calibration_fresh.json)",
    )
    args = ap.parse_args()
    if args.heldout and args.fresh:
        ap.error("--heldout and --fresh are separate runs")
    if args.heldout or args.fresh:
        args.sample = True
    if args.rewrite:
        data = json.loads((RESULTS / "calibration.json").read_text())
        sm = data["summary"]
        write(
            data["cells"],
            data["recommendations"],
            sm["seconds"],
            sm["n_trials_per_twin"],
            sm["n_twins"],
            sm["n_real_trials"],
            data.get("twins"),
            data.get("grid_recommendations"),
        )
        return
    n_trials, n_twins, n_real = (1, 4, 3) if args.quick else (1, 16, 10)
    warnings.simplefilter("ignore")
    cells, recs, grid_recs, timing, twin_info = [], [], [], {}, {}
    with threadpool_limits(1):
        for name, family, kw, algs, settings, eps, target_text in (
            heldout_configs() if args.heldout else fresh_configs() if args.fresh else configs()
        ):
            start = time.perf_counter()
            ds = load(name)
            if args.sample:
                # the owner publishes a seeded random sample of every class WITH its labels;
                # the rest stays private (and is what the private releases run on)
                # (no class labels: stratified on nothing, and the sample has no labels)
                has_labels = ds.labels is not None
                strata = np.asarray(ds.labels) if has_labels else np.zeros(ds.shape[0], int)
                pub, priv = sample_split(strata, SAMPLE_FRACTION[family])
                kw = {
                    **kw,
                    "public_sample": ds.X[pub],
                    "public_labels": ds.labels[pub] if has_labels else None,
                }
                Xp = ds.X[priv]
                truth = None
                if family == "subspace":
                    # the class subspaces of the private records, computed as the registry
                    # computes them for the whole view (per-class top singular vectors)
                    truth = {"subspaces": class_subspaces(Xp, ds.labels[priv], kw["subspace_dim"])}
                ds = SimpleNamespace(
                    X=Xp,
                    labels=ds.labels[priv] if has_labels else None,
                    shape=Xp.shape,
                    truth=truth,
                )
            n, d = (int(s) for s in ds.shape)  # the public shape
            facts = PublicFacts(family, n, d, **kw)
            plan = plan_utility(
                facts,
                epsilons=eps,
                algorithms=algs,
                n_trials=n_trials,
                n_twins=n_twins,
                settings=settings,
                random_state=0,
                prior="papers",
            )
            target = parse_target(target_text)
            rec = plan.recommend(target)  # conservative (prior)
            rec_median = plan.recommend(target, conservative=False)
            print(f"  twins: {plan.twins.round(3).to_dict('list')}")
            metric = target.metric
            # ---- the real private runs, outside the planner ----
            base = real_baseline(family, ds, 0, facts.n_clusters)
            real_thr = target.threshold({k: v for k, v in base.items() if not k.startswith("_")})
            make_all = makers(family)
            names = list(make_all) if algs is None else algs
            seeds = trial_seeds(12345, len(names) * len(eps), n_real)
            real = {}
            for a, alg in enumerate(names):
                for e_i, e in enumerate(eps):
                    vals = []
                    for t in range(n_real):
                        est = make_all[alg](
                            facts, e, int(seeds[a * len(eps) + e_i, t]), **settings.get(alg, {})
                        )
                        try:
                            est.fit(ds.X)
                            vals.append(real_score(family, ds, est, base))
                        except Exception as exc:  # noqa: BLE001 -- reported
                            vals.append(float("nan"))
                            print(f"  {name}/{alg}/{e}: {type(exc).__name__}: {exc}")
                    real[(alg, e)] = (
                        float(np.nanmedian(vals)) if np.any(np.isfinite(vals)) else float("nan")
                    )
                    med, q10, q90 = plan.predicted(alg, e, metric)
                    r = real[(alg, e)]
                    cells.append(
                        {
                            "dataset": name,
                            "algorithm": alg,
                            "epsilon": e,
                            "metric": metric,
                            "pred_median": med,
                            "pred_q10": q10,
                            "pred_q90": q90,
                            "real_median": r,
                            "inside": bool(q10 <= r <= q90),
                        }
                    )

            def ok(r):
                return meets(target.op, r, real_thr)

            for alg, info in rec["per_algorithm"].items():
                e = info["epsilon"]
                e_med = rec_median["per_algorithm"][alg]["epsilon"]
                reachable = [x for x in eps if ok(real[(alg, x)])]
                recs.append(
                    {
                        "dataset": name,
                        "algorithm": alg,
                        "target": str(target),
                        "twin_threshold": rec["threshold"],
                        "real_threshold": real_thr,
                        "recommended_epsilon": e,
                        "real_median_at_it": None if e is None else real[(alg, e)],
                        "reached": None if e is None else ok(real[(alg, e)]),
                        "median_rule_epsilon": e_med,
                        "median_rule_reached": None if e_med is None else ok(real[(alg, e_med)]),
                        "real_smallest_reaching": min(reachable) if reachable else None,
                    }
                )
            # the fixed target grid, judged on the same plan and the same real runs
            public_base = {k: v for k, v in base.items() if not k.startswith("_")}
            for t_text in TARGET_GRID[family]:
                tg = parse_target(t_text)
                rg = plan.recommend(tg)  # the planner's default rule for this mode
                rg_med = plan.recommend(tg, conservative=False)  # the median rule
                thr_g = tg.threshold(public_base)
                for alg, info in rg["per_algorithm"].items():
                    e = info["epsilon"]
                    reachable = [x for x in eps if meets(tg.op, real[(alg, x)], thr_g)]
                    grid_recs.append(
                        {
                            "dataset": name,
                            "family": family,
                            "algorithm": alg,
                            "target": str(tg),
                            "twin_threshold": rg["threshold"],
                            "real_threshold": thr_g,
                            "recommended_epsilon": e,
                            "predicted_at_it": info["predicted"],
                            "real_median_at_it": None if e is None else real[(alg, e)],
                            "reached": None if e is None else meets(tg.op, real[(alg, e)], thr_g),
                            "statistic": rg["statistic"],
                            "median_rule_epsilon": rg_med["per_algorithm"][alg]["epsilon"],
                            "median_rule_reached": None
                            if rg_med["per_algorithm"][alg]["epsilon"] is None
                            else meets(
                                tg.op, real[(alg, rg_med["per_algorithm"][alg]["epsilon"])], thr_g
                            ),
                            "real_smallest_reaching": min(reachable) if reachable else None,
                        }
                    )
            twin_info[name] = plan.twins.to_dict("records")
            timing[name] = round(time.perf_counter() - start, 1)
            print(
                f"{name}: {timing[name]} s; twin baseline {plan.baseline}; real baseline "
                f"{ {k: v for k, v in base.items() if not k.startswith('_')} }"
            )
    if args.sample:
        (
            RESULTS
            / (
                "calibration_heldout.json"
                if args.heldout
                else "calibration_fresh.json"
                if args.fresh
                else "calibration_sample.json"
            )
        ).write_text(
            json.dumps(
                {
                    "summary": {
                        **stats(cells, recs),
                        "seconds": timing,
                        "grid": grid_stats(grid_recs),
                    },
                    "cells": cells,
                    "recommendations": recs,
                    "grid_recommendations": grid_recs,
                },
                indent=1,
                default=float,
            )
        )
        return
    write(cells, recs, timing, n_trials, n_twins, n_real, twin_info, grid_recs)


def write(cells, recs, timing, n_trials, n_twins, n_real, twin_info=None, grid_recs=None):
    summary = {
        **stats(cells, recs),
        "seconds": timing,
        "n_trials_per_twin": n_trials,
        "n_twins": n_twins,
        "n_real_trials": n_real,
    }
    if grid_recs is not None:
        summary["grid"] = grid_stats(grid_recs)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "calibration.json").write_text(
        json.dumps(
            {
                "summary": summary,
                "cells": cells,
                "recommendations": recs,
                "twins": twin_info,
                "grid_recommendations": grid_recs,
            },
            indent=1,
            default=float,
        )
    )
    before_path = RESULTS / "calibration_before.json"
    before = json.loads(before_path.read_text()) if before_path.exists() else None
    b = stats(before["cells"], before["recommendations"]) if before else None
    datasets = list(dict.fromkeys(c["dataset"] for c in cells))
    lines = [
        "# Planner calibration on real data",
        "",
        f"Predicted interval = 10-90 % quantiles over {n_twins} twins x {n_trials} run(s), "
        "each twin's difficulty drawn from the planner's structural prior (the papers' "
        "experimental settings widened by a factor of two; not fitted to these data); real "
        f"median over {n_real} seeded runs of the private estimator on the real data. "
        "Recommendation: smallest epsilon from which the pessimistic end of the interval "
        "(q90 for <=, q10 for >=) reaches the target.",
        "",
        "## Before / after",
        "",
        "| | first version (one fixed twin, 2 x 5 trials, median rule) | structural prior "
        "(16 twins, conservative rule) |",
        "|---|---|---|",
    ]

    def row(label, fb, fa):
        lines.append(f"| {label} | {fb if b else '-'} | {fa} |")

    row(
        "cells with the real median inside [q10, q90] (target >= 80 %)",
        b and f"{b['inside']} / {b['cells']} ({_pct(b['inside_fraction'])})",
        f"{summary['inside']} / {summary['cells']} ({_pct(summary['inside_fraction'])})",
    )
    row(
        "median relative width (q90 - q10) / median",
        b and f"{b['median_relative_width']:.2f}",
        f"{summary['median_relative_width']:.2f}",
    )
    row(
        "recommendations reaching the target on the real data (target >= 80 %)",
        b and f"{b['reached']} / {b['recommendations']} ({_pct(b['reached_fraction'])})",
        f"{summary['reached']} / {summary['recommendations']} "
        f"({_pct(summary['reached_fraction'])})",
    )
    row(
        "no epsilon of the grid recommended",
        b and str(len(b["no_recommendation"])),
        str(len(summary["no_recommendation"])),
    )
    row(
        "right decisions (recommended epsilon reaches the target, or none recommended and none "
        "on the grid reaches it on the real data)",
        b and f"{b['right_decisions']} / {b['decisions']}",
        f"{summary['right_decisions']} / {summary['decisions']}",
    )
    med_dec = [r for r in recs if r.get("median_rule_reached") is not None]
    lines += [
        "",
        f"- same ensemble, median rule instead of the pessimistic end: "
        f"{sum(r['median_rule_reached'] for r in med_dec)} / {len(med_dec)} reach the "
        "target on the real data",
        f"- no recommendation (conservative): {', '.join(summary['no_recommendation']) or 'none'}",
        f"- seconds per dataset (plan + real runs): {timing}",
        "",
        "## Per dataset",
        "",
        "| dataset | cells | inside before | inside after | median rel. width before | "
        "after | real better than the interval | real worse |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ds in datasets:
        part = [c for c in cells if c["dataset"] == ds]
        bpart = [c for c in before["cells"] if c["dataset"] == ds] if before else []
        lower_is_better = part[0]["metric"] != "nmi"
        better = sum(
            (c["real_median"] < c["pred_q10"])
            if lower_is_better
            else (c["real_median"] > c["pred_q90"])
            for c in part
        )
        worse = sum(
            (c["real_median"] > c["pred_q90"])
            if lower_is_better
            else (c["real_median"] < c["pred_q10"])
            for c in part
        )
        bw = f"{np.median([width(c) for c in bpart]):.2f}" if bpart else "-"
        lines.append(
            f"| {ds} | {len(part)} | {sum(c['inside'] for c in bpart) if bpart else '-'}"
            f" | {sum(c['inside'] for c in part)} | {bw} | "
            f"{np.median([width(c) for c in part]):.2f} | {better} | {worse} |"
        )
    lines += sample_sections()
    lines += grid_section(grid_recs)
    lines += [
        "",
        WHY,
        "",
        "## Every cell",
        "",
        "| dataset | algorithm | epsilon | metric | before: median [q10, q90] | after: "
        "median [q10, q90] | rel. width | real median | inside before | inside after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    bmap = (
        {(c["dataset"], c["algorithm"], c["epsilon"]): c for c in before["cells"]} if before else {}
    )
    for c in cells:
        bc = bmap.get((c["dataset"], c["algorithm"], c["epsilon"]))
        bt = f"{bc['pred_median']:.3g} [{bc['pred_q10']:.3g}, {bc['pred_q90']:.3g}]" if bc else "-"
        bi = "-" if bc is None else ("yes" if bc["inside"] else "no")
        lines.append(
            f"| {c['dataset']} | {c['algorithm']} | {c['epsilon']:g} | {c['metric']} | "
            f"{bt} | {c['pred_median']:.3g} [{c['pred_q10']:.3g}, {c['pred_q90']:.3g}] "
            f"| {width(c):.2f} | {c['real_median']:.3g} | {bi} | "
            f"{'yes' if c['inside'] else '**no**'} |"
        )
    lines += [
        "",
        "## Recommendations",
        "",
        "| dataset | algorithm | target | recommended epsilon (pessimistic end) | real "
        "median there | real threshold | reached | median rule: epsilon, reached | "
        "smallest grid epsilon reaching it on the real data | before: epsilon, reached |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    bre = {(r["dataset"], r["algorithm"]): r for r in before["recommendations"]} if before else {}

    def fmt_e(e):
        return "none" if e is None else f"{e:g}"

    def fmt_r(x):
        return "-" if x is None else ("yes" if x else "**no**")

    for r in recs:
        v = "-" if r["real_median_at_it"] is None else f"{r['real_median_at_it']:.3g}"
        br = bre.get((r["dataset"], r["algorithm"]))
        bt = "-" if br is None else f"{fmt_e(br['recommended_epsilon'])}, {fmt_r(br['reached'])}"
        lines.append(
            f"| {r['dataset']} | {r['algorithm']} | {r['target']} | "
            f"{fmt_e(r['recommended_epsilon'])} | {v} | {r['real_threshold']:.3g} | "
            f"{fmt_r(r['reached'])} | {fmt_e(r.get('median_rule_epsilon'))}, "
            f"{fmt_r(r.get('median_rule_reached'))} | "
            f"{fmt_e(r.get('real_smallest_reaching'))} | {bt} |"
        )
    if twin_info:
        lines += [
            "",
            "## The drawn twins (difficulty per twin; k-means fill averaged over features)",
            "",
        ]
        for ds, rows_ in twin_info.items():
            keys = [k for k in rows_[0] if k != "twin" and not k.startswith("baseline_sse")]
            desc = "; ".join(
                f"{k} {min(r[k] for r in rows_):.3g}..{max(r[k] for r in rows_):.3g}"
                for k in keys
                if isinstance(rows_[0][k], (int, float))
            )
            lines.append(f"- {ds}: {desc}")
    (RESULTS / "calibration.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
