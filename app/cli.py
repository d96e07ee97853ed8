"""The ``privclust`` console command.

``privclust serve`` starts the dashboard (a thin wrapper over ``panel serve`` on
``privclust/app/page.py``); ``privclust --version`` prints the installed version. Options after
``--`` go to ``panel serve`` unchanged (for example ``-- --basic-auth users.json --cookie-secret S``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PAGE = Path(__file__).with_name("page.py")
WARMUP = Path(__file__).with_name("warmup.py")


def _version() -> str:
    try:
        return version("privclust")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def serve_command(address: str, port: int, show: bool, extra: list[str]) -> list[str]:
    """The ``panel serve`` command line for the dashboard.

    The websocket origin is pinned to the served address (cross-site websocket hijacking is
    refused); ``--allow-websocket-origin`` in ``extra`` overrides it for a deployment behind a proxy.
    """
    cmd = [sys.executable, "-m", "panel", "serve", str(PAGE), "--address", address,
           "--port", str(port), "--setup", str(WARMUP)]
    if not any(arg.startswith("--allow-websocket-origin") for arg in extra):
        hosts = {address, "localhost", "127.0.0.1"} if address in ("127.0.0.1", "localhost") \
            else {address}
        for host in sorted(hosts):
            cmd += ["--allow-websocket-origin", f"{host}:{port}"]
    if show:
        cmd.append("--show")
    return cmd + extra


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(
        prog="privclust", description="privclust: an interactive lab for differentially private "
        "clustering.")
    parser.add_argument("--version", action="version", version=f"privclust {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve", help="start the dashboard in a browser tab (synthetic demo data by default)",
        description="Start the privclust dashboard with `panel serve`. Arguments after `--` are "
        "passed to `panel serve` (e.g. -- --basic-auth FILE --cookie-secret SECRET).")
    serve.add_argument("--address", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=5006, help="port (default 5006)")
    serve.add_argument("--show", action="store_true", help="open the page in a web browser")
    serve.add_argument("--owner-view", action="store_true",
                       help="offer the data owner view (displays computed on the raw records, "
                            "marked NOT PRIVATE): only on a server the data owner runs for "
                            "themselves; never where an analyst is at the browser "
                            "(env PRIVCLUST_OWNER_VIEW=1)")
    args = parser.parse_args(argv)
    if args.command != "serve":
        parser.print_help()
        return 2
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535, got {args.port}")
    env = dict(os.environ, PRIVCLUST_OWNER_VIEW="1") if args.owner_view else None
    return subprocess.call(serve_command(args.address, args.port, args.show, extra), env=env)


if __name__ == "__main__":
    sys.exit(main())
