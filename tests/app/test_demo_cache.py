"""The server's shared demo cache: the same public demo request from different sessions is
computed once, the cache is bounded, and nothing computed on private data ever enters it."""

import threading
import time

import pytest

from privclust.app.state import Lab
from privclust.app.state.demo_cache import DemoCache


def test_a_second_session_gets_the_first_session_s_demo_result_without_a_fit():
    cache = DemoCache()
    first = Lab(demo_cache=cache)
    second = Lab(demo_cache=cache)
    assert first.n_runs == 1 and second.n_runs == 0
    assert second.result.estimator is first.result.estimator  # computed once
    assert second.result.dataset is second.data.dataset  # the session's own data
    first.settings.epsilon = 5.0
    second.settings.epsilon = 5.0
    assert first.n_runs == 2 and second.n_runs == 0 and len(cache) == 2
    second.settings.epsilon = 2.0  # a request of its own
    assert second.n_runs == 1 and len(cache) == 3


def test_labs_made_without_a_cache_share_nothing():
    first, second = Lab(), Lab()
    assert first.n_runs == 1 and second.n_runs == 1


def test_concurrent_identical_requests_are_computed_once():
    from privclust.core.data import make_gaussian_mixture

    ds = make_gaussian_mixture(n_samples=50, n_features=2, n_clusters=2, random_state=0)
    cache, calls, results = DemoCache(), [], []

    class Result:
        dataset, private_mode = ds, False

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return Result()

    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_compute("k", ds, compute)[0]))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(results) == 6 and len({id(r) for r in results}) == 1


def test_the_cache_is_bounded_least_recently_used_first():
    from privclust.core.data import make_gaussian_mixture

    ds = make_gaussian_mixture(n_samples=50, n_features=2, n_clusters=2, random_state=0)

    class Result:
        dataset, private_mode = ds, False

    cache = DemoCache(max_items=2)
    for key in ("a", "b"):
        cache.put(key, Result())
    assert cache.get("a") is not None  # "a" used: "b" is now the oldest
    cache.put("c", Result())
    assert cache.keys() == ["a", "c"]
    with pytest.raises(ValueError, match="max_items"):
        DemoCache(max_items=0)


def test_a_private_dataset_s_result_never_enters_the_cache(ledger_env, csv_payload):
    cache = DemoCache()
    lab = Lab(demo_cache=cache)
    demo_keys = cache.keys()
    assert lab.data.upload("private.csv", csv_payload(n=200, d=3).encode())
    private = lab.data.dataset
    assert not private.public and lab.mode == "private"
    lab.settings.param.update(task="kmeans", algorithm="dplloyd", epsilon=1.0)
    result = lab.do_release()
    assert result is not None and result.release is not None and lab.ledger.spent[0] > 0
    assert lab.run_demo() is None  # never a demo run on private data
    assert cache.keys() == demo_keys  # nothing was added
    assert all(private.fingerprint not in repr(k) for k in cache.keys())
    lab.show(result, "shown again")  # showing a private result caches nothing
    assert cache.keys() == demo_keys
    with pytest.raises(ValueError, match="public"):
        cache.put("x", result)
    with pytest.raises(ValueError, match="public"):
        cache.get_or_compute("x", private, lambda: result)
    assert cache.keys() == demo_keys
