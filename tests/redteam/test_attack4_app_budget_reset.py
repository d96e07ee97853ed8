"""Red team, attack 4 at the page: a fresh budget by reloading, reordering or deriving a view.

Each page load used to open the ledger under the exact-bytes fingerprint of the data: a
reordered upload (or a new random ``yaleb5`` draw, or ``yaleb`` vs ``yaleb5``) was a new dataset
with a full budget. Now the page's Curator opens the ledger under the dataset's order-invariant
budget key (a derived view shares its source's), so every load of the same records, in any
order and in any session, spends one budget, and a later session lists the earlier releases.
"""

import numpy as np
import pytest

from privclust.app.state import Lab

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _session(payload, name="records.csv"):
    """A new browser session that uploads ``payload`` and picks DPLloyd (add/remove: an
    epsilon of 0.5 costs 1.0 on the replace-one ledger)."""
    lab = Lab()
    assert lab.data.upload(name, payload)
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd", epsilon=0.5, n_clusters=2)
    return lab


def test_attack4_reloads_and_a_reordered_upload_share_one_budget(ledger_env, csv_bytes):
    rng = np.random.default_rng(4)
    X = np.round(rng.normal(size=(120, 3)), 3)
    same, reordered = csv_bytes(X), csv_bytes(X[rng.permutation(len(X))])
    spent = []
    for k, payload in ((3, same), (4, same), (5, reordered)):
        lab = _session(payload)
        lab.settings.n_clusters = k  # a new request each time (identical ones are free)
        assert lab.do_release() is not None, lab.message
        spent.append(lab.ledger.spent[0])
    assert spent == [1.0, 2.0, 3.0]
    # a fourth load (any order) finds the budget spent: refused before anything runs
    lab = _session(reordered)
    lab.settings.n_clusters = 6
    runs = lab.n_runs
    assert lab.do_release() is None and "Refused" in lab.message
    assert lab.n_runs == runs and lab.ledger.spent[0] == 3.0
    # a new session lists the earlier releases and re-opens one without a charge
    later = _session(same)
    rows = later.ledger.releases
    assert [r["estimator"] for r in rows] == ["DPLloyd"] * 3
    assert [r["epsilon"] for r in rows] == [1.0, 1.0, 1.0]
    shown = later.open_release(rows[0]["id"])
    assert shown is not None and shown.release.id == rows[0]["id"]
    assert later.ledger.spent[0] == 3.0
    history = later.ledger.history
    assert [h["relation"] for h in history] == ["add_remove"] * 3
    assert [(h["requested_epsilon"], h["epsilon"]) for h in history] == [(0.5, 1.0)] * 3


@pytest.mark.realdata
def test_attack4_registry_reloads_and_views_share_one_budget(data_dir, ledger_env):
    spent = []
    for k, name in ((3, "yaleb5"), (4, "yaleb5"), (5, "yaleb")):
        lab = Lab()
        lab.data.param.update(source="registry", registry_name=name)
        assert lab.mode == "private", lab.data.error
        lab.settings.param.update(task="kmeans")
        lab.settings.param.update(algorithm="dplloyd", epsilon=0.5, n_clusters=k)
        assert lab.do_release() is not None, lab.message
        spent.append(lab.ledger.spent[0])
    assert spent == [1.0, 2.0, 3.0]
    lab = Lab()
    lab.data.param.update(source="registry", registry_name="yaleb5")
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd", epsilon=0.5, n_clusters=2)
    assert lab.do_release() is None and "Refused" in lab.message
    assert len(lab.ledger.releases) == 3
