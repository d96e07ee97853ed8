"""Pin BLAS/OpenMP pools to one thread around hot loops (measured: unpinned OpenBLAS + OpenMP
threads spin on 2 shared cores and made decoding 10-30x slower)."""
import contextlib

from threadpoolctl import ThreadpoolController

_CONTROLLER = []
_MIN_WORK = 1_000_000     # below this the pinning overhead (~ms) outweighs the benefit


def single_thread(work=None):
    """Context manager limiting native thread pools to 1 (a no-op for small ``work``)."""
    if work is not None and work < _MIN_WORK:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)
