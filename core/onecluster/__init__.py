"""privclust.core.onecluster: locating a small cluster privately ([NSV16], seed 003; spec section 4).

GoodRadius (spec 4.2), GoodCenter (4.3 with the 4.3a corrections), NoisyAVG (4.4), the 1-cluster
estimator (4.5), the k-balls heuristic (4.7), a 1-cluster aggregator for sample-and-aggregate
(4.6), the outlier-screening predicate (seed Sec. 1.1) and the non-private 2-approximate baseline.
"""
from .aggregator import OneClusterAggregator, one_cluster_aggregate
from .baseline import smallest_ball_2approx
from .good_center import good_center
from .good_radius import good_radius, quality, radius_grid
from .k_balls import PrivateKBalls
from .noisy_avg import noisy_avg
from .one_cluster import OneCluster, one_cluster
from .screening import inside_ball, screen_outliers

__all__ = ["OneCluster", "PrivateKBalls", "OneClusterAggregator", "one_cluster_aggregate",
           "one_cluster", "good_radius", "good_center", "noisy_avg", "quality", "radius_grid",
           "smallest_ball_2approx", "inside_ball", "screen_outliers"]
