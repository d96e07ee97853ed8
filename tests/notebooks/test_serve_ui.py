"""``panel serve notebooks/<name>.ipynb`` serves each notebook as a working teaching page: the
title, the sliders and the plots render in Debian's chromium, the page asks no other host for
anything (every request elsewhere is blocked and counted) and the browser console stays clean (a
backslash in a markdown cell once broke the whole page through MathJax). On the introduction's
page every plot keeps its own axes and moving an ε slider changes the plotted range: Panel links
the axes of every plot whose dimensions share a name across one page, so before the notebooks
switched that off all histograms showed the income example's -2e5..4e5 and a slider move
changed only a title. Needs nbconvert (Panel's notebook handler) and chromium
(pytest-playwright's ``page``, launched as ``tests/conftest.py`` says).
"""

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbbrowser import PageWatch, check_own_axes_and_slider

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# least number of canvases (Bokeh draws several per plot) and sliders each served page must show;
# measured with chromium 2026-11: 32/7, 47/8, 33/7, 30/8, 36/6
MINIMA = {
    "00_introduction": (24, 7),
    "01_subspace_clustering": (36, 8),
    "02_compressive_kmeans": (24, 7),
    "03_small_cluster": (24, 8),
    "04_coclustering": (27, 6),
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.ui
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_served_notebook_renders(tmp_path, notebook, page):
    if importlib.util.find_spec("nbconvert") is None:
        if os.environ.get("CI"):
            pytest.fail("nbconvert is not installed (it is in the test extra)")
        pytest.skip("panel serve <notebook> needs nbconvert")
    import nbformat

    title = nbformat.read(notebook, as_version=4).cells[0].source.splitlines()[0].lstrip("# ")
    min_canvas, min_sliders = MINIMA[notebook.stem]
    port = _free_port()
    log = open(tmp_path / "serve.log", "w")
    env = dict(os.environ, PRIVCLUST_STATE_DIR=str(tmp_path))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panel",
            "serve",
            str(notebook),
            "--address",
            "127.0.0.1",
            "--port",
            str(port),
            "--allow-websocket-origin",
            f"127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    watch = PageWatch(page, f"127.0.0.1:{port}")
    page.set_viewport_size({"width": 1400, "height": 1200})
    try:
        deadline = time.time() + 300  # a busy machine: only a server that never starts fails
        while True:  # the server needs a moment to start
            try:
                page.goto(f"http://127.0.0.1:{port}/{notebook.stem}", timeout=180_000)
                break
            except Exception:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.5)
        page.wait_for_selector(f"text={title}", timeout=180_000)
        deadline = time.time() + 120
        while (
            page.locator("canvas").count() < min_canvas
            and time.time() < deadline
            and not watch.console
        ):
            page.wait_for_timeout(1000)
        n_canvas = page.locator("canvas").count()
        n_sliders = page.locator(".noUi-target").count()
        has_release = page.get_by_role("button", name="Release").count()
        if notebook.stem == "00_introduction":
            eps = check_own_axes_and_slider(page)
            print(f"Laplace slider moved to ε = {eps:g}; the histogram followed")
        page.wait_for_timeout(500)  # late requests and console messages
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    print(
        f"{notebook.stem}: {n_canvas} canvases, {n_sliders} sliders, "
        f"{len(watch.external)} external requests, {len(watch.console)} console problems"
    )
    assert not watch.console, watch.console
    assert not watch.external, f"requests to other hosts: {watch.external}"
    assert n_canvas >= min_canvas, f"only {n_canvas} plot canvases rendered"
    assert n_sliders >= min_sliders, f"only {n_sliders} sliders rendered"
    if notebook.stem == "00_introduction":
        assert has_release >= 1, "the ledger demo's Release button is missing"
