"""Tight accounting of fixed plans (PLD / RDP via dp-accounting) and Curator.release_plan."""

import math

import numpy as np
import pytest

from privclust.core.cocluster.dp_estimator import DPTauCoClustering
from privclust.core.privacy import BudgetExceeded, Guarantee, Ledger, analytic_gaussian_sigma
from privclust.core.privacy.accounting.plan_accounting import (
    PlanEvent,
    account_guarantees,
    account_plan,
    compose_pld,
    compose_rdp,
    convert_events,
    events_for_guarantee,
    gaussian_epsilon,
)
from privclust.core.privacy.accounting.relations import RelationError
from privclust.core.privacy.risk import max_posterior, odds_factor, risk_sentence, risk_table
from privclust.core.release import Curator
from privclust.core.release.curator import PrivacyRefused
from privclust.core.sketch.ckm import CompressiveKMeans
from privclust.core.sketch.dplloyd import DPLloyd
from privclust.core.subspace.gibbs import GibbsSubspaceClustering


def gaussians(multiplier, k):
    return [PlanEvent("gaussian", "g", 1.0, 1e-6, multiplier, i) for i in range(k)]


# ---- closed forms ------------------------------------------------------------------------------
@pytest.mark.parametrize("k, sigma, delta", [(4, 3.0, 1e-5), (50, 5.0, 1e-6), (10, 1.5, 1e-3)])
def test_k_gaussians_equal_one_gaussian_with_sigma_over_sqrt_k(k, sigma, delta):
    tight = compose_pld(gaussians(sigma, k), delta)
    one = compose_pld(gaussians(sigma / math.sqrt(k), 1), delta)
    exact = gaussian_epsilon(sigma / math.sqrt(k), delta)  # Balle & Wang, exact
    assert tight == pytest.approx(exact, rel=2e-3, abs=2e-3)
    assert one == pytest.approx(exact, rel=2e-3, abs=2e-3)
    assert tight >= exact - 1e-6  # pessimistic: never below


def test_gaussian_epsilon_matches_the_analytic_sigma_table():
    # sigma = 3.731 at (1, 1e-5) and 30.75 at (0.1, 1e-5) for sensitivity 1 (Balle & Wang 2018)
    assert gaussian_epsilon(3.731, 1e-5) == pytest.approx(1.0, abs=1e-3)
    assert gaussian_epsilon(30.75, 1e-5) == pytest.approx(0.1, abs=1e-3)


def test_fifty_gaussian_releases_tight_versus_basic():
    delta = 1e-5
    sigma = analytic_gaussian_sigma(1.2, delta / 50, 1.0)
    items = [
        (
            "G",
            Guarantee(
                1.2,
                delta / 50,
                "approx",
                "replace",
                mechanisms=[("Gaussian release", 1.2, delta / 50, 1.0)],
            ),
            {},
        )
        for _ in range(50)
    ]
    acc = account_guarantees(items, "replace")
    assert acc.basic == pytest.approx((60.0, delta))
    assert acc.delta == pytest.approx(delta)
    exact = gaussian_epsilon(sigma / math.sqrt(50), delta)
    assert acc.pld_epsilon == pytest.approx(exact, rel=1e-3)
    assert 8.5 < acc.pld_epsilon < 9.5  # 9.054 (basic: 60)
    assert acc.pld_epsilon < acc.rdp_epsilon < 1.1 * acc.pld_epsilon
    assert acc.charge == (acc.pld_epsilon, acc.delta)
    # the reference numbers of the reliability guide: 50 x sigma = 5 at delta = 1e-6
    assert compose_pld(gaussians(5.0, 50), 1e-6) == pytest.approx(7.29, abs=0.01)
    assert compose_rdp(gaussians(5.0, 50), 1e-6) == pytest.approx(7.77, abs=0.01)


def test_pure_laplace_sequences():
    one = [PlanEvent("laplace", "l", 0.7, 0.0, 1 / 0.7)]
    assert compose_pld(one, 0.0) == pytest.approx(0.7, abs=1e-3)  # k = 1: the sum
    for k in (2, 5, 20):
        events = [PlanEvent("laplace", "l", 0.5, 0.0, 2.0, i) for i in range(k)]
        tight = compose_pld(events, 1e-6)
        assert tight <= 0.5 * k + 1e-9
        assert tight >= 0.5 * math.sqrt(k) * 0.5  # far from free
    events = [PlanEvent("laplace", "l", 0.1, 0.0, 10.0, i) for i in range(50)]
    tight = compose_pld(events, 1e-6)
    assert tight < 0.8 * 5.0  # strictly tighter for many small steps
    # the worst pure steps (randomised response) compose exactly as Kairouz, Oh & Viswanath
    # (ICML 2015, Thm 3.3); Laplace steps of the same epsilon can only do better
    worst = [PlanEvent("epsilon_delta", "em", 0.1, 0.0, None, i) for i in range(50)]
    exact = optimal_pure_composition(0.1, 50, 1e-6)
    assert compose_pld(worst, 1e-6) == pytest.approx(exact, abs=2e-3)
    assert tight <= exact + 2e-3


def optimal_pure_composition(eps0, k, delta):
    """Exact epsilon at delta of k eps0-DP steps: the privacy loss of k randomised responses
    is (k - 2j) eps0 with probability C(k, j) p^(k-j) (1-p)^j, p = e^eps0 / (1 + e^eps0)
    (j = the number of flipped answers)."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    j = np.arange(k + 1)
    loss = (k - 2 * j) * eps0
    prob = binom.pmf(j, k, 1.0 / (1 + math.exp(eps0)))

    def excess(e):
        return float(np.sum(prob * np.clip(1 - np.exp(e - loss), 0, None))) - delta

    return brentq(excess, 0.0, k * eps0)


def test_pure_plan_at_delta_zero_is_charged_the_sum():
    items = [
        (
            "L",
            Guarantee(0.5, 0.0, "pure", "replace", mechanisms=[("counts Laplace", 0.5, 0.0, 1.0)]),
            {},
        )
    ] * 3
    acc = account_guarantees(items, "replace")
    assert acc.delta == 0.0 and acc.basic == (1.5, 0.0)
    assert acc.charge == (1.5, 0.0)
    acc = account_guarantees(items, "replace", delta=1e-6)
    assert acc.charge[0] <= 1.5 and acc.charge[1] == 1e-6


def test_an_epsilon_too_large_for_a_pld_falls_back_to_the_basic_sum():
    # e^1000 overflows a float: the PLD (and the RDP randomized-response event) must not raise,
    # the plan is charged its basic sum, and the report says why
    gib = GibbsSubspaceClustering(n_clusters=2, subspace_dim=1, epsilon=1000.0)
    acc = account_plan([gib, gib], (100, 5), delta=1e-3)
    assert acc.pld_epsilon == math.inf and acc.charge == (2000.0, 1e-3)
    assert any("too large for a privacy loss distribution" in note for note in acc.notes)
    assert compose_rdp(acc.events, 1e-3) == math.inf
    # a moderate epsilon keeps the tight PLD total (no fallback note)
    small = account_plan(
        [GibbsSubspaceClustering(n_clusters=2, subspace_dim=1, epsilon=1.0)] * 3,
        (100, 5),
        delta=1e-3,
    )
    assert math.isfinite(small.pld_epsilon) and small.charge[0] < 3.0
    assert not any("too large" in note for note in small.notes)


# ---- events per algorithm --------------------------------------------------------------------
def test_dplloyd_events_are_laplace_and_add_remove_doubles_on_replace():
    est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(-1, 1), n_iter=4, init="uniform")
    g = est.public_plan((100, 2))
    events = events_for_guarantee(g, "DPLloyd")
    assert [e.kind for e in events] == ["laplace"] * 4
    assert events[0].noise_multiplier == pytest.approx(4.0)
    conv = convert_events(events, "replace")
    assert conv[0].noise_multiplier == pytest.approx(2.0) and conv[0].relation == "replace"
    acc = account_plan([est], (100, 2), "replace")
    assert acc.basic == pytest.approx((2.0, 0.0))  # the ledger's (2 eps, 0)
    assert acc.charge[0] == pytest.approx(2.0)


def test_dp_taucc_events_and_row_cap_conversion():
    est = DPTauCoClustering(3, 3, epsilon=1.0, n_iter=2, row_cap=5)
    g = est.public_plan((60, 40))
    kinds = [e.kind for e in events_for_guarantee(g, "DPTauCoClustering")]
    assert kinds.count("laplace") == 4 and kinds.count("epsilon_delta") == 4
    acc = account_plan([est], (60, 40), "replace")
    assert acc.basic == pytest.approx((10.0, 0.0))  # ceil(2 * 5 / 1) = 10 x eps
    no_cap = DPTauCoClustering(3, 3, epsilon=1.0, n_iter=2)
    with pytest.raises(RelationError):
        account_plan([no_cap], (60, 40), "replace")


def test_gaussian_sketch_is_a_gaussian_event_and_zcdp_shares_are_not():
    ckm = CompressiveKMeans(
        n_clusters=2, epsilon=1.0, bounds=(-3, 3), mechanism="gaussian", delta=1e-6
    )
    ev = events_for_guarantee(ckm.public_plan((100, 2)), "CompressiveKMeans")
    assert [e.kind for e in ev] == ["gaussian"]
    assert ev[0].noise_multiplier == pytest.approx(analytic_gaussian_sigma(1.0, 1e-6, 1.0))
    shares = Guarantee(
        1.0,
        1e-6,
        "approx",
        "replace",
        mechanisms=[(f"Gaussian round {t} (zCDP share)", 0.1, 1e-7, 1.0) for t in range(10)],
    )
    ev = events_for_guarantee(shares, "SuLQSubspaceClustering")
    assert len(ev) == 1 and ev[0].kind == "epsilon_delta" and ev[0].epsilon == 1.0


def test_replace_release_refused_on_add_remove_unit():
    ckm = CompressiveKMeans(n_clusters=2, epsilon=1.0, bounds=(-3, 3))
    with pytest.raises(RelationError):
        account_plan([ckm], (100, 2), "add_remove")


def test_not_private_release_refused():
    with pytest.raises(ValueError, match="not private"):
        account_guarantees([("X", Guarantee(math.inf, 1.0, "none", None), {})])


# ---- Curator.release_plan --------------------------------------------------------------------
# one generator for the whole module: each call draws new records, as the tests were written
_DATA_RNG = np.random.default_rng(5)


def _data(rng=_DATA_RNG):
    return np.vstack([rng.normal(-2, 0.3, (150, 2)), rng.normal(2, 0.3, (150, 2))])


def _plan():
    return [
        CompressiveKMeans(
            n_clusters=2,
            epsilon=1.0,
            bounds=(-4, 4),
            mechanism="gaussian",
            delta=1e-7,
            sketch_size=40,
            n_replicates=1,
        ),
        CompressiveKMeans(
            n_clusters=2,
            epsilon=1.0,
            bounds=(-4, 4),
            mechanism="gaussian",
            delta=1e-7,
            sketch_size=60,
            n_replicates=1,
        ),
        DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-4, 4), n_iter=3),
    ]


def test_committed_plan_charges_its_computed_cost_once():
    ledger = Ledger(10.0, 1e-5)
    cur = Curator(_data(), ledger)
    plan = _plan()
    acc = account_plan(plan, (300, 2), "replace")
    releases = cur.release_plan(plan)
    assert len(ledger.history) == 1
    assert ledger.spent == pytest.approx(acc.charge)
    assert acc.charge[0] < acc.basic[0]  # tight total below the sum (3.0)
    assert len(releases) == 3
    assert {r.charge_id for r in releases} == {ledger.history[0].id}
    assert releases[2].cluster_centers_.shape == (2, 2)
    assert all(r.cost == acc.charge for r in releases)
    assert len(cur.releases()) == 3
    with pytest.raises(PrivacyRefused):  # already released: refused, no charge
        cur.release_plan(plan)
    assert len(ledger.history) == 1


def test_plan_that_does_not_fit_charges_nothing_and_runs_nothing(monkeypatch):
    from privclust.core.release.prepared import PreparedRelease

    ledger = Ledger(1.0, 1e-5)
    cur = Curator(_data(), ledger)
    ran = []
    monkeypatch.setattr(PreparedRelease, "compute", lambda self, X: ran.append(self))
    with pytest.raises(BudgetExceeded):
        cur.release_plan(_plan())
    assert ledger.spent == (0.0, 0.0) and ledger.history == [] and ran == []
    assert cur.releases() == []


def test_plan_with_an_invalid_entry_is_refused_before_any_charge():
    ledger = Ledger(10.0, 1e-5)
    cur = Curator(_data(), ledger)
    bad = _plan() + [DPLloyd(n_clusters=2, epsilon=-1.0, bounds=(-4, 4))]
    with pytest.raises(ValueError):
        cur.release_plan(bad)
    dup = [DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-4, 4))] * 2
    with pytest.raises(PrivacyRefused):
        cur.release_plan(dup)
    assert ledger.history == []


# ---- risk in words ---------------------------------------------------------------------------
def test_risk_numbers():
    assert odds_factor(1.0) == pytest.approx(math.e)
    assert max_posterior(0.5, math.log(3)) == pytest.approx(0.75)
    rows = risk_table()
    assert [r["epsilon"] for r in rows] == [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
    assert rows[2]["max_posterior_0.5"] == pytest.approx(math.e / (1 + math.e))
    assert "2.72" in risk_sentence(1.0) and "73.1%" in risk_sentence(1.0)
    with pytest.raises(ValueError):
        max_posterior(1.0, 1.0)
