"""Shared pytest fixtures for privclust."""
import os
from pathlib import Path

import numpy as np
import pytest


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
