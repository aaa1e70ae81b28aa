"""Shells: how an argv list becomes the text a host runs, and the small scripts nicbench
sends to run, watch and stop background tools.

:class:`Shell` is the seam every host's shell fills (``PosixShell`` here, the Windows
shell in ``powershell.py``). Every method returns an argv list (rendered and quoted by
:meth:`Shell.render` at the last moment) or rendered text; nothing from the inventory
or a profile is ever pasted into a script: it travels as an argument.

The POSIX scripts live in ``scripts/*.sh`` (checked by shellcheck in CI) and are sent
with ``sh -c SCRIPT nicbench ARG...``; :func:`posix_scripts` gives the exact texts sent.
"""

from __future__ import annotations

import shlex
from functools import cache
from importlib import resources
from typing import Protocol
from collections.abc import Sequence

from nicbench.limits import ERROR_BYTES, MAX_OUTPUT_BYTES

Argv = Sequence[str]


class Shell(Protocol):
    """What a Connection needs from the shell of a host."""

    name: str
    OUTPUT_POLL_S: float

    def render(self, argv: Argv) -> str:
        """The command line that runs ``argv`` exactly, every word quoted."""

    def render_with_pid(self, argv: Argv, pidfile: str | None = None) -> str:
        """Like :meth:`render`, but the command first prints its pid (the process group to
        kill on a timeout) on a line of its own. With ``pidfile``, the pid is also kept in
        that file while the command runs, for :meth:`reap_argv` after a crash."""

    def kill_argv(self, pid: int, signal: str = "TERM") -> list[str]: ...

    def background_argv(self, argv: Argv, workdir: str) -> list[str]:
        """Start ``argv`` detached, in a new directory ``workdir`` (output, exit status
        and pid go there); prints ``<pid> <workdir>``."""

    def reap_argv(self, paths: Sequence[str]) -> list[str]:
        """Stop what each path left by a crashed controller names (a background command's
        directory, a pid file), if it still runs, and remove the paths; prints
        ``stopped|gone|none PATH`` per path."""

    def alive_argv(self, pid: int) -> list[str]:
        """Exit 0 while the process (group) runs."""

    def wait_argv(self, pid: int, poll_s: float = 0.02) -> list[str]:
        """Return once the process (group) is gone (the caller's timeout bounds it)."""

    def ended_argv(self, workdir: str, polls: int) -> list[str]:
        """Exit 0 once the command has ended, 1 after ``polls`` x 10 ms."""

    def stop_after_output_argv(self, pid: int, workdir: str, pattern: str, count: int,
                               polls: int, signal: str) -> list[str]:
        """Wait for ``count`` output lines matching ``pattern``, then stop the command.
        Exit 0 stopped, 3 ended without them, 4 seen but still running, 1 not seen."""

    def collect_argv(self, workdir: str) -> list[str]:
        """Print out, err and rc of a background command, for :meth:`parse_collected`."""

    def parse_collected(self, stdout: str) -> tuple[str, str, int | None]:
        """What :meth:`collect_argv` printed -> (out, err, exit status or None)."""

    def tidy_output(self, stdout: str, stderr: str) -> tuple[str, str]:
        """A command's output as parsers read it (Windows: CRLF, CLIXML stderr)."""

    def script(self, argv: Argv) -> str:
        """The text ``render`` sends, as a person reads it (for plans and goldens)."""

    def cleanup_argv(self, workdir: str) -> list[str]: ...

    def read_and_remove_argv(self, path: str) -> list[str]: ...


@cache
def _script(name: str) -> str:
    text = (resources.files("nicbench.remote") / "scripts" / name).read_text(encoding="utf-8")
    # nicbench's own limits, never anything from an inventory or a profile
    return text.replace("@MAX_OUTPUT_BYTES_AND_ONE@", str(MAX_OUTPUT_BYTES + 1)) \
        .replace("@ERROR_BYTES@", str(ERROR_BYTES))


# Scripts that ask whether a process group is alive get the group in $PG and the alive()
# function in front of their own text.
_GROUP_PRELUDE = 'PG="$1"; shift\n'


def _with_alive(name: str) -> str:
    return _GROUP_PRELUDE + _script("alive.sh") + _script(name)


def _with_starttime(name: str) -> str:
    return _script("starttime.sh") + _script(name)


def posix_script(name: str) -> str:
    """One script's text as PosixShell sends it."""
    return posix_scripts()[name]


@cache
def posix_scripts() -> dict[str, str]:
    """Every script text PosixShell sends, by file name: what shellcheck checks."""
    plain = ("pid_exec.sh", "kill_group.sh", "ended.sh",
             "read_and_remove.sh", "cleanup.sh", "server_wake.sh")
    grouped = ("alive_now.sh", "wait_gone.sh", "stop_after_output.sh")
    timed = ("pid_tracked.sh", "reap.sh")
    return {**{n: _script(n) for n in plain}, **{n: _with_alive(n) for n in grouped},
            **{n: _with_starttime(n) for n in timed},
            "client_run.sh": _script("links.sh") + _with_starttime("client_run.sh"),
            "links.sh": _script("links.sh") + 'links "$1"\n',
            "background.sh": _with_starttime("start_bg.sh") + _script("background.sh"),
            "server_start.sh": _with_starttime("start_bg.sh") + _script("listening.sh")
            + _script("links.sh") + _script("server_start.sh"),
            "collect.sh": _script("collect_dir.sh") + _script("collect.sh"),
            "server_finish.sh": _GROUP_PRELUDE + _script("alive.sh") + _script("collect_dir.sh")
            + _script("links.sh") + _script("server_finish.sh")}


class PosixShell:
    """sh on Linux/BSD hosts."""

    name = "posix"
    OUTPUT_POLL_S = 0.02

    def render(self, argv: Argv) -> str:
        if not argv:
            raise ValueError("empty command")
        return " ".join(shlex.quote(str(w)) for w in argv)

    def _sh(self, script: str, *args: object) -> list[str]:
        return ["sh", "-c", script, "nicbench", *(str(a) for a in args)]

    def render_with_pid(self, argv: Argv, pidfile: str | None = None) -> str:
        if pidfile is not None:
            return self.render(self._sh(_with_starttime("pid_tracked.sh"), pidfile, *argv))
        if len(argv) >= 3 and argv[0] == "sh" and argv[1] == "-c":
            # A script of ours: it prints its own pid first (one shell exec less per call,
            # as pid_exec.sh would exec this same shell).
            return self.render(["sh", "-c", 'echo "$$"\n' + str(argv[2]), *argv[3:]])
        return self.render(self._sh(_script("pid_exec.sh"), *argv))

    def kill_argv(self, pid: int, signal: str = "TERM") -> list[str]:
        return self._sh(_script("kill_group.sh"), signal, int(pid))

    def background_argv(self, argv: Argv, workdir: str) -> list[str]:
        return self._sh(posix_script("background.sh"), workdir, *argv)

    def reap_argv(self, paths: Sequence[str]) -> list[str]:
        return self._sh(_with_starttime("reap.sh"), *paths)

    def alive_argv(self, pid: int) -> list[str]:
        return self._sh(_with_alive("alive_now.sh"), int(pid))

    def wait_argv(self, pid: int, poll_s: float = 0.02) -> list[str]:
        return self._sh(_with_alive("wait_gone.sh"), int(pid), f"{poll_s:g}")

    def ended_argv(self, workdir: str, polls: int) -> list[str]:
        return self._sh(_script("ended.sh"), workdir, int(polls))

    def stop_after_output_argv(self, pid: int, workdir: str, pattern: str, count: int,
                               polls: int, signal: str) -> list[str]:
        return self._sh(_with_alive("stop_after_output.sh"), int(pid), pattern, workdir,
                        int(count), int(polls), signal, f"{self.OUTPUT_POLL_S:g}")

    def collect_argv(self, workdir: str) -> list[str]:
        return self._sh(posix_script("collect.sh"), workdir)

    def parse_collected(self, stdout: str) -> tuple[str, str, int | None]:
        # collect_dir.sh: three sections with NUL-free markers; rc is empty while the
        # command runs or after it was killed. The CPU time after them is
        # :func:`collected_ticks`'s.
        out, _, rest = stdout.partition("\n@@nicbench-err@@\n")
        err, _, rc = rest.partition("\n@@nicbench-rc@@\n")
        rc = rc.partition(_TICKS_MARK)[0].strip()
        return out, err, int(rc) if rc.lstrip("-").isdigit() else None

    def tidy_output(self, stdout: str, stderr: str) -> tuple[str, str]:
        return stdout, stderr

    def script(self, argv: Argv) -> str:
        return self.render(argv)

    def cleanup_argv(self, workdir: str) -> list[str]:
        return self._sh(_script("cleanup.sh"), workdir)

    def read_and_remove_argv(self, path: str) -> list[str]:
        return self._sh(_script("read_and_remove.sh"), path)


_TICKS_MARK = "@@nicbench-cpu@@\n"


def collected_ticks(stdout: str) -> int | None:
    """The CPU time of a background command (user + system, its children's included, in
    clock ticks) from what collect_dir.sh printed after its status; None where its wrapper
    did not write it (still running, killed) or a shell that does not print it."""
    text = stdout.rpartition("\n@@nicbench-rc@@\n")[2].partition(_TICKS_MARK)[2].strip()
    return int(text) if text.isdigit() else None


def _shells() -> dict[str, type[Shell]]:
    from nicbench.remote.powershell import WindowsShell

    return {"posix": PosixShell, "powershell": WindowsShell}


SHELLS: dict[str, type[Shell]] = _shells()


if __name__ == "__main__":  # python -m nicbench.remote.shell DIR: the scripts, for shellcheck
    import sys
    from pathlib import Path

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for file, text in posix_scripts().items():
        (out / file).write_text("#!/bin/sh\n" + text)
