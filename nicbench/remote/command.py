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
