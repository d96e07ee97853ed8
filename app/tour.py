"""A scripted tour of the served dashboard: screenshots of every view and the page's timings.

    python -m privclust.app.tour OUTDIR [--chromium PATH]

Starts ``panel serve`` on app/page.py (temporary ledger), drives Debian's chromium with
Playwright through demo and private data, saves one PNG per view in OUTDIR (the README
screenshots) and prints the measured timings (issue 7 "Performance") as JSON. Needs the test
extra (playwright) and a chromium binary; it downloads nothing.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAGE = Path(__file__).with_name("page.py")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
JS_TITLES = """() => { const out = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models) if (m.type === 'Title' || m.constructor.name === 'Title')
      out.push(m.text);
  return out; }"""
JS_TEXT = """(sel) => { const out = [];
  const visit = (root) => root.querySelectorAll('*').forEach((el) => {
    if (el.matches(sel)) out.push((el.shadowRoot ? el.shadowRoot.textContent : '') + el.textContent);
    if (el.shadowRoot) visit(el.shadowRoot); });
  visit(document); return out.join(' '); }"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(page, fn, timeout=60.0):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = fn()
        if value:
            return value
        page.wait_for_timeout(20)
    raise TimeoutError("the page did not reach the expected state")


def _titles(page):
    return page.evaluate(JS_TITLES)


def _tab(page, name):
    page.locator(".bk-tab").filter(has_text=re.compile(f"^{name}$")).first.click()
    page.wait_for_timeout(1500)


def tour(outdir, chromium):
    from playwright.sync_api import sync_playwright
    import numpy as np
    import requests

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    state = tempfile.mkdtemp(prefix="privclust-tour-")
    port = _free_port()
    env = dict(os.environ, PRIVCLUST_STATE_DIR=state)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "panel", "serve", str(PAGE), "--address",
                             "127.0.0.1", "--port", str(port), "--allow-websocket-origin",
                             f"127.0.0.1:{port}", "--liveness"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    timings = {}
    try:
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/liveness", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.05)
        timings["server_ready_s"] = time.perf_counter() - t0
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            t = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}/page")
            page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
            timings["first_page_s"] = time.perf_counter() - t
            _wait(page, lambda: any("ε=1" in x for x in _titles(page)))
            timings["first_result_s"] = time.perf_counter() - t
            page.screenshot(path=str(outdir / "clusters_subspace_demo.png"))
            lat = []
            for _ in range(3):
                before = _titles(page)
                page.locator(".pc-epsilon .noUi-handle").first.click()
                t = time.perf_counter()
                page.keyboard.press("ArrowRight")
                _wait(page, lambda: _titles(page) != before and any("ε=" in x for x in _titles(page)))
                lat.append(time.perf_counter() - t)
            timings["demo_update_after_slider_s"] = lat
            _tab(page, "Subspaces")
            page.screenshot(path=str(outdir / "subspaces.png"))
            _tab(page, "Gibbs")
            start = page.get_by_role("button", name="Start sampler")
            seen = []  # run 1: how often the traces refresh, no interaction
            start.click()
            t = time.perf_counter()
            while time.perf_counter() - t < 120:
                m = re.search(r"diagnostic updates (\d+)", page.evaluate(JS_TEXT, ".pc-gibbs-info"))
                n = int(m.group(1)) if m else 0
                if n and (not seen or n != seen[-1][1]):
                    seen.append((time.perf_counter() - t, n))
                if n and start.is_enabled():
                    break
                page.wait_for_timeout(10)
            span = seen[-2][0] - seen[0][0] if len(seen) > 2 else float("nan")
            timings["gibbs_updates"] = seen[-1][1] if seen else 0
            timings["gibbs_refresh_per_s"] = (seen[-2][1] - seen[0][1]) / span if span else None
            rtt = []  # run 2: server round trips (switch tab and back) while the sampler runs
            start.click()
            page.wait_for_timeout(300)
            while len(rtt) < 3 and not start.is_enabled():
                s0 = time.perf_counter()
                page.locator(".bk-tab").filter(has_text=re.compile("^Report$")).first.click()
                page.locator(".pc-report").first.wait_for(state="visible")
                rtt.append(time.perf_counter() - s0)
                page.locator(".bk-tab").filter(has_text=re.compile("^Gibbs$")).first.click()
                page.locator(".pc-gibbs-info").first.wait_for(state="visible")
            timings["tab_switch_while_sampling_s"] = rtt
            _wait(page, start.is_enabled)
            page.screenshot(path=str(outdir / "gibbs.png"))
            _tab(page, "Report")
            page.screenshot(path=str(outdir / "report.png"))
            for preset, name in (("Gaussian mixture (SCH19)", "clusters_kmeans_demo.png"),
                                 ("Planted small ball (NSV16)", "clusters_ball_demo.png"),
                                 ("Block count matrix (BP25)", "coclusters_demo.png")):
                page.locator("select").first.select_option(label=preset)
                page.wait_for_timeout(2000)
                _tab(page, "Co-clusters" if "cocl" in name else "Clusters")
                _wait(page, lambda: any("ε=" in x or "table" in x for x in _titles(page)))
                page.wait_for_timeout(1500)
                page.screenshot(path=str(outdir / name))
            _tab(page, "Trade-off")
            page.get_by_role("button", name="Run sweep").click()
            _wait(page, lambda: "Done" in page.evaluate(JS_TEXT, ".markdown"), timeout=300)
            page.screenshot(path=str(outdir / "tradeoff.png"))
            csv = Path(state) / "records.csv"
            X = np.random.default_rng(0).normal(size=(300, 5)) / 3
            np.savetxt(csv, X, delimiter=",", header="a,b,c,d,e", comments="")
            page.locator("select").first.select_option(label="Union of subspaces (WWS15)")
            page.wait_for_timeout(3000)
            page.locator(".pc-epsilon .noUi-handle").first.click()
            for _ in range(3):  # back to ε = 1: the default budget is ε = 3 per dataset
                page.keyboard.press("ArrowLeft")
            page.wait_for_timeout(3000)
            page.get_by_role("button", name="Upload").click()
            page.locator('input[type="file"]').set_input_files(str(csv))
            page.wait_for_timeout(3000)
            page.get_by_role("button", name="Release").click()
            _wait(page, lambda: "Released" in page.evaluate(JS_TEXT, ".pc-status"))
            _tab(page, "Clusters")
            page.screenshot(path=str(outdir / "private_analyst_view.png"))
            page.locator(".pc-owner input").first.check()
            page.wait_for_timeout(3000)
            page.screenshot(path=str(outdir / "private_owner_view.png"))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(state, ignore_errors=True)
    return timings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH")
                        or shutil.which("chromium"))
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no chromium found (apt-get install chromium, or --chromium PATH)")
    print(json.dumps(tour(args.outdir, args.chromium), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
