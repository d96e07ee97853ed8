"""Issue 7 "Performance" and README screenshots: run the scripted dashboard tour.

    python benchmarks/app/dashboard_tour.py            # from anywhere in the checkout

Serves the dashboard (``panel serve app/page.py --setup app/warmup.py``, as ``privclust serve``),
drives Debian's chromium through every view, writes the screenshots to
``benchmarks/results/app/screenshots/`` and
the timings, with the machine load from ``uptime`` and the targets, to
``benchmarks/results/app/dashboard_tour.json`` and ``.md``. Figures are whatever this machine
measured at that moment (other work on the machine slows them); re-run to refresh them.
"""
import os
import sys
from pathlib import Path

from privclust.app.tour import main

ROOT = Path(__file__).resolve().parents[2]

if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main(["benchmarks/results/app/screenshots",
                   "--results", "benchmarks/results/app/dashboard_tour.json",
                   *sys.argv[1:]]))
