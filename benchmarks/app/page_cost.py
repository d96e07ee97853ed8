"""What one page of the dashboard costs: CPU seconds per process, from navigation to first result.

    python benchmarks/app/page_cost.py [--pages 5] [--moves 8] [--cores 2] [--class-size 12]
                                       [--sliders 10] [--chromium PATH]
                                       [--results benchmarks/results/app/page_cost.md]

Starts the dashboard as ``privclust serve`` does (``load.served``), then opens ``--pages`` pages
one after the other, each in a fresh Chromium context on an otherwise quiet machine, and for each
records the wall time from navigation to the first plot titled ``ε=`` (as ``load.py`` times it)
plus one more second for the page to settle, and the CPU seconds spent meanwhile by the server
(with its children), Chromium's renderer, its GPU, network and browser processes, and
Playwright's driver. It also counts the Bokeh models of the page and samples the renderer's
JavaScript (Chrome's sampling profiler) to say how much of the renderer's time is script. Then
it moves the page's ε slider ``--moves`` times (a walk within two steps of the default, a
half-second pause after each new plot) and records the CPU of one step.

Why: a class opens its pages together. If all ``--class-size`` pages start at once on
``--cores`` cores, the last first result cannot come before ``class_size x cpu_per_page / cores``
seconds however the work is scheduled; and ``--sliders`` users who each step, wait for the plot
and pause 1.5 s (``load.py``'s users) need their steps' CPU within every pause plus latency, so
the mean latency cannot be below ``sliders x cpu_per_step / cores - 1.5`` s. The report prints
both bounds, which are what the class load targets of ``load.py`` run into when the browsers
share the server's cores.
"""

import argparse
import asyncio
import collections
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import load

JS_MODELS = "() => Bokeh.documents.reduce((n, d) => n + d._all_models.size, 0)"


def _kind(pid):
    """A process's role: Chromium's ``--type`` (utility processes by sub-type), else its name."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").rstrip("\0").split("\0")
    except OSError:
        return None
    if len(argv) == 1:  # Chromium rewrites its command line as one space-separated title
        argv = argv[0].split(" ")
    kind = next((a[7:] for a in argv if a.startswith("--type=")), None)
    if kind == "utility":
        sub = next((a.split("=", 1)[1] for a in argv if a.startswith("--utility-sub-type=")), "")
        return "utility " + sub.rsplit(".", 1)[-1]
    if kind:
        return kind
    name = os.path.basename(argv[0]) if argv and argv[0] else "?"
    return "browser" if "chrom" in name else "driver" if name == "node" else name


def _cpu_by_kind(server_pid):
    """CPU seconds so far of the server's tree and of this process's other descendants, by kind."""
    out = collections.Counter({"server": load._tree_cpu(server_pid) or 0.0})
    for pid in load._descendants(os.getpid()):
        if pid == server_pid or load._is_below(pid, {server_pid}):
            continue
        cpu, kind = load._cpu_seconds(pid), _kind(pid)
        if cpu is not None and kind is not None:
            out[kind] += cpu
    return out


def _difference(after, before):
    """CPU seconds spent between two ``_cpu_by_kind`` readings, by kind (those above zero)."""
    cpu = {k: round(after[k] - before.get(k, 0.0), 3) for k in after}
    return {k: v for k, v in cpu.items() if v > 0}


def _script_seconds(profile):
    """Seconds of a CPU profile spent in script (not idle, GC or the renderer's own work)."""
    nodes = {n["id"]: n["callFrame"]["functionName"] for n in profile["nodes"]}
    other = {"(idle)", "(program)", "(garbage collector)"}
    return (
        sum(
            d
            for s, d in zip(profile["samples"], profile["timeDeltas"], strict=True)
            if nodes[s] not in other
        )
        / 1e6
    )


async def _move(page, step, timeout):
    """Move the ε slider one step (``step`` +1 or -1) and wait for the new plot: its latency."""
    await page.evaluate(load.JS_ARM, timeout)
    await page.locator(".pc-epsilon .noUi-handle").first.press(
        "ArrowRight" if step > 0 else "ArrowLeft"
    )
    latency = await page.evaluate("() => window.__pc_step")
    if latency is None:
        raise RuntimeError(f"no new plot within {timeout} s of a slider step")
    return latency


async def pages(url, server_pid, chromium, n, timeout, moves=0):
    """One record per page: wall seconds to first result, CPU seconds by process kind, models;
    with ``moves``, also the CPU seconds by kind of one slider step (mean over ``moves`` steps of
    a walk within two steps of the default, as ``load.py``'s users walk) and its latency."""
    from playwright.async_api import async_playwright

    records = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=load.ARGS)
        for _ in range(n):
            ctx = await browser.new_context(viewport=load.VIEWPORT)
            page = await ctx.new_page()
            await page.goto("about:blank")
            cdp = await ctx.new_cdp_session(page)
            await cdp.send("Profiler.enable")
            await cdp.send("Profiler.start")
            before, t0 = _cpu_by_kind(server_pid), time.perf_counter()
            await page.goto(url, wait_until="commit")
            await load._wait_title(page, timeout)
            first = time.perf_counter() - t0
            await page.wait_for_timeout(1000)
            after = _cpu_by_kind(server_pid)
            profile = (await cdp.send("Profiler.stop"))["profile"]
            record = {
                "first_result_s": round(first, 3),
                "cpu_s": _difference(after, before),
                "renderer_script_s": round(_script_seconds(profile), 3),
                "bokeh_models": await page.evaluate(JS_MODELS),
            }
            if moves:
                await page.locator(".pc-epsilon .noUi-handle").first.focus()
                before, latencies = _cpu_by_kind(server_pid), []
                for i in range(moves):
                    latencies.append(await _move(page, 1 if i % 4 < 2 else -1, timeout))
                    await page.wait_for_timeout(500)  # the page settles, as a user pauses
                per_move = _difference(_cpu_by_kind(server_pid), before)
                record["move"] = {
                    "latency_s": [round(v, 3) for v in latencies],
                    "cpu_s": {k: round(v / moves, 3) for k, v in per_move.items()},
                }
            records.append(record)
            await ctx.close()
        await browser.close()
    return records


def report(records, cores, class_size, command, git, load_before, sliders=10, pause=1.5):
    """Markdown lines and a JSON record: the pages' table, the medians and the two floors (the
    last of ``class_size`` first results; the mean latency of ``sliders`` users who pause
    ``pause`` s between steps) on ``cores`` cores."""
    kinds = sorted({k for r in records for k in r["cpu_s"]})
    median = {k: statistics.median(r["cpu_s"].get(k, 0.0) for r in records) for k in kinds}
    total = statistics.median(sum(r["cpu_s"].values()) for r in records)
    bound = class_size * total / cores
    first = statistics.median(r["first_result_s"] for r in records)
    lines = [
        f"# What one page costs ({datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')})",
        "",
        f"Command: `{command}` (git {git}); {len(records)} pages one after the other, each in a fresh "
        f"Chromium context, navigation -> first result + 1 s. Machine load average before: "
        f"{load_before:.2f}.",
        "",
        "| page | first result s | CPU s, all | "
        + " | ".join(kinds)
        + " | renderer script s | Bokeh models |",
        "|---|---|---|" + "---|" * len(kinds) + "---|---|",
    ]
    for i, r in enumerate(records, 1):
        lines.append(
            f"| {i} | {r['first_result_s']:.2f} | {sum(r['cpu_s'].values()):.2f} | "
            + " | ".join(f"{r['cpu_s'].get(k, 0.0):.2f}" for k in kinds)
            + f" | {r['renderer_script_s']:.2f} | {r['bokeh_models']} |"
        )
    lines += [
        f"| median | {first:.2f} | {total:.2f} | "
        + " | ".join(f"{median[k]:.2f}" for k in kinds)
        + " | | |",
        "",
        f"A class of {class_size} opening together on {cores} cores: the last first result "
        f"comes no sooner than {class_size} x {total:.2f} s / {cores} = **{bound:.1f} s** "
        "(all CPU, no waiting counted), against the target of 10 s for the 95th percentile. "
        f"Of a page's {total:.2f} CPU s, the server's share is {median.get('server', 0.0):.2f} s.",
    ]
    out = {"records": records, "median_cpu_s": median, "bound_s": bound}
    moved = [r["move"] for r in records if "move" in r]
    if moved:
        per_move = statistics.median(sum(m["cpu_s"].values()) for m in moved)
        server = statistics.median(m["cpu_s"].get("server", 0.0) for m in moved)
        latency = statistics.median(v for m in moved for v in m["latency_s"])
        # steady state: each user moves, waits for the plot (L), pauses; the cores must supply
        # sliders x per_move CPU seconds every (pause + L) seconds
        slider_bound = max(0.0, sliders * per_move / cores - pause)
        out.update(move_cpu_s=per_move, move_server_cpu_s=server, slider_bound_s=slider_bound)
        lines += [
            "",
            f"One slider step (median over {sum(len(m['latency_s']) for m in moved)} steps, "
            f"a page alone): {latency:.2f} s to the new plot, {per_move:.2f} CPU s, of which "
            f"the server's {server:.2f} s. {sliders} users who each step, wait for the plot "
            f"and pause {pause} s need {sliders} x {per_move:.2f} CPU s every {pause} s + L; "
            f"on {cores} cores the mean latency L is at least {sliders} x {per_move:.2f} / "
            f"{cores} - {pause} = **{slider_bound:.2f} s** in steady state (target: 95th "
            "percentile 3 s)"
            + (
                ": the CPU count alone sets no floor above a page's own latency."
                if slider_bound < latency
                else "."
            ),
        ]
    return lines, out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pages", type=int, default=5)
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--class-size", type=int, default=12)
    p.add_argument("--moves", type=int, default=8, help="slider steps timed on each page")
    p.add_argument("--sliders", type=int, default=10, help="users who move the slider")
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for a page")
    p.add_argument(
        "--chromium", default=os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    )
    p.add_argument("--results", default=str(load.RESULTS / "page_cost.md"))
    a = p.parse_args(argv)
    if not a.chromium:
        p.error("no chromium found (apt-get install chromium, or --chromium PATH)")
    if a.pages < 1 or a.moves < 0:
        p.error(f"--pages must be at least 1 and --moves at least 0; got {a.pages}, {a.moves}")
    load_before = os.getloadavg()[0]
    with load.served() as (proc, origin, _):
        records = asyncio.run(
            pages(f"{origin}/page", proc.pid, a.chromium, a.pages, a.timeout, a.moves)
        )
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    command = " ".join(["python benchmarks/app/page_cost.py", *(argv or sys.argv[1:])])
    lines, record = report(
        records, a.cores, a.class_size, command, git.stdout.strip(), load_before, a.sliders
    )
    print("\n".join(lines))
    if a.results:
        path = Path(a.results)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        path.with_suffix(".json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
