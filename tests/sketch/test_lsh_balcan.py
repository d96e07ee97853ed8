"""LSHCoresetKMeans (Chang & Kamath 2021) and BalcanKMeans (DPHD, Balcan et al. ICML 2017):
accounting, validation, utility on a seeded mixture, Curator releases, and statistical audits of
their mechanisms on neighbouring data sets (the tree's per-level noisy counts, the leaf sums,
DPHD's exponential-mechanism swap and its noisy-mean recovery)."""

import importlib
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.stats import norm

from privclust.core import BalcanKMeans, Curator, LSHCoresetKMeans
from privclust.core.data import Dataset
from privclust.core.metrics import relative_sse
from privclust.core.privacy import Ledger
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.sketch.prefix_tree import gdp_mu, grow_tree, noisy_counts
from privclust.core.sketch.public_ball import clip_records, noisy_group_sums

lsh = importlib.import_module("privclust.core.sketch.lsh_coreset")
bal = importlib.import_module("privclust.core.sketch.balcan")
TRUTH = np.array([[-6.0, -6, 0], [6, -6, 2], [-6, 6, -2], [6, 6, 0]])
ESTIMATORS = [LSHCoresetKMeans, BalcanKMeans]


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    return TRUTH[rng.integers(0, 4, 20000)] + 0.7 * rng.normal(size=(20000, 3))


def gaussian_epsilon(mu, delta):
    """The epsilon at which a mu-GDP (Gaussian) mechanism is (epsilon, delta)-DP, exactly
    (Balle & Wang 2018, Thm. 8): the claim a single Gaussian step must not exceed."""

    def excess(eps):
        return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu) - delta

    return 0.0 if excess(0.0) <= 0 else brentq(excess, 0.0, 50.0 * mu + 50.0)


def test_gdp_mu_matches_the_gaussian_curve():
    mu = gdp_mu(1.0, 1e-6)
    assert gaussian_epsilon(mu, 1e-6) == pytest.approx(1.0, rel=1e-6)


# ------------------------------------------------------------------------ fits and accounting
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_recovers_a_seeded_mixture(blobs, cls):
    """At epsilon = 1 both land near the true centres (a broken tree, sum or recovery step
    gives ratios far above 1.3: e.g. an unshifted centre or unscaled noise)."""
    ratios = [
        relative_sse(
            blobs,
            cls(4, epsilon=1.0, bounds=(-10, 10), random_state=seed).fit(blobs).cluster_centers_,
            TRUTH,
        )
        for seed in range(3)
    ]
    assert max(ratios) < 1.3 and np.median(ratios) < 1.15


def test_lsh_laplace_and_replace_variants(blobs):
    """Pure DP composes the 21 levels linearly, so it needs more epsilon than the Gaussian
    default (measured at epsilon = 2, replace-one: ratios 1.3-3.4; at 8: 1.03-1.12)."""
    ratios = []
    for seed in range(3):
        est = LSHCoresetKMeans(
            4,
            epsilon=8.0,
            delta=0.0,
            mechanism="laplace",
            bounds=(-10, 10),
            neighbouring="replace",
            random_state=seed,
        ).fit(blobs)
        ratios.append(relative_sse(blobs, est.cluster_centers_, TRUTH))
    assert est.privacy_.kind == "pure" and est.privacy_.neighbouring == "replace"
    assert est.privacy_.epsilon == pytest.approx(8.0)
    assert len(est.privacy_.mechanisms) == lsh.DEFAULT_DEPTH + 2
    assert max(ratios) < 1.3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_accounts_and_charges_the_ledger(blobs, cls):
    ledger = Ledger(10.0, 1e-3)
    est = cls(4, epsilon=1.0, bounds=(-10, 10), random_state=0, ledger=ledger).fit(blobs)
    g = est.privacy_
    assert g.kind == "approx" and g.neighbouring == "add_remove"
    assert g.epsilon == pytest.approx(1.0) and g.delta == pytest.approx(1e-6)
    # an add/remove release on a replace-one ledger: (2 eps, (1 + e^eps) delta)
    assert ledger.spent[0] == pytest.approx(2.0)
    assert ledger.spent[1] == pytest.approx((1 + math.e) * 1e-6)
    assert not hasattr(est, "fit_predict")
    assert est.cluster_centers_.shape == (4, 3) and np.all(np.abs(est.cluster_centers_) <= 10)


def test_lsh_releases_a_weighted_coreset_inside_the_box(blobs):
    est = LSHCoresetKMeans(4, epsilon=1.0, bounds=(-10, 10), random_state=0).fit(blobs)
    pts, w = est.coreset_points_, est.coreset_weights_
    assert pts.shape == (w.size, 3) and w.size >= 4 and np.all(w > 0)
    assert np.all(np.abs(pts) <= 10)
    # the weights are noisy counts of disjoint buckets: about n in total
    assert abs(w.sum() - len(blobs)) < 0.1 * len(blobs)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_sparse_document_word_matrix(cls):
    rng = np.random.default_rng(3)
    topics = rng.dirichlet(np.full(200, 0.05), size=3)
    rows = [rng.multinomial(60, topics[t]) for t in rng.integers(0, 3, 600)]
    X = sp.csr_matrix(np.array(rows, dtype=float))
    Xn = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(1))))
    est = cls(3, epsilon=5.0, radius=1.0, random_state=0).fit(Xn)
    dense = cls(3, epsilon=5.0, radius=1.0, random_state=0).fit(Xn.toarray())
    assert np.allclose(est.cluster_centers_, dense.cluster_centers_)
    assert np.array_equal(est.predict(Xn), dense.predict(Xn.toarray()))
    with pytest.raises(ValueError, match="contains 0"):
        cls(3, bounds=(1.0, 2.0)).fit(X)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_curator_release(blobs, cls):
    ledger = Ledger(5.0, 1e-3)
    release = Curator(Dataset(blobs[:3000], public=False), ledger).release(
        cls(4, epsilon=1.0, bounds=(-10, 10))
    )
    assert release.cluster_centers_.shape == (4, 3)
    assert release.guarantee.epsilon == pytest.approx(1.0)
    assert ledger.spent[0] == pytest.approx(2.0)


# --------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "params,match",
    [
        (dict(bounds=None), "exactly one"),
        (dict(radius=3.0), "exactly one"),
        (dict(bounds=None, radius=-1.0), "radius"),
        (dict(bounds=(1, 0)), "bounds"),
        (dict(n_clusters=0), "n_clusters"),
        (dict(delta=0.0), "delta"),
        (dict(neighbouring="cell"), "neighbouring"),
        (dict(n_init=0), "n_init"),
    ],
)
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_common_validation(cls, params, match, sealed):
    base = dict(n_clusters=3, epsilon=1.0, bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match=match):
        cls(**{**base, **params}).fit(sealed((50, 2)))


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(count_share=1.0), "count_share"),
        (dict(count_share="a"), "count_share"),
        (dict(mechanism="geometric"), "mechanism"),
        (dict(mechanism="laplace"), "delta must be 0"),
        (dict(max_depth=0), "max_depth"),
        (dict(max_depth=63), "max_depth"),
    ],
)
def test_lsh_validation(params, match, sealed):
    with pytest.raises(ValueError, match=match):
        LSHCoresetKMeans(3, bounds=(-1.0, 1.0), **params).fit(sealed((50, 2)))


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(shares=(0.5, 0.5, 0.5)), "shares"),
        (dict(shares=(0.5, 0.5)), "shares"),
        (dict(shares=(0.0, 0.3, 0.7)), "shares"),
        (dict(n_swaps=-1), "n_swaps"),
        (dict(projection_dim=0), "projection_dim"),
        (dict(max_depth=0), "max_depth"),
        (dict(n_refine=-1), "n_refine"),
    ],
)
def test_balcan_validation(params, match, sealed):
    with pytest.raises(ValueError, match=match):
        BalcanKMeans(3, bounds=(-1.0, 1.0), **params).fit(sealed((50, 2)))


def test_balcan_projection_dim_uses_n_only_when_public():
    assert bal.default_projection_dim(16) == 8
    assert bal.default_projection_dim(4) == 4
    assert bal.default_projection_dim(16, 20000) == 8 and bal.default_projection_dim(16, 100) == 4
    est = BalcanKMeans(3, bounds=(-1, 1), neighbouring="replace")
    assert est.plan(100, 16).epsilon == pytest.approx(1.0)
    with pytest.raises(ValueError, match="number of records"):
        BalcanKMeans(3, bounds=(-1, 1)).plan(100, 16)


# ------------------------------------------------------------------------- tree structure
def test_tree_counts_move_by_one_per_level_when_a_record_is_added(rng):
    """Sensitivity of the tree's counts: with the same noise and the same shape, adding one
    record changes exactly one released count per level, by exactly 1."""
    for _ in range(20):
        bits = rng.random((60, 4)) < 0.5
        extra = rng.random((1, 4)) < 0.5
        a = grow_tree(bits, 1e-9, "gaussian", -1.0, lambda root: 0.0, np.random.default_rng(5))
        b = grow_tree(
            np.vstack([bits, extra]),
            1e-9,
            "gaussian",
            -1.0,
            lambda root: 0.0,
            np.random.default_rng(5),
        )
        assert [len(c) for c in a.counts] == [1, 2, 4, 8, 16] == [len(c) for c in b.counts]
        for ca, cb in zip(a.counts, b.counts, strict=True):
            diff = cb - ca
            assert np.sum(np.abs(diff) > 0.5) == 1 and np.isclose(diff.max(), 1.0)


def test_tree_leaves_are_disjoint_and_pruned_buckets_have_no_leaf(rng):
    bits = rng.random((500, 10)) < 0.5
    tree = grow_tree(bits, 1.0, "gaussian", 5.0, lambda root: 40.0, rng)
    leaves = tree.leaves
    assert len(leaves) == tree.leaf_counts.size == tree.record_leaf.max() + 1
    # each record's leaf is the bucket of its own prefix: same bits up to the leaf's level
    codes = {}
    for leaf_id, (level, index) in enumerate(leaves):
        path, lv, i = [], level, index
        while lv > 0:
            path.append(tree.bits[lv][i])
            i, lv = tree.parents[lv][i], lv - 1
        codes[leaf_id] = path[::-1]
    for r in np.flatnonzero(tree.record_leaf >= 0)[:100]:
        path = codes[tree.record_leaf[r]]
        assert list(bits[r, : len(path)]) == path
    assert np.all(tree.leaf_counts >= 5.0)


def test_balcan_cell_centres_lie_in_their_cells(rng):
    """DPHD's candidates: the centre of each leaf cell hashes to the leaf's own prefix, i.e. it
    lies in the cell that holds the leaf's records."""
    p, depth = 3, 9
    Y = rng.uniform(-1.0, 1.0, size=(2000, p))
    low, side = -1.0 - rng.uniform(0.0, 1.0, size=p), 3.0
    bits = bal.grid_bits(Y, low, side, depth)
    tree = grow_tree(bits, 1e-6, "gaussian", 0.5, lambda root: 20.0, rng)
    centres = bal.cell_centres(tree, low, side, p)
    levels = np.array([lv for lv, _ in tree.leaves])
    assert centres.shape == (len(levels), p) and levels.max() > p
    centre_bits = bal.grid_bits(centres, low, side, depth)
    for r in np.flatnonzero(tree.record_leaf >= 0):
        j = tree.record_leaf[r]
        assert np.array_equal(bits[r, : levels[j]], centre_bits[j, : levels[j]])


# ---------------------------------------------------------------------------------- audits
def _count_audit(scale, seed):
    """One tree level: D has 3 records in a branching bucket (children 0 and 1), D' adds one in
    child 0; the attacker sees child 0's noisy count (the plan's per-level scale)."""
    rng = np.random.default_rng(seed)
    out_a = noisy_counts(np.array([0, 1, 1]), 2, scale, "gaussian", rng, size=200_000)[:, 0]
    out_b = noisy_counts(np.array([0, 1, 1, 0]), 2, scale, "gaussian", rng, size=200_000)[:, 0]
    return epsilon_lower_bound(out_a, out_b, delta=1e-3, rng=rng)


def _lsh_count_scale(**kw):
    args = dict(
        epsilon=20.0,
        delta=1e-6,
        depth=20,
        count_share=0.2,
        radius=1.0,
        sum_l1=1.0,
        mechanism="gaussian",
        neighbouring="add_remove",
    )
    args.update(kw)
    return lsh.lsh_noise(**args)


@pytest.mark.audit
def test_lsh_level_counts_audit_passes():
    """Claim: each level's count vector is a Gaussian step of mu_l = 1/sigma_c (the plan's
    levels compose to the fit's mu); eps_lb at delta = 1e-3 must stay below that step's
    epsilon at 1e-3. Measured (seed 0): lower bound 0.64, claim 0.78; the planted bug below
    gives 3.62."""
    sigma = _lsh_count_scale()[0]
    assert _count_audit(sigma, 0) <= gaussian_epsilon(1.0 / sigma, 1e-3)


@pytest.mark.audit
def test_lsh_level_counts_audit_catches_unsplit_levels():
    """Planted bug: the count budget not divided over the 21 levels (sigma / sqrt(21))."""
    sigma = _lsh_count_scale()[0]
    assert _count_audit(sigma / math.sqrt(21), 0) > gaussian_epsilon(1.0 / sigma, 1e-3)


def _sum_audit(scale, radius, seed):
    """A leaf's noisy sum: D = one record on the ball's boundary, D' = that record and one more
    at the opposite boundary, both clipped to the public ball; first coordinate observed."""
    rng = np.random.default_rng(seed)
    centre = np.zeros(2)
    a = np.array([[radius * 3.0, 0.0]])  # clipped to norm r
    b = np.vstack([a, [[-radius * 5.0, 0.0]]])
    outs = []
    for X in (a, b):
        Xb, s = clip_records(X, None, None, centre, radius)
        outs.append(
            noisy_group_sums(
                Xb, s, centre, np.zeros(len(X), dtype=int), 1, scale, "gaussian", rng, size=200_000
            )[:, 0, 0]
        )
    return epsilon_lower_bound(*outs, delta=1e-3, rng=rng)


@pytest.mark.audit
def test_lsh_leaf_sums_audit_passes_and_catches_half_sensitivity():
    """Leaf sums at epsilon = 2 (the step's claim is then 1.04 at delta = 1e-3, inside the
    audit's resolution at 200,000 runs per side). Measured: 0.69 correct, 1.54 with the bug."""
    radius = 3.0
    sigma = _lsh_count_scale(radius=radius, epsilon=2.0)[1]
    claim = gaussian_epsilon(radius / sigma, 1e-3)
    assert _sum_audit(sigma, radius, 1) <= claim
    assert _sum_audit(sigma / 2.0, radius, 1) > claim  # bug: sensitivity r / 2


def _balcan_scales(neighbouring="add_remove"):
    return bal.balcan_noise(20.0, 1e-6, (0.2, 0.1, 0.7), 24, 1.0, 1.0, 2, neighbouring)[0]


@pytest.mark.audit
def test_balcan_partition_counts_audit():
    """Measured: 0.52 against a claim of 0.68; 1.64 with the planted bug."""
    sigma = _balcan_scales()[0]
    claim = gaussian_epsilon(1.0 / sigma, 1e-3)
    assert _count_audit(sigma, 2) <= claim
    assert _count_audit(sigma / 3.0, 2) > claim  # bug: levels not composed


def _swap_audit(em_range, seed, eps=1.0):
    """DPHD's exponential-mechanism swap: 1-D projection, k = 1 centre at 0, pool {0, 1, 2},
    tau^2 = 1. D = {0}, D' = {0, 2}: the added record's truncated cost favours swapping to 2 by
    exactly tau^2 (the range). Categorical output: the chosen swap."""
    rng = np.random.default_rng(seed)
    pool = np.array([[0.0], [1.0], [2.0]])
    outs = [
        bal.choose_swap(Y, pool, np.array([0]), 1.0, eps, em_range, rng, size=200_000)
        for Y in (np.array([[0.0]]), np.array([[0.0], [2.0]]))
    ]
    return epsilon_lower_bound(*outs, categorical=True, rng=rng)


@pytest.mark.audit
def test_balcan_swap_audit_passes():
    """Claim eps = 1 for the step with the plan's range tau^2 (add/remove). Measured lower
    bound 0.60 (the exact ratio here is (1 + e) / 2, ln = 0.62); 1.40 with half the range."""
    em_range = bal.balcan_noise(1.0, 1e-6, (0.2, 0.1, 0.7), 24, 1.0, 1.0, 2, "add_remove")[0][4]
    assert em_range == 1.0
    assert _swap_audit(em_range, 3) <= 1.0


@pytest.mark.audit
def test_balcan_swap_audit_catches_half_range():
    assert _swap_audit(0.5, 3) > 1.0


def _recovery_audit(sigma_count, sigma_sum, seed, radius=2.0):
    """DPHD's recovery: one cluster; D = one record at the ball's boundary, D' adds a second at
    the opposite boundary. Observed: the noisy count, then the first coordinate of the sum."""
    rng = np.random.default_rng(seed)
    centre = np.zeros(2)
    a = np.array([[radius, 0.0]])
    b = np.vstack([a, [[-radius, 0.0]]])
    counts, sums = [], []
    for X in (a, b):
        Xb, s = clip_records(X, None, None, centre, radius)
        c, sm = bal.recovery_stats(
            Xb, s, centre, np.zeros(len(X), dtype=int), 1, sigma_count, sigma_sum, rng, size=200_000
        )
        counts.append(c[:, 0])
        sums.append(sm[:, 0, 0])
    return (
        epsilon_lower_bound(*counts, delta=1e-3, rng=rng),
        epsilon_lower_bound(*sums, delta=1e-3, rng=rng),
    )


@pytest.mark.audit
def test_balcan_recovery_audit():
    """Claims 0.74 (counts) and 1.69 (sums); measured 0.52 and 1.33, and 1.35 and 2.96 with
    half the noise."""
    radius = 2.0
    _, sc, ss, _, _ = bal.balcan_noise(
        4.0, 1e-6, (0.2, 0.1, 0.7), 24, radius, 1.0, 2, "add_remove"
    )[0]
    claim_c, claim_s = gaussian_epsilon(1.0 / sc, 1e-3), gaussian_epsilon(radius / ss, 1e-3)
    lb_c, lb_s = _recovery_audit(sc, ss, 4, radius)
    assert lb_c <= claim_c and lb_s <= claim_s
    bug_c, bug_s = _recovery_audit(sc / 2.0, ss / 2.0, 4, radius)  # bug: half the noise
    assert bug_c > claim_c and bug_s > claim_s
