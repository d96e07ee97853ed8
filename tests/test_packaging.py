"""The distribution ships the privclust package (core, app) without tests or benchmarks, and the
console command works."""
import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI_STACK = {"panel", "holoviews", "bokeh", "hvplot"}


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed():
    """A sub-package missing from pyproject would be absent from a (non-editable) wheel."""
    setup = _pyproject()["tool"]["setuptools"]
    listed = set(setup["packages"])
    for name, folder in setup["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            dotted = ".".join((name, *rel.parts)) if rel.parts else name
            assert dotted in listed, f"{dotted} ({init.parent}) is not listed in pyproject.toml"


def test_core_never_imports_the_ui_stack():
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                          if n.split(".")[0] in UI_STACK]
    assert not offenders, "core/ must not import panel/holoviews/bokeh: " + ", ".join(offenders)


def test_core_uses_no_global_numpy_rng():
    pattern = ("np.random.seed(", "np.random.rand(", "np.random.randn(", "np.random.randint(",
               "np.random.choice(", "np.random.normal(", "np.random.laplace(",
               "np.random.uniform(", "np.random.shuffle(", "np.random.permutation(")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "core").rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if any(s in line for s in pattern)]
    assert not hits, "every draw must come from the estimator's Generator: " + ", ".join(hits)


def test_version_command():
    out = subprocess.run([sys.executable, "-m", "privclust.app.cli", "--version"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"privclust {_pyproject()['project']['version']}"


def test_serve_command_line_pins_origin():
    from privclust.app.cli import PAGE, serve_command

    cmd = serve_command("127.0.0.1", 5007, show=False, extra=[])
    assert cmd[1:5] == ["-m", "panel", "serve", str(PAGE)]
    assert "127.0.0.1:5007" in cmd and "localhost:5007" in cmd
    assert "--show" not in cmd
    custom = serve_command("0.0.0.0", 80, show=True,
                           extra=["--allow-websocket-origin", "example.org"])
    assert custom.count("--allow-websocket-origin") == 1 and custom[-1] == "example.org"
    assert "--show" in custom


@pytest.mark.parametrize("argv", [["serve", "--port", "0"], ["serve", "--port", "x"]])
def test_serve_rejects_bad_port(argv):
    from privclust.app.cli import main

    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
