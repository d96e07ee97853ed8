"""A real JupyterLab runs the introduction notebook offline: Run All renders its widgets and
plots, moving an ε slider re-renders the plot from the kernel and the Release button charges the
kernel's ledger, while every request the page sends to another host than the local Jupyter
server is blocked and counted (must be 0) and the browser console shows no error or warning.

Before the notebooks loaded Bokeh, HoloViews and Panel inline, the extension cells asked the CDNs
for the JavaScript and an offline Run All showed no widget or plot at all; plots displayed without
``pn.panel``, and every later update of a text pane, still asked cdn.holoviz.org for Panel's
stylesheets.

The server runs in a temporary folder holding a copy of the notebook, with its own Jupyter
config, data, runtime and settings folders (nothing of the user's is read or written), token and
XSRF checks as usual except for an empty token, no news or update checks, and the application
object exposed to the page so the test can run commands and read the notebook model.
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
from nbbrowser import PageWatch, check_own_axes_and_slider

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "00_introduction.ipynb"
MIN_CANVAS, MIN_SLIDERS = 24, 7  # measured in JupyterLab 4.6 with chromium: 39 canvases, 8 sliders

APP = "window.jupyterapp"
KERNEL_IDLE_JS = f"""() => {{
  const w = {APP} && {APP}.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}}"""
# every code cell of the open notebook has run (an execution count) and the kernel is idle
ALL_RUN_JS = f"""() => {{
  const w = {APP}.shell.currentWidget;
  const k = w.sessionContext.session.kernel;
  const cells = w.content.model.cells;
  let code = 0, run = 0;
  for (let i = 0; i < cells.length; i++) {{
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    code += 1;
    if (c.executionCount !== null) run += 1;
  }}
  return code > 0 && run === code && k.status === 'idle';
}}"""
PYVIZ_EXTENSION = "@pyviz/jupyterlab_pyviz"
FEDERATED_JS = """() => JSON.parse(document.getElementById('jupyter-config-data').textContent)
  .federated_extensions.map(e => e.name)"""
ERRORS_JS = f"""() => {{
  const cells = {APP}.shell.currentWidget.content.model.cells, out = [];
  for (let i = 0; i < cells.length; i++) {{
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    for (let j = 0; j < c.outputs.length; j++) {{
      const o = c.outputs.get(j);
      if (o.type === 'error') out.push(o.toJSON().ename + ': ' + o.toJSON().evalue);
    }}
  }}
  return out;
}}"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_prefixes(*parts):
    return os.pathsep.join(
        str(Path(p, *parts)) for p in dict.fromkeys((sys.prefix, sys.base_prefix))
    )


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving a temporary copy of the introduction."""
    if importlib.util.find_spec("jupyterlab") is None:
        if os.environ.get("CI"):
            pytest.fail("jupyterlab is not installed (it is in the test extra)")
        pytest.skip("jupyterlab is not installed (pip install -e '.[test]')")
    import requests

    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(NOTEBOOK, root)
    port = _free_port()
    env = dict(
        os.environ,
        PRIVCLUST_STATE_DIR=str(tmp_path / "state"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        # the front-end extensions (pyviz_comms' is what carries a widget's change to the
        # kernel) and the server extensions' config live in the installation that holds the
        # packages: in a venv made with --system-site-packages that is the base Python's, which
        # Jupyter does not search by itself
        JUPYTER_PATH=_in_prefixes("share", "jupyter"),
        JUPYTER_CONFIG_PATH=_in_prefixes("etc", "jupyter"),
    )
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port-retries=0",
            f"--ServerApp.root_dir={root}",
            "--IdentityProvider.token=",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=root,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                if requests.get(f"{url}/api/status", timeout=1).ok:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.flush()
                pytest.fail(
                    "JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:]
                )
            time.sleep(0.2)
        yield {"url": url, "origin": f"127.0.0.1:{port}", "log": tmp_path / "lab.log"}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.ui
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_jupyterlab_runs_the_introduction_offline(jupyterlab, browser):
    start = time.perf_counter()
    # service workers would see requests before the route does: none are allowed to start
    context = browser.new_context(service_workers="block", viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    watch = PageWatch(page, jupyterlab["origin"])
    try:
        page.goto(f"{jupyterlab['url']}/lab/tree/{NOTEBOOK.name}")
        page.wait_for_function(KERNEL_IDLE_JS, timeout=90_000)
        extensions = page.evaluate(FEDERATED_JS)
        assert PYVIZ_EXTENSION in extensions, (
            f"JupyterLab did not load {PYVIZ_EXTENSION} (found {extensions}): without it no "
            "widget change reaches the kernel"
        )
        page.evaluate(f"() => {APP}.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(ALL_RUN_JS, timeout=150_000, polling=500)
        ran = time.perf_counter() - start
        assert page.evaluate(ERRORS_JS) == []
        deadline = time.time() + 30  # Bokeh draws inside shadow roots: count by locator
        while page.locator("canvas").count() < MIN_CANVAS and time.time() < deadline:
            page.wait_for_timeout(250)
        n_canvas = page.locator("canvas").count()
        assert n_canvas >= MIN_CANVAS, f"only {n_canvas} plot canvases rendered"
        n_sliders = page.locator(".noUi-target").count()
        assert n_sliders >= MIN_SLIDERS, f"only {n_sliders} sliders rendered"

        # a slider move goes to the kernel, which sends back the histogram for the new ε
        eps = check_own_axes_and_slider(page)

        # the ledger demo: Release charges the kernel's ledger and the status says so
        release = page.get_by_role("button", name="Release", exact=True)
        release.scroll_into_view_if_needed()
        release.click()
        page.get_by_text("spent 0.2 of 1").wait_for(timeout=30_000)
        page.wait_for_timeout(500)  # late requests and console messages
    finally:
        context.close()
    elapsed = time.perf_counter() - start
    print(
        f"JupyterLab: Run All done after {ran:.1f} s, {n_canvas} canvases, {n_sliders} sliders, "
        f"slider moved to ε = {eps:g}, {len(watch.external)} external requests, "
        f"{len(watch.console)} console problems, {elapsed:.1f} s in the browser"
    )
    assert not watch.external, f"requests to other hosts: {watch.external}"
    assert not watch.console, watch.console
