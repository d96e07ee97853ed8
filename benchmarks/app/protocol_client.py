"""One slider user of ``load.py --protocol``: a Bokeh client session instead of a browser page.

    python benchmarks/app/protocol_client.py URL SECONDS SEED FIRST_TIMEOUT

It speaks the page's own protocol (``bokeh.client.pull_session``): the server builds the same
session and sends the same patches as for a browser, so it does all it does for a student's
page, while this machine is spared the browser's layout and drawing, which in a class run on
each student's own computer. It imports first (and defines the page's custom models), prints
``ready`` and waits for a line on stdin; then it opens the session (first result: until a plot
title names an ε), says "document ready" as a browser does once the page is drawn, and for
SECONDS moves the ε slider one step as ``load.py``'s browser users do (a random walk within
three steps of the default), timing each step until a plot title changes, with a pause of 1-2 s
between steps. Prints one JSON line: ``first_result_s``, ``slider_to_plot_s`` and ``cpu_s``
(CPU seconds after ``ready``).
"""

import json
import random
import sys
import threading
import time


def _define_page_models():
    """The page's ReactiveHTML models are named when first built: build one page, detached."""
    from bokeh.document import Document

    from privclust.app.page import create_app
    from privclust.app.state import Lab

    create_app(lab=Lab()).server_doc(Document())


class PageClient:
    """A session whose connection's loop runs in a thread of its own (stopping that loop
    between reads loses frames); changes to the document are made on that loop."""

    def __init__(self, url):
        from bokeh.client import pull_session

        self.session = pull_session(url=url)
        self.doc = self.session.document
        self._conn = self.session._connection  # bokeh.client has no public event loop API
        self._changed = threading.Condition()
        self.titles = self._titles()
        self.doc.on_change(self._on_change)
        self._open = True
        threading.Thread(
            target=self._conn._loop_until, args=(lambda: not self._open,), daemon=True
        ).start()

    def _titles(self):
        from bokeh.models import Title

        return "|".join(m.text or "" for m in list(self.doc.models) if isinstance(m, Title))

    def _on_change(self, event):
        titles = self._titles()
        with self._changed:
            self.titles = titles
            self._changed.notify_all()

    def call(self, fn):
        self._conn._loop.add_callback(fn)

    def wait(self, predicate, timeout):
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.titles), timeout)

    def document_ready(self):
        """Send what a browser sends once the page is drawn; until then the page holds its
        demo runs."""
        from bokeh.document.events import MessageSentEvent
        from bokeh.events import DocumentReady

        event = MessageSentEvent(self.doc, "bokeh_event", DocumentReady())
        self.call(lambda: self._conn._send_patch_document(self.session.id, event))

    def close(self):
        self._open = False
        self.call(lambda: self.session.close())


def walk(rng):
    """The ε slider steps of a user (-1 or +1, for ever): a random walk within three steps of the
    default, so that a class asks for the same public demo results, as one following a teacher
    does."""
    pos = 0
    while True:
        step = rng.choice((-1, 1)) if abs(pos) < 3 else -int(pos / abs(pos))
        pos += step
        yield step


def run(url, seconds, seed, first_timeout):
    from bokeh.models import Slider

    out = {"first_result_s": [], "slider_to_plot_s": []}
    rng = random.Random(seed)
    t = time.perf_counter()
    page = PageClient(url)
    if not page.wait(lambda titles: "ε=" in titles, first_timeout):
        raise RuntimeError(f"no first result within {first_timeout} s")
    out["first_result_s"].append(time.perf_counter() - t)
    page.document_ready()
    slider = next(
        m for m in list(page.doc.models) if isinstance(m, Slider) and "pc-epsilon" in m.css_classes
    )
    end = time.perf_counter() + seconds
    for step in walk(rng):
        if time.perf_counter() >= end:
            break
        before, t0 = page.titles, time.perf_counter()

        def move(step=step):  # what a key press on the page's slider sends
            value = min(max(slider.value + step, slider.start), slider.end)
            slider.value = value
            slider.set_from_json("value_throttled", value)  # read-only in Python

        page.call(move)
        ok = page.wait(lambda now, before=before: now != before and "ε=" in now, 60)
        out["slider_to_plot_s"].append(time.perf_counter() - t0 if ok else float("inf"))
        time.sleep(rng.uniform(1.0, 2.0))
    page.close()
    return out


def main(argv=None):
    url, seconds, seed, first_timeout = (argv or sys.argv[1:])[:4]
    _define_page_models()
    print("ready", flush=True)
    sys.stdin.readline()
    cpu0 = time.process_time()
    out = run(url, float(seconds), int(seed), float(first_timeout))
    out["cpu_s"] = time.process_time() - cpu0
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
