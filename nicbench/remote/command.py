"""Commands as argument lists, rendered for the target shell at the last moment.

Nothing from the inventory or a profile is ever pasted into a shell string: callers build
``argv`` lists and a :class:`Shell` renders them, quoting every word. :class:`Secret`
words render into the real command but show as ``***`` wherever a command is displayed
or stored (logs, results, error messages).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence


class Secret(str):
    """A word that must not be displayed (passwords, tokens)."""

    def __repr__(self) -> str:  # pragma: no cover - trivial
        return "Secret('***')"


class Script(str):
    """A script text sent as one word (PowerShell on Windows hosts): displayed by its
    label, ``{label}``, not its whole text, in results and error messages."""

    label: str

    def __new__(cls, text: str, label: str) -> Script:
        obj = super().__new__(cls, text)
        obj.label = label
        return obj

    def __reduce__(self):  # pragma: no cover - keeps the label through copy/pickle
        return (Script, (str(self), self.label))


Argv = Sequence[str]


def _shown(word: str) -> str:
    if isinstance(word, Secret):
        return "***"
    if isinstance(word, Script):
        return "{" + word.label + "}"
    return shlex.quote(str(word))


def display(argv: Argv) -> str:
    """The command as a person should see it: POSIX-quoted, secrets masked, scripts by
    their label."""
    return " ".join(_shown(w) for w in argv)
