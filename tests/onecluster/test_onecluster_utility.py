"""Utility of the 1-cluster with our GoodCenter defaults (docs/algorithms.md, section 5) on the
planted ball of the 1-cluster benchmark, and the honest d = 10 failure.

The 100-trial measurement is benchmarks/onecluster/utility_100.py; here a seeded subset keeps the
test under half a minute.
"""

import numpy as np
import pytest

from privclust.core import OneCluster
from privclust.core.data import make_planted_ball

N, T, STD, EPS, DELTA = 10_000, 2_000, 0.01, 1.0, 1e-6


def trial(seed, d=2):
    data = make_planted_ball(N, d, n_inliers=T, std=STD, random_state=seed)
    model = OneCluster(
        T, EPS, DELTA, bounds=(0.0, 1.0), grid_step=2.0**-16, random_state=1000 + seed
    ).fit(data.X)
    err = float(np.linalg.norm(model.center_ - data.truth["center"]))
    inl = data.X[data.truth["inliers"]]
    coverage = float(np.mean(np.linalg.norm(inl - model.center_, axis=1) <= model.radius_))
    return model, err, coverage


@pytest.mark.slow
def test_planted_ball_d2_utility():
    """>= 90 % of seeded trials: centre within 0.05, radius <= 0.20, >= 90 % of t covered."""
    results = [trial(seed) for seed in range(10)]
    passed = [err <= 0.05 and m.radius_ <= 0.20 and cov >= 0.90 for m, err, cov in results]
    assert sum(passed) >= 9, [(round(e, 3), round(m.radius_, 3), cov) for m, e, cov in results]
    assert all(m.reliable_ for m, _, _ in results)


@pytest.mark.slow
def test_d10_runs_and_reports_an_unreliable_ball_honestly():
    """At d = 10 and this n the construction is not useful: it must say so."""
    model, err, coverage = trial(0, d=10)
    assert np.all(np.isfinite(model.center_)) and model.radius_ > 0
    useful = err <= 0.05 and coverage >= 0.9
    assert not useful  # the measured failure of the construction at this n
    assert not model.reliable_
    assert model.privacy_.warnings  # the guarantee carries the warning
    assert model.good_radius_ <= 0.25  # GoodRadius itself still works at d = 10
