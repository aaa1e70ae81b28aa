"""Worker processes that end with the process that started them.

``nicbench figures`` draws in a pool of worker processes, and ``nicbench store import``
reads runs in one. Killed with SIGKILL (``kill -9``, the OOM killer), the parent cannot
stop its workers, and a worker waiting for its next job would wait forever, reparented to
init. So each worker asks the kernel, before its first job, to be sent SIGKILL when its
parent ends (``prctl(PR_SET_PDEATHSIG)``, Linux), and checks that the parent did not end
already, before the request was made. Elsewhere a thread of the worker checks its parent
every second and ends the worker when it is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1        # linux/prctl.h
ORPHAN_CHECK_S = 1.0


def process_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` processes (forked where the OS can: they start with the caller's
    imports) that die with this one, kill -9 included. Start it from the main thread:
    the kernel's signal follows the thread that forked each worker."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork") if "fork" in methods else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=die_with_parent, initargs=(os.getpid(),))


def die_with_parent(parent: int) -> None:
    """In a worker of ``parent``: end when ``parent`` ends (see the module's text)."""
    if not _death_signal():
        threading.Thread(target=_watch, args=(parent,), daemon=True,
                         name="nicbench-orphan-check").start()
    if os.getppid() != parent:          # the parent ended before the signal was asked for
        os._exit(1)


def _death_signal() -> bool:
    """SIGKILL asked for at the parent's end (Linux); False where it cannot be."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(1)
