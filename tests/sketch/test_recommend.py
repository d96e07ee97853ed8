"""recommend_kmeans: the choice follows the measured evidence, configures the estimator for the
relation, and a new method joins by its rows alone."""

import numpy as np
import pytest

import privclust.core as core
from privclust.core import recommend_kmeans
from privclust.core.sketch import recommend as rec


def test_letter_like_facts_get_the_best_measured_method():
    r = recommend_kmeans(20_000, 16, 8, 1.0, n_cells=1)  # the Letter cell itself decides
    cell = [
        row
        for row in rec.EVIDENCE
        if row[0] == "letter" and row[3] == 8 and row[4] == 1.0 and row[5] in rec.ESTIMATORS
    ]
    assert r.estimator == rec.ESTIMATORS[min(cell, key=lambda row: row[6])[5]][0]
    assert r.params["neighbouring"] == "add_remove" and r.params["epsilon"] == 1.0
    assert r.evidence and r.expected_relative_sse >= 1.0


def test_recommended_estimator_fits(rng):
    r = recommend_kmeans(500, 2, 3, 2.0, relation="replace")
    est = getattr(core, r.estimator)(n_clusters=3, bounds=(-5, 5), random_state=0, **r.params)
    X = rng.normal(size=(500, 2))
    assert est.fit(X).cluster_centers_.shape == (3, 2)
    assert est.privacy_.neighbouring == "replace"


def test_a_new_method_joins_through_its_rows(monkeypatch):
    monkeypatch.setitem(rec.ESTIMATORS, "newcomer", ("CompressiveKMeans", {"n_replicates": 1}))
    rows = [
        ("toy", 1000, 4, 8, 1.0, "dplloyd", 1.5, 0.1, 5, 0.1),
        ("toy", 1000, 4, 8, 1.0, "newcomer", 1.2, 0.1, 5, 2.0),
        ("toy", 1000, 4, 8, 1.0, "diffprivlib", 1.1, 0.1, 5, 1.0),
    ]
    r = recommend_kmeans(1000, 4, 8, 1.0, evidence=rows)
    assert r.estimator == "CompressiveKMeans" and r.params["n_replicates"] == 1
    assert r.expected_relative_sse == pytest.approx(1.2)  # peers are evidence, not choices


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"n": 0}, "n"),
        ({"k": 1.5}, "k"),
        ({"epsilon": -1}, "epsilon"),
        ({"relation": "cell"}, "relation"),
    ],
)
def test_validation(kw, match):
    base = dict(n=1000, d=4, k=8, epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        recommend_kmeans(**{**base, **kw})
    assert np.isfinite(recommend_kmeans(**base).expected_relative_sse)
