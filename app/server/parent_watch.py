"""A server process that ends with the process that started it.

``privclust serve`` runs ``panel serve`` as its child and passes on the signals it can catch;
a SIGKILL of ``privclust serve`` cannot be caught, and the child used to go on serving (and
holding the port, so a restart failed with "address already in use"). On Linux the child asks
the kernel for a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``, kept across
``exec``); ``panel serve --num-procs N`` workers, forked by Tornado after the setting was made
(a fork clears it), ask again for their own parent, the ``panel serve`` master.

References
----------
Linux man-pages, prctl(2), PR_SET_PDEATHSIG.
"""

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(expected_parent=None, signum=signal.SIGTERM):
    """Ask the kernel to send ``signum`` to this process when its parent ends; exit now if the
    parent is already gone (it is not ``expected_parent``). Returns whether the request was
    made (False off Linux, where nothing is done)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) != 0:
        return False
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)  # the parent died before the request: nobody would stop us
    return True


def child_watching(parent_pid):
    """A ``preexec_fn`` for ``subprocess.Popen``: the child dies with ``parent_pid``."""

    def preexec():
        die_with_parent(parent_pid)

    return preexec


def watch_master_if_worker():
    """In a worker forked by ``panel serve --num-procs`` (Tornado's ``fork_processes``): die
    with the master. A no-op in a single-process server."""
    from tornado.process import task_id

    if task_id() is not None:
        die_with_parent(os.getppid())
