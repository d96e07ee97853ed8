"""The ``privclust`` console command.

``privclust serve`` starts the dashboard (a thin wrapper over ``panel serve`` on
``privclust/app/page.py``); ``privclust --version`` prints the installed version. Options after
``--`` go to ``panel serve`` unchanged (for example ``-- --basic-auth users.json --cookie-secret S``).
The server's settings (:mod:`privclust.app.config`) are options of ``serve`` and reach the
``panel serve`` child as its ``PRIVCLUST_*`` environment. ``--dataset NAME=PATH --box LO,HI``
registers a large private data set (shards read on Dask) before the server starts.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from privclust.app import config
from privclust.app.server import parent_watch

PAGE = Path(__file__).with_name("page.py")
WARMUP = Path(__file__).parent / "server" / "warmup.py"
# signals that end the server: passed on to the ``panel serve`` child, which then shuts down
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# how long a session nobody is connected to is kept (Panel's default: 15 s). Bokeh discards a
# page's session when its websocket has not connected by then; under load (12 pages opened at
# once on 2 busy cores, benchmarks/app/load.py) some did not, and Bokeh built a fresh session
# for the late socket: the page showed "reference ... isn't known" errors and Panel's CDN
# stylesheets. A closed tab's session (and its sampler) ends at most this long after the tab.
UNUSED_SESSION_MS = 60_000


def _version() -> str:
    try:
        return version("privclust")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def serve_command(
    address: str = "127.0.0.1",
    port: int = 5006,
    show: bool = False,
    extra: list[str] | tuple[str, ...] = (),
    processes: int = 1,
) -> list[str]:
    """The ``panel serve`` command line for the dashboard (the CLI, the tests' server and the
    benchmark tour all start it from here).

    It serves ``page.py`` with ``warmup.py`` as the ``--setup`` hook and Panel's
    ``--reuse-sessions --warm`` (every page's HTML comes from a session built at startup; a
    page's own session is built when its websocket connects; without ``--warm`` under
    ``--num-procs`` before Python 3.12, see below). The websocket origin is
    pinned to the served address (cross-site websocket hijacking is refused);
    ``--allow-websocket-origin`` in ``extra`` overrides it for a deployment behind a proxy.
    ``processes`` > 1 spreads the sessions over that many server processes (``--num-procs``).
    ``extra`` (further ``panel serve`` options, e.g. ``--liveness``) comes last.
    """
    extra = list(extra)
    cmd = [
        sys.executable,
        "-m",
        "panel",
        "serve",
        str(PAGE),
        "--address",
        address,
        "--port",
        str(port),
        "--setup",
        str(WARMUP),
        # a page whose websocket connects late (a busy server) must find its session: Bokeh
        # would otherwise build a new one for the socket, which the page does not know
        "--unused-session-lifetime",
        str(UNUSED_SESSION_MS),
        # a page's HTML is the first session's (its root ids and resources); the page's own
        # session is built once, when its websocket connects. Without it each GET built a
        # session, a class's twelve GETs queued behind each other, and a page whose
        # websocket came after the unused-session lifetime had its session built a second
        # time (23 builds for 12 pages, benchmarks/app/load.py with the server profiled)
        "--reuse-sessions",
    ]
    if (
        processes == 1 and not any(a.startswith("--num-procs") for a in extra)
    ) or sys.version_info >= (3, 12):
        # ... and that first session is a throw-away one built at startup, not the first
        # visitor's (which would then never expire). Panel builds it uninitialised with
        # --num-procs before Python 3.12, and its page then lacks the template's scripts
        # ("bootstrap is not defined" in every page): there the first visitor's session is kept
        cmd.append("--warm")
    if not any(arg.startswith("--allow-websocket-origin") for arg in extra):
        hosts = (
            {address, "localhost", "127.0.0.1"}
            if address in ("127.0.0.1", "localhost")
            else {address}
        )
        for host in sorted(hosts):
            cmd += ["--allow-websocket-origin", f"{host}:{port}"]
    if processes > 1:
        cmd += ["--num-procs", str(processes)]
    if show:
        cmd.append("--show")
    return cmd + extra


def run_server(cmd: list[str], env: dict[str, str] | None = None) -> int:
    """Run ``cmd`` until it exits and return its exit status.

    SIGTERM, SIGINT and SIGHUP sent to this process are passed on to the child, and this process
    waits for it, so that ``kill <pid of privclust serve>`` stops the server rather than leaving
    it running without a parent; on Linux the child also gets SIGTERM from the kernel when this
    process dies of anything, SIGKILL included (:mod:`privclust.app.server.parent_watch`). The child gets its own process group, so a Ctrl-C at the
    terminal reaches it once (through us) rather than twice.
    """
    child = None
    pending: list[int] = []

    def forward(signum, frame):
        if child is None:
            pending.append(signum)  # arrived while the child was being started
        elif child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        # the child also watches us: it ends when we do, even on a SIGKILL we cannot forward
        child = subprocess.Popen(
            cmd, env=env, process_group=0, preexec_fn=parent_watch.child_watching(os.getpid())
        )
        for signum in pending:
            child.send_signal(signum)
        code = child.wait()
    finally:
        if child is not None and child.poll() is None:  # we failed, not the child
            child.kill()
            child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code  # killed by signal N: the shell's 128 + N


def _settings_options(serve: argparse.ArgumentParser) -> None:
    for setting in config.SETTINGS:
        default = "unset" if setting.default is None else setting.default
        if setting is config.OWNER_VIEW:
            serve.add_argument(
                setting.option, action="store_true", help=f"{setting.doc} (env {setting.env}=1)"
            )
        else:
            serve.add_argument(
                setting.option,
                metavar=setting.metavar,
                help=f"{setting.doc} (env {setting.env}; default {default})",
            )


def _child_env(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict | None:
    """The child's environment: ours with the given options as ``PRIVCLUST_*`` variables
    (None when no option is given); every setting is checked before the server starts."""
    given = {}
    for setting in config.SETTINGS:
        value = getattr(args, setting.option.lstrip("-").replace("-", "_"))
        if setting is config.OWNER_VIEW:
            if value:
                given[setting.env] = "1"
        elif value is not None:
            try:
                setting.parse_text(value, from_option=True)
            except config.SettingError as exc:
                parser.error(str(exc))
            given[setting.env] = value
    env = dict(os.environ, **given)
    try:
        config.check(env)
    except config.SettingError as exc:
        parser.error(str(exc))
    return env if given else None


def _box(text: str) -> list:
    """``LO,HI`` (every column) or ``LO1:LO2:...,HI1:HI2:...`` (one number per column)."""
    try:
        lo, hi = text.split(",")
        sides = [[float(v) for v in side.split(":")] for side in (lo, hi)]
    except ValueError:
        raise ValueError(f"--box {text!r}: expected LO,HI or LO1:LO2:...,HI1:HI2:...") from None
    return [s[0] if len(s) == 1 else s for s in sides]


def _scheduler_client(address: str):
    from dask.distributed import Client

    return Client(address, set_as_default=False)


def _register_datasets(args, env: dict, parser: argparse.ArgumentParser) -> dict | None:
    """The operator's registration of large data sets (``--dataset NAME=PATH --box LO,HI``
    and the entries of ``--datasets FILE``): every shard is validated and counted now, before
    the server starts, and the registry is written to the state folder, whose path the server
    gets as ``PRIVCLUST_DATASETS``. Returns the server's environment (None: nothing given)."""
    from privclust.core.data.dask_registry import (
        REGISTRY_SETTING,
        read_entries,
        register_entry,
        write_registry,
    )

    if len(args.box) != len(args.dataset):
        parser.error(
            f"give one --box per --dataset ({len(args.dataset)} data set(s), "
            f"{len(args.box)} box(es))"
        )
    entries = []
    try:
        registry = config.DATASETS.read(env)
        if registry is not None:
            entries += read_entries(registry)
        for spec, box in zip(args.dataset, args.box, strict=False):
            name, sep, path = spec.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"--dataset {spec!r}: expected NAME=PATH")
            entries.append({"name": name.strip(), "path": path.strip(), "box": _box(box)})
        names = [e["name"] for e in entries]
        if len(set(names)) != len(names):
            raise ValueError("a data set name is given twice")
        if not entries:
            return None
        address = config.DASK_SCHEDULER.read(env)
        client = _scheduler_client(address) if address else None  # None: local threads
        records = []
        for e in entries:
            print(
                f"privclust: registering {e['name']} ({e['path']}): validating every shard ...",
                file=sys.stderr,
                flush=True,
            )
            records.append(e if "registration" in e else register_entry(e, client))
            print(
                f"privclust: {e['name']}: {records[-1]['n_samples']} records x "
                f"{records[-1]['n_features']} features",
                file=sys.stderr,
                flush=True,
            )
    except (ValueError, OSError, config.SettingError) as exc:
        parser.error(str(exc))
    folder = config.STATE_DIR.read(env)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "datasets.json"
    write_registry(records, path)
    return dict(env, **{REGISTRY_SETTING: str(path)})


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    # "--box -5,5": a box's low side is often negative, which argparse takes for an option
    argv = [
        f"--box={argv[i + 1]}" if a == "--box" and i + 1 < len(argv) else a
        for i, a in enumerate(argv)
        if i == 0 or argv[i - 1] != "--box"
    ]
    parser = argparse.ArgumentParser(
        prog="privclust",
        description="privclust: an interactive lab for differentially private clustering.",
    )
    parser.add_argument("--version", action="version", version=f"privclust {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="start the dashboard in a browser tab (synthetic demo data by default)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start the privclust dashboard with `panel serve`. Arguments after `--` are\n"
        "passed to `panel serve` (e.g. -- --basic-auth FILE --cookie-secret SECRET).",
        epilog="Each setting option sets its PRIVCLUST_* variable for the server; without the\n"
        "option the variable in the environment applies, else the default. Bad values stop\n"
        "the command before the server starts.",
    )
    serve.add_argument(
        "--address",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    serve.add_argument("--port", type=int, default=5006, help="port (default 5006)")
    serve.add_argument("--show", action="store_true", help="open the page in a web browser")
    _settings_options(serve)
    serve.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="register a large private data set: a folder of .npy / .npz / "
        ".csv shards (or one file), read on Dask; repeatable, each with its "
        "--box",
    )
    serve.add_argument(
        "--box",
        action="append",
        default=[],
        metavar="LO,HI",
        help="the public box of the --dataset before it: LO,HI for every "
        "column, or LO1:LO2:...,HI1:HI2:... per column",
    )
    args = parser.parse_args(argv)
    if args.command != "serve":
        parser.print_help()
        return 2
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535, got {args.port}")
    env = _child_env(args, serve)
    env = _register_datasets(args, env or dict(os.environ), serve) or env
    processes = config.processes(env)
    return run_server(serve_command(args.address, args.port, args.show, extra, processes), env=env)


if __name__ == "__main__":
    sys.exit(main())
