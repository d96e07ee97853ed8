"""Browser checks shared by the notebook UI tests (served with ``panel serve`` and run in
JupyterLab): a watch that blocks and counts requests to other hosts and collects console
problems, and the introduction's own-axes and slider check."""

import re
import time
from urllib.parse import urlsplit

FIGURES_JS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents)
    for (const m of doc.all_models)
      if (m.type === 'Figure' || m.constructor.name === 'Figure')
        out.push({title: m.title ? m.title.text : '', x: [m.x_range.start, m.x_range.end],
                  x_range: m.x_range.id, y_range: m.y_range.id});
  return out;
}"""


class PageWatch:
    """Blocks and records every request the page sends to another host than ``origin`` and
    collects console errors/warnings and uncaught page errors."""

    def __init__(self, page, origin):
        self.origin = origin
        self.external, self.console = [], []
        page.context.route("**/*", self._route)  # also workers and pop-ups of the page
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
        if msg.type in ("error", "warning"):
            self.console.append(f"{msg.type}: {msg.text}")


def _figures(page, prefix):
    return [f for f in page.evaluate(FIGURES_JS) if f["title"].startswith(prefix)]


def _drag_slider(page, index, fraction, attempts=3):
    """Drag the handle of the index-th slider of the page to ``fraction`` of its track (a
    mouse drag: Panel's throttled sliders send their value when the mouse is released). The
    drag is repeated while the handle has not moved (outputs still rendering above it can shift
    the page under the mouse)."""
    track = page.locator(".noUi-target").nth(index)
    handle = track.locator(".noUi-handle")
    before = handle.get_attribute("aria-valuenow")
    for _ in range(attempts):
        track.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        box = track.bounding_box()
        knob = handle.bounding_box()
        y = knob["y"] + knob["height"] / 2
        page.mouse.move(knob["x"] + knob["width"] / 2, y)
        page.mouse.down()
        page.mouse.move(box["x"] + fraction * box["width"], y, steps=8)
        page.mouse.up()
        page.wait_for_timeout(300)
        if handle.get_attribute("aria-valuenow") != before:
            return
    raise AssertionError(f"the slider's handle did not move (aria-valuenow {before})")


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
    assert laplace and gauss and public and derived, [f["title"] for f in page.evaluate(FIGURES_JS)]
    lo, hi = laplace[0]["x"]
    assert 20 < lo < 37 and 38 < hi < 55, f"Laplace histogram at ε = 1 spans {lo:.4g}..{hi:.4g}"
    lo, hi = gauss[0]["x"]
    assert -40 < lo < 37 and 38 < hi < 120, f"Gaussian histogram spans {lo:.4g}..{hi:.4g}"
    lo, hi = public[0]["x"]
    assert 20_000 < lo < 60_000 < hi < 100_000, f"public-bounds histogram spans {lo:.4g}..{hi:.4g}"
    assert (
        len(
            {
                laplace[0]["x_range"],
                gauss[0]["x_range"],
                public[0]["x_range"],
                derived[0]["x_range"],
            }
        )
        == 4
    ), "plots of different cells share one x range"

    # The first slider of the page is the Laplace ε (grid 0.01 ... 50, 1 in the middle): drag it
    # to the left end of its track, towards ε = 0.01
    _drag_slider(page, 0, 0.02)
    deadline = time.time() + timeout_s
    while True:
        moved = [
            f
            for f in _figures(page, "Laplace releases, ε = ")
            if not f["title"].startswith("Laplace releases, ε = 1 ")
        ]
        if moved or time.time() > deadline:
            break
        page.wait_for_timeout(200)
    assert moved, (
        "moving the ε slider did not re-plot the Laplace histogram within "
        f"{timeout_s} s: {[f['title'] for f in page.evaluate(FIGURES_JS)]}"
    )
    eps = float(re.match(r"Laplace releases, ε = ([0-9.e+-]+)", moved[-1]["title"]).group(1))
    assert eps < 1
    lo, hi = moved[-1]["x"]
    need_lo, need_hi = 37 - 8 / eps, 38 + 8 / eps
    assert lo <= need_lo + 1e-6 and hi >= need_hi - 1e-6, (
        f"ε = {eps:g}: histogram over {lo:.4g}..{hi:.4g} misses {need_lo:.4g}..{need_hi:.4g}"
    )
    assert hi - lo < 1.3 * (need_hi - need_lo), (
        f"ε = {eps:g}: histogram over {lo:.4g}..{hi:.4g}, its data need {need_lo:.4g}..{need_hi:.4g}"
    )
    return eps
