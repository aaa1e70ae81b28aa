"""Commands on this machine (the lab's root namespace), via subprocess without a shell.

Translates subprocess/OS errors into nicbench errors here and nowhere else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence

from nicbench.errors import RemoteError
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
                                    stderr=subprocess.PIPE, text=True, errors="replace",
                                    start_new_session=True, env=env)
        except FileNotFoundError:
            return make_result(self.host, argv, stderr=f"{argv[0]}: command not found",
                               exit_status=127, started_at=started)
        except OSError as exc:
            raise RemoteError(self.host, f"cannot run {argv[0]}: {exc.strerror}") from exc
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            out, err = proc.communicate()
        except BaseException:
            # Ctrl-C while waiting: do not leave the child running.
            _kill_group(proc.pid)
            proc.wait()
            raise
        if pidfile is not None:
            out = out.partition("\n")[2]
        return make_result(self.host, argv, stdout=out, stderr=err,
                           exit_status=None if timed_out else proc.returncode,
                           duration_s=time.monotonic() - t0, timed_out=timed_out,
                           started_at=started)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
