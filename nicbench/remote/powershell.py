"""PowerShell on Windows hosts (OpenSSH server), for the Windows platform.

Only quoting and rendering so far; the Windows platform builds the rest on it. Single-quoted
PowerShell strings take everything literally except ``'``, which is doubled.
"""

from __future__ import annotations

from nicbench.remote.command import Argv


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
