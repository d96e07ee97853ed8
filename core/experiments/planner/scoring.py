"""What the planner runs and how it scores it: the registry's planner variants with the public
facts as arguments, the non-private baseline on a twin, the utility of a run, and the
analytic predictors of the papers."""

import contextlib
import inspect
import math

import numpy as np

from ... import algorithms as registry
from ... import metrics
from ...onecluster.good_radius import em_gamma, radius_grid, reuse_count_profiles
from ...onecluster.one_cluster import budget_plan, default_grid_step
from ...sketch.sketch import Sketch
from ...sketch.snr import sigma_xi, snr_complex_exp
from .facts import _box

# the primary metric of each family and the direction in which it is better
PRIMARY = {
    "kmeans": ("relative_sse", "<="),
    "subspace": ("wasserstein", "<="),
    "onecluster": ("centre_error", "<="),
    "cocluster": ("nmi", ">="),
}


# ---- algorithms --------------------------------------------------------------------------------
def _fact_arguments(cls, facts, epsilon, seed):
    """The public facts as constructor arguments of ``cls`` (those its signature takes)."""

    values = {
        "n_clusters": facts.n_clusters,
        "n_row_clusters": facts.n_clusters,
        "n_col_clusters": facts.n_col_clusters,
        "subspace_dim": facts.subspace_dim,
        "n_points": int(facts.n_points or facts.n_samples // 2),
        "epsilon": epsilon,
        "delta": facts.delta,
        "bounds": facts.bounds,
        "random_state": seed,
        "expected_n_samples": facts.n_samples,
    }
    return {name: values[name] for name in inspect.signature(cls).parameters if name in values}


def makers(family):
    """{planner algorithm: make(facts, epsilon, seed, **settings)} of a family, in order: the
    planner variants of the registry (:mod:`privclust.core.algorithms`) whose task is
    ``family``; an estimator gets the public facts its constructor takes, then the variant's
    parameters updated by ``settings``."""

    def maker(entry, variant):
        def make(f, eps, seed, **kw):
            return entry.build(**_fact_arguments(entry.cls, f, eps, seed), **variant.arguments(kw))

        return make

    return {v.name: maker(a, v) for a, v in registry.planner_variants(family)}


# ---- baselines and scores ----------------------------------------------------------------------
def _baseline(facts, twin, seed):
    """Non-private reference on the twin: {metric: value} plus what the scores need. The
    estimator is the family's registry baseline (:func:`privclust.core.algorithms.task_baseline`)
    with its planner parameters."""

    X = twin.X
    entry = registry.task_baseline(facts.family)
    params = entry.planner[0].arguments() if entry.planner else {}
    est = entry.build(**_fact_arguments(entry.cls, facts, None, seed), **params).fit(X)
    if facts.family == "kmeans":
        return {
            "relative_sse": 1.0,
            "sse": float(metrics.sse(X, est.cluster_centers_)),
            "_centers": est.cluster_centers_,
        }
    if facts.family == "subspace":
        return {
            "wasserstein": float(
                metrics.wasserstein_subspaces(est.subspaces_, twin.truth["subspaces"])
            )
        }
    if facts.family == "onecluster":
        c, r = est.center_, est.radius_
        inl = twin.truth["inliers"]
        cover = float(np.mean(np.linalg.norm(X[inl] - c, axis=1) <= r))
        return {
            "centre_error": float(np.linalg.norm(c - twin.truth["center"])),
            "radius": r,
            "coverage": cover,
        }
    return {"nmi": float(metrics.nmi(twin.truth["row_labels"], est.row_labels_))}


def _scorer(facts, twin, base):

    fam = facts.family
    if fam == "kmeans":
        ref = base["_centers"]

        def score(est, X):
            return {"relative_sse": float(metrics.relative_sse(X, est.cluster_centers_, ref))}
    elif fam == "subspace":
        truth = twin.truth["subspaces"]

        def score(est, X):
            out = {"wasserstein": float(metrics.wasserstein_subspaces(est.subspaces_, truth))}
            diag = getattr(est, "diagnostics_", None)
            if isinstance(diag, dict) and "noise_scale" in diag:
                out["noise_scale"] = float(diag["noise_scale"])
            return out
    elif fam == "onecluster":
        centre, inl = twin.truth["center"], twin.truth["inliers"]

        def score(est, X):
            inside = np.linalg.norm(X[inl] - est.center_, axis=1) <= est.radius_
            return {
                "centre_error": float(np.linalg.norm(est.center_ - centre)),
                "radius": float(est.radius_),
                "coverage": float(np.mean(inside)),
            }
    else:
        truth = twin.truth["row_labels"]

        def score(est, X):
            return {
                "nmi": float(metrics.nmi(truth, est.row_labels_)),
                "nmi_eval_only": float(metrics.nmi(truth, est.eval_row_labels_)),
            }

    return score


# ---- reuse of epsilon-independent statistics of one twin ----------------------------------------
@contextlib.contextmanager
def _reuse_twin_statistics(family):
    """Within the block, the calling thread reuses the epsilon-independent count profile of
    GoodRadius (Nissim, Stemmer & Vadhan, PODS 2016, Sec. 3.1) across fits on the same public
    twin (:func:`privclust.core.onecluster.good_radius.reuse_count_profiles`): the planner fits
    1-cluster at every epsilon of the grid, and the profile was ~75 % of such a plan's time.
    The fits' releases are exactly those of separate fits. A no-op for other families.

    Parameters
    ----------
    family : str
        The plan's family; only ``"onecluster"`` has such a statistic.
    """
    if family != "onecluster":
        yield
        return

    with reuse_count_profiles():
        yield


# ---- analytic predictors -----------------------------------------------------------------------
def _analytic(facts, twin, base, algorithm, make, eps_grid):
    """Rows (algorithm, epsilon, name, value) of the analytic predictors of the papers."""
    rows = []
    n, d, k = facts.n_samples, facts.n_features, facts.n_clusters
    if algorithm == "ckm":
        est = make(facts, 1.0, 0)
        if (
            est.signature != "complex_exp"
            or est.mechanism != "laplace"
            or est.neighbouring != "replace"
        ):
            return rows
        op = est.make_operator(d, random_state=0)
        r = op.sketch_size if est.measurements_per_record is None else est.measurements_per_record
        z = Sketch.from_array(twin.X, op, op.sketch_size, random_state=0).mean
        for e in eps_grid:
            s = sigma_xi(e, n, op.sketch_size, r)
            rows.append(
                (algorithm, e, "sketch_snr", float(snr_complex_exp(z, n, op.sketch_size, r, s)))
            )
    elif algorithm.startswith("dplloyd"):
        for e in eps_grid:
            est = make(facts, e, 0)
            _, _, b_sum, _ = est.schedule(d, n)
            # last iteration: a centre is a noisy sum over ~n/k points; Lap(b) has var 2 b^2
            err2 = 2.0 * b_sum**2 * d * (k / n) ** 2
            rows.append((algorithm, e, "centre_noise_std", math.sqrt(err2)))
            rows.append((algorithm, e, "analytic_relative_sse", 1.0 + n * err2 / base["sse"]))
    elif algorithm == "sample_aggregate":
        for e in eps_grid:
            rows.append(
                (
                    algorithm,
                    e,
                    "noise_multiplier_1/alpha",
                    5.0 * math.sqrt(2.0 * math.log(2.0 / facts.delta)) / e,
                )
            )
    elif algorithm == "onecluster":
        lo, hi = _box(facts)
        est = make(facts, 1.0, 0)
        step = est.grid_step or default_grid_step(lo, hi)
        n_r = len(radius_grid((lo, hi), step, d))
        t = int(facts.n_points or n // 2)
        for e in eps_grid:
            eps_r = budget_plan(e, facts.delta, est.refine_steps)[0]
            gamma = em_gamma(eps_r, n_r, est.beta)
            rows.append((algorithm, e, "guaranteed_count_fraction", max(0.0, t - 4 * gamma) / t))
            rows.append((algorithm, e, "good_radius_bound", 4.0 * base["radius"]))
    return rows
