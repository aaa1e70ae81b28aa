"""nicbench.workers.process_pool, the pool of ``figures`` and ``store import``: its workers
die with the process that started them, kill -9 included (a real process, its real
workers; ``tests/report/test_figures_safety.py`` does the same to ``nicbench figures``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from procs import alive, children

PARENT = textwrap.dedent("""
    import sys, time
    from nicbench.workers import process_pool

    pool = process_pool(2)
    jobs = [pool.submit(time.sleep, 60) for _ in range(4)]      # both workers busy
    print("ready", flush=True)
    time.sleep(120)
""")


def test_busy_workers_end_within_seconds_of_their_parents_kill_9():
    proc = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE,
                            text=True)
    workers: set[int] = set()
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = children(proc.pid)
            time.sleep(0.05)
        assert len(workers) >= 2 and all(alive(w) for w in workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)], "workers outlived their parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
