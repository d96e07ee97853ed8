"""The downloads of a private release, as a person uses them: plain JSON (no internal encoding),
a wide CSV with the data's column names, and a script the data owner reruns on their side."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from privclust.app import export
from privclust.app.state import Lab

COLUMNS = ["alcohol", "malic acid", "=ash"]  # the last one: a CSV-injection attempt


@pytest.fixture
def released(ledger_env, tmp_path):
    X = np.random.default_rng(0).normal(size=(150, 3))
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(COLUMNS), comments="")
    (tmp_path / "records.csv").write_text(buf.getvalue())
    lab = Lab()
    assert lab.data.upload("records.csv", buf.getvalue().encode())
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd", epsilon=0.5, n_clusters=2, lower=-4.0, upper=4.0)
    result = lab.do_release()
    assert result is not None, lab.message
    return result, tmp_path / "records.csv"


def test_json_download_is_plain(released):
    result, _ = released
    text = json.dumps(export.report_payload(result))
    assert "__" not in text.replace("cluster_centers_", "")  # no __ndarray__/__dict__/__seq__
    payload = json.loads(text)
    assert payload["parameters"]["epsilon"] == 0.5 and payload["parameters"]["n_clusters"] == 2
    assert payload["guarantee"]["kind"] == "pure" and payload["cost"]["epsilon"] == 1.0
    assert payload["feature_names"] == COLUMNS
    centres = np.array(payload["released"]["cluster_centers_"])
    np.testing.assert_array_equal(centres, result.release.cluster_centers_)


def test_csv_download_is_wide_with_the_column_names(released):
    result, _ = released
    df = pd.read_csv(io.StringIO(export.report_csv(result)))
    assert list(df.columns) == ["output", "row", "alcohol", "malic acid", "'=ash"]
    assert list(df["output"]) == ["cluster_centers_"] * 2
    np.testing.assert_allclose(
        df[["alcohol", "malic acid", "'=ash"]].to_numpy(), result.release.cluster_centers_
    )


def test_script_download_reruns_the_release_on_the_owner_side(released, tmp_path):
    result, records = released
    script = tmp_path / "privclust_release.py"
    script.write_text(export.release_script(result))
    run = subprocess.run(
        [sys.executable, str(script), str(records)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "DPLloyd: 0.5-DP" in run.stdout and "cluster_centers_ (2, 3)" in run.stdout


def test_a_demo_result_has_no_script(ledger_env):
    lab = Lab()
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd")
    result = lab.run_demo()
    assert result is not None
    with pytest.raises(ValueError, match="private release only"):
        export.release_script(result)
