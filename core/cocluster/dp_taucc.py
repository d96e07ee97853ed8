"""DP-tauCC: differentially private co-clustering under the ``cell`` relation ([BP25]).

Sources: [BP25] = Battaglia & Pensa, "Differentially private associative co-clustering", SDM 2025:
Sec. 4.1 (neighbouring = one unit of one cell; sensitivity of the
table, Eq. (4.11); utility sigma, Eq. (4.9); its range Delta, Eq. (4.10)), Sec. 4.2 (Alg. 1 main
loop, Alg. 2 DP-computeT, Alg. 3 DP-updatePart, RandomMatrix), Sec. 4.3 (complexity; here
O(I * (nnz(A) * (K + L) + (n + m) * K * L)) with sparse A), Sec. 3.1 (Laplace and range-based
exponential mechanisms, Defs. 3-4; sequential composition is invoked in Sec. 4.1).

Pieces (all batched over S independent runs of the same matrix, for audits; a fit is S = 1):

* :func:`update_part` - [BP25] Alg. 3: every object draws its cluster with the range-based
  exponential mechanism ([BP25] Def. 4; Dong, Durfee & Rogers 2020; Gumbel-max, no factor 2)
  on the utilities sigma(y_i, p_k) of
  Eq. (4.9), range sensitivity Delta of Eq. (4.10); clusters that receive no object are deleted,
  and a single surviving cluster is split by moving a random ceil(1%) of the objects (the authors'
  data-independent repair).
* :func:`compute_table` - [BP25] Alg. 2: T = R^T A C + Lap(c / eps1) per cell, clamped at 0,
  all-zero rows deleted (their members are unassigned until the next row update).
* :func:`dp_taucc_runs` - [BP25] Alg. 1 with eps' = eps / (2 I) (the paper prints eps / (2T),
  T being its iteration count I), eps1 = (1 - h) eps', eps2 = h eps'. The initial column draw
  stands in for iteration 1's column draw, so a fit makes 2I assignment releases and 2I table
  releases: eps2 + (2 eps1 + eps2) + (I - 1)(2 eps1 + 2 eps2) = 2I (eps1 + eps2) = eps.
  [BP25] Alg. 1 (lines 6-13) and the authors' code make the same 2I draws. Counting a separate
  initial draw plus I column draws (2I + 1 assignments at eps2) would spend eps + eps2, more
  than the budget, so we do not.

Clusters live in fixed slots (K0 row slots, L0 column slots) with a live mask, so deletions keep
array shapes fixed; the estimator compacts the slots when it publishes.
"""

import math
import numbers
from collections import namedtuple

import numpy as np

from ..privacy import as_generator, exponential_mechanism, laplace
from ._aggregate import occupancy, project, table
from ._inputs import check_count_matrix, check_n_clusters
from ._tau import prototype_weights, utility_range
from .initial_partitions import random_matrix

#: Delta below this counts as zero: the utilities cannot depend on the data, sample uniformly.
_TINY_RANGE = 1e-12

DPTauCCRuns = namedtuple(
    "DPTauCCRuns", "row_slots row_alive col_slots col_alive table row_profiles"
)
DPTauCCRuns.__doc__ = """Raw state of S DP-tauCC runs: slot labels (S, n) and (S, m), live masks
(S, K0) and (S, L0), the released noisy tables (S, K0, L0) (zero in dead slots) and the NON-PRIVATE
row profiles A.C (S, n, L0) (kept only for the evaluation-only assignment)."""


def _utilities(Y, weights):
    """sigma(y_i, p_k) = sum_l y_il B_kl for every object i and prototype k: (S, N, K)."""
    if isinstance(Y, np.ndarray) and Y.ndim == 3:
        return np.einsum("snl,skl->snk", Y, weights)
    S, K, L = weights.shape
    U = np.asarray(Y @ weights.transpose(2, 0, 1).reshape(L, S * K))
    return U.reshape(Y.shape[0], S, K).transpose(1, 0, 2)


def assignment_utilities(Y, prototypes, proto_alive=None, feature_alive=None):
    """Utilities of UpdatePart divided by their range sensitivity Delta ([BP25] Alg. 3 lines 1-6;
    Sec. 4.1 Eqs. (4.9)-(4.10)).

    Y: (S, N, L') aggregated profiles, or one (N, L') matrix (dense or sparse) shared by all
    runs; prototypes: (S, K', L') public noisy tables. Returns (S, N, K') values u / Delta,
    shifted so that each object's best candidate is at 0 (the draw is unchanged). Their change
    under a unit change of one cell has range at most 1, so the range-based exponential
    mechanism with sensitivity ``cell_bound`` applies. Dead prototypes get -inf; if T_tot <= 0 or
    Delta <= 1e-12 every live candidate gets 0 (uniform draw).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1, Eqs. (4.9)-(4.10); Alg. 3.
    """
    pk, B, delta = prototype_state(prototypes, proto_alive, feature_alive)
    return scale_utilities(_utilities(Y, B), pk, delta)


def prototype_state(prototypes, proto_alive=None, feature_alive=None):
    """(live mask (S, K'), weights B (S, K', L') of Eq. (4.9), range Delta (S,) of Eq. (4.10))
    of public noisy prototypes: what UpdatePart needs besides the data ([BP25] Alg. 3)."""
    P = np.asarray(prototypes, dtype=np.float64)
    S, K, L = P.shape
    pk = np.ones((S, K), bool) if proto_alive is None else np.asarray(proto_alive, bool)
    B = prototype_weights(np.where(pk[:, :, None], P, 0.0))
    return pk, B, utility_range(B, pk, feature_alive)


def scale_utilities(U, pk, delta):
    """Utilities U (S, N, K') divided by Delta, dead prototypes at -inf, each object's best
    candidate at 0 (see :func:`assignment_utilities`)."""
    usable = (delta > _TINY_RANGE)[:, None, None]
    scaled = np.where(usable, U / np.where(usable[:, 0, 0], delta, 1.0)[:, None, None], 0.0)
    scaled = np.where(pk[:, None, :], scaled, -np.inf)
    # A per-object constant does not change the draw; with the best candidate at 0 the logits
    # eps * u / c are <= 0 and cannot overflow for any eps (very negative ones become -inf).
    return scaled - scaled.max(axis=2, keepdims=True)


def _repair_single_cluster(labels, alive, rng):
    """Where only one cluster is live, move a random ceil(1%) of the objects to a dead slot.

    Data-independent (reads only the released labels), so it is post-processing. [BP25]
    Sec. 4.2 is silent on a run that collapses to one cluster; the authors' public code repairs
    it the same way (in ``_check_clustering``), and we follow it so that the next update still
    has two prototypes to choose from.
    """
    runs = np.flatnonzero(alive.sum(axis=1) == 1)
    if runs.size == 0:
        return labels, alive
    N = labels.shape[1]
    n_move = math.ceil(0.01 * N)
    movers = np.argpartition(rng.random((runs.size, N)), n_move - 1, axis=1)[:, :n_move]
    target = np.argmin(alive[runs], axis=1)
    labels[runs[:, None], movers] = target[:, None]
    alive[runs, target] = True
    return labels, alive


def update_part(Y, prototypes, epsilon, rng, cell_bound=1.0, proto_alive=None, feature_alive=None):
    """UpdatePart ([BP25] Alg. 3, Sec. 4.1-4.2): epsilon-DP draw per object.

    Returns (labels (S, N) slot indices, alive (S, K') slots that received objects). A unit change
    of one cell moves the utilities of one object only, so the call is epsilon-DP (parallel
    composition over objects).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1-4.2, Alg. 3.
    Dong, J., Durfee, D. and Rogers, R. (2020). Optimal differential privacy composition for
        exponential mechanisms. ICML 2020.
    """
    U = assignment_utilities(Y, prototypes, proto_alive, feature_alive)
    labels = exponential_mechanism(U, epsilon, cell_bound, rng, range_based=True)
    return _occupied(labels, U.shape[2], rng)


def _occupied(labels, n_slots, rng):
    """(labels, alive) after Alg. 3's deletion of empty clusters and the single-cluster repair."""
    alive = occupancy(labels, n_slots) > 0
    return _repair_single_cluster(labels, alive, rng)


def compute_table(row_profiles, row_labels, row_alive, col_alive, epsilon, rng, cell_bound=1.0):
    """ComputeT ([BP25] Alg. 2, Sec. 4.1 Eq. (4.11) and Sec. 4.2): T = R^T (A C) +
    Lap(c / epsilon), clamped at 0 (epsilon-DP).

    The L1 sensitivity of R^T A C under ``cell`` is c. Dead slots are zeroed; rows that end
    all-zero are deleted (unless every row would be), which is post-processing.
    Returns (table (S, K0, L0), row_alive).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.1, Eq. (4.11); Alg. 2.
    """
    T = table(row_profiles, row_labels, row_alive.shape[1], keep=row_alive)
    return noisy_table(T, row_alive, col_alive, epsilon, rng, cell_bound)


def noisy_table(T, row_alive, col_alive, epsilon, rng, cell_bound=1.0):
    """The exact contingency table T (S, K0, L0) released as in :func:`compute_table`."""
    noisy = np.maximum(laplace(T, cell_bound, epsilon, rng), 0.0)
    noisy *= row_alive[:, :, None] & col_alive[:, None, :]
    keep = row_alive & (noisy.sum(axis=2) > 0)
    none_left = ~keep.any(axis=1)
    keep[none_left] = row_alive[none_left]
    return noisy, keep


def budget_schedule(epsilon, n_iter, assignment_share=0.9):
    """The (name, epsilon) releases of one DP-tauCC fit, in order ([BP25] Sec. 4.2, Alg. 1 lines
    2-3 and 6-13): 2I assignments at h * eps / (2I) and 2I tables at (1 - h) * eps / (2I),
    summing to eps (the paper's "eps / 2T" is eps / (2 I), T its iteration count).

    Every release has sensitivity ``cell_bound`` in its own units: the range sensitivity of the
    utilities divided by Delta (assignments) or the L1 sensitivity of T (tables).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.2, Alg. 1.
    See docs/algorithms.md, section 6.
    """
    half = epsilon / (2 * n_iter)
    eps_assign, eps_table = assignment_share * half, (1.0 - assignment_share) * half
    plan = [("assign columns (initial)", eps_assign)]
    for it in range(1, n_iter + 1):
        if it > 1:
            plan.append((f"assign columns (iteration {it})", eps_assign))
        plan.append((f"table after columns (iteration {it})", eps_table))
        plan.append((f"assign rows (iteration {it})", eps_assign))
        plan.append((f"table after rows (iteration {it})", eps_table))
    return plan


def _check_params(epsilon, n_iter, cell_bound, assignment_share):
    for name, value in (("epsilon", epsilon), ("cell_bound", cell_bound)):
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    if isinstance(n_iter, bool) or not isinstance(n_iter, numbers.Integral) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}")
    if (
        isinstance(assignment_share, bool)
        or not isinstance(assignment_share, numbers.Real)
        or not 0 < assignment_share < 1
    ):
        raise ValueError(f"assignment_share must be in (0, 1), got {assignment_share!r}")


class CountMatrix:
    """The statistics of a count matrix A held in memory that DP-tauCC reads (what
    :class:`~privclust.core.cocluster.partitioned.PartitionedCounts` computes as partition sums
    on Dask): the column utilities and profiles (A^T products), the exact tables R^T A C, and
    the rows' exponential-mechanism draws."""

    def __init__(self, A, AT):
        self.A, self.AT, self.shape = A, AT, A.shape
        self.row_profiles = None

    def column_utilities(self, B):
        """sigma(a^j, p_l) = sum_i A_ij B_li for every column j: (S, m, L)."""
        return _utilities(self.AT, B)

    def column_profiles(self, R, n_slots, keep):
        """A^T R: (S, m, K) column profiles over the row clusters."""
        return project(self.AT, R, n_slots, keep=keep)

    def set_columns(self, C, n_slots, keep):
        """The column clusters the next tables and row draws aggregate over (Y = A C)."""
        self.row_profiles = project(self.A, C, n_slots, keep=keep)

    def table(self, R, n_slots, keep):
        """The exact contingency table R^T A C: (S, K, L)."""
        return table(self.row_profiles, R, n_slots, keep=keep)

    def row_labels(self, pk, B, delta, epsilon, cell_bound, rng):
        """Every row's exponential-mechanism draw among the live row prototypes: (S, n)."""
        U = scale_utilities(_utilities(self.row_profiles, B), pk, delta)
        return exponential_mechanism(U, epsilon, cell_bound, rng, range_based=True)


def run_validated(
    A,
    AT,
    K0,
    L0,
    epsilon,
    n_iter,
    rng,
    size=1,
    cell_bound=1.0,
    assignment_share=0.9,
    accountant=None,
):
    """DP-tauCC on validated inputs (A float64 CSR/ndarray and A^T); see :func:`dp_taucc_runs`."""
    return run_counts(
        CountMatrix(A, AT),
        K0,
        L0,
        epsilon,
        n_iter,
        rng,
        size,
        cell_bound,
        assignment_share,
        accountant,
    )


def run_counts(
    counts,
    K0,
    L0,
    epsilon,
    n_iter,
    rng,
    size=1,
    cell_bound=1.0,
    assignment_share=0.9,
    accountant=None,
):
    """DP-tauCC ([BP25] Alg. 1) reading the data only through ``counts`` (a
    :class:`CountMatrix`, or its Dask counterpart): every random draw is made here, from
    ``rng``, in the same order whichever holds the data."""
    n, m = counts.shape
    plan = iter(budget_schedule(epsilon, n_iter, assignment_share))

    def release():
        name, eps = next(plan)
        if accountant is not None:
            accountant.spend(name, eps, sensitivity=cell_bound)
        return eps

    R, _, P0 = random_matrix(n, m, K0, L0, rng, size=size)
    row_alive = np.ones((size, K0), bool)
    pk, B, delta = prototype_state(P0)
    U = scale_utilities(counts.column_utilities(B), pk, delta)
    C, col_alive = _occupied(
        exponential_mechanism(U, release(), cell_bound, rng, range_based=True), L0, rng
    )
    T = None
    for it in range(1, n_iter + 1):
        if it > 1:
            Yc = counts.column_profiles(R, K0, row_alive)
            C, col_alive = update_part(
                Yc,
                T.transpose(0, 2, 1),
                release(),
                rng,
                cell_bound,
                proto_alive=col_alive,
                feature_alive=row_alive,
            )
        counts.set_columns(C, L0, col_alive)
        T, row_alive = noisy_table(
            counts.table(R, K0, row_alive), row_alive, col_alive, release(), rng, cell_bound
        )
        pk, B, delta = prototype_state(T, row_alive, col_alive)
        R, row_alive = _occupied(
            counts.row_labels(pk, B, delta, release(), cell_bound, rng), K0, rng
        )
        T, row_alive = noisy_table(
            counts.table(R, K0, row_alive), row_alive, col_alive, release(), rng, cell_bound
        )
    return DPTauCCRuns(R, row_alive, C, col_alive, T, counts.row_profiles)


def dp_taucc_runs(
    X,
    n_row_clusters,
    n_col_clusters,
    epsilon,
    n_iter=4,
    random_state=None,
    size=1,
    cell_bound=1.0,
    assignment_share=0.9,
):
    """Run DP-tauCC ([BP25] Alg. 1, Sec. 4.2) ``size`` times independently on
    X (batched form).

    X: non-negative counts (n, m), dense or scipy.sparse (only A.C and A^T.R products are
    formed). Each run is epsilon-DP under ``cell`` (one unit of one cell, scaled by
    ``cell_bound``). Returns the raw slot state :class:`DPTauCCRuns` (used by audits and
    benchmarks; :class:`DPTauCoClustering` is the estimator).

    References
    ----------
    Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
        SDM 2025, Sec. 4.2, Alg. 1.
    """
    _check_params(epsilon, n_iter, cell_bound, assignment_share)
    A, AT = check_count_matrix(X)
    K0 = check_n_clusters(n_row_clusters, "n_row_clusters", A.shape[0], "rows")
    L0 = check_n_clusters(n_col_clusters, "n_col_clusters", A.shape[1], "columns")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    return run_validated(
        A,
        AT,
        K0,
        L0,
        epsilon,
        n_iter,
        as_generator(random_state),
        int(size),
        cell_bound,
        assignment_share,
    )
