"""The Plan tab: planning on private data reads no record and charges nothing; Apply sets the
sidebar only; Stop stops; one browser run (private upload -> plan -> curves and recommendation,
ledger untouched, nothing fetched from another host)."""

import io
import re
import time

import holoviews as hv
import numpy as np
import pytest
from bokeh.document import Document

from privclust.app.page import create_app
from privclust.app.state import Lab
from privclust.app.state.plan import ENSEMBLE, ONE_TWIN, SAMPLE, PlanModel
from privclust.app.views.plan import PlanView, figure
from privclust.core.data import Dataset

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

CURATOR_DATA_PATHS = ("prepare", "cost", "release", "release_plan", "owner_fit", "owner_evaluate")


class ShapeOnlyDataset(Dataset):
    """A loaded private dataset after the fact: its records raise on any read; only its public
    shape (the matrix's dimensions) is left."""

    @property
    def X(self):
        raise AssertionError("the Plan tab read the private records")

    @property
    def n_samples(self):
        return self.__dict__["X"].shape[0]

    @property
    def n_features(self):
        return self.__dict__["X"].shape[1]

    @property
    def shape(self):
        return self.__dict__["X"].shape

    @property
    def is_sparse(self):
        return False


def private_kmeans_lab(csv_payload, n=600, name="private.csv"):
    lab = Lab()
    assert lab.data.upload(name, csv_payload(n=n, d=3, seed=5)), lab.data.error
    lab.settings.param.update(task="kmeans", lower=-1.0, upper=1.0, n_clusters=3)
    assert lab.mode == "private" and lab.ledger.curator is not None
    return lab


def seal(lab, monkeypatch):
    """From here on any read of the records, and any Curator call that reads them or charges,
    fails the test; returns the calls made to the Curator."""
    calls = []
    ds = lab.data.dataset
    ds.__class__ = ShapeOnlyDataset
    curator = lab.ledger.curator
    for name in CURATOR_DATA_PATHS:

        def spy(*a, _name=name, **k):
            calls.append(_name)
            raise AssertionError(f"the Plan tab called Curator.{_name}")

        monkeypatch.setattr(curator, name, spy)
    return calls


def ledger_state(lab):
    lg = lab.ledger.ledger
    return (lg.spent, len(lg.history), len(lab.ledger.curator.releases()))


@pytest.mark.slow
def test_plan_on_private_data_reads_no_record_and_charges_nothing(
    ledger_env, csv_payload, monkeypatch
):
    lab = private_kmeans_lab(csv_payload)
    view = PlanView(lab=lab)
    before, runs = ledger_state(lab), lab.n_runs
    calls = seal(lab, monkeypatch)
    view.model.param.update(epsilons=[0.5, 2.0, 10.0], n_trials=2)
    assert view.model.start(wait=True), view.model.status
    result, rec = view.model.result, view.model.recommendation
    assert result is not None and rec is not None, view.model.status
    assert result.facts.shape == (600, 3) and result.facts.unit == "replace"
    assert set(result.summary.algorithm) == {
        "ckm",
        "dplloyd",
        "dplloyd_improved",
        "lsh_kmeans",
        "balcan_kmeans",
    }
    assert len(result.trials) == 5 * 3 * 2 and not result.stopped
    assert calls == [] and ledger_state(lab) == before == ((0.0, 0.0), 0, 0)
    assert lab.result is None and lab.n_runs == runs
    assert "Nothing was charged" in view.model.status
    assert "Cheapest" in view.rec_md.object or "reaches the target" in view.rec_md.object
    view.__panel__().get_root(Document())  # every pane renders from the sealed dataset


def test_the_plan_tab_and_the_sidebar_say_which_private_kmeans_to_use(
    ledger_env, csv_payload, monkeypatch
):
    """From public facts only (sealed records): the Plan tab names recommend_kmeans' pick for
    (n, d, k, eps), follows k and epsilon, and asks for n where it is not public; the k-means
    sidebar says the same on demo data."""
    from privclust.app.views import SettingsPanel
    from privclust.core import algorithms as registry
    from privclust.core import recommend_kmeans

    lab = private_kmeans_lab(csv_payload)
    seal(lab, monkeypatch)
    view = PlanView(lab=lab)
    label = registry.for_class_name(
        recommend_kmeans(600, 3, 3, lab.settings.epsilon, "replace").estimator
    ).label
    text = view.kmeans_md.object
    assert "Which private k-means" in text and f"**{label}**" in text and "n = 600" in text
    lab.settings.param.update(n_clusters=5, epsilon=2.0)
    assert "k = 5, ε = 2:" in view.kmeans_md.object
    lab.settings.task = "subspace"
    assert view.kmeans_md.object == ""

    demo = Lab()
    demo.settings.task = "kmeans"
    n, d = demo.data.dataset.shape
    panel = SettingsPanel(lab=demo)
    pick = recommend_kmeans(n, d, demo.settings.n_clusters, demo.settings.epsilon, "replace")
    sidebar = panel._kmeans_advice().object
    assert registry.for_class_name(pick.estimator).label in sidebar and f"n = {n}" in sidebar
    demo.settings.task = "subspace"
    assert panel._kmeans_advice().object == ""


def test_kmeans_advice_without_a_public_n_asks_for_it():
    from privclust.app.state.plan import kmeans_advice

    assert "declare the number of records" in kmeans_advice(None, 16, 8, 1.0)
    text = kmeans_advice(20_000, 16, 64, 1.0, "add_remove")
    assert "letter (n=20000, d=16, k=64" in text


def test_the_figure_has_bands_medians_target_and_analytic_lines(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    model = PlanModel(lab=lab, epsilons=[0.5, 5.0], n_trials=2)
    assert model.start(wait=True), model.status
    fig = figure(model.result, "relative_sse", model.recommendation["threshold"])
    assert len(fig.traverse(lambda el: el, [hv.Area])) == 5  # one band per algorithm
    curves = fig.traverse(lambda el: el.label, [hv.Curve])
    assert "DPLloyd (uniform init)" in curves and "DPLloyd (uniform init): analytic" in curves
    hlines = fig.traverse(lambda el: el.data, [hv.HLine])
    assert hlines == [pytest.approx(1.2)]
    assert hv.Store.lookup_options("bokeh", fig, "plot").kwargs.get("logx") is True


@pytest.mark.slow
def test_totals_compare_basic_and_tight_and_risk_is_in_words(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    view = PlanView(lab=lab)
    view.model.param.update(epsilons=[1.0, 5.0, 20.0, 100.0], n_trials=2, threshold=1.5)
    assert view.model.start(wait=True), view.model.status
    rec, totals = view.model.recommendation, view.model.totals
    assert rec["best"] is not None, view.rec_md.object
    label, acc = totals[0]
    cost = rec["per_algorithm"][rec["best"]]["cost"]
    assert acc.basic == pytest.approx(cost)  # one release: basic = its own cost
    assert acc.pld_epsilon <= acc.basic[0] + 1e-9
    assert "basic composition" in view.totals_md.object and "PLD" in view.totals_md.object
    assert f"At epsilon = {cost[0]:g}" in view.risk_md.object
    assert cost[0] in set(view.risk_table.object["ε"])


@pytest.mark.slow
def test_apply_sets_the_sidebar_only(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    # one twin (median rule): the ensemble's pessimistic end reaches this target at no ε here
    model = PlanModel(lab=lab, epsilons=[0.5, 2.0, 10.0], n_trials=2, twin=ONE_TWIN)
    assert model.start(wait=True), model.status
    before, runs = ledger_state(lab), lab.n_runs
    reached = model.reached()
    assert reached, model.recommendation
    for alg in reached:
        assert model.apply(alg), model.status
        eps = model.recommendation["per_algorithm"][alg]["epsilon"]
        key = {
            "ckm": "compressive",
            "lsh_kmeans": "lsh_kmeans",
            "balcan_kmeans": "balcan_kmeans",
        }.get(alg, "dplloyd")
        assert lab.settings.algorithm == key and lab.settings.epsilon == eps
        if key == "dplloyd":
            assert lab.settings.algo.init == (
                "sphere_packing" if alg == "dplloyd_improved" else "uniform"
            )
        assert "Nothing was released or charged" in model.status
    assert ledger_state(lab) == before and lab.result is None and lab.n_runs == runs
    assert lab.stale  # private mode: the new settings wait for Release
    # Apply switches back to the plan's task if the sidebar moved on
    lab.settings.task = "subspace"
    assert model.result is None and not model.apply()  # a task change discards the plan


def test_stop_stops_the_plan(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    model = PlanModel(lab=lab, n_trials=20)
    model.param.watch(lambda e: model.stop() if e.new > 0 else None, "progress")
    assert model.start(wait=True), model.status
    full = 3 * len(model.epsilons) * 20
    assert model.result.stopped and 0 < len(model.result.trials) < full / 2
    assert model.status.startswith("Stopped") and not model.running


def test_add_remove_ledger_needs_a_declared_count(ledger_env, csv_payload):
    from privclust.core import Curator
    from privclust.core.privacy import Ledger

    lab = private_kmeans_lab(csv_payload)
    lab.ledger.curator = Curator(lab.data.dataset, Ledger(3.0, unit="add_remove"))
    view = PlanView(lab=lab)
    assert view.n_declared.visible and "declare it" in view.facts_md.object
    view.model.param.update(epsilons=[1.0], n_trials=1)
    assert not view.model.start() and "declare n" in view.model.status
    view.model.n_declared = 2000
    assert "n = 2000 (declared)" in view.facts_md.object
    assert view.model.start(wait=True), view.model.status
    assert view.model.result.facts.shape == (2000, 3)
    assert view.model.result.facts.unit == "add_remove"
    assert lab.ledger.curator.ledger.spent == (0.0, 0.0)


def test_user_strings_are_escaped_and_the_tab_is_registered(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload, name="<img src=x onerror=alert(1)>.csv")
    view = PlanView(lab=lab)
    assert "<img" not in view.facts_md.object and "&lt;img" in view.facts_md.object
    app = create_app(lab)
    assert "PlanView" in app.views
    app.views["PlanView"].__panel__().get_root(Document())


def test_demo_data_plans_from_the_shape_and_the_target_recomputes(ledger_env):
    lab = Lab()
    lab.data.preset = "block_counts"  # a preset brings its own size; then n is set
    lab.data.n_samples = 200
    assert lab.settings.task == "cocluster"
    model = PlanModel(lab=lab, epsilons=[1.0, 20.0], n_trials=2)
    assert model.metric == "nmi" and model.op == ">=" and model.relative
    assert model.start(wait=True), model.status
    assert model.result.facts.n_samples == 200
    first = model.recommendation["threshold"]
    model.threshold = 0.4
    model.join()
    assert model.recommendation["threshold"] == pytest.approx(first / 2)


@pytest.mark.slow
def test_commit_charges_the_shown_tight_total_once_then_releases(
    ledger_env, csv_payload, monkeypatch
):
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "40")
    lab = private_kmeans_lab(csv_payload)
    view = PlanView(lab=lab)
    view.model.param.update(
        epsilons=[0.5, 1.0, 2.0, 5.0], n_trials=2, threshold=5.0, twin=ONE_TWIN
    )  # several algorithms reach the target
    assert view.model.start(wait=True), view.model.status
    assert ledger_state(lab) == ((0.0, 0.0), 0, 0)  # planning spent nothing
    choices = view.model.commit_choices()
    assert set(choices.values()) == {"best", "all"}, view.model.recommendation
    assert view.commit_btn.visible and view.commit_choice.options == choices
    shown = dict(view.model.totals)
    label = next(k for k, v in choices.items() if v == "all")
    acc = shown[label]
    assert acc.charge[0] < acc.basic[0]  # tight below the basic sum
    assert f"ε {acc.charge[0]:.6g}" in view.totals_md.object
    assert view.model.commit("all", wait=True), view.model.status
    lg = lab.ledger.ledger
    assert len(lg.history) == 1  # ONE entry for the whole plan
    assert (lg.history[0].epsilon, lg.history[0].delta) == pytest.approx(acc.charge, rel=1e-12)
    assert lg.spent == pytest.approx(acc.charge, rel=1e-12)
    info = view.model.committed
    ids = [r["id"] for r in info["releases"]]
    assert len(ids) == len(acc.releases) >= 2
    assert {r.id for r in lab.ledger.curator.releases()} == set(ids)
    assert {r.charge_id for r in lab.ledger.curator.releases()} == {lg.history[0].id}
    assert lab.ledger.spent == lg.spent  # the sidebar's ledger refreshed
    assert view.model.status.startswith("Committed") and f"#{ids[0]}" in view.model.status
    assert "Plan committed" in view.committed_md.object
    assert f"ε {acc.charge[0]:.6g}" in view.committed_md.object
    view.__panel__().get_root(Document())


@pytest.mark.slow
def test_commit_over_budget_is_refused_before_anything_runs(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)  # budget ε 3
    model = PlanModel(lab=lab, epsilons=[5.0, 20.0], n_trials=1, twin=ONE_TWIN)
    model.threshold = 50.0
    assert model.start(wait=True), model.status
    cost = dict(model.totals)[next(iter(model.commit_choices()))].charge
    assert cost[0] > 3.0
    assert model.commit("best", wait=True)
    assert model.status.startswith("Refused") and "othing was charged or run" in model.status
    assert ledger_state(lab) == ((0.0, 0.0), 0, 0) and model.committed is None


def test_commit_needs_a_plan_and_private_data(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    model = PlanModel(lab=lab)
    assert not model.commit() and "Run a plan first" in model.status
    demo = Lab()
    demo.data.param.update(preset="block_counts", n_samples=200)
    model = PlanModel(lab=demo, epsilons=[1.0, 20.0], n_trials=1)
    assert model.start(wait=True), model.status
    assert model.commit_choices() == {}
    assert not model.commit("best") and "private data" in model.status


# ---- twins: ensemble, one twin, public sample ----------------------------------------------------
def sample_csv(m=60, d=3, seed=7, labels=True):
    """A public sample: m records x d features (c0, c1, ...) and, optionally, a 'cls' column."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d)) / 3
    head = [f"c{j}" for j in range(d)] + (["cls"] if labels else [])
    rows = [
        ",".join(f"{v:.6f}" for v in x) + (f",g{i % 3}" if labels else "") for i, x in enumerate(X)
    ]
    return "\n".join([",".join(head)] + rows) + "\n", X


def spy_plan_utility(monkeypatch):
    from privclust.core.experiments import planner

    calls, real = [], planner.plan_utility

    def spy(facts, **kw):
        calls.append((facts, kw))
        return real(facts, **kw)

    monkeypatch.setattr(planner, "plan_utility", spy)
    return calls


@pytest.mark.slow
def test_each_twin_mode_is_passed_to_the_planner_and_named_in_the_caveats(
    ledger_env, csv_payload, monkeypatch
):
    lab = private_kmeans_lab(csv_payload)
    calls = spy_plan_utility(monkeypatch)
    model = PlanModel(lab=lab, epsilons=[1.0, 10.0], n_trials=4)
    assert model.twin == ENSEMBLE and model.sample is None  # the default without a sample
    expected = {ENSEMBLE: ("papers", 4, 1), ONE_TWIN: (None, None, 4), SAMPLE: (None, 4, 1)}
    payload, X = sample_csv(labels=False)
    for mode, (prior, n_twins, n_trials) in expected.items():
        if mode == SAMPLE:
            assert model.load_sample("public.csv", payload), model.sample_error
            assert model.twin == SAMPLE  # chosen when a sample loads
        else:
            model.twin = mode
        assert model.start(wait=True), model.status
        facts, kw = calls[-1]
        assert (kw["prior"], kw["n_twins"], kw["n_trials"]) == (prior, n_twins, n_trials)
        assert model.result.prior == prior
        first = model.recommendation["caveats"][0]
        assert "benchmarks/results/planner/calibration.md" in first
        if mode == SAMPLE:
            np.testing.assert_allclose(facts.public_sample, X, atol=1e-6)
            assert facts.public_labels is None and len(set(model.result.trials.twin)) == 4
            assert "public sample 'public.csv' (60 records)" in first
            assert "THIS MODE, with a 10 % public sample" in first and "89 %" in first
        else:
            assert facts.public_sample is None
            assert (
                "THIS MODE, facts alone" if mode == ENSEMBLE else "THIS MODE, one twin at defaults"
            ) in first
            assert "40 %" in first and "geometry" in first
    model.clear_sample()
    assert model.twin == ENSEMBLE and model.sample is None
    model.twin = SAMPLE
    assert not model.start() and "load a public sample first" in model.status


def test_public_sample_errors_name_the_file_row_and_column(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)  # 3 features
    model = PlanModel(lab=lab)
    cases = [
        (
            "wide.csv",
            sample_csv(d=4, labels=False)[0],
            "",
            ["wide.csv", "4 feature columns", "has 3"],
        ),
        (
            "labelled.csv",
            sample_csv()[0],
            "",
            ["labelled.csv", "row 2, column 4", "'g0' is not a number", "name it as the label"],
        ),
        (
            "numeric.csv",
            "c0,c1,c2,cls\n0.1,0.2,0.3,1\n0.4,0.5,0.6,0\n",
            "",
            ["numeric.csv", "4 feature columns", "name its label column"],
        ),
        (
            "text.csv",
            "c0,c1,c2\n0.1,0.2,0.3\n0.4,oops,0.6\n",
            "",
            ["text.csv", "row 3, column 2", "'oops' is not a number"],
        ),
        (
            "nolabel.csv",
            sample_csv(labels=False)[0],
            "cls",
            ["nolabel.csv", "no column named 'cls'"],
        ),
        ("notes.pdf", "%PDF", "", ["notes.pdf", "unsupported file type"]),
        ("empty.csv", "", "", ["empty.csv", "empty"]),
    ]
    for name, payload, label, words in cases:
        model.sample_label = label
        assert not model.load_sample(name, payload)
        assert all(w in model.sample_error for w in words), model.sample_error
        assert "Traceback" not in model.sample_error
        assert model.sample is None and model.twin == ENSEMBLE
    model.sample_label = "cls"  # the label column, by name
    payload, X = sample_csv()
    assert model.load_sample("labelled.csv", payload), model.sample_error
    np.testing.assert_allclose(model.sample["X"], X, atol=1e-6)
    assert list(model.sample["labels"][:4]) == ["g0", "g1", "g2", "g0"]
    buf = io.BytesIO()  # .npy: features only
    np.save(buf, X[:, :2])
    assert not model.load_sample("two.npy", buf.getvalue())
    assert "two.npy: 2 feature columns" in model.sample_error
    assert model.sample["name"] == "labelled.csv"  # the good one is kept
    lab.data.param.update(source="preset", preset="gaussian_mixture")  # other data: sample dropped
    assert model.sample is None and model.twin == ENSEMBLE


@pytest.mark.slow
def test_planning_from_a_public_sample_reads_no_record_and_charges_nothing(
    ledger_env, csv_payload, monkeypatch
):
    lab = private_kmeans_lab(csv_payload)
    view = PlanView(lab=lab)
    before, runs = ledger_state(lab), lab.n_runs
    calls = seal(lab, monkeypatch)  # from here on, reading the records fails
    m = view.model
    assert "never a part of the private data" in view.sample_md.object
    view.sample_label.value = "cls"
    view.sample_file.value = {"public.csv": sample_csv(m=40)[0]}  # what the drop zone sets
    assert m.sample is not None and m.twin == SAMPLE, m.sample_error
    assert "Public sample loaded" in view.sample_md.object and view.forget_btn.visible
    dropped = view.sample_file
    dropped.value = {"wide.csv": sample_csv(d=4, labels=False)[0]}  # refused: a fresh drop zone
    assert "wide.csv: row 1: no column named 'cls'" in view.sample_md.object
    assert m.sample["name"] == "public.csv"  # the loaded one is kept
    assert view.sample_file is not dropped and view.twins[2] is view.sample_file
    m.param.update(epsilons=[1.0, 10.0], n_trials=4)
    assert m.start(wait=True), m.status
    assert m.result is not None and m.result.facts.public_sample.shape == (40, 3)
    assert m.result.facts.shape == (600, 3) and len(m.result.trials) == 4 * 5 * 2
    assert calls == [] and ledger_state(lab) == before == ((0.0, 0.0), 0, 0)
    assert lab.result is None and lab.n_runs == runs
    assert "bootstrap twins of the public sample" in m.status and "Nothing was charged" in m.status
    assert "public sample" in view.rec_md.object
    view.__panel__().get_root(Document())


def test_a_sample_of_the_subspace_family_needs_its_labels(ledger_env, csv_payload):
    lab = private_kmeans_lab(csv_payload)
    lab.settings.param.update(task="subspace", n_clusters=2, subspace_dim=1)
    model = PlanModel(lab=lab, epsilons=[1.0], n_trials=2)
    payload = "c0,c1,c2\n" + "".join(f"{0.1 * (i % 5)},0.1,0.2\n" for i in range(10))
    assert model.load_sample("unlabelled.csv", payload), model.sample_error
    assert not model.start()
    assert model.status.startswith("Cannot plan yet: unlabelled.csv: public_labels are needed")
    assert lab.ledger.ledger.spent == (0.0, 0.0)


# ---- browser --------------------------------------------------------------------------------------
def open_plan_on_private(page, server, path, n, d, seed):
    """Open the page, upload a private CSV of n x d records, choose k-means and open the Plan
    tab; returns (requests seen, console messages, page errors) for assert_local_and_clean."""
    from browser import expect_text, open_page, open_tab, upload, write_csv

    seen = []
    page.on("request", lambda r: seen.append(r.url))
    msgs, errors = open_page(page, server)
    upload(page, write_csv(path, n=n, d=d, seed=seed))
    expect_text(page, ".pc-private", "PRIVATE")
    page.locator(".pc-task select").first.select_option(label="k-means")
    open_tab(page, "Plan")
    expect_text(page, ".pc-plan-facts", f"n = {n}")
    return seen, msgs, errors


@pytest.mark.ui
def test_plan_tab_in_the_browser_on_private_data(page, server, tmp_path):
    from browser import assert_local_and_clean, expect_text, titles, wait_for

    t0 = time.perf_counter()
    seen, msgs, errors = open_plan_on_private(
        page, server, tmp_path / "plan-private.csv", n=1000, d=4, seed=31
    )
    expect_text(page, ".pc-plan-free", "charges nothing")
    t1 = time.perf_counter()
    page.get_by_role("button", name="Run plan").click()
    # five k-means algorithms since the coreset and DPHD joined the planner
    expect_text(page, ".pc-plan-status", "Done in", timeout=180_000)
    plan_s = time.perf_counter() - t1
    wait_for(
        page,
        lambda: any("predicted relative_sse" in t for t in titles(page)),
        what="the plan's curves",
    )
    expect_text(page, ".pc-plan-rec", "Cheapest")
    expect_text(page, ".pc-plan-total", "tight (PLD)")
    expect_text(page, ".pc-plan-risk", "Risk in words")
    page.get_by_role("button", name="Apply to the sidebar").click()
    expect_text(page, ".pc-plan-status", "Applied")
    expect_text(page, ".pc-ledger", "spent ε 0 ")
    assert_local_and_clean(server, seen, msgs, errors)
    print(
        f"\n[timing] plan in the browser {plan_s:.2f}s, test body {time.perf_counter() - t0:.2f}s"
    )


@pytest.mark.ui
def test_plan_from_a_public_sample_in_the_browser(page, server, tmp_path):
    """On private data: upload a public sample in the Plan tab, plan from it; the caveats name
    the sample mode and its calibration, and every row of the ledger file stays as it was."""
    from browser import assert_local_and_clean, expect_text, wait_for

    seen, msgs, errors = open_plan_on_private(
        page, server, tmp_path / "plan-private-s.csv", n=900, d=3, seed=53
    )
    expect_text(page, ".pc-plan-sample-info", "never a part of the private data")
    before = ledger_rows(server)
    payload, _ = sample_csv(m=50, d=3, seed=59)
    sample = tmp_path / "public-sample.csv"
    sample.write_text(payload)
    page.locator(".pc-plan-sample-label input").fill("cls")
    page.locator(".pc-plan-sample-label input").press("Enter")
    page.locator('.pc-plan-sample input[type="file"]').set_input_files(str(sample))
    expect_text(page, ".pc-plan-sample-info", "Public sample loaded")
    expect_text(page, ".pc-plan-sample-info", "50 records x 3 features, with labels")
    # the model sets the sample and the mode together, but the page hears the text's watcher
    # before the Select's link: its value may arrive a moment after the text
    twin = page.locator(".pc-plan-twin select").first
    wait_for(page, lambda: twin.input_value() == SAMPLE, what="the twins set to the sample")
    page.get_by_role("button", name="Run plan").click()
    expect_text(page, ".pc-plan-status", "Done in", timeout=60_000)
    expect_text(page, ".pc-plan-status", "bootstrap twins of the public sample")
    expect_text(page, ".pc-plan-rec", "THIS MODE, with a 10 % public sample")
    expect_text(page, ".pc-plan-rec", "public-sample.csv")
    assert ledger_rows(server) == before  # planning: the file is unchanged
    expect_text(page, ".pc-ledger", "spent ε 0 ")
    assert_local_and_clean(server, seen, msgs, errors)


def ledger_rows(server):
    """Every row of the served ledger file (all datasets): charges and stored releases."""
    import sqlite3

    path = server["log"].parent / "ledger.sqlite"
    with sqlite3.connect(path) as conn:
        charges = conn.execute(
            "SELECT id, dataset, epsilon, delta, what FROM charges ORDER BY id"
        ).fetchall()
        ledgers = conn.execute(
            "SELECT dataset, spent_epsilon, spent_delta FROM ledgers ORDER BY dataset"
        ).fetchall()
        releases = conn.execute(
            "SELECT id, charge_id, estimator FROM releases ORDER BY id"
        ).fetchall()
    return charges, ledgers, releases


@pytest.mark.ui
def test_commit_plan_in_the_browser_charges_the_shown_total_once(page, server, tmp_path):
    """On private data the plan's curves leave every row of the ledger file as it was; Commit
    adds ONE charge of exactly the tight total shown in the table, and the releases it ran."""
    from browser import assert_local_and_clean, expect_text, titles, wait_for

    seen, msgs, errors = open_plan_on_private(
        page, server, tmp_path / "plan-commit.csv", n=800, d=3, seed=47
    )
    before = ledger_rows(server)
    # a lax target: every algorithm reaches it at a small epsilon (the budget here is 2.5)
    page.locator(".pc-plan-threshold input").fill("1000")
    page.locator(".pc-plan-threshold input").press("Enter")
    page.get_by_role("button", name="Run plan").click()
    expect_text(page, ".pc-plan-status", "Done in", timeout=60_000)
    wait_for(
        page,
        lambda: any("predicted relative_sse" in t for t in titles(page)),
        what="the plan's curves",
    )
    expect_text(page, ".pc-plan-total", "charged if committed")
    assert ledger_rows(server) == before  # planning: the file is unchanged
    expect_text(page, ".pc-ledger", "spent ε 0 ")
    select = page.locator(".pc-plan-commit-choice select")
    labels = select.locator("option").all_inner_texts()
    label = next((x for x in labels if x.startswith("all ")), labels[0])
    select.select_option(label=label)
    table = page.locator(".pc-plan-total table").first.inner_text()
    row = next((line for line in table.splitlines() if line.startswith(label)), "")
    m = re.search(r"ε ([-+.\de]+), δ [-+.\de]+\s*$", row)  # the last column
    assert m, table
    shown_eps = m.group(1)
    page.get_by_role("button", name="Commit plan").click()
    expect_text(page, ".pc-plan-status", "Committed", timeout=60_000)
    expect_text(page, ".pc-plan-committed", "Plan committed")
    charges, ledgers, releases = ledger_rows(server)
    new = [c for c in charges if c not in before[0]]
    assert len(new) == 1, new  # ONE charge for the whole plan
    assert f"{float(new[0][2]):.6g}" == shown_eps  # exactly the shown tight total
    assert "plan of" in new[0][4]
    ran = [r for r in releases if r not in before[2]]
    assert ran and {r[1] for r in ran} == {new[0][0]}  # every release linked to it
    if label.startswith("all "):
        assert len(ran) == int(label.split()[1])
    spent = dict((d, e) for d, e, _ in ledgers)[new[0][1]]
    assert f"{float(spent):.6g}" == shown_eps  # the dataset's spent total
    expect_text(page, ".pc-ledger", f"spent ε {float(spent):g}")
    for rid, _, _ in ran:
        expect_text(page, ".pc-plan-committed", f"#{rid}")
    assert_local_and_clean(server, seen, msgs, errors)
    print(f"\n[commit] {label}: ε {shown_eps} charged once, {len(ran)} releases")
