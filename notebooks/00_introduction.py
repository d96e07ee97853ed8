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
# # Differential privacy in ten minutes
#
# This notebook teaches what an (ε, δ) differential-privacy (DP) guarantee promises, using the
# primitives of `privclust.core.privacy` on a toy count. Move the **ε** sliders and watch the
# output distributions on two *neighbouring* datasets move apart or together.
#
# You will see:
# 1. the promise, and what *neighbouring datasets* are;
# 2. the **Laplace** mechanism (pure ε-DP) and the **Gaussian** mechanism ((ε, δ)-DP);
# 3. the **exponential** mechanism (choosing the best of several candidates);
# 4. **composition** (privacy losses add up) and the **budget ledger** that spends and refuses;
# 5. why the bounds of a private algorithm must be **public**, never read from the data.
# 6. how to **plan before you spend**: what an ε means for one person, which algorithm at
#    which ε, and what a fixed plan of releases costs under tight composition.
#
# References: C. Dwork, F. McSherry, K. Nissim, A. Smith, *Calibrating noise to sensitivity in
# private data analysis*, TCC 2006; C. Dwork and A. Roth, *The Algorithmic Foundations of
# Differential Privacy*, 2014 (chapters 2–3); F. McSherry and K. Talwar, *Mechanism design via
# differential privacy*, FOCS 2007; B. Balle and Y.-X. Wang, *Improving the Gaussian mechanism
# for differential privacy: analytical calibration and optimal denoising*, ICML 2018;
# C. Dwork, G. Rothblum, S. Vadhan, *Boosting and differential privacy*, FOCS 2010;
# A. Koskela, J. Jälkö, A. Honkela, *Computing tight differential privacy guarantees using
# FFT*, AISTATS 2020; I. Mironov, *Rényi differential privacy*, CSF 2017.
#
# Run it top to bottom (about half a minute), or serve it as a page:
# `panel serve notebooks/00_introduction.ipynb`.

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

# the dashboard's log-spaced ε grid (the sliders below use its first values)
from privclust.app.state.settings import EPSILON_GRID
from privclust.core import privacy
from privclust.core.privacy import audit

# %% [markdown]
# **Sizes.** Every plot below simulates the mechanism many times. The next cell sets how many;
# the defaults are enough for smooth histograms, the larger value is what the privclust test
# suite uses for its statistical audits.

# %%
# ======================================================================================
# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set
# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.
# ======================================================================================
PAPER_SIZES = False
N_RELEASES = 200_000 if PAPER_SIZES else 20_000   # simulated releases per dataset
rng = privacy.as_generator(0)

# %% [markdown]
# ## 1. The promise
#
# A randomised algorithm *M* is **(ε, δ)-differentially private** if for every pair of
# *neighbouring* datasets D, D′ and every set S of outputs
#
# > P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ .
#
# Two datasets are *neighbours* when they differ in one person's record (privclust's
# `neighbouring="replace"`: one record replaced; `"add_remove"`: one record added or removed;
# `"cell"`: one cell of a count matrix changed by at most one). Whatever an observer does with
# the output, it can hardly tell whether *you* were in the data: that is the whole promise.
# With δ = 0 it is *pure* ε-DP.
#
# Our toy data: 100 patients, 37 of whom have a condition. The neighbour D′ replaces one
# healthy patient by a sick one, so the count is 38. The count changes by at most 1 between
# neighbours: its **sensitivity** is 1.

# %%
D = np.r_[np.ones(37), np.zeros(63)]            # 1 = has the condition
D_prime = D.copy()
D_prime[-1] = 1                                 # one record replaced
count, count_prime, SENSITIVITY = D.sum(), D_prime.sum(), 1.0
# pn.panel shows a plot through Panel, which keeps its styles inline (offline) like every widget
pn.panel(hv.Bars([("D", count), ("D′", count_prime)], "dataset", "true count").opts(
    width=300, height=250, title="the query: how many have the condition?", ylim=(0, 45)))


# %% [markdown]
# ## 2. The Laplace mechanism (pure ε-DP)
#
# Release `count + Lap(Δ/ε)` where Δ = 1 is the sensitivity (`privacy.laplace`). The left plot
# shows the distribution of many releases on D and on D′; the right plot the *privacy loss*
# ln p_D(x) / p_D′(x) at each output x: for the Laplace mechanism it never leaves the band
# [−ε, ε]. **Move ε down**: the two distributions overlap more (more privacy, less accuracy).

# %%
def hist(samples, label, bins):
    freq, edges = np.histogram(samples, bins=bins, density=True)
    return hv.Histogram((edges, freq), kdims=["release"], vdims=["density"], label=label).opts(
        alpha=0.45, line_alpha=0)


def laplace_view(epsilon):
    a = privacy.laplace(count, SENSITIVITY, epsilon, rng, size=N_RELEASES)
    b = privacy.laplace(count_prime, SENSITIVITY, epsilon, rng, size=N_RELEASES)
    scale = SENSITIVITY / epsilon
    lo, hi = count - 8 * scale, count_prime + 8 * scale
    bins = np.linspace(lo, hi, 80)
    x = np.linspace(lo, hi, 400)
    loss = (np.abs(x - count_prime) - np.abs(x - count)) / scale   # ln p_D(x)/p_D'(x)
    left = (hist(a, "M(D)", bins) * hist(b, "M(D′)", bins)).opts(
        width=430, height=300, title=f"Laplace releases, ε = {epsilon:g} (scale {scale:.3g})",
        legend_position="top_right")
    right = (hv.Curve((x, loss), "release", "privacy loss").opts(color="black")
             * hv.HLine(epsilon).opts(color="crimson", line_dash="dashed")
             * hv.HLine(-epsilon).opts(color="crimson", line_dash="dashed")).opts(
        width=380, height=300, title="ln p_D/p_D′ stays within ±ε")
    return left + right


eps_laplace = pn.widgets.DiscreteSlider(label="ε (log scale)", options=EPSILON_GRID[:12],
                                        value=1.0)
pn.Column(eps_laplace, pn.bind(laplace_view, eps_laplace))


# %% [markdown]
# ## 3. The Gaussian mechanism ((ε, δ)-DP)
#
# Gaussian noise has lighter tails, so its privacy loss is unbounded: far in the tails the
# ratio exceeds e^ε, which is what δ pays for. `privacy.analytic_gaussian_sigma` finds the
# smallest σ satisfying (ε, δ)-DP exactly (Balle & Wang 2018); the classic formula
# σ = Δ √(2 ln(1.25/δ)) / ε (Dwork & Roth, Thm A.1) is only valid for ε < 1 and always larger.
# The red area is where the privacy loss exceeds ε.

# %%
def gaussian_view(epsilon, delta):
    sigma = privacy.analytic_gaussian_sigma(epsilon, delta, SENSITIVITY)
    classic = (f"{privacy.classic_gaussian_sigma(epsilon, delta, SENSITIVITY):.3g}"
               if epsilon < 1 else "n/a for ε ≥ 1")
    a = privacy.gaussian(count, SENSITIVITY, epsilon, delta, rng, size=N_RELEASES)
    b = privacy.gaussian(count_prime, SENSITIVITY, epsilon, delta, rng, size=N_RELEASES)
    lo, hi = count - 5 * sigma, count_prime + 5 * sigma
    bins = np.linspace(lo, hi, 80)
    x = np.linspace(lo, hi, 400)
    loss = ((x - count_prime) ** 2 - (x - count) ** 2) / (2 * sigma ** 2)
    over = np.where(np.abs(loss) > epsilon, loss, np.nan)
    left = (hist(a, "M(D)", bins) * hist(b, "M(D′)", bins)).opts(
        width=430, height=300, legend_position="top_right",
        title=f"σ analytic {sigma:.3g}, classic {classic}")
    right = (hv.Curve((x, loss), "release", "privacy loss").opts(color="black")
             * hv.Curve((x, over), "release", "privacy loss").opts(color="crimson",
                                                                  line_width=4)
             * hv.HLine(epsilon).opts(color="crimson", line_dash="dashed")
             * hv.HLine(-epsilon).opts(color="crimson", line_dash="dashed")).opts(
        width=380, height=300, title="the loss leaves ±ε in the tails (δ)")
    return left + right


eps_gauss = pn.widgets.DiscreteSlider(label="ε (log scale)", options=EPSILON_GRID[:12],
                                      value=0.5)
delta_gauss = pn.widgets.DiscreteSlider(label="δ", options=[1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2],
                                        value=1e-5)
pn.Column(pn.Row(eps_gauss, delta_gauss), pn.bind(gaussian_view, eps_gauss, delta_gauss))

# %% [markdown]
# ## 4. The exponential mechanism: choosing, not counting
#
# Some answers are choices: *which* diagnosis is the most common? The exponential mechanism
# (McSherry & Talwar 2007) picks candidate r with probability ∝ exp(ε u(D, r) / (2Δu)), where
# the utility u is here the number of patients with diagnosis r (Δu = 1).
# `privacy.exponential_mechanism` samples it in log space (Gumbel-max), as every privclust
# mechanism does. The bars show the selection probabilities on D and on D′ (one patient moved
# from *flu* to *cold*): at small ε they are close to uniform, at large ε the winner is picked
# almost surely; on every candidate the ratio stays below e^ε.

# %%
DIAGNOSES = ["flu", "cold", "asthma", "migraine", "other"]
votes = np.array([31.0, 29.0, 18.0, 12.0, 10.0])
votes_prime = votes + np.array([-1.0, 1.0, 0, 0, 0])


def exponential_view(epsilon):
    p = privacy.exponential_probabilities(votes, epsilon, 1.0)
    q = privacy.exponential_probabilities(votes_prime, epsilon, 1.0)
    picks = privacy.exponential_mechanism(votes, epsilon, 1.0, rng, size=N_RELEASES)
    observed = np.bincount(picks, minlength=len(votes)) / N_RELEASES
    rows = ([(d, "D (exact)", v) for d, v in zip(DIAGNOSES, p, strict=True)]
            + [(d, "D′ (exact)", v) for d, v in zip(DIAGNOSES, q, strict=True)]
            + [(d, "D (sampled)", v) for d, v in zip(DIAGNOSES, observed, strict=True)])
    bars = hv.Bars(rows, ["diagnosis", "dataset"], "probability").opts(
        width=520, height=300, title=f"selection probabilities, ε = {epsilon:g}",
        xrotation=0, tools=["hover"])
    ratio = hv.Bars(list(zip(DIAGNOSES, np.abs(np.log(p / q)), strict=True)), "diagnosis",
                    "|ln p/q|").opts(width=300, height=300, color="grey",
                                     title=f"ratio ≤ ε = {epsilon:g}")
    return bars + (ratio * hv.HLine(epsilon).opts(color="crimson", line_dash="dashed"))


eps_exp = pn.widgets.DiscreteSlider(label="ε (log scale)", options=EPSILON_GRID[:12], value=0.5)
pn.Column(eps_exp, pn.bind(exponential_view, eps_exp))


# %% [markdown]
# ## 5. Composition: privacy losses add up
#
# Releasing k answers about the same people, each ε₀-DP, is (k ε₀)-DP (**basic composition**,
# `privacy.basic_composition`). The **advanced composition** theorem (Dwork, Rothblum & Vadhan
# 2010, `privacy.advanced_composition`) trades a small δ′ for a total that grows like √k
# instead of k; it only pays off for many small steps. This is why every privclust algorithm
# splits one budget across its steps (iterations, sketch entries, radius and centre searches).

# %%
def composition_view(epsilon0, delta_prime):
    ks = np.arange(1, 201)
    basic = [privacy.basic_composition([(epsilon0, 0.0)] * int(k))[0] for k in ks]
    advanced = [privacy.advanced_composition(epsilon0, 0.0, int(k), delta_prime)[0]
                for k in ks]
    return (hv.Curve((ks, basic), "k releases", "total ε", label="basic: k ε₀")
            * hv.Curve((ks, advanced), "k releases", "total ε",
                       label=f"advanced (δ′ = {delta_prime:g})")).opts(
        width=560, height=320, logy=True, legend_position="bottom_right",
        title=f"total ε of k releases at ε₀ = {epsilon0:g}", show_grid=True)


eps0 = pn.widgets.DiscreteSlider(label="ε₀ per release", options=[0.01, 0.02, 0.05, 0.1, 0.2,
                                                                  0.5, 1.0], value=0.1)
delta_prime = pn.widgets.DiscreteSlider(label="δ′", options=[1e-8, 1e-6, 1e-4], value=1e-6)
pn.Column(pn.Row(eps0, delta_prime), pn.bind(composition_view, eps0, delta_prime))

# %% [markdown]
# ## 6. The budget ledger: spend, then refuse
#
# A data owner fixes a **total** budget for a dataset. `privacy.Ledger` charges every release
# *before* it runs and never refunds; a charge that would exceed the total raises
# `BudgetExceeded` and nothing is released. (Given `path=` and `dataset=` it persists in
# SQLite, so restarting Python does not reset it; the dashboard keeps one per dataset.)
# Here a budget of ε = 1 pays for three releases at ε = 0.3; the fourth is refused.

# %%
ledger = privacy.Ledger(epsilon=1.0)
outcomes = []
for i in range(4):
    try:
        ledger.charge(0.3, what=f"noisy count #{i + 1}")     # charge BEFORE releasing
        value = privacy.laplace(count, SENSITIVITY, 0.3, rng)
        outcomes.append(f"- release #{i + 1}: **{float(value):.1f}** (spent ε = "
                        f"{ledger.spent[0]:g})")
    except privacy.BudgetExceeded as exc:
        outcomes.append(f"- release #{i + 1}: **refused** — {exc}")
history = pd.DataFrame([{"what": r.what, "ε": r.epsilon, "δ": r.delta}
                        for r in ledger.history])
pn.Column(pn.pane.Markdown("\n".join(outcomes)), pn.pane.DataFrame(history, index=False))


# %% [markdown]
# Now try it yourself: each click on **Release** charges the chosen ε to a fresh ledger of
# total ε = 1 and then releases a noisy count. Watch the bar fill up and the refusal appear.
# (The dashboard shows the same ledger in its sidebar, `privclust.app.LedgerPanel`; that
# panel is bound to a whole dashboard session, so this small demo uses plain Panel widgets.)

# %%
class LedgerDemo:
    def __init__(self, total=1.0):
        self.ledger = privacy.Ledger(epsilon=total)
        self.rng = privacy.as_generator(1)
        self.eps = pn.widgets.DiscreteSlider(label="ε of this release",
                                             options=[0.05, 0.1, 0.2, 0.3, 0.5], value=0.2)
        self.button = pn.widgets.Button(label="Release", color="primary")
        self.button.on_click(self.release)
        self.bar = pn.indicators.Progress(value=0, max=100, bar_color="danger", width=300)
        self.status = pn.pane.Alert("Nothing released yet.", alert_type="info")
        self.log = pn.pane.Markdown("")

    def release(self, event=None):
        eps = float(self.eps.value)
        try:
            self.ledger.charge(eps, what=f"noisy count at ε={eps:g}")
        except privacy.BudgetExceeded as exc:
            self.status.param.update(object=f"**Refused.** {exc}", alert_type="danger")
            return
        value = float(privacy.laplace(count, SENSITIVITY, eps, self.rng))
        spent, total = self.ledger.spent[0], self.ledger.total[0]
        self.bar.value = int(round(100 * spent / total))
        self.status.param.update(object=f"Released **{value:.1f}** (ε = {eps:g}); spent "
                                        f"{spent:g} of {total:g}.", alert_type="success")
        self.log.object += f"- ε = {eps:g} → {value:.1f}\n"

    def __panel__(self):
        return pn.Column(pn.Row(self.eps, self.button), self.bar, self.status, self.log)


pn.panel(LedgerDemo().__panel__())

# %% [markdown]
# ## 7. Why bounds must be public
#
# To add the right amount of noise a mechanism needs the sensitivity, which depends on the
# range of the data. It is tempting to read that range from the data (`X.min()`, `X.max()`).
# Doing so **leaks**: the noise scale itself now depends on one person's record.
#
# Example: the mean income of 100 people. In D′ one person earns 5 million instead of 50 000.
# - *Data-derived bounds*: clip to [min, max] of the data, noise Lap((max − min) / (n ε)).
# - *Public bounds*: clip to a range fixed **before** looking at the data, [0, 200 000].
#
# We simulate both on D and D′ and run privclust's statistical audit
# (`privacy.audit.epsilon_lower_bound`, a Clopper–Pearson lower bound on the ε a mechanism
# really spends, the same test the privclust test suite runs against every mechanism). The
# data-derived version claims ε but its audited ε is far larger: the output reveals whether
# the rich person is in the data. The public-bounds version stays below its claim.

# %%
income_rng = np.random.default_rng(7)                   # the toy data (not a release)
incomes = income_rng.uniform(20_000, 100_000, size=100)
incomes[-1] = 50_000
incomes_prime = incomes.copy()
incomes_prime[-1] = 5_000_000
EPSILON = 1.0
PUBLIC = (0.0, 200_000.0)


def mean_data_bounds(x, size):
    lo, hi = x.min(), x.max()                           # LEAKS: read from the data
    return privacy.laplace(np.clip(x, lo, hi).mean(), (hi - lo) / len(x), EPSILON, rng,
                           size=size)


def mean_public_bounds(x, size):
    lo, hi = PUBLIC                                     # fixed before seeing the data
    return privacy.laplace(np.clip(x, lo, hi).mean(), (hi - lo) / len(x), EPSILON, rng,
                           size=size)


rows, plots = [], []
for name, mech in [("data-derived bounds", mean_data_bounds),
                   ("public bounds", mean_public_bounds)]:
    a, b = mech(incomes, N_RELEASES), mech(incomes_prime, N_RELEASES)
    rows.append((name, audit.epsilon_lower_bound(a, b)))
    bins = np.linspace(min(np.quantile(a, 0.001), np.quantile(b, 0.001)),
                       max(np.quantile(a, 0.999), np.quantile(b, 0.999)), 80)
    plots.append((hist(a, "M(D)", bins) * hist(b, "M(D′)", bins)).opts(
        width=400, height=280, title=name, legend_position="top_right"))
audited = hv.Bars(rows, "mechanism", "audited ε (lower bound)").opts(
    width=330, height=280, logy=False, color="grey",
    title=f"claimed ε = {EPSILON:g} (red line)") * hv.HLine(EPSILON).opts(
    color="crimson", line_dash="dashed")
pn.panel((plots[0] + plots[1] + audited).cols(3).opts(shared_axes=False))   # own axes each

# %% [markdown]
# privclust therefore takes every bound (a box, a radius, a grid step, a frequency scale) as
# a **parameter** and refuses to guess it. For instance `DPLloyd` without `bounds`:

# %%
import privclust.core as pc

try:
    pc.DPLloyd(n_clusters=3, epsilon=1.0).fit(np.random.default_rng(0).normal(size=(50, 2)))
    message = pn.pane.Alert("fitted?!", alert_type="danger")
except ValueError as exc:
    message = pn.pane.Alert(f"`ValueError`: {exc}", alert_type="warning")
message

# %% [markdown]
# ## 8. Plan before you spend
#
# Every release costs budget, and the budget never comes back. Before pressing *Release*, a
# data owner wants to know three things: what an ε means for the people in the data, which
# algorithm at which ε will give something usable, and what a whole plan of releases will
# cost. privclust answers all three **without reading the private records**.
#
# **What an ε means for one person.** Whatever an observer knew before, seeing a release made
# with ε can multiply their odds that one given person's record was used by at most e^ε
# (Dwork & Roth 2014, Sec. 2.3; with δ > 0 this holds except with probability about δ). A
# 50 % prior becomes at most e^ε / (e^ε + 1). `privclust.core.privacy.risk` says it in words:

# %%
from privclust.core.privacy.risk import risk_sentence, risk_table

risk = pd.DataFrame(risk_table(priors=(0.5, 0.01))).rename(columns={
    "epsilon": "ε", "odds_factor": "odds factor e^ε",
    "max_posterior_0.5": "prior 50 % → at most", "max_posterior_0.01": "prior 1 % → at most"})
eps_risk = pn.widgets.DiscreteSlider(label="ε", options=EPSILON_GRID[:14], value=1.0)
pn.Column(eps_risk, pn.bind(lambda e: pn.pane.Markdown(risk_sentence(e)), eps_risk),
          pn.pane.DataFrame(risk.round(3), index=False))

# %% [markdown]
# From ε = 5 on, an observer who was unsure (50 %) can become practically certain: such a
# release protects little, whatever its guarantee says.
#
# **Which algorithm, at which ε?** The *planner* (`privclust.core.experiments.plan_utility`)
# takes only **public facts** (`PublicFacts`): the number of records (public under the
# replace-one unit), the number of features and clusters, the public box the records are
# clipped to, and the algorithm settings. From them it builds a public *synthetic twin* (a
# Gaussian mixture for k-means, as Schellekens et al., SPARS 2019), runs every private k-means
# of privclust and the non-private baseline on it a few times at each ε, and predicts the
# utility with a 10–90 % interval. The twin is public, so the plan may be seeded.
#
# Our "private" data: scikit-learn's wine table (178 wines, 13 measurements), held by a
# `Curator` with a budget of ε = 10. The planner reads only its public facts; the box is the
# ranges printed in the dataset's documentation, rounded outward. The plot shows the relative
# SSE (SSE of the private centres over that of k-means on the twin; 1 is perfect).

# %%
from privclust.core.data.registry import get_dataset
from privclust.core.experiments import PublicFacts, plan_utility
from privclust.core.release import Curator

wine = get_dataset("wine")
curator = Curator(wine, privacy.Ledger(epsilon=10.0, delta=1e-5))
BOX = ([11, 0, 1, 10, 70, 0, 0, 0, 0, 1, 0, 1, 250],
       [15, 6, 4, 30, 165, 4, 6, 1, 4, 13, 2, 4, 1700])
facts = PublicFacts.from_curator(curator, "kmeans", n_clusters=3, bounds=BOX)
plan = plan_utility(facts, epsilons=(0.5, 1, 2, 5, 10, 20, 50), n_trials=5, random_state=0)
TARGET = 2.0                                    # "usable": relative SSE at most 2

sse = plan.summary.query("metric == 'relative_sse'")
curves = []
for alg, part in sse.groupby("algorithm"):
    curves.append(hv.Spread((part.epsilon, part["median"], part["median"] - part.q10,
                             part.q90 - part["median"]), "ε", ["relative SSE", "lo", "hi"]
                            ).opts(alpha=0.15))
    curves.append(hv.Curve((part.epsilon, part["median"]), "ε", "relative SSE", label=alg)
                  * hv.Scatter((part.epsilon, part["median"]), "ε", "relative SSE"))
pn.panel(hv.Overlay(curves + [hv.HLine(TARGET).opts(color="black", line_dash="dashed")]).opts(
    logx=True, logy=True, width=620, height=340, legend_position="top_right", show_grid=True,
    title=f"predicted on the twin ({facts.n_samples} × {facts.n_features}), target {TARGET:g}"))

# %% [markdown]
# **From a target to an ε.** State what "usable" means and `PlanResult.recommend` gives, per
# algorithm, the smallest ε of the grid from which the median reaches it, the cost of that
# release in the ledger's unit, and the cheapest algorithm. DPLloyd is private under
# add/remove neighbours; on this replace-one ledger it costs twice its ε, and the
# recommendation counts that. Read the caveats: the twin is built from public facts, and real
# data with other cluster shapes can do better or worse (on the real datasets we measured,
# `benchmarks/results/planner/calibration.md`, the real data were mostly *easier* than the
# twin). Treat the answer as a starting point, not a promise.

# %%
rec = plan.recommend(f"relative_sse <= {TARGET:g}")
choices = pd.DataFrame([{"algorithm": alg, "smallest ε": r["epsilon"],
                         "cost in the ledger (ε, δ)": r["cost"]}
                        for alg, r in rec["per_algorithm"].items()])
pn.Column(pn.pane.DataFrame(choices, index=False),
          pn.pane.Markdown(f"**Cheapest:** {rec['best']}\n\n"
                           + "\n".join(f"- {c}" for c in rec["caveats"])))

# %% [markdown]
# **Facts alone, or a public sample?** The public facts (n, d, k, the box) do not state the
# data's *geometry*: how spread and how overlapping the clusters are, which decides how much the
# same noise hurts. So a plan from facts alone either guesses one twin or, with
# `prior="papers"`, draws an ensemble of twins whose difficulty spans the papers' experimental
# ranges; its interval is wide and still often misses. If the owner can **publish** a few
# records (a pilot study, an open subset; records that are never a part of the private data),
# the twins are bootstraps of that sample instead (`PublicFacts(public_sample=...)`; Efron &
# Tibshirani 1993) and carry its geometry. Measured on real data
# (`benchmarks/results/planner/calibration.md`, 16 twins): the real median fell inside the
# predicted interval in **40 %** of 106 (dataset, algorithm, ε) cells from facts alone, and in
# **89 %** with a 10 % public sample (92 % on a blind held-out check). Below, the wine owner
# publishes a random 10 % of each class and keeps the other 90 % private; both plans read only
# the private part's public facts.

# %%
from privclust.core.data import Dataset

split = np.random.default_rng(1)
classes = np.asarray(wine.labels)
published = np.concatenate([split.choice(np.flatnonzero(classes == c), replace=False,
                                         size=round(0.1 * np.sum(classes == c)))
                            for c in np.unique(classes)])
kept = np.setdiff1d(np.arange(len(classes)), published)
owner = Curator(Dataset(wine.X[kept], name="wine (private part)"),
                privacy.Ledger(epsilon=10.0, delta=1e-5))
arms = {"facts alone (ensemble)": ({}, "papers"),
        f"public sample ({len(published)} wines)": ({"public_sample": wine.X[published]}, None)}
bands = []
for (arm, (sample, prior)), color in zip(arms.items(), ["grey", "darkorange"], strict=True):
    arm_facts = PublicFacts.from_curator(owner, "kmeans", n_clusters=3, bounds=BOX, **sample)
    arm_plan = plan_utility(arm_facts, epsilons=(1, 5, 20, 50), algorithms=["dplloyd_improved"],
                            n_twins=16, n_trials=1, random_state=0, prior=prior)
    part = arm_plan.summary.query("metric == 'relative_sse'")
    bands.append(hv.Spread((part.epsilon, part["median"], part["median"] - part.q10,
                            part.q90 - part["median"]), "ε", ["relative SSE", "lo", "hi"]
                           ).opts(alpha=0.2, color=color))
    bands.append(hv.Curve((part.epsilon, part["median"]), "ε", "relative SSE", label=arm
                          ).opts(color=color))
pn.panel(hv.Overlay(bands).opts(
    logx=True, logy=True, width=620, height=340, legend_position="top_right", show_grid=True,
    title="DPLloyd (sphere-packing init): predicted relative SSE, 10–90 % of 16 twins"))

# %% [markdown]
# **A plan costs less than its parts.** A *plan* is a list of releases fixed before any of
# them runs. Nothing in it depends on an earlier output, so the whole plan is one mechanism
# and may be charged by a tight composition theorem instead of the sum of its parts (basic
# composition). `privacy.accounting.plan_accounting.account_plan` maps each release's Laplace, Gaussian
# and exponential-mechanism steps to events and composes their privacy loss distributions
# (PLD; Koskela, Jälkö & Honkela, AISTATS 2020) with Google's `dp-accounting`, Rényi DP as a
# cross-check (Mironov 2017). Here: two compressive k-means sketches with Gaussian noise and
# one DPLloyd, all on the wine data.

# %%
from privclust.core.privacy.accounting.plan_accounting import account_plan

fixed_plan = [pc.CompressiveKMeans(n_clusters=3, epsilon=1.0, bounds=BOX, mechanism="gaussian",
                                   delta=1e-7),
              pc.CompressiveKMeans(n_clusters=3, epsilon=1.0, bounds=BOX, mechanism="gaussian",
                                   delta=1e-7, sketch_size=200),
              pc.DPLloyd(n_clusters=3, epsilon=0.5, bounds=BOX)]
acc = account_plan(fixed_plan, wine.shape, unit=curator.unit)
totals = [("basic (sum)", acc.basic[0]), ("PLD (tight)", acc.pld_epsilon)]
if acc.rdp_epsilon is not None:
    totals.append(("RDP", acc.rdp_epsilon))
events = pd.DataFrame(acc.event_table())[["estimator", "kind", "epsilon", "delta",
                                          "noise_multiplier"]]
pn.Row(hv.Bars(totals, "accounting", "total ε").opts(
           width=330, height=280, color="grey", title=f"the plan's ε at δ = {acc.delta:.2g}"),
       pn.Column(pn.pane.Markdown(acc.summary()), pn.pane.DataFrame(events.round(4),
                                                                    index=False)))

# %% [markdown]
# Committing the plan (`curator.release_plan`) charges the ledger **once**, at the tight
# total, and then runs the releases; if the plan does not fit, nothing is charged and nothing
# runs. Releases decided later, after seeing these results, are adaptive: `curator.release`
# charges them on top, one by one.

# %%
released = curator.release_plan(fixed_plan)
pn.pane.Markdown(f"{curator.ledger.summary()}\n\nCharge ids of the three releases: "
                 f"{[r.charge_id for r in released]}")

# %% [markdown]
# ## Where next
#
# - `01_subspace_clustering.ipynb` — private subspace clustering (sample-and-aggregate, the
#   Gibbs sampler with live diagnostics);
# - `02_compressive_kmeans.ipynb` — private k-means from a noisy sketch;
# - `03_small_cluster.ipynb` — locating a small cluster with GoodRadius and GoodCenter;
# - `04_coclustering.ipynb` — private co-clustering of document-word counts.
#
# The dashboard (`privclust serve --show`) puts all of this behind one page.
