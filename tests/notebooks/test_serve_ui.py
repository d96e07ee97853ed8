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
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# least number of canvases (Bokeh draws several per plot) and sliders each served page must show;
# measured with chromium 2026-11: 32/7, 47/8, 33/7, 30/8, 36/6
MINIMA = {"00_introduction": (24, 7), "01_subspace_clustering": (36, 8),
          "02_compressive_kmeans": (24, 7), "03_small_cluster": (24, 8), "04_coclustering": (27, 6)}
# Chromium's GPU process reports on the machine's software OpenGL ("GL Driver Message ... GPU
# stall due to ReadPixels") when Bokeh draws with WebGL on a host without a GPU: a note about the
# test machine, not something the page logged; every other console error or warning counts.
BROWSER_GL_NOTE = re.compile(r"^\[\.WebGL-[0-9a-fx]+\]GL Driver Message")

FIGURES_JS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents)
    for (const m of doc.all_models)
      if (m.type === 'Figure' || m.constructor.name === 'Figure')
        out.push({title: m.title ? m.title.text : '', x: [m.x_range.start, m.x_range.end],
                  x_range: m.x_range.id, y_range: m.y_range.id});
  return out;
}"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PageWatch:
    """Blocks and records every request the page sends to another host than ``origin`` and
    collects console errors/warnings and uncaught page errors."""

    def __init__(self, page, origin):
        self.origin = origin
        self.external, self.console, self.browser_notes = [], [], 0
        page.route("**/*", self._route)
        page.on("websocket", self._websocket)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))

    def _local(self, url):
        parts = urlsplit(url)
        return parts.scheme in ("data", "blob") or parts.netloc == self.origin

    def _route(self, route):
        if self._local(route.request.url):
            route.continue_()
        else:
            self.external.append(route.request.url)
            route.abort()

    def _websocket(self, ws):
        if not self._local(ws.url):
            self.external.append(ws.url)

    def _console(self, msg):
        if msg.type not in ("error", "warning"):
            return
        if BROWSER_GL_NOTE.match(msg.text):
            self.browser_notes += 1
        else:
            self.console.append(f"{msg.type}: {msg.text}")


def _figures(page, prefix):
    return [f for f in page.evaluate(FIGURES_JS) if f["title"].startswith(prefix)]


def _drag_slider(page, index, fraction):
    """Drag the handle of the index-th slider of the page to ``fraction`` of its track (a
    mouse drag: Panel's throttled sliders send their value when the mouse is released)."""
    track = page.locator(".noUi-target").nth(index)
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    handle = track.locator(".noUi-handle").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + fraction * box["width"], handle["y"] + handle["height"] / 2,
                    steps=8)
    page.mouse.up()


def check_own_axes_and_slider(page, timeout_s=60):
    """The introduction's Laplace, Gaussian and bounds histograms keep their own ranges, and
    moving the Laplace ε slider re-plots the histogram over the range the new ε needs.

    Laplace releases of the counts 37 and 38 are plotted over [37 - 8 b, 38 + 8 b] with the scale
    b = 1/ε; the Gaussian ones over [37 - 5σ, 38 + 5σ] (σ = 7.03 at ε = 0.5, δ = 1e-5); the
    public-bounds mean of incomes in [0, 200 000] lies within about ±15 000 of 60 000.
    """
    laplace = _figures(page, "Laplace releases, ε = 1 ")
    gauss = _figures(page, "σ analytic")
    public = _figures(page, "public bounds")
    derived = _figures(page, "data-derived bounds")
    assert laplace and gauss and public and derived, \
        [f["title"] for f in page.evaluate(FIGURES_JS)]
    lo, hi = laplace[0]["x"]
    assert 20 < lo < 37 and 38 < hi < 55, f"Laplace histogram at ε = 1 spans {lo:.4g}..{hi:.4g}"
    lo, hi = gauss[0]["x"]
    assert -40 < lo < 37 and 38 < hi < 120, f"Gaussian histogram spans {lo:.4g}..{hi:.4g}"
    lo, hi = public[0]["x"]
    assert 20_000 < lo < 60_000 < hi < 100_000, f"public-bounds histogram spans {lo:.4g}..{hi:.4g}"
    assert len({laplace[0]["x_range"], gauss[0]["x_range"], public[0]["x_range"],
                derived[0]["x_range"]}) == 4, "plots of different cells share one x range"

    # The first slider of the page is the Laplace ε (grid 0.01 ... 50, 1 in the middle): drag it
    # to the left end of its track, towards ε = 0.01
    _drag_slider(page, 0, 0.02)
    deadline = time.time() + timeout_s
    while True:
        moved = [f for f in _figures(page, "Laplace releases, ε = ")
                 if not f["title"].startswith("Laplace releases, ε = 1 ")]
        if moved or time.time() > deadline:
            break
        page.wait_for_timeout(200)
    assert moved, "moving the ε slider did not re-plot the Laplace histogram"
    eps = float(re.match(r"Laplace releases, ε = ([0-9.e+-]+)", moved[-1]["title"]).group(1))
    assert eps < 1
    lo, hi = moved[-1]["x"]
    need_lo, need_hi = 37 - 8 / eps, 38 + 8 / eps
    assert lo <= need_lo + 1e-6 and hi >= need_hi - 1e-6, \
        f"ε = {eps:g}: histogram over {lo:.4g}..{hi:.4g} misses {need_lo:.4g}..{need_hi:.4g}"
    assert hi - lo < 1.3 * (need_hi - need_lo), \
        f"ε = {eps:g}: histogram over {lo:.4g}..{hi:.4g}, its data need {need_lo:.4g}..{need_hi:.4g}"
    return eps


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
    proc = subprocess.Popen([sys.executable, "-m", "panel", "serve", str(notebook), "--address",
                             "127.0.0.1", "--port", str(port), "--allow-websocket-origin",
                             f"127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT, env=env)
    watch = PageWatch(page, f"127.0.0.1:{port}")
    page.set_viewport_size({"width": 1400, "height": 1200})
    try:
        deadline = time.time() + 60
        while True:      # the server needs a moment to start
            try:
                page.goto(f"http://127.0.0.1:{port}/{notebook.stem}", timeout=180_000)
                break
            except Exception:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.5)
        page.wait_for_selector(f"text={title}", timeout=180_000)
        deadline = time.time() + 120
        while (page.locator("canvas").count() < min_canvas and time.time() < deadline
               and not watch.console):
            page.wait_for_timeout(1000)
        n_canvas = page.locator("canvas").count()
        n_sliders = page.locator(".noUi-target").count()
        has_release = page.get_by_role("button", name="Release").count()
        if notebook.stem == "00_introduction":
            eps = check_own_axes_and_slider(page)
            print(f"Laplace slider moved to ε = {eps:g}; the histogram followed")
        page.wait_for_timeout(500)     # late requests and console messages
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    print(f"{notebook.stem}: {n_canvas} canvases, {n_sliders} sliders, "
          f"{len(watch.external)} external requests, {len(watch.console)} console problems, "
          f"{watch.browser_notes} GL driver notes of the browser")
    assert not watch.console, watch.console
    assert not watch.external, f"requests to other hosts: {watch.external}"
    assert n_canvas >= min_canvas, f"only {n_canvas} plot canvases rendered"
    assert n_sliders >= min_sliders, f"only {n_sliders} sliders rendered"
    if notebook.stem == "00_introduction":
        assert has_release >= 1, "the ledger demo's Release button is missing"
