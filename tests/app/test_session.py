"""Server-side safety of one session, without a browser: the upload cap holds on the server
(chunked FileDropper), fits run on the session's worker thread and stop with the session, a run
that finishes after the data changed never unlocks raw displays, downloads withhold the hash of
private data (issue 7 "Security")."""
import io
import threading
import time

import numpy as np
import pytest

from privclust.app.models import Lab

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def csv_payload(n=120, d=4, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d)) / 3
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(f"c{j}" for j in range(d)), comments="")
    return buf.getvalue()


@pytest.fixture
def ledger_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")


class _Event:
    event_name = "upload_event"

    def __init__(self, name, chunk, total, data, mime="text/csv"):
        self.data = {"name": name, "chunk": chunk, "total_chunks": total, "data": data,
                     "type": mime}


def test_upload_cap_is_enforced_on_the_server_per_chunk():
    """A client that skips FilePond's size check still cannot make the server buffer more."""
    from privclust.app.views import BoundedFileDropper
    rejected = []
    dropper = BoundedFileDropper(1000, on_reject=lambda n, m: rejected.append((n, m)))
    for i in range(1, 4):  # 3 x 600 bytes > 1000: refused at chunk 2, chunk 3 is ignored
        dropper._process_event(_Event("../big.csv", i, 3, b"1" * 600))
    assert dropper.value == {} and dropper._file_buffer == {}
    assert len(rejected) == 1 and "big.csv: the file is too large" in rejected[0][1]
    assert "../" not in rejected[0][1]
    # in-flight uploads share the cap: two unfinished files of 600 bytes do not both fit
    dropper._process_event(_Event("a.csv", 1, 2, b"1" * 600))
    dropper._process_event(_Event("b.csv", 1, 2, b"1" * 600))
    assert "b.csv" not in dropper._file_buffer and len(rejected) == 2
    dropper._process_event(_Event("a.csv", 2, 2, b"2" * 300))
    assert dropper.value == {"a.csv": "1" * 600 + "2" * 300}
    # a stray later chunk without its first chunk is dropped (Panel would raise KeyError)
    dropper._process_event(_Event("c.csv", 2, 2, b"x"))
    assert "c.csv" not in dropper.value and dropper._sizes == {}


def test_rejected_upload_is_shown_as_a_readable_error(ledger_env):
    from privclust.app.views import DataPanel
    lab = Lab()
    panel = DataPanel(lab=lab)
    panel.dropper._max_bytes = 100
    panel.dropper._process_event(_Event("<b>x</b>.csv", 1, 1, b"1," * 100))
    assert lab.mode == "demo" and panel.error.visible
    assert "too large" in panel.error.object and "<b>" not in panel.error.object


def test_session_worker_runs_jobs_in_order_and_drops_superseded_demo_runs():
    from privclust.app.page import SessionWorker
    worker = SessionWorker()
    gate, seen = threading.Event(), []
    worker.submit(gate.wait)  # hold the thread so the next jobs queue up
    for i in range(5):
        worker.submit(lambda i=i: seen.append(("demo", i)), kind="demo")
    worker.submit(lambda: seen.append(("release", 0)))
    worker.submit(lambda: seen.append(("release", 1)))
    gate.set()
    deadline = time.time() + 10
    while len(seen) < 3 and time.time() < deadline:
        time.sleep(0.01)
    assert seen == [("demo", 4), ("release", 0), ("release", 1)]
    assert threading.current_thread().name != "privclust-session-worker"
    worker.close()
    worker.join(5)
    assert not worker.alive
    worker.submit(lambda: seen.append("after close"))
    time.sleep(0.05)
    assert "after close" not in seen


def test_session_end_stops_the_worker_the_debouncer_and_the_sampler(ledger_env, monkeypatch):
    from privclust.app import page
    ended = []
    monkeypatch.setattr(page, "_on_session_end", lambda *cbs: ended.extend(cbs))
    app = page.create_app()
    assert app.worker is not None and len(ended) == 2
    lab = app.lab
    gibbs = app.views["GibbsView"]
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=20_000, record_every=5, n_chains=2)
    assert gibbs.start()
    app.worker.submit(lambda: None)
    assert app.worker.alive and gibbs.runner.running
    for cb in ended:
        cb(None)
    gibbs._cleanup(None)  # what GibbsView registered with pn.state.on_session_destroyed
    app.worker.join(10)
    gibbs.runner.join(30)
    assert not app.worker.alive
    assert not gibbs.runner.running and gibbs.runner.status == "stopped"


class SwitchingPrivate:
    """A private estimator whose fit lets the test change the data mid-run (a worker thread)."""

    during_fit = staticmethod(lambda: None)

    def __init__(self, n_clusters=2, epsilon=1.0, ledger=None, random_state=None):
        self.n_clusters, self.epsilon, self.ledger = n_clusters, epsilon, ledger
        self.random_state = random_state

    def fit(self, X):
        from privclust.core.privacy import Guarantee, charge
        charge(self.ledger, self.epsilon, 0.0, what="SwitchingPrivate")
        type(self).during_fit()
        self.cluster_centers_ = np.zeros((self.n_clusters, X.shape[1]))
        self.privacy_ = Guarantee(self.epsilon, 0.0, "pure", "replace")
        return self


def _switching_lab(worker=None):
    from privclust.app import algorithms
    spec = algorithms.AlgorithmSpec("switch", "Switching DP k-means", "kmeans",
                                    f"{__name__}.SwitchingPrivate", "pure",
                                    task_params=("n_clusters",))
    lab = Lab(specs=[spec], worker=worker)
    lab.data.upload("private.csv", csv_payload())
    lab.settings.param.update(task="kmeans", algorithm="switch")
    return lab


def test_release_queued_before_the_data_changed_does_not_run(ledger_env):
    jobs = []
    lab = _switching_lab(worker=jobs.append)
    lab.param.trigger("release")
    assert len(jobs) == 1 and lab.result is None  # queued on the worker, not run inline
    lab.data.upload("other.csv", csv_payload(seed=1))  # another private dataset meanwhile
    jobs[0]()
    assert lab.result is None and "nothing was run or charged" in lab.message
    assert lab.ledger.spent[0] == 0.0 and not lab._cache


def test_release_finishing_after_the_data_changed_unlocks_nothing(ledger_env, monkeypatch):
    """If the person switches to demo data while a release runs, the private result is cached
    (charged once) but not shown, and no raw display of the private data is unlocked."""
    lab = _switching_lab()
    private = lab.data.dataset
    monkeypatch.setattr(SwitchingPrivate, "during_fit",
                        staticmethod(lambda: setattr(lab.data, "source", "preset")))
    assert lab.do_release() is None
    assert lab.mode == "demo" and (lab.result is None or lab.result.dataset.public)
    assert [r.dataset for r in lab._cache.values()] == [private]
    assert not lab.raw_allowed(private)
    lab.settings.owner_view = True
    assert not lab.raw_allowed(private)  # the owner view applies to the loaded dataset only


def test_private_report_withholds_the_data_hash(ledger_env):
    from privclust.app.views import report_payload
    lab = Lab()
    assert report_payload(lab.result)["dataset_fingerprint"] == lab.data.dataset.fingerprint
    lab.data.upload("private.csv", csv_payload())
    result = lab.do_release()
    payload = report_payload(result)
    assert payload["dataset_fingerprint"] is None
    assert lab.data.dataset.fingerprint not in str(payload)


def test_a_running_demo_fit_stops_when_superseded(ledger_env):
    """Demo fits run on the worker; a long Gibbs demo run stops at its next record when the
    person moves a slider again (or starts the live sampler), instead of blocking the worker."""
    jobs = []
    lab = Lab(schedule=jobs.append)
    lab.data.n_samples = 200
    jobs.clear()
    lab.settings.algorithm = "gibbs"
    lab.settings.algo.param.update(n_iter=20_000, record_every=5, n_chains=2)
    before = lab.result
    thread = threading.Thread(target=jobs[-1])
    t0 = time.perf_counter()
    thread.start()
    time.sleep(0.5)
    assert lab.running
    lab.cancel_demo()
    thread.join(30)
    assert not thread.is_alive() and time.perf_counter() - t0 < 20
    assert not lab.running and lab.result is before  # nothing half-done was shown
