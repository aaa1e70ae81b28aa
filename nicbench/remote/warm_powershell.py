"""One PowerShell per Windows host for a whole run: a long-lived ``powershell.exe`` on one
SSH channel that runs nicbench's scripts one after another, as ``ssh.WarmShell`` does for
POSIX hosts, so that a command costs no process start (a few hundred ms each on Windows).

**The session.** The channel runs :data:`SESSION` the way every Windows command is sent
(``powershell.exe ... -EncodedCommand``), not ``-Command -``: with ``-Command -`` the
console host reads stdin as if typed at a prompt, statement by statement, so a multi-line
statement needs an empty line after it (PowerShell#3223), ``$ErrorActionPreference =
'Stop'`` is ignored (#21808) and a parse error of the last statement gives no failing exit
(#21784). Under ``-EncodedCommand`` stdin is not read unless ``$Input`` is enumerated
(PowerShell#9497, PowerShell-Docs#7028): the session reads it itself. It prints
:data:`READY`, then reads one line per script from ``[Console]::In``: ``<nonce> <base64 of the UTF-8 script>``. It writes the script into a
file of its own in TEMP, UTF-8 *with* a BOM (Windows PowerShell 5.1 reads a BOM-less .ps1
in the ANSI code page), and runs it with ``& file``; what the script puts on its pipeline (a native command's
output, a string) is written with ``[Console]::Out`` as its own writes are, the one
writer the end marker goes through, so the marker cannot overtake the script's output in
another buffer. Run as a script file, a script's
``exit N`` ends that script only and sets ``$LASTEXITCODE`` to N; the same ``exit`` in a
script block made from text would end the session itself (about_Language_Keywords,
``exit``; microsoft/winappCli#698 shows both). A script's ``$ErrorActionPreference`` and
other variables live in its own script scope (about_Scopes), so nothing leaks into the
next script. After the script, the session writes an empty line and
``@@nicbench-end <nonce> <exit status>`` on stdout, and an empty line and
``@@nicbench-end <nonce>`` on stderr. The nonce is new and random for every script, so no
output (a tool's, a value that came back) can end a frame early: it would have to know a
nonce chosen after it was written.

The script file is removed after each script, and when the session ends; one left by
a session killed mid-script (a timeout) is removed by the next session on the host,
once no process has the pid in its name. Each background tool's watcher runspace is
disposed at the next start after its tool ended.

**What a script sees there** (:meth:`WindowsShell.warm_script`): the pid line first (the
session's ``$PID``: killing its tree on a timeout ends the script's work and the session),
the body the one-process form runs, then ``exit 0`` (a script that ends without ``exit``
succeeded, as its own powershell.exe would have said; an error inside the wrapper's
``try`` exits 1 first). The session's prologue (progress off, UTF-8 console) is set once.

**Failures** (the contract of ``ssh.WarmShell``): a timeout or Ctrl-C kills the session's
process tree by the pid it printed, closes the channel (Win32-OpenSSH ends what the
session started with it) and drops the session; the next command starts a fresh one. A
session that cannot start (no ready line within the connection's timeout, the channel
refused) or that ends under a script while the connection lives is *lost*: the
connection says so once and runs every later command as a powershell.exe of its own. A
script that was running when the session ended has an unknown outcome: it is reported as
the command failing with that reason, never re-run.

None of this has run on Windows (there is none here): the session text is checked by the
tree-sitter PowerShell grammar like every script, and the framing by the scripted Windows
host, which decodes each frame as the session would and answers through it.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nicbench.errors import ConnectError
from nicbench.remote.command import display

if TYPE_CHECKING:
    from nicbench.remote.connection import Connection
    from nicbench.remote.result import Result

READY = "@@nicbench-warm-ready"
END = "@@nicbench-end"

SESSION = r"""
$ErrorActionPreference = 'Continue'
$NicbenchSession = $true
$NicbenchWatchers = @()
function Start-NicbenchBackground($Dir, $Exe, $ArgLine) {
    [IO.File]::WriteAllText((Join-Path $Dir 'in'), '')
    $s = @{FilePath = $Exe; WorkingDirectory = $Dir; NoNewWindow = $true; PassThru = $true
           RedirectStandardInput = (Join-Path $Dir 'in')
           RedirectStandardOutput = (Join-Path $Dir 'out'); RedirectStandardError = (Join-Path $Dir 'err')}
    if ($ArgLine) { $s.ArgumentList = $ArgLine }
    $global:NicbenchWatchers = @($global:NicbenchWatchers | Where-Object {
        if ($_.H.IsCompleted) { $_.P.Dispose(); $false } else { $true } })
    $p = Start-Process @s
    $null = $p.Handle
    $w = [PowerShell]::Create()
    $null = $w.AddScript('param($p, $f) $p.WaitForExit(); [IO.File]::WriteAllText($f, [string]$p.ExitCode)')
    $null = $w.AddArgument($p).AddArgument((Join-Path $Dir 'rc'))
    $global:NicbenchWatchers += @(@{P = $w; H = $w.BeginInvoke()})
    return [int]$p.Id
}
$nbTemp = [IO.Path]::GetTempPath()
foreach ($nbOld in @(Get-ChildItem -LiteralPath $nbTemp -Filter 'nicbench-warm-*.ps1')) {
    $nbId = 0
    if ([int]::TryParse($nbOld.BaseName.Substring(14), [ref]$nbId) -and -not (Get-Process -Id $nbId -ErrorAction Ignore)) {
        Remove-Item -LiteralPath $nbOld.FullName -Force -ErrorAction Ignore
    }
}
$nbFile = Join-Path $nbTemp ('nicbench-warm-' + $PID + '.ps1')
$nbBom = New-Object System.Text.UTF8Encoding $true
[Console]::Out.WriteLine('@@nicbench-warm-ready')
[Console]::Out.Flush()
try {
    while ($null -ne ($nbLine = [Console]::In.ReadLine())) {
        $nbWords = $nbLine.Trim().Split(' ')
        if ($nbWords.Count -ne 2) { continue }
        [IO.File]::WriteAllText($nbFile, [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($nbWords[1])), $nbBom)
        $global:LASTEXITCODE = 0
        try {
            & $nbFile | Out-String -Stream -Width 4096 | ForEach-Object { [Console]::Out.WriteLine($_) }
        } catch {
            [Console]::Error.WriteLine(($_ | Out-String).Trim())
            $global:LASTEXITCODE = 1
        }
        Remove-Item -LiteralPath $nbFile -Force -ErrorAction Ignore
        $nbRc = 0
        if ($null -ne $global:LASTEXITCODE) { $nbRc = [int]$global:LASTEXITCODE }
        [Console]::Out.Flush()
        [Console]::Out.WriteLine()
        [Console]::Out.WriteLine('@@nicbench-end ' + $nbWords[0] + ' ' + $nbRc)
        [Console]::Out.Flush()
        [Console]::Error.WriteLine()
        [Console]::Error.WriteLine('@@nicbench-end ' + $nbWords[0])
        [Console]::Error.Flush()
    }
} finally {
    Remove-Item -LiteralPath $nbFile -Force -ErrorAction Ignore
}
"""


def session_command() -> str:
    """The command line that starts a session (PROLOGUE included, encoded as every
    Windows command is)."""
    from nicbench.remote.powershell import encoded_command

    return encoded_command(SESSION)


def new_nonce() -> str:
    return secrets.token_hex(16)


def frame(nonce: str, script: str) -> bytes:
    """The line the session reads for one script."""
    return (nonce + " " + base64.b64encode(script.encode("utf-8")).decode("ascii")
            + "\n").encode("ascii")


def read_frame(line: bytes) -> tuple[str, str]:
    """(nonce, script) of a line :func:`frame` made, as the session splits it (what the
    scripted host does with what it is sent)."""
    nonce, _, data = line.decode("ascii").strip().partition(" ")
    return nonce, base64.b64decode(data, validate=True).decode("utf-8")


def end_lines(nonce: str, status: int) -> tuple[bytes, bytes]:
    """What the session writes after a script on stdout and on stderr (CRLF: .NET's
    WriteLine on Windows)."""
    return (f"\r\n{END} {nonce} {status}\r\n".encode("ascii"),
            f"\r\n{END} {nonce}\r\n".encode("ascii"))


@dataclass(frozen=True)
class Frame:
    """One script's output and exit status, its end markers cut off."""

    stdout: bytes
    stderr: bytes
    status: int


class FrameEnd:
    """Looks for the end markers of one script (``nonce``) in a reply that grows: each
    look searches only what came since the last one (and a marker's length before it),
    never the whole reply again, and a marker found is kept. Only a marker at the start
    of a line, with this script's nonce and a whole line of its own, ends it."""

    def __init__(self, nonce: str):
        mark = re.escape(f"{END} {nonce}".encode("ascii"))
        self._out_re = re.compile(rb"\r?\n" + mark + rb" (-?\d+)\r?\n")
        self._err_re = re.compile(rb"\r?\n" + mark + rb"\r?\n")
        self._back = len(END) + len(nonce) + 32     # a marker line (CRLFs, status) at most
        self._out: re.Match[bytes] | None = None
        self._err: re.Match[bytes] | None = None
        self._looked = [0, 0]

    def seen(self, out: bytes | bytearray, err: bytes | bytearray) -> Frame | None:
        """The script's frame once both markers have come, else None."""
        if self._out is None:
            self._out = self._out_re.search(out, max(0, self._looked[0] - self._back))
            self._looked[0] = len(out)
        if self._out is not None and self._err is None:
            self._err = self._err_re.search(err, max(0, self._looked[1] - self._back))
            self._looked[1] = len(err)
        if self._out is None or self._err is None:
            return None
        return Frame(bytes(out[:self._out.start()]), bytes(err[:self._err.start()]),
                     int(self._out.group(1)))


def ended(out: bytes | bytearray, err: bytes | bytearray, nonce: str) -> Frame | None:
    """The script's frame once both end markers of ``nonce`` are in a whole reply, else
    None (one look: :class:`FrameEnd`)."""
    return FrameEnd(nonce).seen(out, err)


def is_ready(out: bytes | bytearray) -> bool:
    return re.search(rb"(^|\n)" + READY.encode("ascii") + rb"\r?\n", out) is not None


def after_ready(out: bytes | bytearray) -> bytes:
    """What the session wrote after its ready line (nothing, unless its prologue
    printed)."""
    return bytes(out).partition(READY.encode("ascii"))[2].lstrip(b"\r\n")


class SessionLost(Exception):
    """The session ended (or never started) while the connection lives: later commands
    each get a powershell.exe of their own. ``ran``: a command was running in it (its
    outcome unknown, so it is not run again); False: it never started, nothing ran."""

    def __init__(self, why: str, *, ran: bool = False):
        super().__init__(why)
        self.ran = ran


LOST_NOTICE = ("the warm PowerShell session {why}; every later command on this host "
               "starts a powershell.exe of its own (a few hundred ms each)")


def fall_back(conn: Connection, exc: SessionLost, argv: Sequence[str],
              run_alone: Callable[[], Result]) -> Result:
    """What a connection does when its session is lost: says so once (``conn.notify``),
    runs every later command alone (``conn.warm_lost``); the command at hand runs alone
    now if it never ran, else fails with ConnectError (its outcome unknown, as under a
    dropped connection, which the run retries)."""
    conn.warm_lost = True  # type: ignore[attr-defined]
    conn.notify(LOST_NOTICE.format(why=str(exc)))
    if not exc.ran:
        return run_alone()
    raise ConnectError(conn.host, f"the warm PowerShell session ended while "
                                  f"`{display(argv)}` ran (its outcome is unknown)",
                       "the next try runs it in a powershell.exe of its own")
