"""Differentially private subspace clustering (Wang, Wang & Singh, "Differentially private
subspace clustering", NIPS 2015 [WWS15]).

Non-private solvers (k-plane, TSC, SSC, LRR) and ``fit_subspaces``; private estimators:
sample-and-aggregate (Alg. 1), the Gibbs sampler of the exponential mechanism (Sec. 4.1) and the
SuLQ k-plane baseline (App. E, reconstructed).
"""

from .gibbs import GibbsSubspaceClustering
from .kplanes import KPlanes
from .lrr import LowRankRepresentation
from .projection import fit_subspaces
from .sample_aggregate import SampleAggregateSubspaceClustering
from .ssc import SparseSubspaceClustering
from .sulq import SuLQSubspaceClustering
from .tsc import ThresholdSubspaceClustering

__all__ = [
    "KPlanes",
    "ThresholdSubspaceClustering",
    "SparseSubspaceClustering",
    "LowRankRepresentation",
    "GibbsSubspaceClustering",
    "SampleAggregateSubspaceClustering",
    "SuLQSubspaceClustering",
    "fit_subspaces",
]
