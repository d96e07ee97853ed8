"""Dashboard models without a browser: modes, releases through the Curator (charging, exact
refusal, the release store), uploads, escaping, parameter widgets -> estimator parameters."""

import io
import json

import numpy as np
import pytest

from privclust.app import catalogue
from privclust.app.safety import UploadError, escape, parse_upload
from privclust.app.state import Lab, SettingsModel
from privclust.core import PrivateEstimator
from privclust.core.estimator import check_positive_int, epsilon_param
from privclust.core.privacy import Guarantee, Ledger

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class FakePrivate(PrivateEstimator):
    """A stand-in private estimator on the release protocol's base (plan -> charge -> fit)."""

    fits = 0
    fail = None  # a function(X) raising inside the fit (after the charge)
    _released = ("cluster_centers_",)

    def __init__(self, n_clusters=2, epsilon=1.0, ledger=None, random_state=None):
        self.n_clusters, self.epsilon, self.ledger = n_clusters, epsilon, ledger
        self.random_state = random_state

    def _plan(self, n_samples, n_features):
        check_positive_int(self.n_clusters, "n_clusters")
        return Guarantee(epsilon_param(self.epsilon), 0.0, "pure", "replace")

    def _fit(self, X, rng):
        type(self).fits += 1
        if type(self).fail is not None:
            type(self).fail(X)
        self.cluster_centers_ = rng.normal(size=(self.n_clusters, X.shape[1]))
        self.privacy_ = Guarantee(self.epsilon, 0.0, "pure", "replace")


FAKE = catalogue.AlgorithmSpec("fake", "Fake DP k-means", "kmeans", FakePrivate)


def csv_bytes(n=60, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(f"f{j}" for j in range(d)), comments="")
    return buf.getvalue().encode()


@pytest.fixture
def private_lab(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "2.5")
    monkeypatch.setenv("PRIVCLUST_BUDGET_DELTA", "1e-4")
    FakePrivate.fits, FakePrivate.fail = 0, None
    lab = Lab(specs=[FAKE], ledger_path=str(tmp_path / "ledger.sqlite"))
    assert lab.data.upload("records.csv", csv_bytes())
    lab.settings.param.update(task="kmeans", algorithm="fake", epsilon=1.0)
    return lab


def test_demo_mode_runs_on_changes_without_budget():
    lab = Lab()
    assert lab.mode == "demo" and not lab.ledger.active
    assert lab.result is not None and lab.result.spec.private
    runs = lab.n_runs
    lab.settings.epsilon = 5.0
    assert lab.n_runs == runs + 1
    assert lab.result.settings["epsilon"] == 5.0
    assert lab.ledger.ledger is None
    assert lab.show_raw  # demo data: everything may be shown


def test_private_mode_runs_only_on_release_and_charges_once(private_lab):
    lab = private_lab
    assert lab.mode == "private" and lab.result is None and lab.ledger.active
    assert not lab.show_raw and lab.settings.owner_view is False
    lab.settings.epsilon = 0.5  # a slider change alone runs nothing
    assert FakePrivate.fits == 0 and lab.ledger.spent[0] == 0.0
    lab.settings.epsilon = 1.0
    lab.param.trigger("release")
    assert FakePrivate.fits == 1 and lab.ledger.spent[0] == pytest.approx(1.0)
    assert len(lab.ledger.history) == 1 and lab.result is not None
    first = lab.result
    assert first.release is not None and first.estimator is first.release  # no estimator
    lab.param.trigger("release")  # identical request: the release store, no second charge
    assert FakePrivate.fits == 1 and lab.ledger.spent[0] == pytest.approx(1.0)
    assert lab.result.from_cache and "release store" in lab.message
    np.testing.assert_array_equal(
        lab.result.estimator.cluster_centers_, first.estimator.cluster_centers_
    )


def test_refusal_when_budget_would_be_exceeded(private_lab):
    lab = private_lab
    lab.do_release()
    lab.settings.seed = 1  # the seed is ignored on private data: the same request, no charge
    assert lab.do_release().from_cache and lab.ledger.spent[0] == pytest.approx(1.0)
    lab.settings.n_clusters = 4
    lab.do_release()  # 2.0 of 2.5 spent
    assert lab.ledger.spent[0] == pytest.approx(2.0)
    lab.settings.n_clusters = 5
    assert lab.do_release() is None
    assert lab.message_kind == "danger" and "Refused" in lab.message
    assert FakePrivate.fits == 2 and lab.ledger.spent[0] == pytest.approx(2.0)
    lab.settings.epsilon = 0.5  # still fits
    assert lab.do_release() is not None
    assert lab.ledger.remaining[0] == pytest.approx(0.0)


def test_ledger_persists_across_sessions(private_lab, tmp_path):
    private_lab.do_release()
    again = Lab(specs=[FAKE], ledger_path=str(tmp_path / "ledger.sqlite"))
    again.data.upload("records.csv", csv_bytes())
    assert again.ledger.spent[0] == pytest.approx(1.0)
    assert again.ledger.history[0]["what"].startswith("FakePrivate")


def test_ledger_refusal_is_a_message_not_a_crash(private_lab, monkeypatch):
    lab = private_lab
    lab.ledger.ledger.charge(2.0, 0.0, what="elsewhere")  # another session spent it
    from privclust.app.state import releases

    # skip the early check: the ledger itself refuses the charge
    monkeypatch.setattr(releases, "budget_check", lambda curator, prepared: None)
    assert lab.do_release() is None
    assert "Refused" in lab.message and FakePrivate.fits == 0
    assert lab.ledger.spent[0] == pytest.approx(2.0)


def test_refusal_is_exact_not_a_float_tolerance(tmp_path, monkeypatch):
    """Ten releases of ε 0.1 fit a budget of 1.0 exactly; the eleventh is refused (decimal
    arithmetic in the ledger, no float tolerance in the page)."""
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "1.0")
    lab = Lab(specs=[FAKE], ledger_path=str(tmp_path / "ledger.sqlite"))
    lab.data.upload("records.csv", csv_bytes())
    lab.settings.param.update(task="kmeans", algorithm="fake", epsilon=0.1)
    for k in range(1, 11):
        lab.settings.n_clusters = k + 3
        assert lab.do_release() is not None, lab.message
    lab.settings.n_clusters = 20
    assert lab.do_release() is None and "Refused" in lab.message
    assert lab.ledger.remaining[0] == 0.0


def test_a_failure_on_private_data_withholds_its_message_until_the_owner_view(
    private_lab, monkeypatch
):
    """A fit's error message can quote the data (here the number of records): the analyst sees
    its type only; the data owner view shows it, without re-running or charging."""
    lab = private_lab

    def fail(X):
        raise ValueError(f"{X.shape[0]} records are too few")

    monkeypatch.setattr(FakePrivate, "fail", staticmethod(fail))
    assert lab.do_release() is None
    assert "ValueError" in lab.message and "60 records" not in lab.message
    assert "stays spent" in lab.message and lab.ledger.spent[0] == pytest.approx(1.0)
    lab.settings.owner_view = True
    assert "60 records are too few" in lab.message and "not private" in lab.message
    assert lab.ledger.spent[0] == pytest.approx(1.0)
    # a failure while building the estimator (the settings, before any data is read) is shown
    lab.settings.owner_view = False
    monkeypatch.setattr(
        FakePrivate,
        "__init__",
        lambda self, **kw: (_ for _ in ()).throw(ValueError("n_clusters must be positive")),
    )
    lab.settings.n_clusters = 6
    assert lab.do_release() is None and "n_clusters must be positive" in lab.message
    assert "Nothing was run or charged" in lab.message


def test_analyst_view_shows_the_number_of_records_only_when_public(private_lab):
    """n is shown to the analyst only when the Curator lists it among the public facts (the
    replace-one unit, the default ledger); under add/remove it stays hidden."""
    from privclust.app.views import DataPanel, DataPreview

    lab = private_lab
    summary, preview = DataPanel(lab=lab)._summary, DataPreview(lab=lab)._preview
    assert lab.ledger.public_facts()["n_samples"] == 60
    texts = [summary().object, preview()[0].object]
    assert all("60 records x 3 features" in t and "public" in t for t in texts)
    lab.ledger.curator.public_facts = lambda: {"n_features": 3}  # as under add/remove
    texts = [summary().object, preview()[0].object]
    assert all("3 features" in t and "60" not in t and "hidden" in t for t in texts)
    lab.settings.owner_view = True
    assert "60 records x 3 features" in summary().object
    assert "60 records x 3 features" in preview()[0].object


def test_owner_view_is_off_by_default_and_reset_for_private_data(private_lab):
    lab = private_lab
    lab.settings.owner_view = True
    assert lab.show_raw
    lab.data.upload("other.csv", csv_bytes(seed=1))
    assert lab.settings.owner_view is False and not lab.show_raw


def test_sessions_are_independent(tmp_path):
    a, b = Lab(specs=[FAKE]), Lab(specs=[FAKE])
    a.data.upload("a.csv", csv_bytes(seed=3))
    assert a.mode == "private" and b.mode == "demo"
    assert a.ledger.curator is not None and b.ledger.curator is None
    assert b.data.dataset.public


@pytest.mark.parametrize(
    "name, payload, expected",
    [
        ("bad.csv", b"a,b\n1,2\n3,oops\n", "row"),
        ("nan.csv", b"a,b\n1,2\n3,nan\n", "NaN"),
        ("empty.csv", b"", "empty"),
        ("x.exe", b"MZ....", "unsupported"),
    ],
)
def test_upload_errors_are_readable(name, payload, expected):
    with pytest.raises(UploadError, match=expected) as info:
        parse_upload(name, payload)
    assert "Traceback" not in str(info.value)


def test_upload_size_limit_and_no_pickle():
    with pytest.raises(UploadError, match="larger than"):
        parse_upload("big.csv", b"1,2\n" * 1000, max_bytes=100)
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(UploadError):
        parse_upload("obj.npy", buf.getvalue())


def test_upload_error_keeps_previous_dataset_and_is_escaped():
    lab = Lab(specs=[FAKE])
    before = lab.data.dataset
    assert not lab.data.upload("<img src=x onerror=alert(1)>.csv", b"a,b\n1,zz\n")
    assert lab.data.dataset is before and lab.data.error
    from privclust.app.views import DataPanel

    pane = DataPanel(lab=lab).error
    assert pane.visible and "<img" not in pane.object and "&lt;img" in pane.object


def test_escape_neutralises_html_and_markdown():
    text = escape("<script>x</script> ![i](http://evil.example/p.png) [l](javascript:1)")
    assert "<" not in text and "](" not in text and "&lt;script&gt;" in text


@pytest.mark.parametrize("spec", catalogue.SPECS, ids=lambda s: s.key)
def test_widgets_map_to_estimator_parameters(spec):
    settings = SettingsModel(task=spec.task)
    settings.algorithm = spec.key
    if spec.params:
        name, p = next(iter(spec.params.items()))
        assert name in settings.algo.param
    values = settings.values(spec)
    est = spec.build(values, random_state=7, ledger=None)
    # scikit-learn convention: the constructor stores each parameter under its own name
    for name, value in values.items():
        if name in ("lower", "upper"):
            assert tuple(est.bounds) == (values["lower"], values["upper"])
        else:
            assert getattr(est, name) == value, name
    assert est.random_state == 7


def test_privacy_kinds_come_from_the_estimators_plans():
    settings = SettingsModel(task="subspace")
    gibbs = catalogue.by_key("gibbs")
    values = settings.values(gibbs)
    assert gibbs.kind(values) == "asymptotic" and "limit" in catalogue.KIND_TEXT["asymptotic"]
    assert gibbs.kind({**values, "init": "ssc"}) == "none"  # the estimator's plan says so
    dptaucc = catalogue.by_key("dptaucc")
    assert dptaucc.kind(SettingsModel(task="cocluster").values(dptaucc)) == "cell"
    assert (
        "one cell" in catalogue.KIND_TEXT["cell"]
        and "not a whole row" in catalogue.KIND_TEXT["cell"]
    )
    assert catalogue.by_key("kmeans").kind({}) == "none"
    assert settings.title(gibbs) == "Gibbs sampler (asymptotic)"


def test_report_exports_only_released_outputs(private_lab):
    from privclust.app.export import report_csv, report_payload

    lab = private_lab
    result = lab.do_release()
    payload = json.loads(json.dumps(report_payload(result)))
    assert set(payload["released"]) == {"cluster_centers_"}
    np.testing.assert_array_equal(
        payload["released"]["cluster_centers_"], result.release.cluster_centers_
    )
    assert payload["guarantee"]["kind"] == "pure"
    assert payload["parameters"] == json.loads(json.dumps(result.release.params))
    assert report_csv(result).startswith("output,row,")
    from privclust.app.export import csv_cell

    assert csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and csv_cell("-1.5") == "-1.5"


def test_gibbs_runner_streams_and_stops():
    from privclust.app.server.sampler import GibbsRunner
    from privclust.core import GibbsSubspaceClustering
    from privclust.core.data import make_union_of_subspaces

    ds = make_union_of_subspaces(200, 5, 2, 2, 0.05, random_state=0)
    runner = GibbsRunner()
    est = GibbsSubspaceClustering(
        2, 2, epsilon=1.0, n_iter=40, n_chains=2, record_every=5, random_state=0
    )
    runner.start(est, ds.X)
    runner.join(60)
    rows = [r for record in runner.drain_records() for r in record]
    assert runner.status == "finished" and not runner.running
    assert len({r["iteration"] for r in rows}) == 8 and {r["chain"] for r in rows} == {0.0, 1.0}
    assert np.isfinite(rows[-1]["rhat"]) and est.subspaces_.shape == (2, 5, 2)
    slow = GibbsSubspaceClustering(
        2, 2, epsilon=1.0, n_iter=100000, n_chains=2, record_every=5, random_state=0
    )
    runner.start(slow, ds.X)
    runner.stop()
    runner.join(30)
    assert runner.status == "stopped" and not runner.running


def test_gibbs_private_release_is_refused_before_sampling_over_budget(monkeypatch):
    """On private data the run is the Curator's live release: a charge that does not fit is
    refused before any sampler process is started."""
    import privclust.core.release.live as live_module
    from privclust.app.state import releases
    from privclust.core import Curator, GibbsSubspaceClustering

    ledger = Ledger(1.0, 0.0)
    curator = Curator(np.random.default_rng(0).normal(size=(30, 3)) / 3, ledger)
    est = GibbsSubspaceClustering(2, 1, epsilon=2.0, n_iter=10, n_chains=1)
    calls = []
    monkeypatch.setattr(live_module.LiveRelease, "_main", lambda self: calls.append(self))
    outcome = releases.start_live(curator, est)
    assert outcome.status == releases.REFUSED and outcome.budget is not None
    monkeypatch.setattr(releases, "budget_check", lambda curator, prepared: None)
    outcome = releases.start_live(curator, est)  # the ledger's own charge refuses it
    assert outcome.status == releases.REFUSED and outcome.release is None
    assert ledger.spent[0] == 0.0 and not calls


def test_the_notice_of_a_task_switch_stays_when_later_requests_find_the_result_shown():
    """A task switch on a preset makes several demo requests (the data, the algorithm, the
    task). With the shared cache warm, the first shows the result with the notice saying why
    the demo data changed; the others, and the debounced runs of earlier ones that run later
    (as on the served page), find that result already shown and leave the notice. They said
    the status again without it (browser test test_demo_data_follow_the_task_...)."""
    from privclust.app.state import demo_cache

    pending = []  # the page's debouncer runs requests later, off the event
    lab = Lab(schedule=pending.append, demo_cache=demo_cache.DemoCache())

    def settle():
        while pending:
            pending.pop(0)()

    settle()
    for task in ("cocluster", "subspace"):  # both tasks' default results are now cached
        lab.settings.task = task
        settle()
    lab.settings.task = "cocluster"
    settle()
    assert lab.result is not None and lab.result.spec.task == "cocluster"
    assert "Switched the demo data" in lab.message, lab.message
