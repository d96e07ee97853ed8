"""Red team, hygiene: GoodCenter's composition check must be a real check, made before any charge.

It was an ``assert`` after the earlier stages had been charged: ``python -O`` skipped it (the
per-axis stable histograms then ran over budget), and without -O it failed for a large epsilon
after budget was spent. Advanced composition: Dwork, Rothblum & Vadhan, FOCS 2010.
"""

import importlib
import subprocess
import sys

import numpy as np
import pytest

from privclust.core.privacy import BudgetAccountant

gc = importlib.import_module("privclust.core.onecluster.good_center")

TOO_LARGE = dict(epsilon=1000.0, delta=1e-6, d=10, axis_choice="stable_hist")


def test_good_center_budget_check_is_public_and_raises_value_error():
    with pytest.raises(ValueError, match="epsilon"):
        gc.check_good_center_budget(**TOO_LARGE)
    eps_a, delta_axes = gc.check_good_center_budget(1.0, 1e-6, 10, axis_choice="stable_hist")
    assert 0 < eps_a < 1.0 / 4 and delta_axes == pytest.approx(1e-6 / 4)
    for bad in (
        dict(epsilon=0.0),
        dict(epsilon=float("nan")),
        dict(delta=0.0),
        dict(delta=1.0),
        dict(d=0),
        dict(axis_choice="nope"),
    ):
        args = dict(epsilon=1.0, delta=1e-6, d=3, axis_choice="em") | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            gc.check_good_center_budget(**args)


def test_good_center_refuses_before_anything_is_charged():
    X = np.random.default_rng(0).random((50, 10))
    acc = BudgetAccountant(1000.0, 1e-6)
    with pytest.raises(ValueError, match="stable_hist"):
        gc.good_center(
            X,
            0.1,
            40,
            1000.0,
            1e-6,
            (0.0, 1.0),
            np.random.default_rng(1),
            acc,
            axis_choice="stable_hist",
        )
    assert len(acc.mechanisms) == 0


@pytest.mark.slow
def test_good_center_check_survives_python_O():
    """Under -O every ``assert`` is stripped; the check must still raise ValueError."""
    code = (
        "import numpy as np\n"
        "from privclust.core.privacy import BudgetAccountant\n"
        "from privclust.core.onecluster import good_center as gc\n"
        "assert False, 'asserts are live: not running under -O'\n"
        "acc = BudgetAccountant(1000.0, 1e-6)\n"
        "try:\n"
        "    gc.good_center(np.random.default_rng(0).random((50, 10)), 0.1, 40, 1000.0, 1e-6,\n"
        "                   (0.0, 1.0), np.random.default_rng(1), acc, axis_choice='stable_hist')\n"
        "except ValueError:\n"
        "    print('refused', len(acc.mechanisms))\n"
        "else:\n"
        "    print('ran', len(acc.mechanisms))\n"
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["refused", "0"]
