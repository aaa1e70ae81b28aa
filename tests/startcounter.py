"""A Runner's listener for the tests and bench/windows_starts.py: how many powershell.exe
starts each trial costs the scripted Windows hosts (a test-only counter: it lived in
``platforms/fake_windows.py``, which then imported the engine's events from below it)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from nicbench.execution import events as ev
from nicbench.platforms.fake_windows import FakeWindowsPair


@dataclass
class StartCounter:
    """A Runner's listener that counts the powershell.exe starts each trial costs the
    scripted hosts: their counters at each TrialStarted; a trial's starts are what the
    counters moved by until the next one (so the last trial, followed by the point's
    restore, is not counted)."""

    pair: FakeWindowsPair
    marks: list[tuple[str, dict[str, int]]] = field(default_factory=list)

    def __call__(self, event: object) -> None:
        if isinstance(event, ev.TrialStarted):
            self.marks.append((event.test, {n: h.powershell_starts
                                            for n, h in self.pair.hosts.items()}))

    def per_trial(self) -> list[tuple[str, dict[str, int]]]:
        """(test, host -> starts) of every trial but the last."""
        return [(test, {n: after[n] - before[n] for n in before})
                for (test, before), (_, after) in itertools.pairwise(self.marks)]
