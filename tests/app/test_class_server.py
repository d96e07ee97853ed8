"""A class on one server, in the browser: a page whose server died says so and offers a
reload."""
import os
import socket
import subprocess
import time

import pytest
from playwright.sync_api import expect

from privclust.app.cli import serve_command

pytestmark = pytest.mark.ui


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(port, state, log):
    import requests
    proc = subprocess.Popen(serve_command("127.0.0.1", port, extra=["--liveness"]), stdout=log,
                            stderr=subprocess.STDOUT,
                            env=dict(os.environ, PRIVCLUST_STATE_DIR=str(state)))
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, "panel serve exited"
        try:
            if requests.get(f"http://127.0.0.1:{port}/liveness", timeout=1).ok:
                return proc
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("panel serve did not start within 120 s")


def test_a_page_whose_server_died_shows_a_notice_that_reloads(page, tmp_path):
    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    procs = [_start(port, tmp_path / "state", log)]
    try:
        page.goto(f"http://127.0.0.1:{port}/page")
        page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
        notice = page.locator(".pc-lost")
        expect(notice).to_be_hidden()
        procs[0].kill()                                   # the server dies
        procs[0].wait(10)
        expect(notice).to_be_visible(timeout=30_000)
        expect(notice).to_contain_text("connection to the server was lost")
        procs.append(_start(port, tmp_path / "state", log))   # back again: the reload works
        notice.get_by_role("button", name="Reload the page").click()
        page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0",
                               timeout=60_000)
        expect(page.locator(".pc-banner").first).to_be_visible(timeout=60_000)
        expect(page.locator(".pc-lost")).to_be_hidden()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        log.close()
