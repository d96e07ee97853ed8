"""``panel serve notebooks/00_introduction.ipynb`` serves a working teaching page: the text, the
sliders and the plots render in Debian's chromium, with no Bokeh rendering error (a backslash in a
markdown cell once broke the whole page through MathJax). Needs nbconvert (Panel's notebook
handler) and chromium; under CI a missing chromium fails instead of skipping.
"""
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "00_introduction.ipynb"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.ui
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_served_notebook_renders(tmp_path):
    if importlib.util.find_spec("nbconvert") is None:
        if os.environ.get("CI"):
            pytest.fail("nbconvert is not installed (it is in the test extra)")
        pytest.skip("panel serve <notebook> needs nbconvert")
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium not installed")
    from playwright.sync_api import sync_playwright

    port = _free_port()
    log = open(tmp_path / "serve.log", "w")
    env = dict(os.environ, PRIVCLUST_STATE_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "panel", "serve", str(NOTEBOOK), "--address",
                             "127.0.0.1", "--port", str(port), "--allow-websocket-origin",
                             f"127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT, env=env)
    errors = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error"
                    and "Error rendering" in m.text else None)
            deadline = time.time() + 60
            while True:      # the server needs a moment to start
                try:
                    page.goto(f"http://127.0.0.1:{port}/{NOTEBOOK.stem}", timeout=180_000)
                    break
                except Exception:
                    if time.time() > deadline or proc.poll() is not None:
                        raise
                    time.sleep(0.5)
            page.wait_for_selector("text=Differential privacy in ten minutes", timeout=180_000)
            deadline = time.time() + 120
            while page.locator("canvas").count() < 6 and time.time() < deadline and not errors:
                page.wait_for_timeout(1000)
            n_canvas = page.locator("canvas").count()
            n_sliders = page.locator(".noUi-target").count()
            has_release = page.get_by_role("button", name="Release").count()
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    assert not errors, errors
    assert n_canvas >= 6, f"only {n_canvas} plot canvases rendered"
    assert n_sliders >= 5, f"only {n_sliders} sliders rendered"
    assert has_release >= 1, "the ledger demo's Release button is missing"
