"""One slider user of ``load.py --protocol wire``: the page's messages read as JSON, no document.

    python benchmarks/app/wire_client.py URL SECONDS SEED FIRST_TIMEOUT

The server does for it exactly what it does for a browser or for ``protocol_client.py``: it
builds the session, sends the whole document (PULL-DOC-REPLY) and a patch for every change.
This client sends what a browser sends (the document pull, "document ready", the ε slider's
``value`` and ``value_throttled``) and keeps only the text of each plot title, read from the
JSON, where ``protocol_client.py`` rebuilds all ~220 Bokeh models in Python (about 1 CPU s per
page on this machine, as much as the server's own work for it). So a class run on one machine
measures the server with its students' browsers as good as elsewhere. Same protocol on stdin and
stdout as ``protocol_client.py`` (``ready``, a line, one JSON line), same slider walk and timing.
"""

import asyncio
import json
import random
import sys
import time

from bokeh.client.util import websocket_url_for_server_url
from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import patch_doc
from bokeh.protocol.receiver import Receiver
from bokeh.util.token import generate_jwt_token, generate_session_id
from protocol_client import walk
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

DOCUMENT_READY = {
    "kind": "MessageSent",
    "msg_type": "bokeh_event",
    "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map"}},
}


def models(value):
    """Every serialised model inside a JSON value (a pulled document or a patch's new value)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if v.get("type") == "object" and "id" in v:
                yield v
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


class WireSession:
    """One page session: the titles' texts and the ε slider, kept from the messages."""

    def __init__(self):
        self.titles = {}  # Title id -> text
        self.slider = None  # the ε slider: {"id", "value", "start", "end"}
        self.changed = asyncio.Condition()
        self._receiver = Receiver(Protocol())

    async def open(self, url):
        session_id = generate_session_id()
        request = HTTPRequest(websocket_url_for_server_url(url))
        self.ws = await websocket_connect(
            request,
            subprotocols=["bokeh", generate_jwt_token(session_id)],
            max_message_size=64 * 2**20,
        )
        await self._next("ACK")
        await self._send(Protocol().create("PULL-DOC-REQ"))
        self._read(await self._next("PULL-DOC-REPLY"))
        self._reader = asyncio.create_task(self._read_all())

    def text(self):
        return "|".join(t or "" for t in self.titles.values())

    async def document_ready(self):
        await self._patch([DOCUMENT_READY])

    async def move(self, step):
        """What a key press on the page's ε slider sends."""
        s = self.slider
        s["value"] = min(max(s["value"] + step, s["start"]), s["end"])
        for attr in ("value", "value_throttled"):
            event = {"kind": "ModelChanged", "model": {"id": s["id"]}, "attr": attr}
            await self._patch([{**event, "new": s["value"]}])

    async def wait(self, predicate, timeout):
        async with self.changed:
            try:
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: predicate(self.text())), timeout
                )
            except TimeoutError:
                return False
        return True

    def close(self):
        self._reader.cancel()
        self.ws.close()

    async def _patch(self, events):
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": events}))

    async def _send(self, message):
        for frame in (message.header_json, message.metadata_json, message.content_json):
            await self.ws.write_message(frame)

    async def _next(self, msgtype=None):
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                raise ConnectionError("the server closed the page's connection")
            message = await self._receiver.consume(fragment)
            if message is not None and msgtype in (None, message.msgtype):
                return message

    async def _read_all(self):
        while True:
            message = await self._next()
            if message.msgtype == "PATCH-DOC":
                async with self.changed:
                    self._read(message)
                    self.changed.notify_all()

    def _read(self, message):
        content = message.content
        for model in models(content):
            attributes = model.get("attributes", {})
            if model.get("name") == "Title":
                self.titles[model["id"]] = attributes.get("text")
            elif model.get("name") == "Slider" and "pc-epsilon" in attributes.get(
                "css_classes", ()
            ):
                self.slider = {"id": model["id"], **attributes}
        for event in content.get("events", ()):
            if event.get("kind") != "ModelChanged":
                continue
            key = event["model"]["id"]
            if key in self.titles and event["attr"] == "text":
                self.titles[key] = event["new"]
            elif self.slider is not None and key == self.slider["id"] and event["attr"] == "value":
                self.slider["value"] = event["new"]


async def run(url, seconds, seed, first_timeout):
    out = {"first_result_s": [], "slider_to_plot_s": []}
    rng = random.Random(seed)
    t = time.perf_counter()
    page = WireSession()
    await page.open(url)
    if not await page.wait(lambda titles: "ε=" in titles, first_timeout):
        raise RuntimeError(f"no first result within {first_timeout} s")
    out["first_result_s"].append(time.perf_counter() - t)
    await page.document_ready()
    if page.slider is None:
        raise RuntimeError("the page has no ε slider (a Slider with the class pc-epsilon)")
    end = time.perf_counter() + seconds
    for step in walk(rng):
        if time.perf_counter() >= end:
            break
        before, t0 = page.text(), time.perf_counter()
        await page.move(step)
        ok = await page.wait(lambda now, before=before: now != before and "ε=" in now, 60)
        out["slider_to_plot_s"].append(time.perf_counter() - t0 if ok else float("inf"))
        await asyncio.sleep(rng.uniform(1.0, 2.0))
    page.close()
    return out


def main(argv=None):
    url, seconds, seed, first_timeout = (argv or sys.argv[1:])[:4]
    print("ready", flush=True)
    sys.stdin.readline()
    cpu0 = time.process_time()
    out = asyncio.run(run(url, float(seconds), int(seed), float(first_timeout)))
    out["cpu_s"] = time.process_time() - cpu0
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
