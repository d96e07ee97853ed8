"""A reload keeps the session's data choice, and a browser's uploads stay listed for the
server's lifetime -- to that browser only (app/state/browsers.py): another browser, or a token
the server did not issue, learns nothing of them."""

import re

import pytest
from browser import expect_text, open_page, text_of, upload, write_csv
from playwright.sync_api import expect

from privclust.app.state import DataModel, Lab
from privclust.app.state.browsers import Browsers

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_a_reload_restores_the_preset_and_its_sizes():
    token, record, known = Browsers().session(None)
    assert not known and re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    first = DataModel(browser=record)
    first.param.update(preset="gaussian_mixture")
    first.param.update(n_samples=777, seed=4)
    again = DataModel(browser=record)  # the page after a reload
    assert (again.preset, again.n_samples, again.seed) == ("gaussian_mixture", 777, 4)
    assert again.dataset.fingerprint == first.dataset.fingerprint


def test_uploads_stay_listed_for_their_browser_only(ledger_env, csv_payload):
    browsers = Browsers()
    token, mine, _ = browsers.session(None)
    data = DataModel(browser=mine)
    assert data.upload("cohort.csv", csv_payload(n=50, d=3, seed=1))
    assert list(data.upload_names()) == ["1. cohort.csv"]
    # a reload: the same token finds the record; the upload is loaded again, still private
    same, record, known = browsers.session(token)
    assert known and record is mine
    lab = Lab(data=DataModel(browser=record))
    assert lab.mode == "private" and lab.data.dataset.name == data.dataset.name
    assert lab.data.dataset.fingerprint == data.dataset.fingerprint
    # another browser (no cookie), and a forged token of the right form: nothing is listed,
    # and the forged token is replaced by a fresh one
    for cookie in (None, "A" * 43, token[:-1] + ("A" if token[-1] != "A" else "B")):
        other_token, other, known = browsers.session(cookie)
        assert not known and other is not mine and other_token != token
        assert DataModel(browser=other).upload_names() == {}
        assert DataModel(browser=other).source == "preset"


def test_the_file_shown_uploaded_again_keeps_its_result(ledger_env, csv_payload):
    """A reload restores this browser's upload; the same file uploaded again then changes
    nothing (the result re-opened meanwhile and its status stay: they were wiped when the
    second upload finished after a Re-open, as in the browser test under load). Another file,
    or the same name with other contents, replaces it."""
    browsers = Browsers()
    _, mine, _ = browsers.session(None)
    lab = Lab(data=DataModel(browser=mine))
    payload = csv_payload(n=60, d=3, seed=2)
    assert lab.data.upload("cohort.csv", payload)
    first = lab.data.dataset
    lab.settings.task, lab.settings.algorithm = "kmeans", "dplloyd"
    assert lab.do_release() is not None, lab.message
    assert lab.open_release(lab.ledger.releases[-1]["id"]) is not None
    assert lab.data.upload("cohort.csv", payload)
    assert lab.data.dataset is first and lab.result is not None
    assert "Re-opened release" in lab.message
    assert list(lab.data.upload_names()) == ["1. cohort.csv"]
    assert lab.data.upload("cohort.csv", csv_payload(n=60, d=3, seed=3))
    assert lab.data.dataset is not first and lab.result is None


def test_without_a_browser_record_nothing_is_kept(csv_payload):
    data = DataModel()
    assert data.upload("a.csv", csv_payload(n=40, d=2))
    assert data.upload_names() == {} and DataModel().source == "preset"


def _reload(page):
    page.reload()
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")


@pytest.mark.ui
def test_a_reload_keeps_the_upload_and_another_browser_sees_nothing(
    page, server, browser, tmp_path
):
    open_page(page, server)
    page.get_by_label("preset", exact=True).select_option(label="Gaussian mixture (SCH19)")
    expect_text(page, ".pc-data-summary", "gaussian", timeout=30_000)
    _reload(page)  # the preset choice is kept
    expect(page.get_by_label("preset", exact=True)).to_have_value("Gaussian mixture (SCH19)")
    upload(page, write_csv(tmp_path / "ward_secret.csv", seed=31))
    expect_text(page, ".pc-private", "ward_secret")
    _reload(page)  # the upload is kept, still private
    expect_text(page, ".pc-private", "ward_secret", timeout=30_000)
    expect(page.get_by_label(re.compile("^your uploads"))).to_have_value("1. ward_secret.csv")
    # another browser (its own cookies): demo data, no upload listed, the name nowhere
    other = browser.new_context().new_page()
    open_page(other, server)
    expect(other.locator(".pc-demo").first).to_be_visible()
    other.get_by_role("button", name="Upload").click()
    expect(other.get_by_label(re.compile("^your uploads"))).to_be_hidden()
    assert "ward_secret" not in text_of(other, "body")
    other.context.close()
