"""Browser tests: Debian chromium (Playwright) against a real ``panel serve app/page.py``.

load -> pick -> release -> compare; uploads (preview, malformed, oversized); budget refusal;
session cache; live Gibbs diagnostics with Stop; independent sessions; no request leaves the
server.
"""

import re
import time
from pathlib import Path

import pytest
from browser import (
    algorithm_options,
    assert_local_and_clean,
    choose_long_gibbs_run,
    expect_text,
    move_epsilon,
    open_page,
    open_tab,
    text_of,
    titles,
    upload,
    wait_for,
    write_csv,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.ui


JS_SEGMENTS = """() => {
  let s = 0, n = 0;
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models)
      if (m.type === 'ColumnDataSource' || m.constructor.name === 'ColumnDataSource') {
        const data = m.data; const x = data instanceof Map ? data.get('x1') : data['x1'];
        if (x) { for (const v of x) { s += v; n += 1; } }
      }
  return n ? [n, s] : null;
}"""


JS_EPS_FIGURES = """() => {
  const ids = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models)
      if (m.title && m.title.text !== undefined && m.title.text.includes('ε=')) ids.push(m.id);
  return ids.sort();
}"""

# mutation records of a BokehJS position stylesheet set twice to the same text, then to another
JS_STYLE_SETS = """() => {
  const S = Bokeh.require('core/dom').InlineStyleSheet;
  const sheet = new S(':host { top: 1px; }');
  const watch = new MutationObserver(() => {});
  watch.observe(sheet.el, {childList: true, characterData: true, subtree: true});
  sheet.replace(':host { top: 1px; }');
  const same = watch.takeRecords().length;
  sheet.replace(':host { top: 2px; }');
  const changed = watch.takeRecords().length;
  watch.disconnect();
  return [same, changed, sheet.css];
}"""

# frames of FilePond's loop (its "readers" run once a frame) over ``ms`` milliseconds
JS_DROPPER_FRAMES = """(ms) => new Promise((done) => {
  let n = 0;
  const readers = window.__framePainter.readers;
  const count = () => { n += 1; };
  readers.push(count);
  setTimeout(() => { readers.splice(readers.indexOf(count), 1); done(n); }, ms);
})"""


def test_the_idle_file_dropper_draws_few_frames_and_wakes_for_a_file(page, server):
    """FilePond's frame loop ran at 60 frames a second on every page for its whole life (0.08 of
    a core per idle page); idle it now runs about 4 times a second, and a file dragged over the
    page brings the full rate back (page_scripts.IDLE_FILE_DROPPER)."""
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    page.wait_for_timeout(1000)  # the page's scripts run when its document is ready
    idle = page.evaluate(JS_DROPPER_FRAMES, 2000)
    page.evaluate("() => document.dispatchEvent(new DragEvent('dragenter', {bubbles: true}))")
    awake = page.evaluate(JS_DROPPER_FRAMES, 2000)
    assert 2 <= idle <= 14, idle  # about 8 at 4 a second; 60 a second gave ~120
    assert awake >= 3 * idle and awake >= 30, (idle, awake)


def test_server_warmed_up_and_sessions_start_cleanly(page, server):
    """The --setup warm-up ran (its guard once never matched under panel serve) and its
    throw-away page left no hook behind that breaks the creation of real sessions."""
    open_page(page, server)
    log = server["log"].read_text(errors="replace")
    assert "privclust: warm-up done" in log and "warm-up failed" not in log
    assert "Failed to run session creation hooks" not in log


def test_page_loads_locally_and_epsilon_changes_the_plot(page, server):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    t0 = time.perf_counter()
    msgs, errors = open_page(page, server)
    expect_text(page, ".pc-demo", "nothing is spent")
    wait_for(page, lambda: any("ε=1" in t for t in titles(page)), what="first demo result")
    first_page_s = time.perf_counter() - t0
    before = page.evaluate(JS_SEGMENTS)
    figures = page.evaluate(JS_EPS_FIGURES)
    assert before is not None and figures
    handle = page.locator(".pc-epsilon .noUi-handle").first
    handle.click()
    page.keyboard.press("ArrowRight")  # 1 -> 2 on the log grid
    wait_for(page, lambda: any("ε=2" in t for t in titles(page)), what="re-run at ε=2")
    wait_for(page, lambda: page.evaluate(JS_SEGMENTS) != before, what="plot data to change")
    assert page.evaluate(JS_EPS_FIGURES) == figures  # the same figure, redrawn in place
    # a repaint leaves an unchanged stylesheet alone (page_scripts.SKIP_UNCHANGED_STYLES)
    assert page.evaluate(JS_STYLE_SETS) == [0, 1, ":host { top: 2px; }"]
    page.keyboard.press("ArrowLeft")  # back to 1: the first result's data again
    wait_for(page, lambda: any("ε=1" in t for t in titles(page)), what="back at ε=1")
    wait_for(page, lambda: page.evaluate(JS_SEGMENTS) == before, what="the first data again")
    assert_local_and_clean(server, requests, msgs, errors)
    print(f"\n[timing] server ready {server['startup_s']:.2f}s, first result {first_page_s:.2f}s")


def test_upload_preview_and_malformed_alert(page, server, tmp_path):
    open_page(page, server)
    upload(page, write_csv(tmp_path / "cells.csv", seed=11))
    expect_text(page, ".pc-private", "PRIVATE")
    # n is public under the replace-one ledger (the Curator's public facts)
    expect_text(page, ".pc-data-summary", "80 records x 4 features")
    open_tab(page, "Data")
    expect_text(page, ".pc-preview", "gene0, gene1, gene2, gene3")
    bad = tmp_path / "<img src=x onerror=alert(1)>.csv"
    bad.write_text("a,b\n1,2\n3,oops\n")
    page.locator('input[type="file"]').set_input_files(str(bad))
    expect_text(page, ".pc-upload-error", "row 3")
    expect_text(page, ".pc-upload-error", "<img src=x onerror=alert(1)>.csv")  # literal text
    assert "Traceback" not in text_of(page, ".pc-upload-error")


def test_release_store_then_refusal_and_the_list_survives_a_reload(page, server, tmp_path):
    """Private mode offers no non-private algorithm and no seed; a release is charged once,
    an identical one comes from the store, one over budget is refused; after a reload (a new
    session) the same upload shows the same spent total and lists the earlier release."""
    data = write_csv(tmp_path / "patients.csv", seed=12)
    open_page(page, server)
    expect(page.locator(".pc-seed").first).to_be_visible()  # demo data: seeds apply
    upload(page, data)
    expect(page.locator(".pc-private").first).to_be_visible()
    expect(page.locator(".pc-seed")).to_be_hidden()
    expect_text(page, ".pc-seed-note", "fresh randomness")
    page.locator(".pc-task select").first.select_option(label="k-means")
    wait_for(
        page,
        lambda: any("Compressive" in o for o in algorithm_options(page)),
        what="k-means algorithms",
    )
    options = algorithm_options(page)
    assert options and not any("non-private" in o or "Lloyd k-means" in o for o in options)
    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Released", timeout=60_000)
    expect_text(page, ".pc-ledger", "spent ε 1 ")
    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "release store")
    expect_text(page, ".pc-ledger", "spent ε 1 ")
    # analyst view: the released result only, no raw records, no baseline
    assert any("non-private baseline" in t for t in titles(page))
    assert not any("NOT PRIVATE" in t for t in titles(page))
    move_epsilon(page, "ArrowRight")  # ε 2: 1 + 2 > 2.5
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Refused", timeout=60_000)
    expect_text(page, ".pc-ledger", "spent ε 1 ")
    expect_text(page, ".pc-releases", "CompressiveKMeans")
    page.reload()
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    upload(page, data)
    expect(page.locator(".pc-private").first).to_be_visible()
    expect_text(page, ".pc-ledger", "spent ε 1 ")
    expect_text(page, ".pc-releases", "CompressiveKMeans")
    expect(page.locator(".pc-reopen").first).to_be_visible()
    page.get_by_role("button", name="Re-open release").click()
    expect_text(page, ".pc-status", "Re-opened release")
    expect_text(page, ".pc-ledger", "spent ε 1 ")


JS_TRACE_ROWS = """() => {
  const out = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models)
      if (m.type === 'ColumnDataSource' || m.constructor.name === 'ColumnDataSource') {
        const data = m.data; const y = data instanceof Map ? data.get('cost_0') : data['cost_0'];
        if (y) out.push(y.length);
      }
  return out;
}"""


def test_gibbs_streams_live_and_stops(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    choose_long_gibbs_run(page)
    page.wait_for_timeout(1000)
    open_tab(page, "Gibbs")
    page.get_by_role("button", name="Start sampler").click()

    def updates():
        m = re.search(r"diagnostic updates (\d+)", text_of(page, ".pc-gibbs-info"))
        return int(m.group(1)) if m else 0

    wait_for(page, lambda: updates() >= 3, what="3 diagnostic updates")
    # the cost trace in the browser grows by streamed rows, capped at 400 points per chain
    first = wait_for(page, lambda: page.evaluate(JS_TRACE_ROWS), what="cost trace")
    wait_for(
        page, lambda: max(page.evaluate(JS_TRACE_ROWS) or [0]) > max(first), what="streamed points"
    )
    assert max(page.evaluate(JS_TRACE_ROWS)) <= 400
    stop = page.get_by_role("button", name="Stop")
    assert stop.is_enabled(), f"the sampler ended early: {text_of(page, '.pc-gibbs-info')}"
    stop.click()
    expect(page.get_by_role("button", name="Start sampler")).to_be_enabled(timeout=30_000)
    assert any("cost per chain" in t for t in titles(page))
    expect_text(page, ".pc-status", "Gibbs sampler")


def _descendants(pid):
    """PIDs of the living descendants of process ``pid`` (Linux /proc; zombies excluded)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
        if state != "Z":
            children.setdefault(int(ppid), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def test_closing_the_tab_stops_the_sampler(browser, server):
    """Session end stops the sampler's process (its session-end hook was once refused by
    Bokeh, silently, and a 20000-iteration run outlived its closed tab). The server fixture
    discards a closed session after about a second."""
    before = set(_descendants(server["proc"].pid))  # the warm-up's forkserver, leftovers
    context = browser.new_context()
    page = context.new_page()
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    choose_long_gibbs_run(page)
    open_tab(page, "Gibbs")
    page.get_by_role("button", name="Start sampler").click()
    wait_for(
        page,
        lambda: "diagnostic updates" in text_of(page, ".pc-gibbs-info"),
        what="the sampler's first diagnostic",
    )
    sampler = set(_descendants(server["proc"].pid)) - before
    assert sampler, "no sampler process found"
    context.close()
    deadline = time.time() + 12  # discarded after ~1 s, then 2 s of grace, then terminated
    while set(_descendants(server["proc"].pid)) & sampler:
        assert time.time() < deadline, "the sampler outlived its session"
        time.sleep(0.25)


def test_two_sessions_are_independent(browser, server, tmp_path):
    a = browser.new_context()
    b = browser.new_context()
    try:
        pa, pb = a.new_page(), b.new_page()
        open_page(pa, server)
        open_page(pb, server)
        upload(pa, write_csv(tmp_path / "mine.csv", seed=13))
        expect(pa.locator(".pc-private").first).to_be_visible()
        pb.reload()
        pb.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
        expect(pb.locator(".pc-demo").first).to_be_visible()
        expect_text(pa, ".pc-data-summary", "mine.csv")
        assert "mine.csv" not in text_of(pb, ".pc-data-summary") + text_of(pb, ".pc-banner")
    finally:
        a.close()
        b.close()


def test_oversized_upload_is_refused_and_server_survives(page, server, tmp_path):
    import requests

    open_page(page, server)
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "0.123456789,0.987654321\n" * 70_000)  # ~1.7 MB > 1 MB cap
    upload(page, big)
    expect(page.get_by_text(re.compile("too large", re.I)).first).to_be_visible()
    page.wait_for_timeout(1000)
    expect(page.locator(".pc-demo").first).to_be_visible()  # the data did not change
    assert requests.get(f"{server['base']}/liveness", timeout=5).ok
    upload(page, write_csv(tmp_path / "small.csv", seed=14))
    expect(page.locator(".pc-private").first).to_be_visible()


def test_every_tab_loads_only_from_the_server(page, server):
    """Tabs render lazily (dynamic): visiting each one, incl. the private view and the upload
    widget, must still fetch nothing from any other host and log no browser error."""
    seen = []
    page.on("request", lambda r: seen.append(r.url))
    msgs, errors = open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    for name in ("Data", "Clusters", "Subspaces", "Co-clusters", "Gibbs", "Trade-off", "Report"):
        open_tab(page, name)
        page.wait_for_timeout(700)
    page.get_by_role("button", name="Upload").click()
    page.wait_for_timeout(700)
    assert_local_and_clean(server, seen, msgs, errors)


def test_switching_tabs_while_the_sampler_runs_stays_local(page, server):
    """Regression (panel 1.9.4, dynamic tabs): components updated while their tab was hidden
    had their stylesheets rewritten to cdn.holoviz.org; page.keep_stylesheets_local stops it."""
    seen = []
    page.on("request", lambda r: seen.append(r.url))
    msgs, errors = open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    choose_long_gibbs_run(page)  # still running while we switch tabs
    page.wait_for_timeout(1000)
    open_tab(page, "Gibbs")
    page.get_by_role("button", name="Start sampler").click()
    expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    for _ in range(3):
        open_tab(page, "Report")
        page.wait_for_timeout(800)
        open_tab(page, "Gibbs")
        page.wait_for_timeout(800)
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_role("button", name="Start sampler")).to_be_enabled(timeout=60_000)
    assert_local_and_clean(server, seen, msgs, errors)


def test_a_rejected_upload_is_not_shown_as_complete(page, server, tmp_path):
    """A file the server refuses leaves the error beside an empty drop zone, not a green
    "Upload complete" item."""
    open_page(page, server)
    bad = tmp_path / "broken.csv"
    bad.write_text("a,b\n1,2\n3,oops\n")
    upload(page, bad)
    expect_text(page, ".pc-upload-error", "row 3")
    page.wait_for_timeout(1500)
    assert "Upload complete" not in text_of(page, ".pc-dropper")
    good = write_csv(tmp_path / "fine.csv", seed=4)
    page.locator('input[type="file"]').set_input_files(str(good))  # the fresh zone works
    expect(page.locator(".pc-private").first).to_be_visible()
