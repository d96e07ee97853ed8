"""privclust.core.experiments: determinism, progress, cancellation, errors, summaries."""

import math
import threading

import numpy as np
import pandas as pd
import pytest

from privclust.core.experiments import run_sweep, summarise, trial_seeds


class NoisyMean:
    """A tiny 'estimator': the mean of X plus Laplace(1/(eps n)) noise from its own seed."""

    def __init__(self, epsilon, random_state):
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X):
        rng = np.random.default_rng(self.random_state)
        self.value_ = X.mean() + rng.laplace(scale=1.0 / (self.epsilon * len(X)))
        return self


def error(est, X):
    return abs(est.value_ - X.mean())


X = np.linspace(0.0, 1.0, 50)
EPS = [0.1, 1.0, 10.0]


def test_deterministic_and_independent_of_n_jobs():
    a = run_sweep(NoisyMean, X, EPS, n_trials=4, score=error, random_state=7)
    b = run_sweep(NoisyMean, X, EPS, n_trials=4, score=error, random_state=7)
    c = run_sweep(
        NoisyMean, X, EPS, n_trials=4, score=error, random_state=7, n_jobs=2, backend="threading"
    )
    assert list(a.columns) == ["epsilon", "trial", "seed", "seconds", "score"]
    assert len(a) == 12 and not a.attrs["stopped"] and a.attrs["planned"] == 12
    key = ["epsilon", "trial", "seed", "score"]
    pd.testing.assert_frame_equal(a[key], b[key])
    pd.testing.assert_frame_equal(a[key], c[key])
    d = run_sweep(NoisyMean, X, EPS, n_trials=4, score=error, random_state=8)
    assert not np.array_equal(a["seed"], d["seed"])
    assert a["seed"].nunique() == 12  # every trial its own seed
    g1 = run_sweep(NoisyMean, X, EPS, 2, score=error, random_state=np.random.default_rng(3))
    g2 = run_sweep(NoisyMean, X, EPS, 2, score=error, random_state=np.random.default_rng(3))
    pd.testing.assert_frame_equal(g1[key], g2[key])
    # utility improves with epsilon (the point of the sweep)
    med = a.groupby("epsilon")["score"].median()
    assert med[0.1] > med[1.0] > med[10.0]


def test_seeds_reach_the_factory_and_match_trial_seeds():
    seen = []

    def factory(eps, seed):
        seen.append((eps, seed))
        return NoisyMean(eps, seed)

    out = run_sweep(factory, X, EPS, n_trials=2, score=error, random_state=5)
    seeds = trial_seeds(5, 3, 2)
    assert sorted(seen) == sorted(
        (e, int(seeds[i, t])) for i, e in enumerate(EPS) for t in range(2)
    )
    np.testing.assert_array_equal(out["seed"], seeds.ravel())
    assert seeds.min() >= 0 and seeds.max() < 2**32  # accepted by scikit-learn too


def test_progress_and_trial_major_order():
    calls, order = [], []

    def factory(eps, seed):
        order.append(eps)
        return NoisyMean(eps, seed)

    run_sweep(
        factory,
        X,
        EPS,
        n_trials=2,
        score=error,
        random_state=0,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(i, 6) for i in range(7)]
    assert order == EPS + EPS  # all epsilons of trial 0 first


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_should_stop_returns_partial_result(n_jobs):
    done = []
    out = run_sweep(
        NoisyMean,
        X,
        EPS,
        n_trials=5,
        score=error,
        random_state=0,
        progress=lambda d, t: done.append(d),
        should_stop=lambda: done[-1] >= 4,
        n_jobs=n_jobs,
        backend="threading",
    )
    assert out.attrs["stopped"] and out.attrs["planned"] == 15
    assert len(out) == 4
    assert set(out.loc[out.trial == 0, "epsilon"]) == set(EPS)  # whole grid covered first
    full = run_sweep(NoisyMean, X, EPS, n_trials=5, score=error, random_state=0)
    merged = out.merge(full, on=["epsilon", "trial"], suffixes=("", "_full"))
    np.testing.assert_array_equal(merged["score"], merged["score_full"])


def test_stop_from_another_thread():
    flag = threading.Event()

    def factory(eps, seed):
        flag.set()  # "user clicks Stop" during trial 1
        return NoisyMean(eps, seed)

    out = run_sweep(
        factory, X, EPS, n_trials=3, score=error, random_state=0, should_stop=flag.is_set
    )
    assert len(out) == 1 and out.attrs["stopped"]


def test_stop_before_start_gives_empty_frame():
    out = run_sweep(NoisyMean, X, EPS, 2, score=error, should_stop=lambda: True)
    assert out.empty and list(out.columns) == ["epsilon", "trial", "seed", "seconds"]
    assert summarise(out).empty


def test_mapping_scores_and_errors():
    def factory(eps, seed):
        if eps == 1.0:
            raise RuntimeError("boom")
        return NoisyMean(eps, seed)

    score = lambda est, X: {"err": error(est, X), "value": est.value_}  # noqa: E731
    with pytest.raises(RuntimeError, match="boom"):
        run_sweep(factory, X, EPS, 2, score=score, random_state=0)
    out = run_sweep(factory, X, EPS, 2, score=score, random_state=0, errors="record")
    assert {"err", "value", "error"} <= set(out.columns) and len(out) == 6
    bad = out[out.epsilon == 1.0]
    assert bad["err"].isna().all() and bad["error"].str.contains("RuntimeError: boom").all()
    assert (out.loc[out.epsilon != 1.0, "error"] == "").all()
    summary = summarise(out)
    assert set(summary.metric) == {"err", "value"}
    assert (summary.loc[summary.epsilon == 1.0, "n"] == 0).all()
    with pytest.raises(ValueError, match="column name 'seed'"):
        run_sweep(NoisyMean, X, EPS, 1, score=lambda e, X: {"seed": 1.0})
    with pytest.raises(TypeError, match="number or a mapping"):
        run_sweep(NoisyMean, X, EPS, 1, score=lambda e, X: [1.0, 2.0])


def test_summarise_hand_computed():
    frame = pd.DataFrame(
        {
            "epsilon": [1.0] * 4 + [2.0] * 2,
            "trial": [0, 1, 2, 3, 0, 1],
            "seed": 0,
            "seconds": 0.0,
            "score": [4.0, 1.0, 3.0, 2.0, 5.0, 7.0],
        }
    )
    s = summarise(frame).set_index("epsilon")
    assert list(s.columns) == ["metric", "median", "q25", "q75", "mean", "std", "n"]
    assert s.loc[1.0, "median"] == 2.5 and s.loc[1.0, "q25"] == 1.75
    assert s.loc[1.0, "q75"] == 3.25 and s.loc[1.0, "n"] == 4
    assert s.loc[2.0, "mean"] == 6.0 and s.loc[2.0, "std"] == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="not in the result"):
        summarise(frame, columns=["nmi"])
    with pytest.raises(ValueError, match="run_sweep"):
        summarise([1, 2])


def test_with_scikit_learn_estimator():
    from sklearn.cluster import KMeans

    from privclust.core.metrics import sse

    pts = np.random.default_rng(0).standard_normal((60, 2))
    out = run_sweep(
        lambda eps, seed: KMeans(2, n_init=1, random_state=seed),
        pts,
        [1.0],
        2,
        score=lambda est, Z: sse(Z, est.cluster_centers_),
        random_state=1,
    )
    assert len(out) == 2 and np.all(out["score"] > 0) and np.all(out["seconds"] >= 0)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"epsilons": []}, ValueError, "non-empty"),
        ({"epsilons": [1.0, -1.0]}, ValueError, "> 0"),
        ({"epsilons": [np.inf]}, ValueError, "finite"),
        ({"n_trials": 0}, ValueError, "n_trials"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"errors": "ignore"}, ValueError, "errors"),
        ({"score": None}, TypeError, "score"),
        ({"progress": 3}, TypeError, "progress"),
        ({"random_state": "abc"}, TypeError, "random_state"),
        ({"random_state": -1}, ValueError, "random_state"),
    ],
)
def test_validation(kwargs, exc, match):
    args = {
        "make_estimator": NoisyMean,
        "X": X,
        "epsilons": EPS,
        "n_trials": 1,
        "score": error,
    } | kwargs
    with pytest.raises(exc, match=match):
        run_sweep(**args)


def test_dask_backend_matches_single_machine():
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    key = ["epsilon", "trial", "seed", "score"]
    local = run_sweep(NoisyMean, X, EPS, 2, score=error, random_state=4)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with parallel_config(backend="dask"):
            remote = run_sweep(NoisyMean, X, EPS, 2, score=error, random_state=4, n_jobs=2)
    pd.testing.assert_frame_equal(local[key], remote[key])
