"""privclust.core.onecluster: locating a small cluster privately ([NSV16] = Nissim, Stemmer &
Vadhan, "Locating a small cluster privately", PODS 2016).
[NSV16] sections: 3.1/4.1 GoodRadius, 3.2/4.3 GoodCenter, Obs. 3.5 k balls, 6 sample-and-aggregate,
Appendix A NoisyAVG, 1.1 outlier screening; Sec. 5 (infinite domains) is theory only.

GoodRadius, GoodCenter (with our data-independent corrections, see :mod:`.good_center`),
NoisyAVG, the 1-cluster estimator (GoodRadius + GoodCenter, Thm. 3.2), the k-balls heuristic
(Obs. 3.5), a 1-cluster aggregator for sample-and-aggregate (Sec. 6), the outlier-screening
predicate (Sec. 1.1) and the non-private 2-approximate baseline.
"""

from .aggregator import OneClusterAggregator, one_cluster_aggregate
from .baseline import SmallestBall, smallest_ball_2approx
from .k_balls import PrivateKBalls
from .one_cluster import OneCluster
from .screening import inside_ball, screen_outliers

# The building blocks live in their modules (good_radius, good_center, noisy_avg, one_cluster);
# they are not re-exported here so that the function names do not shadow the module names.
__all__ = [
    "OneCluster",
    "PrivateKBalls",
    "OneClusterAggregator",
    "one_cluster_aggregate",
    "SmallestBall",
    "smallest_ball_2approx",
    "inside_ball",
    "screen_outliers",
]
