"""A class on one server: many browser contexts at once on one ``privclust serve``.

    python benchmarks/app/load.py [--sliders 10] [--samplers 2] [--seconds 90]
                                  [--protocol [bokeh|wire]]
                                  [--first-timeout 180] [--chromium PATH]
                                  [--results benchmarks/results/app/load.md]
                                  [-- EXTRA panel serve OPTIONS, e.g. --num-procs 2]

Starts the dashboard exactly as ``privclust serve`` does (temporary ledger), opens
``--sliders + --samplers`` browser contexts of one Chromium at the same moment and drives them
concurrently (Playwright's async API):

- each *slider* context waits for its first result, then for ``--seconds`` moves the ε slider
  one step (a random walk within three steps of the default, so sessions ask for the same
  public demo results, as a class following a teacher does) and waits for the new plot,
  then pauses 1-2 s;
- each *sampler* context chooses the Gibbs sampler (8 chains x 20000 iterations), presses
  Start and counts the page's diagnostic updates over the same period.

With ``--protocol`` the slider users are Bokeh clients of the page's own protocol
(``protocol_client.py``, one process each), not browser pages: the server does the same work
for them, but no browser draws their pages on this machine (a class's browsers run on the
students' computers). A Bokeh client still rebuilds every model of the page in Python (about
1 CPU s a page); ``--protocol wire`` (``wire_client.py``) reads the same messages as JSON and
keeps only the plot titles, so the slider users' side costs this machine almost nothing.

Measured: first result (navigation -> first plot titled ``ε=``), slider -> new plot (timed
inside the page from the key press to the first animation frame whose plot titles changed),
Gibbs diagnostic updates per second per sampler, requests to any other host than the server
(every request is routed through Playwright and counted; foreign ones are refused so that an
offline class sees what this counts), page errors (uncaught exceptions and console errors),
and tracebacks in the server log; also the CPU seconds of the server (with its sampler
processes) and of the browser (Chromium and Playwright's driver), which share the machine's
cores. The browser's threads are kept at this script's niceness (Chromium raises its own
priority): run under ``nice`` both sides get the same weight. Writes Markdown (and JSON beside
it) with the machine's load average before and after: other work on the machine slows every
figure. ``tests/app/test_class_server.py`` runs it with six contexts for a few seconds.
"""

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from privclust.app import config
from privclust.app.cli import serve_command
from privclust.app.server.logs import CLOSED_PAGE as CLOSED_PAGE_LINE

RESULTS = Path(__file__).resolve().parents[1] / "results" / "app"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 720}
TARGETS = {
    "slider_to_plot_p95_s": ("<=", 3.0),
    "first_result_p95_s": ("<=", 10.0),
    "gibbs_refresh_per_s_min": (">=", 2.0),
    "foreign_requests": ("<=", 0),
    "page_errors": ("<=", 0),
    "server_tracebacks": ("<=", 0),
}

JS_TITLES = """() => { const out = [];
  for (const d of (window.Bokeh ? window.Bokeh.documents : []))
    for (const m of d.all_models) if (m.type === 'Title' || m.constructor.name === 'Title')
      out.push(m.text);
  return out.join('|'); }"""
# arms a promise: from the next keydown until the first frame whose plot titles differ from
# the titles at that key press and name an ε (null after the timeout)
JS_ARM = (
    """(timeout) => { const titles = %s;
  window.__pc_step = new Promise((resolve) => document.addEventListener('keydown', () => {
    const t0 = performance.now(); const before = titles();
    const frame = () => { const now = titles();
      if (now !== before && now.includes('ε=')) resolve((performance.now() - t0) / 1000);
      else if (performance.now() - t0 > timeout * 1000) resolve(null);
      else requestAnimationFrame(frame); };
    requestAnimationFrame(frame); }, {once: true, capture: true})); }"""
    % JS_TITLES
)
JS_TEXT = """(sel) => { const out = [];
  const visit = (root) => root.querySelectorAll('*').forEach((el) => {
    if (el.matches(sel)) out.push((el.shadowRoot ? el.shadowRoot.textContent : '') + el.textContent);
    if (el.shadowRoot) visit(el.shadowRoot); });
  visit(document); return out.join(' '); }"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def git_head():
    """The short commit of this checkout ('' outside git)."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: %.2f, %.2f, %.2f" % os.getloadavg()


def _cpu_seconds(pid):
    """CPU seconds (user + system) of process ``pid`` and of its children it has waited for
    (Linux /proc; None elsewhere or when the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _descendants(pid):
    """Process ids of ``pid``'s live descendants (Linux /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def _tree_cpu(pid):
    """CPU seconds of ``pid`` and its live descendants (each with its waited-for children)."""
    values = [_cpu_seconds(p) for p in [pid, *_descendants(pid)]]
    return sum(v for v in values if v is not None) if values[0] is not None else None


def percentile(values, q):
    """The q-th percentile (nearest rank) of ``values``; None when empty."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    rank = max(1, min(len(values), round(q / 100 * len(values) + 0.5)))
    return values[rank - 1]


async def _wait_title(page, timeout):
    await page.wait_for_function(
        f"() => ({JS_TITLES})().includes('ε=')", timeout=timeout * 1000, polling=100
    )


async def slider_user(context, url, seconds, out, rng, first_timeout=180):
    page = await context.new_page()
    t = time.perf_counter()
    await page.goto(url, wait_until="commit")  # the first plot is what is timed
    await _wait_title(page, first_timeout)
    out["first_result_s"].append(time.perf_counter() - t)
    handle = page.locator(".pc-epsilon .noUi-handle").first
    await handle.focus()
    pos, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        step = rng.choice((-1, 1)) if abs(pos) < 3 else -int(pos / abs(pos))
        pos += step
        await page.evaluate(JS_ARM, 60)
        await handle.press("ArrowRight" if step > 0 else "ArrowLeft")
        latency = await page.evaluate("() => window.__pc_step")
        out["slider_to_plot_s"].append(latency if latency is not None else float("inf"))
        await page.wait_for_timeout(rng.uniform(1000, 2000))
    await page.close()


async def sampler_user(context, url, seconds, out, first_timeout=180):
    from playwright.async_api import expect

    page = await context.new_page()
    t = time.perf_counter()
    await page.goto(url, wait_until="commit")  # the first plot is what is timed
    await _wait_title(page, first_timeout)
    out["first_result_s"].append(time.perf_counter() - t)
    await page.locator(".bk-tab").filter(has_text=re.compile("^Gibbs$")).first.click()
    await page.locator(".pc-algorithm select").first.select_option(
        label="Gibbs sampler (asymptotic)"
    )
    # the default algorithm (SuLQ) has an "iterations" slider too: wait for the Gibbs sliders
    # (only Gibbs has "chains"), then set each by keyboard, pressing again when the slider was
    # re-rendered under the key press (a handle taken before that is stale)
    await expect(_slider(page, "chains")).to_be_visible(timeout=first_timeout * 1000)
    for label, value in (("iterations", "20000"), ("chains", "8")):
        await _slide_to_end(page, label, f"{value}.0", first_timeout)
    await page.get_by_role("button", name="Start sampler").click()

    async def updates():
        text = await page.evaluate(JS_TEXT, ".pc-gibbs-info")
        m = re.search(r"diagnostic updates (\d+)", text)
        return int(m.group(1)) if m else 0, text

    t = time.perf_counter()
    while (await updates())[0] == 0 and time.perf_counter() - t < 120:
        await page.wait_for_timeout(200)
    first, t0 = (await updates())[0], time.perf_counter()
    await page.wait_for_timeout(seconds * 1000)
    last, text = await updates()
    rate = (last - first) / (time.perf_counter() - t0)
    out["gibbs_refresh_per_s"].append(rate)
    info = re.search(r"iteration \d+ of \d+[^·]*· diagnostic updates \d+", text)
    out["gibbs_last_info"].append(info.group(0) if info else "")
    await page.get_by_role("button", name="Stop").click()
    await page.close()


def _slider(page, label):
    """The handle of the visible slider labelled ``label`` (a locator: found again at each use)."""
    group = page.locator(".bk-input-group").filter(has_text=label).filter(visible=True).first
    return group.locator(".noUi-handle").first


async def _slide_to_end(page, label, value, timeout, attempt_s=10):
    """Press End on the slider ``label`` until it shows ``value`` (``timeout`` seconds)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import expect

    end = time.perf_counter() + timeout
    while True:
        try:
            await _slider(page, label).press("End", timeout=attempt_s * 1000)
            await expect(_slider(page, label)).to_have_attribute(
                "aria-valuenow", value, timeout=attempt_s * 1000
            )
            return
        except (AssertionError, PlaywrightTimeout):
            if time.perf_counter() > end:
                raise


async def _browser_at_our_priority(server_pids, stop):
    """Keep every thread of the browser at this script's niceness until ``stop`` is set.

    Chromium (started as root) raises its browser and GPU processes to nice -8 and resets its
    renderers to 0: under ``nice -n 10`` the server of a run then got a tenth of the weight of
    each of the twelve pages it served, and the figures measured the browser's priority more
    than the server."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    while not stop.is_set():
        for pid in _descendants(os.getpid()):
            if pid in server_pids or _is_below(pid, server_pids):
                continue
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except OSError:
                continue
            for tid in tids:
                try:
                    if os.getpriority(os.PRIO_PROCESS, tid) != nice:
                        os.setpriority(os.PRIO_PROCESS, tid, nice)
                except OSError:
                    pass
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


PROTOCOL_CLIENTS = {
    "bokeh": Path(__file__).with_name("protocol_client.py"),
    "wire": Path(__file__).with_name("wire_client.py"),
}


async def protocol_users(url, n, seconds, rng, first_timeout, kind="bokeh"):
    """Start ``n`` protocol clients (``PROTOCOL_CLIENTS[kind]``) and wait until each has
    imported, in its own process; returns one coroutine per client that sets it going and
    returns its results (gathered, they start together)."""
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(PROTOCOL_CLIENTS[kind]),
            url,
            str(seconds),
            str(rng.randrange(2**31)),
            str(first_timeout),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(n)
    ]
    for proc in procs:
        line = await proc.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"a protocol client did not start: {line!r}")

    async def go(proc):
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        line = await proc.stdout.readline()
        await proc.wait()
        if proc.returncode != 0 or not line:
            raise RuntimeError(f"a protocol client failed (exit code {proc.returncode})")
        return json.loads(line)

    return [go(proc) for proc in procs]


async def run(
    url,
    origin,
    chromium,
    n_sliders,
    n_samplers,
    seconds,
    seed,
    first_timeout=180,
    server_pids=(),
    protocol=False,
):
    from playwright.async_api import async_playwright

    out = {
        "first_result_s": [],
        "slider_to_plot_s": [],
        "gibbs_refresh_per_s": [],
        "gibbs_last_info": [],
        "foreign_requests": [],
        "page_errors": [],
        "requests": 0,
        "server_pids": list(server_pids),
    }
    local = (origin, origin.replace("http", "ws"), "data:", "blob:")

    async def route(route):
        out["requests"] += 1
        if route.request.url.startswith(local):
            await route.continue_()
        else:  # counted and refused: a class offline would see a failed request
            out["foreign_requests"].append(route.request.url)
            await route.abort()

    def errors(page):
        page.on("pageerror", lambda e: out["page_errors"].append(str(e)[:300]))
        page.on(
            "console",
            lambda m: out["page_errors"].append(m.text[:300]) if m.type == "error" else None,
        )

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=ARGS)
        stop = asyncio.Event()
        same_priority = asyncio.create_task(_browser_at_our_priority(set(server_pids), stop))
        contexts = []
        for _ in range(n_samplers if protocol else n_sliders + n_samplers):
            ctx = await browser.new_context(viewport=VIEWPORT)
            ctx.set_default_timeout(first_timeout * 1000)
            await ctx.route("**/*", route)
            ctx.on("page", errors)
            contexts.append(ctx)
        rng = random.Random(seed)
        if protocol:  # the slider users speak the page's protocol, no browser page each
            users = await protocol_users(url, n_sliders, seconds, rng, first_timeout, protocol)
        else:
            users = [
                slider_user(c, url, seconds, out, random.Random(rng.random()), first_timeout)
                for c in contexts[:n_sliders]
            ]
        samplers = contexts if protocol else contexts[n_sliders:]
        users += [sampler_user(c, url, seconds, out, first_timeout) for c in samplers]
        results = await asyncio.gather(*users, return_exceptions=True)
        out["protocol_client_cpu_s"] = 0.0
        for r in results:
            if isinstance(r, dict):
                out["first_result_s"] += r["first_result_s"]
                out["slider_to_plot_s"] += r["slider_to_plot_s"]
                out["protocol_client_cpu_s"] += r["cpu_s"]
        # the browser's processes (Playwright's driver and Chromium) are this process's
        # descendants other than the server's tree
        mine = os.getpid()
        server = set(out.get("server_pids", ()))
        out["browser_cpu_s"] = sum(
            c
            for c in (
                _cpu_seconds(p)
                for p in _descendants(mine)
                if p not in server and not _is_below(p, server)
            )
            if c is not None
        )
        out["user_failures"] = [
            f"{type(r).__name__}: {str(r)[:300]}" for r in results if isinstance(r, BaseException)
        ]
        stop.set()
        await same_priority
        await browser.close()
    return out


def _is_below(pid, ancestors):
    """Is ``pid`` a descendant of one of ``ancestors``?"""
    try:
        while pid > 1:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            if pid in ancestors:
                return True
    except (OSError, ValueError, IndexError):
        pass
    return False


@contextlib.contextmanager
def served(extra=(), env_extra=None, ready_timeout=120):
    """A ``privclust serve`` exactly as the CLI starts it (temporary ledger, ``--liveness``),
    ready to answer: yields ``(proc, origin, log)``, where ``log()`` is the server log so far;
    the server is stopped on exit. ``ready_timeout``: seconds the warm-up may take (seconds on
    an idle machine, minutes on a busy one)."""
    import requests

    state = tempfile.mkdtemp(prefix="privclust-load-")
    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    env = dict(os.environ, **{config.STATE_DIR.env: state}, **(env_extra or {}))
    log_path = Path(state) / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        serve_command("127.0.0.1", port, extra=["--liveness", *extra]),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    text = [None]  # the whole log, read when the server has stopped
    try:
        deadline = time.time() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(log_path.read_text())
            if time.time() > deadline:
                raise RuntimeError(f"the server was not ready within {ready_timeout} s")
            try:
                if requests.get(f"{origin}/liveness", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        yield (
            proc,
            origin,
            lambda: log_path.read_text(errors="replace") if text[0] is None else text[0],
        )
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        text[0] = log_path.read_text(errors="replace")
        shutil.rmtree(state, ignore_errors=True)


def measure(
    chromium,
    n_sliders,
    n_samplers,
    seconds,
    extra=(),
    env_extra=None,
    seed=0,
    first_timeout=180,
    protocol=False,
):
    """Start a server, drive the contexts, stop it; the raw measurements. ``first_timeout``:
    seconds a page may take to show its first plot (and any other step) before its user fails."""
    with served(extra, env_extra, max(120, first_timeout)) as (proc, origin, server_log):
        server_cpu0, t0 = _tree_cpu(proc.pid), time.perf_counter()
        out = asyncio.run(
            run(
                f"{origin}/page",
                origin,
                chromium,
                n_sliders,
                n_samplers,
                seconds,
                seed,
                first_timeout,
                server_pids=[proc.pid],
                protocol=protocol,
            )
        )
        out["wall_s"] = time.perf_counter() - t0
        server_cpu1 = _tree_cpu(proc.pid)
        if server_cpu0 is not None and server_cpu1 is not None:
            out["server_cpu_s"] = server_cpu1 - server_cpu0
    text = server_log()
    out["server_tracebacks"] = text.count("Traceback")
    # of which: a page closed while the server was still sending to it (tornado's
    # WebSocketClosedError / StreamClosedError, logged by Panel's message dispatch) or while
    # Bokeh was still handling its last messages
    out["server_tracebacks_closed_socket"] = closed_socket_tracebacks(text)
    # the same event since the server logs it as one line (no traceback)
    out["closed_page_lines"] = text.count(CLOSED_PAGE_LINE)
    if "Traceback" in text:
        at = text.index("Traceback")
        out["server_first_traceback"] = text[max(0, at - 300) : at + 2000]
    return out


CLOSED_PAGE = (
    "WebSocketClosedError",
    "StreamClosedError",
    # Bokeh handled a message of a page after that page's connection was detached
    # (the page closed): ServerConnection.session asserts it still has one
    "assert self._session is not None",
)


def closed_socket_tracebacks(log_text):
    """Tracebacks in the server log that belong to a record (a timestamped log line and the
    lines under it) about a page that closed its websocket: the server still sending to it, or
    Bokeh still handling a message it sent just before."""
    records = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", log_text)
    return sum(r.count("Traceback") for r in records if any(m in r for m in CLOSED_PAGE))


def summary(out):
    lat, first = out["slider_to_plot_s"], out["first_result_s"]
    rates = out["gibbs_refresh_per_s"]
    return {
        "slider_to_plot_p50_s": percentile(lat, 50),
        "slider_to_plot_p95_s": percentile(lat, 95),
        "slider_moves": len(lat),
        "slider_timeouts": sum(x == float("inf") for x in lat),
        "first_result_p50_s": percentile(first, 50),
        "first_result_p95_s": percentile(first, 95),
        "gibbs_refresh_per_s": rates,
        "gibbs_refresh_per_s_min": min(rates) if rates else None,
        "foreign_requests": len(out["foreign_requests"]),
        "page_errors": len(out["page_errors"]),
        "server_tracebacks": out["server_tracebacks"],
        "server_tracebacks_closed_socket": out.get("server_tracebacks_closed_socket", 0),
        "closed_page_lines": out.get("closed_page_lines", 0),
        "user_failures": len(out.get("user_failures", [])),
        "wall_s": out.get("wall_s"),
        # CPU seconds over the run, and as a share of the machine (all its cores)
        "server_cpu_s": out.get("server_cpu_s"),
        "browser_cpu_s": out.get("browser_cpu_s"),
        "server_cpu_share": _share(out.get("server_cpu_s"), out.get("wall_s")),
        "browser_cpu_share": _share(out.get("browser_cpu_s"), out.get("wall_s")),
    }


def _share(cpu, wall):
    return None if cpu is None or not wall else cpu / wall / os.cpu_count()


def met(name, value):
    op, target = TARGETS[name]
    if value is None:
        return False
    return value <= target if op == "<=" else value >= target


def write(path, record):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    s = record["summary"]
    rows = ["| measure | measured | target | met |", "|---|---|---|---|"]
    for name, (op, target) in TARGETS.items():
        v = s[name]
        shown = "not measured" if v is None else (f"{v:.3g}" if isinstance(v, float) else v)
        rows.append(f"| {name} | {shown} | {op} {target:g} | {'yes' if met(name, v) else 'NO'} |")
    o = record["raw"]
    md = [
        f"# A class on one server ({record['when_utc']})",
        "",
        f"Command: `{record['command']}` (git {record['git_head']}); {os.cpu_count()} CPUs; "
        f"{record['sliders']} slider "
        + (
            "users speaking the page's protocol (Bokeh clients: the server's work for each "
            "page, no browser drawing it on this machine)"
            if record.get("protocol") in ("bokeh", True)
            else "users speaking the page's protocol read as JSON (wire clients: the server's "
            "work for each page, next to nothing on this machine for the client)"
            if record.get("protocol") == "wire"
            else "contexts"
        )
        + f" + {record['samplers']} Gibbs contexts at once, "
        f"{record['seconds']:g} s of activity each, one Chromium on the same machine.",
        "",
        f"Machine load before: `{record['uptime_before']}`",
        "",
        f"Machine load after: `{record['uptime_after']}`",
        "",
        "Other developers share this machine: the figures ran under the load above.",
        "",
        *rows,
        "",
        f"- slider -> new plot: p50 {_f(s['slider_to_plot_p50_s'])} s, p95 "
        f"{_f(s['slider_to_plot_p95_s'])} s over {s['slider_moves']} moves "
        f"({s['slider_timeouts']} without a new plot within 60 s)",
        f"- first result: p50 {_f(s['first_result_p50_s'])} s, p95 {_f(s['first_result_p95_s'])} s",
        f"- CPU over the {_f(s['wall_s'])} s run: server {_f(s['server_cpu_s'])} s "
        f"({_pct(s['server_cpu_share'])} of the machine), browser (Chromium and its driver) "
        f"{_f(s['browser_cpu_s'])} s ({_pct(s['browser_cpu_share'])})"
        + (
            f", protocol clients {_f(o['protocol_client_cpu_s'])} s"
            if "protocol_client_cpu_s" in o and record.get("protocol")
            else ""
        )
        + "; the rest went to other work on the machine",
        f"- Gibbs diagnostic updates per second, per sampler: "
        f"{', '.join(_f(r) for r in s['gibbs_refresh_per_s'])}",
        f"- requests: {o['requests']}, to other hosts: {s['foreign_requests']} "
        f"{sorted(set(o['foreign_requests']))[:5]}; page errors: {o['page_errors'][:5]}; "
        f"server tracebacks: {s['server_tracebacks']} (of which a page closed while the "
        f"server was sending to it or handling its last messages: "
        f"{s['server_tracebacks_closed_socket']}); one-line notices of a page closed while "
        f"the server was sending to it: {s['closed_page_lines']}; users that failed: "
        f"{o.get('user_failures')}",
        "",
    ]
    path.write_text("\n".join(md))


def _f(x):
    return "n/a" if x is None else f"{x:.2f}"


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.0f} %"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    given = list(argv)
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sliders", type=int, default=10)
    parser.add_argument("--samplers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--first-timeout",
        type=float,
        default=180.0,
        help="seconds a page may take for its first plot (or any other step) "
        "before its user counts as failed",
    )
    parser.add_argument(
        "--protocol",
        nargs="?",
        const="bokeh",
        choices=sorted(PROTOCOL_CLIENTS),
        help="slider users are protocol clients, not browser pages: what the server does for "
        "a class whose browsers run elsewhere; 'bokeh' (the default): Bokeh client sessions "
        "(benchmarks/app/protocol_client.py); 'wire': the messages read as JSON "
        "(benchmarks/app/wire_client.py), almost no CPU on this machine",
    )
    parser.add_argument(
        "--results",
        default=str(RESULTS / "load.md"),
        help="Markdown result file (JSON beside it); '' writes none",
    )
    parser.add_argument(
        "--chromium", default=os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    )
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no chromium found (apt-get install chromium, or --chromium PATH)")
    before = uptime()
    out = measure(
        args.chromium,
        args.sliders,
        args.samplers,
        args.seconds,
        extra,
        seed=args.seed,
        first_timeout=args.first_timeout,
        protocol=args.protocol,
    )
    after = uptime()
    s = summary(out)
    commit = git_head()
    record = {
        "when_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/app/load.py " + " ".join(given),
        "git_head": commit,
        "uptime_before": before,
        "uptime_after": after,
        "sliders": args.sliders,
        "samplers": args.samplers,
        "protocol": args.protocol,
        "seconds": args.seconds,
        "summary": s,
        "raw": out,
    }
    print(json.dumps(s, indent=2, default=str))
    for name in TARGETS:
        print(f"{name}: {s[name]} ({'met' if met(name, s[name]) else 'NOT MET'})")
    if args.results:
        write(args.results, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
