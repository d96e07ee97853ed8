"""OneClusterAggregator as the aggregation rule of SampleAggregateSubspaceClustering (Nissim,
Stemmer & Vadhan, PODS 2016, Sec. 6)."""

import warnings

import numpy as np
import pytest

from privclust.core.metrics import wasserstein_subspaces
from privclust.core.onecluster import OneClusterAggregator
from privclust.core.privacy import Ledger, PrivacyWarning
from privclust.core.subspace import KPlanes, SampleAggregateSubspaceClustering
from privclust.core.subspace.sample_aggregate import projector_box


def test_one_cluster_aggregate_is_close_on_easy_data(union_of_subspaces):
    """d=3, k=2, q=1, 1000 blocks of 20 points, epsilon=50. Measured (3 datasets x 4 seeds):
    d_W to the truth 0.0001-0.0015, every run reliable; this seed 0.001."""
    data = union_of_subspaces(20000, 3, 2, 1, noise=0.01, seed=0)
    agg = OneClusterAggregator()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # a reliable run warns about nothing
        sa = SampleAggregateSubspaceClustering(
            2,
            1,
            epsilon=50.0,
            delta=1e-6,
            solver=KPlanes(n_init=2),
            n_subsets=1000,
            aggregator=agg,
            random_state=0,
        ).fit(data.X)
    assert sa.subspaces_.shape == (2, 3, 1)
    assert wasserstein_subspaces(sa.subspaces_, data.truth["subspaces"]) < 0.02
    assert agg.result_.reliable and sa.privacy_.warnings == []
    assert sa.diagnostics_["evaluation_only"] and sa.diagnostics_["order_agreement"] > 0.8


def test_ledger_charged_once_before_aggregation_and_guarantee_passed_through(two_lines):
    data = two_lines
    ledger = Ledger(10.0, 0.01)
    inner = OneClusterAggregator()
    seen = {}

    def spy(Y, epsilon, delta, bounds, rng):
        seen.update(Y=Y, args=(epsilon, delta), charges=list(ledger.history), bounds=bounds)
        return inner(Y, epsilon, delta, bounds, rng)

    with pytest.warns(PrivacyWarning) as rec:
        sa = SampleAggregateSubspaceClustering(
            2,
            1,
            epsilon=2.0,
            delta=2e-3,
            solver=KPlanes(n_init=1),
            aggregator=spy,
            ledger=ledger,
            random_state=0,
        ).fit(data.X)
    # charged exactly once, with (epsilon, delta), before the aggregator ran
    assert [(c.epsilon, c.delta) for c in seen["charges"]] == [(2.0, 2e-3)]
    assert [(c.epsilon, c.delta) for c in ledger.history] == [(2.0, 2e-3)]
    assert seen["args"] == (2.0, 2e-3)
    # Y: m=50 canonical block vectors (each block's k vectors sorted) inside the public box
    Y = seen["Y"]
    lo, hi = projector_box(4, 2)
    assert Y.shape == (50, 20) and np.all(Y >= lo - 1e-12) and np.all(Y <= hi + 1e-12)
    np.testing.assert_array_equal(seen["bounds"][0], lo)
    np.testing.assert_array_equal(seen["bounds"][1], hi)
    assert np.all(Y[:, 0] <= Y[:, 10])
    # privacy_ is the aggregator's guarantee plus the estimator's warnings
    g, inner_g = sa.privacy_, inner.result_
    assert g.kind == "approx" and g.neighbouring == "replace"
    assert g.epsilon == pytest.approx(2.0) and g.delta == pytest.approx(2e-3)
    assert g.mechanisms and all(m.name.startswith("1-cluster aggregator") for m in g.mechanisms)
    assert g.warnings[0] == "delta=0.002 exceeds 1/n"
    # the aggregator's own notes are carried too: with m=50 blocks at this seed its noisy
    # count is too small to be reliable
    assert not inner_g.reliable
    assert any("unreliable" in w for w in g.warnings)
    assert "exceeds 1/n" in " ".join(str(r.message) for r in rec)
    assert np.all(np.isfinite(sa.subspaces_)) and sa.subspaces_.shape == (2, 4, 1)
