"""Privacy of DP-tauCC under the ``cell`` relation (Battaglia & Pensa, SDM 2025, Sec. 4): sensitivities on adversarial
cell neighbours, the exact output distribution of UpdatePart against e^eps, a statistical audit
of one whole iteration, and planted bugs that these checks must catch."""

import itertools

import numpy as np
import pytest

import privclust.core.cocluster.dp_taucc as dp
from privclust.core.cocluster._aggregate import project, table
from privclust.core.cocluster._tau import utility_range
from privclust.core.cocluster.initial_partitions import random_matrix
from privclust.core.privacy import exponential_probabilities
from privclust.core.privacy.audit import epsilon_lower_bound


def _cell_neighbours(A):
    """Every neighbour A' = A + e_uv and, where a_uv >= 1, A - e_uv."""
    for u, v in itertools.product(range(A.shape[0]), range(A.shape[1])):
        for step in (1.0, -1.0):
            if A[u, v] + step >= 0:
                B = A.copy()
                B[u, v] += step
                yield u, v, B


def _adversarial_cases(rng, n_cases=12):
    """Small count matrices with zero rows/columns, dead slots and noisy tables with zero
    column sums, zero rows and a zero total."""
    for case in range(n_cases):
        n, m, K, L = rng.integers(3, 6), rng.integers(3, 6), rng.integers(2, 4), rng.integers(2, 4)
        A = rng.poisson(rng.choice([0.3, 3.0, 30.0]), size=(n, m)).astype(float)
        A[rng.integers(n)] = 0.0
        A[:, rng.integers(m)] = 0.0
        rows, cols = rng.integers(K, size=n), rng.integers(L, size=m)
        T = np.maximum(rng.normal(5.0, 6.0, size=(K, L)), 0.0)
        if case % 3 == 0:
            T[:, rng.integers(L)] = 0.0  # colsum 0 -> t_kl / t_.l := 0
        if case % 4 == 1:
            T[rng.integers(K)] = 0.0  # an all-zero prototype
        if case == 5:
            T[:] = 0.0  # T_tot = 0 -> uniform
        row_alive = np.ones(K, bool)
        col_alive = np.ones(L, bool)
        if case % 5 == 2:
            row_alive[rng.integers(K)] = False  # a deleted row cluster (orphaned rows)
        yield A, rows, cols, T, row_alive, col_alive


def test_table_l1_sensitivity_is_one_cell_unit(rng):
    for A, rows, cols, _, row_alive, col_alive in _adversarial_cases(rng):
        K, L = len(row_alive), len(col_alive)
        base = table(project(A, cols[None], L, col_alive[None]), rows[None], K, row_alive[None])
        for _, _, B in _cell_neighbours(A):
            Yb = project(B, cols[None], L, col_alive[None])
            other = table(Yb, rows[None], K, row_alive[None])
            assert np.abs(other - base).sum() <= 1.0 + 1e-12


def _normalised_utilities(Y, P, proto_alive, feature_alive):
    return dp.assignment_utilities(Y, P[None], proto_alive[None], feature_alive[None])[0]


def _worst_utility_move(rng, step):
    """Largest range of the change of utilities/Delta over adversarial cells (must be <= 1),
    checking that only the object owning the changed cell moves."""
    worst = 0.0
    for A, rows, cols, T, row_alive, col_alive in _adversarial_cases(rng):
        if step == "rows":
            M, labels, keep, P, pa, fa = A, cols, col_alive, T, row_alive, col_alive
        else:
            M, labels, keep, P, pa, fa = A.T, rows, row_alive, T.T, col_alive, row_alive
        U = _normalised_utilities(project(M, labels[None], len(keep), keep[None])[0], P, pa, fa)
        for u, v, B in _cell_neighbours(A):
            Mb = B if step == "rows" else B.T
            Yb = project(Mb, labels[None], len(keep), keep[None])[0]
            Ub = _normalised_utilities(Yb, P, pa, fa)
            diff = Ub[:, pa] - U[:, pa]
            moved = np.flatnonzero(np.abs(diff).max(axis=1) > 0)
            assert set(moved) <= {u if step == "rows" else v}
            worst = max(worst, np.ptp(diff, axis=1).max())
    return worst


@pytest.mark.parametrize("step", ["rows", "columns"])
def test_utility_range_sensitivity_on_adversarial_cells(rng, step):
    """A unit change of one cell moves one object's utilities/Delta by a vector of range <= 1."""
    worst = _worst_utility_move(rng, step)
    assert 0.5 < worst <= 1.0 + 1e-9


def test_planted_bug_range_as_max_weight_fails_sensitivity(rng, monkeypatch):
    """Planted bug: Delta taken as the largest weight max B_kl instead of the range over k of
    Eq. (4.10). The sensitivity check must fail."""
    monkeypatch.setattr(dp, "utility_range", lambda B, *a, **k: B.max(axis=(-2, -1)))
    assert _worst_utility_move(rng, "rows") > 1.0 + 1e-6


def test_initial_column_step_sensitivity(rng):
    """The first UpdatePart (Y = A^T, RandomMatrix prototypes) has the same range bound."""
    A = rng.poisson(2.0, size=(6, 5)).astype(float)
    A[2] = 0.0
    _, _, P0 = random_matrix(6, 5, 3, 2, rng, size=1, flip=0.1)
    U = dp.assignment_utilities(A.T, P0)[0]
    for _, v, B in _cell_neighbours(A):
        diff = dp.assignment_utilities(B.T, P0)[0] - U
        assert set(np.flatnonzero(np.abs(diff).max(axis=1) > 0)) <= {v}
        assert np.ptp(diff, axis=1).max() <= 1.0 + 1e-9


A3 = np.array([[5.0, 1.0, 0.0], [0.0, 4.0, 2.0], [1.0, 0.0, 6.0]])
COLS3 = np.array([0, 1, 1])
T3 = np.array([[7.3, 0.4], [0.0, 9.1], [2.2, 5.0]])  # a public noisy table, K = 3, L = 2


def _joint_distribution(A, eps):
    """Exact probabilities of all 3^3 row labellings drawn by UpdatePart (rows independent)."""
    Y = project(A, COLS3[None], 2)
    p = exponential_probabilities(dp.assignment_utilities(Y, T3[None]), eps, 1.0, range_based=True)[
        0
    ]
    outcomes = np.array(list(itertools.product(range(3), repeat=3)))
    return np.prod(p[np.arange(3), outcomes], axis=1)


def _max_log_ratio(eps):
    base = np.log(_joint_distribution(A3, eps))
    return max(
        np.abs(np.log(_joint_distribution(B, eps)) - base).max() for _, _, B in _cell_neighbours(A3)
    )


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_update_part_exact_distribution_within_e_eps(eps):
    worst = _max_log_ratio(eps)
    assert worst <= eps + 1e-9
    assert worst >= 0.5 * eps  # the bound is nearly attained: the test has teeth


def test_planted_bug_half_range_breaks_exact_check(monkeypatch):
    """Planted bug: Delta halved. The exact check must see a ratio above e^eps."""
    monkeypatch.setattr(dp, "utility_range", lambda *a, **k: 0.5 * utility_range(*a, **k))
    assert _max_log_ratio(1.0) > 1.0 + 1e-3


def test_update_part_samples_follow_the_exact_distribution():
    """Gumbel-max draws of update_part match the exact softmax (outcomes using all 3 clusters,
    which the single-cluster repair never produces)."""
    S, eps = 200_000, 1.0
    Y = np.broadcast_to(project(A3, COLS3[None], 2), (S, 3, 2))
    labels, _ = dp.update_part(Y, np.broadcast_to(T3, (S, 3, 2)), eps, np.random.default_rng(5))
    codes = labels @ np.array([9, 3, 1])
    freq = np.bincount(codes, minlength=27) / S
    exact = _joint_distribution(A3, eps)
    distinct = [i for i, o in enumerate(itertools.product(range(3), repeat=3)) if len(set(o)) == 3]
    se = np.sqrt(exact[distinct] * (1 - exact[distinct]) / S)
    assert np.all(np.abs(freq[distinct] - exact[distinct]) <= 5 * se + 1e-4)


@pytest.mark.parametrize("eps", [1e-6, 1.0, 1e6, 1e300])
def test_no_overflow_at_any_epsilon_and_row_total(eps):
    A = np.array([[1e9, 1.0, 0.0, 3e8], [0.0, 2e9, 5.0, 1.0], [7e8, 0.0, 1e9, 0.0]])
    with np.errstate(over="raise", invalid="raise"):
        runs = dp.dp_taucc_runs(A, 2, 2, eps, n_iter=2, random_state=0, size=3)
    assert np.all(np.isfinite(runs.table)) and runs.row_slots.shape == (3, 3)


def _canonical_partition(labels):
    """Code of each run's partition, independent of slot names (first-appearance relabelling)."""
    S, N = labels.shape
    seen = np.full((S, labels.max() + 1), -1)
    count = np.zeros(S, np.int64)
    code = np.zeros(S, np.int64)
    idx = np.arange(S)
    for i in range(N):
        lab = labels[:, i]
        new = seen[idx, lab] < 0
        seen[idx[new], lab[new]] = count[new]
        count[new] += 1
        code = code * N + seen[idx, lab]
    return code


A_AUDIT = np.array([[6, 5, 0, 0], [5, 6, 0, 1], [0, 1, 6, 5], [0, 0, 5, 6]], dtype=float)


def _audit_one_iteration(eps=1.0, n=100_000):
    """eps lower bounds from one DP-tauCC iteration (I = 1) on A and the cell neighbour A + e_12."""
    B = A_AUDIT.copy()
    B[1, 2] += 1
    ra = dp.dp_taucc_runs(A_AUDIT, 2, 2, eps, n_iter=1, random_state=11, size=n)
    rb = dp.dp_taucc_runs(B, 2, 2, eps, n_iter=1, random_state=12, size=n)
    total = epsilon_lower_bound(ra.table.sum(axis=(1, 2)), rb.table.sum(axis=(1, 2)))
    parts = epsilon_lower_bound(
        _canonical_partition(ra.row_slots) * 64 + _canonical_partition(ra.col_slots),
        _canonical_partition(rb.row_slots) * 64 + _canonical_partition(rb.col_slots),
        categorical=True,
    )
    return total, parts


@pytest.mark.audit
def test_audit_one_iteration_on_cell_neighbours():
    total, parts = _audit_one_iteration()
    assert total <= 1.0 and parts <= 1.0


@pytest.mark.audit
def test_planted_bug_unnoised_table_fails_audit(monkeypatch):
    """Planted bug: ComputeT releases R^T A C without Laplace noise. The audit must fail."""
    monkeypatch.setattr(dp, "laplace", lambda value, *args, **kwargs: np.array(value, float))
    total, _ = _audit_one_iteration()
    assert total > 1.0
