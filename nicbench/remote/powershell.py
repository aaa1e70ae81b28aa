"""Windows PowerShell 5.1 over OpenSSH: how an argv list or a script reaches a Windows
host, and the scripts that run, watch and stop background tools there.

A command runs in the host's warm PowerShell session where the connection keeps one
(``warm_powershell``: :meth:`WindowsShell.warm_script` is what the session runs), else,
and to start that session, as ``powershell.exe -NoLogo -NoProfile -NonInteractive
-ExecutionPolicy Bypass -EncodedCommand <base64 of UTF-16LE script>``. The argument holds
only ``[A-Za-z0-9+/=]``, so it crosses cmd.exe (OpenSSH's default shell), PowerShell as
DefaultShell and sshd's own re-quoting unchanged (Win32-OpenSSH#1082, #1273, #936; the
same choice as k0sproject/rig, Ansible and PerfKitBenchmarker). Every script starts with
:data:`PROLOGUE`: progress records off (they arrive as CLIXML on stderr when there is no
tty, PowerShell#16678) and UTF-8 console output (the OEM code page otherwise).

Two kinds of argv:

* a native command, ``["NTttcp.exe", "-r", ...]``: the body is ``& 'exe' 'arg' ...`` with
  every word a single-quoted literal (``'`` doubled), then ``exit $LASTEXITCODE`` (without
  it powershell.exe exits 0/1 from ``$?``). A command that is not found exits 127.
* a script, built by :func:`ps_script`: ``[SCRIPT_MARK, Script(text), name, value, ...]``.
  Each ``name``/``value`` pair becomes ``$name = 'value'`` in front of the text, so
  nothing from the inventory or a profile is ever pasted into script text: it arrives as
  a single-quoted literal. The text runs inside ``try`` with
  ``$ErrorActionPreference='Stop'``; an error prints its plain text on stderr and exits 1.

What leaves a process on the host follows the shell protocol of ``shell.py``: a
background tool runs in a directory the controller names (and journals) first, with
``<pid> <start time>`` in its ``pid`` file; a client run with a pid file keeps the same
there while it runs; :meth:`WindowsShell.reap_argv` stops what either names by PID tree,
only if the pid still runs with that start time, and removes the path.

To show a command as a person reads it (a plan, a log), :meth:`WindowsShell.script`
gives the decoded script ``render`` sends and :meth:`WindowsShell.script_with_pid` the
one a Connection sends; :func:`decode_command` turns a rendered line back into its
script, as the tests do against golden files. :func:`decode_clixml` turns CLIXML on
stderr into the plain error text (:meth:`WindowsShell.tidy_output` applies it to every
result).

Nothing here was run on Windows: this machine has no PowerShell (see README, "Windows
hosts"). The rules it follows are cited where they are used.
"""

from __future__ import annotations

import base64
import html
import re
import subprocess
from collections.abc import Sequence

from nicbench.errors import UsageError
from nicbench.remote.command import Argv, Script

POWERSHELL = ("powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive",
              "-ExecutionPolicy", "Bypass", "-EncodedCommand")
PROLOGUE = ("$ProgressPreference = 'SilentlyContinue'\n"
            "[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false\n")
SCRIPT_MARK = "#powershell"
# cmd.exe's limit for one command line (OpenSSH's default shell is cmd.exe).
MAX_COMMAND_LINE = 8191
_PARAM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,31}$")


class WindowsScriptError(UsageError, ValueError):
    """A command that cannot be sent to Windows as asked (too long, a word PowerShell
    5.1 would pass mangled)."""


def quote(word: str) -> str:
    """A PowerShell single-quoted literal: everything literal except ``'``, doubled.

    PowerShell also treats the typographic quotes U+2018/2019/201A/201B as single quotes
    (about_Quoting_Rules), so they are doubled too. A NUL is refused: PowerShell ends
    the command line there (WindowsScriptError)."""
    _check_no_nul(str(word))
    return "'" + re.sub(r"(['\u2018\u2019\u201a\u201b])", r"\1\1", str(word)) + "'"


def ps_script(text: str, label: str, **params: object) -> list[str]:
    """The argv of a PowerShell script: ``text`` sees each keyword as ``$name``, a
    string. ``label`` is how the command is displayed (``Result.command``, errors)."""
    argv: list[str] = [SCRIPT_MARK, Script(text, label)]
    _check_no_nul(text)
    for name, value in params.items():
        if not _PARAM_RE.match(name):
            raise WindowsScriptError(f"script parameter name {name!r}")
        _check_no_nul(str(value), name)
        argv += [name, str(value)]
    return argv


def _check_no_nul(text: str, what: str = "") -> None:
    # No Windows command line can carry a NUL (CreateProcess takes a NUL-terminated
    # string), so a value holding one would arrive cut short: refused when built.
    if "\0" in text:
        raise WindowsScriptError(f"{what + ': ' if what else ''}{text[:40]!r}: a NUL cannot "
                                 "reach a Windows command")


def is_script(argv: Argv) -> bool:
    return bool(argv) and argv[0] == SCRIPT_MARK


def script_body(argv: Argv) -> str:
    """The script text (without :data:`PROLOGUE`) that :meth:`WindowsShell.render` sends."""
    if not argv:
        raise WindowsScriptError("empty command")
    if is_script(argv):
        if len(argv) < 2 or len(argv) % 2 != 0:
            raise WindowsScriptError("a script argv is [mark, text, name, value, ...]")
        lines = [f"${argv[i]} = {quote(argv[i + 1])}" for i in range(2, len(argv), 2)]
        lines += ["$ErrorActionPreference = 'Stop'",
                  "try {",
                  *("    " + ln if ln.strip() else "" for ln in str(argv[1]).strip("\n").split("\n")),
                  "} catch {",
                  "    [Console]::Error.WriteLine(($_ | Out-String).Trim())",
                  "    exit 1",
                  "}"]
        return "\n".join(lines) + "\n"
    for word in argv:
        _check_native_word(str(word))
    return ("$global:LASTEXITCODE = $null\n"
            "& " + " ".join(quote(w) for w in argv) + "\n"
            "if ($null -eq $global:LASTEXITCODE) { exit 127 }\n"
            "exit $global:LASTEXITCODE\n")


def _check_native_word(word: str) -> None:
    # Windows PowerShell 5.1 builds a native command line by wrapping words with spaces in
    # "..." without escaping embedded quotes or a trailing backslash, so such words reach
    # the program split or merged (about_Parsing; PowerShell#1995, fixed only in 7.3).
    if "\0" in word or '"' in word:
        raise WindowsScriptError(f"{word!r}: PowerShell 5.1 cannot pass a NUL or a double "
                                 "quote to a native program intact")
    if word.endswith("\\") and re.search(r"\s", word):
        raise WindowsScriptError(f"{word!r}: PowerShell 5.1 cannot pass a word with spaces "
                                 "ending in a backslash to a native program intact")


def encode(script: str) -> str:
    """``-EncodedCommand``'s argument: base64 of the UTF-16LE script."""
    return base64.b64encode(script.encode("utf-16-le")).decode("ascii")


def encoded_command(script: str) -> str:
    """The full command line that runs ``script`` (with :data:`PROLOGUE`)."""
    line = " ".join(POWERSHELL) + " " + encode(PROLOGUE + script)
    if len(line) > MAX_COMMAND_LINE:
        raise WindowsScriptError(f"encoded script of {len(line)} characters is over cmd.exe's "
                                 f"{MAX_COMMAND_LINE}: split it")
    return line


def decode_command(line: str) -> str:
    """The script a command line built by :func:`encoded_command` runs (prologue included)."""
    words = line.split()
    if tuple(words[:len(POWERSHELL)]) != POWERSHELL or len(words) != len(POWERSHELL) + 1:
        raise ValueError(f"not an encoded PowerShell command: {line[:80]!r}")
    return base64.b64decode(words[-1], validate=True).decode("utf-16-le")


def list2cmdline(argv: Sequence[str]) -> str:
    """Words -> one Windows command line that the MS C runtime (and CommandLineToArgvW)
    splits back into the same words; what Start-Process -ArgumentList passes on."""
    return subprocess.list2cmdline([str(w) for w in argv])


# -- CLIXML on stderr ------------------------------------------------------------------
_CLIXML_HEAD = "#< CLIXML"
_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ERROR_STRING = re.compile(r'<S S="Error">(.*?)</S>', re.S)


def decode_clixml(text: str) -> str:
    """Plain text of the error records in CLIXML stderr (``#< CLIXML`` + ``<Objs>``);
    progress and other records are dropped, ``_xHHHH_`` escapes and ANSI colours undone.
    Text that is not CLIXML comes back unchanged (lines before the header kept)."""
    at = text.find(_CLIXML_HEAD)
    if at < 0:
        return text
    before = text[:at]
    parts = []
    for raw in _ERROR_STRING.findall(text[at:]):
        decoded = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), html.unescape(raw))
        parts.append(decoded)
    plain = _ANSI.sub("", "".join(parts)).replace("\r\n", "\n")
    return before + "\n".join(ln.rstrip() for ln in plain.split("\n")).strip("\n") + (
        "\n" if parts else "")


def tidy_text(text: str) -> str:
    """Windows text as the parsers read it: CRLF as LF, no BOM."""
    return text.lstrip("\ufeff").replace("\r\n", "\n")


def decode_file_bytes(data: bytes) -> str:
    """A file a tool or PowerShell wrote: UTF-16 when it has that BOM (what ``>`` and
    Out-File write in 5.1), else UTF-8 (BOM or not), else the ANSI code page's ASCII
    subset with replacement characters."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return tidy_text(data.decode("utf-16"))
    return tidy_text(data.decode("utf-8", "replace"))


# -- the scripts that run, watch and stop background tools ------------------------------
# Win32-OpenSSH puts a session in a job object that kills every child when the command
# ends (Win32-OpenSSH#1195, #1642): a receiver started with Start-Process would die with
# the call that started it. A process created by the WMI service is outside that job
# (jborean93 in #1642), and inherits no pipe of the session (the sshd hang of #2452).
# The controller names the work directory (under the SSH user's TEMP) and journals it
# before this runs; the script makes it and writes "<pid> <start time>" into its "pid"
# (the start time as a FILETIME, UTC), so a later reap can tell the runner from another
# process that reused its pid. Exit 97: the directory or the process could not be made.
#
# In the host's warm PowerShell session ($NicbenchSession, warm_powershell.SESSION), which
# lives as long as the run's connection, the session starts the tool itself with no
# runner process (its Start-NicbenchBackground); a start that fails exits 97.
BACKGROUND = r"""
if (Test-Path -LiteralPath $Dir) { [Console]::Error.WriteLine($Dir + ' exists already'); exit 97 }
$null = [IO.Directory]::CreateDirectory($Dir)
if ($NicbenchSession) {
    try { $id = Start-NicbenchBackground $Dir $Exe $ArgLine }
    catch { [Console]::Error.WriteLine('cannot start ' + $Exe + ': ' + $_); exit 97 }
} else {
    $line = $PowerShell + ' ' + [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes($Runner))
    $r = Invoke-CimMethod -ClassName Win32_Process -MethodName Create -Arguments @{CommandLine = $line; CurrentDirectory = $Dir}
    if ($r.ReturnValue -ne 0) {
        [Console]::Error.WriteLine('Win32_Process.Create failed: ' + $r.ReturnValue)
        exit 97
    }
    $id = [int]$r.ProcessId
}
$st = ''
$p = Get-Process -Id $id -ErrorAction SilentlyContinue
if ($p) { $st = [string]$p.StartTime.ToFileTimeUtc() }
[IO.File]::WriteAllText((Join-Path $Dir 'pid'), [string]$id + ' ' + $st)
[Console]::Out.WriteLine([string]$id + ' ' + $Dir)
"""

# Runs detached (created by WMI in its work directory): the tool with its output in
# files, then its exit code in "rc". $p.Handle is read so that ExitCode is kept
# (PowerShell#5421, #20716). The work directory is the current one: the runner's text
# does not depend on it, so the same argv gives the same script.
RUNNER = r"""
$d = (Get-Location).ProviderPath
$start = @{FilePath = $Exe; WorkingDirectory = $d; NoNewWindow = $true; PassThru = $true
           RedirectStandardOutput = (Join-Path $d 'out'); RedirectStandardError = (Join-Path $d 'err')}
if ($ArgLine) { $start.ArgumentList = $ArgLine }
try {
    $p = Start-Process @start
    $null = $p.Handle
    $p.WaitForExit()
    $rc = [string]$p.ExitCode
} catch {
    [IO.File]::AppendAllText((Join-Path $d 'err'), ($_ | Out-String))
    $rc = '127'
}
[IO.File]::WriteAllText((Join-Path $d 'rc'), $rc)
"""

ALIVE = r"""
if (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue) { exit 0 }
exit 1
"""

# The caller's timeout bounds the wait; the count bounds it too (one hour of polls).
WAIT_GONE = r"""
for ($i = 0; $i -lt 360000; $i++) {
    if (-not (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue)) { exit 0 }
    Start-Sleep -Milliseconds ([int]$PollMs)
}
exit 1
"""

ENDED = r"""
$rc = Join-Path $Dir 'rc'
for ($i = 0; -not (Test-Path -LiteralPath $rc); $i++) {
    if ($i -ge [int]$Polls) { exit 1 }
    Start-Sleep -Milliseconds 10
}
exit 0
"""

# $ErrorActionPreference = 'Stop' is for cmdlets only. A native program inside a script is
# run by this function, in its own scope with 'Continue', its stderr taken as text, and
# judged by its exit code: with 'Stop', PowerShell 5.1 turns the first line a native
# program writes on a redirected stderr into a terminating NativeCommandError
# (PowerShell#3996, #14273; windows.md pitfall 4), so taskkill's "process not found"
# would end a script that was only making sure. Returns the exit code.
INVOKE_NATIVE = r"""
function Invoke-Native {
    $ErrorActionPreference = 'Continue'
    $exe, $rest = $args
    $null = & $exe @rest 2>&1
    return $LASTEXITCODE
}
"""

# No signals on Windows: a console tool without a console can only be ended by
# TerminateProcess (taskkill /F), so servers must have printed their report first: this
# waits for it. The file is opened with FileShare.ReadWrite because the tool still
# writes it. Exit 0: seen and stopped; 4: seen, still running after the kill; 3: ended
# without it; 1: not seen within the polls.
STOP_AFTER_OUTPUT = INVOKE_NATIVE + r"""
$out = Join-Path $Dir 'out'
$rc = Join-Path $Dir 'rc'
$re = New-Object System.Text.RegularExpressions.Regex($Pattern, 'Multiline')
function Count-Matches {
    if (-not (Test-Path -LiteralPath $out)) { return 0 }
    $fs = [IO.File]::Open($out, 'Open', 'Read', 'ReadWrite')
    try { $text = (New-Object IO.StreamReader($fs)).ReadToEnd() } finally { $fs.Dispose() }
    return @($text -split "`r?`n" | Where-Object { $re.IsMatch($_) }).Count
}
for ($i = 0; (Count-Matches) -lt [int]$Count; $i++) {
    if (Test-Path -LiteralPath $rc) { exit 3 }
    if ($i -ge [int]$Polls) { exit 1 }
    Start-Sleep -Milliseconds ([int]$PollMs)
}
$null = Invoke-Native taskkill.exe /PID ([int]$Id) /T /F
for ($i = 0; $i -lt 100; $i++) {
    if (-not (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue)) { exit 0 }
    Start-Sleep -Milliseconds 10
}
exit 4
"""

# By PID and its tree, never by image name (PKB's taskkill /IM would end other runs).
# taskkill's exit code: 0 stopped, 128 no such process (it had ended: fine); another is
# said and returned.
KILL_TREE = INVOKE_NATIVE + r"""
$rc = Invoke-Native taskkill.exe /PID ([int]$Id) /T /F
if ($rc -eq 0 -or $rc -eq 128) { exit 0 }
[Console]::Error.WriteLine('taskkill /PID ' + $Id + ' exited ' + $rc)
exit $rc
"""

# Bytes, as base64: never re-encoded by PowerShell (5.1's Get-Content reads ANSI, ">"
# writes UTF-16); the controller decodes them (decode_file_bytes).
COLLECT = r"""
foreach ($name in 'out', 'err') {
    $f = Join-Path $Dir $name
    if (Test-Path -LiteralPath $f) { [Console]::Out.WriteLine([Convert]::ToBase64String([IO.File]::ReadAllBytes($f))) }
    else { [Console]::Out.WriteLine('') }
}
$rc = Join-Path $Dir 'rc'
if (Test-Path -LiteralPath $rc) { [Console]::Out.WriteLine([IO.File]::ReadAllText($rc).Trim()) }
else { [Console]::Out.WriteLine('') }
"""

CLEANUP = r"""
Remove-Item -LiteralPath $Dir -Recurse -Force -ErrorAction SilentlyContinue
exit 0
"""

READ_AND_REMOVE = r"""
if (Test-Path -LiteralPath $Path) {
    [Console]::Out.WriteLine([Convert]::ToBase64String([IO.File]::ReadAllBytes($Path)))
    Remove-Item -LiteralPath $Path -Force
}
exit 0
"""

PID_LINE = "[Console]::Out.WriteLine($PID)\n"

# render_with_pid(argv, pidfile): this powershell.exe's "<pid> <start time>" in the pid
# file while the native command runs (journaled by the controller before it starts), so
# a controller that dies leaves a way to stop it (reap); the file goes when it ends.
PIDFILE_HEAD = r"""
try { [IO.File]::WriteAllText($PidFile, [string]$PID + ' ' + [string](Get-Process -Id $PID).StartTime.ToFileTimeUtc()) }
catch { [Console]::Error.WriteLine('cannot write ' + $PidFile + ': ' + $_); exit 97 }
"""
PIDFILE_TAIL = "Remove-Item -LiteralPath $PidFile -Force -ErrorAction SilentlyContinue\n"

# What a crashed controller left (reap_argv): for each path, the process a directory's
# "pid" or a *.pid file names is stopped, by its tree, only if that pid still runs with
# the start time written beside it; then the path is removed (retried while the dying
# process still holds its files). One line per path: "stopped|gone|none PATH"; a path
# that cannot be removed gets no line (the controller keeps it journaled).
REAP = INVOKE_NATIVE + r"""
foreach ($p in ($Paths -split "`n")) {
    if ($p -eq '') { continue }
    try {
        if (-not (Test-Path -LiteralPath $p)) { [Console]::Out.WriteLine('none ' + $p); continue }
        $f = $null
        if (Test-Path -LiteralPath $p -PathType Container) { $f = Join-Path $p 'pid' }
        elseif ($p.EndsWith('.pid')) { $f = $p }
        $what = 'gone'
        if ($f -and (Test-Path -LiteralPath $f -PathType Leaf)) {
            $words = @([IO.File]::ReadAllText($f).Trim() -split '\s+')
            $id = 0
            if ($words.Count -eq 2 -and [int]::TryParse($words[0], [ref]$id)) {
                $proc = Get-Process -Id $id -ErrorAction SilentlyContinue
                if ($proc -and [string]$proc.StartTime.ToFileTimeUtc() -eq $words[1]) {
                    $null = Invoke-Native taskkill.exe /PID $id /T /F
                    $null = $proc.WaitForExit(5000)
                    $what = 'stopped'
                }
            }
        }
        for ($i = 0; ($i -lt 50) -and (Test-Path -LiteralPath $p); $i++) {
            Remove-Item -LiteralPath $p -Recurse -Force -ErrorAction SilentlyContinue
            if (Test-Path -LiteralPath $p) { Start-Sleep -Milliseconds 100 }
        }
        if (Test-Path -LiteralPath $p) { [Console]::Error.WriteLine('cannot remove ' + $p); continue }
        [Console]::Out.WriteLine($what + ' ' + $p)
    } catch {
        [Console]::Error.WriteLine($p + ': ' + ($_ | Out-String).Trim())
    }
}
"""


class WindowsShell:
    """Windows PowerShell 5.1 on hosts with the OpenSSH server (any DefaultShell)."""

    name = "powershell"
    # One poll of the output file costs a process-free Select in the running script.
    OUTPUT_POLL_S = 0.05

    def render(self, argv: Argv) -> str:
        return encoded_command(script_body(argv))

    def render_with_pid(self, argv: Argv, pidfile: str | None = None) -> str:
        # The first line is this powershell.exe's PID: killing its tree (kill_argv) ends
        # the command and whatever it started.
        return encoded_command(PID_LINE + self._body_with_pid(argv, pidfile))

    def _body_with_pid(self, argv: Argv, pidfile: str | None) -> str:
        if pidfile is None:
            return script_body(argv)
        if is_script(argv):
            raise WindowsScriptError("a pid file is kept for native programs only (the "
                                     "clients a trial runs), not for scripts")
        native = script_body(argv)
        exit_at = native.index("if ($null -eq $global:LASTEXITCODE)")
        return (f"$PidFile = {quote(pidfile)}" + PIDFILE_HEAD + native[:exit_at]
                + PIDFILE_TAIL + native[exit_at:])

    def script(self, argv: Argv) -> str:
        """What ``render`` sends, decoded: the text a person should read (a plan, a log).
        ``render(argv)`` is exactly ``encoded_command`` of this text without PROLOGUE."""
        return PROLOGUE + script_body(argv)

    def script_with_pid(self, argv: Argv, pidfile: str | None = None) -> str:
        """What ``render_with_pid`` sends (what a Connection runs), decoded."""
        return PROLOGUE + PID_LINE + self._body_with_pid(argv, pidfile)

    def warm_script(self, argv: Argv, pidfile: str | None = None) -> str:
        """What a warm session (``warm_powershell``) runs for ``argv``: the pid line (the
        session's: its tree is what a timeout kills), the body ``render_with_pid`` sends,
        then ``exit 0`` for a script that ends without one. The prologue is the
        session's, set once."""
        return PID_LINE + self._body_with_pid(argv, pidfile) + "exit 0\n"

    def decode(self, line: str) -> str:
        """The script a command line this shell rendered runs (the inverse of render)."""
        return decode_command(line)

    def tidy_output(self, stdout: str, stderr: str) -> tuple[str, str]:
        return tidy_text(stdout), tidy_text(decode_clixml(stderr))

    def kill_argv(self, pid: int, signal: str = "TERM") -> list[str]:
        return ps_script(KILL_TREE, "kill-tree", Id=int(pid))

    def background_argv(self, argv: Argv, workdir: str) -> list[str]:
        if not argv or is_script(argv):
            raise WindowsScriptError("background commands are native programs")
        for word in argv:
            _check_native_word(str(word))
        # The runner travels as text and is encoded there: nested base64 of UTF-16 would
        # cost 2.7 characters per character twice, past cmd.exe's 8191.
        runner = PROLOGUE + script_body(ps_script(
            RUNNER, "runner", Exe=argv[0], ArgLine=list2cmdline(argv[1:])))
        return ps_script(BACKGROUND, f"start {argv[0]}", Dir=workdir, Exe=argv[0],
                         ArgLine=list2cmdline(argv[1:]), PowerShell=" ".join(POWERSHELL),
                         Runner=runner)

    def reap_argv(self, paths: Sequence[str]) -> list[str]:
        for path in paths:
            if "\n" in path or not path.strip():
                raise WindowsScriptError(f"{path!r}: not a path nicbench leaves on a host")
        return ps_script(REAP, "reap", Paths="\n".join(paths))

    def alive_argv(self, pid: int) -> list[str]:
        return ps_script(ALIVE, "alive", Id=int(pid))

    def wait_argv(self, pid: int, poll_s: float = 0.02) -> list[str]:
        return ps_script(WAIT_GONE, "wait-gone", Id=int(pid),
                         PollMs=max(10, round(poll_s * 1000)))

    def ended_argv(self, workdir: str, polls: int) -> list[str]:
        return ps_script(ENDED, "ended", Dir=workdir, Polls=int(polls))

    def stop_after_output_argv(self, pid: int, workdir: str, pattern: str, count: int,
                               polls: int, signal: str) -> list[str]:
        return ps_script(STOP_AFTER_OUTPUT, "stop-after-output", Id=int(pid), Dir=workdir,
                         Pattern=pattern, Count=int(count), Polls=int(polls),
                         PollMs=round(self.OUTPUT_POLL_S * 1000))

    def collect_argv(self, workdir: str) -> list[str]:
        return ps_script(COLLECT, "collect", Dir=workdir)

    def parse_collected(self, stdout: str) -> tuple[str, str, int | None]:
        lines = [*stdout.split("\n"), "", "", ""]
        out, err = (decode_file_bytes(base64.b64decode(ln.strip() or b""))
                    for ln in lines[:2])
        rc = lines[2].strip()
        return out, err, int(rc) if rc.lstrip("-").isdigit() else None

    def cleanup_argv(self, workdir: str) -> list[str]:
        return ps_script(CLEANUP, "cleanup", Dir=workdir)

    def read_and_remove_argv(self, path: str) -> list[str]:
        return ps_script(READ_AND_REMOVE, "read-and-remove", Path=path)

    def read_back(self, stdout: str) -> str | None:
        """The text of a file :meth:`read_and_remove_argv` printed (None: no file)."""
        line = stdout.strip()
        return decode_file_bytes(base64.b64decode(line)) if line else None

