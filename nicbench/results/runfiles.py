"""The files of a results directory, listed and copied without ever leaving it.

A results directory is read by every command that looks at runs, and a report copies its
files into ``data/``, the folder meant to be sent to others. So nothing in it is followed
out of it: a symbolic link or a special file (FIFO, device, socket) found where nicbench
lists or copies is skipped with one warning naming it, and is never opened (a FIFO would
block the command, a link to /etc would put /etc/shadow in the report, a link to / would
copy the disk). Directories are walked without following links (``os.scandir`` with
``follow_symlinks=False``); a file is opened with ``O_NOFOLLOW`` and checked with fstat on
its open descriptor, so a link or FIFO swapped in after the walk is refused too. The files
a command reads whole (manifest.json, trials.jsonl, tuning.json, campaign.json,
heartbeat.json) are opened the same way by their readers (``textfile.open_regular(...,
nofollow=True)``).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from nicbench.textfile import TextFileError, file_kind, open_regular

Warn = Callable[[str], None]


def skipped(path: Path, mode: int) -> str:
    """The warning for a link or special file met in a results directory."""
    what = "a symbolic link" if stat.S_ISLNK(mode) else file_kind(mode)
    return (f"{path}: {what}: skipped, not read or copied (nicbench reads only the "
            "regular files a results directory holds itself)")


def regular_files(root: Path, warn: Warn) -> list[Path]:
    """The regular files under the directory ``root``, relative to it, in name order.

    ``root`` itself must be a directory, not a link to one; every link and special file
    under it is said once through ``warn`` and left out; nothing is followed."""
    try:
        mode = os.lstat(root).st_mode
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(mode):
        warn(skipped(root, mode))
        return []
    found: list[Path] = []
    pending = [Path()]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(root / rel) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            warn(f"{root / rel}: cannot read: {exc.strerror or exc}: skipped")
            continue
        for entry in entries:
            try:
                emode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue                     # gone since it was listed
            if stat.S_ISDIR(emode):
                pending.append(rel / entry.name)
            elif stat.S_ISREG(emode):
                found.append(rel / entry.name)
            else:
                warn(skipped(root / rel / entry.name, emode))
    return sorted(found)


def copy_file(src: Path, dst: Path, warn: Warn) -> bool:
    """A hard link to (or, across file systems, a copy of) the regular file ``src`` at
    ``dst``. A link or special file is skipped with a warning, and so is one that cannot
    be read; an existing ``dst`` is left alone. True if ``dst`` now holds ``src``."""
    if os.path.lexists(dst):
        return False
    try:
        fh = open_regular(src, nofollow=True)
    except TextFileError as exc:
        warn(f"{src}: {exc.message}: skipped, not copied")
        return False
    except OSError as exc:
        warn(f"{src}: cannot read: {exc.strerror or exc}: skipped, not copied")
        return False
    with fh:
        opened = os.fstat(fh.fileno())
        try:
            # linkat without AT_SYMLINK_FOLLOW links the name itself; it must still be the
            # file opened and checked above, else it is undone and copied from that file
            os.link(src, dst, follow_symlinks=False)
            if os.path.samestat(os.lstat(dst), opened):
                return True
            os.unlink(dst)
        except OSError:
            pass
        with open(dst, "xb") as out:
            shutil.copyfileobj(fh, out)
    return True


def copy_tree(src: Path, dst: Path, warn: Warn) -> int:
    """Every regular file under ``src`` to the same place under ``dst`` (see
    :func:`regular_files`, :func:`copy_file`); the number copied."""
    n = 0
    for rel in regular_files(src, warn):
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        n += copy_file(src / rel, dst / rel, warn)
    return n
