"""In a browser: a box per column, pasted into the sidebar, reaches the estimator of a private
release (the Report shows the box from the parameters the Curator recorded with the release),
the table shows the column names, and the Suggest-bounds forecast is shown before anything is
spent."""

import numpy as np
import pytest
from browser import expect_text, open_page, open_tab, text_of, upload, wait_for
from playwright.sync_api import expect

pytestmark = pytest.mark.ui

NAMES = ["alcohol", "proline", "hue"]


def _wine_like(path, n=200, seed=3):
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [rng.uniform(11, 14.8, n), rng.uniform(280, 1680, n), rng.uniform(0.5, 1.7, n)]
    )
    np.savetxt(path, X, delimiter=",", header=",".join(NAMES), comments="", fmt="%.3f")
    return path


def test_pasted_box_per_column_reaches_the_released_estimator(page, server, tmp_path):
    open_page(page, server)
    upload(page, _wine_like(tmp_path / "wine_like.csv"))
    expect(page.locator(".pc-private").first).to_be_visible(timeout=60_000)
    page.locator(".pc-task select").first.select_option(label="k-means")
    select = page.locator(".pc-algorithm select").first
    wait_for(
        page,
        lambda: any("DPLloyd" in o for o in select.locator("option").all_text_contents()),
        what="DPLloyd",
        timeout=60,
    )
    select.select_option(
        label=next(o for o in select.locator("option").all_text_contents() if "DPLloyd" in o)
    )
    # the table lists the uploaded columns by name; the forecast is there before any spend
    wait_for(
        page, lambda: "proline" in text_of(page, ".pc-box-table"), what="column names", timeout=60
    )
    expect_text(page, ".pc-bounds-forecast", "unreliable")

    expect_text(page, ".pc-kind", "DPLloyd", timeout=60_000)
    page.wait_for_timeout(1000)  # the algorithm's parameter block has re-rendered
    paste = page.locator(".pc-box-paste textarea").first
    paste.fill("alcohol, 10, 16\nproline, 256, 2048\nhue, 0.25, 2")
    paste.press("Tab")  # the text area sends its value when it loses focus
    wait_for(
        page, lambda: "2048" in text_of(page, ".pc-box-table"), what="the pasted box", timeout=60
    )

    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Released", timeout=60_000)
    open_tab(page, "Report")
    expect_text(page, ".pc-report", "proline [256, 2048]")
    report = text_of(page, ".pc-report")
    assert "alcohol [10, 16]" in report and "hue [0.25, 2]" in report, report
