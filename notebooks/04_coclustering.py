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
# # Private co-clustering of document-word counts
#
# A co-clustering groups the rows *and* the columns of a matrix at once: documents into topics
# and words into vocabularies, customers into segments and products into baskets. Its summary
# is the **contingency table** T, the total count in each (row cluster, column cluster) block.
# Fast-τCC finds the partitions that maximise the association between row and column clusters
# (a de-normalised Goodman–Kruskal τ); DP-τCC makes every step private. This notebook follows
# E. Battaglia and R. G. Pensa, *Differentially private associative co-clustering*, SDM 2025,
# and E. Battaglia, F. Peiretti and R. G. Pensa, *Fast parameterless
# prototype-based co-clustering*, Machine Learning 2024:
#
# 1. document-word data: classic3 / cstr when `PRIVCLUST_DATA_DIR` has them, a synthetic
#    block matrix otherwise;
# 2. what DP-τCC protects: **one cell**, not one document;
# 3. Fast-τCC versus DP-τCC as heatmaps, and the noisy versus the exact contingency table;
# 4. the dashboard's co-clustering view;
# 5. NMI versus ε (a reduced Fig. 2) and τ̂ versus the number of iterations (Fig. 3).

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
from privclust.app.views import CoclustersView, SettingsPanel, plots
from privclust.core import data, metrics
from privclust.core.experiments import run_sweep

warnings.filterwarnings("ignore", module="privclust.core.cocluster")

# %% [markdown]
# **Sizes.** The paper runs eight CLUTO matrices, ε from 0.1 to 10, I = 4 iterations and
# averages 10 runs (rows and columns permuted before each). The defaults run 3 trials on the
# first available of classic3 / cstr (or the synthetic matrix) and a shorter ε grid.

# %%
# ======================================================================================
# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set
# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.
# ======================================================================================
PAPER_SIZES = False
N_TRIALS = 10 if PAPER_SIZES else 3
EPSILONS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0] if PAPER_SIZES else [0.1, 0.3, 1.0, 3.0, 10.0]
ITERATIONS = list(range(2, 11)) if PAPER_SIZES else [2, 4, 6, 10]
FIG3_EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0] if PAPER_SIZES else [0.1, 1.0, 10.0]

# %% [markdown]
# ## 1. The data
#
# Rows are documents, columns are words, entries are counts. classic3 (3891 abstracts from
# three collections, 4303 words) and cstr (475 technical reports, 1000 words) are read only
# from `PRIVCLUST_DATA_DIR`, never shipped. Without them we draw a 600 × 400 Poisson block
# matrix with 3 × 3 planted co-clusters (`make_block_counts`). Left: the matrix as stored
# (log counts); right: the same matrix with rows and columns sorted by the true classes.

# %%
available = set(data.list_datasets())
REAL = [name for name in ("classic3", "cstr") if name in available]
if REAL:
    ds = data.get_dataset(REAL[0])
else:
    ds = data.make_block_counts(n_rows=600, n_cols=400, n_row_clusters=3, n_col_clusters=3,
                                sparse=True, random_state=0)
A, classes = ds.X, np.asarray(ds.labels)
K = len(np.unique(classes))                     # K0 = L0 = number of classes, as the paper
rows_as_stored, cols_as_stored = np.arange(A.shape[0]), np.arange(A.shape[1])
if "column_labels" in ds.truth:
    col_order = np.argsort(ds.truth["column_labels"], kind="stable")
else:                                           # real data: no word classes, sort by use
    col_order = np.argsort(-np.asarray(A.sum(axis=0)).ravel(), kind="stable")
pn.panel(plots.matrix(A, rows_as_stored, cols_as_stored, f"{ds.name}: {A.shape[0]} x {A.shape[1]}")
         + plots.matrix(A, np.argsort(classes, kind="stable"), col_order,
                        "rows sorted by class"))

# %% [markdown]
# ## 2. What is protected: one cell
#
# DP-τCC's neighbouring matrices differ by **one unit in one cell**: one more occurrence of one
# word in one document, one more purchase of one item by one customer (the paper's Fig. 1).
# Under that relation, each iteration (1) reassigns the rows with the exponential mechanism on
# the τ-based similarity to the noisy prototypes, (2) releases the new contingency table with
# Laplace noise, then does the same for the columns; the budget is split over the I iterations,
# 90 % to the assignments and 10 % to the tables. The whole output is ε-DP *for one cell*. It
# does **not** protect a whole document (a row): changing c units costs c·ε. privclust says so
# in the guarantee it attaches to every fit:

# %%
dp = pc.DPTauCoClustering(n_row_clusters=K, n_col_clusters=K, epsilon=1.0,
                          random_state=0).fit(A)
g = dp.privacy_
mechanisms = pd.DataFrame([m.to_dict() for m in g.mechanisms])
pn.Column(pn.pane.Alert(f"**{g.summary()}**\n\n" + "\n".join(f"- {w}" for w in g.warnings),
                        alert_type="warning"),
          pn.pane.DataFrame(mechanisms, index=False, max_rows=8))

# %% [markdown]
# ## 3. Fast-τCC versus DP-τCC
#
# Left column: the matrix reordered by Fast-τCC's partitions (non-private) and by DP-τCC's
# released partitions; a good co-clustering shows dark blocks. Right column: the exact
# contingency table of the DP partitions (computed on the raw data, for teaching) and the
# **noisy table** DP-τCC releases. Move ε: at small ε the assignments are nearly random and the
# table is mostly noise; around ε ≈ 1 the blocks appear. The NMI compares the row partition with
# the document classes (for the DP labels, the released ones).

# %%
fast = pc.TauCoClustering(n_row_clusters=K, n_col_clusters=K, random_state=0).fit(A)


def order(labels):
    return np.argsort(labels, kind="stable")


def cocluster_view(epsilon, seed):
    est = pc.DPTauCoClustering(n_row_clusters=K, n_col_clusters=K, epsilon=epsilon,
                               random_state=seed).fit(A)
    rows, cols = est.row_labels_, est.column_labels_
    kept = rows >= 0
    exact = metrics.contingency_table(A[kept], rows[kept], cols)
    nmi_fast = metrics.nmi(classes, fast.row_labels_)
    nmi_dp = metrics.nmi(classes[kept], rows[kept])
    return hv.Layout([
        plots.matrix(A, order(fast.row_labels_), order(fast.column_labels_),
                     f"Fast-τCC (non-private), NMI {nmi_fast:.2f}"),
        plots.table(exact, "exact table of the DP partitions (raw data)"),
        plots.matrix(A, order(rows), order(cols), f"DP-τCC, ε = {epsilon:g}, NMI {nmi_dp:.2f}"),
        plots.table(est.table_, "released noisy table"),
    ]).cols(2)


eps_cc = pn.widgets.DiscreteSlider(label="ε", options=[0.05, 0.1, 0.3, 1.0, 3.0, 10.0], value=1.0)
seed_cc = pn.widgets.IntSlider(label="random seed", start=0, end=9, value=0)
pn.Column(pn.Row(eps_cc, seed_cc), pn.bind(cocluster_view, eps_cc, seed_cc))

# %% [markdown]
# ## 4. The dashboard's view
#
# The dashboard's settings panel and *Co-clusters* view, on a demo block-count matrix (public
# synthetic data: nothing is spent). Switch between DP-τCC and Fast-τCC, change ε or the
# number of iterations I, and compare the released table with the exact one. Rows are clipped
# to a **public row cap** L (here 200 occurrences per document), which is what lets a
# record-level ledger charge a cell-level release: replacing one whole document (at most L
# units out, L in) costs 2L·ε.

# %%
settings = SettingsModel(task="cocluster", algorithm="dptaucc", epsilon=1.0,
                         n_row_clusters=3, n_col_clusters=3)
settings.algo.row_cap = 200     # public cap L on a row's total count (see above)
lab = Lab(data=DataModel(preset="block_counts", n_samples=300, n_clusters=3, seed=0),
          settings=settings)
pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), CoclustersView(lab=lab))


# %% [markdown]
# ## 5. NMI versus ε (reduced Fig. 2) and τ̂ versus iterations (Fig. 3)
#
# For each available real matrix (or the synthetic one) and each ε: the NMI between the
# document classes and DP-τCC's rows, averaged over trials with rows and columns permuted
# before each run, as the authors' scripts do. Two row labelings are scored: the **released**
# labels, and the paper's evaluation labels (`eval_row_labels_`: each raw row assigned to its
# nearest noisy prototype, which reads the raw data, so it is **not private**, evaluation
# only). The dotted lines are Fast-τCC. Below: τ̂_{R|C} of the released table as the number of
# iterations I grows; more iterations split the same ε into smaller pieces.

# %%
def permuted(M, labels, seed):
    rng = np.random.default_rng(seed)
    r, c = rng.permutation(M.shape[0]), rng.permutation(M.shape[1])
    return M[r][:, c], labels[r]


sets = [(name, data.get_dataset(name)) for name in REAL] or [(ds.name, ds)]
nmi_frames, fast_lines, tau_frames = [], [], []
for name, dset in sets:
    M, y = dset.X, np.asarray(dset.labels)
    k = len(np.unique(y))

    def nmi_score(est, X, y=y):
        rows = est.row_labels_
        return {"NMI": metrics.nmi(y[rows >= 0], rows[rows >= 0]),
                "NMI (eval labels, not private)": metrics.nmi(y, est.eval_row_labels_)}

    for trial in range(N_TRIALS):
        Mp, yp = permuted(M, y, trial)
        def make(eps, seed, k=k):
            return pc.DPTauCoClustering(n_row_clusters=k, n_col_clusters=k, epsilon=eps,
                                        random_state=seed)
        df = run_sweep(make, Mp, EPSILONS, n_trials=1,
                       score=lambda est, X, yp=yp: nmi_score(est, X, yp), random_state=trial)
        nmi_frames.append(df.assign(method=f"{name}: DP-τCC", trial=trial))
    fast_nmi = metrics.nmi(y, pc.TauCoClustering(n_row_clusters=k, n_col_clusters=k,
                                                 random_state=0).fit(M).row_labels_)
    fast_lines.append(hv.HLine(fast_nmi).opts(color="black", line_dash="dotted"))
    for n_iter in ITERATIONS:
        def make(eps, seed, k=k, n_iter=n_iter):
            return pc.DPTauCoClustering(n_row_clusters=k, n_col_clusters=k, epsilon=eps,
                                        n_iter=n_iter, random_state=seed)
        df = run_sweep(make, M, FIG3_EPSILONS, n_trials=N_TRIALS,
                       score=lambda est, X: metrics.tau_rows(est.table_), random_state=0)
        tau_frames.append(df.assign(dataset=name, iterations=n_iter))

nmi = pd.concat(nmi_frames, ignore_index=True)
fig2 = (plots.tradeoff(nmi, "NMI", "NMI of the released rows vs ε")
        * hv.Overlay(fast_lines))
fig2_eval = plots.tradeoff(nmi, "NMI (eval labels, not private)",
                           "NMI of the evaluation labels (not private) vs ε")
tau = pd.concat(tau_frames, ignore_index=True)
tau_mean = tau.groupby(["dataset", "iterations", "epsilon"])["score"].mean().reset_index()
fig3 = hv.Overlay([hv.Curve(g, "iterations", "score", label=f"{d}, ε = {e:g}")
                   * hv.Scatter(g, "iterations", "score")
                   for (d, e), g in tau_mean.groupby(["dataset", "epsilon"])]).opts(
    width=640, height=340, ylabel="τ̂ R|C of the released table", show_grid=True,
    legend_position="right", title="τ̂ R|C vs iterations I")
pn.panel((fig2 + fig2_eval + fig3).cols(1))
