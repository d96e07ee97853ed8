"""A scripted tour of the served dashboard: screenshots of every view and the page's timings.

    python benchmarks/app/tour.py [OUTDIR] [--results FILE] [--chromium PATH]

(defaults: the screenshots to benchmarks/results/app/screenshots/ and the timings to
benchmarks/results/app/dashboard_tour.json and .md). Starts ``panel serve`` on app/page.py (temporary ledger), drives Debian's chromium with
Playwright through demo and private data, saves one PNG per view in OUTDIR (the README
screenshots) and prints the measured timings (against the dashboard's performance targets, ``TARGETS``) as JSON; ``--results``
also writes them, with the machine load (``uptime``) before and after, the versions and the
targets, to FILE (JSON) and FILE with ``.md``. Every request the browser makes is recorded:
any to a host other than the server is reported. Needs the test extra (playwright) and a
chromium binary; it downloads nothing. Figures are whatever this machine measured at that
moment (other work on the machine slows them); re-run to refresh them.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import load

from privclust.app import config

RESULTS = Path(__file__).resolve().parents[1] / "results" / "app"

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
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


JS_SHOWN = """const find = (root, pred) => { for (const el of root.querySelectorAll('*')) {
      if (pred(el)) return el;
      if (el.shadowRoot) { const hit = find(el.shadowRoot, pred); if (hit) return hit; } }
    return null; };
  const shown = (sel, text) => { const el = find(document, (e) => e.matches(sel) &&
      ((e.shadowRoot ? e.shadowRoot.textContent : '') + e.textContent).includes(text));
    return el !== null && el.checkVisibility() && el.getBoundingClientRect().height > 0; };
  const when_shown = (t0, sel, text, resolve) => { const frame = () => shown(sel, text) ?
    resolve((performance.now() - t0) / 1000) : requestAnimationFrame(frame);
    requestAnimationFrame(frame); };"""
JS_SWITCH = (
    """async ([tab, sel, text]) => { %s
  const header = find(document, (el) => el.classList.contains('bk-tab') &&
                                       el.textContent.trim() === tab);
  const t0 = performance.now();
  header.click();
  return await new Promise((resolve) => when_shown(t0, sel, text, resolve)); }"""
    % JS_SHOWN
)
JS_ARM_ECHO = (
    """([sel, text]) => { %s
  window.__privclust_echo = new Promise((resolve) => document.addEventListener('keydown',
    () => when_shown(performance.now(), sel, text, resolve), {once: true, capture: true})); }
"""
    % JS_SHOWN
)


def _switch_to(page, tab):
    """Seconds from the click on a tab (Trade-off or Gibbs) until the first frame in which its
    teaching text is visible, timed inside the page (``performance.now``, checked every
    animation frame): the server renders the tab (dynamic tabs) and sends it back. Timed with
    Playwright's own click and wait, its actionability checks (~40 ms before the click is
    sent) and polling back-off (up to 100 ms late) would be counted too."""
    teach = {"Trade-off": "The price of privacy", "Gibbs": "What is happening?"}[tab]
    return page.evaluate(JS_SWITCH, [tab, ".pc-teach", teach])


def _echo_trials(page, key):
    """Seconds from a key press on the Trade-off tab's "trials per ε" slider (focused) until the
    first frame showing the sweep plan the server computed for the new value (a widget round
    trip: browser -> server callback -> browser), timed inside the page like the tab switch."""
    before = int(re.search(r"x (\d+) trial", page.evaluate(JS_TEXT, ".pc-sweep-plan")).group(1))
    after = before + (1 if key == "ArrowRight" else -1)
    n_eps = int(re.search(r"(\d+) ε values", page.evaluate(JS_TEXT, ".pc-sweep-plan")).group(1))
    page.evaluate(JS_ARM_ECHO, [".pc-sweep-plan", f"= {n_eps * after} fits"])
    page.keyboard.press(key)
    return page.evaluate("() => window.__privclust_echo")


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


VIEWPORT = {"width": 1366, "height": 768}  # a common laptop screen: the README's screenshots

TARGETS = {  # the dashboard's performance targets (seconds; Gibbs refreshes per second)
    "server_ready_s": 3.0,
    "first_page_s": 2.0,
    "demo_update_after_slider_s": 2.0,
    "gibbs_refresh_per_s": 5.0,
    "round_trip_while_sampling_s": 0.25,
}


def _gibbs_updates(page):
    m = re.search(r"diagnostic updates (\d+)", page.evaluate(JS_TEXT, ".pc-gibbs-info"))
    return int(m.group(1)) if m else 0


def _slider_to(page, label, key):
    """Focus the slider whose label contains ``label`` and press ``key`` (Home/End/arrows)."""
    group = page.locator(".bk-input-group").filter(has_text=label).first
    group.locator(".noUi-handle").first.click()
    page.keyboard.press(key)


def tour(outdir, chromium, gibbs_seconds=8.0):
    import numpy as np
    from playwright.sync_api import sync_playwright

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    timings = {}
    seen = []  # (step, url) of every request the browser made
    shots = []
    step = ["first page"]

    def shot(page, name):
        page.screenshot(path=str(outdir / name))
        shots.append(name)
        step[0] = f"after {name}"

    t0 = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="privclust-tour-") as scratch,
        # the tour shows the owner view
        load.served(env_extra={config.OWNER_VIEW.env: "1"}) as (_, origin, server_log),
    ):
        timings["server_ready_s"] = time.perf_counter() - t0
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
                timings["browser"] = browser.version
                page = browser.new_page(viewport=VIEWPORT)
                page.on("request", lambda r: seen.append((step[0], r.url)))
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                warnings = []
                page.on(
                    "console", lambda m: warnings.append(m.text) if m.type == "warning" else None
                )
                # first page: navigation until Bokeh has rendered the document (first session of
                # a fresh server: it imports HoloViews and the app)
                t = time.perf_counter()
                page.goto(f"{origin}/page")
                page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
                timings["first_page_s"] = time.perf_counter() - t
                _wait(page, lambda: any("ε=1" in x for x in _titles(page)))
                timings["first_result_s"] = time.perf_counter() - t
                # a second session (warm server)
                other = browser.new_page(viewport=VIEWPORT)
                other.on("request", lambda r: seen.append(("second session", r.url)))
                t = time.perf_counter()
                other.goto(f"{origin}/page")
                other.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
                timings["later_page_s"] = time.perf_counter() - t
                other.close()
                shot(page, "clusters_subspace_demo.png")
                lat = []  # default demo run (union of subspaces, n = 1000): slider -> new plot
                for key in ("ArrowRight", "ArrowLeft") * 3:
                    before = _titles(page)
                    page.locator(".pc-epsilon .noUi-handle").first.click()
                    t = time.perf_counter()
                    page.keyboard.press(key)
                    _wait(
                        page,
                        lambda: _titles(page) != before and any("ε=" in x for x in _titles(page)),
                    )
                    lat.append(time.perf_counter() - t)
                timings["demo_update_after_slider_s"] = lat
                _tab(page, "Data")
                shot(page, "data_preview_demo.png")
                _tab(page, "Subspaces")
                shot(page, "subspaces.png")
                # Gibbs: a long run (20000 iterations of 8 chains, as in Wang, Wang & Singh, NIPS 2015,
                # Fig. 3, a diagnostic every 10) that outlasts the measurements (3 chains finished 20000
                # iterations in ~15 s once the sampler's process server started with the server);
                # Stop ends it.
                _tab(page, "Gibbs")
                # the same round trip with nothing running, for comparison (before the Gibbs
                # sampler is chosen: on demo data choosing it starts a demo fit in the server)
                idle = []
                for _ in range(3):
                    idle.append(_switch_to(page, "Trade-off"))
                    page.wait_for_timeout(200)
                    _switch_to(page, "Gibbs")
                    page.wait_for_timeout(200)
                timings["round_trip_idle_s"] = idle
                page.locator(".pc-algorithm select").first.select_option(
                    label="Gibbs sampler (asymptotic)"
                )
                page.wait_for_timeout(1500)
                _slider_to(page, "iterations", "End")
                page.wait_for_timeout(500)
                _slider_to(page, "chains", "End")
                page.wait_for_timeout(1500)
                start = page.get_by_role("button", name="Start sampler")
                stop = page.get_by_role("button", name="Stop")
                t = time.perf_counter()
                start.click()
                _wait(page, lambda: _gibbs_updates(page) > 0)
                timings["gibbs_first_update_s"] = time.perf_counter() - t
                seen_updates = []  # (time, counter shown in the page) at each change
                t = time.perf_counter()
                while time.perf_counter() - t < gibbs_seconds:
                    n = _gibbs_updates(page)
                    if not seen_updates or n != seen_updates[-1][1]:
                        seen_updates.append((time.perf_counter() - t, n))
                    page.wait_for_timeout(5)
                span = seen_updates[-1][0] - seen_updates[0][0] if len(seen_updates) > 1 else 0
                timings["gibbs_window_s"] = span
                timings["gibbs_updates_in_window"] = seen_updates[-1][1] - seen_updates[0][1]
                timings["gibbs_refresh_per_s"] = (
                    timings["gibbs_updates_in_window"] / span if span else None
                )
                # UI round trip while the sampler runs: a tab switch is a message to the server,
                # which renders the tab and sends it back; timed until the new tab is visible.
                # Gibbs (live traces redrawing) -> Trade-off, and back (re-renders the traces:
                # reported separately as the heavy case). On the Trade-off tab, a key press on a
                # slider whose server callback rewrites a line of text: the lightest round trip.
                rtt, back, echo = [], [], []
                for _ in range(5):
                    rtt.append(_switch_to(page, "Trade-off"))
                    page.wait_for_timeout(200)
                    page.locator(".bk-input-group").filter(has_text="trials per").first.locator(
                        ".noUi-handle"
                    ).first.click()  # focus the slider
                    for key in ("ArrowRight", "ArrowLeft"):
                        page.wait_for_timeout(200)
                        echo.append(_echo_trials(page, key))
                    page.wait_for_timeout(200)
                    back.append(_switch_to(page, "Gibbs"))
                    page.wait_for_timeout(500)
                timings["round_trip_while_sampling_s"] = rtt
                timings["gibbs_tab_rerender_while_sampling_s"] = back
                timings["widget_echo_while_sampling_s"] = echo
                timings["sampler_running_during_round_trips"] = not start.is_enabled()
                shot(page, "gibbs.png")
                stop.click()
                _wait(page, start.is_enabled, timeout=120)
                page.wait_for_timeout(1000)
                shot(page, "gibbs_stopped.png")
                _tab(page, "Report")
                shot(page, "report.png")
                for preset, name in (
                    ("Gaussian mixture (SCH19)", "clusters_kmeans_demo.png"),
                    ("Planted small ball (NSV16)", "clusters_ball_demo.png"),
                    ("Block count matrix (BP25)", "coclusters_demo.png"),
                ):
                    page.locator("select").first.select_option(label=preset)
                    page.wait_for_timeout(2000)
                    _tab(page, "Co-clusters" if "cocl" in name else "Clusters")
                    _wait(page, lambda: any("ε=" in x or "table" in x for x in _titles(page)))
                    page.wait_for_timeout(1500)
                    shot(page, name)
                _tab(page, "Trade-off")
                page.get_by_role("button", name="Run sweep").click()
                _wait(page, lambda: "Done" in page.evaluate(JS_TEXT, ".markdown"), timeout=300)
                shot(page, "tradeoff.png")
                page.locator("select").first.select_option(label="Gaussian mixture (SCH19)")
                page.wait_for_timeout(2000)
                _tab(page, "Plan")  # on the Gaussian-mixture demo data
                page.get_by_role("button", name="Run plan").click()
                _wait(
                    page,
                    lambda: "Done in" in page.evaluate(JS_TEXT, ".pc-plan-status"),
                    timeout=300,
                )
                page.wait_for_timeout(1500)
                # the curves and the recommendation, not the controls above them
                page.locator(".pc-plan-results").first.evaluate("e => e.scrollIntoView()")
                page.wait_for_timeout(500)
                shot(page, "plan.png")
                csv = Path(scratch) / "records.csv"
                X = np.random.default_rng(0).normal(size=(300, 5)) / 3
                np.savetxt(csv, X, delimiter=",", header="a,b,c,d,e", comments="")
                page.locator("select").first.select_option(label="Union of subspaces (WWS15)")
                page.wait_for_timeout(3000)
                page.locator(".pc-algorithm select").first.select_option(
                    label="Sample-and-aggregate (approx)"
                )
                page.wait_for_timeout(1500)
                # ε is back at 1 after the slider measurements: the default budget is 3 per dataset
                page.get_by_role("button", name="Upload").click()
                page.locator('.pc-dropper input[type="file"]').set_input_files(str(csv))
                page.wait_for_timeout(3000)
                page.get_by_role("button", name="Release").click()
                _wait(page, lambda: "Released" in page.evaluate(JS_TEXT, ".pc-status"))
                _tab(page, "Clusters")
                shot(page, "private_analyst_view.png")
                _tab(page, "Data")
                shot(page, "private_data_hidden.png")
                page.locator(".pc-owner input").first.check()
                _tab(page, "Clusters")
                page.wait_for_timeout(3000)
                shot(page, "private_owner_view.png")
                _tab(page, "Report")
                shot(page, "private_report.png")
                timings["page_errors"] = errors
                timings["console_warnings"] = warnings
                browser.close()
        except BaseException:
            step[0] = f"FAILED {step[0]}"
            tail = server_log()[-4000:]  # the server's side of the story
            print(f"tour {step[0]}; end of the server log:\n{tail}", file=sys.stderr)
            raise
    log_text = server_log()
    timings["foreign_requests"] = sorted(
        {
            f"{u} ({where})"
            for where, u in seen
            if not u.startswith((origin, origin.replace("http", "ws"), "data:", "blob:"))
        }
    )
    timings["requests"] = len(seen)
    timings["server_log_tracebacks"] = log_text.count("Traceback")
    if "Traceback" in log_text:  # the first one, to start from
        at = log_text.index("Traceback")
        timings["server_log_first_traceback"] = log_text[max(0, at - 300) : at + 1500]
    timings["screenshots"] = shots
    return timings


def verdict(timings):
    """{target: (measured summary, target, met)} for the performance targets ``TARGETS``."""
    out = {}
    for name, target in TARGETS.items():
        value = timings.get(name)
        if isinstance(value, list):
            value = max(value) if value else None
        if value is None:
            out[name] = (None, target, False)
        elif name == "gibbs_refresh_per_s":
            out[name] = (value, target, value >= target)
        else:
            out[name] = (value, target, value <= target)
    return out


def _fmt(values):
    return ", ".join(f"{x:.3f}" for x in values or [])


def write_results(path, timings, before, after, outdir, command):
    import bokeh
    import holoviews
    import panel

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    commit = load.git_head()
    record = {
        "when_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": command,
        "git_head": commit,
        "uptime_before": before,
        "uptime_after": after,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "versions": {
            "panel": panel.__version__,
            "bokeh": bokeh.__version__,
            "holoviews": holoviews.__version__,
        },
        "screenshots_dir": str(outdir),
        "timings": timings,
        "targets": {
            k: {"measured": v, "target": t, "met": ok} for k, (v, t, ok) in verdict(timings).items()
        },
    }
    path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    rows = ["| measure | measured | target | met |", "|---|---|---|---|"]
    for k, (v, t, ok) in verdict(timings).items():
        cmp = ">=" if k == "gibbs_refresh_per_s" else "<="
        shown = "not measured" if v is None else f"{v:.3g}"
        rows.append(f"| {k} | {shown} | {cmp} {t:g} | {'yes' if ok else 'NO'} |")
    lat = timings.get("demo_update_after_slider_s") or []
    rtt = timings.get("round_trip_while_sampling_s") or []
    md = [
        f"# Dashboard tour timings ({record['when_utc']})",
        "",
        f"Command: `{command}` (git {commit}); {os.cpu_count()} CPUs; panel "
        f"{panel.__version__}, bokeh {bokeh.__version__}, holoviews {holoviews.__version__}; "
        f"{timings.get('browser', '')}.",
        "",
        f"Machine load before: `{before}`",
        "",
        f"Machine load after: `{after}`",
        "",
        "Other developers share this machine: the load above is what the figures ran under.",
        "Lists (slider updates, round trips) are reported by their worst value. Round trips "
        "are timed inside the page (performance.now from the click or key press to the first "
        "animation frame showing the server's answer), not from Python around Playwright's "
        "click and wait, which would add its actionability checks (~40 ms) and its polling "
        "back-off (up to 100 ms late).",
        "",
        *rows,
        "",
        f"- first page of the first session {timings.get('first_page_s', float('nan')):.2f} s; "
        f"first result visible {timings.get('first_result_s', float('nan')):.2f} s; a later "
        f"session's page {timings.get('later_page_s', float('nan')):.2f} s",
        "- server ready includes the warm-up (app/warmup.py: imports and one throw-away "
        "page render before the server listens)",
        f"- demo update after a slider change (s): {_fmt(lat)}",
        f"- Gibbs: first diagnostic shown {timings.get('gibbs_first_update_s', float('nan')):.2f}"
        f" s after Start (the first run of this server); "
        f"{timings.get('gibbs_updates_in_window')} diagnostic updates shown in "
        f"{timings.get('gibbs_window_s', 0):.2f} s",
        f"- round trips while sampling (timed inside the page, from the click or key press to "
        f"the first frame showing the server's answer): Gibbs -> Trade-off tab (s): "
        f"{_fmt(rtt)}; back to the Gibbs tab (re-renders the live traces, s): "
        f"{_fmt(timings.get('gibbs_tab_rerender_while_sampling_s'))} (sampler still running: "
        f"{timings.get('sampler_running_during_round_trips')}); a slider key press echoed by "
        f"the server (s): {_fmt(timings.get('widget_echo_while_sampling_s'))}; the tab switch "
        f"with nothing running (s): {_fmt(timings.get('round_trip_idle_s'))}",
        f"- requests: {timings.get('requests')}, to other hosts: "
        f"{timings.get('foreign_requests')}; browser errors: {timings.get('page_errors')}; "
        f"console warnings: {timings.get('console_warnings')}; "
        f"server tracebacks: {timings.get('server_log_tracebacks')}",
        f"- screenshots ({outdir}): {', '.join(timings.get('screenshots', []))}",
        "",
    ]
    path.with_suffix(".md").write_text("\n".join(md))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "outdir", nargs="?", default=str(RESULTS / "screenshots"), help="folder for the screenshots"
    )
    parser.add_argument(
        "--results",
        default=str(RESULTS / "dashboard_tour.json"),
        help="write the timings (JSON, and .md) to this file",
    )
    parser.add_argument(
        "--gibbs-seconds",
        type=float,
        default=8.0,
        help="how long to watch the live diagnostics (default 8)",
    )
    parser.add_argument(
        "--chromium", default=os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    )
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no chromium found (apt-get install chromium, or --chromium PATH)")
    before = load.uptime()
    timings = tour(args.outdir, args.chromium, args.gibbs_seconds)
    after = load.uptime()
    print(json.dumps(timings, indent=2, default=str))
    for k, (v, t, ok) in verdict(timings).items():
        print(f"{k}: {v} (target {t}) {'met' if ok else 'NOT MET'}")
    if args.results:
        command = "python benchmarks/app/tour.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        write_results(args.results, timings, before, after, args.outdir, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
