"""One process at a time in a results directory (a run's or a campaign's).

``owned(D)`` holds an exclusive ``flock`` on ``D/nicbench.lock`` for as long as the
block runs: ``run --out D``, ``run --resume D``, ``restore D`` and ``campaign`` take it
before they read or write anything in D, so a second command on D is refused before it
touches anything, with one line naming the owner. The kernel lets go of the lock when
its process dies (kill -9 included), so a lock left by a dead process is simply taken
over; the pid, host and start time written in the file are information for that line,
never what decides.

Within one process the lock is re-entrant for the thread that holds it (the CLI holds it
for the whole command, the runner takes it again for the run); another thread of the
same process is refused like another process.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from nicbench.errors import UsageError

LOCK_FILE = "nicbench.lock"
# A directory that cannot take the lock file (read-only, no permission): nobody else can
# have made one there since, so the command goes on and its first write says why.
_UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)
_INFO_BYTES = 256
_SETTLE_S = 1.0


class DirectoryInUse(UsageError):
    """Another nicbench process owns the directory; ``owner`` is what it wrote."""

    def __init__(self, directory: Path, owner: dict):
        self.directory = directory
        self.owner = owner
        super().__init__(f"{directory} is in use by {_who(owner)}; wait for it or stop it")


def _who(owner: dict) -> str:
    pid, host, started = owner.get("pid"), owner.get("host"), owner.get("started")
    if not isinstance(pid, int):
        return "another nicbench process"
    text = f"nicbench pid {pid}"
    if isinstance(host, str) and host:
        text += f" on {host}"
    if isinstance(started, (int, float)):
        text += f" (started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(started))})"
    return text


@dataclass
class _Held:
    fd: int | None              # None: the directory could not hold a lock file
    thread: int
    depth: int = 1


_held: dict[Path, _Held] = {}
_guard = threading.Lock()


def lock_path(directory: str | Path) -> Path:
    return Path(directory) / LOCK_FILE


@contextmanager
def owned(directory: str | Path) -> Iterator[None]:
    """Own ``directory`` (which must exist) for the block, or raise DirectoryInUse."""
    key = Path(os.path.realpath(directory))
    me = threading.get_ident()
    with _guard:
        held = _held.get(key)
        if held is not None:
            if held.thread != me:
                raise DirectoryInUse(Path(directory), _owner_of(key))
            held.depth += 1
        else:
            _held[key] = _Held(_take(Path(directory)), me)
    try:
        yield
    finally:
        with _guard:
            held = _held[key]
            held.depth -= 1
            if held.depth == 0:
                del _held[key]
                if held.fd is not None:
                    fcntl.flock(held.fd, fcntl.LOCK_UN)
                    os.close(held.fd)


def _take(directory: Path) -> int | None:
    # Held through a read-only descriptor (flock needs no write access), so that the
    # lock never keeps its file system from being remounted read-only.
    path = lock_path(directory)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno not in _UNWRITABLE or path.exists():
            raise
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DirectoryInUse(directory, _owner_of(path.parent)) from None
    except BaseException:
        os.close(fd)
        raise
    _write_owner(path)
    return fd


def _write_owner(path: Path) -> None:
    """Who owns it, written in place and padded to one size, so a reader sees the old
    owner or the new one, never an empty or half-written file. Information only: a
    read-only directory keeps the old one."""
    info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                       "started": time.time()}).ljust(_INFO_BYTES - 1) + "\n"
    with suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.pwrite(fd, info.encode(), 0)
            os.ftruncate(fd, _INFO_BYTES)
        finally:
            os.close(fd)


def _owner_of(directory: Path) -> dict:
    """What the owner wrote in the lock file ({} if nothing readable). Refused a moment
    after the owner took the lock, the file may still name the one before it, dead:
    read again, briefly, until it names a live process."""
    deadline = time.monotonic() + _SETTLE_S
    while True:
        owner = _read_owner(lock_path(directory))
        if _alive(owner) or time.monotonic() > deadline:
            return owner
        time.sleep(0.02)


def _read_owner(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(fh.read(_INFO_BYTES) or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(owner: dict) -> bool:
    pid = owner.get("pid")
    if not isinstance(pid, int) or owner.get("host") != socket.gethostname():
        return isinstance(pid, int)      # another machine's pid cannot be checked here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
