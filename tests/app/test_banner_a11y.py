"""One banner, not two (the demo status no longer repeats that nothing is spent), and every
form control of the page has an accessible name (a label element or aria-label), checked
through the browser's accessibility tree with Playwright's role and label locators."""

import re

import pytest
from browser import open_page, open_tab, text_of, titles, wait_for
from playwright.sync_api import expect

pytestmark = pytest.mark.ui

ROLES = ("slider", "combobox", "textbox", "spinbutton", "checkbox", "radio")
UNNAMED = re.compile(r"^\s*- (" + "|".join(ROLES) + r")\s*(:|$)")


def unnamed_controls(page):
    """The lines of the page's accessibility tree that are form controls without a name."""
    return [
        line for line in page.locator("body").aria_snapshot().splitlines() if UNNAMED.match(line)
    ]


def test_one_banner_says_nothing_is_spent(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=1" in t for t in titles(page)), what="first demo result")
    page.wait_for_timeout(500)  # the status of the result is set with it
    banner, status = text_of(page, ".pc-banner"), text_of(page, ".pc-status")
    assert "nothing is spent" in banner
    assert "spent" not in status, status  # it said so a second time, in a second box
    expect(page.locator(".pc-status").first).to_be_hidden()


def test_sliders_and_inputs_have_accessible_names(page, server):
    open_page(page, server)
    wait_for(page, lambda: any("ε=1" in t for t in titles(page)), what="first demo result")
    # sliders: their title is a div: named by aria-label
    epsilon = page.get_by_role("slider", name="ε (epsilon, log scale)")
    expect(epsilon).to_be_visible()
    # it reads out the ε its title shows, not the grid index its slider holds ("6.00")
    expect(epsilon).to_have_attribute("aria-valuetext", "1")
    epsilon.press("ArrowRight")
    expect(epsilon).to_have_attribute("aria-valuetext", "2")
    expect(page.get_by_label("n (records)", exact=True).first).to_be_visible()
    expect(page.get_by_label("data seed", exact=True).first).to_be_visible()
    expect(page.get_by_label("task", exact=True).first).to_be_visible()
    wait_for(
        page,
        lambda: not unnamed_controls(page),
        timeout=10,
        what="a name on every control of the sidebar and Clusters tab",
    )
    for tab in ("Trade-off", "Plan"):
        open_tab(page, tab)
        page.wait_for_timeout(500)
        wait_for(
            page,
            lambda: not unnamed_controls(page),
            timeout=10,
            what=f"a name on every control of the {tab} tab: {unnamed_controls(page)}",
        )
    expect(page.get_by_role("slider", name="trials per ε").first).to_be_visible()
