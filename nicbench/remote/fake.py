"""A scripted Connection for unit tests and ``--dry-run``: same interface, no host.

Replies are matched on the displayed command (a substring or a callable); every call is
recorded in ``calls`` so tests can assert on exactly what would have run.
"""

from __future__ import annotations

from typing import Callable, Sequence

from nicbench.remote.command import display
from nicbench.remote.connection import Connection
from nicbench.remote.result import Result, make_result

Reply = tuple[str, str, int]  # stdout, stderr, exit status


class FakeConnection(Connection):
    def __init__(self, host: str = "fake", replies: dict[str, Reply] | None = None,
                 default: Reply = ("", "", 0),
                 handler: Callable[[list[str]], Reply | None] | None = None):
        super().__init__(host)
        self.replies = dict(replies or {})
        self.default = default
        self.handler = handler
        self.calls: list[list[str]] = []

    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        argv = list(argv)
        self.calls.append(argv)
        reply = self.handler(argv) if self.handler else None
        if reply is None:
            shown = display(argv)
            reply = next((r for pat, r in self.replies.items() if pat in shown), self.default)
        out, err, status = reply
        return make_result(self.host, argv, stdout=out, stderr=err, exit_status=status)

    @property
    def commands(self) -> list[str]:
        return [display(a) for a in self.calls]
