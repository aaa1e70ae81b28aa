"""The warm PowerShell of ``warm_powershell`` over an SSH channel (paramiko): one session per
Windows host, started by the first command and kept for the run, mirroring
``ssh.WarmShell`` (read it first: the same polling, kill and drop)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

import paramiko

from nicbench.remote.capture import Capture
from nicbench.remote.result import Result
from nicbench.remote.ssh_channel import (MAX_POLL_S, Killer, Transported, _await_output,
                                         _Lost, _result, _transport)
from nicbench.remote.warm_powershell import (FrameEnd, SessionLost, frame, is_ready, new_nonce,
                                             session_command)

# powershell.exe loads .NET before it reads a line: the first start after a boot can take
# seconds (the design's expectation, unmeasured). A session not ready by then is lost.
READY_TIMEOUT_S = 30.0


class WarmPowerShell:
    """One ``powershell.exe`` running :data:`warm_powershell.SESSION` on one channel."""

    def __init__(self, session: Transported, open_timeout_s: float,
                 ready_timeout_s: float = READY_TIMEOUT_S):
        self.transport = _transport(session)
        try:
            self.chan = self.transport.open_session(timeout=open_timeout_s)
            self.chan.exec_command(session_command())
        except (paramiko.SSHException, OSError, EOFError) as exc:
            if not self.transport.is_active():
                raise
            raise SessionLost(f"could not start ({exc})") from exc
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + ready_timeout_s
        while not is_ready(out):
            if self.chan.recv_stderr_ready():
                err += self.chan.recv_stderr(65536)
                continue
            if self.chan.closed or self.chan.exit_status_ready():
                self.close()
                said = bytes(err).decode("utf-8", "replace").strip().splitlines()
                raise SessionLost("could not start: powershell.exe ended before it was ready"
                                  + (f" ({said[-1][:120]})" if said else ""))
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise SessionLost(f"was not ready within {ready_timeout_s:g} s")
            out += _await_output(self.chan, min(left, 0.05))
        self.calls = 0

    def usable(self, session: Transported) -> bool:
        return (session.transport is self.transport and self.transport.is_active()
                and not self.chan.closed and not self.chan.exit_status_ready())

    def close(self) -> None:
        # Win32-OpenSSH ends what a session started when its channel closes (its job
        # object, Win32-OpenSSH#1195): the session and any script it still runs.
        with contextlib.suppress(paramiko.SSHException, OSError, EOFError):
            self.chan.close()

    def run(self, argv: Sequence[str], script: str, timeout: float,
            conn: Killer) -> Result:
        self.calls += 1
        nonce = new_nonce()
        started = time.time()
        t0 = time.monotonic()
        self.chan.sendall(frame(nonce, script))
        cout, cerr = Capture(conn.max_output), Capture(conn.max_output)
        out, err = cout.data, cerr.data
        end = FrameEnd(nonce)
        deadline = t0 + timeout
        poll = 0.001
        try:
            while True:
                if cout.over or cerr.over:     # past the cap: killed, as ssh.WarmShell does
                    conn._kill_remote(out)
                    self.close()
                    return _result(conn.host, argv, out, err, None, t0, started,
                                   truncated=True)
                if self.chan.recv_ready():
                    cout.add(self.chan.recv(65536))
                    poll = 0.001
                    continue
                if self.chan.recv_stderr_ready():
                    cerr.add(self.chan.recv_stderr(65536))
                    poll = 0.001
                    continue
                done = end.seen(out, err)
                if done is not None:
                    break
                if self.chan.closed or self.chan.exit_status_ready() or \
                        not self.transport.is_active():
                    if not self.transport.is_active():
                        raise _Lost()
                    self.close()
                    raise SessionLost("ended while a command ran", ran=True)
                left = deadline - time.monotonic()
                if left <= 0:
                    conn._kill_remote(out)     # the session's tree: the script's work
                    self.close()               # its marker may still come: it is done
                    return _result(conn.host, argv, out, err, None, t0, started, True)
                came = _await_output(self.chan, min(left, poll))
                if came:
                    cout.add(came)
                    poll = 0.001
                    continue
                poll = min(poll * 2, MAX_POLL_S)
        except (_Lost, SessionLost):
            raise
        except BaseException:
            conn._kill_remote(out)    # Ctrl-C while it ran: kill it, then re-raise
            self.close()
            raise
        return _result(conn.host, argv, done.stdout, done.stderr, done.status, t0, started)
