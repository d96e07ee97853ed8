"""Shared pytest fixtures for privclust."""

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

# The data owner view is an operator setting, off by default (see privclust.app.config.
# OWNER_VIEW). The app tests exercise it, so this test session (and the dashboard servers
# it starts, which inherit the environment) runs as an owner's own server; the red-team test
# tests/redteam/test_attack9_owner_view_switch.py checks the default with it unset.
os.environ.setdefault("PRIVCLUST_OWNER_VIEW", "1")

# Under pytest-xdist (README's test command runs two workers) each worker keeps its own ledger
# and release store: a subfolder of PRIVCLUST_STATE_DIR (or of a fresh temporary folder), so
# that no test sees budget spent by a test running at the same time in the other worker.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _state = Path(os.environ.get("PRIVCLUST_STATE_DIR") or tempfile.mkdtemp(prefix="privclust-"))
    os.environ["PRIVCLUST_STATE_DIR"] = str(_state / _WORKER)


def _start_rank(item) -> int:
    """0 for browser tests, 1 for slow or real-data tests, 2 for the rest."""
    if item.get_closest_marker("ui"):
        return 0
    if item.get_closest_marker("slow") or item.get_closest_marker("realdata"):
        return 1
    return 2


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (it names items by them)
def pytest_collection_modifyitems(config, items):
    """Files holding browser tests run first, then files holding slow tests, then the rest (each
    file's tests stay together and in order): with two xdist workers the longest tests start at
    once and the run ends on short ones, instead of one worker finishing a long browser test
    alone. The order is the same in every worker, as xdist requires.

    Browser tests run in two xdist groups of about equal length: the tests of the shared
    dashboard server (``server`` fixture) on one worker, those that start servers of their own
    (the class load, the served and JupyterLab notebooks) on the other. README's command runs
    them after the computing tests, never beside them: a browser test beside two computing
    workers on 2 cores missed its waits."""
    rank: dict[str, int] = {}
    for item in items:
        rank[item.path] = min(rank.get(item.path, 2), _start_rank(item))
        if item.get_closest_marker("ui"):
            own = "server" not in getattr(item, "fixturenames", ())
            item.add_marker(pytest.mark.xdist_group("browser-own" if own else "browser"))
    items.sort(key=lambda item: rank[item.path])  # stable: the order within a rank is kept


@pytest.fixture(scope="session", autouse=True)
def _compiled_gibbs_kernels():
    """Compile the optional numba Gibbs kernels once, before any test (and any dashboard server
    a test starts, which then loads them from numba's on-disk cache): the first sampling run of
    a test would otherwise pay several seconds of compilation inside its timeouts."""
    from privclust.core.subspace import _gibbs_fused

    _gibbs_fused.warm_up()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real-data folder named by PRIVCLUST_DATA_DIR.

    Skips the test when the variable is unset (a developer machine without the data); fails when it
    is set but wrong, and always fails under CI, where the data must be present.
    """
    value = os.environ.get("PRIVCLUST_DATA_DIR")
    if not value:
        if os.environ.get("CI"):
            pytest.fail("CI must set PRIVCLUST_DATA_DIR (see .ci/run)")
        pytest.skip("PRIVCLUST_DATA_DIR is not set")
    path = Path(value)
    if not path.is_dir():
        pytest.fail(f"PRIVCLUST_DATA_DIR={value!r} is not a directory")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so statistical tests are deterministic."""
    return np.random.default_rng(20261121)


class _SealedRecords:
    """Private records of a public shape: reading any value raises DataAccessError."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __array__(self, *args, **kwargs):
        from privclust.core.estimator import DataAccessError

        raise DataAccessError("the records were read")

    def __getitem__(self, item):
        from privclust.core.estimator import DataAccessError

        raise DataAccessError("the records were read")


@pytest.fixture(scope="session")
def sealed():
    """Factory: ``sealed(shape)`` stands for private records whose shape is public and whose
    values must not be read yet, to specify that an estimator checks its parameters and charges
    its ledger before it reads the data (any read raises DataAccessError)."""
    return _SealedRecords


@pytest.fixture(scope="session")
def union_of_subspaces():
    """Factory of the subspace-clustering test data: ``union_of_subspaces(n, d, k, q, noise=0.0,
    seed=0)`` is a fresh :class:`~privclust.core.data.Dataset` of n points on k random
    q-dimensional linear subspaces of R^d, clipped to the unit ball (the data model of Wang, Wang
    & Singh, NIPS 2015, Sec. 2), with ``labels`` and ``truth["subspaces"]`` (k, d, q)."""
    from privclust.core.data import make_union_of_subspaces

    def make(n, d, k, q, noise=0.0, seed=0):
        return make_union_of_subspaces(n, d, k, q, noise=noise, random_state=seed)

    return make


def _read_only(dataset):
    dataset.X.setflags(write=False)  # shared by the whole session: a fit must not write to X
    return dataset


@pytest.fixture(scope="session")
def two_planes(union_of_subspaces):
    """300 points near 2 planes in R^6 (noise 0.05): the small case of the private subspace
    estimators' protocol, accounting and ledger tests. Read-only."""
    return _read_only(union_of_subspaces(300, 6, 2, 2, noise=0.05, seed=0))


@pytest.fixture(scope="session")
def two_lines(union_of_subspaces):
    """1000 points near 2 lines in R^4 (noise 0.01): an easy case for sample-and-aggregate,
    where 1000 points give enough disjoint blocks for a useful aggregate. Read-only."""
    return _read_only(union_of_subspaces(1000, 4, 2, 1, noise=0.01, seed=2))


# Playwright's assertions (expect(...).to_be_visible() and the like) wait 5 s by default: on this
# project's busy 2-core machine a server's answer can take longer, and such tests failed with
# nothing wrong. The limit only catches a page that never gets there; what is asserted is
# unchanged.
EXPECT_TIMEOUT_MS = 30_000
try:
    from playwright.sync_api import expect as _expect
except ImportError:  # the browser tests are skipped without Playwright
    pass
else:
    _expect.set_options(timeout=EXPECT_TIMEOUT_MS)


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright launches Debian's chromium (never a downloaded browser).

    Every browser test goes through pytest-playwright's fixtures: a second ``sync_playwright()``
    inside the same session fails ("Sync API inside the asyncio loop"). Under CI a missing chromium
    fails loudly instead of skipping.
    """
    path = (
        os.environ.get("CHROMIUM_PATH")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is not installed: CI must install Debian's chromium "
                "(apt-get install chromium); the ui tests may not skip in CI"
            )
        pytest.skip("chromium not installed (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": path, "args": CHROMIUM_ARGS}


@pytest.fixture
def ledger_env(tmp_path, monkeypatch):
    """A fresh ledger folder and a total budget of epsilon 3 for the dashboard's sessions."""
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")
