"""A scripted Connection for unit tests and ``--dry-run``: same interface, no host.

Replies are matched on the displayed command (a substring or a callable); every call is
recorded in ``calls`` so tests can assert on exactly what would have run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from nicbench.remote.command import display
from nicbench.remote.connection import Connection
from nicbench.remote.result import Result, make_result
from nicbench.remote.shell import Shell

Reply = tuple[str, str, int]  # stdout, stderr, exit status


class FakeConnection(Connection):
    """``shell``: the host's shell (POSIX unless told), so a Windows platform can sit on a
    fake too and :attr:`scripts` shows what would have been sent, decoded."""

    def __init__(self, host: str = "fake", replies: dict[str, Reply] | None = None,
                 default: Reply = ("", "", 0),
                 handler: Callable[[list[str]], Reply | None] | None = None,
                 shell: Shell | None = None):
        super().__init__(host, shell)
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

    @property
    def scripts(self) -> list[str]:
        """Every command as its shell would send it, for a person to read (a PowerShell
        script decoded; a POSIX command line as rendered)."""
        return [self.shell.script(a) for a in self.calls]


# -- transcript replay -------------------------------------------------------------------
_PIDFILE = re.compile(r"^\$PidFile = '((?:[^']|'')*)'$", re.M)


class Call:
    """One command as a host receives it: argv, and for a PowerShell script its label,
    parameters and decoded text (what the wire form decodes back to)."""

    def __init__(self, argv: list[str], wire: str, script: str):
        from nicbench.remote.powershell import is_script

        self.argv = argv
        self.wire = wire          # the command line sent (base64 for Windows)
        self.script = script      # what that command line runs, decoded
        # The pid file the command keeps while it runs, as the decoded script names it.
        m = _PIDFILE.search(script)
        self.pidfile = m.group(1).replace("''", "'") if m else None
        self.is_script = is_script(argv)
        self.label = getattr(argv[1], "label", "") if self.is_script else argv[0]
        self.params = {argv[i]: argv[i + 1] for i in range(2, len(argv), 2)} \
            if self.is_script else {}


class UnexpectedCommand(AssertionError):
    """A replayed host got a command its transcript does not have."""


class ReplayConnection(Connection):
    """A connection that renders every command for real (``shell.render_with_pid``,
    with its pid file), decodes it back, and answers from recorded outputs:
    ``answer(call)`` returns (stdout, stderr, exit status or None for a timeout) or
    raises what the SSH layer would (ConnectError, HostKeyError). ``calls`` keeps every
    command in order. ``reconnect`` asks ``answer.reconnect()`` if it has one (a
    scripted host that is still down raises ConnectError there)."""

    def __init__(self, host: str, shell, answer: Callable[[Call], Reply | tuple],
                 warm: bool = False):
        super().__init__(host, shell)
        self.answer = answer
        self.calls: list[Call] = []
        self.timeouts: list[float] = []
        self.closed = 0
        self.reconnects = 0
        # ``warm``: a Windows host whose ``answer`` keeps a PowerShell session (the
        # scripted host): every command goes through it as SshConnection sends it.
        self.warm_all = warm and getattr(shell, "name", "") == "powershell" \
            and hasattr(answer, "session_call")
        self.warm_lost = False
        self._session_open = False

    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        argv = list(argv)
        wire = self.shell.render_with_pid(argv, pidfile)
        decode = getattr(self.shell, "decode", None)
        call = Call(argv, wire, decode(wire) if decode else wire)
        self.calls.append(call)
        self.timeouts.append(timeout)
        out, err, status = self.answer(call)
        return make_result(self.host, argv, stdout=out, stderr=err, exit_status=status,
                           timed_out=status is None, raw=(out.encode(), err.encode()))

    def _exec_warm(self, argv: Sequence[str], timeout: float,
                   pidfile: str | None = None) -> Result:
        """Through the scripted host's session, framed and read back as the real one
        (``warm_powershell``): started by the first command, dropped on a timeout, lost
        (said once, every later command alone) when the host's session dies."""
        from nicbench.remote.warm_powershell import (SessionLost, ended, fall_back, frame,
                                                     new_nonce, read_frame)

        if not self.warm_all or self.warm_lost:
            return self._exec(argv, timeout, pidfile)
        argv = list(argv)
        host: Any = self.answer
        nonce = new_nonce()
        shell: Any = self.shell              # a WindowsShell (warm_all says so)
        line = frame(nonce, shell.warm_script(argv, pidfile))
        call = Call(argv, line.decode("ascii"), read_frame(line)[1])
        self.calls.append(call)
        self.timeouts.append(timeout)
        try:
            if not self._session_open:
                host.open_session()
                self._session_open = True
            out, err = host.session_call(call, line)
        except SessionLost as exc:
            self._session_open = False
            if not exc.ran:                 # recorded again as the command run alone
                self.calls.pop()
                self.timeouts.pop()
            return fall_back(self, exc, argv, lambda: self._exec(argv, timeout, pidfile))
        except BaseException:
            self._session_open = False      # a lost connection ends its session too
            raise
        done = ended(out, err, nonce)
        if done is None:                    # no end came in time: killed, dropped
            self._session_open = False
            pid = out.split(b"\n", 1)[0].strip()
            if pid.isdigit():               # as SshConnection._kill_remote: its tree
                self._exec(self.shell.kill_argv(int(pid), "KILL"), 5.0)
            host.close_session()
            return make_result(self.host, argv, stdout=out.decode("utf-8", "replace"),
                               stderr=err.decode("utf-8", "replace"), exit_status=None,
                               timed_out=True)
        stdout = done.stdout.partition(b"\n")[2]      # the session's pid line
        return make_result(self.host, argv, stdout=stdout.decode("utf-8", "replace"),
                           stderr=done.stderr.decode("utf-8", "replace"),
                           exit_status=done.status, raw=(stdout, done.stderr))

    def reconnect(self, timeout_s: float) -> None:
        self.reconnects += 1
        self._session_open = False
        back = getattr(self.answer, "reconnect", None)
        if back is not None:
            back()

    def close(self) -> None:
        self.closed += 1
        if self._session_open:          # the session ends with its connection
            self._session_open = False
            getattr(self.answer, "close_session", lambda: None)()

