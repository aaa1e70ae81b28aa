"""Every error nicbench raises on purpose, in one tree.

::

    NicbenchError                   base; ``str(err)`` is one line a person can act on
    ├── ConfigError                 bad inventory or profile (file, line, key path), or a
    │   │                           local file one names: ssh_config, known_hosts, key; exit 2
    │   └── ConfigErrors            several ConfigError found in one load, reported together
    ├── UsageError                  the command line or the request does not fit; exit 2
    │   ├── NotReadyError           no pair of a run is ready (check's reasons); exit 2
    │   └── StoreError              the results store cannot be opened, read or written
    ├── RemoteError                 talking to a host failed (names the host)
    │   ├── ConnectError            host (or a jump host on the way) unreachable / refused / DNS
    │   ├── AuthError               SSH authentication refused
    │   ├── HostKeyError            host key unknown, different or revoked (at any hop)
    │   ├── CommandTimeout          a command ran past its timeout (carries the Result)
    │   ├── OutputTooLarge          a command printed more than nicbench reads (ditto)
    │   └── CommandFailed           a command exited non-zero (carries the Result)
    ├── TuningError                 a host refused a setting (carries the kernel's words)
    ├── ResultsWriteError           the results directory cannot be written (disk full)
    ├── LabError                    the local namespace lab could not be built or torn down
    ├── ParseError                  tool output not understood; exit 3
    └── TrialError                  a trial could not produce a measurement (reason inside)

Errors of the libraries below (paramiko, socket, subprocess, yaml, pydantic) are translated
into this tree in exactly one place each (``remote/ssh.py`` and the helpers it reads local
files with, ``remote/known_hosts.py``, ``remote/ssh_keys.py`` and ``remote/ssh_config.py``;
``remote/local.py``; ``config/loader.py``) with ``raise ... from exc``, so callers only
ever catch these.
"""

from __future__ import annotations

from typing import Protocol
from collections.abc import Iterable
from enum import StrEnum


class Result(Protocol):
    """What a command error needs of the command's outcome (``remote.result.Result`` is
    one): said here, so the bottom layer imports nothing of nicbench."""

    @property
    def host(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def exit_status(self) -> int | None: ...
    def tail(self, lines: int = 3) -> str: ...


class NicbenchError(Exception):
    """Base of every deliberate nicbench error. ``exit_code`` is what the CLI returns."""

    exit_code = 1

    def one_line(self) -> str:
        return str(self).split("\n", 1)[0] or type(self).__name__

    def lines(self) -> list[str]:
        """What the CLI prints, one ``nicbench: error:`` line each."""
        return [str(self)]


class UsageError(NicbenchError):
    exit_code = 2


class NotReadyError(UsageError):
    """No pair of a run is ready to measure (a tool missing, an interface absent): the
    run is refused before it changes anything, with ``nicbench check``'s reason for each
    pair, one line each."""

    def __init__(self, problems: Iterable[str], profile: str):
        self.problems = list(problems)
        super().__init__(f"no pair is ready to run {profile}; nothing was changed: "
                         + "; ".join(self.problems))
        self.profile = profile

    def lines(self) -> list[str]:
        return [*self.problems,
                f"no pair is ready to run {self.profile}: nothing was changed (see "
                f"`nicbench check --profile {self.profile}`)"]


class StoreError(UsageError):
    """The results store (``--store``) cannot be opened, read or written: not a store,
    another schema version, a server that does not answer, locked by another writer.
    Translated from DuckDB's and psycopg's errors in one place (``store/backend.py``)."""


class ConfigError(NicbenchError):
    """One problem in one file: ``file:line: key.path: message``."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        key = f"{self.key}: " if self.key else ""
        return f"{where}{key}{self.message}"


class ConfigErrors(ConfigError):
    """Several config problems found in one pass; each is printed on its own line."""

    def __init__(self, errors: Iterable[ConfigError]):
        # Each problem once: several checks can find the same one (a key both missing
        # and referenced); the first of a kind keeps its place.
        by_text: dict[str, ConfigError] = {}
        for e in errors:
            by_text.setdefault(e.render(), e)
        self.errors = list(by_text.values())
        first = self.errors[0] if self.errors else ConfigError("invalid configuration")
        super().__init__(first.message, file=first.file, line=first.line, key=first.key)

    def lines(self) -> list[str]:
        return [e.render() for e in self.errors]

    def __str__(self) -> str:
        return "\n".join(self.lines())


class RemoteError(NicbenchError):
    """Something went wrong talking to ``host``; ``hint`` says what to do."""

    def __init__(self, host: str, message: str, hint: str = ""):
        self.host = host
        self.message = message
        self.hint = hint
        text = f"{host}: {message}"
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class ConnectError(RemoteError):
    pass


class AuthError(RemoteError):
    pass


class HostKeyError(RemoteError):
    pass


class CommandError(RemoteError):
    """A command ran but did not end well; ``result`` holds its command and output."""

    def __init__(self, result: Result, message: str, hint: str = ""):
        self.result = result
        tail = result.tail()
        if tail:
            message = f"{message}: {tail}"
        super().__init__(result.host, message, hint)


class CommandTimeout(CommandError):
    def __init__(self, result: Result, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(result, f"`{result.command}` timed out after {timeout_s:g} s and was killed")


class OutputTooLarge(CommandError):
    """A command printed more than nicbench reads of one reply (``limits.py``): it was
    killed, and ``result`` holds the head of its output (``result.truncated``)."""

    def __init__(self, result: Result, limit_bytes: int):
        self.limit_bytes = limit_bytes
        super().__init__(result, f"`{result.command}` printed more than {limit_bytes} bytes "
                                 "and was killed")


class CommandFailed(CommandError):
    def __init__(self, result: Result, hint: str = ""):
        super().__init__(result, f"`{result.command}` exited {result.exit_status}", hint)


class TuningErrorKind(StrEnum):
    """What happened to a setting a host did not take (:attr:`TuningError.kind`), so the
    run can record it as data (``results.records.Failure.of_tuning``)."""

    REFUSED = "refused"         # the driver or kernel said no: a result, never measured again
    PATH = "path"               # the setting was taken but the path did not carry it
    MISMATCH = "mismatch"       # accepted, reads back otherwise
    INTERFACE = "interface"     # the interface is missing or down
    OTHER = "other"


class TuningError(NicbenchError):
    """A host did not take a setting. ``kernel_message`` is what the OS said, verbatim;
    ``kind`` (:class:`TuningErrorKind`) says what happened."""

    def __init__(self, host: str, setting: str, value: object, kernel_message: str,
                 hint: str = "", *, kind: TuningErrorKind = TuningErrorKind.REFUSED):
        self.host = host
        self.setting = setting
        self.value = value
        self.kind = TuningErrorKind(kind)     # ValueError for a kind that is not one
        self.kernel_message = kernel_message.strip()
        text = f"{host}: cannot set {setting} to {value}: {self.kernel_message}"
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class ResultsWriteError(NicbenchError):
    """A results directory could not be written (disk full, read-only, gone). The run
    stops, with the hosts' settings put back and every trial written so far intact."""

    def __init__(self, path: object, why: str):
        self.path = path
        super().__init__(f"{path}: cannot write results: {why}")


class LabError(NicbenchError):
    pass


class ParseError(NicbenchError):
    """Tool output that does not match what the parser knows.

    ``expected`` says what the parser looked for, ``where`` where it stopped
    (a line number or a JSON path)."""

    exit_code = 3

    def __init__(self, tool: str, expected: str, where: str = ""):
        self.tool = tool
        self.expected = expected
        self.where = where
        text = f"{tool}: expected {expected}"
        if where:
            text += f" ({where})"
        super().__init__(text)


class TrialError(NicbenchError):
    pass
