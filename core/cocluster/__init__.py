"""privclust.core.cocluster: co-clustering with the de-normalised Goodman-Kruskal tau ([BP25] =
Battaglia & Pensa, "Differentially private associative co-clustering", SDM 2025).

``TauCoClustering`` is Fast-tauCC (non-private reference; Battaglia, Peiretti & Pensa, Mach. Learn.
2024; [BP25] Sec. 3.2); ``DPTauCoClustering`` is DP-tauCC (pure epsilon-DP under the entry-level
``cell`` relation; [BP25] Sec. 4, Alg. 1-3). Lower-level pieces:
``dp_taucc_runs`` (batched runs), ``update_part``, ``compute_table``, ``random_matrix``.
``DPNMF`` (Saha & Imtiaz, ACM TKDD 2024) is a benchmark competitor: its basis updates are
Gaussian mechanisms but its start and coefficients read the data without noise (plan kind
"none", refused on private data).
"""

from .dp_estimator import DPTauCoClustering
from .dp_taucc import budget_schedule, compute_table, dp_taucc_runs, update_part
from .dpnmf import DPNMF
from .fast_taucc import TauCoClustering
from .initial_partitions import random_matrix

__all__ = [
    "TauCoClustering",
    "DPTauCoClustering",
    "dp_taucc_runs",
    "update_part",
    "compute_table",
    "budget_schedule",
    "random_matrix",
    "DPNMF",
]
