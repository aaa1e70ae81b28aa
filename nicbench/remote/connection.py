"""The one seam between nicbench and a host: ``Connection.run(argv, timeout) -> Result``.

Implementations (``ssh.SshConnection``, ``local.LocalConnection``, ``fake.FakeConnection``)
only provide ``_exec``; everything else here is shared: the failure policy (``warn``),
timeouts that always raise, and background processes, which are driven through ordinary
``run`` calls rendered by the host's :class:`~nicbench.remote.command.Shell`, so they work
the same over SSH and locally.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence

from nicbench.errors import CommandFailed, CommandTimeout, OutputTooLarge, RemoteError
from nicbench.limits import CAPTURE_LIMIT_BYTES
from nicbench.remote.command import display
from nicbench.remote.result import Result, make_result
from nicbench.remote.shell import PosixShell, Shell

DEFAULT_TIMEOUT_S = 30.0


def _words(argv: Sequence[object]) -> list[str]:
    # Keep str subclasses as they are: str() of a Secret is a plain str, which would show
    # the password in Result.command and in every error message.
    return [w if isinstance(w, str) else str(w) for w in argv]


class Connection(ABC):
    """A host's commands. ``shell`` renders every argv for the host (POSIX sh unless told
    otherwise)."""

    # The most of one reply's stdout, and of its stderr, read from a host: a command that
    # prints more is killed (Result.truncated, OutputTooLarge).
    max_output = CAPTURE_LIMIT_BYTES
    # Every command goes through the warm session where the connection keeps one for
    # all of them (a Windows host: one powershell.exe for the run), not only ``warm=True``.
    warm_all = False

    def __init__(self, host: str, shell: Shell | None = None):
        self.host = host
        self.shell: Shell = shell or PosixShell()
        self.notices: list[str] = []

    def notify(self, text: str) -> None:
        """Say something the user should know about this host's connection once (a
        warm session lost, commands now slower): kept in ``notices`` and printed as a
        warning line."""
        self.notices.append(text)
        print(f"nicbench: warning: {self.host}: {text}", file=sys.stderr, flush=True)

    @abstractmethod
    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        """Run argv, wait at most ``timeout`` s; on timeout kill it and mark the Result.
        ``pidfile``: keep the command's pid in that file on the host while it runs."""

    def _exec_warm(self, argv: Sequence[str], timeout: float,
                   pidfile: str | None = None) -> Result:
        """Like ``_exec``, through a shell kept running between calls where the connection
        has one (SSH to POSIX hosts, one PowerShell per Windows host): the same result, at
        less cost per call."""
        return self._exec(argv, timeout, pidfile)

    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT_S,
            warn: bool = False, hint: str = "", pidfile: str | None = None,
            warm: bool = False) -> Result:
        """Run a command. Raises CommandTimeout on timeout (always), OutputTooLarge when it
        printed more than ``max_output`` (always: it was killed), CommandFailed on a
        non-zero exit unless ``warn`` (then the caller inspects ``result.exit_status``).
        ``pidfile``: a path on the host that holds the command's pid while it runs
        (removed when it ends), so a controller that dies leaves a way to stop it.
        ``warm``: the command is one of a trial's few, where a new channel per call is
        most of the harness's cost (see ``ssh.WarmShell``); it reads no input."""
        words = _words(argv)
        result = self._tidy(self._exec_warm(words, timeout, pidfile)
                            if self.warm_all or (warm and pidfile is None)
                            else self._exec(words, timeout, pidfile))
        if result.timed_out:
            raise CommandTimeout(result, timeout)
        if result.truncated:
            raise OutputTooLarge(result, self.max_output)
        if not warn and not result.ok:
            raise CommandFailed(result, hint)
        return result

    def _tidy(self, result: Result) -> Result:
        # The host's shell cleans its own output once, here (Windows: CRLF, CLIXML
        # stderr), so callers and parsers see the same text from every host.
        out, err = self.shell.tidy_output(result.stdout, result.stderr)
        if (out, err) == (result.stdout, result.stderr):
            return result
        return dataclasses.replace(result, stdout=out, stderr=err)

    def start(self, argv: Sequence[str], workdir: str, *,
              timeout: float = DEFAULT_TIMEOUT_S) -> Background:
        """Start argv in the background (own process group) in a new directory
        ``workdir`` on the host; returns at once."""
        res = self.run(self.shell.background_argv(_words(argv), workdir), timeout=timeout)
        try:
            pid_s, workdir = res.stdout.strip().split(" ", 1)
            pid = int(pid_s)
        except ValueError as exc:
            raise RemoteError(self.host, f"could not start `{display(argv)}`: "
                                         f"unexpected reply {res.stdout.strip()!r}") from exc
        return Background(self, list(argv), pid, workdir)

    def reconnect(self, timeout_s: float) -> None:
        """Connect again after the connection was lost, within ``timeout_s``; raises
        ConnectError if the host does not come back (HostKeyError if it comes back as
        another host). Connections without a link to lose have nothing to do."""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Background:
    """A process started by :meth:`Connection.start`."""

    def __init__(self, conn: Connection, argv: list[str], pid: int, workdir: str):
        self.conn = conn
        self.argv = argv
        self.pid = pid
        self.workdir = workdir
        self.started_at = time.time()
        self._t0 = time.monotonic()
        self._collected: Result | None = None

    @property
    def command(self) -> str:
        return display(self.argv)

    @property
    def collected(self) -> bool:
        return self._collected is not None

    def is_running(self) -> bool:
        return self.conn.run(self.conn.shell.alive_argv(self.pid), warn=True,
                             timeout=DEFAULT_TIMEOUT_S).exit_status == 0

    def wait(self, timeout: float) -> bool:
        """Wait until the process exits, at most ``timeout`` s. True if it exited.

        One remote call that polls there, not one call per poll."""
        try:
            self.conn.run(self.conn.shell.wait_argv(self.pid), timeout=max(timeout, 0.05),
                          warn=True)
        except CommandTimeout:
            return False
        return True

    def ended(self, wait_s: float = 0.0) -> bool:
        """Has the command ended (waiting up to ``wait_s``)? One remote call."""
        try:
            res = self.conn.run(self.conn.shell.ended_argv(self.workdir, round(wait_s / 0.01)),
                                timeout=wait_s * 2 + 5, warn=True)
        except CommandTimeout:
            return False
        return res.exit_status == 0

    def stop_after_output(self, pattern: str, count: int, wait_s: float,
                          signal: str = "TERM") -> str:
        """Wait until the output holds ``count`` lines matching ``pattern`` (a POSIX
        extended regex), then signal the group; one remote call.

        Returns "stopped", "exited" (ended without them), "running" (seen, still there)
        or "not seen"; the caller stops a command that is not gone."""
        shell = self.conn.shell
        polls = max(1, round(wait_s / shell.OUTPUT_POLL_S))
        argv = shell.stop_after_output_argv(self.pid, self.workdir, pattern, count, polls,
                                            signal)
        try:
            res = self.conn.run(argv, timeout=wait_s * 2 + 5, warn=True)
        except CommandTimeout:
            return "not seen"
        outcomes = {0: "stopped", 3: "exited", 4: "running"}
        return outcomes.get(res.exit_status, "not seen") if res.exit_status is not None \
            else "not seen"

    def stop(self, grace_s: float = 2.0, signal: str = "TERM") -> None:
        """Signal the process group (TERM by default), then KILL it if it is still there
        after ``grace_s``."""
        if not self.is_running():
            return
        self.conn.run(self.conn.shell.kill_argv(self.pid, signal), warn=True)
        if not self.wait(grace_s):
            self.conn.run(self.conn.shell.kill_argv(self.pid, "KILL"), warn=True)
            self.wait(grace_s)

    def finished(self, result: Result) -> None:
        """Its output, collected (and its directory removed) by another step, such as a
        platform's one-call server finish: :meth:`collect` returns it from now on."""
        self._collected = result

    def collect(self) -> Result:
        """Output so far and the exit status (None if it was killed or still runs).

        Removes the process's temp directory; call it once, after wait() or stop()."""
        if self._collected is not None:
            return self._collected
        res = self.conn.run(self.conn.shell.collect_argv(self.workdir), warn=True)
        out, err, status = self.conn.shell.parse_collected(res.stdout)
        self.conn.run(self.conn.shell.cleanup_argv(self.workdir), warn=True)
        self._collected = make_result(
            self.conn.host, self.argv, stdout=out, stderr=err, exit_status=status,
            duration_s=time.monotonic() - self._t0, started_at=self.started_at)
        return self._collected
