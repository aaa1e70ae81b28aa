"""Commands on this machine (the lab's root namespace), via subprocess without a shell.

Translates subprocess/OS errors into nicbench errors here and nowhere else.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence

from nicbench.errors import RemoteError
from nicbench.remote.capture import Capture
from nicbench.remote.connection import Connection
from nicbench.remote.result import Result, make_result
from nicbench.remote.shell import posix_script
import contextlib


class LocalConnection(Connection):
    def __init__(self, host: str = "localhost", env: dict[str, str] | None = None):
        super().__init__(host)
        self.env = env

    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        if pidfile is not None:
            # the same wrapper as over SSH: pid on the first line (dropped below), pid file
            argv = ["sh", "-c", posix_script("pid_tracked.sh"), "nicbench", pidfile, *argv]
        started = time.time()
        t0 = time.monotonic()
        env = None
        if self.env:
            env = {**os.environ, **self.env}
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, env=env)
        except FileNotFoundError:
            return make_result(self.host, argv, stderr=f"{argv[0]}: command not found",
                               exit_status=127, started_at=started)
        except OSError as exc:
            raise RemoteError(self.host, f"cannot run {argv[0]}: {exc.strerror}") from exc
        try:
            out, err, ending = _read_capped(proc, timeout, self.max_output)
            if ending is not None:
                _kill_group(proc.pid)
                # What it printed as it died, up to the limit, once every process of its
                # group has let go of the pipes (as subprocess's communicate() did).
                _read_capped(proc, KILLED_EOF_S, self.max_output, (out, err))
            proc.wait()
        except BaseException:
            # Ctrl-C while waiting: do not leave the child running.
            _kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        text = _text(out)
        if pidfile is not None:
            text = text.partition("\n")[2]
        return make_result(self.host, argv, stdout=text, stderr=_text(err),
                           exit_status=None if ending else proc.returncode,
                           duration_s=time.monotonic() - t0, timed_out=ending == "timeout",
                           started_at=started, truncated=ending == "over")


KILLED_EOF_S = 5.0    # how long the pipes of a killed command are read until they end


def _read_capped(proc: subprocess.Popen, timeout: float, limit: int,
                 kept: tuple[bytearray, bytearray] | None = None,
                 ) -> tuple[bytearray, bytearray, str | None]:
    """Both pipes read as they fill, at most ``limit`` bytes kept of each (after what
    ``kept`` holds), until both end; the ending is None, "timeout" (past ``timeout``) or
    "over" (a pipe went past ``limit``): the caller then kills the command."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = Capture(limit), Capture(limit)
    if kept is not None:
        out.data, err.data = kept
        out.over, err.over = len(kept[0]) >= limit, len(kept[1]) >= limit
    caps = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        for fd in caps:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return out.data, err.data, "timeout"
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                elif caps[key.fd].add(chunk) and kept is None:
                    return out.data, err.data, "over"
    return out.data, err.data, None


def _text(data: bytearray) -> str:
    """A reply as text, as subprocess's text mode gives it (universal newlines)."""
    text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
