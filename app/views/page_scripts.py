"""Small scripts the served page runs in the browser once its document is ready: the
per-browser cookie (see :mod:`privclust.app.state.browsers`), accessible names for the form
controls Bokeh draws without one, a guard that keeps BokehJS from re-setting unchanged
stylesheets, and a slower idle frame loop for the file dropper.

Bokeh gives its text inputs and selects a ``<label for>``, but a slider's handle (noUiSlider,
``role="slider"``) has only a title ``<div>`` beside it, and a widget without a title has
nothing. :data:`NAME_CONTROLS` names every
such control (``aria-label``) from the title shown beside it (the text before ":", the value
after it being read out by the slider itself), its placeholder or its widget's name, and
makes a slider read out the value its title shows rather than noUiSlider's raw number. It runs
again every second: tabs are drawn when first opened and parameter widgets are replaced when
the algorithm changes. The code is inline (a ``CustomJS``), so the page still loads nothing
from any other host.
"""

from bokeh.models import CustomJS

NAME_CONTROLS = r"""
const titleOf = (el) => {
  // the text of a title element, without the value Bokeh appends after ": "
  const text = (el && el.textContent || '').trim();
  return text.replace(/:\s*[^:]*$/, '').trim() || text;
};
const ownTitle = (root) => {
  // the title a widget draws in its own shadow root
  const own = root.querySelector('.bk-slider-title, label, .bk-input-group > div:first-child');
  return own ? titleOf(own) : '';
};
const named = (el) => el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') ||
  (el.labels && Array.from(el.labels).some((l) => l.textContent.trim()));
const spoken = new WeakSet();
const speakShownValue = (h) => {
  // noUiSlider reads out its raw number ("8.00": the grid index of the ε slider); a reader
  // should hear the value the title shows ("5"), kept at every change the slider makes
  // (the title's value element is replaced at each change: looked up each time)
  const sync = () => {
    const shown = h.getRootNode().querySelector('.bk-slider-value');
    const text = shown && shown.textContent.trim();
    if (text && h.getAttribute('aria-valuetext') !== text) h.setAttribute('aria-valuetext', text);
  };
  sync();
  if (spoken.has(h)) return;
  spoken.add(h);
  new MutationObserver(sync).observe(h, { attributes: true, attributeFilter: ['aria-valuetext'] });
};
const label = (root) => {
  root.querySelectorAll('[role=slider]').forEach((h) => {
    speakShownValue(h);
    if (named(h)) return;
    const name = ownTitle(h.getRootNode());
    if (name) h.setAttribute('aria-label', name);
  });
  root.querySelectorAll('input:not([type=hidden]), select, textarea').forEach((el) => {
    if (named(el)) return;
    const root = el.getRootNode();
    // a checkbox's text is its wrapping label or, where Bokeh draws the input straight into
    // its shadow root, the element beside it
    const box = el.parentElement || el.nextElementSibling || el.previousElementSibling;
    const own = (el.type === 'checkbox' || el.type === 'radio')
      ? (box && box.textContent || '') : ownTitle(root);
    const name = own.trim() || el.placeholder || el.name || el.title;
    if (name) el.setAttribute('aria-label', name.trim());
  });
  root.querySelectorAll('*').forEach((el) => { if (el.shadowRoot) label(el.shadowRoot); });
};
const run = () => { try { label(document); } catch (e) { /* never break the page */ } };
run();
setInterval(run, 1000);
"""

# BokehJS 3.9 re-sets each renderer's position stylesheet at every paint (``RendererView.
# update_position`` -> ``InlineStyleSheet.replace``), also when the text is the same; a <style>
# whose text is set is re-parsed, and the colour each visual then reads from the computed style
# (``_get_css_value``) forces a style recalculation. A Gibbs page streaming its traces
# recalculated styles 19 times per update (24 ms of 67 ms of the renderer's main thread, Chrome's
# Performance metrics over 80 updates); skipping unchanged texts left 4 (13 ms of 59 ms). An ε
# step's renderer CPU went from 0.151 to 0.121 s (benchmarks/app/page_cost.py, 2 x 3 pages x 8
# steps, interleaved).
SKIP_UNCHANGED_STYLES = """
try {
  const sheet = Bokeh.require('core/dom').InlineStyleSheet.prototype;
  if (!sheet._privclust_unchanged) {
    const update = sheet._update;
    sheet._update = function (css) { if (this.el.textContent !== css) update.call(this, css); };
    sheet._privclust_unchanged = true;
  }
} catch (e) { /* another BokehJS: its own behaviour stays */ }
"""

# FilePond (Panel's FileDropper) starts a frame loop when its script loads and keeps it at 60
# frames a second for the page's lifetime, whether or not a file is near: an idle page cost
# 0.096 of a core (renderer 0.068, GPU process 0.022), 0.018 with the loop at one frame a second
# (a page measured for 10 s each way). Its loop is found by its source (it runs FilePond's
# "readers"); while no file is being dragged, chosen, read or uploaded it runs 4 times a second,
# and at full rate for 5 s after any such event and while an item loads or uploads.
IDLE_FILE_DROPPER = """
if (!window._privclustIdleDropper) {
  window._privclustIdleDropper = true;
  const raf = window.requestAnimationFrame.bind(window);
  const cancel = window.cancelAnimationFrame.bind(window);
  const timers = new Map();
  const painter = new WeakMap();
  let nextId = 1e9, activeUntil = 0, root = null;
  const isPainter = (cb) => {
    if (typeof cb !== 'function') return false;
    if (!painter.has(cb)) painter.set(cb, String(cb).includes('readers.forEach'));
    return painter.get(cb);
  };
  const wake = () => { activeUntil = performance.now() + 5000; };
  const inDropper = (e) => e.composedPath().some((n) => {
    if (n.classList && n.classList.contains('filepond--root')) { root = n; return true; }
    return false;
  });
  for (const type of ['dragenter', 'dragover', 'drop']) document.addEventListener(type, wake, true);
  for (const type of ['pointerdown', 'pointerover', 'keydown', 'change', 'input'])
    document.addEventListener(type, (e) => { if (inDropper(e)) wake(); }, true);
  const busy = () => root !== null && root.querySelector(
    '[data-filepond-item-state="loading"], [data-filepond-item-state="processing"], ' +
    '[data-filepond-item-state="processing-queued"]') !== null;
  window.requestAnimationFrame = (cb) => {
    if (!isPainter(cb) || performance.now() < activeUntil || busy()) return raf(cb);
    const id = nextId++;
    timers.set(id, setTimeout(() => { timers.delete(id); cb(performance.now()); }, 250));
    return id;
  };
  window.cancelAnimationFrame = (id) => {
    if (timers.has(id)) { clearTimeout(timers.get(id)); timers.delete(id); } else cancel(id);
  };
}
"""

SET_COOKIE = """
document.cookie = `${name}=${token}; path=/; SameSite=Strict`;
"""


def install(doc, cookie=None):
    """Run the scripts when ``doc`` is ready in the browser; ``cookie`` = (name, token) sets
    the per-browser cookie (a session cookie: gone when the browser closes)."""
    doc.js_on_event("document_ready", CustomJS(code=SKIP_UNCHANGED_STYLES))
    doc.js_on_event("document_ready", CustomJS(code=IDLE_FILE_DROPPER))
    doc.js_on_event("document_ready", CustomJS(code=NAME_CONTROLS))
    if cookie is not None:
        name, token = cookie
        doc.js_on_event(
            "document_ready", CustomJS(args={"name": name, "token": token}, code=SET_COOKIE)
        )
