"""The distribution ships the privclust package (core, app) without tests or benchmarks, and the
console command works."""

import ast
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI_STACK = {"panel", "holoviews", "bokeh", "hvplot", "param"}


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _built_wheel(tmp_path: Path) -> zipfile.ZipFile:
    """A wheel built from a clean copy of the sources (no stale build/ folder)."""
    src = tmp_path / "src"
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        src.mkdir(exist_ok=True)
        shutil.copy(ROOT / name, src / name)
    for folder in _pyproject()["tool"]["setuptools"]["package-dir"].values():
        shutil.copytree(
            ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("privclust-*.whl")
    return zipfile.ZipFile(wheel)


def test_wheel_ships_every_package_folder(tmp_path):
    """Every folder with an __init__.py under core/, app/ and assets/ is in the wheel (subpackages
    are discovered, not listed), with the licence, and nothing from tests/ or benchmarks/."""
    names = set(_built_wheel(tmp_path).namelist())
    for name, folder in _pyproject()["tool"]["setuptools"]["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.relative_to(ROOT / folder).as_posix()
            member = f"{name.replace('.', '/')}/{rel}"
            assert member in names, f"{member} ({init}) is missing from the wheel"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.split("/")[0] in {"tests", "benchmarks", "notebooks"}]


def _absolute(module: str, level: int, path: Path) -> str:
    """The dotted name an import in ``core/<path>`` refers to (relative imports resolved)."""
    if level == 0:
        return module
    parts = ["privclust", "core", *path.relative_to(ROOT / "core").parent.parts]
    return ".".join([*parts[: len(parts) - level + 1], *([module] if module else [])])


def test_core_never_imports_the_ui_stack_or_the_app():
    """The import boundary of the design: core never imports panel/holoviews/bokeh/param (nor
    hvplot) or privclust.app, even inside a function; app -> core only."""
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module or "", node.level, path)
                names = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            offenders += [
                f"{path.relative_to(ROOT)}: {n}"
                for n in names
                if n.split(".")[0] in UI_STACK or n.startswith("privclust.app")
            ]
    assert not offenders, "core/ must not import the UI stack or the app: " + ", ".join(offenders)


BASE = {"privacy", "data", "metrics", "constraints", "exceptions", "_threads", "_npy_headers"}
FAMILIES = {"subspace", "sketch", "onecluster", "cocluster", "bounds"}


def _imported(nodes, path: Path) -> list[str]:
    """The dotted names the import statements among ``nodes`` (of ``core/<path>``) refer to."""
    names = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, path)
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def _area(name: str) -> str | None:
    """``privclust.core.<area>...`` -> area (a subpackage or a top-level module of core)."""
    parts = name.split(".")
    return parts[2] if parts[:2] == ["privclust", "core"] and len(parts) > 2 else None


def test_core_layers_import_downwards():
    """Inside core, privacy, data and metrics are the base: a base module imports no family, no
    estimator base, release pipeline or experiment when it is imported. A family (and the
    bounds estimators) imports only the base, the estimator base, the release pipeline and its
    own modules, never another family or the experiments."""
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        own = path.relative_to(ROOT / "core").parts[0].removesuffix(".py")
        tree = ast.parse(path.read_text(), filename=str(path))
        if own in BASE:
            names, allowed = _imported(tree.body, path), BASE  # at import time
        elif own in FAMILIES:
            names = _imported(ast.walk(tree), path)  # anywhere
            allowed = BASE | {"estimator", "release", own}
        else:
            continue
        offenders += [
            f"{path.relative_to(ROOT)}: {n}"
            for n in names
            if _area(n) is not None and _area(n) not in allowed
        ]
    assert not offenders, "core imports against the layers: " + ", ".join(offenders)


def test_core_uses_no_global_numpy_rng():
    pattern = (
        "np.random.seed(",
        "np.random.rand(",
        "np.random.randn(",
        "np.random.randint(",
        "np.random.choice(",
        "np.random.normal(",
        "np.random.laplace(",
        "np.random.uniform(",
        "np.random.shuffle(",
        "np.random.permutation(",
    )
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in (ROOT / "core").rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if any(s in line for s in pattern)
    ]
    assert not hits, "every draw must come from the estimator's Generator: " + ", ".join(hits)


def test_version_command():
    out = subprocess.run(
        [sys.executable, "-m", "privclust.app.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == f"privclust {_pyproject()['project']['version']}"


def test_serve_command_line_pins_origin():
    from privclust.app.cli import PAGE, serve_command

    cmd = serve_command("127.0.0.1", 5007, show=False, extra=[])
    assert cmd[1:5] == ["-m", "panel", "serve", str(PAGE)]
    assert "127.0.0.1:5007" in cmd and "localhost:5007" in cmd
    assert "--show" not in cmd
    custom = serve_command(
        "0.0.0.0", 80, show=True, extra=["--allow-websocket-origin", "example.org"]
    )
    assert custom.count("--allow-websocket-origin") == 1 and custom[-1] == "example.org"
    assert "--show" in custom


@pytest.mark.parametrize("argv", [["serve", "--port", "0"], ["serve", "--port", "x"]])
def test_serve_rejects_bad_port(argv):
    from privclust.app.cli import main

    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
