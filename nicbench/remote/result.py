"""The outcome of one remote or local command.

Every ``Connection.run`` returns a :class:`Result`; a failing command raises an error that
carries it (``CommandFailed``, ``CommandTimeout``), so the command and the tail of its
output are always at hand where the failure is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

from nicbench.remote.command import display


@dataclass(frozen=True)
class Result:
    host: str
    command: str            # displayed form, secrets masked
    stdout: str
    stderr: str
    exit_status: int | None  # None: killed (timeout or stop) before it could exit
    duration_s: float
    argv: tuple[str, ...] = field(default=(), repr=False)
    timed_out: bool = False
    started_at: float = 0.0  # wall-clock (time.time()) when the command started
    # (stdout, stderr) as the host sent them, before decoding and tidying, where the
    # connection keeps them (SSH, replay): what `nicbench windows capture` saves.
    raw: tuple[bytes, bytes] | None = field(default=None, repr=False, compare=False)
    # It printed more than the connection reads of one reply (limits.CAPTURE_LIMIT_BYTES)
    # and was killed: stdout and stderr hold the head of what it printed.
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out and not self.truncated

    def tail(self, lines: int = 3) -> str:
        """The last few non-empty lines of stderr, else of stdout, on one line (looked
        for in their last 64 KB: a reply may be megabytes of short lines)."""
        for text in (self.stderr, self.stdout):
            kept = [ln.strip() for ln in text[-65536:].splitlines() if ln.strip()]
            if kept:
                return " | ".join(kept[-lines:])
        return ""


def make_result(host: str, argv: Sequence[str], stdout: str = "", stderr: str = "",
                exit_status: int | None = 0, duration_s: float = 0.0, **kw) -> Result:
    return Result(host=host, command=display(argv), stdout=stdout, stderr=stderr,
                  exit_status=exit_status, duration_s=duration_s, argv=tuple(argv), **kw)
