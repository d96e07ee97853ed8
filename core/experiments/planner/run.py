"""The planner's driver, :func:`plan_utility`: every algorithm at every epsilon on every twin,
summarised per (algorithm, epsilon, metric)."""

import time
import warnings

import numpy as np
import pandas as pd

from ..sweep import run_sweep, trial_seeds
from .facts import DEFAULT_EPSILONS, PublicFacts
from .result import QUANTILES, PlanResult
from .scoring import _analytic, _baseline, _reuse_twin_statistics, _scorer, makers
from .twins import PRIORS, SAMPLE_RULE, build_twin, draw_structure


def plan_utility(
    facts,
    epsilons=DEFAULT_EPSILONS,
    algorithms=None,
    n_trials=5,
    n_twins=None,
    settings=None,
    random_state=0,
    progress=None,
    should_stop=None,
    n_jobs=1,
    prior=None,
):
    """Predict utility versus epsilon for every applicable algorithm on twins of ``facts``.

    ``algorithms``: names among :func:`makers` of the family (default: all);
    ``settings``: {algorithm: {parameter: value}} passed to the estimators (e.g.
    ``{"gibbs": {"n_iter": 200}}``, ``{"dp_taucc": {"row_cap": 100}}``); ``random_state``
    seeds everything (the twins are public); ``progress(done, total)`` and ``should_stop()`` as
    in :func:`~privclust.core.experiments.sweep.run_sweep`; ``n_jobs`` is passed to it.

    ``prior``: ``"papers"`` draws each twin's difficulty (separation, noise, block
    contrast, ...) from :data:`PRIORS` -- the papers' experimental ranges -- so that the
    interval covers the uncertainty about the data's structure, not only the algorithm's
    noise (recommended; use at least ~10 twins, since the recommendation then asks the
    interval's pessimistic end, q90 or q10, to reach the target); ``None`` (the default, kept
    for backward compatibility) uses one fixed twin setting (``facts.twin`` and the
    defaults). With a
    public sample (any family) the twins are bootstraps of it and nothing is drawn; the
    family's :data:`SAMPLE_RULE` says whether they are plain, smoothed or both (the interval
    is then the envelope of the two arms' 10-90 % intervals); ``facts.twin["smooth"]``
    declares one kind.
    ``n_twins``: the number of twins; ``n_trials``: runs per epsilon and twin. With the
    default ``n_twins=None`` and a prior, the ``n_trials`` runs per epsilon are spread over
    ``n_trials`` twins (one run each: the same number of fits as one twin, the interval taken
    over twins); without a prior, one twin with ``n_trials`` runs.
    Never reads private data: it has no access to any.

    Parameters
    ----------
    facts : PublicFacts
        The public declarations.
    epsilons : sequence of float
        The grid.
    algorithms : list of str, optional
        Names among ``makers(facts.family)``; default all.
    n_trials, n_twins : int
        Runs per epsilon and twin; number of twins (see above).
    settings : dict, optional
        {algorithm: {parameter: value}}.
    random_state : int
        Seeds the twins and every run (the twins are public).
    progress, should_stop : callable, optional
        ``progress(done, total)``; ``should_stop() -> bool`` polled before each run.
    n_jobs : int
        Passed to :func:`~privclust.core.experiments.sweep.run_sweep`.
    prior : {None, "papers"}
        The structural prior of the twins' difficulty.

    Returns
    -------
    PlanResult

    References
    ----------
    Schellekens, V. et al. (2019). Differentially private compressive k-means. SPARS, Sec. IV.
    Wang, Y., Wang, Y.-X. & Singh, A. (2015). Differentially private subspace clustering. NIPS,
    Sec. 5. Nissim, K., Stemmer, U. & Vadhan, S. (2016). Locating a small cluster privately.
    PODS, Sec. 3. Battaglia, E. & Pensa, R. G. (2025). DP-tauCC. SDM, Sec. 5.
    """
    if not isinstance(facts, PublicFacts):
        raise TypeError("facts must be a PublicFacts (public declarations only)")
    start = time.perf_counter()
    available = makers(facts.family)
    names = list(available) if algorithms is None else list(algorithms)
    unknown = [a for a in names if a not in available]
    if unknown:
        raise ValueError(
            f"unknown algorithms {unknown} for family {facts.family!r}; "
            f"available: {list(available)}"
        )
    settings = {a: dict((settings or {}).get(a, {})) for a in names}
    eps_grid = tuple(float(e) for e in epsilons)
    if prior is not None and prior not in PRIORS:
        raise ValueError(f"prior must be None or one of {sorted(PRIORS)}, got {prior!r}")
    bracket = False
    arm = None
    if facts.public_sample is not None:
        prior = None  # the public sample is the structure: bootstrap twins
        if "smooth" not in facts.twin:
            rule = SAMPLE_RULE[facts.family]
            bracket = rule == "envelope"  # plain and smoothed twins, alternating
            arm = None if bracket else rule == "smoothed"
    if int(n_trials) < 1 or (n_twins is not None and int(n_twins) < 1):
        raise ValueError("n_twins and n_trials must be positive integers")
    if n_twins is None:
        n_twins, n_trials = (
            (int(n_trials), 1)
            if prior is not None
            else ((2, int(n_trials)) if bracket else (1, int(n_trials)))
        )
    n_twins = int(n_twins)
    seeds = trial_seeds(random_state, n_twins, len(names) + 2)
    total = n_twins * (1 + len(names) * len(eps_grid) * int(n_trials))
    done = [0]

    def tick(k=1):
        done[0] += k
        if progress is not None:
            progress(done[0], total)

    if progress is not None:
        progress(0, total)
    frames, base_rows, analytic_rows, twin_rows, stopped = [], [], [], [], False
    for w in range(n_twins):
        if should_stop is not None and should_stop():
            stopped = True
            break
        structure = draw_structure(facts, prior, np.random.default_rng([int(seeds[w, 0]), 1]))
        if bracket:
            structure["smooth"] = bool(w % 2)
        elif arm is not None:
            structure["smooth"] = arm
        twin = build_twin(facts, random_state=int(seeds[w, 0]), settings=structure)
        base = _baseline(facts, twin, int(seeds[w, 1]) % (2**31))
        base_rows.append({k: v for k, v in base.items() if not k.startswith("_")})
        twin_rows.append(
            {
                "twin": w,
                **{
                    k: (float(np.mean(v)) if isinstance(v, list) else v)
                    for k, v in structure.items()
                },
                **{f"baseline_{k}": v for k, v in base_rows[-1].items()},
            }
        )
        tick()
        score = _scorer(facts, twin, base)
        for j, alg in enumerate(names):
            make = available[alg]
            kw = settings[alg]

            def factory(eps, seed, make=make, kw=kw):
                return make(facts, eps, seed, **kw)

            offset = done[0]

            def sub_progress(d, t, offset=offset):
                done[0] = offset + d
                if progress is not None and d:
                    progress(done[0], total)

            with warnings.catch_warnings(), _reuse_twin_statistics(facts.family):
                warnings.simplefilter("ignore")
                df = run_sweep(
                    factory,
                    twin.X,
                    eps_grid,
                    n_trials=int(n_trials),
                    score=score,
                    random_state=int(seeds[w, j + 2]),
                    progress=sub_progress,
                    should_stop=should_stop,
                    n_jobs=n_jobs,
                    errors="record",
                )
                if w == 0:
                    analytic_rows += _analytic(
                        facts,
                        twin,
                        base,
                        alg,
                        lambda f, e, s, make=make, kw=kw: make(f, e, s, **kw),
                        eps_grid,
                    )
            done[0] = offset + len(eps_grid) * int(n_trials)
            df.insert(0, "twin", w)
            if bracket:
                df["arm"] = "smoothed" if w % 2 else "plain"
            df.insert(0, "algorithm", alg)
            for key, value in base_rows[-1].items():  # per-twin baseline (relative targets)
                df[f"baseline_{key}"] = value
            frames.append(df)
            if df.attrs.get("stopped"):
                stopped = True
                break
        if stopped:
            break
    trials = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    baseline = {}
    if base_rows:
        for key in base_rows[0]:
            baseline[key] = float(np.median([b[key] for b in base_rows]))
    summary = _summarise(trials)
    analytic = pd.DataFrame(analytic_rows, columns=["algorithm", "epsilon", "name", "value"])
    return PlanResult(
        facts,
        trials,
        summary,
        baseline,
        analytic,
        eps_grid,
        settings,
        stopped,
        time.perf_counter() - start,
        prior=prior,
        twins=pd.DataFrame(twin_rows),
    )


_META = ("algorithm", "twin", "epsilon", "trial", "seed", "seconds", "error", "arm")


def _is_meta(column):
    return column in _META or str(column).startswith("baseline_")


def _summarise(trials):
    cols = ["algorithm", "epsilon", "metric", "median", "q10", "q90", "n", "failed"]
    if trials.empty:
        return pd.DataFrame(columns=cols)
    metrics_ = [c for c in trials.columns if not _is_meta(c)]
    keys = ["algorithm", "epsilon"]
    failed = (trials["error"].fillna("") != "").groupby([trials[k] for k in keys], sort=False).sum()
    parts = []
    for metric in metrics_:
        g = trials.groupby(keys, sort=False)[metric]
        part = pd.DataFrame(
            {
                "median": g.median(),
                "q10": g.quantile(QUANTILES[0]),
                "q90": g.quantile(QUANTILES[1]),
                "n": g.count(),
                "failed": failed,
            }
        ).reset_index()
        if "arm" in trials.columns and trials["arm"].nunique() > 1:
            # bracketing twins (a public sample): the interval is the envelope of the arms'
            # 10-90 % intervals, the plain bootstrap's (biased hard) and the smoothed one's
            # (biased easy), see :func:`smoothing_bandwidth`
            ga = trials.groupby(keys + ["arm"], sort=False)[metric]
            arms = pd.DataFrame(
                {"q10": ga.quantile(QUANTILES[0]), "q90": ga.quantile(QUANTILES[1])}
            ).groupby(level=keys, sort=False)
            env = pd.DataFrame({"lo": arms["q10"].min(), "hi": arms["q90"].max()})
            env = env.reindex(pd.MultiIndex.from_frame(part[keys]))
            part["q10"] = np.fmin(part["q10"].to_numpy(), env["lo"].to_numpy())
            part["q90"] = np.fmax(part["q90"].to_numpy(), env["hi"].to_numpy())
        part.insert(2, "metric", metric)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    # a metric an algorithm does not report (n = 0 without failures) is not a prediction
    out = out[(out["n"] > 0) | (out["failed"] > 0)].reset_index(drop=True)
    out["failed"] = out["failed"].astype(int)
    return out[cols]
