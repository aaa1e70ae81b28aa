"""The paths a user types, checked before any command uses them.

A path the OS cannot take (a name longer than NAME_MAX, a path longer than PATH_MAX, a
symbolic-link loop, a file where a directory must be) used to surface wherever it was
first used, as an ``OSError`` and exit 70 "internal error". Every path argument of every
command is checked here first (``check_args``, called by ``main`` before the command),
and each problem is one ``UsageError`` line naming the option: exit 2. What the commands
check themselves (a missing file, a FIFO, a directory given for a file) they still
say in their own words; a directory to be written (``--out``, ``--resume``, the lab's
directory) that exists must be a directory.
"""

from __future__ import annotations

import errno
import os
import stat
from argparse import Namespace

from nicbench.errors import UsageError

# Linux's limits (limits.h); os.pathconf asks the file system where it can.
NAME_MAX = 255
PATH_MAX = 4096

# argparse dest -> (how the user wrote it, a directory nicbench writes into?)
PATH_ARGS: dict[str, tuple[str, bool]] = {
    "file": ("", False), "files": ("", False), "profile": ("", False),
    "inventory": ("-i", False), "dir": ("", False), "dirs": ("", False),
    "reference": ("--reference", False), "out": ("--out", True),
    "resume": ("--resume", True), "key_dir": ("--key-dir", False),
    "store": ("--store", False),
}
# commands whose ``dir`` is a directory nicbench writes into (the lab's state)
WRITTEN_DIR = {"lab"}


def check_args(args: Namespace) -> None:
    """Every path argument of ``args`` the OS can take, else UsageError (one line)."""
    for dest, (flag, written) in PATH_ARGS.items():
        value = getattr(args, dest, None)
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, str) and v != "-" and not (dest == "store" and "://" in v):
                if dest == "dir" and getattr(args, "command", None) in WRITTEN_DIR:
                    check_dir_to_write(v, "--dir")
                elif written:
                    check_dir_to_write(v, flag)
                else:
                    check_path(v, flag)


def shown(path: str, limit: int = 80) -> str:
    """A path as one readable line: a long one cut in the middle, with its length."""
    if len(path) <= limit:
        return path
    return f"{path[:40]}...{path[-30:]} ({len(os.fsencode(path))} bytes)"


def _name_max(path: str) -> int:
    parent = os.path.dirname(os.path.abspath(path)) or "/"
    try:
        return os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        return NAME_MAX


def check_path(path: str, flag: str = "") -> os.stat_result | None:
    """``path`` as the OS can take it: its stat, None if it is not there (each command
    says that in its words); UsageError for a name or path too long, a link loop, a file
    where a directory must be, a NUL byte."""
    what = f"{flag}{'' if flag.endswith('=') else ' '}{shown(path)}".lstrip()
    if "\0" in path:
        raise UsageError(f"{what}: a NUL byte in a path: give the file's name")
    size = len(os.fsencode(path))
    if size >= PATH_MAX:
        raise UsageError(f"{what}: the path is {size} bytes long; a path is at most "
                         f"{PATH_MAX - 1}: give a shorter one")
    most = _name_max(path)
    for part in path.split(os.sep):
        if len(os.fsencode(part)) > most:
            raise UsageError(f"{what}: the name {part[:20]}... is "
                             f"{len(os.fsencode(part))} bytes long; a file name is at most "
                             f"{most}: give a shorter one")
    try:
        return os.stat(path)
    except OSError as exc:
        why = _why(exc)
        if why is None:
            return None
        raise UsageError(f"{what}: {why}") from None


def _why(exc: OSError) -> str | None:
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links (a link that leads back to itself): fix the link"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a directory: check the path"
    if exc.errno == errno.ENAMETOOLONG:
        return "the path or a name in it is too long for the file system: give a shorter one"
    return None          # ENOENT, EACCES ...: the command says it where it opens the path


def check_dir_to_write(path: str, flag: str) -> None:
    """A directory nicbench makes or writes into: the OS can take the path, and if
    something is there it is a directory."""
    st = check_path(path, flag)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        what = f"{flag}{'' if flag.endswith('=') else ' '}{shown(path)}"
        raise UsageError(f"{what}: exists and is not a directory: give a new name or a "
                         "directory")
