"""The private subspace estimators follow the release protocol of PrivateEstimator: every check
that can fail on parameters runs from the parameters and the public shape before the ledger is
charged, the records are read only after the charge, and a release carries the declared
attributes only."""

import warnings

import numpy as np
import pytest

from privclust.core import Curator
from privclust.core.estimator import DataAccessError
from privclust.core.onecluster import OneClusterAggregator
from privclust.core.privacy import BudgetExceeded, Guarantee, Ledger, PrivacyWarning
from privclust.core.subspace import (
    GibbsSubspaceClustering,
    KPlanes,
    SampleAggregateSubspaceClustering,
    SuLQSubspaceClustering,
)

ESTIMATORS = [
    lambda ledger: SuLQSubspaceClustering(2, 2, epsilon=0.5, delta=1e-4, n_iter=3, ledger=ledger),
    lambda ledger: SuLQSubspaceClustering(
        2, 2, epsilon=0.5, delta=1e-4, n_iter=3, neighbouring="add_remove", ledger=ledger
    ),
    lambda ledger: SampleAggregateSubspaceClustering(
        2, 1, epsilon=0.5, solver=KPlanes(n_init=1), ledger=ledger
    ),
    lambda ledger: SampleAggregateSubspaceClustering(
        2,
        1,
        epsilon=0.5,
        delta=1e-4,
        solver=KPlanes(n_init=1),
        n_subsets=10,
        aggregator=OneClusterAggregator(),
        ledger=ledger,
    ),
    lambda ledger: GibbsSubspaceClustering(
        2, 2, epsilon=0.5, n_iter=3, n_chains=2, record_every=3, ledger=ledger
    ),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_charge_before_any_read_and_refusal_reads_nothing(make, sealed):
    records = sealed((400, 6))
    full = Ledger(0.1, 1e-3)  # too small: refused before reading
    with pytest.raises(BudgetExceeded):
        make(full).fit(records)
    assert full.history == []
    ledger = Ledger(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        with pytest.raises(DataAccessError):  # the read comes after the charge
            make(ledger).fit(records)
    assert len(ledger.history) == 1


@pytest.mark.parametrize("make", ESTIMATORS)
def test_curator_release_carries_the_declared_attributes_only(make, two_planes):
    X = two_planes.X
    ledger = Ledger(10.0, 1e-2)
    est = make(None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        release = Curator(X, ledger).release(est)
    assert set(release.attributes) == set(est.released_attributes())
    assert "diagnostics_" not in release.attributes and "trace_" not in release.attributes
    plan = est.public_plan(X.shape)
    assert (release.guarantee.kind, release.guarantee.neighbouring) == (
        plan.kind,
        plan.neighbouring,
    )
    assert len(ledger.history) == 1


def test_sulq_noise_scale_comes_from_the_public_plan(two_planes):
    X = two_planes.X
    a = SuLQSubspaceClustering(2, 2, epsilon=1.0, delta=1e-5, n_iter=4, random_state=0).fit(X)
    b = SuLQSubspaceClustering(2, 2, epsilon=1.0, delta=1e-5, n_iter=4, random_state=0).fit(X[:50])
    assert a.noise_scale_ == b.noise_scale_ > 0
    assert a.released_attributes() == ("subspaces_", "noise_scale_")
    # delta=None: 1/(n ln n) with the public n under replace-one; refused under add/remove
    est = SuLQSubspaceClustering(2, 2, delta=None)
    assert est.plan(300, 5).delta == pytest.approx(1 / (300 * np.log(300)))
    with pytest.raises(ValueError, match="explicit delta"):
        est.set_params(neighbouring="add_remove").plan(None, 5)
    with pytest.raises(ValueError, match="subspace_dim"):
        SuLQSubspaceClustering(2, 5).plan(300, 5)


def test_sample_aggregate_privacy_does_not_publish_the_smooth_bound(two_lines):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        sa = SampleAggregateSubspaceClustering(
            2, 1, epsilon=2.0, solver=KPlanes(n_init=1), random_state=0
        ).fit(two_lines.X)
    # the smooth bound S(B) depends on the data: it scales the noise, it is not released
    assert sa.diagnostics_["smooth_bound"] > 0
    assert [m.sensitivity for m in sa.privacy_.mechanisms] == [None]
    assert sa.released_attributes() == ("subspaces_",)


def test_sample_aggregate_checks_a_planned_aggregator_before_the_charge(two_lines, sealed):
    calls = []

    class Greedy:
        """States in advance a guarantee above the budget it is given."""

        def plan(self, m, D, epsilon, delta, bounds):
            return Guarantee(2 * epsilon, delta, "approx", "replace")

        def __call__(self, Y, epsilon, delta, bounds, rng):
            calls.append(1)
            return np.full(Y.shape[1], 0.5), Guarantee(epsilon, delta, "approx", "replace")

    ledger = Ledger(10.0, 1e-2)
    for agg in (Greedy(), OneClusterAggregator(alpha=1.5), OneClusterAggregator(grid_step=1e-30)):
        est = SampleAggregateSubspaceClustering(
            2,
            1,
            epsilon=1.0,
            delta=1e-4,
            n_subsets=10,
            solver=KPlanes(n_init=1),
            aggregator=agg,
            ledger=ledger,
        )
        with pytest.raises(ValueError, match="aggregator|alpha|grid_step"):
            est.fit(sealed(two_lines.X.shape))
    assert ledger.history == [] and calls == []
    # the OneClusterAggregator's plan becomes the estimator's plan, exactly (epsilon, delta)
    plan = SampleAggregateSubspaceClustering(
        2,
        1,
        epsilon=1.0,
        delta=1e-4,
        n_subsets=10,
        solver=KPlanes(n_init=1),
        aggregator=OneClusterAggregator(),
    ).plan(1000, 4)
    assert (plan.epsilon, plan.delta, plan.kind) == (1.0, 1e-4, "approx")
    assert plan.mechanisms[0].name.startswith("1-cluster aggregator: GoodRadius")


def test_sample_aggregate_parameters_fail_before_the_charge(two_lines, sealed):
    ledger = Ledger(10.0, 1e-2)
    for kwargs in (
        {"n_subsets": 1000},
        {"subsampling": "bootstrap"},
        {"solver": "pca"},
        {"subspace_dim": 4},
        {"n_clusters": 0},
    ):
        with pytest.raises(ValueError):
            SampleAggregateSubspaceClustering(
                **{"n_clusters": 2, "subspace_dim": 1, "ledger": ledger, **kwargs}
            ).fit(sealed(two_lines.X.shape))
    assert ledger.history == []
