"""A class on one server, in the browser: six pages at once make no outside request and no
page error; a page whose server died says so and offers a reload."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from privclust.app.cli import serve_command

pytestmark = pytest.mark.ui

LOAD = Path(__file__).resolve().parents[2] / "benchmarks" / "app" / "load.py"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(port, state, log):
    import requests

    proc = subprocess.Popen(
        serve_command("127.0.0.1", port, extra=["--liveness"]),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PRIVCLUST_STATE_DIR=str(state)),
    )
    deadline = time.time() + 300  # a busy machine: only a server that never starts fails
    while time.time() < deadline:
        assert proc.poll() is None, "panel serve exited"
        try:
            if requests.get(f"http://127.0.0.1:{port}/liveness", timeout=1).ok:
                return proc
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("panel serve did not start within 300 s")


def test_a_page_whose_server_died_shows_a_notice_that_reloads(page, tmp_path):
    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    procs = [_start(port, tmp_path / "state", log)]
    try:
        page.goto(f"http://127.0.0.1:{port}/page")
        page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
        notice = page.locator(".pc-lost")
        expect(notice).to_be_hidden()
        procs[0].kill()  # the server dies
        procs[0].wait(10)
        expect(notice).to_be_visible(timeout=30_000)
        expect(notice).to_contain_text("connection to the server was lost")
        procs.append(_start(port, tmp_path / "state", log))  # back again: the reload works
        notice.get_by_role("button", name="Reload the page").click()
        page.wait_for_function(
            "() => window.Bokeh && window.Bokeh.documents.length > 0", timeout=60_000
        )
        expect(page.locator(".pc-banner").first).to_be_visible(timeout=60_000)
        expect(page.locator(".pc-lost")).to_be_hidden()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        log.close()


def run_load(tmp_path, browser_type_launch_args, *options):
    """Run the class load script as a subprocess (its own asyncio loop, never
    pytest-playwright's); its JSON record and the path of its Markdown."""
    results = tmp_path / "load.md"
    run = subprocess.run(
        [sys.executable, str(LOAD), *options, "--first-timeout", "300", "--results", str(results)]
        + ["--chromium", browser_type_launch_args["executable_path"]],
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return json.loads(results.with_suffix(".json").read_text()), results


def test_six_pages_at_once_make_no_outside_request_and_no_page_error(
    tmp_path, browser_type_launch_args
):
    """The class load script (benchmarks/app/load.py) with 5 sliding pages and 1 Gibbs page,
    run as a subprocess: its own asyncio loop, never pytest-playwright's. Its timings depend on
    what else runs on the machine and are not asserted; what is asserted does not: no request
    left the server, no page logged an error, the server logged no traceback (other than about a
    page that had closed: the server still sending to it, or Bokeh's assertion on a message it
    handled after the page's connection was detached), every page showed its first result
    (the generous limit only catches a page that never would) and each sliding page moved its
    slider."""
    record, _ = run_load(
        tmp_path, browser_type_launch_args, "--sliders", "5", "--samplers", "1", "--seconds", "8"
    )
    raw, summary = record["raw"], record["summary"]
    assert raw["requests"] > 0
    assert raw["foreign_requests"] == []
    assert raw["page_errors"] == []
    assert summary["server_tracebacks"] == summary["server_tracebacks_closed_socket"], raw.get(
        "server_first_traceback"
    )
    # every page showed its first result; the Gibbs page's later steps (slider keys after the
    # algorithm switch) are the load script's, whose failure is reported, not asserted here
    assert len(raw["first_result_s"]) == 6, raw["user_failures"]
    assert summary["slider_moves"] >= 5


def test_the_load_script_drives_sliding_users_through_the_page_protocol(
    tmp_path, browser_type_launch_args
):
    """``load.py --protocol wire``: sliding users are protocol clients (no browser page each).
    Each shows its first result and every slider step it makes reaches a new plot title (a
    client that stopped hearing the server would time out: inf); nothing left the server and it
    logged no traceback. Timings are not asserted."""
    record, results = run_load(
        tmp_path,
        browser_type_launch_args,
        "--protocol",
        "wire",
        "--sliders",
        "2",
        "--samplers",
        "0",
        "--seconds",
        "6",
    )
    raw, summary = record["raw"], record["summary"]
    assert raw["user_failures"] == []
    assert len(raw["first_result_s"]) == 2
    steps = raw["slider_to_plot_s"]
    assert len(steps) >= 2 and all(s < float("inf") for s in steps), steps
    assert raw["foreign_requests"] == [] and raw["page_errors"] == []
    assert summary["server_tracebacks"] == 0, raw.get("server_first_traceback")
    assert "speaking the page's protocol read as JSON" in results.read_text()


@pytest.mark.parametrize("client", ["protocol_client.py", "wire_client.py"])
def test_each_protocol_client_moves_the_slider_to_new_plots_as_a_browser_does(server, client):
    """Both kinds of load.py's protocol users, on a served page: the first result is seen, and
    each slider step (its value and value_throttled, what the page's slider sends) reaches a new
    plot title naming an ε within the client's limit (60 s; a step lost or a title missed: inf).
    """
    run = subprocess.run(
        [sys.executable, str(LOAD.with_name(client)), server["url"], "4", "3", "120"],
        input="go\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    ready, line = run.stdout.splitlines()[-2:]
    out = json.loads(line)
    assert ready == "ready" and len(out["first_result_s"]) == 1 and out["cpu_s"] > 0
    steps = out["slider_to_plot_s"]
    assert len(steps) >= 2 and all(s < float("inf") for s in steps), steps


def test_the_page_cost_script_splits_a_page_s_cpu_by_process(tmp_path, browser_type_launch_args):
    """``benchmarks/app/page_cost.py`` on two pages, two slider steps each: each page's CPU is
    split between the server and Chromium's renderer (a classification that lumped Chromium's
    processes together, or missed the server, fails), the page's Bokeh models are counted, each
    step reached a new plot and cost the server CPU, and the bounds it reports are class size x
    median CPU per page / cores and sliders x CPU per step / cores - pause."""
    results = tmp_path / "page_cost.md"
    run = subprocess.run(
        [sys.executable, str(LOAD.with_name("page_cost.py")), "--pages", "2", "--cores", "2"]
        + ["--class-size", "12", "--moves", "2", "--sliders", "10", "--timeout", "300"]
        + ["--results", str(results)]
        + ["--chromium", browser_type_launch_args["executable_path"]],
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    record = json.loads(results.with_suffix(".json").read_text())
    assert len(record["records"]) == 2
    for page in record["records"]:
        assert page["cpu_s"]["server"] > 0 and page["cpu_s"]["renderer"] > 0, page
        assert page["bokeh_models"] > 50 and 0 < page["renderer_script_s"], page
        assert len(page["move"]["latency_s"]) == 2 and page["move"]["cpu_s"]["server"] > 0, page
    totals = sorted(sum(p["cpu_s"].values()) for p in record["records"])
    assert record["bound_s"] == pytest.approx(12 * (totals[0] + totals[1]) / 2 / 2)
    steps = sorted(sum(p["move"]["cpu_s"].values()) for p in record["records"])
    expected = max(0.0, 10 * (steps[0] + steps[1]) / 2 / 2 - 1.5)
    assert record["slider_bound_s"] == pytest.approx(expected)
    assert "A class of 12 opening together on 2 cores" in results.read_text()
