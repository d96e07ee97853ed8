"""Solver lookup shared by sample-and-aggregate (the ``f`` of Alg. 1) and the Gibbs initialiser."""

from sklearn.base import clone

from .kplanes import KPlanes
from .lrr import LRR_PRESETS, LowRankRepresentation
from .ssc import SSC_PRESETS, SparseSubspaceClustering
from .tsc import ThresholdSubspaceClustering

SOLVERS = {
    "tsc": ThresholdSubspaceClustering,
    "ssc": SparseSubspaceClustering,
    "lrr": LowRankRepresentation,
    "kplanes": KPlanes,
}

#: Named settings of the self-expressive solvers for the two regimes met in practice:
#: "faces" (alias "lighting"; sparse gross errors, linear subspaces) and "motion" (affine
#: subspaces). Pass ``preset=`` to the estimator; explicit parameters override a preset.
PRESETS = {"ssc": SSC_PRESETS, "lrr": LRR_PRESETS}


def make_solver(solver, n_clusters, subspace_dim, random_state=None):
    """A fresh solver: a name in ``SOLVERS`` (built with (k, q, random_state)) or a clone of an
    estimator whose ``fit(X)`` sets ``subspaces_`` (n_clusters, subspace_dim and random_state
    are set to the caller's when it has such parameters)."""
    if isinstance(solver, str):
        try:
            cls = SOLVERS[solver]
        except KeyError:
            raise ValueError(
                f"solver must be one of {sorted(SOLVERS)} or an estimator; got {solver!r}"
            ) from None
        return cls(n_clusters=n_clusters, subspace_dim=subspace_dim, random_state=random_state)
    if not hasattr(solver, "fit"):
        raise TypeError(f"solver must be a name or an estimator with fit(X); got {solver!r}")
    est = clone(solver)
    params = est.get_params()
    wanted = {"n_clusters": n_clusters, "subspace_dim": subspace_dim, "random_state": random_state}
    est.set_params(**{key: value for key, value in wanted.items() if key in params})
    return est
