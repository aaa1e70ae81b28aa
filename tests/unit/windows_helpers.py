"""Test helpers for Windows commands: read PowerShell single-quoted literals and Windows
command lines back the way PowerShell and the MS C runtime do, written from their
documented rules (about_Quoting_Rules; "Parsing C++ command-line arguments")."""

from __future__ import annotations

import re

from nicbench.remote.fake import ReplayConnection
from nicbench.remote.powershell import WindowsShell, decode_command

SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_literals(script: str) -> list[str]:
    """Every single-quoted string literal in ``script``, unquoted ('' -> ')."""
    out, i = [], 0
    while i < len(script):
        if script[i] in SINGLE_QUOTES:
            literal, i = _literal_at(script, i)
            out.append(literal)
        elif script[i] == "#" and (i == 0 or script[i - 1] in " \n"):
            i = script.find("\n", i) if "\n" in script[i:] else len(script)   # comment
        else:
            i += 1
    return out


def command_line_to_argv(line: str) -> list[str]:
    """CommandLineToArgvW / MS C runtime rules: whitespace separates, "..." groups,
    2n backslashes + quote -> n backslashes and a delimiter, 2n+1 -> n and a literal
    quote, other backslashes literal."""
    args: list[str] = []
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            break
        buf, quoted = [], False
        while i < n and (quoted or line[i] not in " \t"):
            if line[i] == "\\":
                j = i
                while j < n and line[j] == "\\":
                    j += 1
                count = j - i
                if j < n and line[j] == '"':
                    buf.append("\\" * (count // 2))
                    if count % 2:
                        buf.append('"')
                        i = j + 1
                    else:
                        i = j
                else:
                    buf.append("\\" * count)
                    i = j
            elif line[i] == '"':
                if quoted and i + 1 < n and line[i + 1] == '"':
                    buf.append('"')
                    i += 2
                else:
                    quoted = not quoted
                    i += 1
            else:
                buf.append(line[i])
                i += 1
        args.append("".join(buf))
    return args


def decoded(line: str) -> str:
    return decode_command(line)


def _literal_at(script: str, i: int) -> tuple[str, int]:
    """The single-quoted literal starting at ``i`` and the index after it."""
    j, buf = i + 1, []
    while True:
        if j >= len(script):
            raise AssertionError(f"unterminated literal at {i}")
        if script[j] in SINGLE_QUOTES:
            if j + 1 < len(script) and script[j + 1] in SINGLE_QUOTES:
                buf.append(script[j])
                j += 2
                continue
            return "".join(buf), j + 1
        buf.append(script[j])
        j += 1


def params(script: str) -> dict[str, str]:
    """The ``$Name = '...'`` parameter lines of a decoded script (after the prologue),
    read in order, each literal to its end (values may span lines)."""
    out: dict[str, str] = {}
    pos = 0
    pattern = re.compile(r"\$([A-Za-z][A-Za-z0-9]*) = '")
    while True:
        m = pattern.match(script, pos)
        if m is None:
            nl = script.find("\n", pos)
            if nl < 0 or script.startswith(("$ErrorActionPreference", "try {"), pos):
                return out
            pos = nl + 1
            continue
        value, end = _literal_at(script, m.end() - 1)
        if m.group(1) not in ("ProgressPreference", "ErrorActionPreference"):
            out[m.group(1)] = value
        pos = end + 1


def replay_hosts(monkeypatch, pair, record=None) -> dict[str, ReplayConnection]:
    """Make the CLI's HostPool (`nicbench restore`, `check`, `windows capture`) reach the
    scripted hosts of ``pair`` (a FakeWindowsPair) instead of SSH; there is no local key
    or known_hosts to check first. ``record(host, call, reply)`` hears every answer."""
    import nicbench.platforms.hosts as hosts_mod
    from nicbench.platforms.windows import WindowsPlatform

    conns: dict[str, ReplayConnection] = {}

    def connect(self, host):
        fake = pair.hosts[host.name]

        def answer(call):
            reply = fake(call)
            if record is not None:
                record(host.name, call, reply)
            return reply
        answer.reconnect = fake.reconnect   # type: ignore[attr-defined]
        conns[host.name] = ReplayConnection(host.name, WindowsShell(), answer)
        return conns[host.name]
    monkeypatch.setattr(hosts_mod, "preflight", lambda target: None)
    monkeypatch.setattr(hosts_mod.HostPool, "_ssh", connect)
    monkeypatch.setattr(WindowsPlatform, "PROBE_INTERVAL_S", 0.0)
    return conns
