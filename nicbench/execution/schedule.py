"""Which pairs run when: host-disjoint pairs at once, up to ``parallel``.

A pair holds both its hosts while it runs, so two pairs that share a host never run at
the same time (one's traffic and tuning would disturb the other's measurement). Of the
pairs waiting, the first in order whose hosts are all free starts next; with
``parallel`` 1, or on a lab where every pair shares the same two hosts, pairs run one
after another in their order, exactly as a plain loop would run them.

With ``parallel`` 1 the work runs in the calling thread, as that loop: Ctrl-C raises
KeyboardInterrupt wherever the work is, as it always has. Above 1 the work runs in worker
threads and the calling (main) thread only waits. Signals reach only the main thread, so
while workers run SIGINT and SIGTERM do not raise there: they set ``stop``, which the work
checks before each trial and each point; the main thread waits until every running pair
has ended the trial it was in (and put its hosts back, in its own ``finally``), then
raises KeyboardInterrupt. A second signal while waiting changes nothing: a trial is
bounded by its timeout, and the journal holds whatever a ``kill -9`` would leave.

A worker that raises stops the others the same way (``stop``), and once all have ended
its exception is raised in the calling thread. Work that should not stop the others
(one pair failing) must catch its own errors.
"""

from __future__ import annotations

import queue
import signal
import threading
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from collections.abc import Callable, Hashable, Iterable

T = TypeVar("T")

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WAIT_STEP_S = 0.2


@dataclass
class Schedule(Generic[T]):
    """Runs ``work(item)`` for each item, never two items that share a resource at once.

    ``holds(item)``: the names of what an item occupies while it runs (a pair: its two
    hosts). ``on_stopping(running)``: told once, in the calling thread, when a signal
    asked to stop, with the items still running (to say what is being waited for)."""

    holds: Callable[[T], Iterable[Hashable]]
    work: Callable[[T], None]
    parallel: int = 1
    stop: threading.Event = field(default_factory=threading.Event)
    on_stopping: Callable[[list[T]], None] = lambda running: None

    def __post_init__(self) -> None:
        if self.parallel < 1:
            raise ValueError(f"parallel must be 1 or more, not {self.parallel}")

    def run(self, items: Iterable[T]) -> None:
        """Run every item (or until ``stop``); raises KeyboardInterrupt if a signal
        stopped it, a worker's exception if one raised."""
        todo = list(items)
        if self.parallel == 1:
            for item in todo:
                if self.stop.is_set():
                    return
                self.work(item)
            return
        with _SignalsStop(self.stop) as signals:
            error = self._threads(todo, signals)
        if error is not None:
            raise error
        if signals.hit:
            raise KeyboardInterrupt

    def _threads(self, todo: list[T], signals: _SignalsStop) -> BaseException | None:
        ended: queue.Queue[tuple[int, BaseException | None]] = queue.Queue()
        running: dict[int, T] = {}
        busy: set[Hashable] = set()
        error: BaseException | None = None
        told = False
        pending = list(enumerate(todo))

        def worker(key: int, item: T) -> None:
            exc: BaseException | None = None
            try:
                self.work(item)
            except BaseException as e:       # handed to the calling thread, raised there
                exc = e
            finally:
                ended.put((key, exc))

        while pending or running:
            if not self.stop.is_set():
                for key, item in list(pending):
                    if len(running) >= self.parallel:
                        break
                    held = set(self.holds(item))
                    if held & busy:
                        continue
                    pending.remove((key, item))
                    busy |= held
                    running[key] = item
                    threading.Thread(target=worker, args=(key, item), daemon=True,
                                     name=f"nicbench-{key}").start()
            else:
                pending.clear()              # nothing new starts once stopping
                if signals.hit and not told and running:
                    told = True
                    self.on_stopping(list(running.values()))
            if not running:
                break
            try:
                key, exc = ended.get(timeout=WAIT_STEP_S)
            except queue.Empty:
                continue
            item = running.pop(key)
            busy -= set(self.holds(item))
            if exc is not None and error is None:
                error = exc
                self.stop.set()
        return error


class _SignalsStop:
    """While workers run: SIGINT and SIGTERM set ``stop`` instead of raising (main thread
    only; elsewhere signals cannot be caught and nothing changes)."""

    def __init__(self, stop: threading.Event):
        self.stop = stop
        self.hit = False
        self._old: dict[int, object] = {}

    def __enter__(self) -> _SignalsStop:
        if threading.current_thread() is threading.main_thread():
            for sig in _SIGNALS:
                self._old[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, *_: object) -> None:
        self.hit = True
        self.stop.set()

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
