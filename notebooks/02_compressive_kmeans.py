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
# # Private k-means from a compressed sketch
#
# Compressive k-means squeezes a whole dataset into a short vector, the **sketch**: m random
# generalised moments averaged over the records. The centroids are then decoded from the
# sketch alone. Because the sketch is an average, one record moves it very little, so a little
# noise makes it differentially private, and everything computed from it afterwards is free
# post-processing. This notebook follows V. Schellekens, A. Chatalic, F. Houssiau,
# Y.-A. de Montjoye, L. Jacques and R. Gribonval, *Compressive k-Means with Differential
# Privacy*, SPARS 2019, which builds on N. Keriven, N. Tremblay,
# Y. Traonmilin and R. Gribonval, *Compressive k-means*, ICASSP 2017:
#
# 1. what a sketch is, and why it can be computed in pieces and merged;
# 2. the noise of a private sketch and the **signal-to-noise ratio** (Eq. 4, Fig. 3);
# 3. private sketches with both **signatures** (complex exponential, one-bit quantised),
#    in the dashboard's views;
# 4. CL-OMPR decoding versus **DPLloyd** (D. Su et al., *Differentially private k-means
#    clustering*, CODASPY 2016) and ordinary k-means: a reduced **Fig. 1**;
# 5. the **federated** picture of Fig. 4: several holders sketch locally, the sketches merge;
# 6. a large n on **Dask**.

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

import time
import warnings

from sklearn.cluster import KMeans

import privclust.core as pc
from privclust.app.state import DataModel, Lab, SettingsModel
from privclust.app.views import ClustersView, SettingsPanel, plots
from privclust.core import data, metrics
from privclust.core.experiments import run_sweep
from privclust.core.sketch import Sketch, clompr, gmm_true_sketch, sigma_xi, snr_complex_exp

warnings.filterwarnings("ignore", category=UserWarning, module="sklearn")

# %% [markdown]
# **Sizes.** Fig. 1 of the paper uses k = d = 10 Gaussians, n = 10⁷ records and 50 trials; the
# defaults here are k = d = 5, n = 20 000 and 2 trials, which show the same shapes in seconds.

# %%
# ======================================================================================
# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set
# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.
# ======================================================================================
PAPER_SIZES = False
K, D = (10, 10) if PAPER_SIZES else (5, 5)
N = 10_000_000 if PAPER_SIZES else 20_000
N_TRIALS = 50 if PAPER_SIZES else 2
EPSILONS = np.logspace(-3, 1, 9).tolist() if PAPER_SIZES else [0.01, 0.1, 1.0, 10.0]
N_DASK = 10_000_000 if PAPER_SIZES else 400_000
M = 10 * K * D                                  # sketch size m = 10 k d

# %% [markdown]
# ## 1. Data and public bounds
#
# Fig. 1's data: k Gaussians with identity covariance and centres drawn from
# N(0, (2.5 k^{1/d})² I) (`make_gaussian_mixture`). The decoder searches centroids inside a
# **public box**; we fix it from the generator's public recipe (four standard deviations of the
# centre law), never from the data. The plot is a 2-D PCA view with the true centres (x).

# %%
ds = data.make_gaussian_mixture(n_samples=N, n_features=D, n_clusters=K, random_state=0)
X, CENTERS = ds.X, ds.truth["centers"]
R = 4 * 2.5 * K ** (1 / D)
BOUNDS = (-R, R)                                # public: from the recipe, not from X
P, mean = plots.projection(X, True)
kmeans = KMeans(K, n_init=3, random_state=0).fit(X)   # the non-private reference (SSE)
pn.panel(plots.points(X, ds.labels, P, mean, f"{K} Gaussians in R^{D} (n = {N:,}), PCA view")
         * plots.centres(CENTERS, P, mean, color="black"))

# %% [markdown]
# ## 2. What a sketch is
#
# Draw m random frequencies ωⱼ (public, `make_operator`). The sketch is the average over the
# records of exp(i ωⱼᵀx) (a sampled *characteristic function*) times a public random phase.
# Left: each entry's modulus against its frequency's norm; it decays at high frequencies, and
# the empirical sketch matches the closed form of a Gaussian mixture (`gmm_true_sketch`).
# Right: the sketch is a **sum** over records, so sketching two halves separately and adding
# them gives the sketch of the whole (up to rounding): that is what lets it run on partitions,
# on files streamed from disk, or on many devices.

# %%
ckm = pc.CompressiveKMeans(n_clusters=K, epsilon=1.0, sketch_size=M, bounds=BOUNDS,
                           random_state=0)
op = ckm.make_operator(D)                       # public frequencies and dither
sketch = Sketch.from_array(X, op, random_state=0)
true_z = gmm_true_sketch(op, CENTERS, ds.truth["weights"])
norms = np.linalg.norm(op.frequencies, axis=0)
half1 = Sketch.from_array(X[: N // 2], op, random_state=1)
half2 = Sketch.from_array(X[N // 2:], op, random_state=2)
merged = (half1 + half2).mean
scale = np.sqrt(M)                              # entries are O(1/sqrt(m)); show them O(1)
left = (hv.Scatter((norms, scale * np.abs(sketch.mean)), "‖ω‖", "√m |z|",
                   label="empirical sketch").opts(size=4, alpha=0.6)
        * hv.Scatter((norms, scale * np.abs(true_z)), "‖ω‖", "√m |z|",
                     label="closed form").opts(size=3, marker="x", color="black")).opts(
    width=420, height=320, title=f"a sketch of m = {M} entries", legend_position="top_right")
right = hv.Scatter((scale * sketch.mean.real, scale * merged.real),
                   "sketch of all records (real part)", "sum of the two halves").opts(
    width=340, height=320, size=4, title="sketches merge by addition")
pn.panel(left + right)


# %% [markdown]
# ## 3. Private sketches and the SNR
#
# Theorem 1: adding complex Laplace noise of scale σ_ξ = 2 c_f √(r m) / (√n ε) to each entry
# of the mean sketch makes it ε-DP (one record replaced, n public; c_f bounds the signature,
# r = measurements per record, here r = m). The quality of the decoded centroids is driven by
# the **signal-to-noise ratio** SNR = ‖z‖² / Σⱼ Var(sⱼ) (Eq. 4): it grows with n and ε. Move ε
# and n: the noisy sketch (left) drifts from the clean one, the SNR drops, and the CL-OMPR
# centroids decoded from the noisy sketch alone (right, red) drift from the truth (black).

# %%
def private_sketch_view(epsilon, n):
    sk = Sketch.from_array(X[:n], op, random_state=0)
    noisy = sk.release(epsilon, random_state=1)
    noise = sigma_xi(epsilon, n, M, M, op.c_f)
    snr = snr_complex_exp(true_z, n, M, M, noise)
    centers, _, _ = clompr(noisy, op, K, BOUNDS, n_replicates=1, random_state=0)
    rel = metrics.relative_sse(X, centers, kmeans.cluster_centers_)
    left = (hv.Scatter((scale * noisy.real, scale * noisy.imag), "Re", "Im",
                       label="private sketch").opts(size=3, alpha=0.5, color="crimson")
            * hv.Scatter((scale * sk.mean.real, scale * sk.mean.imag), "Re", "Im",
                         label="clean sketch").opts(size=3, color="black")).opts(
        width=380, height=340, title=f"ε = {epsilon:g}, n = {n:,}: SNR = {snr:.3g}",
        legend_position="top_right")
    right = (plots.points(X[:n], ds.labels[:n], P, mean, "")
             * plots.centres(CENTERS, P, mean, color="black")
             * plots.centres(centers, P, mean, color="crimson", marker="x")).opts(
        title=f"decoded centroids: SSE / SSE(k-means) = {rel:.2f}")
    return left + right


eps_sketch = pn.widgets.DiscreteSlider(label="ε", options=[0.001, 0.003, 0.01, 0.03, 0.1,
                                                          0.3, 1.0, 10.0], value=0.1)
n_sketch = pn.widgets.DiscreteSlider(label="n (records sketched)",
                                     options=[1000, 2000, 5000, N // 2, N], value=N)
pn.Column(pn.Row(eps_sketch, n_sketch), pn.bind(private_sketch_view, eps_sketch, n_sketch))

# %% [markdown]
# ## 4. Both signatures, in the dashboard
#
# Below are the dashboard's settings panel and *Clusters* view on a demo session with a
# Gaussian mixture. Choose **Compressive k-means** and switch the **signature** between the
# complex exponential and the **quantised** one (one bit per entry with a public dither,
# cheaper to store and send, c_f larger); or pick **DPLloyd** to compare. The private centres
# are drawn next to scikit-learn's k-means on the same axes.

# %%
settings = SettingsModel(task="kmeans", algorithm="compressive", epsilon=1.0,
                         lower=BOUNDS[0], upper=BOUNDS[1])
lab = Lab(data=DataModel(preset="gaussian_mixture", n_samples=min(N, 20_000), n_features=D,
                         n_clusters=K, seed=0), settings=settings)
pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), ClustersView(lab=lab))

# %% [markdown]
# ## 5. A reduced Fig. 1: CL-OMPR versus DPLloyd versus k-means
#
# For each ε and trial: compressive k-means with both signatures (m = 10kd) and DPLloyd with
# its two initialisations (uniform in the box, and the sphere-packing initialisation of
# Su et al. 2016), scored by the SSE relative to scikit-learn's k-means (1 = as good as
# non-private k-means). Medians over trials with the inter-quartile band (the dashboard's
# trade-off plot). The paper's finding: the sketch wins at small ε when n is large, because
# its noise shrinks like 1/(√n ε) while DPLloyd pays for every iteration.

# %%
METHODS = {
    "CKM (complex exp.)": lambda eps, seed: pc.CompressiveKMeans(
        n_clusters=K, epsilon=eps, sketch_size=M, bounds=BOUNDS, n_replicates=1,
        random_state=seed),
    "CKM (quantised)": lambda eps, seed: pc.CompressiveKMeans(
        n_clusters=K, epsilon=eps, sketch_size=M, signature="quantized", bounds=BOUNDS,
        n_replicates=1, random_state=seed),
    "DPLloyd": lambda eps, seed: pc.DPLloyd(n_clusters=K, epsilon=eps, bounds=BOUNDS,
                                            random_state=seed),
    "DPLloyd (sphere packing)": lambda eps, seed: pc.DPLloyd(
        n_clusters=K, epsilon=eps, bounds=BOUNDS, init="sphere_packing", random_state=seed),
}


def relative_sse(est, X):
    return metrics.relative_sse(X, est.cluster_centers_, kmeans.cluster_centers_)


frames = [run_sweep(make, X, EPSILONS, n_trials=N_TRIALS, score=relative_sse,
                    random_state=0).assign(method=name)
          for name, make in METHODS.items()]
fig1 = pd.concat(frames, ignore_index=True)
pn.panel(plots.tradeoff(fig1, "score", "SSE relative to k-means vs ε").opts(
    logy=True, ylabel="SSE / SSE(k-means)")
         * hv.HLine(1.0).opts(color="black", line_dash="dotted"))


# %% [markdown]
# ## 6. The federated picture (Fig. 4)
#
# L devices each hold part of the records. They agree on the **public** operator (frequencies
# and dither), each computes the sketch of its own records and publishes a *private* sketch
# with its own ε (so each protects its own records), and a server averages the published
# sketches (weights nᵢ / n, public) and decodes the centroids, without ever seeing a record.
# The noise of the average grows with the number of holders (each holder's sketch is an
# average over fewer records), so utility degrades gently as L grows. Move L.

# %%
def federated_view(n_holders, epsilon=1.0):
    parts = np.array_split(np.arange(N), n_holders)
    published = [Sketch.from_array(X[idx], op, random_state=10 + i).release(
                     epsilon, random_state=100 + i)       # on device i
                 for i, idx in enumerate(parts)]
    weights = np.array([len(idx) for idx in parts]) / N
    merged = np.tensordot(weights, np.array(published), axes=1)    # on the server
    centers, _, _ = clompr(merged, op, K, BOUNDS, n_replicates=1, random_state=0)
    rel = metrics.relative_sse(X, centers, kmeans.cluster_centers_)
    holder = np.zeros(N, dtype=int)
    for i, idx in enumerate(parts):
        holder[idx] = i
    return (plots.points(X, holder, P, mean, "")
            * plots.centres(CENTERS, P, mean, color="black")
            * plots.centres(centers, P, mean, color="crimson", marker="x")).opts(
        title=f"{n_holders} holders (colours), ε = {epsilon:g} each: "
              f"SSE / SSE(k-means) = {rel:.2f}")


holders = pn.widgets.DiscreteSlider(label="holders L", options=[1, 2, 5, 10, 20, 50], value=5)
pn.Column(holders, pn.bind(federated_view, holders))

# %% [markdown]
# ## 7. A large n on Dask
#
# The same additivity runs on a cluster: `sketch_dask` sketches each partition of a
# `dask.array` (or a list of files) as a separate task and adds the partial sums; only the m
# sums travel. Here a local scheduler sketches N_DASK records in chunks (with
# `dask.distributed.Client` the same call runs on a cluster); `fit_sketch` then releases the
# merged sketch privately and decodes. Dask is an optional extra (`privclust[dask]`).

# %%
try:
    import dask.array as da

    from privclust.core.sketch import sketch_dask
except ImportError:
    dask_view = pn.pane.Alert("Dask is not installed: `pip install privclust[dask]`.",
                              alert_type="info")
else:
    big = data.make_gaussian_mixture(n_samples=N_DASK, n_features=D, n_clusters=K,
                                     random_state=0)          # same centres as above
    Xd = da.from_array(big.X, chunks=(max(N_DASK // 8, 1), D))
    t0 = time.perf_counter()
    big_sketch = sketch_dask(Xd, op, random_state=0)
    seconds = time.perf_counter() - t0
    rows = []
    for eps in (0.001, 0.01, 0.1):
        est = pc.CompressiveKMeans(n_clusters=K, epsilon=eps, sketch_size=M, bounds=BOUNDS,
                                   n_replicates=1, refine_share=0, random_state=0).fit_sketch(big_sketch)
        rows.append((f"ε = {eps:g}", metrics.relative_sse(X, est.cluster_centers_,
                                                          kmeans.cluster_centers_)))
    dask_view = hv.Bars(rows, "private sketch of all records", "SSE / SSE(k-means)").opts(
        width=520, height=300, tools=["hover"],
        title=f"{big_sketch.count:,} records sketched on Dask "
              f"({Xd.numblocks[0]} partitions) in {seconds:.1f} s")
pn.panel(dask_view)
