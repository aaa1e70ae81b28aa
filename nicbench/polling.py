"""``poll_until``: the one bounded wait-for-a-condition loop."""

from __future__ import annotations

import time
from collections.abc import Callable


def poll_until(check: Callable[[], bool], timeout_s: float, interval_s: float) -> bool:
    """Call ``check`` until it returns True (then True) or ``timeout_s`` has passed (then
    False, after one last call). Bounded in time, never in a tight loop."""
    deadline = time.monotonic() + timeout_s
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(interval_s, max(0.0, deadline - time.monotonic())))
