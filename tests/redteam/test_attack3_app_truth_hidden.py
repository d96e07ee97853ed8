"""Red team, attack 3 at the page: truth computed from the private records shown to the analyst.

The registry's ``yaleb5`` truth subspaces are the top singular vectors of the raw records; the
analyst view showed "Wasserstein distance to the true subspaces" (not marked evaluation-only)
and the "private vs true" heatmap (which ignored the data owner view switch), so replacing one
record moved a shown number. Now truth of a non-public dataset is evaluation only: the analyst's
metrics, heatmaps and downloads carry nothing derived from it; the data owner view shows it,
marked NOT PRIVATE.
"""

import holoviews as hv
import numpy as np
import pytest

from privclust.app import catalogue
from privclust.app.state import Lab
from privclust.core import Dataset, PrivateEstimator
from privclust.core.privacy import Guarantee

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class NoisySubspaces(PrivateEstimator):
    """A stand-in private release of k random q-dim subspaces (data-independent output)."""

    _released = ("subspaces_",)

    def __init__(self, n_clusters=2, subspace_dim=1, epsilon=1.0, ledger=None, random_state=None):
        self.n_clusters, self.subspace_dim, self.epsilon = n_clusters, subspace_dim, epsilon
        self.ledger, self.random_state = ledger, random_state

    def _plan(self, n_samples, n_features):
        return Guarantee(float(self.epsilon), 0.0, "pure", "replace")

    def _fit(self, X, rng):
        d = X.shape[1]
        G = rng.normal(size=(self.n_clusters, d, self.subspace_dim))
        self.subspaces_ = np.linalg.qr(G)[0]
        self.privacy_ = Guarantee(float(self.epsilon), 0.0, "pure", "replace")


SPEC = catalogue.AlgorithmSpec("noisy", "noisy subspaces", "subspace", NoisySubspaces)


def _truth_from_records(X, labels, q):
    """Per-class top singular vectors of the raw records (as the registry's yaleb5 truth)."""
    return np.stack(
        [np.linalg.svd(X[labels == c].T, full_matrices=False)[0][:, :q] for c in np.unique(labels)]
    )


def _texts(obj):
    if hasattr(obj, "object") and isinstance(obj.object, str):
        return obj.object
    return " ".join(_texts(o) for o in getattr(obj, "objects", []))


def _heatmap_titles(pane):
    if not isinstance(getattr(pane, "object", None), hv.core.Dimensioned):
        return []
    return [
        t
        for t in pane.object.traverse(
            lambda el: hv.Store.lookup_options("bokeh", el, "plot").kwargs.get("title"),
            [hv.HeatMap],
        )
        if t
    ]


def _lab_on(ds, tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")
    lab = Lab(specs=list(catalogue.SPECS) + [SPEC])
    lab.data.param.update(dataset=ds)  # a registry set (as the DataModel loads it)
    assert lab.mode == "private"
    lab.settings.param.update(task="subspace")
    lab.settings.param.update(algorithm="noisy", n_clusters=2, subspace_dim=1)
    assert lab.do_release() is not None, lab.message
    return lab


def _check(lab):
    from privclust.app.export import report_payload
    from privclust.app.views import MetricsTable, ReportView, SubspacesView

    view = SubspacesView(lab=lab)
    metrics = _texts(MetricsTable(lab=lab).__panel__())
    assert "true subspaces" not in metrics and "Wasserstein" not in metrics
    assert not any("true" in t for t in _heatmap_titles(view._plots()))
    assert "true" not in _texts(ReportView(lab=lab)._report()).replace("ground truth", "")
    payload = str(report_payload(lab.result))
    assert "truth" not in payload and "wasserstein" not in payload.lower()
    lab.settings.owner_view = True  # the data owner may evaluate against it, marked
    metrics = _texts(MetricsTable(lab=lab).__panel__())
    assert "Wasserstein distance to the true subspaces" in metrics and "not private" in metrics
    titles = _heatmap_titles(view._plots())
    assert any("true" in t and t.startswith("NOT PRIVATE") for t in titles)


def test_attack3_analyst_sees_nothing_derived_from_private_truth(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1], 40)
    X = np.vstack(
        [np.outer(rng.normal(size=40), [1, 0, 0, 0]), np.outer(rng.normal(size=40), [0, 1, 0, 0])]
    ) + 0.05 * rng.normal(size=(80, 4))
    ds = Dataset(
        X,
        labels=labels,
        name="faces",
        public=False,
        truth={"subspaces": _truth_from_records(X, labels, 1)},
    )
    _check(_lab_on(ds, tmp_path, monkeypatch))


@pytest.mark.realdata
def test_attack3_yaleb5_truth_stays_in_the_owner_view(data_dir, tmp_path, monkeypatch):
    from privclust.core.data import get_dataset

    ds = get_dataset("yaleb5")
    monkeypatch.setenv("PRIVCLUST_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("PRIVCLUST_BUDGET_EPSILON", "3")
    lab = Lab(specs=list(catalogue.SPECS) + [SPEC])
    lab.data.param.update(dataset=ds)
    lab.settings.param.update(task="subspace")
    k, _, q = np.shape(ds.truth["subspaces"])
    lab.settings.param.update(algorithm="noisy", n_clusters=int(k), subspace_dim=int(q))
    assert lab.do_release() is not None, lab.message
    _check(lab)
