"""Reading a file a person named on the command line: regular files only, bounded, decoded
with the line of whatever is wrong.

Every input nicbench reads (inventories, profiles, tool outputs, results directories) goes
through :func:`read_bytes` and one of the decoders, so that ``/dev/zero``, a FIFO or a
directory given by mistake is refused at once instead of being read forever or blocking,
and a file larger than its kind ever is (a 1 MB inventory, an 8 MB tool output) is
refused before it is read whole.

Problems are :class:`TextFileError` (a message and, where known, a line); each caller turns
them into its own error (a ``ConfigError`` for a profile, a ``ParseError`` for tool
output, a ``UsageError`` for a results directory), since the exit code depends on what
the file was for.

Every file nicbench writes whole (manifest.json, campaign.json, the journal, the
heartbeat, the morning summary, report.html, the lab's state, every figure and CSV of a
report) goes through :func:`replacing` (or :func:`write_atomic`, its text form): a reader
sees the old file or the new one, never half of one, and an interrupted write leaves no
file cut short under its final name.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path
import contextlib


class TextFileError(Exception):
    def __init__(self, message: str, line: int | None = None):
        self.message = message
        self.line = line
        super().__init__(message)


def size_text(n: int) -> str:
    """``1048576`` -> ``1 MB`` (binary units, as the limits are written)."""
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} bytes"


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


LINK_REFUSED = ("a symbolic link, not followed: nicbench reads only the files a results "
                "directory holds itself")


def open_regular(path: str | Path, *, nofollow: bool = False):
    """A binary file object for ``path`` if it is a regular file; else TextFileError.

    Opened non-blocking and checked with fstat on the open descriptor, so a FIFO with no
    writer cannot hang the open and a file swapped after a stat is still caught.
    ``nofollow`` (every file of a results directory): a symbolic link is refused, never
    followed out of the directory (``O_NOFOLLOW``, so a link made after a check is too).
    OSError (missing file, permission) is left to the caller, who knows what to advise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP and is_link(path):
            raise TextFileError(LINK_REFUSED) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TextFileError(f"{file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_link(path: str | Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def read_bytes(path: str | Path, limit: int, too_big: str, *, nofollow: bool = False) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; ``too_big`` says why a
    larger one cannot be what it should be. ``nofollow``: see :func:`open_regular`."""
    with open_regular(path, nofollow=nofollow) as fh:
        return read_limited(fh, limit, too_big)


def read_limited(fh, limit: int, too_big: str) -> bytes:
    """At most ``limit`` bytes of an open binary stream, or TextFileError."""
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise TextFileError(f"larger than {size_text(limit)}: {too_big}")
    return data


_UTF16_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE,
               codecs.BOM_UTF16_BE)


def line_at(data: bytes | str, offset: int) -> int:
    newline: bytes | str = b"\n" if isinstance(data, bytes) else "\n"
    return data.count(newline, 0, offset) + 1    # type: ignore[arg-type]


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8 (a UTF-8 byte-order mark is dropped), for files people write: YAML.

    UTF-16/32 (a byte-order mark), a NUL byte or bytes that are not UTF-8 are refused with
    the line where they are."""
    if data.startswith(_UTF16_BOMS):
        raise TextFileError("not UTF-8 text: UTF-16 or UTF-32 (as Notepad's 'Unicode' or "
                            "PowerShell's > write it); save it as UTF-8")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    nul = data.find(b"\0")
    if nul >= 0:
        raise TextFileError("a NUL byte: this is binary data, not a text file",
                            line_at(data, nul))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_at(data, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TextFileError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column "
                            f"{column}); save the file as UTF-8", line) from None


def looks_utf16(data: bytes) -> str | None:
    """The codec of UTF-16 text: from its byte-order mark, or, without one, from the NUL
    byte beside every ASCII character (``utf-16-le`` / ``utf-16-be``); else None."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) \
            and not data.startswith(codecs.BOM_UTF32_LE):
        return "utf-16"
    if len(data) >= 4 and len(data) % 2 == 0:
        half = len(data) // 2
        if data[1::2].count(0) > 0.9 * half and data[0::2].count(0) == 0:
            return "utf-16-le"
        if data[0::2].count(0) > 0.9 * half and data[1::2].count(0) == 0:
            return "utf-16-be"
    return None


def decode_output(data: bytes) -> str:
    """A tool's output as saved by hand: UTF-8, or UTF-16 (what Windows PowerShell's ``>``
    writes). Bytes that are not UTF-8 (a console's code page) become U+FFFD, as the
    figures the parsers read are ASCII; a NUL byte is refused as binary data."""
    codec = looks_utf16(data)
    if codec is not None:
        text = data.decode(codec, errors="replace").removeprefix("\ufeff")
    else:
        text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")
    nul = text.find("\0")
    if nul >= 0:
        raise TextFileError("a NUL byte: binary data, not a tool's text output",
                            line_at(text, nul))
    return text


def open_new(path: str | Path, *, newline: str | None = None, binary: bool = False):
    """``path`` opened for writing text as a new regular file: whatever is at that name (a
    file, a symbolic link, a FIFO) is removed first and the file created with
    ``O_EXCL | O_NOFOLLOW``, so nothing is ever written through a link planted in a
    results directory (a link to /etc/passwd named like a raw output or summary.csv)."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    fd = os.open(path, flags, 0o666)     # as open() does: the umask decides
    if binary:
        return os.fdopen(fd, "wb")
    return os.fdopen(fd, "w", encoding="utf-8", newline=newline)


TMP_SUFFIX = ".nicbench-tmp"     # a file being written; renamed to its name when complete


def temp_name(path: str | Path) -> Path:
    """Where ``path`` is written before it is complete: a hidden name beside it, of this
    process (``.NAME.PID.nicbench-tmp``), so an interrupted write is never taken for the
    finished file and two writers never share one."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")


@contextlib.contextmanager
def replacing(path: str | Path, *, binary: bool = False, fsync: bool = False,
              tmp: str | Path | None = None, newline: str | None = None):
    """A file object for the new content of ``path``: written to a temporary file beside
    it (:func:`open_new`: never through a link) and renamed over ``path`` when the block
    ends, so a reader sees the old file or the new one, never half of one. If the block
    fails or is interrupted (Ctrl-C), the temporary file is removed and ``path`` is left
    as it was. ``fsync`` first where the file must survive a crash (a journal)."""
    path = Path(path)
    tmp_path = Path(tmp) if tmp is not None else temp_name(path)
    try:
        fh = open_new(tmp_path, newline=newline, binary=binary)
        with fh:
            yield fh
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp_path, path)      # replaces a link at path, never writes through it
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, text: str, *, fsync: bool = False,
                 tmp: str | Path | None = None) -> None:
    """Write ``text`` to ``path`` through :func:`replacing`. On OSError (a full disk)
    the temporary file is removed, the previous file stays whole, and the error is
    raised for the caller to say in its own words."""
    with replacing(path, fsync=fsync,
                   tmp=tmp if tmp is not None else Path(path).with_name(
                       Path(path).name + ".tmp")) as fh:
        fh.write(text)


def name_within(directory: str | Path, name: str) -> Path | None:
    """``directory/name`` if ``name`` is a plain file name whose file is in ``directory``
    itself (no separator, not ``.`` or ``..``, no NUL; its parent resolves to the
    directory), else None: a name read from a file is never followed out of its
    directory."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return None
    path = Path(directory) / name
    if os.path.realpath(path.parent) != os.path.realpath(directory):
        return None
    return path
