"""Browser fixtures for the dashboard tests: a real ``panel serve`` subprocess on 127.0.0.1
and a small CSV builder; the chromium launch fixture lives in
``tests/conftest.py``.
"""

import io
import os
import socket
import subprocess
import time

import numpy as np
import pytest

from privclust.app.cli import serve_command

UPLOAD_LIMIT_MB = 1
BUDGET_EPSILON = 2.5
STARTUP_LIMIT_S = 300


@pytest.fixture
def csv_payload():
    """Builds the text of a small numeric CSV: n records x d columns headed c0, c1, ..."""

    def build(n=120, d=4, seed=0):
        X = np.random.default_rng(seed).normal(size=(n, d)) / 3
        buf = io.StringIO()
        np.savetxt(buf, X, delimiter=",", header=",".join(f"c{j}" for j in range(d)), comments="")
        return buf.getvalue()

    return build


@pytest.fixture
def context(context):
    context.set_default_timeout(30_000)
    yield context


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """``panel serve app/page.py`` with a temporary ledger, a small budget and a 1 MB upload cap."""
    import requests

    state = tmp_path_factory.mktemp("privclust-state")
    port = _free_port()
    env = dict(
        os.environ,
        PRIVCLUST_STATE_DIR=str(state),
        PRIVCLUST_BUDGET_EPSILON=str(BUDGET_EPSILON),
        PRIVCLUST_MAX_UPLOAD_MB=str(UPLOAD_LIMIT_MB),
    )
    log = open(state / "server.log", "w")
    # what `privclust serve` runs, plus: a closed tab's session is discarded after ~1 s
    # (default: up to ~32 s), so that session-end cleanup can be tested
    cmd = serve_command(
        "127.0.0.1",
        port,
        extra=["--liveness", "--check-unused-sessions", "500", "--unused-session-lifetime", "1000"],
    )
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    # the warm-up (imports, two throw-away pages) takes seconds on an idle machine and more
    # than a minute on a busy one: the limit only catches a server that never starts
    deadline = time.time() + STARTUP_LIMIT_S
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((state / "server.log").read_text())
        try:
            if requests.get(f"{url}/liveness", timeout=1).ok:
                break
        except requests.RequestException:
            time.sleep(0.1)
    else:
        proc.kill()
        raise RuntimeError(f"panel serve did not start within {STARTUP_LIMIT_S} s")
    info = {
        "url": f"{url}/page",
        "base": url,
        "port": port,
        "proc": proc,
        "startup_s": time.perf_counter() - t0,
        "log": state / "server.log",
    }
    yield info
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
