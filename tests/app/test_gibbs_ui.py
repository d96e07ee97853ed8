"""Browser tests of the Gibbs tab while a chain samples: Start streams into the figures the tab
was built with, and a tab switch re-styles nothing (the browser re-styled the tab's figures and
text panes first, which made the first switch after Start the slowest)."""
import json
import re

import pytest
from playwright.sync_api import expect

from browser import choose_long_gibbs_run, open_page, open_tab, text_of, titles, wait_for

pytestmark = pytest.mark.ui

JS_TRACE_FIGURES = """() => {
  const out = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models)
      if (m.type === 'Figure' && m.title && /per chain|statistic T|baseline/.test(m.title.text))
        out.push(m.id);
  return out.sort();
}"""


def stylesheet_changes(frames):
    """The models whose stylesheets the server changed in these websocket frames."""
    out = []
    for text in frames:
        if '"stylesheets"' not in text or not text.startswith('{"events"'):
            continue
        out += [e["model"]["id"] for e in json.loads(text)["events"]
                if e.get("kind") == "ModelChanged" and e.get("attr") == "stylesheets"]
    return out


def updates(page):
    m = re.search(r"diagnostic updates (\d+)", text_of(page, ".pc-gibbs-info"))
    return int(m.group(1)) if m else 0


def test_start_streams_into_the_tab_s_figures_and_a_tab_switch_restyles_nothing(page, server):
    frames = []
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.webSocketFrameReceived",
           lambda e: frames.append(e["response"]["payloadData"]))
    open_page(page, server)
    wait_for(page, lambda: any("ε=" in t for t in titles(page)), what="first demo result")
    choose_long_gibbs_run(page)
    open_tab(page, "Gibbs")
    expect(page.get_by_role("button", name="Start sampler")).to_be_visible()
    figures = wait_for(page, lambda: page.evaluate(JS_TRACE_FIGURES), what="trace figures")
    assert len(figures) == 3
    page.get_by_role("button", name="Start sampler").click()
    wait_for(page, lambda: updates(page) >= 3, what="3 diagnostic updates")
    assert page.evaluate(JS_TRACE_FIGURES) == figures      # the same Bokeh models, streamed into
    for tab, teach in (("Trade-off", "The price of privacy"), ("Gibbs", "What is happening?")) * 2:
        frames.clear()
        open_tab(page, tab)
        expect(page.locator(".pc-teach").get_by_text(teach).first).to_be_visible()
        page.wait_for_timeout(500)
        assert not stylesheet_changes(frames), f"switch to {tab}: stylesheets re-sent"
    assert page.get_by_role("button", name="Stop").is_enabled(), "the sampler ended early"
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_role("button", name="Start sampler")).to_be_enabled(timeout=60_000)
