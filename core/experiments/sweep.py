"""Generic privacy-utility sweeps: utility versus epsilon over repeated trials.

This is the machinery behind the papers' utility-versus-epsilon figures (Wang, Wang & Singh,
NIPS 2015, Fig. 2; Schellekens et al., SPARS 2019, Fig. 1; Battaglia & Pensa, SDM 2025, Fig. 2)
and the dashboard's trade-off view. It is UI-agnostic: an estimator factory and a score callable go in, a tidy ``pandas.DataFrame`` comes
out, with a progress callback and a cancellation hook for front ends.

Every trial gets its own seed, derived from ``random_state`` with
``numpy.random.SeedSequence.spawn`` and indexed by (epsilon position, trial): results do not
depend on ``n_jobs``, on the execution order, or on where a sweep was stopped.

Scores computed on raw data (cost, SSE, NMI against labels ...) are evaluation only, not
private; each fit is a release charged to whatever ledger the factory gives the estimator.
"""

import math
import time
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

__all__ = ["run_sweep", "summarise", "trial_seeds"]

_RESERVED = ("epsilon", "trial", "seed", "seconds", "error")


def trial_seeds(random_state, n_epsilons, n_trials):
    """(n_epsilons, n_trials) array of independent uint32 seeds, one per trial.

    ``random_state`` is None (fresh entropy), an int, a ``numpy.random.SeedSequence`` or a
    ``numpy.random.Generator`` (from which the root entropy is drawn). The seeds are 32-bit so
    that scikit-learn estimators accept them as ``random_state`` as well as privclust ones.
    """
    if isinstance(random_state, Integral) and random_state < 0:
        raise ValueError(f"random_state must be non-negative, got {random_state}")
    if random_state is None or isinstance(random_state, (Integral, np.random.SeedSequence)):
        root = (
            random_state
            if isinstance(random_state, np.random.SeedSequence)
            else np.random.SeedSequence(None if random_state is None else int(random_state))
        )
    elif isinstance(random_state, np.random.Generator):
        root = np.random.SeedSequence(random_state.integers(0, 2**63, size=4).tolist())
    else:
        raise TypeError(
            "random_state must be None, an int, a numpy SeedSequence or a numpy "
            f"Generator, got {type(random_state).__name__}"
        )
    children = root.spawn(n_epsilons * n_trials)
    seeds = np.array([int(c.generate_state(1)[0]) for c in children], dtype=np.int64)
    return seeds.reshape(n_epsilons, n_trials)


def _run_trial(make_estimator, X, score, epsilon, seed, errors):
    """Fit one estimator and score it; returns (seconds, scores or None, error message)."""
    try:
        estimator = make_estimator(epsilon, seed)
        start = time.perf_counter()
        estimator.fit(X)
        seconds = time.perf_counter() - start
        value = score(estimator, X)
    except Exception as exc:  # noqa: BLE001 -- recorded on request, re-raised otherwise
        if errors == "raise":
            raise
        return math.nan, None, f"{type(exc).__name__}: {exc}"
    return seconds, value, ""


def _scores_dict(value):
    if isinstance(value, Mapping):
        out = {}
        for name, v in value.items():
            if not isinstance(name, str) or name in _RESERVED:
                raise ValueError(
                    f"score returned the column name {name!r}; use strings other than {_RESERVED}"
                )
            out[name] = float(v)
        return out
    if isinstance(value, (Real, np.floating, np.integer)) or np.ndim(value) == 0:
        return {"score": float(value)}
    raise TypeError(
        f"score must return a number or a mapping of names to numbers, got {type(value).__name__}"
    )


def _check_epsilons(epsilons):
    try:
        eps = np.asarray(epsilons, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"epsilons must be a 1-D sequence of numbers: {exc}") from None
    if eps.ndim == 0:
        eps = eps[None]
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D sequence, got shape {eps.shape}")
    if not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise ValueError(f"every epsilon must be finite and > 0, got {eps.tolist()}")
    return eps


def run_sweep(
    make_estimator,
    X,
    epsilons,
    n_trials=10,
    score=None,
    random_state=None,
    progress=None,
    should_stop=None,
    n_jobs=1,
    errors="raise",
    backend=None,
):
    """Fit ``make_estimator(epsilon, seed)`` on X for every epsilon, ``n_trials`` times.

    Parameters
    ----------
    make_estimator : callable (epsilon, seed) -> estimator with ``fit(X)``. ``seed`` is a
        non-negative int, pass it on as the estimator's ``random_state``.
    X : data passed unchanged to ``fit`` and to ``score``.
    epsilons : sequence of privacy parameters (> 0, finite).
    n_trials : trials per epsilon.
    score : callable (fitted estimator, X) -> number or {name: number}; required.
    random_state : None, int, SeedSequence or Generator; fixes every trial's seed.
    progress : optional callable (done, total), called with (0, total) first and after each
        finished trial (in the calling thread).
    should_stop : optional callable () -> bool, polled before each trial (each batch of
        ``n_jobs`` trials when parallel); when it returns True the sweep ends early and returns
        what has finished.
    n_jobs : 1 runs in-process; otherwise trials run in batches through ``joblib.Parallel``
        (``backend`` is passed to joblib: None = the ambient ``joblib.parallel_config``, by
        default processes; "threading" = threads). On a Dask cluster: create a
        ``distributed.Client`` and call inside ``joblib.parallel_config(backend="dask")``.
    errors : "raise" (default) propagates an exception from a trial; "record" keeps going and
        stores NaN scores and the message in an ``error`` column.

    Returns
    -------
    pandas.DataFrame, one row per finished trial: ``epsilon``, ``trial``, ``seed``, ``seconds``
    (fit time only) and one column per score (``score`` when it returns a number), sorted by
    epsilon position then trial. ``df.attrs`` has ``stopped`` (bool) and ``planned`` (int).
    Trials run trial-major (all epsilons of trial 0, then trial 1, ...), so a stopped sweep
    still covers the whole epsilon grid.
    """
    if not callable(make_estimator):
        raise TypeError("make_estimator must be callable (epsilon, seed) -> estimator")
    if not callable(score):
        raise TypeError("score must be callable (estimator, X) -> number or mapping")
    for name, fn in (("progress", progress), ("should_stop", should_stop)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be callable or None")
    eps = _check_epsilons(epsilons)
    if not isinstance(n_trials, Integral) or n_trials < 1:
        raise ValueError(f"n_trials must be a positive integer, got {n_trials!r}")
    if not isinstance(n_jobs, Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (joblib convention), got {n_jobs!r}")
    if errors not in ("raise", "record"):
        raise ValueError(f"errors must be 'raise' or 'record', got {errors!r}")
    seeds = trial_seeds(random_state, eps.size, int(n_trials))
    tasks = [(i, t) for t in range(int(n_trials)) for i in range(eps.size)]
    total = len(tasks)

    rows, stopped = [], False

    def record(task, outcome):
        (i, t), (seconds, value, message) = task, outcome
        row = {"epsilon": float(eps[i]), "trial": t, "seed": int(seeds[i, t]), "seconds": seconds}
        if value is not None:
            row.update(_scores_dict(value))
        if errors == "record":
            row["error"] = message
        rows.append(((i, t), row))
        if progress is not None:
            progress(len(rows), total)

    if progress is not None:
        progress(0, total)
    if n_jobs == 1:
        for task in tasks:
            if should_stop is not None and should_stop():
                stopped = True
                break
            i, t = task
            record(
                task, _run_trial(make_estimator, X, score, float(eps[i]), int(seeds[i, t]), errors)
            )
    else:
        from joblib import Parallel, delayed, effective_n_jobs

        batch = max(1, effective_n_jobs(n_jobs))
        with Parallel(n_jobs=n_jobs, backend=backend) as parallel:
            for start in range(0, total, batch):
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                chunk = tasks[start : start + batch]
                outcomes = parallel(
                    delayed(_run_trial)(
                        make_estimator, X, score, float(eps[i]), int(seeds[i, t]), errors
                    )
                    for i, t in chunk
                )
                for task, outcome in zip(chunk, outcomes, strict=True):
                    record(task, outcome)

    rows.sort(key=lambda item: item[0])
    frame = pd.DataFrame([row for _, row in rows])
    if frame.empty:
        frame = pd.DataFrame(columns=list(_RESERVED if errors == "record" else _RESERVED[:4]))
    frame.attrs["stopped"] = stopped
    frame.attrs["planned"] = total
    return frame


def summarise(result, columns=None):
    """Median, quartiles, mean, std and count of each score column per epsilon (tidy).

    ``result`` is a :func:`run_sweep` frame; ``columns`` the score columns to summarise
    (default: every column that is not epsilon/trial/seed/seconds/error). NaN scores (failed
    trials) are skipped. Returns one row per (epsilon, metric) with ``median``, ``q25``,
    ``q75``, ``mean``, ``std`` and ``n``; medians and quartiles are what [SCH19] Fig. 1 plots.
    """
    if not isinstance(result, pd.DataFrame) or "epsilon" not in result.columns:
        raise ValueError(
            "result must be a DataFrame returned by run_sweep (with an 'epsilon' column)"
        )
    if columns is None:
        columns = [c for c in result.columns if c not in _RESERVED]
    else:
        columns = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in columns if c not in result.columns]
        if missing:
            raise ValueError(
                f"columns {missing} are not in the result (available: {list(result.columns)})"
            )
    out_cols = ["epsilon", "metric", "median", "q25", "q75", "mean", "std", "n"]
    if not columns or result.empty:
        return pd.DataFrame(columns=out_cols)
    parts = []
    for metric in columns:  # a handful of metric columns, not rows
        grouped = result.groupby("epsilon", sort=True)[metric]
        parts.append(
            pd.DataFrame(
                {
                    "metric": metric,
                    "median": grouped.median(),
                    "q25": grouped.quantile(0.25),
                    "q75": grouped.quantile(0.75),
                    "mean": grouped.mean(),
                    "std": grouped.std(),
                    "n": grouped.count(),
                }
            ).reset_index()
        )
    summary = pd.concat(parts, ignore_index=True).sort_values(["epsilon", "metric"], kind="stable")
    return summary[out_cols].reset_index(drop=True)
