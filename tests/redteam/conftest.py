"""Fixtures shared by the red-team tests that drive the dashboard's session models."""

import io

import numpy as np
import pytest


@pytest.fixture
def csv_bytes():
    """``csv_bytes(X)``: X as the bytes of an uploaded CSV with a header row."""

    def encode(X):
        buf = io.StringIO()
        np.savetxt(
            buf, X, delimiter=",", header=",".join(f"x{j}" for j in range(X.shape[1])), comments=""
        )
        return buf.getvalue().encode()

    return encode
