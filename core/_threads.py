"""Pin BLAS/OpenMP pools to one thread around hot loops: the one way privclust does it.

The families work on small matrices in tight loops; unpinned OpenBLAS + OpenMP threads spin on
shared cores (measured on 2 cores: sketch decoding 10-30x slower, SSC 20x slower). The
``ThreadpoolController`` scans the loaded libraries once per process; ``threadpool_limits()``
would re-scan them on every call (about 5 ms, as much as a couple of Gibbs iterations)."""

import contextlib
import functools

from threadpoolctl import ThreadpoolController

_CONTROLLER = []
_MIN_WORK = 1_000_000  # below this the pinning overhead (~ms) outweighs the benefit


def single_threaded(method):
    """Decorator: run ``method`` inside :func:`single_thread`."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with single_thread():
            return method(*args, **kwargs)

    return wrapper


def single_thread(work=None):
    """Context manager limiting native thread pools to 1 (a no-op for small ``work``)."""
    if work is not None and work < _MIN_WORK:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)
