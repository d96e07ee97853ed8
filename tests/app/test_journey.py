"""The analyst's journey end to end, in a browser against the served page: upload -> suggest
bounds -> release -> reload -> the past release is listed and re-opens -> a second user spends
-> the first user's ledger follows without any action -> a release over the remainder is
refused, stating both numbers."""

import re

import pytest
from browser import expect_text, move_epsilon, open_page, text_of, upload, wait_for, write_csv
from playwright.sync_api import expect

pytestmark = pytest.mark.ui


def spent(page):
    """The spent epsilon the ledger panel shows."""
    match = re.search(r"spent ε\s*([0-9.]+)", text_of(page, ".pc-ledger"))
    return float(match.group(1)) if match else None


def choose(page, task, algorithm):
    page.locator(".pc-task select").first.select_option(label=task)
    select = page.locator(".pc-algorithm select").first
    wait_for(
        page,
        lambda: any(algorithm in o for o in select.locator("option").all_text_contents()),
        what=algorithm,
    )
    label = next(o for o in select.locator("option").all_text_contents() if algorithm in o)
    select.select_option(label=label)


def test_upload_bounds_release_reload_second_user_refusal(page, server, tmp_path, browser):
    data = write_csv(tmp_path / "journey.csv", n=300, seed=31)
    open_page(page, server)
    upload(page, data)
    expect(page.locator(".pc-private").first).to_be_visible(timeout=60_000)
    choose(page, "k-means", "Compressive")
    expect_text(page, ".pc-box-help", "never from the records")
    expect_text(page, ".pc-cost", "Charges ε = 1")  # what Release costs, before it runs

    # bounds: the forecast (free) says eps 0.1 is too little for 300 records x 4 columns, so
    # nothing is spent until asked; then a small, stated epsilon, charged and recorded
    expect_text(page, ".pc-bounds-forecast", "unreliable")
    page.get_by_role("button", name="Suggest bounds (spends ε)").click()
    expect_text(page, ".pc-status", "Nothing was spent", timeout=60_000)
    assert spent(page) == 0.0
    page.locator(".pc-bounds-anyway input").first.check()
    page.get_by_role("button", name="Suggest bounds (spends ε)").click()
    expect_text(page, ".pc-status", "Suggested a public box per column", timeout=60_000)
    wait_for(page, lambda: spent(page) == pytest.approx(0.1), what="the bounds' charge")

    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Released", timeout=60_000)
    wait_for(page, lambda: spent(page) == pytest.approx(1.1), what="the release's charge")

    # a reload is a new session: same budget, the past releases listed and re-opened free
    page.reload()
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    upload(page, data)
    wait_for(page, lambda: spent(page) == pytest.approx(1.1), what="the ledger after reload")
    expect_text(page, ".pc-releases", "CompressiveKMeans")
    expect_text(page, ".pc-releases", "GeometricBounds")
    picker = page.locator(".pc-release-picker select").first
    picker.select_option(
        label=next(
            o for o in picker.locator("option").all_text_contents() if "CompressiveKMeans" in o
        )
    )
    page.get_by_role("button", name="Re-open release").click()
    expect_text(page, ".pc-status", "Re-opened release", timeout=60_000)  # as a release
    assert spent(page) == pytest.approx(1.1)

    # a second user on the same data spends 0.5 in another browser context
    other = browser.new_context().new_page()
    open_page(other, server)
    upload(other, data)
    expect(other.locator(".pc-private").first).to_be_visible(timeout=60_000)
    choose(other, "k-means", "Compressive")
    move_epsilon(other, "ArrowLeft")  # epsilon 1 -> 0.5
    expect_text(other, ".pc-cost", "Charges ε = 0.5")
    other.get_by_role("button", name="Release", exact=True).click()
    expect_text(other, ".pc-status", "Released", timeout=60_000)

    # the first user's page follows by itself, within a few seconds
    wait_for(
        page,
        lambda: spent(page) == pytest.approx(1.6),
        timeout=5,
        what="the first user's ledger to show the second user's spending",
    )
    # 2.5 - 1.6 = 0.9 remain: DPLloyd at epsilon 1 (add/remove: 2 on this ledger) is refused
    choose(page, "k-means", "DPLloyd")
    page.get_by_role("button", name="Release", exact=True).click()
    expect_text(page, ".pc-status", "Refused", timeout=60_000)
    status = text_of(page, ".pc-status")
    assert "costs ε = 2" in status and "only ε = 0.9," in status, status
    assert spent(page) == pytest.approx(1.6)
