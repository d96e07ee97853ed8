"""The SPARS 2019 figure script (benchmarks/sketch/figures.py) runs its datasets as resumable,
independent units: an interrupted run resumes at its first unfinished trial and ends with the
same rows as an uninterrupted one, in one process or two."""

import importlib
import json
import sys
from pathlib import Path

import pytest

SKETCH_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "sketch"


@pytest.fixture
def figures(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(SKETCH_BENCH))
    for name in ("figures", "_common"):
        sys.modules.pop(name, None)
    module = importlib.import_module("figures")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    monkeypatch.setattr(sys.modules["_common"], "RESULTS", tmp_path)
    yield module
    for name in ("figures", "_common"):
        sys.modules.pop(name, None)


def _cfg(figures, trials):
    return dict(figures.CONFIGS["smoke"], trials=trials)


def test_an_interrupted_run_resumes_at_its_first_unfinished_trial(figures, tmp_path, monkeypatch):
    figures.run_trials("fig1", "smoke", _cfg(figures, 2))
    whole = json.loads((tmp_path / "fig1_smoke.json").read_text())["rows"]
    assert {r["trial"] for r in whole} == {0, 1}
    assert not (tmp_path / "fig1_smoke.partial.jsonl").exists()

    real, calls = figures.fig1_trial, []

    def interrupted(cfg, trial):
        calls.append(trial)
        if trial == 1 and calls.count(1) == 1:
            raise KeyboardInterrupt  # the run stops during its second trial
        return real(cfg, trial)

    monkeypatch.setattr(figures, "fig1_trial", interrupted)
    with pytest.raises(KeyboardInterrupt):
        figures.run_trials("fig1", "smoke", _cfg(figures, 2))
    partial = json.loads((tmp_path / "fig1_smoke.json").read_text())
    assert partial["trials_finished"] == 1
    assert "1 of 2 (unfinished)" in (tmp_path / "fig1_smoke.md").read_text()
    assert (tmp_path / "fig1_smoke.partial.jsonl").exists()

    figures.run_trials("fig1", "smoke", _cfg(figures, 2))
    assert calls == [0, 1, 1]  # trial 0 was not computed again
    assert json.loads((tmp_path / "fig1_smoke.json").read_text())["rows"] == whole
    assert not (tmp_path / "fig1_smoke.partial.jsonl").exists()


def test_trials_in_two_processes_give_the_rows_of_one(figures, tmp_path):
    figures.run_trials("fig1", "smoke", _cfg(figures, 2), workers=1)
    one = json.loads((tmp_path / "fig1_smoke.json").read_text())
    figures.run_trials("fig1", "smoke", _cfg(figures, 2), workers=2)
    two = json.loads((tmp_path / "fig1_smoke.json").read_text())
    assert one["trials_finished"] == two["trials_finished"] == 2
    assert one["rows"] == two["rows"]


def test_fig3_draws_one_dataset_fewer_than_its_trials(figures, tmp_path):
    figures.run_trials("fig3", "smoke", _cfg(figures, 2))
    out = json.loads((tmp_path / "fig3_smoke.json").read_text())
    assert out["trials_finished"] == 1 and {r["trial"] for r in out["left"]} == {0}
    assert out["right"] and "n = 5e+03, 1 trial(s)" in (tmp_path / "fig3_smoke.md").read_text()


def test_partial_trials_of_other_settings_are_refused(figures, tmp_path):
    cfg = _cfg(figures, 1)
    (tmp_path / "fig1_smoke.partial.jsonl").write_text(json.dumps(dict(cfg, n=10)) + "\n")
    with pytest.raises(SystemExit, match="other settings"):
        figures.run_trials("fig1", "smoke", cfg)
