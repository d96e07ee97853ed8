"""What the page says about its own state, in a browser: a busy result view while a result
computes, demo data that follow the task, and settings that cannot work named before anything
runs."""
import pytest
from playwright.sync_api import expect

from browser import expect_text, open_page, text_of, titles, wait_for

pytestmark = pytest.mark.ui


def slider_end(page, label, which="first"):
    groups = page.locator(".bk-input-group").filter(has_text=label).filter(visible=True)
    getattr(groups, which).locator(".noUi-handle").first.press("End")


def test_result_views_are_busy_while_a_result_computes(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    expect(page.locator(".pn-loading")).to_have_count(0)
    page.locator(".pc-algorithm select").first.select_option(label="Gibbs sampler (asymptotic)")
    slider_end(page, "iterations")            # a demo fit of 20000 iterations: many seconds
    expect(page.locator(".pn-loading").first).to_be_visible(timeout=15_000)


def test_demo_data_follow_the_task_before_anything_runs(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    page.locator(".pc-task select").first.select_option(label="Co-clustering")
    expect_text(page, ".pc-status", "Switched the demo data", timeout=30_000)
    status = text_of(page, ".pc-status")
    assert "negative count" not in status and "failed" not in status, status
    expect(page.locator("select").first).to_have_value("Block count matrix (BP25)")


def test_settings_invalid_for_the_data_are_named_before_release(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    slider_end(page, "q (subspace dim)", "last")   # the sidebar's q = 20 on data with d = 10
    expect_text(page, ".pc-kind-invalid", "not valid for this data", timeout=15_000)
    assert "subspace_dim" in text_of(page, ".pc-kind-invalid")
