"""Red team, attack 10: the release's request key was a plain hash of the private data.

A Release carries ``key``, the identity of its request used to answer an identical request from
the store. It was SHA-256 of (estimator, public parameters, the data's fingerprint, unit), and
the fingerprint is SHA-256 of the exact records. ``Release.to_dict()`` (the private JSON download
of the dashboard) publishes the key, so an analyst who knows every record but one hashes the
two candidate datasets, rebuilds the key from the public parameters in the download, and tells
with certainty which one was released: a deterministic membership test that no noise covers
(Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Def. 2.4: the
output distribution may change by at most e^eps, not from 0 to 1).

The key is now keyed by a secret of the release store (HMAC-SHA256, RFC 2104) that never leaves
the operator's ledger file, so nothing in a release or a download is a function of the records
alone. The attacker's view: the download (``release.to_dict()``, also through the dashboard's
``report_payload``) and every public hash of the candidate datasets.
"""

import io
import json

import numpy as np
import pytest

from privclust.core import Curator, Ledger
from privclust.core.data import Dataset
from privclust.core.release import request_key
from privclust.core.release.codec import decode
from privclust.core.sketch import DPLloyd

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _candidates(seed=0):
    """Every record but the last is known; the last is one of two candidates."""
    known = np.random.default_rng(seed).normal(size=(59, 3)).round(3)
    return {"a": np.vstack([known, [[9.0, 9.0, 9.0]]]), "b": np.vstack([known, [[-9.0, 0.0, 1.0]]])}


def _hashes(X, download):
    """Every hash the attacker can compute for a candidate dataset: its fingerprint, its budget
    key and the request key rebuilt from the download's public fields."""
    ds = Dataset(X, public=False)
    if "parameters" in download:  # the dashboard's plain download
        params = download["parameters"]
        tupled = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        rebuilt = {
            request_key(download["class"], p, ds.fingerprint, download["cost"]["unit"])
            for p in (params, tupled)
        }
    else:  # Release.to_dict()
        rebuilt = {
            request_key(
                download["estimator"], decode(download["params"]), ds.fingerprint, download["unit"]
            )
        }
    return {ds.fingerprint, ds.record_key, *ds.legacy_budget_keys, *rebuilt}


def _membership_test(download, candidates):
    """The candidates whose hashes appear in the download text."""
    text = json.dumps(download)
    return [name for name, X in candidates.items() if any(h in text for h in _hashes(X, download))]


def test_attack10_release_key_is_not_a_hash_of_the_records_api(tmp_path):
    candidates = _candidates()
    for secret in ("a", "b"):
        for path in (None, tmp_path / f"ledger_{secret}.sqlite"):
            X = candidates[secret]
            ds = Dataset(X, public=False)
            ledger = Ledger(3.0, path=path, dataset=None if path is None else ds)
            curator = Curator(ds, ledger)
            release = curator.release(DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-10.0, 10.0)))
            download = json.loads(json.dumps(release.to_dict()))
            assert _membership_test(download, candidates) == []
            # the store still answers an identical request, at no charge, after a reopen
            again = Curator(
                Dataset(X.copy(), public=False),
                ledger if path is None else Ledger(3.0, path=path, dataset=ds),
            )
            if path is not None:
                stored = again.release(DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-10.0, 10.0)))
                assert stored.from_store and stored.key == release.key
                assert again.ledger.spent == release.cost  # charged once
            # and a different dataset never gets it
            other = Curator(
                Dataset(candidates["a" if secret == "b" else "b"], public=False), Ledger(3.0)
            )
            assert not other.release(
                DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-10.0, 10.0))
            ).from_store


def test_attack10_release_key_is_not_a_hash_of_the_records_app(tmp_path, monkeypatch):
    from privclust.app.export import report_payload
    from privclust.app.state import Lab

    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3.0")
    candidates = _candidates()
    for secret in ("a", "b"):
        buf = io.StringIO()
        np.savetxt(buf, candidates[secret], delimiter=",", header="f0,f1,f2", comments="")
        lab = Lab(ledger_path=str(tmp_path / f"ledger_{secret}.sqlite"))
        assert lab.data.upload("records.csv", buf.getvalue().encode())
        lab.settings.param.update(
            task="kmeans", algorithm="dplloyd", epsilon=0.5, lower=-10.0, upper=10.0
        )
        result = lab.do_release()
        assert result is not None and result.release is not None, lab.message
        download = json.loads(json.dumps(report_payload(result)))
        assert _membership_test(download, candidates) == []
