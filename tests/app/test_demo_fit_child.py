"""A served page fits a large Gibbs demo in a child process at low priority.

A demo fit of 20,000 iterations x 8 chains takes ~13 CPU s; on the session's worker thread it
took a core from the server's IO loop at full priority, and in the class-load run it was 40 %
of the server's samples. ``fit_in_child`` runs it in the sampler's child (``SAMPLER_NICE``):
the same seeded fit gives the same released state, a newer request stops it, a small fit stays
inline, and a child stopped with its server is not reported as a failure.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

from privclust.app.server import sampler
from privclust.app.server.worker import session_lab
from privclust.app.state import Lab
from privclust.app.state.lab import fit_steps
from privclust.core import GibbsSubspaceClustering
from privclust.core.data import make_union_of_subspaces

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _data():
    return make_union_of_subspaces(
        n_samples=300, n_features=4, n_clusters=2, subspace_dim=1, random_state=0
    ).X


def _gibbs(n_iter=200, seed=3):
    return GibbsSubspaceClustering(
        n_clusters=2, subspace_dim=1, epsilon=1.0, n_iter=n_iter, n_chains=2, random_state=seed
    )


def _children(monkeypatch):
    """Count the children run_child starts (and still run them)."""
    started = []
    run = sampler.run_child

    def counting(*args, **kwargs):
        started.append(1)
        return run(*args, **kwargs)

    monkeypatch.setattr(sampler, "run_child", counting)
    return started


def test_a_large_fit_in_the_child_releases_what_the_inline_fit_does(monkeypatch):
    monkeypatch.setattr(sampler, "CHILD_WORK", 0)
    started = _children(monkeypatch)
    X = _data()
    inline, child = _gibbs(), _gibbs()
    assert fit_steps(inline, X, lambda: False)
    assert sampler.fit_in_child(child, X, lambda: False)
    assert started == [1]
    for name in inline.released_attributes():
        np.testing.assert_array_equal(getattr(child, name), getattr(inline, name))
    assert child.n_iter_ == inline.n_iter_ == 200


def test_a_small_fit_stays_inline(monkeypatch):
    started = _children(monkeypatch)
    est = _gibbs()
    assert 200 * 2 * 300 < sampler.CHILD_WORK
    assert sampler.fit_in_child(est, _data(), lambda: False)
    assert started == [] and est.subspaces_ is not None


def test_a_superseded_child_stops_and_nothing_is_set(monkeypatch):
    monkeypatch.setattr(sampler, "CHILD_WORK", 0)
    est = _gibbs(n_iter=1_000_000)
    t0 = time.perf_counter()
    assert not sampler.fit_in_child(est, _data(), lambda: time.perf_counter() - t0 > 1.0)
    assert time.perf_counter() - t0 < 1.0 + sampler.CLOSE_GRACE_S + 5
    assert getattr(est, "subspaces_", None) is None


def _forkserver_pid():
    from multiprocessing import forkserver

    return forkserver._forkserver._forkserver_pid  # multiprocessing has no public accessor


@pytest.mark.parametrize(
    ("sig", "failed", "with_forkserver"),
    [(signal.SIGTERM, False, False), (signal.SIGTERM, False, True), (signal.SIGKILL, True, False)],
    ids=["term", "term-with-forkserver", "kill"],
)
def test_a_child_stopped_with_its_server_is_no_failure_a_killed_one_is(
    monkeypatch, sig, failed, with_forkserver
):
    """A server's shutdown signals its whole process group: the child, and the forkserver
    that started it (then the child's exit status is lost: multiprocessing reports 255)."""
    if with_forkserver and sampler.mp_context().get_start_method() != "forkserver":
        pytest.skip("the sampler's children come from a forkserver only where it exists")

    def kill_soon(proc):
        pids = [_forkserver_pid(), proc.pid] if with_forkserver else [proc.pid]
        for pid in pids:
            threading.Timer(0.5, os.kill, (pid, sig)).start()

    status, state, error = sampler.run_child(
        _gibbs(n_iter=1_000_000),
        _data(),
        None,
        nice=0,
        on_record=lambda record: None,
        should_stop=lambda: False,
        grace_s=lambda: 5.0,
        on_start=kill_soon,
    )
    if failed:
        assert status is None and "exit code -9" in str(error)
    else:
        assert error is None and status == "stopped"


def test_a_served_session_fits_large_gibbs_demos_in_the_child_a_script_inline(
    ledger_env, monkeypatch
):
    import panel as pn

    from privclust.app.server import session_hooks, worker

    lab, jobs = session_lab()
    jobs.close()
    assert lab._fit_stepping is fit_steps  # a script's or notebook's Lab: inline
    for name in ("onload", "add_periodic_callback", "on_session_destroyed"):
        monkeypatch.setattr(pn.state, name, lambda *args, **kwargs: None)
    monkeypatch.setattr(session_hooks, "in_session", lambda: True)
    lab, jobs = worker.session_lab()
    jobs.close()
    assert lab._fit_stepping is sampler.fit_in_child


def test_a_lab_fitting_in_the_child_shows_the_inline_result(ledger_env, monkeypatch):
    monkeypatch.setattr(sampler, "CHILD_WORK", 0)
    started = _children(monkeypatch)
    shown = {}
    for how in (fit_steps, sampler.fit_in_child):
        lab = Lab(fit_stepping=how)
        lab.data.n_samples = 200
        lab.settings.algorithm = "gibbs"
        lab.settings.algo.param.update(n_iter=100, n_chains=2)
        assert lab.result is not None and lab.result.spec.key == "gibbs"
        shown[how] = lab.result.estimator.subspaces_
    assert started  # the second Lab's fits ran in a child
    np.testing.assert_array_equal(shown[fit_steps], shown[sampler.fit_in_child])
