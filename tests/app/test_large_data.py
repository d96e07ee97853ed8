"""The operator's large data sets without a browser: ``privclust serve --dataset NAME=PATH
--box LO,HI`` registers the shards before the server starts (a bad value stops it, naming the
file, row and column); the page's models list the data set as private, never show its values,
release on it through the Curator and report the partitions done."""

import numpy as np
import pytest

import privclust.app.cli as cli
from privclust.core.data.dask_registry import REGISTRY_SETTING

pytest.importorskip("dask.distributed")


def _shards(folder, n_shards=3, rows=400, seed=0):
    folder.mkdir()
    rng = np.random.default_rng(seed)
    centres = np.array([[-2.0, -2.0], [2.0, 0.0], [0.0, 2.0]])
    for i in range(n_shards):
        np.save(
            folder / f"p{i}.npy",
            centres[rng.integers(0, 3, rows)] + rng.normal(scale=0.3, size=(rows, 2)),
        )
    return folder


def _serve(monkeypatch, argv):
    started = {}
    monkeypatch.setattr(cli, "run_server", lambda cmd, env=None: started.update(env=env) or 0)
    assert cli.main(["serve", *argv]) == 0
    return started["env"]


def test_serve_registers_the_data_set_before_the_server_starts(tmp_path, monkeypatch, capsys):
    folder = _shards(tmp_path / "shards")
    env = _serve(
        monkeypatch,
        ["--state-dir", str(tmp_path / "state"), "--dataset", f"big={folder}", "--box", "-4,4"],
    )
    assert env[REGISTRY_SETTING] == str(tmp_path / "state" / "datasets.json")
    assert "big: 1200 records x 2 features" in capsys.readouterr().err
    bad = np.load(folder / "p1.npy")
    bad[7, 1] = np.nan
    np.save(folder / "p1.npy", bad)
    with pytest.raises(SystemExit):
        _serve(
            monkeypatch,
            ["--state-dir", str(tmp_path / "state"), "--dataset", f"big={folder}", "--box", "-4,4"],
        )
    assert "p1.npy: row 8, column 2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _serve(monkeypatch, ["--dataset", f"big={folder}"])  # no box
    assert "one --box per --dataset" in capsys.readouterr().err


def test_page_lists_it_private_hides_values_and_releases_with_progress(tmp_path, monkeypatch):
    from privclust.app.state import Lab
    from privclust.app.state.data import DataModel
    from privclust.app.views.progress import LargeDataProgress

    folder = _shards(tmp_path / "shards")
    env = _serve(
        monkeypatch,
        [
            "--state-dir",
            str(tmp_path / "state"),
            "--dataset",
            f"big={folder}",
            "--box",
            "-4:-4,4:4",
        ],
    )
    monkeypatch.setenv(REGISTRY_SETTING, env[REGISTRY_SETTING])
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path / "state"))
    data = DataModel()
    assert "big" in data.param.registry_name.objects
    data.param.update(source="registry", registry_name="big")
    lab = Lab(data=data)
    assert lab.mode == "private" and not lab.raw_allowed(data.dataset)
    view = LargeDataProgress(lab=lab)
    assert view.bar.visible and "partition by partition" in view.text.object
    lab.settings.task = "kmeans"
    lab.settings.algorithm = next(
        a for a in lab.settings.param.algorithm.objects if "dplloyd" in a.lower()
    )
    lab.do_release()
    assert lab.message.startswith("Released"), lab.message
    view.tick()
    assert "passes over 3 partitions, done" in view.text.object
    assert view.cancel.disabled  # nothing to cancel now
    assert lab.ledger.releases and lab.ledger.spent[0] > 0
