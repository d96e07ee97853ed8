"""In a browser: a large private data set registered by the operator (``privclust serve
--dataset NAME=PATH --box LO,HI``, shards read on Dask) is listed as private data with no value
shown; a release on it shows its progress (partitions done / total, pass after pass) and lands
in the past releases."""

import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from browser import expect_text, open_page, open_tab, text_of, wait_for
from playwright.sync_api import expect

pytestmark = pytest.mark.ui

N_SHARDS, ROWS = 24, 20_000


@pytest.fixture(scope="module")
def large_server(tmp_path_factory):
    """The operator's command, with a folder of shards registered before the server starts."""
    import requests

    root = tmp_path_factory.mktemp("large")
    rng = np.random.default_rng(0)
    centres = np.array([[-2.0, -2.0, 0.0], [2.0, 0.0, 2.0], [0.0, 2.0, -2.0]])
    (root / "shards").mkdir()
    for i in range(N_SHARDS):
        X = centres[rng.integers(0, 3, ROWS)] + rng.normal(scale=0.4, size=(ROWS, 3))
        np.save(root / "shards" / f"part{i:02d}.npy", X)
    port = _free_port()
    log = open(root / "server.log", "w")
    cmd = [
        sys.executable,
        "-m",
        "privclust.app.cli",
        "serve",
        "--port",
        str(port),
        "--state-dir",
        str(root / "state"),
        "--budget-epsilon",
        "5",
        "--dataset",
        f"bigdata={root / 'shards'}",
        "--box",
        "-5,5",
        "--",
        "--liveness",
    ]
    proc = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, OMP_NUM_THREADS="1")
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((root / "server.log").read_text())
        try:
            if requests.get(f"{base}/liveness", timeout=1).ok:
                break
        except requests.RequestException:
            time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError("privclust serve did not start within 120 s")
    yield {"url": f"{base}/page", "base": base, "log": root / "server.log"}
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_registered_large_data_set_is_listed_private_and_a_release_shows_progress(
    page, large_server
):
    open_page(page, large_server)
    page.get_by_role("button", name="Registry").click()
    select = page.locator("select").filter(has=page.locator("option", has_text="bigdata")).first
    select.select_option(label="bigdata")
    expect_text(page, ".pc-data-summary", "bigdata")
    expect_text(page, ".pc-data-summary", "private data")
    assert f"{N_SHARDS * ROWS} records" in text_of(page, ".pc-data-summary")  # public n
    open_tab(page, "Data")
    expect_text(page, ".pc-preview", "bigdata")
    expect(page.get_by_text("The values of private data are hidden").first).to_be_visible()
    page.locator(".pc-task select").first.select_option(label="k-means")
    algo = page.locator(".pc-algorithm select").first
    wait_for(
        page,
        lambda: any("DPLloyd" in o for o in algo.locator("option").all_text_contents()),
        what="DPLloyd",
    )
    algo.select_option(
        label=next(o for o in algo.locator("option").all_text_contents() if "DPLloyd" in o)
    )
    expect_text(page, ".pc-dask-progress-text", "partition by partition")
    page.get_by_role("button", name="Release", exact=True).click()
    seen = set()
    deadline = time.time() + 120
    while time.time() < deadline and "Released" not in text_of(page, ".pc-status"):
        text = text_of(page, ".pc-dask-progress-text")
        seen.update(k for k in ("Checking the shards", "Charged: pass") if k in text)
        page.wait_for_timeout(50)
    expect_text(page, ".pc-status", "Released", timeout=5_000)
    assert "Charged: pass" in seen, seen  # progress while it read
    expect_text(page, ".pc-dask-progress-text", f"passes over {N_SHARDS} partitions, done")
    expect_text(page, ".pc-releases", "DPLloyd")  # in the past releases
