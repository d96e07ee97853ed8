"""One command per seed figure: run the existing benchmark scripts with the papers' settings.

    python benchmarks/reproduce.py <paper> <figure> [--quick] [--fresh] [--report] [--steps LABEL ...]
                                   [--workers N] [--list]

    papers and figures:
      subspace   fig2 fig3    Wang, Wang & Singh (NIPS 2015), Figs. 2 and 3
      sketch     fig1 fig3    Schellekens et al. (SPARS 2019), Figs. 1 and 3
      onecluster utility grid Nissim, Stemmer & Vadhan (PODS 2016): no figure in the paper; our
                              utility measurement and epsilon grid
      cocluster  fig2 fig3    Battaglia & Pensa (SDM 2025), Figs. 2 and 3

The figure is split into steps (one invocation of an existing script each). A progress bar runs
over the steps; each finished step is recorded with its wall time in
``benchmarks/results/reproduce/<paper>_<figure>_<mode>/state.json`` and its output files are
copied there, so an interrupted run resumes at the first unfinished step (``--fresh`` starts
over; ``--report`` writes the report from the steps finished so far; ``--steps`` runs only the
named steps, in the order given). Inside a step,
``cocluster/fig2_competitors.py``, ``subspace/fig2.py`` (by unit) and ``sketch/figures.py`` (by
dataset) also resume from their partial rows; ``onecluster/grid.py``
keeps its partial rows but restarts. At the end the driver writes, in that folder, the
CSV and PNG of the figure and ``report.md``: the settings, the time of every step and a table
with the paper's numbers or statements beside ours.

``--quick`` runs each script's reduced setting (minutes); without it, the paper's setting
(``subspace fig2`` then takes hours on a 2-core machine).
"""

import argparse
import csv
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclass
class Step:
    """One invocation: ``script`` (relative to benchmarks/) with ``paper`` or ``quick`` args;
    ``outputs``: files it writes under benchmarks/results (``{mode}`` is the script's mode);
    ``parallel``: the script takes ``--workers N`` (independent units run in N processes)."""

    label: str
    script: str
    paper: list
    quick: list
    outputs: list = field(default_factory=list)
    parallel: bool = False


@dataclass
class Figure:
    title: str
    steps: list
    compare: object  # compare(folder, quick) -> (markdown lines, csv name, png name)


def _module(relpath):
    """Import a benchmark script as a module (its functions are reused, not copied)."""
    path = HERE / relpath
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem + "_reuse", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(header, rows):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(str(c) for c in r) + " |" for r in rows
    ]


def _md_table_to_csv(md_path, csv_path):
    """The first markdown table of ``md_path`` as a CSV (for scripts that write JSON + md)."""
    rows = [
        line.strip().strip("|").split("|")
        for line in Path(md_path).read_text().splitlines()
        if line.startswith("|") and not set(line) <= set("|-: ")
    ]
    with open(csv_path, "w", newline="") as fh:
        csv.writer(fh).writerows([c.strip() for c in r] for r in rows)


# ---- paper vs ours, per figure ----------------------------------------------------------------
def compare_cocluster_fig2(folder, quick):
    mod = _module("cocluster/fig2_competitors.py")
    rows = mod.read_rows()
    out = []
    for name in mod.DATASETS:
        for method in (mod.TAUCC_EVAL, mod.TAUCC_DP, mod.KMEANS_NAME, mod.DPHD, mod.NMF):
            v = mod._at_one(rows, name, method)
            paper = mod.PAPER[name].get(method, "not reported")
            ours = (
                f"{v.mean():.3f} (median {np.median(v):.3f}, {len(v)} runs)"
                if len(v)
                else "not run"
            )
            out.append((name, method, paper, ours))
    return (
        _table(["dataset", "method", "paper NMI at eps = 1", "ours at eps = 1"], out)
        + ["", "Every epsilon: `fig2_competitors.md`."],
        "fig2_competitors.csv",
        "competitors_fig2.png",
    )


def compare_cocluster_fig3(folder, quick):
    with open(folder / "fig3_tau.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for name in sorted({r["dataset"] for r in rows}):
        for eps in sorted({float(r["epsilon"]) for r in rows}):
            means = {}
            for r in rows:
                if r["dataset"] == name and float(r["epsilon"]) == eps:
                    means.setdefault(int(r["n_iter"]), []).append(float(r["tau_rows"]))
            best = max(means, key=lambda i: np.mean(means[i]))
            out.append(
                (name, eps, "good trade-offs for 3 <= I <= 5", best, f"{np.mean(means[best]):.3f}")
            )
    return (
        _table(["dataset", "eps", "paper (Sec. 5)", "our best I", "its mean tau_R|C"], out),
        "fig3_tau.csv",
        "fig3_classic3.png",
    )


def compare_subspace_fig2(folder, quick):
    mod = _module("subspace/fig2.py")
    mode = "quick" if quick else "full"
    rows, partial = [], []
    for part in sorted(p for p in folder.glob("column_*") if p.is_dir()):
        rows += [(int(r[0]),) + tuple(r[1:]) for r in mod.read_rows(part / f"fig2_{mode}.csv")]
    finished = {r[0] for r in rows}
    for col in (1, 2, 3):  # an unfinished column: the units it has finished
        src = RESULTS / "subspace" / f"fig2_{mode}_column{col}.partial.csv"
        if col in finished or not src.exists():
            continue
        shutil.copy2(src, folder / src.name)
        units = mod.Checkpoint(src).done
        rows += [(col,) + tuple(r) for u in units.values() for r in u]
        partial.append(
            f"column {col}: {len(units)} units finished ("
            + ", ".join(units)
            + "), rows in `"
            + src.name
            + "`"
        )
    merged = folder / f"fig2_{mode}.csv"
    with open(merged, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["column", "method", "epsilon", "trial", "cost", "wasserstein"])
        w.writerows(rows)
    results, tables = [], []
    for col in sorted({r[0] for r in rows}):
        methods, eps_vals, table = mod.summarise([r[1:] for r in rows if r[0] == col])
        results.append((f"column {col}", methods, eps_vals, table))
        tables += mod.markdown(f"Column {col}", methods, eps_vals, table)
    if results:
        mod.plot(results, folder / f"fig2_{mode}.png")
    unfinished = sorted({r[0] for r in rows} - finished)
    try:  # a statement on an unfinished column reads its units finished so far, and says so
        claims = [line[2:].split(":", 1) for line in mod.headline(rows) if line.startswith("- (")]
    except (TypeError, ValueError):  # too few methods finished for a statement
        claims = [("(the paper's statements)", "not enough finished rows yet")]
    claims = [
        (
            c[0],
            (c[1] if len(c) > 1 else "")
            + "".join(
                f" (column {col} unfinished: from its units finished so far)"
                for col in unfinished
                if f"column {col}" in c[0] or (col == 3 and "Yale" in c[0])
            ),
        )
        for c in claims
    ]
    note = (
        [
            "**Unfinished columns, rows so far** (included in the tables and the plot): "
            + "; ".join(partial)
            + ".",
            "",
        ]
        if partial
        else []
    )
    return (
        note
        + _table(
            ["paper's statement (WWS15 Sec. 5)", "this run"],
            [(c[0], c[1].strip()) for c in claims],
        )
        + [""]
        + tables,
        merged.name,
        f"fig2_{mode}.png" if results else None,
    )


def compare_subspace_fig3(folder, quick):
    mode = "quick" if quick else "full"
    with open(folder / f"fig3_{mode}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for eps in sorted({float(r["epsilon"]) for r in rows}):
        sub = [r for r in rows if float(r["epsilon"]) == eps]
        last = max(int(r["iteration"]) for r in sub)
        fin = [r for r in sub if int(r["iteration"]) == last]
        out.append(
            (
                eps,
                "test statistic small after 10^4 iterations (mixing)",
                last,
                f"{np.mean([float(r['test_statistic']) for r in fin]):.4f}",
                f"{np.median([float(r['wasserstein']) for r in fin]):.3f}",
            )
        )
    return (
        _table(
            [
                "eps",
                "paper (WWS15 Fig. 3)",
                "iterations",
                "our mean final test stat",
                "median final d_W",
            ],
            out,
        ),
        f"fig3_{mode}.csv",
        f"fig3_{mode}.png",
    )


def _compare_sketch(fig):
    def compare(folder, quick):
        stem = f"{fig}_{'quick' if quick else 'paper'}"
        _md_table_to_csv(folder / f"{stem}.md", folder / f"{stem}.csv")
        note = (
            "SCH19 Fig. 1: relative SSE of DP CKM near 1 (non-private level) once eps is "
            "large enough, below DPLloyd; quantisation and r = 1 cost little at n = 1e7"
            if fig == "fig1"
            else "SCH19 Fig. 3: relative SSE is a function of the SNR of the noisy sketch"
        )
        return (
            [
                f"Paper: {note} (read from its plot; no numbers printed).",
                "",
                "Ours (median relative SSE; the script's table):",
                "",
            ]
            + (folder / f"{stem}.md").read_text().splitlines(),
            f"{stem}.csv",
            f"{stem}.png",
        )

    return compare


def _compare_onecluster(stem, csv_name, png):
    def compare(folder, quick):
        return (
            [
                "NSV16 has no experimental figure: its guarantees are asymptotic (a ball of "
                "radius O(sqrt(log n)) r_opt holding the cluster). Ours:",
                "",
            ]
            + (folder / stem).read_text().splitlines(),
            csv_name,
            png,
        )

    return compare


FIGURES = {
    ("subspace", "fig2"): Figure(
        "WWS15 Fig. 2: k-means cost and Wasserstein distance vs epsilon",
        [
            Step(
                f"column {c}",
                "subspace/fig2.py",
                ["--columns", str(c)],
                ["--quick", "--columns", str(c)],
                ["subspace/fig2_{mode}.csv", "subspace/fig2_{mode}.md"],
                parallel=True,
            )
            for c in (1, 2, 3)
        ],
        compare_subspace_fig2,
    ),
    ("subspace", "fig3"): Figure(
        "WWS15 Fig. 3: Gibbs mixing (8 chains)",
        [
            Step(
                "8 chains",
                "subspace/fig3.py",
                [],
                ["--quick"],
                ["subspace/fig3_{mode}.csv", "subspace/fig3_{mode}.md", "subspace/fig3_{mode}.png"],
            )
        ],
        compare_subspace_fig3,
    ),
    ("sketch", "fig1"): Figure(
        "SCH19 Fig. 1: relative SSE vs epsilon",
        [
            Step(
                "fig1",
                "sketch/figures.py",
                ["fig1", "--paper"],
                ["fig1", "--quick"],
                ["sketch/fig1_{mode}.json", "sketch/fig1_{mode}.md", "sketch/fig1_{mode}.png"],
                parallel=True,
            )
        ],
        _compare_sketch("fig1"),
    ),
    ("sketch", "fig3"): Figure(
        "SCH19 Fig. 3: relative SSE vs SNR",
        [
            Step(
                "fig3",
                "sketch/figures.py",
                ["fig3", "--paper"],
                ["fig3", "--quick"],
                ["sketch/fig3_{mode}.json", "sketch/fig3_{mode}.md", "sketch/fig3_{mode}.png"],
                parallel=True,
            )
        ],
        _compare_sketch("fig3"),
    ),
    ("onecluster", "utility"): Figure(
        "NSV16 1-cluster: utility on 100 seeds",
        [
            Step(
                "utility",
                "onecluster/utility_100.py",
                ["100"],
                ["10"],
                ["onecluster/utility_100.csv", "onecluster/utility_100.md"],
            )
        ],
        _compare_onecluster("utility_100.md", "utility_100.csv", None),
    ),
    ("onecluster", "grid"): Figure(
        "NSV16 1-cluster: radius ratio, coverage and time vs epsilon",
        [
            Step(
                "grid",
                "onecluster/grid.py",
                ["20"],
                ["3", "1000", "2"],
                ["onecluster/grid_raw.csv", "onecluster/grid_summary.md", "onecluster/grid.png"],
            )
        ],
        _compare_onecluster("grid_summary.md", "grid_raw.csv", "grid.png"),
    ),
    ("cocluster", "fig2"): Figure(
        "BP25 Fig. 2: NMI vs epsilon with DP-KMeans, DPHD, DPNMF",
        [
            Step(
                "fig2",
                "cocluster/fig2_competitors.py",
                ["--runs", "10"],
                ["--runs", "2", "--quick"],
                [
                    "cocluster/fig2_competitors.csv",
                    "cocluster/fig2_competitors.md",
                    "cocluster/competitors_fig2.png",
                ],
            )
        ],
        compare_cocluster_fig2,
    ),
    ("cocluster", "fig3"): Figure(
        "BP25 Fig. 3: tau_R|C of the released table vs iterations",
        [
            Step(
                "fig3",
                "cocluster/fig3_tau_vs_iterations.py",
                ["10"],
                ["2"],
                [
                    "cocluster/fig3_tau.csv",
                    "cocluster/fig3_summary.md",
                    "cocluster/fig3_classic3.png",
                    "cocluster/fig3_cstr.png",
                ],
            )
        ],
        compare_cocluster_fig3,
    ),
}
_MODES = {"sketch": ("paper", "quick"), "subspace": ("full", "quick")}


def _slug(label):
    return label.replace(" ", "_")


def run(paper, figure, quick=False, fresh=False, report_only=False, only=None, workers=1):
    from tqdm import tqdm

    fig = FIGURES[paper, figure]
    labels = [s.label for s in fig.steps]
    unknown = sorted(set(only or ()) - set(labels))
    if unknown:
        raise ValueError(f"steps must be among {labels}; got {unknown}")
    todo = [next(s for s in fig.steps if s.label == lab) for lab in only] if only else fig.steps
    mode = _MODES.get(paper, ("paper", "quick"))[quick]
    folder = RESULTS / "reproduce" / f"{paper}_{figure}_{'quick' if quick else 'paper'}"
    if fresh and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state_path = folder / "state.json"
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    bar = tqdm([] if report_only else todo, desc=f"{paper} {figure}", unit="step")
    for step in bar:
        if step.label in state:
            continue
        bar.set_postfix_str(step.label)
        args = (step.quick if quick else step.paper) + (
            ["--workers", str(workers)] if step.parallel and workers > 1 else []
        )
        cmd = [sys.executable, str(HERE / step.script)] + args
        outputs = [RESULTS / out.format(mode=mode) for out in step.outputs]
        # a quick run must not overwrite (or, for resumable scripts, extend) the committed
        # paper-setting results of scripts that use one file name for both
        kept = {src: src.with_name(src.name + ".kept") for src in outputs if src.exists()}
        if quick:
            for src, backup in kept.items():
                src.rename(backup)
        t = time.perf_counter()
        try:
            with open(folder / f"{_slug(step.label)}.log", "w") as log:
                subprocess.run(
                    cmd,
                    cwd=HERE / Path(step.script).parent,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=True,
                )
            seconds = time.perf_counter() - t
            target = folder / _slug(step.label) if len(fig.steps) > 1 else folder
            target.mkdir(exist_ok=True)
            for src in outputs:
                if src.exists():
                    shutil.copy2(src, target / src.name)
        finally:
            if quick:
                for src, backup in kept.items():
                    backup.replace(src)
        state[step.label] = {
            "seconds": round(seconds, 1),
            "command": " ".join(["python", f"benchmarks/{step.script}"] + args),
        }
        state_path.write_text(json.dumps(state, indent=1))
    lines, csv_name, png = fig.compare(folder, quick)
    total = sum(s["seconds"] for s in state.values())
    report = [
        f"# {fig.title} ({'quick' if quick else 'paper'} setting)",
        "",
        f"Command: `python benchmarks/reproduce.py {paper} {figure}"
        f"{' --quick' if quick else ''}`; total {total:.0f} s wall on a shared 2-core "
        "machine (a step whose script resumed from its own partial results records only the "
        "time of the resumed part).",
        "",
        "| step | command | wall s |",
        "|---|---|---|",
    ]
    report += [f"| {k} | `{v['command']}` | {v['seconds']} |" for k, v in state.items()]
    missing = [s.label for s in fig.steps if s.label not in state]
    if missing:
        report += [
            "",
            f"**Partial**: not finished yet: {', '.join(missing)} (rerun the command "
            "to resume); the tables below cover the finished steps only.",
        ]
    files = sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.suffix in (".csv", ".png")
    )
    report += [
        "",
        "Files here: " + ", ".join(f"`{f}`" for f in files) + f"; main table "
        f"`{csv_name}`" + (f", plot `{png}`" if png else "") + ".",
        "",
        "## Paper vs ours",
        "",
    ] + lines
    (folder / "report.md").write_text("\n".join(report) + "\n")
    print(f"wrote {folder / 'report.md'} ({total:.0f} s)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paper", nargs="?", choices=sorted({k[0] for k in FIGURES}))
    p.add_argument("figure", nargs="?")
    p.add_argument("--quick", action="store_true", help="each script's reduced setting")
    p.add_argument("--fresh", action="store_true", help="discard finished steps")
    p.add_argument("--list", action="store_true", help="list the figures and exit")
    p.add_argument(
        "--report", action="store_true", help="only write report.md from the steps finished so far"
    )
    p.add_argument(
        "--steps",
        nargs="+",
        metavar="LABEL",
        help="run only these steps, in this order (e.g. --steps 'column 2' "
        "'column 3'); the report still covers every finished step",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes for the independent units of steps that have them "
        "(subspace fig2's Gibbs units); one core each",
    )
    a = p.parse_args()
    if a.workers < 1:
        p.error(f"--workers must be at least 1; got {a.workers}")
    if a.list or a.paper is None:
        for (paper, figure), fig in FIGURES.items():
            print(f"{paper:11s}{figure:9s}{fig.title}")
        return
    if (a.paper, a.figure) not in FIGURES:
        p.error(
            f"unknown figure {a.figure!r} for {a.paper}; "
            f"choose from {[f for (q, f) in FIGURES if q == a.paper]}"
        )
    run(a.paper, a.figure, a.quick, a.fresh, a.report, a.steps, a.workers)


if __name__ == "__main__":
    main()
