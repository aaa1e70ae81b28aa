"""Commands as argument lists, rendered for the target shell at the last moment.

Nothing from the inventory or a profile is ever pasted into a shell string: callers build
``argv`` lists and a :class:`Shell` renders them, quoting every word. :class:`Secret`
words render into the real command but show as ``***`` wherever a command is displayed
or stored (logs, results, error messages).
"""

from __future__ import annotations

import shlex
from typing import Sequence


class Secret(str):
    """A word that must not be displayed (passwords, tokens)."""

    def __repr__(self) -> str:  # pragma: no cover - trivial
        return "Secret('***')"


Argv = Sequence[str]


def display(argv: Argv) -> str:
    """The command as a person should see it: POSIX-quoted, secrets masked."""
    return " ".join("***" if isinstance(w, Secret) else shlex.quote(str(w)) for w in argv)


class PosixShell:
    """sh on Linux/BSD hosts."""

    name = "posix"

    def render(self, argv: Argv) -> str:
        if not argv:
            raise ValueError("empty command")
        return " ".join(shlex.quote(str(w)) for w in argv)

    # The wrapper prints its own pid on the first line of stdout and then execs the
    # command, so the pid is the command's. sshd makes every exec channel a session
    # leader, so the pid is also the process group: a timeout kills the whole group.
    def render_with_pid(self, argv: Argv) -> str:
        return self.render(["sh", "-c", 'echo "$$"; exec "$@"', "nicbench", *argv])

    def kill_argv(self, pid: int, signal: str = "TERM") -> list[str]:
        # dash's kill takes "-SIG -PGID" but not "--"; fall back to the single pid.
        return ["sh", "-c",
                f'kill -{signal} -"$1" 2>/dev/null || kill -{signal} "$1" 2>/dev/null; true',
                "nicbench", str(int(pid))]

    # A group is alive while any of its processes is not a zombie. Orphans are reaped by
    # PID 1, sometimes seconds later, and "kill -0" succeeds on a zombie, so it would
    # report a finished tool as running. /proc where there is one, kill -0 elsewhere.
    _ALIVE = ('alive() { if [ -d /proc/self ]; then for f in /proc/[0-9]*/stat; do '
              'read -r l < "$f" 2>/dev/null || continue; r=${l##*) }; set -- $r; '
              '[ "$1" != Z ] && [ "$3" = "$PG" ] && return 0; done; return 1; '
              'else kill -0 -"$PG" 2>/dev/null; fi; }; ')

    def alive_script(self, pgid: int, body: str) -> list[str]:
        return ["sh", "-c", f'PG="$1"; {self._ALIVE}{body}', "nicbench", str(int(pgid))]

    # Background processes: a new session per process (setsid) so stop() can signal the
    # whole group; output goes to files in a private temp directory, the exit status to
    # "rc" when the command ends by itself.
    _BG = ('d=$(mktemp -d "${TMPDIR:-/tmp}/nicbench.XXXXXX") || exit 97\n'
           'setsid sh -c \'"$@" >"$0/out" 2>"$0/err" </dev/null; echo "$?" >"$0/rc"\' '
           '"$d" "$@" >/dev/null 2>&1 </dev/null &\n'
           'echo "$! $d"')

    def background_argv(self, argv: Argv) -> list[str]:
        return ["sh", "-c", self._BG, "nicbench", *argv]

    def alive_argv(self, pid: int) -> list[str]:
        return self.alive_script(pid, "alive")

    def wait_argv(self, pid: int, poll_s: float = 0.02) -> list[str]:
        return self.alive_script(pid, f"while alive; do sleep {poll_s:g}; done")

    def collect_argv(self, workdir: str) -> list[str]:
        # Three sections separated by NUL-free markers; rc is empty while running/killed.
        return ["sh", "-c",
                'cat "$1/out" 2>/dev/null; printf "\\n@@nicbench-err@@\\n"; '
                'cat "$1/err" 2>/dev/null; printf "\\n@@nicbench-rc@@\\n"; '
                'cat "$1/rc" 2>/dev/null; true',
                "nicbench", workdir]

    def cleanup_argv(self, workdir: str) -> list[str]:
        return ["rm", "-rf", "--", workdir]

    # "$workdir/rc" appears when the command ends (exits, or is killed alone). Testing for
    # it is one short call; asking whether the group is alive reads every /proc/*/stat
    # in sh (20-30 ms on a busy machine).
    _ENDED = ('i=0; while [ ! -e "$1/rc" ]; do i=$((i + 1)); [ "$i" -gt "$2" ] && exit 1; '
              'sleep 0.01; done')

    def ended_argv(self, workdir: str, polls: int) -> list[str]:
        """Exit 0 once the command has ended, 1 after ``polls`` x 10 ms."""
        return ["sh", "-c", self._ENDED, "nicbench", workdir, str(int(polls))]

    # Poll the output until it holds N lines matching RE, then signal the group and wait
    # until it is gone. Exit 0: seen and stopped; 4: seen, but the group outlived the
    # signal; 3: the command ended without it; 1: not seen within the polls. "alive"
    # (the group) is asked only every 10th poll: it reads every /proc/*/stat.
    OUTPUT_POLL_S = 0.02
    _STOP_AFTER = (
        'RE="$2"; D="$3"; N="$4"; I="$5"; SIG="$6"; k=0\n'
        'while :; do\n'
        '  c=$(grep -cE -- "$RE" "$D/out" 2>/dev/null)\n'
        '  [ "${c:-0}" -ge "$N" ] && break\n'
        '  [ -e "$D/rc" ] && exit 3\n'
        '  k=$((k + 1)); [ $((k % 10)) -eq 0 ] && { alive || exit 3; }\n'
        '  [ "$k" -ge "$I" ] && exit 1\n'
        f'  sleep {OUTPUT_POLL_S:g}\n'
        'done\n'
        'kill -"$SIG" -"$PG" 2>/dev/null || kill -"$SIG" "$PG" 2>/dev/null\n'
        'k=0; while alive; do k=$((k + 1)); [ "$k" -ge 100 ] && exit 4; sleep 0.01; done')

    def stop_after_output_argv(self, pid: int, workdir: str, pattern: str, count: int,
                               polls: int, signal: str) -> list[str]:
        return self.alive_script(pid, self._STOP_AFTER) + [
            pattern, workdir, str(int(count)), str(int(polls)), signal]


class PowerShell:
    """PowerShell on Windows hosts (OpenSSH server with PowerShell as its shell).

    Only rendering is provided now; Windows support builds on it. Single-quoted
    PowerShell strings take everything literally except ``'``, which is doubled.
    """

    name = "powershell"

    def quote(self, word: str) -> str:
        return "'" + str(word).replace("'", "''") + "'"

    def render(self, argv: Argv) -> str:
        if not argv:
            raise ValueError("empty command")
        return "& " + " ".join(self.quote(w) for w in argv)


SHELLS = {"posix": PosixShell(), "powershell": PowerShell()}
