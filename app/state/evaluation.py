"""What a run released and how it scores, per task, computed with :mod:`privclust.core.metrics`.

``released(result)`` lists only what was released (a private result's Release attributes, or
what the estimator declares it releases); ``metrics`` marks every score that reads the raw
data, or truth computed from non-public records (``Dataset.truth_public`` False), as evaluation
only: the analyst never sees it.
"""

import logging

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from sklearn.metrics import pairwise_distances_argmin

from privclust.core import metrics as m

log = logging.getLogger(__name__)


def released(result):
    """{attribute: value} of what was released: a private result's Release attributes; on demo
    data the attributes the estimator declares it releases (a non-private baseline: all its
    fitted attributes, the data being public). Owner-only (NOT PRIVATE) results release
    nothing."""
    if result.owner_only:
        return {}
    if result.release is not None:
        return dict(result.release.attributes)
    est = result.estimator
    names = (
        est.released_attributes()
        if result.spec.private
        else [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]
    )
    return {k: getattr(est, k) for k in names if getattr(est, k, None) is not None}


def planted_distance(centre, truth):
    """The distance from ``centre`` to the nearest planted centre (``truth["centers"]`` when
    several balls are planted, else ``truth["center"]``)."""
    planted = np.atleast_2d(truth.get("centers", truth["center"]))
    return float(np.min(np.linalg.norm(planted - np.asarray(centre), axis=1)))


def balls_of(est):
    """(centres (k, d), radii (k,)) of a 1-cluster result (one ball or several), else None."""
    if getattr(est, "centers_", None) is not None:
        return np.asarray(est.centers_), np.asarray(est.radii_)
    if getattr(est, "center_", None) is not None:
        return np.atleast_2d(est.center_), np.atleast_1d(est.radius_)
    return None


def labels_of(X, est):
    """Per-record labels for colouring a raw-data display: the fitted labels, else the nearest
    released centre or subspace (evaluation only: computed on the raw records)."""
    for name in ("labels_", "row_labels_"):
        if getattr(est, name, None) is not None:
            return np.asarray(getattr(est, name))
    if hasattr(X, "tocsr"):
        return None
    if getattr(est, "cluster_centers_", None) is not None:
        return pairwise_distances_argmin(np.asarray(X), np.asarray(est.cluster_centers_))
    if getattr(est, "subspaces_", None) is not None:
        return m.assign_to_subspaces(X, est.subspaces_)
    return None


def match_clusters(private, baseline):
    """perm[j] = the private cluster matched to baseline cluster j (Hungarian matching of
    subspaces by projector distance, or of centres by Euclidean distance), so that both plots
    colour matched clusters alike; None when there is nothing to match."""
    A, B = getattr(private, "subspaces_", None), getattr(baseline, "subspaces_", None)
    if A is not None and B is not None:
        D = m.projector_distances(A, B)
    else:
        A = getattr(private, "cluster_centers_", None)
        B = getattr(baseline, "cluster_centers_", None)
        if A is None or B is None:
            return None
        D = cdist(np.asarray(A), np.asarray(B))
    rows, cols = linear_sum_assignment(D)
    perm = np.arange(D.shape[1])
    perm[cols] = rows
    return perm


def _safe(fn, *args):
    try:
        return float(fn(*args))
    except Exception:  # noqa: BLE001 -- a missing metric or a shape mismatch must not break the page
        log.debug("metric %s failed", getattr(fn, "__name__", fn), exc_info=True)
        return None


def metrics(result, baseline=None):
    """[(name, value, eval_only)] for a run; eval_only scores read the raw data."""
    est, ds, task = result.estimator, result.dataset, result.spec.task
    X, truth = getattr(ds, "X", None), getattr(ds, "truth", {}) or {}  # None: on Dask
    # truth computed from non-public records (e.g. top singular vectors of the raw data) is
    # evaluation only, like every score against it
    truth_eval = not getattr(ds, "truth_public", getattr(ds, "public", False))
    out = []

    def add(name, value, eval_only):
        if value is not None:
            out.append((name, value, bool(eval_only or result.owner_only)))

    if task == "subspace" and getattr(est, "subspaces_", None) is not None:
        S = est.subspaces_
        if "subspaces" in truth:
            add(
                "Wasserstein distance to the true subspaces",
                _safe(m.wasserstein_subspaces, S, truth["subspaces"]),
                truth_eval,
            )
        if baseline is not None:
            add(
                "Wasserstein distance to the non-private baseline",
                _safe(m.wasserstein_subspaces, S, baseline.subspaces_),
                True,
            )
        add("subspace cost (mean squared distance)", _safe(m.subspace_cost, X, S), True)
        if baseline is not None:
            add("baseline subspace cost", _safe(m.subspace_cost, X, baseline.subspaces_), True)
    elif task == "kmeans" and getattr(est, "cluster_centers_", None) is not None:
        C = est.cluster_centers_
        if baseline is not None:
            add(
                "relative SSE (private / non-private)",
                _safe(m.relative_sse, X, C, baseline.cluster_centers_),
                True,
            )
        add("SSE", _safe(m.sse, X, C), True)
    elif task == "onecluster" and balls_of(est) is not None:
        centres, radii = balls_of(est)
        add(
            "released radius" if len(radii) == 1 else "largest released radius",
            float(np.max(radii)),
            False,
        )
        inside = (cdist(np.asarray(X), centres) <= radii[None, :]).any(axis=1)
        add("records inside the ball(s)", float(inside.sum()), True)
        if "center" in truth:
            add(
                "distance of the centre to the planted centre",
                planted_distance(centres[0], truth),
                truth_eval,
            )
            add("planted radius", float(truth["radius"]), truth_eval)
    elif task == "cocluster":
        T = getattr(est, "table_", None)
        if T is not None:
            add("τ(R|C) of the released table", _safe(m.tau_rows, T), not result.spec.private)
        rows = getattr(est, "row_labels_", None)
        if rows is not None and ds.labels is not None:
            add("NMI of row clusters vs labels", _safe(m.nmi, ds.labels, rows), True)
        if baseline is not None and rows is not None:
            add("NMI vs Fast-τCC rows", _safe(m.nmi, baseline.row_labels_, rows), True)
    return out
