"""The Dask mode of DP-tauCC: a count matrix partitioned by rows, contingency sums per partition.

:func:`~privclust.core.cocluster.dp_taucc.run_counts` reads the matrix A only through four
statistics, and each is either a sum over rows or a per-row draw ([BP25] Alg. 1-3):

* the column utilities sum_i A_ij B_li and the column profiles A^T R are sums over rows: every
  partition computes its rows' part, the parts are added on the cluster;
* the contingency table R^T A C is a sum over rows: added the same way, then the driver adds the
  Laplace noise (Alg. 2), once;
* each row's cluster is drawn with the exponential mechanism from its own profile (Alg. 3): the
  driver draws the Gumbel noise of every row from the release's generator, exactly as the
  in-memory draw does, and sends each partition its rows' slice; the partition returns only
  the drawn labels (released, each draw is one of the plan's assignment releases). No worker
  draws noise, and no statistic of a partition reaches the driver unsummed.

Rows are projected per record in the partitions: onto the public box (the Dask data set's),
then, with ``row_cap``, onto integer counts summing to at most the cap. The run, its plan, cost
and guarantee are those of the in-memory fit; for the same generator the released table and
labels are the same numbers (tables of integer counts are exact sums). The driver holds the
public per-row state: the row labels (n,); the Gumbel noise of a row update is drawn one
partition at a time and leaves the driver with that partition's task (on a distributed
scheduler; dask's local schedulers hold the whole graph).

References
----------
Battaglia, E. and Pensa, R. G. (2025). Differentially private associative co-clustering.
    SDM 2025, Sec. 4.1 (one unit of one cell; sensitivities), Sec. 4.2 (Algs. 1-3).
Dong, J., Durfee, D. and Rogers, R. (2020). Optimal differential privacy composition for
    exponential mechanisms. ICML 2020 (the exponential mechanism as a Gumbel-max report).
"""

import numpy as np

from ..privacy.mechanisms.exponential import _em_logits
from ._aggregate import project, table
from ._inputs import clip_row_sums
from .dp_taucc import _utilities, scale_utilities


def _counts(block, row_cap):
    """A block of records as counts (already projected onto the box), rows capped."""
    return block if row_cap is None else clip_row_sums(block, row_cap)


def _column_utilities(block, row_cap, Bt):
    """This block's part of sum_i A_ij B_li: (m, S*L), Bt (S, n_b, L) the block's weights."""
    A = _counts(block, row_cap)
    S, n_b, L = Bt.shape
    return (np.asarray(A.T @ Bt.transpose(1, 0, 2).reshape(n_b, S * L)),)


def _column_profiles(block, row_cap, n_slots, keep, R):
    """This block's part of A^T R: (S, m, K)."""
    return (project(_counts(block, row_cap).T, R, n_slots, keep=keep),)


def _table(block, row_cap, C, L, col_keep, n_slots, keep, R):
    """This block's part of R^T A C: (S, K, L)."""
    return (table(project(_counts(block, row_cap), C, L, keep=col_keep), R, n_slots, keep=keep),)


def _row_labels(block, row_cap, C, L, col_keep, pk, B, delta, epsilon, cell_bound, noise):
    """The exponential-mechanism draws of this block's rows, given their Exp(1) noise (S, n_b,
    K) drawn by the driver: the operations of the in-memory Gumbel-max draw."""
    Y = project(_counts(block, row_cap), C, L, keep=col_keep)
    logits = _em_logits(scale_utilities(_utilities(Y, B), pk, delta), epsilon, cell_bound, True)
    gumbel = np.log(np.maximum(noise, np.finfo(np.float64).tiny))
    return np.argmax(logits - gumbel, axis=-1).astype(np.int64)


class PartitionedCounts:
    """The statistics DP-tauCC reads (see :class:`~privclust.core.cocluster.dp_taucc.CountMatrix`)
    computed from the partitions of a Dask data set; see the module docstring."""

    row_profiles = None  # the rows' profiles A C stay on their partitions

    def __init__(self, parts, row_cap=None):
        self._parts = parts
        self._row_cap = row_cap
        self.shape = (parts.n_samples, parts.n_features)
        self._columns = None

    def column_utilities(self, B):
        S, L, n = B.shape
        (U,) = self._parts.row_sum(_column_utilities, self._row_cap, rows=(B.transpose(0, 2, 1),))
        return U.reshape(self.shape[1], S, L).transpose(1, 0, 2)

    def column_profiles(self, R, n_slots, keep):
        (Yc,) = self._parts.row_sum(_column_profiles, self._row_cap, n_slots, keep, rows=(R,))
        return Yc

    def set_columns(self, C, n_slots, keep):
        self._columns = (C, n_slots, keep)

    def table(self, R, n_slots, keep):
        (T,) = self._parts.row_sum(_table, self._row_cap, *self._columns, n_slots, keep, rows=(R,))
        return T

    def row_labels(self, pk, B, delta, epsilon, cell_bound, rng):
        S, K, _ = B.shape
        if S != 1:
            raise ValueError("the Dask mode runs one DP-tauCC run at a time (size=1)")

        def noise(n_rows):  # in partition order: the in-memory draw of (1, n, K), in pieces
            return (rng.standard_exponential(size=(1, n_rows, K)),)

        return self._parts.row_map(
            _row_labels,
            self._row_cap,
            *self._columns,
            pk,
            B,
            delta,
            epsilon,
            cell_bound,
            rows=noise,
        )
