"""Admission of Gibbs sampler runs: at most ``limit`` run at once on a server (all its
processes, ``panel serve --num-procs`` included); later Starts wait in a queue in order of
arrival and see their position.

Every sampler run is a CPU-bound process of its own: on a machine with few cores, more runs
than cores only make every run (and every page) slower. The limit is the operator's
(``PRIVCLUST_MAX_SAMPLERS``, :mod:`privclust.app.config`).

The queue and the slots are files in ``<state dir>/samplers`` held with ``flock``: a run holds
one of ``limit`` slot files while it samples; a waiting run holds a ticket file named by its
arrival time. The kernel drops a lock when its process ends, so a crashed server never keeps
a slot, and any process of the server sees the same queue.
"""

import fcntl
import itertools
import os
import threading
import time
from pathlib import Path

POLL_S = 0.25
_serial = itertools.count()


class Admission:
    """The slots and the queue in ``directory`` for at most ``limit`` concurrent runs."""

    def __init__(self, directory, limit):
        if int(limit) < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.limit = int(limit)

    def ticket(self):
        """A place at the end of the queue (release it with :meth:`Ticket.close`)."""
        return Ticket(self)

    def _live_tickets(self):
        """Names of the tickets whose holder is alive (stale ones are removed), oldest first."""
        live = []
        for path in sorted(self.directory.glob("ticket-*")):
            if _held(path):
                live.append(path.name)
            else:
                path.unlink(missing_ok=True)
        return live

    def _try_slot(self):
        for i in range(self.limit):
            fd = os.open(self.directory / f"slot-{i}", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        return None

    def running(self):
        """How many slots are held now."""
        return sum(_held(self.directory / f"slot-{i}") for i in range(self.limit))


class Ticket:
    """One run's place in the queue, then its slot. ``wait(stop, on_position)`` blocks until a
    slot is free for it (True) or ``stop`` is set (False); ``on_position(n)`` is told its
    position (1: next) whenever it changes. :meth:`close` gives up the place or the slot."""

    def __init__(self, admission):
        self.admission = admission
        self.name = f"ticket-{time.time_ns():020d}-{os.getpid()}-{next(_serial):06d}"
        self.path = admission.directory / self.name
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._slot = None
        self._lock = threading.Lock()

    def position(self):
        """1 + the number of live tickets ahead of this one."""
        return self.admission._live_tickets().index(self.name) + 1

    def wait(self, stop, on_position=None):
        shown = None
        while not stop.is_set():
            with self._lock:
                if self._fd is None:
                    return False
                ahead = self.position() - 1
                if ahead < self.admission.limit:  # among the first `limit`: try for a slot
                    if ahead == 0 or self.admission.running() + ahead < self.admission.limit:
                        self._slot = self.admission._try_slot()
                    if self._slot is not None:
                        self._leave_queue()
                        return True
            if on_position is not None and ahead + 1 != shown:
                shown = ahead + 1
                on_position(shown)
            stop.wait(POLL_S)
        return False

    def _leave_queue(self):
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None

    def close(self):
        with self._lock:
            self._leave_queue()
            if self._slot is not None:
                os.close(self._slot)
                self._slot = None


def _held(path):
    """Is ``path`` locked by some process (other than through a descriptor we are testing)?"""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


_shared = {}
_shared_lock = threading.Lock()


def shared():
    """The server's admission, from its settings (state dir, ``PRIVCLUST_MAX_SAMPLERS``)."""
    from privclust.app import config

    key = (str(config.state_dir()), config.max_samplers())
    with _shared_lock:
        if key not in _shared:
            _shared[key] = Admission(Path(key[0]) / "samplers", key[1])
        return _shared[key]
