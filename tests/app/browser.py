"""Browser helpers shared by the dashboard's UI tests (Playwright pages against the served app)."""

import re
import time

import numpy as np
from playwright.sync_api import expect

JS_TITLES = """() => {
  const out = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models)
      if (m.type === 'Title' || m.constructor.name === 'Title') out.push(m.text);
  return out;
}"""


def open_page(page, server):
    msgs, errors = [], []
    page.on("console", lambda m: msgs.append(m))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server["url"])
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    expect(page.locator(".pc-banner").first).to_be_visible()
    return msgs, errors


# The default ceilings of a wait: a result the server computes under the load of the other
# browser worker (README's command runs the browser tests on two) takes seconds, not minutes; a
# lost update never arrives, so a generous ceiling only delays the report of a real failure.
WAIT_S = 60.0


def wait_for(page, fn, timeout=WAIT_S, what="condition"):
    """Poll ``fn`` until it is truthy; ``what`` (a text, or a function that describes the page
    at the time of the failure) names what did not happen."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


def titles(page):
    return page.evaluate(JS_TITLES)


def write_csv(path, n=80, d=4, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d)) / 3
    np.savetxt(path, X, delimiter=",", header=",".join(f"gene{j}" for j in range(d)), comments="")
    return path


def upload(page, path):
    page.get_by_role("button", name="Upload").click()
    page.locator('.pc-dropper input[type="file"]').set_input_files(str(path))


def expect_text(page, selector, text, timeout=WAIT_S * 1000):
    """The text appears inside the element (Panel renders panes in shadow roots)."""
    expect(page.locator(selector).get_by_text(text).first).to_be_visible(timeout=timeout)


def open_tab(page, name):
    page.locator(".bk-tab").filter(has_text=re.compile(f"^{name}$")).first.click()


JS_TEXT = """(sel) => {
  const out = [];
  const visit = (root) => root.querySelectorAll('*').forEach((el) => {
    if (el.matches(sel)) out.push((el.shadowRoot ? el.shadowRoot.textContent : '') + el.textContent);
    if (el.shadowRoot) visit(el.shadowRoot);
  });
  visit(document);
  return out.join(' ');
}"""


def text_of(page, selector):
    """All text of the matching elements, shadow roots included."""
    return page.evaluate(JS_TEXT, selector)


def algorithm_options(page):
    return page.locator(".pc-algorithm select option").all_text_contents()


def move_epsilon(page, key, presses=1):
    page.locator(".pc-epsilon .noUi-handle").first.click()
    for _ in range(presses):
        page.keyboard.press(key)


def assert_local_and_clean(server, requests, msgs, errors):
    """No request left the server (data:/blob: URLs are local) and the browser logged no error."""
    origin = server["base"]
    local = (origin, origin.replace("http", "ws"), "data:", "blob:")
    foreign = [u for u in requests if not u.startswith(local)]
    assert not foreign, foreign
    console_errors = [m.text for m in msgs if m.type == "error"]
    assert not console_errors and not errors, (console_errors, errors)


def choose_long_gibbs_run(page):
    """The Gibbs sampler with 8 chains x 20000 iterations (about 30 s of sampling with a warm
    sampler process): it outlasts what a test does before pressing Stop. The sliders are set
    by keyboard as soon as they appear."""
    page.locator(".pc-algorithm select").first.select_option(label="Gibbs sampler (asymptotic)")
    # the default subspace algorithm (SuLQ) has an "iterations" slider too: wait for the Gibbs
    # sliders (only Gibbs has "chains") before pressing keys
    expect(
        page.locator(".bk-input-group").filter(has_text="chains").filter(visible=True).first
    ).to_be_visible()
    for label, end in (("iterations", "20000"), ("chains", "8")):
        group = page.locator(".bk-input-group").filter(has_text=label).filter(visible=True).first
        group.locator(".noUi-handle").first.press("End")
        expect(group.locator(".noUi-handle").first).to_have_attribute("aria-valuenow", f"{end}.0")
