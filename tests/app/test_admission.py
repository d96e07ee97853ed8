"""Gibbs sampler runs are admitted up to the server's limit; later ones wait in order of
arrival, see their position, and a run stopped while it waits never starts (nothing charged)."""

import threading
import time

import pytest

from privclust.app import config
from privclust.app.server.admission import Admission


def _wait(cond, timeout=10):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_runs_beyond_the_limit_wait_in_order_with_their_position(tmp_path):
    adm = Admission(tmp_path, limit=2)
    stop = threading.Event()
    tickets = [adm.ticket() for _ in range(4)]
    admitted, positions = [], {i: [] for i in range(4)}

    def run(i):
        if tickets[i].wait(stop, on_position=positions[i].append):
            admitted.append(i)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    # the waiting runs are told their place (1: next) once the first two hold the slots
    _wait(lambda: len(admitted) == 2 and positions[2][-1:] == [1] and positions[3][-1:] == [2])
    assert sorted(admitted) == [0, 1] and adm.running() == 2
    tickets[0].close()  # a run ends: the next starts
    _wait(lambda: len(admitted) == 3)
    assert admitted[-1] == 2
    _wait(lambda: positions[3][-1] == 1)
    stop.set()  # the last one is stopped
    threads[3].join(5)
    assert sorted(admitted[:2]) == [0, 1] and admitted[2:] == [2]
    assert not threads[3].is_alive()
    for t in tickets:
        t.close()
    assert adm.running() == 0 and not list(tmp_path.glob("ticket-*"))


def test_a_dead_process_s_place_is_freed(tmp_path):
    """flock: the kernel drops the locks of an ended process (here: closed descriptors)."""
    import os

    adm = Admission(tmp_path, limit=1)
    first = adm.ticket()
    assert first.wait(threading.Event())
    os.close(first._slot)  # as if its process had died
    first._slot = None
    second = adm.ticket()
    assert second.wait(threading.Event())
    second.close()


def test_the_limit_is_an_operator_setting(monkeypatch):
    monkeypatch.setenv(config.MAX_SAMPLERS.env, "3")
    assert config.max_samplers() == 3
    monkeypatch.setenv(config.MAX_SAMPLERS.env, "0")
    with pytest.raises(config.SettingError, match="PRIVCLUST_MAX_SAMPLERS"):
        config.max_samplers()


def test_a_sampler_view_beyond_the_limit_shows_its_position_and_stop_leaves_the_queue(
    tmp_path, monkeypatch
):
    from privclust.app.state import Lab
    from privclust.app.views import GibbsView

    monkeypatch.setenv(config.STATE_DIR.env, str(tmp_path))
    monkeypatch.setenv(config.MAX_SAMPLERS.env, "1")
    views = []
    for _ in range(2):
        lab = Lab(schedule=lambda fn: None)  # no demo fit of 20,000 iterations inline
        lab.settings.param.update(task="subspace", algorithm="gibbs")
        lab.settings.algo.param.update(n_iter=20_000, n_chains=2)
        views.append(GibbsView(lab=lab))
    first, second = views
    try:
        assert first.start()
        _wait(lambda: first.runner.produced >= 1, 120)  # admitted and sampling
        assert second.start()
        _wait(lambda: second.runner.queue_position == 1)
        second._show_progress()
        assert "Waiting for a free sampler" in second.info.object
        assert second.runner.produced == 0 and second.runner.pid is None
        second.runner.stop()  # leaves the queue
        second.runner.join(10)
        assert not second.runner.running and second.runner.pid is None
        first.runner.stop()
        first.runner.join(60)
        assert not first.runner.running and first.runner.produced > 0
    finally:
        for v in views:
            v.runner.close()
            v.runner.join(30)
