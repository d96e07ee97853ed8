"""Red team, attack 8: one ledger summed incompatible units.

DPLloyd's add/remove epsilon, the replace-one releases and DP-tauCC's cell-level epsilon were
added to one budget as if they were equal. By group privacy (Dwork & Roth, "The Algorithmic
Foundations of Differential Privacy", 2014, Thm 2.2) an add/remove (eps, 0) release costs 2 eps
under replace-one; a cell-level release (Battaglia & Pensa, SDM 2025, Sec. 4.1) says nothing
about a record unless rows are capped to L counts, and then costs 2L ceil(1/c) eps; a replace-one
release says nothing about whether a record is present, so an add/remove ledger cannot pay for
it. The attacker's view: the ledger's history and the release's cost, read through the public
API.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from privclust.core import Curator, DPLloyd, DPTauCoClustering, OneCluster
from privclust.core.cocluster import dp_estimator
from privclust.core.data import make_block_counts, make_planted_ball
from privclust.core.privacy import Ledger


@pytest.fixture(scope="module")
def points():
    return make_planted_ball(600, 2, n_inliers=300, std=0.02, random_state=8).X


@pytest.fixture(scope="module")
def counts():
    return make_block_counts(90, 60, 3, 3, signal=2.0, background=0.1, random_state=8).X


def test_add_remove_epsilon_costs_twice_on_a_replace_one_ledger(points):
    ledger = Ledger(10.0)  # unit "replace" (the default)
    DPLloyd(3, epsilon=0.5, bounds=(0, 1), random_state=0, ledger=ledger).fit(points)
    (rec,) = ledger.history
    assert (rec.relation, rec.requested, rec.epsilon, rec.delta) == (
        "add_remove",
        (0.5, 0.0),
        1.0,
        0.0,
    )
    assert ledger.spent == (1.0, 0.0)
    # the same through the curator: the release states the converted cost and its unit
    ledger2 = Ledger(10.0)
    release = Curator(points, ledger2).release(DPLloyd(3, epsilon=0.5, bounds=(0, 1)))
    assert release.cost == (1.0, 0.0) and release.unit == "replace"
    assert release.guarantee.neighbouring == "add_remove" and release.guarantee.epsilon == 0.5
    # a budget of 0.9 cannot pay for an add/remove 0.5 on a replace-one ledger
    tight = Ledger(0.9)
    assert not tight.can_charge(0.5, relation="add_remove")


def test_cell_level_release_is_refused_on_a_record_ledger_without_a_row_cap(counts):
    ledger = Ledger(50.0)
    curator = Curator(sp.csr_matrix(counts), ledger)
    with pytest.raises(ValueError, match="row_cap"):
        curator.release(DPTauCoClustering(3, 3, epsilon=0.5))
    with pytest.raises(ValueError, match="row_cap"):
        DPTauCoClustering(3, 3, epsilon=0.5, ledger=ledger).fit(counts)
    assert ledger.history == [] and ledger.spent == (0.0, 0.0)


@pytest.mark.parametrize("row_cap, cell_bound", [(4, 1.0), (5, 2.0), (1, 3.0)])
def test_cell_level_release_with_a_row_cap_costs_its_group_privacy_factor(
    counts, row_cap, cell_bound
):
    """Two capped rows differ by at most 2L one-unit changes; a change of c >= 1 units in one
    cell covers one of them, c < 1 needs ceil(1/c): 2 floor(L) ceil(1/c) steps."""
    ledger = Ledger(50.0)
    release = Curator(counts, ledger).release(
        DPTauCoClustering(3, 3, epsilon=0.5, cell_bound=cell_bound, row_cap=row_cap)
    )
    steps = {(4, 1.0): 8, (5, 2.0): 10, (1, 3.0): 2}[(row_cap, cell_bound)]
    assert release.cost == (0.5 * steps, 0.0)
    (rec,) = ledger.history
    assert (rec.relation, rec.requested, rec.epsilon) == ("cell", (0.5, 0.0), 0.5 * steps)


def test_rows_are_clipped_so_one_huge_record_moves_the_fitted_matrix_by_at_most_2L(
    counts, monkeypatch
):
    """The attacker plants one record with enormous counts. What the estimator fits (captured
    at the call that computes the release) differs from the neighbour's by at most 2L units."""
    seen = []
    real = dp_estimator.run_validated

    def spy(A, AT, *args, **kwargs):
        seen.append(A.toarray() if sp.issparse(A) else np.array(A))
        return real(A, AT, *args, **kwargs)

    monkeypatch.setattr(dp_estimator, "run_validated", spy)
    L = 6
    neighbour = counts.copy()
    neighbour[17] = 0.0
    neighbour[17, :5] = 1e7  # one record, 5e7 counts
    for X in (counts, sp.csr_matrix(neighbour)):
        DPTauCoClustering(3, 3, epsilon=1.0, row_cap=L, random_state=0, ledger=Ledger(100.0)).fit(X)
    a, b = seen
    assert a.sum(axis=1).max() <= L and b.sum(axis=1).max() <= L
    assert np.all(a == np.floor(a)) and np.all(b == np.floor(b))
    diff = np.abs(a - b)
    assert diff.sum() <= 2 * L and np.count_nonzero(diff.sum(axis=1)) <= 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: OneCluster(200, 1.0, 1e-6, bounds=(0, 1)),
        lambda: DPLloyd(3, epsilon=0.5, bounds=(0, 1), neighbouring="replace"),
    ],
)
def test_replace_one_releases_are_refused_on_an_add_remove_ledger(points, make):
    ledger = Ledger(10.0, 1e-3, unit="add_remove")
    with pytest.raises(ValueError, match="add/remove"):
        make().set_params(ledger=ledger).fit(points)
    with pytest.raises(ValueError, match="add/remove"):
        Curator(points, ledger).release(make())
    assert ledger.history == [] and ledger.spent == (0.0, 0.0)


def test_the_ledger_history_shows_relation_and_converted_cost(points, counts):
    ledger = Ledger(20.0, 1e-3)
    DPLloyd(3, epsilon=0.5, bounds=(0, 1), random_state=0, ledger=ledger).fit(points)
    OneCluster(200, 1.0, 1e-6, bounds=(0, 1), random_state=0, ledger=ledger).fit(points)
    DPTauCoClustering(3, 3, epsilon=0.25, row_cap=2, random_state=0, ledger=ledger).fit(counts)
    rows = [(r.relation, r.requested, r.epsilon, r.delta) for r in ledger.history]
    assert rows == [
        ("add_remove", (0.5, 0.0), 1.0, 0.0),
        ("replace", (1.0, 1e-6), 1.0, 1e-6),
        ("cell", (0.25, 0.0), 1.0, 0.0),
    ]
    assert ledger.spent[0] == 3.0  # not 0.5 + 1.0 + 0.25
    text = [str(r) for r in ledger.history]
    assert "a add_remove release of epsilon=0.5" in text[0]
    assert "a cell release of epsilon=0.25" in text[2]
    assert [r.to_dict()["relation"] for r in ledger.history] == ["add_remove", "replace", "cell"]
