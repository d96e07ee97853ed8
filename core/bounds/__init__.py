"""privclust.core.bounds: public boxes suggested privately, for the estimators that need one.

Every private estimator clips its records to a public box (``bounds``). The estimators here
spend a small, stated epsilon to suggest one: :class:`PrivateBounds` from private quantiles
(Smith, STOC 2011, Sec. 3), in memory or partition by partition on Dask
(:mod:`~privclust.core.bounds.partitioned_bounds`), and :class:`GeometricBounds` from a noisy
histogram over power-of-two buckets (:func:`forecast_geometric_bounds` says beforehand how
reliable it will be).
"""

from .geometric_bounds import GeometricBounds, forecast_geometric_bounds
from .quantile_bounds import PrivateBounds

__all__ = ["PrivateBounds", "GeometricBounds", "forecast_geometric_bounds"]
