"""Browser test: a tour of every tab, on demo data (the four presets, a Gibbs run, a trade-off
sweep) and on private data (an upload, a release, the data owner view), logs no console error
and no console warning, and the server log carries no Python warning with its source context
or stack (Debian chromium via Playwright against ``panel serve``)."""

import re

import pytest
from browser import (
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

pytestmark = pytest.mark.ui

TABS = (
    "Data",
    "Clusters",
    "Subspaces",
    "Co-clusters",
    "Gibbs",
    "Plan",
    "Trade-off",
    "Report",
    "Releases",
)


def visit_all(page, pause=400):
    for name in TABS:
        open_tab(page, name)
        page.wait_for_timeout(pause)


def problems(msgs):
    """Console messages of type error or warning, as 'type: text'."""
    return [f"{m.type}: {m.text}" for m in msgs if m.type in ("error", "warning")]


def test_tour_logs_no_console_error_or_warning(page, server, tmp_path):
    log_start = server["log"].stat().st_size
    msgs, errors = open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    visit_all(page, pause=600)
    # a short Gibbs run, with the tab hidden part of the time (its figures are updated then)
    page.locator(".pc-algorithm select").first.select_option(label="Gibbs sampler (asymptotic)")
    page.wait_for_timeout(1500)
    open_tab(page, "Gibbs")
    page.get_by_role("button", name="Start sampler").click()
    open_tab(page, "Report")
    page.wait_for_timeout(1500)
    open_tab(page, "Gibbs")
    expect_text(page, ".pc-gibbs-info", "diagnostic updates")
    page.get_by_role("button", name="Start sampler").wait_for(state="visible")
    wait_for(
        page,
        lambda: page.get_by_role("button", name="Start sampler").is_enabled(),
        timeout=60,
        what="the run to end",
    )
    # a trade-off sweep that ends while another tab is shown
    open_tab(page, "Trade-off")
    page.get_by_role("button", name="Run sweep").click()
    open_tab(page, "Clusters")
    page.wait_for_timeout(4000)
    open_tab(page, "Trade-off")
    wait_for(
        page,
        lambda: re.search(r"Done|Sweep failed|Cancelled", text_of(page, ".markdown")),
        timeout=120,
        what="the sweep",
    )
    page.wait_for_timeout(800)
    # the other demo tasks: each preset switches the task and re-renders the views
    preset = page.locator(".bk-input-group").filter(has_text="preset").locator("select").first
    for label in (
        "Gaussian mixture (SCH19)",
        "Planted small ball (NSV16)",
        "Block count matrix (BP25)",
    ):
        preset.select_option(label=label)
        page.wait_for_timeout(1500)
        visit_all(page)
    # private data: an upload, a release, then the data owner view
    upload(page, write_csv(tmp_path / "tour.csv", n=120, d=4, seed=21))
    page.locator(".pc-private").first.wait_for()
    visit_all(page)
    page.locator(".pc-task select").first.select_option(label="k-means")
    page.wait_for_timeout(800)
    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Released", timeout=60_000)
    visit_all(page)
    page.locator(".pc-owner input").first.check()
    page.wait_for_timeout(1000)
    visit_all(page)
    page.wait_for_timeout(1000)
    found = problems(msgs)
    assert not found and not errors, (len(found), sorted(set(found))[:20], errors)
    log = server["log"].read_text(errors="replace")[log_start:]
    assert "Traceback" not in log, log[-3000:]


def test_estimator_warnings_are_one_line_in_the_server_log(page, server, browser):
    """A PrivacyWarning (sample-and-aggregate at epsilon 1 warns that its noise is of the order
    of the output) is one log line: no source line, no stack -- also after a later session has
    ended (panel serve clears the page module of an ended session: a handler defined there lost
    its globals and failed inside the other sessions' events)."""
    open_page(page, server)
    later = browser.new_context().new_page()  # a session opened after this one, and closed
    open_page(later, server)
    later.context.close()
    page.wait_for_timeout(3000)  # the test server discards an unused session after ~1 s
    log_start = server["log"].stat().st_size
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    page.locator(".pc-algorithm select").first.select_option(label="Sample-and-aggregate (approx)")
    move_epsilon(page, "ArrowRight")  # a new run of this session, which warns
    wait_for(
        page,
        lambda: "PrivacyWarning" in server["log"].read_text(errors="replace")[log_start:],
        what="the sample-and-aggregate warning in the log",
    )
    page.wait_for_timeout(1000)
    lines = server["log"].read_text(errors="replace")[log_start:].splitlines()
    for i, line in enumerate(lines):
        if "Warning" in line and i + 1 < len(lines):
            assert not lines[i + 1].startswith((" ", "\t")), lines[i : i + 3]
    assert not any(line.startswith("Traceback") for line in lines)
    assert not any("NameError" in line for line in lines)
    assert any("PrivacyWarning: " in line for line in lines)
