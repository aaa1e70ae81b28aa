"""Holding off Ctrl-C (and SIGTERM, which the CLI turns into the same interrupt) for the
few steps that must not be cut in half: starting a process on a host and recording it, so
it can be stopped; stopping it; putting a host's settings back."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


class interrupts_held:
    """Defer SIGINT and SIGTERM until the block ends, then raise KeyboardInterrupt if one
    came (main thread only; elsewhere a no-op). Keep the block short and bounded."""

    def __enter__(self) -> interrupts_held:
        self._old: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}
        self._hit = False
        if threading.current_thread() is threading.main_thread():
            for sig in HELD:
                self._old[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, *_):
        self._hit = True

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self._hit and exc[0] is None:
            raise KeyboardInterrupt
