"""What the server spends on each new page: protocol sessions opened one after another on one
``privclust serve`` (benchmarks/app/protocol_client.py, no slider moves), in server CPU seconds
per session, with each session's first result.

    python benchmarks/app/server_per_page.py [--sessions 8] [--rounds 3]

One session at a time, so the figure is the server's own work for a page (its build and the
document sent; closed sessions live on for ``--unused-session-lifetime``, 60 s, polling the
ledger, and end in a later round, so the figure grows over a run's rounds), free of the queueing and of the clients' CPU that make a
class run (load.py) vary by several seconds on a shared 2-core machine. Twelve pages opening
together cost the server's one IO thread at least twelve times this. Writes
benchmarks/results/app/server_per_page.{json,md}.
"""

import argparse
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path

import load

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parents[0] / "results" / "app"


def session(url, seed):
    """One protocol session, opened once its client has imported: its JSON line."""
    client = subprocess.Popen(
        [sys.executable, str(HERE / "protocol_client.py"), url, "0", str(seed), "120"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    while "ready" not in client.stdout.readline():
        if client.poll() is not None:
            raise RuntimeError("the protocol client stopped before it was ready")
    client.stdin.write("go\n")
    client.stdin.flush()
    out, _ = client.communicate(timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=8, help="sessions per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--results", default=str(RESULTS / "server_per_page.md"))
    args = p.parse_args(argv)
    rounds = []
    with load.served() as (proc, origin, _log):
        url = f"{origin}/page"
        session(url, 0)  # the server's first session pays for what it caches
        for r in range(args.rounds):
            cpu0 = load._tree_cpu(proc.pid)
            firsts = [session(url, 1 + r * args.sessions + i) for i in range(args.sessions)]
            cpu = (load._tree_cpu(proc.pid) - cpu0) / args.sessions
            first = statistics.median(x["first_result_s"][0] for x in firsts)
            rounds.append({"server_cpu_s_per_session": cpu, "first_result_median_s": first})
            print(f"round {r + 1}: server CPU {cpu:.3f} s per session, first result {first:.2f} s")
    record = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git": load.git_head(),
        "sessions_per_round": args.sessions,
        "rounds": rounds,
        "server_cpu_s_per_session_median": statistics.median(
            x["server_cpu_s_per_session"] for x in rounds
        ),
        "load_average_after": load.uptime(),
    }
    lines = [
        f"# The server's work per new page ({record['date']})",
        "",
        f"`python benchmarks/app/server_per_page.py --sessions {args.sessions} --rounds "
        f"{args.rounds}` (git {record['git']}); sessions one after another, each a Bokeh "
        "protocol client that opens the page and leaves. Machine load after: "
        f"`{record['load_average_after']}`.",
        "",
        "| round | server CPU s per session | first result, median s |",
        "|---|---|---|",
    ]
    lines += [
        f"| {i + 1} | {x['server_cpu_s_per_session']:.3f} | {x['first_result_median_s']:.2f} |"
        for i, x in enumerate(rounds)
    ]
    lines += [
        "",
        f"Median over rounds: **{record['server_cpu_s_per_session_median']:.3f}** server CPU s "
        "per page.",
    ]
    path = Path(args.results)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    path.with_suffix(".json").write_text(json.dumps(record, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
