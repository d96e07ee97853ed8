"""``privclust serve``: the server settings are typed, documented options that reach the
``panel serve`` child as its ``PRIVCLUST_*`` environment; bad values stop the command with a
message naming the variable; one function builds the ``panel serve`` command line; stopping the
command stops the server."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from privclust.app import cli, config, safety
from privclust.app.cli import main, serve_command

APP = Path(cli.__file__).parent


@pytest.fixture
def started(monkeypatch):
    """Stands in for the server: records the environment ``privclust serve`` would give it."""
    calls = []
    monkeypatch.setattr(cli, "run_server", lambda cmd, env=None: calls.append((cmd, env)) or 0)
    return calls


@pytest.fixture
def clean_env(monkeypatch):
    for setting in config.SETTINGS:
        monkeypatch.delenv(setting.env, raising=False)


# ------------------------------------------------------------------ the settings and their options


def test_help_lists_every_setting_with_its_variable(capsys):
    with pytest.raises(SystemExit) as done:
        main(["serve", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for option in (
        "--budget-epsilon",
        "--budget-delta",
        "--state-dir",
        "--owner-view",
        "--max-upload-mb",
        "--data-dir",
    ):
        setting = next(s for s in config.SETTINGS if s.option == option)
        assert option in text and setting.env in text
    assert "ledger" in text and "release store" in text


def test_options_reach_the_server_as_its_environment(started, clean_env, tmp_path):
    assert (
        main(
            [
                "serve",
                "--port",
                "5999",
                "--budget-epsilon",
                "1.5",
                "--budget-delta",
                "1e-6",
                "--state-dir",
                str(tmp_path),
                "--max-upload-mb",
                "7",
                "--owner-view",
                "--data-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    cmd, env = started[0]
    assert env["PRIVCLUST_BUDGET_EPSILON"] == "1.5" and env["PRIVCLUST_BUDGET_DELTA"] == "1e-6"
    assert env["PRIVCLUST_STATE_DIR"] == str(tmp_path)
    assert env["PRIVCLUST_MAX_UPLOAD_MB"] == "7" and env["PRIVCLUST_OWNER_VIEW"] == "1"
    assert env["PRIVCLUST_DATA_DIR"] == str(tmp_path)
    assert env["PATH"] == os.environ["PATH"]  # the rest is inherited
    assert config.check(env)["PRIVCLUST_BUDGET_EPSILON"] == 1.5  # what the child will read
    assert main(["serve", "--port", "5999"]) == 0
    assert started[1][1] is None  # no option: our environment


@pytest.mark.parametrize(
    "option, value, reason",
    [
        ("--budget-epsilon", "0", "> 0"),
        ("--budget-epsilon", "inf", "> 0"),
        ("--budget-epsilon", "three", "a number"),
        ("--budget-delta", "1", "[0, 1)"),
        ("--budget-delta", "-1e-5", "[0, 1)"),
        ("--max-upload-mb", "-5", "> 0"),
        ("--max-upload-mb", "50MB", "a number"),
        ("--data-dir", "/nonexistent/privclust-data", "not a folder"),
    ],
)
def test_a_bad_option_stops_the_command(option, value, reason, started, clean_env, capsys):
    with pytest.raises(SystemExit) as done:
        main(["serve", f"{option}={value}"])  # "=": a value may start with "-"
    assert done.value.code == 2 and not started
    err = capsys.readouterr().err
    setting = next(s for s in config.SETTINGS if s.option == option)
    assert option in err and setting.env in err and reason in err and repr(value) in err


@pytest.mark.parametrize(
    "env, value",
    [
        ("PRIVCLUST_BUDGET_EPSILON", "-3"),
        ("PRIVCLUST_BUDGET_DELTA", "0.5%"),
        ("PRIVCLUST_MAX_UPLOAD_MB", "lots"),
        ("PRIVCLUST_OWNER_VIEW", "maybe"),
    ],
)
def test_a_bad_variable_stops_the_command_before_the_server_starts(
    env, value, started, clean_env, monkeypatch, capsys
):
    monkeypatch.setenv(env, value)
    with pytest.raises(SystemExit) as done:
        main(["serve"])
    assert done.value.code == 2 and not started
    assert f"{env}={value!r}" in capsys.readouterr().err


def test_defaults(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.check() == {
        "PRIVCLUST_STATE_DIR": tmp_path / ".privclust",
        "PRIVCLUST_BUDGET_EPSILON": 3.0,
        "PRIVCLUST_BUDGET_DELTA": 1e-4,
        "PRIVCLUST_OWNER_VIEW": False,
        "PRIVCLUST_MAX_UPLOAD_MB": 50.0,
        "PRIVCLUST_DATA_DIR": None,
        "PRIVCLUST_MAX_SAMPLERS": 2,
        "PRIVCLUST_PROCESSES": 1,
        "PRIVCLUST_DATASETS": None,
        "PRIVCLUST_DASK_SCHEDULER": None,
    }


@pytest.mark.parametrize(
    "word, on",
    [
        ("1", True),
        ("Yes", True),
        (" on ", True),
        ("true", True),
        ("0", False),
        ("no", False),
        ("OFF", False),
        ("", False),
    ],
)
def test_owner_view_words(word, on, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_OWNER_VIEW", word)
    assert config.owner_view() is on


def test_the_app_reads_its_settings_through_config(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "0.75")
    monkeypatch.setenv("PRIVCLUST_BUDGET_DELTA", "0")
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PRIVCLUST_MAX_UPLOAD_MB", "2")
    assert config.budget() == (0.75, 0.0)
    assert config.state_dir() == tmp_path / "state" and (tmp_path / "state").is_dir()
    assert safety.max_upload_bytes() == 2 * 2**20
    # a bad value names the variable where it is read, instead of a bare float() error or a
    # silent fallback to the default
    monkeypatch.setenv("PRIVCLUST_MAX_UPLOAD_MB", "2 MB")
    with pytest.raises(config.SettingError, match="PRIVCLUST_MAX_UPLOAD_MB='2 MB'"):
        safety.max_upload_bytes()
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "nan")
    with pytest.raises(config.SettingError, match="PRIVCLUST_BUDGET_EPSILON"):
        config.budget()
    # where the README and --help say the ledger lives
    assert config.STATE_DIR.default == "~/.privclust" and "ledger.sqlite" in config.STATE_DIR.doc


def test_readme_lists_every_setting():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Running a server") :]
    section = section[: section.index("\n## ", 1)]
    for setting in config.SETTINGS:
        assert f"`{setting.env}" in section and f"`{setting.option}" in section


def test_no_other_app_module_reads_a_privclust_variable():
    read = re.compile(r"""(environ(\.get)?[(\[]|getenv\()\s*["']PRIVCLUST_""")
    hits = [
        p.name for p in APP.glob("*.py") if p.name != "config.py" and read.search(p.read_text())
    ]
    assert not hits


# ------------------------------------------------------------------------- the command line


def test_serve_command_adds_extra_options_last():
    cmd = serve_command("127.0.0.1", 5007, extra=["--liveness", "--check-unused-sessions", "500"])
    assert cmd[:5] == [sys.executable, "-m", "panel", "serve", str(APP / "page.py")]
    assert cmd[cmd.index("--setup") + 1] == str(APP / "server" / "warmup.py")
    assert cmd[cmd.index("--port") + 1] == "5007"
    assert cmd[-3:] == ["--liveness", "--check-unused-sessions", "500"] and "--show" not in cmd


def test_arguments_after_the_separator_go_to_panel_serve(started, clean_env):
    assert main(["serve", "--port", "5999", "--", "--basic-auth", "users.json"]) == 0
    assert started[0][0][-2:] == ["--basic-auth", "users.json"]


# ------------------------------------------------------------------------- stopping the server


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat(pid):
    """(parent pid, state letter) of a live process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0]


def _descendants(root):
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _alive(pid):
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z"  # a zombie has exited


def _listening(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_privclust_serve_stops_the_server(signum, tmp_path):
    port = _free_port()
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "privclust.app.cli",
            "serve",
            "--port",
            str(port),
            "--",
            "--liveness",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PRIVCLUST_STATE_DIR=str(tmp_path / "state")),
    )
    server = []
    try:
        deadline = time.monotonic() + 300  # a busy machine: only a server that never starts fails
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "privclust serve did not start within 300 s"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        server = _descendants(proc.pid)  # panel serve and whatever it started
        assert server
        proc.send_signal(signum)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in server) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in server if _alive(pid)]
        assert not left, f"still running after privclust serve ended: {left}"
        assert not _listening(port)
    finally:
        for pid in [proc.pid] + server:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=10)
        log.close()


def _start_cli(port, tmp_path, extra=()):
    log = open(tmp_path / f"serve-{port}-{time.monotonic_ns()}.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "privclust.app.cli",
            "serve",
            "--port",
            str(port),
            "--",
            "--liveness",
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PRIVCLUST_STATE_DIR=str(tmp_path / "state")),
    )
    deadline = time.monotonic() + 300  # a busy machine: only a server that never starts fails
    while True:
        assert proc.poll() is None, Path(log.name).read_text()
        assert time.monotonic() < deadline, "privclust serve did not start within 300 s"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as r:
                if r.status == 200:
                    return proc
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("extra", [(), ("--num-procs", "2")], ids=["one-process", "num-procs-2"])
def test_sigkill_of_privclust_serve_frees_the_port_and_a_restart_works(extra, tmp_path):
    """A SIGKILL cannot be forwarded: the server (and its --num-procs workers) watch their
    parent and end with it; the port is free within 5 s and the same command starts again."""
    port = _free_port()
    procs = [_start_cli(port, tmp_path, extra)]
    server = _descendants(procs[0].pid)
    try:
        assert server
        procs[0].kill()
        procs[0].wait(timeout=10)
        deadline = time.monotonic() + 5
        while _listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _listening(port), "the port is still served 5 s after the SIGKILL"
        procs.append(_start_cli(port, tmp_path, extra))  # a restart works
        server += _descendants(procs[1].pid)
        procs[1].terminate()
        procs[1].wait(timeout=30)
    finally:
        for pid in [p.pid for p in procs] + server:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        for p in procs:
            p.wait(timeout=10)


def test_processes_become_panel_serve_s_num_procs(started, clean_env):
    assert main(["serve", "--processes", "2"]) == 0
    cmd = started[0][0]
    assert cmd[cmd.index("--num-procs") + 1] == "2"
    assert main(["serve"]) == 0 and "--num-procs" not in started[1][0]


def test_pages_reuse_a_throw_away_session_built_at_startup():
    """Each page's HTML comes from one cached session (a class's GETs no longer queue behind
    twelve session builds); that session is built at startup (--warm) wherever Panel
    initialises it: not under --num-procs before Python 3.12, whose uninitialised page lacked
    the template's scripts."""
    one = serve_command("127.0.0.1", 5007)
    assert "--reuse-sessions" in one and "--warm" in one
    for cmd in (
        serve_command("127.0.0.1", 5007, processes=2),
        serve_command("127.0.0.1", 5007, extra=["--num-procs", "2"]),
    ):
        assert "--reuse-sessions" in cmd
        assert ("--warm" in cmd) == (sys.version_info >= (3, 12))
