"""``poll_until``: the one bounded wait-for-a-condition loop."""

from __future__ import annotations

import time
from collections.abc import Callable


def poll_until(check: Callable[[], bool], timeout_s: float, interval_s: float,
               tries: int | None = None) -> bool:
    """Call ``check`` until it returns True (then True) or ``timeout_s`` has passed (then
    False, after one last call), and at most ``tries`` times where given (a check that
    asks a host: bounded in count as well as in time, also with no interval, as against
    in-memory hosts). Never in a tight loop but by the caller's own interval."""
    deadline = time.monotonic() + timeout_s
    calls = 0
    while True:
        if check():
            return True
        calls += 1
        if time.monotonic() >= deadline or (tries is not None and calls >= tries):
            return False
        time.sleep(min(interval_s, max(0.0, deadline - time.monotonic())))
