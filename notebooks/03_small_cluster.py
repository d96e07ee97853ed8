# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Locating a small cluster privately
#
# Given n points and a number t, find a ball that holds about t of them and is not much larger
# than the smallest such ball, with (ε, δ)-differential privacy. Such a ball is a building
# block for private clustering, for screening outliers before another private analysis, and
# for aggregating the answers of non-private algorithms run on pieces of the data. This
# notebook follows K. Nissim, U. Stemmer and S. Vadhan, *Locating a small cluster privately*,
# PODS 2016 (GoodRadius and GoodCenter, Sec. 3–4; NoisyAVG, App. A; sample-and-aggregate,
# Sec. 6), with privclust's practical variants of those steps (their constants, and the
# measured corrections to GoodCenter, are explained in `docs/algorithms.md`, Sec. 5):
#
# 1. a planted small cluster in the unit square;
# 2. **GoodRadius**: a private radius from counts on a geometric grid of radii;
# 3. **GoodCenter**: randomly shifted boxes, a heavy box, a bounding ball, and re-centring by
#    noisy averages, drawn step by step in 2-D;
# 4. the dashboard's view of the whole 1-cluster algorithm and k balls;
# 5. **outlier screening** with the released ball;
# 6. **sample-and-aggregate** with a 1-cluster aggregator (NSV16 Sec. 6; Nissim,
#    Raskhodnikova & Smith, STOC 2007);
# 7. how often it works: radius ratio and coverage versus ε.

# %%
import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn

# Bokeh, HoloViews and Panel load their JavaScript from this kernel, never from a CDN: the
# notebook works offline and tells no third party that someone is looking at private data.
hv.extension("bokeh", logo=False, inline=True)
pn.extension(throttled=True, inline=True)
from privclust.app.notebook import configure_page

configure_page()   # each plot on its own axes, drawn on a canvas; nothing fetched from elsewhere

import warnings

import privclust.core as pc
from privclust.app.state import DataModel, Lab, SettingsModel
from privclust.app.views import ClustersView, SettingsPanel, plots
from privclust.core import data
from privclust.core.experiments import run_sweep
from privclust.core.onecluster import (
    OneClusterAggregator,
    inside_ball,
    screen_outliers,
    smallest_ball_2approx,
)
from privclust.core.onecluster.good_center import good_center
from privclust.core.onecluster.good_radius import (
    count_profile,
    em_gamma,
    good_radius,
    quality,
    radius_grid,
)
from privclust.core.onecluster.one_cluster import budget_plan, default_grid_step, prepare
from privclust.core.privacy import (
    BudgetAccountant,
    PrivacyWarning,
    as_generator,
    exponential_probabilities,
)

warnings.filterwarnings("ignore", category=PrivacyWarning)
IDENTITY, ORIGIN = np.eye(2), np.zeros(2)          # 2-D data: draw the coordinates as they are

# %% [markdown]
# **Sizes.** The paper has no experiments; privclust's own benchmark of a planted cluster
# (`benchmarks/onecluster/`, results in `benchmarks/results/onecluster/`) uses
# n ∈ {10³, 10⁴}, t = n/2 points in a Gaussian cluster of std 0.01 in [0, 1]^d, d ∈ {2, 10, 50},
# ε ∈ {0.5, 1, 2, 4, 8}, δ = n⁻² and 20 trials. The defaults use n = 5000, d = 2 and 3 trials.

# %%
# ======================================================================================
# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set
# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.
# ======================================================================================
PAPER_SIZES = False
N = 10_000 if PAPER_SIZES else 5_000
T = N // 2                                      # t: points the ball should hold
DELTA = 1.0 / N ** 2
N_TRIALS = 20 if PAPER_SIZES else 3
EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0]
DIMS = [2, 10, 50] if PAPER_SIZES else [2]
N_AGG = 50_000                                  # records for sample-and-aggregate

# %% [markdown]
# ## 1. A small cluster in the unit square
#
# `make_planted_ball` puts t points in a tight Gaussian cluster and spreads the others
# uniformly over [0, 1]²; coordinates live on a public grid of step 2⁻¹⁶. The **public** inputs
# of every private algorithm below are the box [0, 1]², the grid step and t. Black: the
# smallest ball centred at a data point that holds t points (a non-private 2-approximation of
# the optimum, r_opt, used only to evaluate).

# %%
ds = data.make_planted_ball(n_samples=N, n_features=2, n_inliers=T, std=0.01, random_state=0)
X = ds.X
BOUNDS = (0.0, 1.0)
LO, HI = np.zeros(2), np.ones(2)
STEP = default_grid_step(LO, HI)
opt_center, r_opt = smallest_ball_2approx(X, T)


def scene(title, labels=None):
    return (plots.points(X, ds.labels if labels is None else labels, IDENTITY, ORIGIN, title)
            .opts(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), width=400, height=400))


pn.panel(scene(f"n = {N:,}, t = {T:,} planted points")
         * plots.balls([opt_center], [r_opt], IDENTITY, ORIGIN, color="black"))

# %% [markdown]
# ## 2. GoodRadius
#
# For each radius r on a geometric grid (from the grid step up to the box diagonal), L(r) is the
# average of the t largest capped counts of points within r of a data point: a smooth version of
# "how many points does the best ball of radius r hold" with sensitivity 2. GoodRadius wants the
# smallest r with L(r) ≈ t. privclust's default variant first tests r = 0 (Laplace), then picks
# a grid radius with the **exponential mechanism** on the quality
# Q(r) = ½ min{L(r) − t + 4Γ, t − L(r/2)} (largest where L crosses t). Move ε: the selection
# probabilities (right) concentrate on the right radius as ε grows. (L is computed on the raw
# data and shown here for teaching; only the selected radius is released.)

# %%
Xp = prepare(X, LO, HI, STEP)                   # clip to the box and round to the grid
GRID = radius_grid((LO, HI), STEP, 2)
L0, L = count_profile(Xp, T, GRID)


def good_radius_view(epsilon):
    eps_r = budget_plan(epsilon, DELTA, 2)[0]   # GoodRadius's share of the budget
    gamma = em_gamma(eps_r, len(GRID), 0.05)
    Q = quality(L, L0, T, gamma)
    probs = exponential_probabilities(Q, eps_r / 2.0, 1.0)
    profile = (hv.Curve((GRID, L), "radius r", "L(r)").opts(color="black")
               * hv.Scatter((GRID, L), "radius r", "L(r)").opts(size=5)
               * hv.HLine(T).opts(color="crimson", line_dash="dashed")
               * hv.VLine(r_opt).opts(color="grey", line_dash="dotted")).opts(
        logx=True, width=400, height=300, title="counts L(r) (red: t, grey: r_opt)")
    chosen = hv.Bars(list(zip([f"{r:.2g}" for r in GRID], probs, strict=True)), "radius r",
                     "P[selected]").opts(width=480, height=300, xrotation=60,
                                         title=f"exponential mechanism, ε = {epsilon:g} "
                                               f"(share {eps_r:g})", tools=["hover"])
    return profile + chosen


eps_radius = pn.widgets.DiscreteSlider(label="ε (whole 1-cluster run)",
                                       options=[0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0], value=1.0)
pn.Column(eps_radius, pn.bind(good_radius_view, eps_radius))


# %% [markdown]
# **The paper's radius step: RecConcave.** NSV16 choose the radius with RecConcave (Beimel,
# Nissim & Stemmer 2013), an (ε, δ)-DP recursion for quasi-concave qualities whose error grows
# only like 8^{log* T} with the number T of radii (`good_radius(..., variant="rec_concave",
# delta=...)`). Its guarantee needs the promise Γ inside Q to be
# 8^{log* T} · 36 log* T / (αε) · ln(12 log* T / (βδ)) (per-mechanism ε and δ, α = ½), and
# GoodRadius is only useful when t is well above 2Γ. The table compares Γ of the three variants
# with t at this notebook's sizes.

# %%
from privclust.core.onecluster.good_radius import at_gamma
from privclust.core.onecluster.rec_concave import budget_split, radius_domain, rec_concave_promise

eps_r = budget_plan(1.0, DELTA, 2)[0]             # GoodRadius's share of eps = 1
T_RC = len(radius_domain((LO, HI), STEP, 2, 1024))
eps_m, delta_m, depth = budget_split(eps_r, DELTA, T_RC)
gammas = [em_gamma(eps_r, len(GRID), 0.05), at_gamma(eps_r, len(GRID), 0.05),
          rec_concave_promise(T_RC, eps_m, delta_m, 0.05)]
pd.DataFrame({"variant": ["em_geometric", "above_threshold", "rec_concave"],
              "radii": [len(GRID), len(GRID), T_RC],
              "Gamma": [f"{g:.3g}" for g in gammas], "t": T})

# %% [markdown]
# Measured (`benchmarks/onecluster/rec_concave_n.py`: planted ball in [0, 1]², t = n/2 points
# of std 0.01, GoodRadius ε = 1, δ = 1/n², 20 trials per n; a radius is *useful* when
# 0 < r ≤ 4 r₂ and a ball of radius r around a data point holds ≥ 0.9 t points):
#
# | variant | Γ (n = 4000) | n = 250 | 500 | 1000 | 2000 | 4000 | 8000 (5 trials) |
# |---|---|---|---|---|---|---|---|
# | em_geometric | 24.5 | 0.95 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 |
# | above_threshold | 52.6 | 0.00 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 |
# | rec_concave, the paper's promise | 2.3e8 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 |
# | rec_concave, promise = 2 x its stability threshold | 535 | 0.00 | 0.00 | 0.00 | 0.00 | 0.45 | 1.00 |
#
# Smallest tested n from which at least 90 % of the radii were useful: 250 for `em_geometric`,
# 500 for `above_threshold`, none up to 8000 for `rec_concave` with the paper's promise (t ≥ 2 Γ
# would take n of about 1e9), and 8000 with the promise set to twice the stability threshold
# (which has no utility theorem; privacy does not depend on the promise).
#
# With the paper's promise the zero-radius test always fires (t − 2Γ < 0), so RecConcave is
# for fidelity only: the default stays `em_geometric`.

# %% [markdown]
# ## 3. GoodCenter, step by step
#
# Given the radius r̂, GoodCenter finds a centre:
# 1. it partitions the space into boxes of side about 3r̂ (randomly shifted) and uses
#    AboveThreshold to find a shift in which some box is heavy, then a **stable histogram** to
#    pick that heavy box privately (left: one shifted partition, box shade = number of points;
#    computed on raw data, for teaching);
# 2. in a random rotation it picks, per axis, an interval holding most of the box's points
#    (exponential mechanism), which gives a **bounding ball** of radius ρ_C;
# 3. it averages the points of that ball with Gaussian noise (**NoisyAVG**) (middle: the
#    GoodCenter ball and its noisy centre);
# 4. privclust then **re-centres** twice with NoisyAVG over a ball of radius 2r̂ + 3σ√d, which
#    shrinks the released ball (right: the released ball of a full 1-cluster run).

# %%
def good_center_view(epsilon, seed=0):
    rng = as_generator(seed)
    eps_r, (eps_c, delta_c), _ = budget_plan(epsilon, DELTA, 2)
    acc = BudgetAccountant(epsilon, DELTA)
    gr = good_radius(Xp, T, eps_r, (LO, HI), STEP, rng, acc)
    r_hat = gr.radius if gr.radius > 0 else STEP / 2
    gc = good_center(Xp, r_hat, T - 4 * gr.gamma, eps_c, delta_c, (LO, HI), rng, acc)
    side = 3.0 * r_hat / (1.0 - 0.1 ** (1.0 / 2))          # practical box side, d = k = 2
    shift = as_generator(seed + 1).uniform(0, side, size=2)
    edges = [np.arange(-side + s, 1 + side, side) for s in shift]
    counts, ex, ey = np.histogram2d(X[:, 0], X[:, 1], bins=edges)
    boxes = hv.QuadMesh((ex, ey, counts.T), ["x", "y"], "points in box").opts(
        cmap="Blues", colorbar=True, width=400, height=400, line_color="white",
        xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), tools=["hover"],
        title=f"boxes of side {side:.3g} (r̂ = {r_hat:.3g})")
    if gc.center is None:
        middle = scene(f"GoodCenter failed: {gc.failure}")
    else:
        middle = (scene(f"GoodCenter ball ρ_C = {gc.radius:.3g}")
                  * plots.balls([gc.center], [gc.radius], IDENTITY, ORIGIN)
                  * plots.centres([gc.center], IDENTITY, ORIGIN, color="crimson"))
    oc = pc.OneCluster(n_points=T, epsilon=epsilon, delta=DELTA, bounds=BOUNDS,
                       random_state=seed).fit(X)
    right = (scene(f"released ball r = {oc.radius_:.3g} (r_opt = {r_opt:.3g})")
             * plots.balls([oc.center_], [oc.radius_], IDENTITY, ORIGIN)
             * plots.balls([opt_center], [r_opt], IDENTITY, ORIGIN, color="black"))
    return (boxes + middle + right).opts(shared_axes=False)


eps_center = pn.widgets.DiscreteSlider(label="ε", options=[0.5, 1.0, 2.0, 4.0, 8.0], value=1.0)
seed_center = pn.widgets.IntSlider(label="random seed", start=0, end=9, value=0)
pn.Column(pn.Row(eps_center, seed_center), pn.bind(good_center_view, eps_center, seed_center))

# %% [markdown]
# ## 4. The dashboard's view
#
# The dashboard runs the whole algorithm (`OneCluster`) or its k-ball heuristic
# (`PrivateKBalls`: find a ball, remove its points, repeat) on a demo planted-ball dataset.
# Change ε, δ, t or the algorithm in the settings panel; the *Clusters* view draws the released
# ball(s). The *kind* line states the guarantee: (ε, δ)-DP for one record replaced.

# %%
settings = SettingsModel(task="onecluster", algorithm="onecluster", lower=0.0, upper=1.0,
                         delta=DELTA)
settings.algo.n_points = T
lab = Lab(data=DataModel(preset="planted_ball", n_samples=N, n_features=2, noise=0.05,
                         seed=0), settings=settings)
pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), ClustersView(lab=lab))

# %% [markdown]
# ## 5. Outlier screening
#
# NSV16 Sec. 1.1: once a ball is released, keeping only the records inside it is a
# *per-record* rule that uses released values only, so it costs no extra privacy. A later
# private analysis (a mean, a regression) can then work on the screened records, whose spread
# is bounded by the ball rather than by the whole box. (The number of records kept is not
# public: the later analysis must not use it as a public n.) Blue: kept; grey: screened out.

# %%
oc = pc.OneCluster(n_points=T, epsilon=2.0, delta=DELTA, bounds=BOUNDS, random_state=0).fit(X)
kept_mask = inside_ball(X, oc.center_, oc.radius_)     # the screening predicate
kept = screen_outliers(X, oc)                          # = X[kept_mask]
captured = kept_mask[ds.truth["inliers"]].mean()
pn.panel(scene(f"kept {len(kept):,} records; {captured:.0%} of the planted cluster "
               "(evaluation only)", labels=kept_mask.astype(int))
         * plots.balls([oc.center_], [oc.radius_], IDENTITY, ORIGIN))

# %% [markdown]
# ## 6. Sample-and-aggregate with a 1-cluster aggregator
#
# Any non-private statistic f can be made private this way: split the records into m disjoint
# blocks, compute f on each block (here the coordinate-wise median), and release a point where
# most of the m answers agree, found by 1-cluster with t = m/2 on the answers. One record
# changes one block, hence one answer, so the 1-cluster guarantee carries over. It needs many
# blocks: 1-cluster's slack Γ ≈ (16/ε) ln(|grid|/β) must be well below m/2, otherwise it fails
# (the box centre is returned) or lands far off. Move m and ε. Grey: the block answers; red:
# the private aggregate and its ball; black x: the median of all records (non-private).

# %%
big = data.make_planted_ball(n_samples=N_AGG, n_features=2, n_inliers=N_AGG // 5, std=0.02,
                             random_state=1)
median_all = np.median(big.X, axis=0)


def aggregate_view(m, epsilon):
    blocks = np.array_split(as_generator(2).permutation(big.X), m)
    answers = np.array([np.median(b, axis=0) for b in blocks])   # non-private f per block
    agg = OneClusterAggregator()
    center, guarantee = agg(answers, epsilon, 1.0 / m ** 2, BOUNDS, as_generator(3))
    res = agg.result_
    state = "reliable" if res.reliable else ("FAILED" if not res.success else "unreliable")
    view = (hv.Points(answers, ["x", "y"]).opts(color="grey", size=3, alpha=0.5)
            * plots.balls([center], [res.radius], IDENTITY, ORIGIN)
            * plots.centres([center], IDENTITY, ORIGIN, color="crimson")
            * plots.centres([median_all], IDENTITY, ORIGIN, color="black")).opts(
        width=440, height=420, xlim=(0, 1), ylim=(0, 1),
        title=f"m = {m} blocks of {N_AGG // m} records, ε = {epsilon:g}: {state}")
    text = (f"**Aggregate:** ({center[0]:.3f}, {center[1]:.3f}) vs median of all records "
            f"({median_all[0]:.3f}, {median_all[1]:.3f}).\n\n**Guarantee:** "
            f"{guarantee.summary()}")
    return pn.Row(view, pn.pane.Markdown(text, width=320))


m_blocks = pn.widgets.DiscreteSlider(label="blocks m", options=[100, 200, 500, 1000, 2000, 5000],
                                     value=2000)
eps_agg = pn.widgets.DiscreteSlider(label="ε", options=[0.5, 1.0, 3.0, 10.0], value=1.0)
pn.Column(pn.Row(m_blocks, eps_agg), pn.bind(aggregate_view, m_blocks, eps_agg))

# %% [markdown]
# ## 7. How often does it work?
#
# The benchmark protocol of the sizes cell: for each ε and trial, the ratio of the released radius to r_opt
# (1 would be optimal; the theory allows a constant factor) and the fraction of the planted
# cluster inside the released ball (coverage), medians with the inter-quartile band. With
# `PAPER_SIZES` the same runs in d = 10 and 50, where the practical construction degrades
# (see the `OneCluster` docstring).

# %%
frames = []
for d in DIMS:
    dd = data.make_planted_ball(n_samples=N, n_features=d, n_inliers=T, std=0.01,
                                random_state=0)
    r_ref = smallest_ball_2approx(dd.X, T)[1]
    inliers = dd.X[dd.truth["inliers"]]

    def score(est, X, r_ref=r_ref, inliers=inliers):
        inside = np.linalg.norm(inliers - est.center_, axis=1) <= est.radius_
        return {"radius / r_opt": est.radius_ / r_ref, "coverage": inside.mean(),
                "failed": float(not est.success_)}

    def make(eps, seed):
        return pc.OneCluster(n_points=T, epsilon=eps, delta=DELTA, bounds=BOUNDS,
                             random_state=seed)

    frames.append(run_sweep(make, dd.X, EPSILONS, n_trials=N_TRIALS, score=score,
                            random_state=0).assign(method=f"d = {d}"))
sweep = pd.concat(frames, ignore_index=True)
pn.panel((plots.tradeoff(sweep, "radius / r_opt", "released radius / r_opt vs ε").opts(logy=True)
          + plots.tradeoff(sweep, "coverage", "coverage of the planted cluster vs ε")).cols(1))
