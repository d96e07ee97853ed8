"""The Releases tab: the stored releases of the current private source side by side, with
public parameters, cost and the utility a release states about itself (never computed from
the records); a browser test that a release made in the page shows up there."""

import pytest
from browser import expect_text, open_page, open_tab, text_of, upload, write_csv
from test_plan import ShapeOnlyDataset

from privclust.app.state import Lab
from privclust.app.views.releases import ReleasesView, table

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def private_lab(csv_payload):
    lab = Lab()
    assert lab.data.upload("ward.csv", csv_payload(n=300, d=2, seed=2)), lab.data.error
    lab.settings.param.update(task="kmeans", lower=-1.0, upper=1.0, n_clusters=2)
    lab.settings.algorithm = "dplloyd"
    return lab


def test_releases_side_by_side_read_only_the_store(ledger_env, csv_payload):
    lab = private_lab(csv_payload)
    for eps in (0.5, 1.0):
        lab.settings.epsilon = eps
        assert lab.do_release() is not None, lab.message
    # the table is built from the stored releases alone: reading the records fails the test
    lab.data.dataset.__class__ = ShapeOnlyDataset
    df = table(lab.ledger.curator.releases(), lab.settings.specs)
    assert list(df["#"]) == sorted(df["#"], reverse=True) and len(df) == 2
    # DPLloyd is add/remove: on this replace-one ledger it costs twice what it asks
    assert sorted(df["ε asked"]) == ["0.5", "1"] and sorted(df["ε charged"]) == ["1", "2"]
    assert len(set(df["algorithm"])) == 1 and (df["box"] == "[-1, 1]").all()
    assert "n_clusters" in df and "utility (from the release)" in df
    view = ReleasesView(lab=lab)
    assert "2 releases" in view._table()[0].object


def test_demo_data_has_no_releases(ledger_env):
    assert "nothing is released" in ReleasesView(lab=Lab())._table().object


@pytest.mark.ui
def test_a_release_appears_in_the_releases_tab(page, server, tmp_path):
    open_page(page, server)
    upload(page, write_csv(tmp_path / "ward_releases.csv", seed=21))
    expect_text(page, ".pc-private", "PRIVATE")
    open_tab(page, "Releases")
    expect_text(page, ".pc-releases-view", "No release of this data yet")
    page.locator(".pc-release button").first.click()
    expect_text(page, ".pc-status", "Released", timeout=60_000)
    expect_text(page, ".pc-releases-view", "1 release", timeout=60_000)
    cells = text_of(page, ".pc-releases-table")
    assert "ε charged" in cells and "utility (from the release)" in cells
