"""What the page says about its own state, in a browser: a busy result view while a result
computes, demo data that follow the task, and settings that cannot work named before anything
runs."""

import pytest
from browser import expect_text, open_page, open_tab, text_of, titles, wait_for
from playwright.sync_api import expect

pytestmark = pytest.mark.ui


def slider_end(page, label, which="first"):
    groups = page.locator(".bk-input-group").filter(has_text=label).filter(visible=True)
    getattr(groups, which).locator(".noUi-handle").first.press("End")


def test_result_views_are_busy_while_a_result_computes(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    expect(page.locator(".pn-loading")).to_have_count(0)
    page.locator(".pc-algorithm select").first.select_option(label="Gibbs sampler (asymptotic)")
    # only Gibbs has a "chains" slider (the default SuLQ has "iterations" too): wait for it
    expect(
        page.locator(".bk-input-group").filter(has_text="chains").filter(visible=True).first
    ).to_be_visible()
    slider_end(page, "iterations")  # a demo fit of 20000 iterations: many seconds
    expect(page.locator(".pn-loading").first).to_be_visible(timeout=15_000)


def test_plan_results_are_busy_while_a_plan_runs(page, server):
    """The Plan tab's results carry Panel's loading state while the plan computes (Run and Stop
    stay usable) and lose it when the plan is done."""
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    open_tab(page, "Plan")
    results = page.locator(".pc-plan-results")
    expect(results).to_be_visible()
    expect(page.locator(".pc-plan-results.pn-loading")).to_have_count(0)
    page.locator(".bk-input-group").filter(has_text="trials per").first.locator(
        ".noUi-handle"
    ).first.press("Home")  # 1 trial per ε: a plan of seconds (20 trials: minutes on 3000 x 5)
    page.get_by_role("button", name="Run plan").click()
    expect(page.locator(".pc-plan-results.pn-loading")).to_be_visible(timeout=10_000)
    expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    assert "Done in" not in text_of(page, ".pc-plan-status")
    expect_text(page, ".pc-plan-status", "Done in", timeout=120_000)
    expect(page.locator(".pc-plan-results.pn-loading")).to_have_count(0)
    wait_for(page, lambda: any("predicted" in t for t in titles(page)), what="the plan's curves")


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
    slider_end(page, "q (subspace dim)", "last")  # the sidebar's q = 20 on data with d = 10
    expect_text(page, ".pc-kind-invalid", "not valid for this data", timeout=15_000)
    assert "subspace_dim" in text_of(page, ".pc-kind-invalid")
