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
# # Differentially private subspace clustering
#
# Many data sets (faces under varying light, motion trajectories) lie close to a *union of
# low-dimensional subspaces*. Subspace clustering finds those subspaces; releasing them
# privately is hard because the answer of a non-private solver can jump when one point moves.
# This notebook follows Y. Wang, Y.-X. Wang and A. Singh, *Differentially private subspace
# clustering*, NIPS 2015:
#
# 1. union-of-subspaces data (Sec. 5) and the non-private solvers k-plane, TSC, SSC, LRR;
# 2. **sample-and-aggregate** (Sec. 3, Alg. 1) and why it needs a very large ε;
# 3. the **Gibbs sampler** of the exponential mechanism (Sec. 4) with live diagnostics;
# 4. the **SuLQ** k-plane baseline (App. E);
# 5. a reduced **Fig. 2** (utility versus ε), and Extended Yale B faces when the data are
#    available.
#
# The interactive parts are the dashboard's own views (`privclust.app`), bound to one demo
# session (`Lab`): change a slider and the result re-runs (demo data: no budget is spent).

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
from privclust.app.views import (
    ClustersView,
    GibbsView,
    SettingsPanel,
    SubspacesView,
    TradeoffView,
    plots,
)
from privclust.core import data, metrics
from privclust.core.experiments import run_sweep
from privclust.core.privacy import PrivacyWarning

warnings.filterwarnings("ignore", category=PrivacyWarning)   # shown in the text instead
warnings.filterwarnings("ignore", message="Graph is not fully connected")

# %% [markdown]
# **Sizes.** The defaults are the middle column of the paper's Fig. 2 (n = 1000, d = 10,
# k = 3 subspaces of dimension q = 3, noise σ = 0.1) with short runs. `PAPER_SIZES = True` runs
# the Gibbs sampler for 10 000 iterations and 10 trials per ε as in the paper (hours).

# %%
# ======================================================================================
# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set
# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.
# ======================================================================================
PAPER_SIZES = False
N, D, K, Q, NOISE = 1000, 10, 3, 3, 0.1
N_ITER = 10_000 if PAPER_SIZES else 150          # Gibbs iterations
N_CHAINS = 4 if PAPER_SIZES else 3
N_TRIALS = 10 if PAPER_SIZES else 2              # trials per epsilon in the sweep
EPSILONS = [0.3, 1.0, 3.0, 10.0, 30.0, 100.0] if PAPER_SIZES else [0.3, 3.0, 30.0]
YALE_ITER = 10_000 if PAPER_SIZES else 60

# %% [markdown]
# ## 1. Data: a union of subspaces
#
# Following Sec. 5: draw k random q-dimensional subspaces of R^d, give each point a random
# subspace, a uniformly random direction in it, and Gaussian noise of standard deviation σ
# (`privclust.core.data.make_union_of_subspaces`; records are clipped to the unit ball, which
# is the public bound every private algorithm below relies on). The plot is a 2-D PCA view,
# coloured by the true subspace.

# %%
ds = data.make_union_of_subspaces(n_samples=N, n_features=D, n_clusters=K, subspace_dim=Q,
                                  noise=NOISE, random_state=0)
X, TRUTH = ds.X, ds.truth["subspaces"]
P, mean = plots.projection(X, True)
pn.panel(plots.points(X, ds.labels, P, mean, f"union of {K} subspaces (q={Q}) in R^{D}, PCA view"))

# %% [markdown]
# ## 2. Non-private solvers
#
# k-plane clustering alternates assignments and per-cluster PCA (like k-means with planes).
# TSC, SSC and LRR build an affinity between points (nearest neighbours by angle, sparse or
# low-rank self-representation) and run spectral clustering on it. Each returns the subspaces
# as orthonormal bases. We score them by the **Wasserstein distance** to the true subspaces
# (0 = identical) and the **subspace cost** (mean squared distance of a point to its nearest
# subspace); the dotted line is the cost of the true subspaces (the noise floor).
#
# SSC and LRR also carry their authors' published settings as named presets (Elhamifar & Vidal
# 2013, Sec. 7; Liu et al. 2013): `preset="faces"` for linear subspaces with sparse gross
# errors such as shadows, `preset="motion"` for the affine subspaces of rigid motions; our
# data are linear with dense Gaussian noise, so `SSC_PRESET` stays `None` (try the others).

# %%
import time
from functools import partial

SSC_PRESET = None                               # or "faces" / "motion" (see above)
solvers = {"k-plane": pc.KPlanes, "TSC": pc.ThresholdSubspaceClustering,
           "SSC": partial(pc.SparseSubspaceClustering, preset=SSC_PRESET),
           "LRR": pc.LowRankRepresentation}
rows = []
for name, cls in solvers.items():
    t0 = time.perf_counter()
    est = cls(n_clusters=K, subspace_dim=Q, random_state=0).fit(X[:600] if name == "SSC"
                                                                else X)
    rows.append({"solver": name, "Wasserstein to truth": metrics.wasserstein_subspaces(
                     est.subspaces_, TRUTH),
                 "subspace cost": metrics.subspace_cost(X, est.subspaces_),
                 "seconds": time.perf_counter() - t0})
solver_scores = pd.DataFrame(rows)
truth_cost = metrics.subspace_cost(X, TRUTH)
opts = dict(width=300, height=260, xrotation=30, tools=["hover"])
pn.panel(hv.Bars(solver_scores, "solver", "Wasserstein to truth").opts(
             title="distance to truth", **opts)
         + (hv.Bars(solver_scores, "solver", "subspace cost").opts(title="cost", **opts)
            * hv.HLine(truth_cost).opts(color="black", line_dash="dotted"))
         + hv.Bars(solver_scores, "solver", "seconds").opts(
             title="fit time (SSC on 600 points)", **opts))

# %% [markdown]
# All four recover the subspaces on this easy data. None of them is private: the subspaces
# are a deterministic function of every record.
#
# ## 3. The dashboard, embedded
#
# Below is the dashboard's settings panel and its *Clusters* and *Subspaces* views, bound to a
# demo session on the same kind of data. Pick an algorithm (sample-and-aggregate, Gibbs,
# SuLQ, or a non-private solver) and move **ε**: the private result (left) is redrawn next to
# the non-private k-plane baseline (right). On demo data nothing is charged.

# %%
settings = SettingsModel(task="subspace", algorithm="gibbs", epsilon=10.0)
settings.algo.param.update(n_iter=N_ITER, n_chains=N_CHAINS, record_every=5)
lab = Lab(data=DataModel(preset="union_of_subspaces", n_samples=N, n_features=D,
                         n_clusters=K, subspace_dim=Q, noise=NOISE, seed=0),
          settings=settings)
pn.Row(pn.Column(SettingsPanel(lab=lab), width=340),
       pn.Tabs(("Clusters", ClustersView(lab=lab)), ("Subspaces", SubspacesView(lab=lab)),
               dynamic=True))

# %% [markdown]
# ## 4. Sample-and-aggregate: private, but only at very large ε
#
# Alg. 1 splits the data into m disjoint subsets, runs a non-private solver on each, and
# releases a noisy "centre of attention" of the m answers, with noise calibrated to the
# *smooth sensitivity* of that aggregate (Nissim, Raskhodnikova & Smith 2007). It is
# (ε, δ)-DP. Its noise only becomes small when most subsets agree **and** ε is large:
# privclust warns (`PrivacyWarning`) when ε < 4(D + ln(2/δ))/√m, i.e. when the noise is of the
# order of the whole output space. Move ε: the released subspaces are the coloured lines
# through the origin, the points are coloured by their true subspace, and the title gives the
# Wasserstein distance to the truth.

# %%
DELTA = 1.0 / (N * np.log(N))          # delta = 1/(n ln n), as in Fig. 2


def sample_aggregate_view(epsilon, solver):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        est = pc.SampleAggregateSubspaceClustering(
            n_clusters=K, subspace_dim=Q, epsilon=epsilon, delta=DELTA, solver=solver,
            random_state=0).fit(X)
    w = metrics.wasserstein_subspaces(est.subspaces_, TRUTH)
    notes = [str(c.message) for c in caught if issubclass(c.category, PrivacyWarning)]
    plot = (plots.points(X, ds.labels, P, mean, "") * plots.directions(est.subspaces_, P)).opts(
        title=f"sample-and-aggregate ({solver}), ε={epsilon:g}: Wasserstein {w:.2f}")
    text = f"**Guarantee:** {est.privacy_.summary()}"
    if notes:
        text += "\n\n**Warning:** " + notes[0]
    return pn.Row(plot, pn.pane.Markdown(text, width=380))


sa_eps = pn.widgets.DiscreteSlider(label="ε", options=[0.1, 1.0, 10.0, 100.0, 1000.0],
                                   value=10.0)
sa_solver = pn.widgets.RadioButtonGroup(label="solver", options=["tsc", "kplanes", "lrr"],
                                        value="tsc")
pn.Column(pn.Row(sa_eps, sa_solver), pn.bind(sample_aggregate_view, sa_eps, sa_solver))

# %% [markdown]
# ## 5. The Gibbs sampler, live
#
# Sec. 4 samples subspaces from the exponential mechanism p(U, z) ∝ exp(−(ε/2) Σᵢ d²(xᵢ, S_zᵢ))
# with a Gibbs sampler: labels given subspaces (a softmax, sampled by Gumbel-max), subspaces
# given labels (matrix Bingham draws). An *exact* sample is ε-DP; the chain only reaches that
# distribution in the limit, so privclust labels the guarantee **asymptotic**. Starting it
# from a non-private SSC/LRR solution (as the paper does) voids the guarantee: privclust then
# labels the result *not private*.
#
# The dashboard's Gibbs view runs several chains in a separate process and streams their
# traces: cost, the test statistic of App. D (→ 0 when a chain mixes) and the distance to the
# non-private baseline; R-hat near 1 means the chains agree. Press **Start sampler** to run it
# again (the cell below runs it once so the page opens with traces). Only one chain, chosen
# independently of the data, is released.

# %%
lab.settings.algorithm = "gibbs"           # in case it was changed above
gibbs_view = GibbsView(lab=lab)
if gibbs_view.start():                    # what the Start button does
    gibbs_view.runner.join()
    gibbs_view.poll()                     # drain the diagnostics into the live plots
gibbs_view


# %% [markdown]
# ## 6. The SuLQ baseline
#
# App. E's baseline runs k-plane clustering but releases each iteration's per-cluster
# covariance matrices with Gaussian noise (the SuLQ framework, Blum et al. 2005); the budget is
# split over the iterations. Its noise is a d × d matrix, so it degrades as the ambient
# dimension d grows, while the Gibbs sampler's does not. The plot fits both at one ε for
# several d (same n, k, q, σ).

# %%
def by_dimension(epsilon=10.0, dims=(5, 10, 20, 40)):
    rows = []
    for d in dims:
        dd = data.make_union_of_subspaces(n_samples=N, n_features=d, n_clusters=K,
                                          subspace_dim=Q, noise=NOISE, random_state=1)
        for name, est in [
                ("SuLQ", pc.SuLQSubspaceClustering(n_clusters=K, subspace_dim=Q,
                                                   epsilon=epsilon, delta=DELTA,
                                                   random_state=0)),
                ("Gibbs", pc.GibbsSubspaceClustering(n_clusters=K, subspace_dim=Q,
                                                     epsilon=epsilon, n_iter=N_ITER,
                                                     n_chains=1, random_state=0))]:
            est.fit(dd.X)
            rows.append((d, name, metrics.wasserstein_subspaces(est.subspaces_,
                                                                dd.truth["subspaces"])))
    df = pd.DataFrame(rows, columns=["d", "method", "Wasserstein to truth"])
    return hv.Overlay([hv.Curve(g, "d", "Wasserstein to truth", label=m)
                       * hv.Scatter(g, "d", "Wasserstein to truth")
                       for m, g in df.groupby("method")]).opts(
        width=520, height=320, legend_position="top_left", show_grid=True,
        title=f"distance to truth vs ambient dimension d (ε = {epsilon:g})")


pn.panel(by_dimension())

# %% [markdown]
# ## 7. A reduced Fig. 2: utility versus ε
#
# For each ε and trial we fit sample-and-aggregate (TSC), the Gibbs sampler and SuLQ, and
# record the k-means-style subspace cost and the Wasserstein distance to the truth
# (`privclust.core.experiments.run_sweep`; medians with the inter-quartile band, drawn with the
# dashboard's trade-off plot). The non-private k-plane cost is the dotted line. Expect what the
# paper reports: sample-and-aggregate is poor unless ε is very large; Gibbs and SuLQ are
# reasonable.

# %%
METHODS = {
    "sample-and-aggregate (TSC)": lambda eps, seed: pc.SampleAggregateSubspaceClustering(
        n_clusters=K, subspace_dim=Q, epsilon=eps, delta=DELTA, solver="tsc",
        random_state=seed),
    "Gibbs": lambda eps, seed: pc.GibbsSubspaceClustering(
        n_clusters=K, subspace_dim=Q, epsilon=eps, n_iter=N_ITER, n_chains=1,
        random_state=seed),
    "SuLQ": lambda eps, seed: pc.SuLQSubspaceClustering(
        n_clusters=K, subspace_dim=Q, epsilon=eps, delta=DELTA, random_state=seed),
}


def score(est, X):
    return {"cost": metrics.subspace_cost(X, est.subspaces_),
            "Wasserstein": metrics.wasserstein_subspaces(est.subspaces_, TRUTH)}


def figure2(X, methods, epsilons, n_trials, baseline_cost):
    frames = []
    for name, make in methods.items():
        df = run_sweep(make, X, epsilons, n_trials=n_trials, score=score, random_state=0)
        frames.append(df.assign(method=name))
    sweep = pd.concat(frames, ignore_index=True)
    cost = plots.tradeoff(sweep, "cost", "subspace cost vs ε") * hv.HLine(
        baseline_cost).opts(color="black", line_dash="dotted")
    return (cost + plots.tradeoff(sweep, "Wasserstein", "Wasserstein to truth vs ε")).cols(1)


kplane_cost = metrics.subspace_cost(X, pc.KPlanes(n_clusters=K, subspace_dim=Q,
                                                  random_state=0).fit(X).subspaces_)
pn.panel(figure2(X, METHODS, EPSILONS, N_TRIALS, kplane_cost))

# %% [markdown]
# The dashboard's trade-off view runs the same kind of sweep for the algorithm chosen in the
# settings panel above, in a worker thread with a progress bar (press **Run sweep**).

# %%
TradeoffView(lab=lab)

# %% [markdown]
# ## 8. Extended Yale B faces (when the data are available)
#
# The right column of Fig. 2: 5 individuals of Extended Yale B (n = 320 images), each projected
# onto a 9-dimensional affine subspace by PCA, then to d = 50 by a random Gaussian projection
# (privclust's `yaleb5` dataset). It is read only from `PRIVCLUST_DATA_DIR` (never shipped); without
# it this section says so and does nothing. At the default sizes the sampler runs only
# briefly, so expect the gap to k-plane to be larger than in the paper.

# %%
names = set(data.list_datasets())           # names of the datasets available here
if "yaleb5" in names:
    yale = data.get_dataset("yaleb5")
    Xy = yale.X
    kp = pc.KPlanes(n_clusters=5, subspace_dim=9, random_state=0).fit(Xy)
    rows = [("k-plane (non-private)", metrics.subspace_cost(Xy, kp.subspaces_))]
    for eps in (1.0, 100.0):
        g = pc.GibbsSubspaceClustering(n_clusters=5, subspace_dim=9, epsilon=eps,
                                       n_iter=YALE_ITER, n_chains=1, random_state=0).fit(Xy)
        s = pc.SuLQSubspaceClustering(n_clusters=5, subspace_dim=9, epsilon=eps,
                                      delta=1 / (len(Xy) * np.log(len(Xy))),
                                      random_state=0).fit(Xy)
        rows += [(f"Gibbs ε={eps:g}", metrics.subspace_cost(Xy, g.subspaces_)),
                 (f"SuLQ ε={eps:g}", metrics.subspace_cost(Xy, s.subspaces_))]
    yale_view = hv.Bars(rows, "method", "subspace cost").opts(
        width=620, height=320, xrotation=20, tools=["hover"],
        title=f"Extended Yale B, 5 subjects (n={len(Xy)}, d={Xy.shape[1]})")
else:
    yale_view = pn.pane.Alert("Extended Yale B is not available: set PRIVCLUST_DATA_DIR to "
                              "a folder holding it to run this section.", alert_type="info")
pn.panel(yale_view)
