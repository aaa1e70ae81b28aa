"""What both shells kept on an SSH channel share with a channel per command
(``ssh.WarmShell``, ``ssh_powershell.WarmPowerShell``, ``ssh.SshConnection._exec``):
waiting for a channel's output, a Result from what it carried, a lost connection."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

import paramiko

from nicbench.remote.result import Result, make_result

class Transported(Protocol):
    """An established connection (``ssh.SshSession``): its host's transport."""

    @property
    def transport(self) -> paramiko.Transport: ...

    def is_active(self) -> bool: ...


class Killer(Protocol):
    """The connection a kept shell runs for (``ssh.SshConnection``)."""

    host: str
    max_output: int         # the most of one reply's stdout, and stderr, kept

    def _kill_remote(self, out: bytearray) -> None: ...


# How late, at most, the end of a long command is noticed: its exit status does not end
# the wait for output. 50 ms cost every 1-second trial up to 50 ms; 5 ms costs ~200 cheap wakeups a
# second while a command runs.
MAX_POLL_S = 0.005


def _result(host: str, argv: Sequence[str], out: bytes | bytearray, err: bytes | bytearray,
            status: int | None, t0: float, started: float, timed_out: bool = False,
            truncated: bool = False) -> Result:
    """A command's Result from what its channel carried: the first line of its output is
    the pid the wrapper printed (what a timeout kills), not the command's."""
    pid_end = out.find(b"\n")
    raw_out = bytes(memoryview(out)[pid_end + 1:]) if pid_end >= 0 else b""
    return make_result(host, argv, stdout=raw_out.decode("utf-8", "replace"),
                       stderr=bytes(err).decode("utf-8", "replace"), exit_status=status,
                       duration_s=time.monotonic() - t0, timed_out=timed_out,
                       started_at=started, raw=(raw_out, bytes(err)), truncated=truncated)


def _await_output(chan: paramiko.Channel, timeout: float) -> bytes:
    """Up to ``timeout`` s for the channel's next output: what came (b"" if nothing did,
    or its output has ended). Not select() on the channel: its fileno() makes a pipe that
    paramiko's Channel.close() closes without the lock its transport thread holds while it
    writes to that pipe for arriving data, so a close as data came (a timed-out command's
    marker, killed) raised EBADF in the transport thread (which then dropped the
    connection) or wrote into whatever file had just taken the descriptor's number."""
    if chan.eof_received:
        time.sleep(timeout)          # no more output; its exit status or close is polled
        return b""
    chan.settimeout(timeout)
    try:
        return chan.recv(65536)
    except TimeoutError:
        return b""
    finally:
        chan.settimeout(None)        # its other calls (sendall) block as before


class _Lost(Exception):
    """The SSH connection died while a command ran."""


def _transport(session: Transported) -> paramiko.Transport:
    tr = session.transport
    if not tr.is_active():   # closed under us: the caller's except clauses treat it as lost
        raise paramiko.SSHException("the SSH connection is closed")
    return tr
