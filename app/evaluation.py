"""What a run released and how it scores, per task (uses :mod:`privclust.core.metrics`).

``released(result)`` lists only what was released (a private result's Release attributes);
``metrics`` marks every score that reads the raw data, or truth computed from non-public
records (``Dataset.truth_public`` False), as evaluation only: the analyst never sees it.
"""
import logging

import numpy as np

log = logging.getLogger(__name__)

RELEASED = {
    "subspace": ("subspaces_", "labels_"),
    "kmeans": ("cluster_centers_", "weights_"),
    "onecluster": ("center_", "radius_", "centers_", "radii_"),
    "cocluster": ("table_", "row_labels_", "column_labels_"),
}


def released(result):
    """{attribute: value} of what was released: a private result's Release attributes; on demo
    data the estimator's public outputs. Owner-only (NOT PRIVATE) results release nothing."""
    if getattr(result, "owner_only", False):
        return {}
    release = getattr(result, "release", None)
    if release is not None:
        return dict(release.attributes)
    est = result.estimator
    out = {}
    for name in RELEASED[result.spec.task]:
        if name == "labels_" and result.spec.key not in ("gibbs",) and result.spec.private:
            continue  # only the Gibbs sampler releases labels (its state z); others do not
        value = getattr(est, name, None)
        if value is not None:
            out[name] = value
    return out


def labels_of(result, est):
    """Per-record labels for colouring (raw-data display): fitted labels, else nearest centre."""
    labels = getattr(est, "labels_", None)
    if labels is None:
        labels = getattr(est, "row_labels_", None)
    if labels is not None:
        return np.asarray(labels)
    X = result.dataset.X
    C = getattr(est, "cluster_centers_", None)
    if C is not None and not hasattr(X, "tocsr"):
        from scipy.spatial import cKDTree
        return cKDTree(np.asarray(C)).query(np.asarray(X))[1]
    bases = getattr(est, "subspaces_", None)
    if bases is not None and not hasattr(X, "tocsr"):
        X = np.asarray(X)
        res = [np.sum(X**2, 1) - np.sum((X @ U) ** 2, 1) for U in np.asarray(bases)]
        return np.argmin(np.stack(res, 1), 1)
    return None


def _safe(fn, *args):
    try:
        return float(fn(*args))
    except Exception:  # a missing metric or a shape mismatch must not break the page
        log.debug("metric %s failed", getattr(fn, "__name__", fn), exc_info=True)
        return None


def match_clusters(private, baseline):
    """perm[j] = the private cluster matched to baseline cluster j (Hungarian matching of
    subspaces by projector distance or centres by Euclidean distance), so both plots use the
    same colour for matched clusters; None when there is nothing to match."""
    from scipy.optimize import linear_sum_assignment
    A, B = getattr(private, "subspaces_", None), getattr(baseline, "subspaces_", None)
    if A is not None and B is not None:
        D = pairwise(A, B)
    else:
        A = getattr(private, "cluster_centers_", None)
        B = getattr(baseline, "cluster_centers_", None)
        if A is None or B is None:
            return None
        D = np.linalg.norm(np.asarray(A)[:, None] - np.asarray(B)[None], axis=2)
    rows, cols = linear_sum_assignment(D)
    perm = np.arange(D.shape[1])
    perm[cols] = rows
    return perm


def pairwise(A, B):
    """(k, k') projector distances between two sets of bases."""
    from privclust.core.metrics import projector_distance
    return np.array([[projector_distance(U, V) for V in B] for U in A])


def metrics(result, baseline=None):
    """[(name, value, eval_only)] for a run; eval_only scores read the raw data."""
    from privclust.core import metrics as m
    est, ds, task = result.estimator, result.dataset, result.spec.task
    X, truth = ds.X, getattr(ds, "truth", {}) or {}
    # truth computed from non-public records (e.g. top singular vectors of the raw data) is
    # evaluation only, like every score against it
    truth_eval = not getattr(ds, "truth_public", getattr(ds, "public", False))
    owner_only = getattr(result, "owner_only", False)
    out = []

    def add(name, value, eval_only):
        if value is not None:
            out.append((name, value, bool(eval_only or owner_only)))

    if task == "subspace":
        S = getattr(est, "subspaces_", None)
        if S is not None:
            if "subspaces" in truth:
                add("Wasserstein distance to the true subspaces",
                    _safe(m.wasserstein_subspaces, S, truth["subspaces"]), truth_eval)
            if baseline is not None and getattr(baseline, "subspaces_", None) is not None:
                add("Wasserstein distance to the non-private baseline",
                    _safe(m.wasserstein_subspaces, S, baseline.subspaces_), True)
            add("subspace cost (mean squared distance)", _safe(m.subspace_cost, X, S), True)
            if baseline is not None and getattr(baseline, "subspaces_", None) is not None:
                add("baseline subspace cost", _safe(m.subspace_cost, X, baseline.subspaces_), True)
    elif task == "kmeans":
        C = getattr(est, "cluster_centers_", None)
        if C is not None:
            if baseline is not None:
                add("relative SSE (private / non-private)",
                    _safe(m.relative_sse, X, C, baseline.cluster_centers_), True)
            add("SSE", _safe(m.sse, X, C), True)
    elif task == "onecluster":
        centres = getattr(est, "centers_", None)
        radii = getattr(est, "radii_", None)
        if centres is None and getattr(est, "center_", None) is not None:
            centres, radii = np.atleast_2d(est.center_), np.atleast_1d(est.radius_)
        if centres is not None:
            add("released radius" if len(radii) == 1 else "largest released radius",
                float(np.max(radii)), False)
            Xd = np.asarray(X)
            inside = np.zeros(len(Xd), dtype=bool)
            for c, r in zip(centres, radii):
                inside |= np.linalg.norm(Xd - c, axis=1) <= r
            add("records inside the ball(s)", float(inside.sum()), True)
            if "center" in truth:
                add("distance of the centre to the planted centre",
                    float(np.linalg.norm(centres[0] - truth["center"])), truth_eval)
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


def exact_table(A, rows, cols):
    """Exact contingency table sum_{i in r, j in c} A_ij (raw data: evaluation only)."""
    import scipy.sparse as sp
    rows, cols = np.asarray(rows), np.asarray(cols)
    R = sp.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))))
    C = sp.csr_matrix((np.ones(len(cols)), (np.arange(len(cols)), cols)))
    T = R @ (sp.csr_matrix(A) @ C)
    return np.asarray(T.todense())
