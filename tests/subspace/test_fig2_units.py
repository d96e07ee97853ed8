"""The subspace Fig. 2 script (benchmarks/subspace/fig2.py) runs a column's Gibbs starts as
independent units: in two processes they give the rows of one, and a checkpoint file keeps every
finished unit for a rerun."""

import importlib
import sys
import warnings
from pathlib import Path

import pytest

SUBSPACE_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "subspace"


@pytest.fixture
def fig2(monkeypatch):
    monkeypatch.syspath_prepend(str(SUBSPACE_BENCH))
    sys.modules.pop("fig2", None)
    yield importlib.import_module("fig2")
    sys.modules.pop("fig2", None)


def _run(fig2, workers, checkpoint=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fig2.run_column(2, [1.0, 100.0], 2, 30, lambda msg: None, checkpoint, workers)[1]


def test_gibbs_units_in_two_processes_give_the_rows_of_one(fig2):
    one, two = _run(fig2, 1), _run(fig2, 2)
    assert len(one) == len(two) > 0
    assert [r[:3] for r in one] == [r[:3] for r in two]
    values = [v for r in one for v in r[3:]]
    assert values == pytest.approx([v for r in two for v in r[3:]], rel=1e-9)
    assert {r[0] for r in one} >= {"exp.+random", "exp.+SSC (non-private init)"}


def test_a_rerun_reads_every_finished_unit_from_the_checkpoint(fig2, tmp_path, monkeypatch):
    path = tmp_path / "column2.partial.csv"
    first = _run(fig2, 2, fig2.Checkpoint(path))
    monkeypatch.setattr(fig2, "gibbs_unit", lambda *a: pytest.fail("a finished unit ran again"))
    again = _run(fig2, 2, fig2.Checkpoint(path))
    assert [r[:3] for r in again] == [r[:3] for r in first]
    assert len(fig2.Checkpoint(path).done) == 2 + 3 * 2  # 2 s.a. trials, 3 inits x 2 epsilons
