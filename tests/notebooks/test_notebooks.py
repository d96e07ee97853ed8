"""The teaching notebooks: each is a Jupytext percent-format script (``notebooks/NN_*.py``)
paired with a notebook (``notebooks/NN_*.ipynb``) stored without outputs; the pair is in sync,
the teaching structure holds, and each notebook runs top to bottom in a fresh kernel and shows
its widgets and plots (not an empty run).

The execution test runs every notebook with nbclient (what nbmake uses) in the notebooks/ folder,
fails on any cell error, and then looks inside the output mime bundles for the Bokeh/Panel models
of the widgets and plots the notebook is meant to show, and for any resource they would fetch from
another host (a plot displayed without ``pn.panel`` carries Panel stylesheets on cdn.holoviz.org
even with ``inline=True``: HoloViews renders it outside Panel's inline path).
"""

import itertools
import json
import re
import time
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))
SCRIPTS = sorted(NB_DIR.glob("[0-9][0-9]_*.py"))
PANEL_MIME = "application/vnd.holoviews_exec.v0+json"
LOAD_MIME = "application/vnd.holoviews_load.v0+json"  # the extension's JS bundle (code only)
# a URL a rendered output makes the browser fetch: a Bokeh model's url (stylesheets), or an
# HTML src/href attribute
REMOTE = re.compile(
    r'"url"\s*:\s*"(?:https?:)?//[^"]+|\b(?:src|href)\s*=\s*\\?["\'](?:https?:)?//[^"\'\\]+'
)
SYNC = "jupytext --sync notebooks/*.py"
STRIP = "jupyter nbconvert --clear-output --inplace notebooks/*.ipynb"

# Bokeh/Panel model names that must appear in each executed notebook's outputs, and the least
# number of output cells that carry a Panel/HoloViews bundle.
SLIDER, FIGURE = "Slider", "Figure"
BUTTON, PROGRESS = "panel.models.widgets.Button", "panel.models.widgets.Progress"
EXPECTED = {
    "00_introduction": ({SLIDER, FIGURE, BUTTON, PROGRESS}, 13),
    "01_subspace_clustering": ({SLIDER, FIGURE, BUTTON, PROGRESS}, 6),
    "02_compressive_kmeans": ({SLIDER, FIGURE}, 5),
    "03_small_cluster": ({SLIDER, FIGURE}, 5),
    "04_coclustering": ({SLIDER, FIGURE}, 4),
}
MODEL_NAME = re.compile(r'\\*"name\\*":\\*"([\w.]+)\\*"')

# The first code cell of every notebook starts with these imports, the extensions loaded inline
# (offline, no CDN) and the page settings of privclust.app.notebook (own axes per plot, canvas
# drawing, no request to another host).
SETUP = """\
import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn

# Bokeh, HoloViews and Panel load their JavaScript from this kernel, never from a CDN: the
# notebook works offline and tells no third party that someone is looking at private data.
hv.extension("bokeh", logo=False, inline=True)
pn.extension(throttled=True, inline=True)
from privclust.app.notebook import configure_page

configure_page()   # each plot on its own axes, drawn on a canvas; nothing fetched from elsewhere
"""
# The clearly marked cell switching between teaching sizes and the paper's sizes.
RULE = "# " + "=" * 86
SIZES_BANNER = (
    f"{RULE}\n"
    "# SIZES. Defaults keep this notebook under two minutes. For the paper's sizes set\n"
    "# PAPER_SIZES = True (much slower: minutes to hours), then run all cells again.\n"
    f"{RULE}\n"
    "PAPER_SIZES = False\n"
)


def _ids(paths):
    return [p.stem for p in paths]


def _cells(nb):
    return [(c.cell_type, c.source) for c in nb.cells]


def test_notebooks_exist_paired_and_listed():
    assert NOTEBOOKS, "no notebooks found"
    assert NOTEBOOKS[0].stem == "00_introduction"
    assert _ids(SCRIPTS) == _ids(NOTEBOOKS), (
        f"every notebook needs its percent-format .py and vice versa: run {SYNC}"
    )
    config = tomllib.loads((NB_DIR / "jupytext.toml").read_text())
    assert set(config["formats"].split(",")) == {"ipynb", "py:percent"}, (
        "notebooks/jupytext.toml must pair ipynb with py:percent"
    )
    readme = (NB_DIR / "README.md").read_text()
    for path in NOTEBOOKS:
        assert path.stem in EXPECTED, f"{path.name}: add its expected widgets to this test"
        assert path.name in readme, f"notebooks/README.md does not list {path.name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_stored_stripped_and_in_sync(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3", f"{path.name}: python3 kernel"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: cell {cell.id} has outputs: {STRIP}"
            )
    ids = [cell.id for cell in nb.cells]
    assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"
    script = jupytext.read(path.with_suffix(".py"))
    assert (
        script.metadata.get("jupytext", {}).get("text_representation", {}).get("format_name")
        == "percent"
    ), f"{path.stem}.py is not in the percent format"
    assert _cells(script) == _cells(nb), (
        f"{path.name} and {path.stem}.py differ: run {SYNC} and commit both"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_teaching_structure(path):
    """A title, an explanation before each step, the paper cited, the shared setup cell, a
    marked paper-size switch, no matplotlib, and Panel widgets created by the code."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ")
    for prev, cell in itertools.pairwise(cells):
        if cell.cell_type == "code":
            assert prev.cell_type == "markdown", (
                f"{path.name}: code cell {cell.id} has no explanation before it"
            )
    for cell in cells:
        assert cell.source.strip(), f"{path.name}: cell {cell.id} is empty"
        assert cell.source == cell.source.strip("\n"), (
            f"{path.name}: cell {cell.id} starts or ends with blank lines"
        )
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    # `panel serve` pastes markdown cells into a Python string literal: backslashes are mangled
    # and the resulting TeX breaks the whole served page in MathJax; write formulas in Unicode
    assert "\\" not in text and "$" not in text, f"{path.name}: no backslashes/TeX in markdown"
    assert re.search(r"\b(19|20)\d\d\b", text), f"{path.name}: cite the paper (authors, year)"
    code = [c.source for c in cells if c.cell_type == "code"]
    assert code[0].startswith(SETUP), f"{path.name}: the first code cell starts with the setup"
    assert sum(SIZES_BANNER in c for c in code) == 1, (
        f"{path.name}: exactly one marked SIZES cell with PAPER_SIZES = False"
    )
    source = "\n".join(code)
    assert "matplotlib" not in source
    assert "pn.widgets." in source or "privclust.app" in source
    assert "pn.extension(" in source


def _remote_resources(nb):
    """(cell id, URL) of every resource an output would load from another host. The bundles
    the extensions load (LOAD_MIME) are JavaScript code that mentions URLs it never fetches
    here (MathJax is loaded only for LaTeX, which the notebooks do not use)."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            data = out.get("data", {})
            if LOAD_MIME in data:
                continue
            for value in data.values():
                text = value if isinstance(value, str) else json.dumps(value)
                found += [(cell.id, m.group(0)) for m in REMOTE.finditer(text)]
    return found


def _model_names(nb):
    names, bundles = set(), 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        carried = False
        for out in cell.outputs:
            data = out.get("data", {})
            if PANEL_MIME in data:
                carried = True
            names.update(MODEL_NAME.findall(data.get("text/html", "")))
            names.update(MODEL_NAME.findall(json.dumps(data.get(PANEL_MIME, {}))))
        bundles += carried
    return names, bundles


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_executes_and_shows_widgets(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NB_DIR)}}
    ).execute()
    elapsed = time.perf_counter() - start
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, errors
    names, bundles = _model_names(nb)
    expected, min_bundles = EXPECTED[path.stem]
    assert expected <= names, f"{path.name}: missing {sorted(expected - names)} in the outputs"
    assert bundles >= min_bundles, f"{path.name}: only {bundles} cells show Panel/HoloViews output"
    remote = _remote_resources(nb)
    assert not remote, (
        f"{path.name}: outputs load resources from another host (display plots "
        f"with pn.panel(...)): {remote[:5]}"
    )
    print(f"{path.name}: executed in {elapsed:.1f} s, {bundles} widget/plot outputs")
