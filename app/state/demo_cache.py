"""Demo results shared by every session of a server process: the same public demo request from
different sessions (a class following its teacher) is computed once.

Only results on public (demo) data enter it: :meth:`DemoCache.get_or_compute` refuses a
dataset that is not public, and a result on private data is never stored (private releases
live in the Curator's store, per dataset, charged). The cache is bounded (least recently used
results are dropped beyond ``max_items``) and thread-safe; a request that arrives while the
same one is being computed by another session waits for it instead of computing it again.
"""

import collections
import dataclasses
import threading

DEFAULT_MAX_ITEMS = 256  # a result is a few kB (a fitted estimator on demo data)


class DemoCache:
    """A bounded, thread-safe LRU map ``key -> RunResult`` of demo results (public data only),
    and of the non-private baselines fitted on demo data (``key -> estimator``).

    ``get_or_compute(key, dataset, compute)`` returns ``(result, computed_here)``; concurrent
    calls with one key run ``compute`` once. A ``compute`` returning None (superseded, failed)
    stores nothing and lets a waiting caller compute for itself.
    """

    def __init__(self, max_items=DEFAULT_MAX_ITEMS):
        if int(max_items) < 1:
            raise ValueError(f"max_items must be >= 1, got {max_items!r}")
        self.max_items = int(max_items)
        self._items = collections.OrderedDict()
        self._computing = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self):
        with self._lock:
            return len(self._items)

    def __contains__(self, key):
        with self._lock:
            return key in self._items

    def keys(self):
        with self._lock:
            return list(self._items)

    def get(self, key):
        with self._lock:
            result = self._items.get(key)
            if result is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return result

    def put(self, key, result):
        """Store a demo result; a result on data that is not public is refused (ValueError)."""
        _check_public(result.dataset)
        self._store(key, result)

    def _store(self, key, result):
        if getattr(result, "private_mode", False):
            raise ValueError("a private result never enters the demo cache")
        with self._lock:
            self._items[key] = result
            self._items.move_to_end(key)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    def get_or_compute(self, key, dataset, compute):
        _check_public(dataset)
        while True:
            with self._lock:
                result = self._items.get(key)
                if result is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return result, False
                pending = self._computing.get(key)
                if pending is None:
                    pending = self._computing[key] = threading.Event()
                    self.misses += 1
                    break
            pending.wait()
            with self._lock:
                if key in self._items:
                    continue  # computed by the other session: a hit on the next pass
            # the other computation stored nothing: compute here
            with self._lock:
                if key in self._computing:
                    continue
                pending = self._computing[key] = threading.Event()
                self.misses += 1
                break
        try:
            result = compute()
            if result is not None:
                self._store(key, result)  # ``dataset`` (public) was checked above
            return result, True
        finally:
            with self._lock:
                self._computing.pop(key, None)
            pending.set()

    def clear(self):
        with self._lock:
            self._items.clear()


def for_session(result, dataset):
    """A session's own copy of a shared result: its dataset object, and no baseline yet (the
    baseline follows the session's own settings)."""
    if result.dataset is dataset:
        return result
    return dataclasses.replace(result, dataset=dataset, baseline=None, baseline_spec=None)


def _check_public(dataset):
    if not getattr(dataset, "public", False):
        raise ValueError("only results on public (demo) data may enter the demo cache")


SHARED = DemoCache()
"""The process-wide cache of the served page (every session's Lab uses it, see
:func:`privclust.app.server.worker.session_lab`); a Lab made elsewhere has its own."""
