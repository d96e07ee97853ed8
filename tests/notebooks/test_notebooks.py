"""The teaching notebooks (issue 8): stored stripped and in sync with their generator, and each one
runs top to bottom in a fresh kernel and shows its widgets and plots (not an empty run).

The execution test runs every notebook with nbclient (what nbmake uses) in the notebooks/ folder,
fails on any cell error, and then looks inside the output mime bundles for the Bokeh/Panel models
of the widgets and plots the notebook is meant to show.
"""
import importlib.util
import json
import re
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))
PANEL_MIME = "application/vnd.holoviews_exec.v0+json"

# Bokeh/Panel model names that must appear in each executed notebook's outputs, and the least
# number of output cells that carry a Panel/HoloViews bundle.
SLIDER, FIGURE = "Slider", "Figure"
BUTTON, PROGRESS = "panel.models.widgets.Button", "panel.models.widgets.Progress"
EXPECTED = {
    "00_introduction": ({SLIDER, FIGURE, BUTTON, PROGRESS}, 8),
    "01_subspace_clustering": ({SLIDER, FIGURE, BUTTON, PROGRESS}, 6),
    "02_compressive_kmeans": ({SLIDER, FIGURE}, 5),
    "03_small_cluster": ({SLIDER, FIGURE}, 5),
    "04_coclustering": ({SLIDER, FIGURE}, 4),
}
MODEL_NAME = re.compile(r'\\*"name\\*":\\*"([\w.]+)\\*"')


def _ids(paths):
    return [p.stem for p in paths]


def _generator():
    spec = importlib.util.spec_from_file_location("make_notebooks", NB_DIR / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_notebooks_exist_and_are_listed():
    assert NOTEBOOKS, "no notebooks found"
    assert NOTEBOOKS[0].stem == "00_introduction"
    readme = (NB_DIR / "README.md").read_text()
    for path in NOTEBOOKS:
        assert path.stem in EXPECTED, f"{path.name}: add its expected widgets to this test"
        assert path.name in readme, f"notebooks/README.md does not list {path.name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_stored_stripped_and_generated(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, \
                f"{path.name}: outputs must be stripped (regenerate with make_notebooks.py)"
    built = _generator().build(path.stem, _generator().NOTEBOOKS[path.stem]())
    assert [(c.cell_type, c.source) for c in built.cells] == \
        [(c.cell_type, c.source) for c in nb.cells], \
        f"{path.name} differs from notebooks/make_notebooks.py: run it and commit both"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_teaching_structure(path):
    """An explanation before each step, the paper cited, a marked paper-size switch, no
    matplotlib, and Panel widgets created by the code."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ")
    for prev, cell in zip(cells, cells[1:]):
        if cell.cell_type == "code":
            assert prev.cell_type == "markdown", \
                f"{path.name}: code cell {cell.id} has no explanation before it"
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    # `panel serve` pastes markdown cells into a Python string literal: backslashes are mangled
    # and the resulting TeX breaks the whole served page in MathJax
    assert "\\" not in text and "$" not in text, f"{path.name}: no backslashes/TeX in markdown"
    assert re.search(r"\b(19|20)\d\d\b", text), f"{path.name}: cite the paper (authors, year)"
    source = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "PAPER_SIZES = False" in source and "# SIZES." in source
    assert "matplotlib" not in source
    assert "pn.widgets." in source or "privclust.app" in source
    assert "pn.extension(" in source


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
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NB_DIR)}}).execute()
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, errors
    names, bundles = _model_names(nb)
    expected, min_bundles = EXPECTED[path.stem]
    assert expected <= names, f"{path.name}: missing {sorted(expected - names)} in the outputs"
    assert bundles >= min_bundles, f"{path.name}: only {bundles} cells show Panel/HoloViews output"
    print(f"{path.name}: executed in {elapsed:.1f} s, {bundles} widget/plot outputs")
