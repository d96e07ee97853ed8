"""Red team: the analyst switches on the data owner view.

The page offered a "data owner view" checkbox to whoever was at the browser; ticking it showed
baselines, metrics and truth computed on the raw records (NOT PRIVATE). The analyst is not
trusted, so the view exists only where the operator enabled it for a server the data owner runs
for themselves (PRIVCLUST_OWNER_VIEW=1 or ``privclust serve --owner-view``). Without it the
checkbox is not on the page and the server refuses the switch, even when the session's model is
told to turn it on (what a forged websocket message would do).
"""

import numpy as np
import pytest

from privclust.app.cli import main as cli_main
from privclust.app.config import OWNER_VIEW
from privclust.app.state import Lab, SettingsModel
from privclust.app.views import SettingsPanel
from privclust.core.data import Dataset


@pytest.fixture
def no_owner_view(monkeypatch):
    monkeypatch.delenv(OWNER_VIEW.env, raising=False)


def private_lab(tmp_path):
    lab = Lab(ledger_path=str(tmp_path / "ledger.sqlite"))
    X = np.random.default_rng(3).normal(size=(60, 3))
    lab.data.param.update(dataset=Dataset(X, name="patients", public=False))
    return lab


def test_owner_view_cannot_be_switched_on_by_the_analyst(no_owner_view, tmp_path):
    lab = private_lab(tmp_path)
    assert lab.mode == "private" and not lab.settings.owner_allowed
    lab.settings.owner_view = True  # a forged widget event
    assert lab.settings.owner_view is False
    assert not lab.show_raw and not lab.raw_allowed(lab.data.dataset)
    sidebar = SettingsPanel(lab=lab)
    assert not sidebar.owner.visible


def test_the_operator_setting_enables_it(monkeypatch, tmp_path):
    monkeypatch.setenv(OWNER_VIEW.env, "1")
    lab = private_lab(tmp_path)
    lab.settings.owner_view = True
    assert lab.settings.owner_view is True and lab.raw_allowed(lab.data.dataset)
    assert SettingsPanel(lab=lab).owner.visible


def test_the_setting_cannot_be_granted_from_the_session(no_owner_view):
    settings = SettingsModel()
    with pytest.raises(TypeError):  # constant: fixed when the session starts
        settings.owner_allowed = True


def test_privclust_serve_passes_the_operator_setting(no_owner_view, monkeypatch):
    calls = []
    monkeypatch.setattr(
        "privclust.app.cli.run_server", lambda cmd, env=None: calls.append(env) or 0
    )
    assert cli_main(["serve", "--port", "5999"]) == 0
    assert cli_main(["serve", "--port", "5999", "--owner-view"]) == 0
    assert calls[0] is None and calls[1][OWNER_VIEW.env] == "1"
