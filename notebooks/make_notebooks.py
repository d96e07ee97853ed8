"""Source of truth of the teaching notebooks: ``python notebooks/make_notebooks.py`` rewrites every
``notebooks/NN_*.ipynb`` from the cell texts below (outputs stripped, stable cell ids).

Edit the cells here, regenerate, then run ``pytest tests/notebooks`` (it executes each notebook in
a fresh kernel and checks that its widgets and plots are in the outputs).
"""
import sys
import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
NOTEBOOKS = {}

SETUP = """\
import numpy as np
import pandas as pd
import holoviews as hv
import panel as pn

hv.extension("bokeh", logo=False)
pn.extension(throttled=True)
"""


def setup(extra):
    """The first code cell: imports and the Panel/HoloViews notebook extensions."""
    return ("code", SETUP + "\n" + textwrap.dedent(extra).strip("\n"))


def md(text):
    text = textwrap.dedent(text).strip("\n")
    # `panel serve` pastes markdown cells into a Python string literal: a backslash would be read
    # as an escape and break the served page (MathJax fails on the mangled TeX).
    assert "\\" not in text and "$" not in text, "no backslashes or TeX in markdown cells"
    return ("markdown", text)


def code(text):
    return ("code", textwrap.dedent(text).strip("\n"))


def notebook(name):
    def register(fn):
        NOTEBOOKS[name] = fn
        return fn
    return register


def sizes_cell(body):
    """The clearly marked cell switching between teaching sizes and the paper's sizes."""
    return code("# " + "=" * 86 + "\n"
                "# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set\n"
                "# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.\n"
                "# " + "=" * 86 + "\n"
                "PAPER_SIZES = False\n" + textwrap.dedent(body).strip("\n"))


# ------------------------------------------------------------------------------------------------
@notebook("00_introduction")
def introduction():
    return [
        md("""
        # Differential privacy in ten minutes

        This notebook teaches what an (ε, δ) differential-privacy (DP) guarantee promises, using the
        primitives of `privclust.core.privacy` on a toy count. Move the **ε** sliders and watch the
        output distributions on two *neighbouring* datasets move apart or together.

        You will see:
        1. the promise, and what *neighbouring datasets* are;
        2. the **Laplace** mechanism (pure ε-DP) and the **Gaussian** mechanism ((ε, δ)-DP);
        3. the **exponential** mechanism (choosing the best of several candidates);
        4. **composition** (privacy losses add up) and the **budget ledger** that spends and refuses;
        5. why the bounds of a private algorithm must be **public**, never read from the data.

        References: C. Dwork, F. McSherry, K. Nissim, A. Smith, *Calibrating noise to sensitivity in
        private data analysis*, TCC 2006; C. Dwork and A. Roth, *The Algorithmic Foundations of
        Differential Privacy*, 2014 (chapters 2–3); F. McSherry and K. Talwar, *Mechanism design via
        differential privacy*, FOCS 2007; B. Balle and Y.-X. Wang, *Improving the Gaussian mechanism
        for differential privacy: analytical calibration and optimal denoising*, ICML 2018;
        C. Dwork, G. Rothblum, S. Vadhan, *Boosting and differential privacy*, FOCS 2010.

        Run it top to bottom (about half a minute), or serve it as a page:
        `panel serve notebooks/00_introduction.ipynb`.
        """),
        setup("""
        from privclust.core import privacy
        from privclust.core.privacy import audit
        from privclust.app.views import EPSILON_GRID   # the dashboard's log-spaced epsilon grid
        """),
        md("""
        **Sizes.** Every plot below simulates the mechanism many times. The next cell sets how many;
        the defaults are enough for smooth histograms, the larger value is what the privclust test
        suite uses for its statistical audits.
        """),
        sizes_cell("""
        N_RELEASES = 200_000 if PAPER_SIZES else 20_000   # simulated releases per dataset
        rng = privacy.as_generator(0)
        """),
        md("""
        ## 1. The promise

        A randomised algorithm *M* is **(ε, δ)-differentially private** if for every pair of
        *neighbouring* datasets D, D′ and every set S of outputs

        > P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ .

        Two datasets are *neighbours* when they differ in one person's record (privclust's
        `neighbouring="replace"`: one record replaced; `"add_remove"`: one record added or removed;
        `"cell"`: one cell of a count matrix changed by at most one). Whatever an observer does with
        the output, it can hardly tell whether *you* were in the data: that is the whole promise.
        With δ = 0 it is *pure* ε-DP.

        Our toy data: 100 patients, 37 of whom have a condition. The neighbour D′ replaces one
        healthy patient by a sick one, so the count is 38. The count changes by at most 1 between
        neighbours: its **sensitivity** is 1.
        """),
        code("""
        D = np.r_[np.ones(37), np.zeros(63)]            # 1 = has the condition
        D_prime = D.copy()
        D_prime[-1] = 1                                 # one record replaced
        count, count_prime, SENSITIVITY = D.sum(), D_prime.sum(), 1.0
        hv.Bars([("D", count), ("D′", count_prime)], "dataset", "true count").opts(
            width=300, height=250, title="the query: how many have the condition?", ylim=(0, 45))
        """),
        md("""
        ## 2. The Laplace mechanism (pure ε-DP)

        Release `count + Lap(Δ/ε)` where Δ = 1 is the sensitivity (`privacy.laplace`). The left plot
        shows the distribution of many releases on D and on D′; the right plot the *privacy loss*
        ln p_D(x) / p_D′(x) at each output x: for the Laplace mechanism it never leaves the band
        [−ε, ε]. **Move ε down**: the two distributions overlap more (more privacy, less accuracy).
        """),
        code("""
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


        eps_laplace = pn.widgets.DiscreteSlider(name="ε (log scale)", options=EPSILON_GRID[:12],
                                                value=1.0)
        pn.Column(eps_laplace, pn.bind(laplace_view, eps_laplace))
        """),
        md("""
        ## 3. The Gaussian mechanism ((ε, δ)-DP)

        Gaussian noise has lighter tails, so its privacy loss is unbounded: far in the tails the
        ratio exceeds e^ε, which is what δ pays for. `privacy.analytic_gaussian_sigma` finds the
        smallest σ satisfying (ε, δ)-DP exactly (Balle & Wang 2018); the classic formula
        σ = Δ √(2 ln(1.25/δ)) / ε (Dwork & Roth, Thm A.1) is only valid for ε < 1 and always larger.
        The red area is where the privacy loss exceeds ε.
        """),
        code("""
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


        eps_gauss = pn.widgets.DiscreteSlider(name="ε (log scale)", options=EPSILON_GRID[:12],
                                              value=0.5)
        delta_gauss = pn.widgets.DiscreteSlider(name="δ", options=[1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2],
                                                value=1e-5)
        pn.Column(pn.Row(eps_gauss, delta_gauss), pn.bind(gaussian_view, eps_gauss, delta_gauss))
        """),
        md("""
        ## 4. The exponential mechanism: choosing, not counting

        Some answers are choices: *which* diagnosis is the most common? The exponential mechanism
        (McSherry & Talwar 2007) picks candidate r with probability ∝ exp(ε u(D, r) / (2Δu)), where
        the utility u is here the number of patients with diagnosis r (Δu = 1).
        `privacy.exponential_mechanism` samples it in log space (Gumbel-max), as every privclust
        mechanism does. The bars show the selection probabilities on D and on D′ (one patient moved
        from *flu* to *cold*): at small ε they are close to uniform, at large ε the winner is picked
        almost surely; on every candidate the ratio stays below e^ε.
        """),
        code("""
        DIAGNOSES = ["flu", "cold", "asthma", "migraine", "other"]
        votes = np.array([31.0, 29.0, 18.0, 12.0, 10.0])
        votes_prime = votes + np.array([-1.0, 1.0, 0, 0, 0])


        def exponential_view(epsilon):
            p = privacy.exponential_probabilities(votes, epsilon, 1.0)
            q = privacy.exponential_probabilities(votes_prime, epsilon, 1.0)
            picks = privacy.exponential_mechanism(votes, epsilon, 1.0, rng, size=N_RELEASES)
            observed = np.bincount(picks, minlength=len(votes)) / N_RELEASES
            rows = ([(d, "D (exact)", v) for d, v in zip(DIAGNOSES, p)]
                    + [(d, "D′ (exact)", v) for d, v in zip(DIAGNOSES, q)]
                    + [(d, "D (sampled)", v) for d, v in zip(DIAGNOSES, observed)])
            bars = hv.Bars(rows, ["diagnosis", "dataset"], "probability").opts(
                width=520, height=300, title=f"selection probabilities, ε = {epsilon:g}",
                xrotation=0, tools=["hover"])
            ratio = hv.Bars(list(zip(DIAGNOSES, np.abs(np.log(p / q)))), "diagnosis",
                            "|ln p/q|").opts(width=300, height=300, color="grey",
                                             title=f"ratio ≤ ε = {epsilon:g}")
            return bars + (ratio * hv.HLine(epsilon).opts(color="crimson", line_dash="dashed"))


        eps_exp = pn.widgets.DiscreteSlider(name="ε (log scale)", options=EPSILON_GRID[:12], value=0.5)
        pn.Column(eps_exp, pn.bind(exponential_view, eps_exp))
        """),
        md("""
        ## 5. Composition: privacy losses add up

        Releasing k answers about the same people, each ε₀-DP, is (k ε₀)-DP (**basic composition**,
        `privacy.basic_composition`). The **advanced composition** theorem (Dwork, Rothblum & Vadhan
        2010, `privacy.advanced_composition`) trades a small δ′ for a total that grows like √k
        instead of k; it only pays off for many small steps. This is why every privclust algorithm
        splits one budget across its steps (iterations, sketch entries, radius and centre searches).
        """),
        code("""
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


        eps0 = pn.widgets.DiscreteSlider(name="ε₀ per release", options=[0.01, 0.02, 0.05, 0.1, 0.2,
                                                                          0.5, 1.0], value=0.1)
        delta_prime = pn.widgets.DiscreteSlider(name="δ′", options=[1e-8, 1e-6, 1e-4], value=1e-6)
        pn.Column(pn.Row(eps0, delta_prime), pn.bind(composition_view, eps0, delta_prime))
        """),
        md("""
        ## 6. The budget ledger: spend, then refuse

        A data owner fixes a **total** budget for a dataset. `privacy.Ledger` charges every release
        *before* it runs and never refunds; a charge that would exceed the total raises
        `BudgetExceeded` and nothing is released. (Given `path=` and `dataset=` it persists in
        SQLite, so restarting Python does not reset it; the dashboard keeps one per dataset.)
        Here a budget of ε = 1 pays for three releases at ε = 0.3; the fourth is refused.
        """),
        code("""
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
        pn.Column(pn.pane.Markdown("\\n".join(outcomes)), pn.pane.DataFrame(history, index=False))
        """),
        md("""
        Now try it yourself: each click on **Release** charges the chosen ε to a fresh ledger of
        total ε = 1 and then releases a noisy count. Watch the bar fill up and the refusal appear.
        (The dashboard shows the same ledger in its sidebar, `privclust.app.views.LedgerPanel`; that
        panel is bound to a whole dashboard session, so this small demo uses plain Panel widgets.)
        """),
        code("""
        class LedgerDemo:
            def __init__(self, total=1.0):
                self.ledger = privacy.Ledger(epsilon=total)
                self.rng = privacy.as_generator(1)
                self.eps = pn.widgets.DiscreteSlider(name="ε of this release",
                                                     options=[0.05, 0.1, 0.2, 0.3, 0.5], value=0.2)
                self.button = pn.widgets.Button(name="Release", button_type="primary")
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
                self.log.object += f"- ε = {eps:g} → {value:.1f}\\n"

            def __panel__(self):
                return pn.Column(pn.Row(self.eps, self.button), self.bar, self.status, self.log)


        pn.panel(LedgerDemo().__panel__())
        """),
        md("""
        ## 7. Why bounds must be public

        To add the right amount of noise a mechanism needs the sensitivity, which depends on the
        range of the data. It is tempting to read that range from the data (`X.min()`, `X.max()`).
        Doing so **leaks**: the noise scale itself now depends on one person's record.

        Example: the mean income of 100 people. In D′ one person earns 5 million instead of 50 000.
        - *Data-derived bounds*: clip to [min, max] of the data, noise Lap((max − min) / (n ε)).
        - *Public bounds*: clip to a range fixed **before** looking at the data, [0, 200 000].

        We simulate both on D and D′ and run privclust's statistical audit
        (`privacy.audit.epsilon_lower_bound`, a Clopper–Pearson lower bound on the ε a mechanism
        really spends, the same test the privclust test suite runs against every mechanism). The
        data-derived version claims ε but its audited ε is far larger: the output reveals whether
        the rich person is in the data. The public-bounds version stays below its claim.
        """),
        code("""
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
        (plots[0] + plots[1] + audited).cols(3)
        """),
        md("""
        privclust therefore takes every bound (a box, a radius, a grid step, a frequency scale) as
        a **parameter** and refuses to guess it. For instance `DPLloyd` without `bounds`:
        """),
        code("""
        import privclust.core as pc

        try:
            pc.DPLloyd(n_clusters=3, epsilon=1.0).fit(np.random.default_rng(0).normal(size=(50, 2)))
            message = pn.pane.Alert("fitted?!", alert_type="danger")
        except ValueError as exc:
            message = pn.pane.Alert(f"`ValueError`: {exc}", alert_type="warning")
        message
        """),
        md("""
        ## Where next

        - `01_subspace_clustering.ipynb` — private subspace clustering (sample-and-aggregate, the
          Gibbs sampler with live diagnostics);
        - `02_compressive_kmeans.ipynb` — private k-means from a noisy sketch;
        - `03_small_cluster.ipynb` — locating a small cluster with GoodRadius and GoodCenter;
        - `04_coclustering.ipynb` — private co-clustering of document-word counts.

        The dashboard (`privclust serve --show`) puts all of this behind one page.
        """),
    ]


# ------------------------------------------------------------------------------------------------
@notebook("01_subspace_clustering")
def subspace_clustering():
    return [
        md("""
        # Differentially private subspace clustering

        Many data sets (faces under varying light, motion trajectories) lie close to a *union of
        low-dimensional subspaces*. Subspace clustering finds those subspaces; releasing them
        privately is hard because the answer of a non-private solver can jump when one point moves.
        This notebook follows Y. Wang, Y.-X. Wang and A. Singh, *Differentially private subspace
        clustering*, NIPS 2015 (privclust seed 001):

        1. union-of-subspaces data (Sec. 5) and the non-private solvers k-plane, TSC, SSC, LRR;
        2. **sample-and-aggregate** (Sec. 3, Alg. 1) and why it needs a very large ε;
        3. the **Gibbs sampler** of the exponential mechanism (Sec. 4) with live diagnostics;
        4. the **SuLQ** k-plane baseline (App. E);
        5. a reduced **Fig. 2** (utility versus ε), and Extended Yale B faces when the data are
           available.

        The interactive parts are the dashboard's own views (`privclust.app`), bound to one demo
        session (`Lab`): change a slider and the result re-runs (demo data: no budget is spent).
        """),
        setup("""
        import warnings

        import privclust.core as pc
        from privclust.core import data, metrics
        from privclust.core.experiments import run_sweep
        from privclust.core.privacy import PrivacyWarning
        from privclust.app import plots
        from privclust.app.models import DataModel, Lab, SettingsModel
        from privclust.app.views import ClustersView, SettingsPanel, SubspacesView
        from privclust.app.gibbs import GibbsView
        from privclust.app.tradeoff import TradeoffView

        warnings.filterwarnings("ignore", category=PrivacyWarning)   # shown in the text instead
        warnings.filterwarnings("ignore", message="Graph is not fully connected")
        """),
        md("""
        **Sizes.** The defaults are the middle column of the paper's Fig. 2 (n = 1000, d = 10,
        k = 3 subspaces of dimension q = 3, noise σ = 0.1) with short runs. `PAPER_SIZES = True` runs
        the Gibbs sampler for 10 000 iterations and 10 trials per ε as in the paper (hours).
        """),
        sizes_cell("""
        N, D, K, Q, NOISE = 1000, 10, 3, 3, 0.1
        N_ITER = 10_000 if PAPER_SIZES else 150          # Gibbs iterations
        N_CHAINS = 4 if PAPER_SIZES else 3
        N_TRIALS = 10 if PAPER_SIZES else 2              # trials per epsilon in the sweep
        EPSILONS = [0.3, 1.0, 3.0, 10.0, 30.0, 100.0] if PAPER_SIZES else [0.3, 3.0, 30.0]
        YALE_ITER = 10_000 if PAPER_SIZES else 60
        """),
        md("""
        ## 1. Data: a union of subspaces

        Following Sec. 5: draw k random q-dimensional subspaces of R^d, give each point a random
        subspace, a uniformly random direction in it, and Gaussian noise of standard deviation σ
        (`privclust.core.data.make_union_of_subspaces`; records are clipped to the unit ball, which
        is the public bound every private algorithm below relies on). The plot is a 2-D PCA view,
        coloured by the true subspace.
        """),
        code("""
        ds = data.make_union_of_subspaces(n_samples=N, n_features=D, n_clusters=K, subspace_dim=Q,
                                          noise=NOISE, random_state=0)
        X, TRUTH = ds.X, ds.truth["subspaces"]
        P, mean = plots.projection(X, True)
        plots.points(X, ds.labels, P, mean, f"union of {K} subspaces (q={Q}) in R^{D}, PCA view")
        """),
        md("""
        ## 2. Non-private solvers

        k-plane clustering alternates assignments and per-cluster PCA (like k-means with planes).
        TSC, SSC and LRR build an affinity between points (nearest neighbours by angle, sparse or
        low-rank self-representation) and run spectral clustering on it. Each returns the subspaces
        as orthonormal bases. We score them by the **Wasserstein distance** to the true subspaces
        (0 = identical) and the **subspace cost** (mean squared distance of a point to its nearest
        subspace); the dotted line is the cost of the true subspaces (the noise floor).
        """),
        code("""
        import time

        solvers = {"k-plane": pc.KPlanes, "TSC": pc.ThresholdSubspaceClustering,
                   "SSC": pc.SparseSubspaceClustering, "LRR": pc.LowRankRepresentation}
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
        (hv.Bars(solver_scores, "solver", "Wasserstein to truth").opts(title="distance to truth", **opts)
         + (hv.Bars(solver_scores, "solver", "subspace cost").opts(title="cost", **opts)
            * hv.HLine(truth_cost).opts(color="black", line_dash="dotted"))
         + hv.Bars(solver_scores, "solver", "seconds").opts(title="fit time (SSC on 600 points)",
                                                            **opts))
        """),
        md("""
        All four recover the subspaces on this easy data. None of them is private: the subspaces
        are a deterministic function of every record.

        ## 3. The dashboard, embedded

        Below is the dashboard's settings panel and its *Clusters* and *Subspaces* views, bound to a
        demo session on the same kind of data. Pick an algorithm (sample-and-aggregate, Gibbs,
        SuLQ, or a non-private solver) and move **ε**: the private result (left) is redrawn next to
        the non-private k-plane baseline (right). On demo data nothing is charged.
        """),
        code("""
        settings = SettingsModel(task="subspace", algorithm="gibbs", epsilon=10.0)
        settings.algo.param.update(n_iter=N_ITER, n_chains=N_CHAINS, record_every=5)
        lab = Lab(data=DataModel(preset="union_of_subspaces", n_samples=N, n_features=D,
                                 n_clusters=K, subspace_dim=Q, noise=NOISE, seed=0),
                  settings=settings)
        pn.Row(pn.Column(SettingsPanel(lab=lab), width=340),
               pn.Tabs(("Clusters", ClustersView(lab=lab)), ("Subspaces", SubspacesView(lab=lab)),
                       dynamic=True))
        """),
        md("""
        ## 4. Sample-and-aggregate: private, but only at very large ε

        Alg. 1 splits the data into m disjoint subsets, runs a non-private solver on each, and
        releases a noisy "centre of attention" of the m answers, with noise calibrated to the
        *smooth sensitivity* of that aggregate (Nissim, Raskhodnikova & Smith 2007). It is
        (ε, δ)-DP. Its noise only becomes small when most subsets agree **and** ε is large:
        privclust warns (`PrivacyWarning`) when ε < 4(D + ln(2/δ))/√m, i.e. when the noise is of the
        order of the whole output space. Move ε: the released subspaces are the coloured lines
        through the origin, the points are coloured by their true subspace, and the title gives the
        Wasserstein distance to the truth.
        """),
        code("""
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
                text += "\\n\\n**Warning:** " + notes[0]
            return pn.Row(plot, pn.pane.Markdown(text, width=380))


        sa_eps = pn.widgets.DiscreteSlider(name="ε", options=[0.1, 1.0, 10.0, 100.0, 1000.0],
                                           value=10.0)
        sa_solver = pn.widgets.RadioButtonGroup(name="solver", options=["tsc", "kplanes", "lrr"],
                                                value="tsc")
        pn.Column(pn.Row(sa_eps, sa_solver), pn.bind(sample_aggregate_view, sa_eps, sa_solver))
        """),
        md("""
        ## 5. The Gibbs sampler, live

        Sec. 4 samples subspaces from the exponential mechanism p(U, z) ∝ exp(−(ε/2) Σᵢ d²(xᵢ, S_zᵢ))
        with a Gibbs sampler: labels given subspaces (a softmax, sampled by Gumbel-max), subspaces
        given labels (matrix Bingham draws). An *exact* sample is ε-DP; the chain only reaches that
        distribution in the limit, so privclust labels the guarantee **asymptotic**. Starting it
        from a non-private SSC/LRR solution (as the paper does) voids the guarantee: privclust then
        labels the result *not private*.

        The dashboard's Gibbs view runs several chains in a separate process and streams their
        traces: cost, the test statistic of App. D (→ 0 when a chain mixes) and the distance to the
        non-private baseline; R-hat near 1 means the chains agree. Press **Start sampler** to run it
        again (the cell below runs it once so the page opens with traces). Only one chain, chosen
        independently of the data, is released.
        """),
        code("""
        lab.settings.algorithm = "gibbs"           # in case it was changed above
        gibbs_view = GibbsView(lab=lab)
        if gibbs_view.start():                    # what the Start button does
            gibbs_view.runner.join()
            gibbs_view.poll()                     # drain the diagnostics into the live plots
        gibbs_view
        """),
        md("""
        ## 6. The SuLQ baseline

        App. E's baseline runs k-plane clustering but releases each iteration's per-cluster
        covariance matrices with Gaussian noise (the SuLQ framework, Blum et al. 2005); the budget is
        split over the iterations. Its noise is a d × d matrix, so it degrades as the ambient
        dimension d grows, while the Gibbs sampler's does not. The plot fits both at one ε for
        several d (same n, k, q, σ).
        """),
        code("""
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


        by_dimension()
        """),
        md("""
        ## 7. A reduced Fig. 2: utility versus ε

        For each ε and trial we fit sample-and-aggregate (TSC), the Gibbs sampler and SuLQ, and
        record the k-means-style subspace cost and the Wasserstein distance to the truth
        (`privclust.core.experiments.run_sweep`; medians with the inter-quartile band, drawn with the
        dashboard's trade-off plot). The non-private k-plane cost is the dotted line. Expect what the
        paper reports: sample-and-aggregate is poor unless ε is very large; Gibbs and SuLQ are
        reasonable.
        """),
        code("""
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
        figure2(X, METHODS, EPSILONS, N_TRIALS, kplane_cost)
        """),
        md("""
        The dashboard's trade-off view runs the same kind of sweep for the algorithm chosen in the
        settings panel above, in a worker thread with a progress bar (press **Run sweep**).
        """),
        code("""
        TradeoffView(lab=lab)
        """),
        md("""
        ## 8. Extended Yale B faces (when the data are available)

        The right column of Fig. 2: 5 individuals of Extended Yale B (n = 320 images), each projected
        onto a 9-dimensional affine subspace by PCA, then to d = 50 by a random Gaussian projection
        (privclust's `yaleb5` dataset). It is read only from `PRIVCLUST_DATA_DIR` (never shipped); without
        it this section says so and does nothing. At the default sizes the sampler runs only
        briefly, so expect the gap to k-plane to be larger than in the paper.
        """),
        code("""
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
        yale_view
        """),
    ]


# ------------------------------------------------------------------------------------------------
@notebook("02_compressive_kmeans")
def compressive_kmeans():
    return [
        md("""
        # Private k-means from a compressed sketch

        Compressive k-means squeezes a whole dataset into a short vector, the **sketch**: m random
        generalised moments averaged over the records. The centroids are then decoded from the
        sketch alone. Because the sketch is an average, one record moves it very little, so a little
        noise makes it differentially private, and everything computed from it afterwards is free
        post-processing. This notebook follows V. Schellekens, A. Chatalic, F. Houssiau,
        Y.-A. de Montjoye, L. Jacques and R. Gribonval, *Compressive k-Means with Differential
        Privacy*, SPARS 2019 (privclust seed 002), which builds on N. Keriven, N. Tremblay,
        Y. Traonmilin and R. Gribonval, *Compressive k-means*, ICASSP 2017:

        1. what a sketch is, and why it can be computed in pieces and merged;
        2. the noise of a private sketch and the **signal-to-noise ratio** (Eq. 4, Fig. 3);
        3. private sketches with both **signatures** (complex exponential, one-bit quantised),
           in the dashboard's views;
        4. CL-OMPR decoding versus **DPLloyd** (D. Su et al., *Differentially private k-means
           clustering*, CODASPY 2016) and ordinary k-means: a reduced **Fig. 1**;
        5. the **federated** picture of Fig. 4: several holders sketch locally, the sketches merge;
        6. a large n on **Dask**.
        """),
        setup("""
        import time
        import warnings

        from sklearn.cluster import KMeans

        import privclust.core as pc
        from privclust.core import data, metrics
        from privclust.core.experiments import run_sweep
        from privclust.core.sketch import (Sketch, clompr, gmm_true_sketch, sigma_xi,
                                           snr_complex_exp)
        from privclust.app import plots
        from privclust.app.models import DataModel, Lab, SettingsModel
        from privclust.app.views import ClustersView, SettingsPanel

        warnings.filterwarnings("ignore", category=UserWarning, module="sklearn")
        """),
        md("""
        **Sizes.** Fig. 1 of the paper uses k = d = 10 Gaussians, n = 10⁷ records and 50 trials; the
        defaults here are k = d = 5, n = 20 000 and 2 trials, which show the same shapes in seconds.
        """),
        sizes_cell("""
        K, D = (10, 10) if PAPER_SIZES else (5, 5)
        N = 10_000_000 if PAPER_SIZES else 20_000
        N_TRIALS = 50 if PAPER_SIZES else 2
        EPSILONS = np.logspace(-3, 1, 9).tolist() if PAPER_SIZES else [0.01, 0.1, 1.0, 10.0]
        N_DASK = 10_000_000 if PAPER_SIZES else 400_000
        M = 10 * K * D                                  # sketch size m = 10 k d
        """),
        md("""
        ## 1. Data and public bounds

        Fig. 1's data: k Gaussians with identity covariance and centres drawn from
        N(0, (2.5 k^{1/d})² I) (`make_gaussian_mixture`). The decoder searches centroids inside a
        **public box**; we fix it from the generator's public recipe (four standard deviations of the
        centre law), never from the data. The plot is a 2-D PCA view with the true centres (x).
        """),
        code("""
        ds = data.make_gaussian_mixture(n_samples=N, n_features=D, n_clusters=K, random_state=0)
        X, CENTERS = ds.X, ds.truth["centers"]
        R = 4 * 2.5 * K ** (1 / D)
        BOUNDS = (-R, R)                                # public: from the recipe, not from X
        P, mean = plots.projection(X, True)
        kmeans = KMeans(K, n_init=3, random_state=0).fit(X)   # the non-private reference (SSE)
        (plots.points(X, ds.labels, P, mean, f"{K} Gaussians in R^{D} (n = {N:,}), PCA view")
         * plots.centres(CENTERS, P, mean, color="black"))
        """),
        md("""
        ## 2. What a sketch is

        Draw m random frequencies ωⱼ (public, `make_operator`). The sketch is the average over the
        records of exp(i ωⱼᵀx) (a sampled *characteristic function*) times a public random phase.
        Left: each entry's modulus against its frequency's norm; it decays at high frequencies, and
        the empirical sketch matches the closed form of a Gaussian mixture (`gmm_true_sketch`).
        Right: the sketch is a **sum** over records, so sketching two halves separately and adding
        them gives the sketch of the whole (up to rounding): that is what lets it run on partitions,
        on files streamed from disk, or on many devices.
        """),
        code("""
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
        left + right
        """),
        md("""
        ## 3. Private sketches and the SNR

        Theorem 1: adding complex Laplace noise of scale σ_ξ = 2 c_f √(r m) / (√n ε) to each entry
        of the mean sketch makes it ε-DP (one record replaced, n public; c_f bounds the signature,
        r = measurements per record, here r = m). The quality of the decoded centroids is driven by
        the **signal-to-noise ratio** SNR = ‖z‖² / Σⱼ Var(sⱼ) (Eq. 4): it grows with n and ε. Move ε
        and n: the noisy sketch (left) drifts from the clean one, the SNR drops, and the CL-OMPR
        centroids decoded from the noisy sketch alone (right, red) drift from the truth (black).
        """),
        code("""
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


        eps_sketch = pn.widgets.DiscreteSlider(name="ε", options=[0.001, 0.003, 0.01, 0.03, 0.1,
                                                                  0.3, 1.0, 10.0], value=0.1)
        n_sketch = pn.widgets.DiscreteSlider(name="n (records sketched)",
                                             options=[1000, 2000, 5000, N // 2, N], value=N)
        pn.Column(pn.Row(eps_sketch, n_sketch), pn.bind(private_sketch_view, eps_sketch, n_sketch))
        """),
        md("""
        ## 4. Both signatures, in the dashboard

        Below are the dashboard's settings panel and *Clusters* view on a demo session with a
        Gaussian mixture. Choose **Compressive k-means** and switch the **signature** between the
        complex exponential and the **quantised** one (one bit per entry with a public dither,
        cheaper to store and send, c_f larger); or pick **DPLloyd** to compare. The private centres
        are drawn next to scikit-learn's k-means on the same axes.
        """),
        code("""
        settings = SettingsModel(task="kmeans", algorithm="compressive", epsilon=1.0,
                                 lower=BOUNDS[0], upper=BOUNDS[1])
        lab = Lab(data=DataModel(preset="gaussian_mixture", n_samples=min(N, 20_000), n_features=D,
                                 n_clusters=K, seed=0), settings=settings)
        pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), ClustersView(lab=lab))
        """),
        md("""
        ## 5. A reduced Fig. 1: CL-OMPR versus DPLloyd versus k-means

        For each ε and trial: compressive k-means with both signatures (m = 10kd) and DPLloyd with
        its two initialisations (uniform in the box, and the sphere-packing initialisation of
        Su et al. 2016), scored by the SSE relative to scikit-learn's k-means (1 = as good as
        non-private k-means). Medians over trials with the inter-quartile band (the dashboard's
        trade-off plot). The paper's finding: the sketch wins at small ε when n is large, because
        its noise shrinks like 1/(√n ε) while DPLloyd pays for every iteration.
        """),
        code("""
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
        plots.tradeoff(fig1, "score", "SSE relative to k-means vs ε").opts(
            logy=True, ylabel="SSE / SSE(k-means)") * hv.HLine(1.0).opts(color="black",
                                                                         line_dash="dotted")
        """),
        md("""
        ## 6. The federated picture (Fig. 4)

        L devices each hold part of the records. They agree on the **public** operator (frequencies
        and dither), each computes the sketch of its own records and publishes a *private* sketch
        with its own ε (so each protects its own records), and a server averages the published
        sketches (weights nᵢ / n, public) and decodes the centroids, without ever seeing a record.
        The noise of the average grows with the number of holders (each holder's sketch is an
        average over fewer records), so utility degrades gently as L grows. Move L.
        """),
        code("""
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


        holders = pn.widgets.DiscreteSlider(name="holders L", options=[1, 2, 5, 10, 20, 50], value=5)
        pn.Column(holders, pn.bind(federated_view, holders))
        """),
        md("""
        ## 7. A large n on Dask

        The same additivity runs on a cluster: `sketch_dask` sketches each partition of a
        `dask.array` (or a list of files) as a separate task and adds the partial sums; only the m
        sums travel. Here a local scheduler sketches N_DASK records in chunks (with
        `dask.distributed.Client` the same call runs on a cluster); `fit_sketch` then releases the
        merged sketch privately and decodes. Dask is an optional extra (`privclust[dask]`).
        """),
        code("""
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
                                           n_replicates=1, random_state=0).fit_sketch(big_sketch)
                rows.append((f"ε = {eps:g}", metrics.relative_sse(X, est.cluster_centers_,
                                                                  kmeans.cluster_centers_)))
            dask_view = hv.Bars(rows, "private sketch of all records", "SSE / SSE(k-means)").opts(
                width=520, height=300, tools=["hover"],
                title=f"{big_sketch.count:,} records sketched on Dask "
                      f"({Xd.numblocks[0]} partitions) in {seconds:.1f} s")
        dask_view
        """),
    ]


# ------------------------------------------------------------------------------------------------
@notebook("03_small_cluster")
def small_cluster():
    return [
        md("""
        # Locating a small cluster privately

        Given n points and a number t, find a ball that holds about t of them and is not much larger
        than the smallest such ball, with (ε, δ)-differential privacy. Such a ball is a building
        block for private clustering, for screening outliers before another private analysis, and
        for aggregating the answers of non-private algorithms run on pieces of the data. This
        notebook follows K. Nissim, U. Stemmer and S. Vadhan, *Locating a small cluster privately*,
        PODS 2016 (privclust seed 003), with privclust's practical variants (spec 4.2–4.6, 4.3a):

        1. a planted small cluster in the unit square;
        2. **GoodRadius**: a private radius from counts on a geometric grid of radii;
        3. **GoodCenter**: randomly shifted boxes, a heavy box, a bounding ball, and re-centring by
           noisy averages, drawn step by step in 2-D;
        4. the dashboard's view of the whole 1-cluster algorithm and k balls;
        5. **outlier screening** with the released ball;
        6. **sample-and-aggregate** with a 1-cluster aggregator (NSV16 Sec. 6; Nissim,
           Raskhodnikova & Smith, STOC 2007);
        7. how often it works: radius ratio and coverage versus ε.
        """),
        setup("""
        import warnings

        import privclust.core as pc
        from privclust.core import data
        from privclust.core.experiments import run_sweep
        from privclust.core.privacy import (BudgetAccountant, PrivacyWarning, as_generator,
                                            exponential_probabilities)
        from privclust.core.onecluster import (OneClusterAggregator, inside_ball, screen_outliers,
                                               smallest_ball_2approx)
        from privclust.core.onecluster.good_center import good_center
        from privclust.core.onecluster.good_radius import (count_profile, em_gamma, good_radius,
                                                           quality, radius_grid)
        from privclust.core.onecluster.one_cluster import budget_plan, default_grid_step, prepare
        from privclust.app import plots
        from privclust.app.models import DataModel, Lab, SettingsModel
        from privclust.app.views import ClustersView, SettingsPanel

        warnings.filterwarnings("ignore", category=PrivacyWarning)
        IDENTITY, ORIGIN = np.eye(2), np.zeros(2)          # 2-D data: draw the coordinates as they are
        """),
        md("""
        **Sizes.** The paper has no experiments; privclust's benchmark protocol (spec 4.8) uses
        n ∈ {10³, 10⁴}, t = n/2 points in a Gaussian cluster of std 0.01 in [0, 1]^d, d ∈ {2, 10, 50},
        ε ∈ {0.5, 1, 2, 4, 8}, δ = n⁻² and 20 trials. The defaults use n = 5000, d = 2 and 3 trials.
        """),
        sizes_cell("""
        N = 10_000 if PAPER_SIZES else 5_000
        T = N // 2                                      # t: points the ball should hold
        DELTA = 1.0 / N ** 2
        N_TRIALS = 20 if PAPER_SIZES else 3
        EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0]
        DIMS = [2, 10, 50] if PAPER_SIZES else [2]
        N_AGG = 50_000                                  # records for sample-and-aggregate
        """),
        md("""
        ## 1. A small cluster in the unit square

        `make_planted_ball` puts t points in a tight Gaussian cluster and spreads the others
        uniformly over [0, 1]²; coordinates live on a public grid of step 2⁻¹⁶. The **public** inputs
        of every private algorithm below are the box [0, 1]², the grid step and t. Black: the
        smallest ball centred at a data point that holds t points (a non-private 2-approximation of
        the optimum, r_opt, used only to evaluate).
        """),
        code("""
        ds = data.make_planted_ball(n_samples=N, n_features=2, n_inliers=T, std=0.01, random_state=0)
        X = ds.X
        BOUNDS = (0.0, 1.0)
        LO, HI = np.zeros(2), np.ones(2)
        STEP = default_grid_step(LO, HI)
        opt_center, r_opt = smallest_ball_2approx(X, T)


        def scene(title, labels=None):
            return (plots.points(X, ds.labels if labels is None else labels, IDENTITY, ORIGIN, title)
                    .opts(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), width=400, height=400))


        (scene(f"n = {N:,}, t = {T:,} planted points") * plots.balls([opt_center], [r_opt], IDENTITY,
                                                                    ORIGIN, color="black"))
        """),
        md("""
        ## 2. GoodRadius

        For each radius r on a geometric grid (from the grid step up to the box diagonal), L(r) is the
        average of the t largest capped counts of points within r of a data point: a smooth version of
        "how many points does the best ball of radius r hold" with sensitivity 2. GoodRadius wants the
        smallest r with L(r) ≈ t. privclust's default variant first tests r = 0 (Laplace), then picks
        a grid radius with the **exponential mechanism** on the quality
        Q(r) = ½ min{L(r) − t + 4Γ, t − L(r/2)} (largest where L crosses t). Move ε: the selection
        probabilities (right) concentrate on the right radius as ε grows. (L is computed on the raw
        data and shown here for teaching; only the selected radius is released.)
        """),
        code("""
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
            chosen = hv.Bars(list(zip([f"{r:.2g}" for r in GRID], probs)), "radius r",
                             "P[selected]").opts(width=480, height=300, xrotation=60,
                                                 title=f"exponential mechanism, ε = {epsilon:g} "
                                                       f"(share {eps_r:g})", tools=["hover"])
            return profile + chosen


        eps_radius = pn.widgets.DiscreteSlider(name="ε (whole 1-cluster run)",
                                               options=[0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0], value=1.0)
        pn.Column(eps_radius, pn.bind(good_radius_view, eps_radius))
        """),
        md("""
        ## 3. GoodCenter, step by step

        Given the radius r̂, GoodCenter finds a centre:
        1. it partitions the space into boxes of side about 3r̂ (randomly shifted) and uses
           AboveThreshold to find a shift in which some box is heavy, then a **stable histogram** to
           pick that heavy box privately (left: one shifted partition, box shade = number of points;
           computed on raw data, for teaching);
        2. in a random rotation it picks, per axis, an interval holding most of the box's points
           (exponential mechanism), which gives a **bounding ball** of radius ρ_C;
        3. it averages the points of that ball with Gaussian noise (**NoisyAVG**) (middle: the
           GoodCenter ball and its noisy centre);
        4. privclust then **re-centres** twice with NoisyAVG over a ball of radius 2r̂ + 3σ√d, which
           shrinks the released ball (right: the released ball of a full 1-cluster run).
        """),
        code("""
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


        eps_center = pn.widgets.DiscreteSlider(name="ε", options=[0.5, 1.0, 2.0, 4.0, 8.0], value=1.0)
        seed_center = pn.widgets.IntSlider(name="random seed", start=0, end=9, value=0)
        pn.Column(pn.Row(eps_center, seed_center), pn.bind(good_center_view, eps_center, seed_center))
        """),
        md("""
        ## 4. The dashboard's view

        The dashboard runs the whole algorithm (`OneCluster`) or its k-ball heuristic
        (`PrivateKBalls`: find a ball, remove its points, repeat) on a demo planted-ball dataset.
        Change ε, δ, t or the algorithm in the settings panel; the *Clusters* view draws the released
        ball(s). The *kind* line states the guarantee: (ε, δ)-DP for one record replaced.
        """),
        code("""
        settings = SettingsModel(task="onecluster", algorithm="onecluster", lower=0.0, upper=1.0,
                                 delta=DELTA)
        settings.algo.n_points = T
        lab = Lab(data=DataModel(preset="planted_ball", n_samples=N, n_features=2, noise=0.05,
                                 seed=0), settings=settings)
        pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), ClustersView(lab=lab))
        """),
        md("""
        ## 5. Outlier screening

        NSV16 Sec. 1.1: once a ball is released, keeping only the records inside it is a
        *per-record* rule that uses released values only, so it costs no extra privacy. A later
        private analysis (a mean, a regression) can then work on the screened records, whose spread
        is bounded by the ball rather than by the whole box. (The number of records kept is not
        public: the later analysis must not use it as a public n.) Blue: kept; grey: screened out.
        """),
        code("""
        oc = pc.OneCluster(n_points=T, epsilon=2.0, delta=DELTA, bounds=BOUNDS, random_state=0).fit(X)
        kept_mask = inside_ball(X, oc.center_, oc.radius_)     # the screening predicate
        kept = screen_outliers(X, oc)                          # = X[kept_mask]
        captured = kept_mask[ds.truth["inliers"]].mean()
        (scene(f"kept {len(kept):,} records; {captured:.0%} of the planted cluster "
               "(evaluation only)", labels=kept_mask.astype(int))
         * plots.balls([oc.center_], [oc.radius_], IDENTITY, ORIGIN))
        """),
        md("""
        ## 6. Sample-and-aggregate with a 1-cluster aggregator

        Any non-private statistic f can be made private this way: split the records into m disjoint
        blocks, compute f on each block (here the coordinate-wise median), and release a point where
        most of the m answers agree, found by 1-cluster with t = m/2 on the answers. One record
        changes one block, hence one answer, so the 1-cluster guarantee carries over. It needs many
        blocks: 1-cluster's slack Γ ≈ (16/ε) ln(|grid|/β) must be well below m/2, otherwise it fails
        (the box centre is returned) or lands far off. Move m and ε. Grey: the block answers; red:
        the private aggregate and its ball; black x: the median of all records (non-private).
        """),
        code("""
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
                    f"({median_all[0]:.3f}, {median_all[1]:.3f}).\\n\\n**Guarantee:** "
                    f"{guarantee.summary()}")
            return pn.Row(view, pn.pane.Markdown(text, width=320))


        m_blocks = pn.widgets.DiscreteSlider(name="blocks m", options=[100, 200, 500, 1000, 2000, 5000],
                                             value=2000)
        eps_agg = pn.widgets.DiscreteSlider(name="ε", options=[0.5, 1.0, 3.0, 10.0], value=1.0)
        pn.Column(pn.Row(m_blocks, eps_agg), pn.bind(aggregate_view, m_blocks, eps_agg))
        """),
        md("""
        ## 7. How often does it work?

        The protocol of spec 4.8: for each ε and trial, the ratio of the released radius to r_opt
        (1 would be optimal; the theory allows a constant factor) and the fraction of the planted
        cluster inside the released ball (coverage), medians with the inter-quartile band. With
        `PAPER_SIZES` the same runs in d = 10 and 50, where the practical construction degrades
        (see the `OneCluster` docstring).
        """),
        code("""
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
        (plots.tradeoff(sweep, "radius / r_opt", "released radius / r_opt vs ε").opts(logy=True)
         + plots.tradeoff(sweep, "coverage", "coverage of the planted cluster vs ε")).cols(1)
        """),
    ]


# ------------------------------------------------------------------------------------------------
@notebook("04_coclustering")
def coclustering():
    return [
        md("""
        # Private co-clustering of document-word counts

        A co-clustering groups the rows *and* the columns of a matrix at once: documents into topics
        and words into vocabularies, customers into segments and products into baskets. Its summary
        is the **contingency table** T, the total count in each (row cluster, column cluster) block.
        Fast-τCC finds the partitions that maximise the association between row and column clusters
        (a de-normalised Goodman–Kruskal τ); DP-τCC makes every step private. This notebook follows
        E. Battaglia and R. G. Pensa, *Differentially private associative co-clustering*, SDM 2025
        (privclust seed 004), and E. Battaglia, F. Peiretti and R. G. Pensa, *Fast parameterless
        prototype-based co-clustering*, Machine Learning 2024:

        1. document-word data: classic3 / cstr when `PRIVCLUST_DATA_DIR` has them, a synthetic
           block matrix otherwise;
        2. what DP-τCC protects: **one cell**, not one document;
        3. Fast-τCC versus DP-τCC as heatmaps, and the noisy versus the exact contingency table;
        4. the dashboard's co-clustering view;
        5. NMI versus ε (a reduced Fig. 2) and τ̂ versus the number of iterations (Fig. 3).
        """),
        setup("""
        import warnings

        import privclust.core as pc
        from privclust.core import data, metrics
        from privclust.core.experiments import run_sweep
        from privclust.app import plots
        from privclust.app.models import DataModel, Lab, SettingsModel
        from privclust.app.views import CoclustersView, SettingsPanel

        warnings.filterwarnings("ignore", module="privclust.core.cocluster")
        """),
        md("""
        **Sizes.** The paper runs eight CLUTO matrices, ε from 0.1 to 10, I = 4 iterations and
        averages 10 runs (rows and columns permuted before each). The defaults run 3 trials on the
        first available of classic3 / cstr (or the synthetic matrix) and a shorter ε grid.
        """),
        sizes_cell("""
        N_TRIALS = 10 if PAPER_SIZES else 3
        EPSILONS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0] if PAPER_SIZES else [0.1, 0.3, 1.0, 3.0, 10.0]
        ITERATIONS = list(range(2, 11)) if PAPER_SIZES else [2, 4, 6, 10]
        FIG3_EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0] if PAPER_SIZES else [0.1, 1.0, 10.0]
        """),
        md("""
        ## 1. The data

        Rows are documents, columns are words, entries are counts. classic3 (3891 abstracts from
        three collections, 4303 words) and cstr (475 technical reports, 1000 words) are read only
        from `PRIVCLUST_DATA_DIR`, never shipped. Without them we draw a 600 × 400 Poisson block
        matrix with 3 × 3 planted co-clusters (`make_block_counts`). Left: the matrix as stored
        (log counts); right: the same matrix with rows and columns sorted by the true classes.
        """),
        code("""
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
        (plots.matrix(A, rows_as_stored, cols_as_stored, f"{ds.name}: {A.shape[0]} x {A.shape[1]}")
         + plots.matrix(A, np.argsort(classes, kind="stable"), col_order,
                        "rows sorted by class"))
        """),
        md("""
        ## 2. What is protected: one cell

        DP-τCC's neighbouring matrices differ by **one unit in one cell**: one more occurrence of one
        word in one document, one more purchase of one item by one customer (the paper's Fig. 1).
        Under that relation, each iteration (1) reassigns the rows with the exponential mechanism on
        the τ-based similarity to the noisy prototypes, (2) releases the new contingency table with
        Laplace noise, then does the same for the columns; the budget is split over the I iterations,
        90 % to the assignments and 10 % to the tables. The whole output is ε-DP *for one cell*. It
        does **not** protect a whole document (a row): changing c units costs c·ε. privclust says so
        in the guarantee it attaches to every fit:
        """),
        code("""
        dp = pc.DPTauCoClustering(n_row_clusters=K, n_col_clusters=K, epsilon=1.0,
                                  random_state=0).fit(A)
        g = dp.privacy_
        mechanisms = pd.DataFrame([m.to_dict() for m in g.mechanisms])
        pn.Column(pn.pane.Alert(f"**{g.summary()}**\\n\\n" + "\\n".join(f"- {w}" for w in g.warnings),
                                alert_type="warning"),
                  pn.pane.DataFrame(mechanisms, index=False, max_rows=8))
        """),
        md("""
        ## 3. Fast-τCC versus DP-τCC

        Left column: the matrix reordered by Fast-τCC's partitions (non-private) and by DP-τCC's
        released partitions; a good co-clustering shows dark blocks. Right column: the exact
        contingency table of the DP partitions (computed on the raw data, for teaching) and the
        **noisy table** DP-τCC releases. Move ε: at small ε the assignments are nearly random and the
        table is mostly noise; around ε ≈ 1 the blocks appear. The NMI compares the row partition with
        the document classes (for the DP labels, the released ones).
        """),
        code("""
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


        eps_cc = pn.widgets.DiscreteSlider(name="ε", options=[0.05, 0.1, 0.3, 1.0, 3.0, 10.0], value=1.0)
        seed_cc = pn.widgets.IntSlider(name="random seed", start=0, end=9, value=0)
        pn.Column(pn.Row(eps_cc, seed_cc), pn.bind(cocluster_view, eps_cc, seed_cc))
        """),
        md("""
        ## 4. The dashboard's view

        The dashboard's settings panel and *Co-clusters* view, on a demo block-count matrix (public
        synthetic data: nothing is spent). Switch between DP-τCC and Fast-τCC, change ε or the
        number of iterations I, and compare the released table with the exact one.
        """),
        code("""
        settings = SettingsModel(task="cocluster", algorithm="dptaucc", epsilon=1.0,
                                 n_row_clusters=3, n_col_clusters=3)
        lab = Lab(data=DataModel(preset="block_counts", n_samples=300, n_clusters=3, seed=0),
                  settings=settings)
        pn.Row(pn.Column(SettingsPanel(lab=lab), width=340), CoclustersView(lab=lab))
        """),
        md("""
        ## 5. NMI versus ε (reduced Fig. 2) and τ̂ versus iterations (Fig. 3)

        For each available real matrix (or the synthetic one) and each ε: the NMI between the
        document classes and DP-τCC's rows, averaged over trials with rows and columns permuted
        before each run, as the authors' scripts do. Two row labelings are scored: the **released**
        labels, and the paper's evaluation labels (`eval_row_labels_`: each raw row assigned to its
        nearest noisy prototype, which reads the raw data, so it is **not private**, evaluation
        only). The dotted lines are Fast-τCC. Below: τ̂_{R|C} of the released table as the number of
        iterations I grows; more iterations split the same ε into smaller pieces.
        """),
        code("""
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
                make = (lambda eps, seed, k=k: pc.DPTauCoClustering(
                    n_row_clusters=k, n_col_clusters=k, epsilon=eps, random_state=seed))
                df = run_sweep(make, Mp, EPSILONS, n_trials=1,
                               score=lambda est, X, yp=yp: nmi_score(est, X, yp), random_state=trial)
                nmi_frames.append(df.assign(method=f"{name}: DP-τCC", trial=trial))
            fast_nmi = metrics.nmi(y, pc.TauCoClustering(n_row_clusters=k, n_col_clusters=k,
                                                         random_state=0).fit(M).row_labels_)
            fast_lines.append(hv.HLine(fast_nmi).opts(color="black", line_dash="dotted"))
            for n_iter in ITERATIONS:
                make = (lambda eps, seed, k=k, n_iter=n_iter: pc.DPTauCoClustering(
                    n_row_clusters=k, n_col_clusters=k, epsilon=eps, n_iter=n_iter,
                    random_state=seed))
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
        (fig2 + fig2_eval + fig3).cols(1)
        """),
    ]


# ------------------------------------------------------------------------------------------------
def build(name, cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, (kind, text) in enumerate(cells):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(text)
        cell.id = f"{name[:2]}-{i:02d}"   # stable ids: regenerating gives small diffs
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def main(names=None):
    for name, fn in NOTEBOOKS.items():
        if names and name not in names:
            continue
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(name, fn()), path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
