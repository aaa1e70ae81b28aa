"""A run's results directory: append-only, versioned, resumable.

::

    DIR/manifest.json     profile, inventory (no secrets), host facts, versions, times
    DIR/trials.jsonl      one JSON object per trial, appended and flushed as it ends
    DIR/raw/              every tool output, one file per trial and end
    DIR/summary.csv       one row per configuration (pair, point, test), rebuilt at the end
    DIR/tuning.json       the tuning journal: originals of every setting changed

Every record carries ``format_version``; readers accept older versions and refuse newer
ones. Resuming a run reads trials.jsonl and skips the (pair, point, test, repetition) keys
already there. What is read must be a regular file with lines of at most 1 MB, and each
record's stored types are checked before it is used: a corrupt directory is one line
naming the file and line, never an internal error or a half-read run.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import math
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path

try:
    import orjson as _orjson
except ImportError:         # a venv made before it was a dependency: json alone
    _orjson = None          # type: ignore[assignment]

from nicbench.errors import ResultsWriteError, UsageError
from nicbench.results.plausible import RunFacts, impossible, in_run, plainly_possible
from nicbench.results.records import (FORMAT_VERSION, TrialKey, TrialRecord, current,
                                      plain_record, settled)
from nicbench.textfile import TextFileError, open_new, open_regular, size_text

# A trial record is a few KB (a netPIPE curve of a few hundred points at most): a line of
# more than 1 MB is not one, and is refused before it is read whole.
MAX_RECORD_BYTES = 1 << 20

class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def trials_file(self) -> Path:
        return self.path / "trials.jsonl"

    @property
    def manifest_file(self) -> Path:
        return self.path / "manifest.json"

    @property
    def raw_dir(self) -> Path:
        return self.path / "raw"

    @property
    def journal_file(self) -> Path:
        return self.path / "tuning.json"

    @property
    def summary_file(self) -> Path:
        return self.path / "summary.csv"

    def make(self, *, raw: bool = False) -> RunDir:
        """The directory (and with ``raw`` its raw/), made if new."""
        if self.path.exists() and not self.path.is_dir():
            raise UsageError(f"{self.path}: exists and is not a directory: a results "
                             "directory is a new name or the directory of an earlier run")
        try:
            (self.raw_dir if raw else self.path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot make the results directory: "
                             f"{exc.strerror or exc}") from exc
        return self

    def create(self) -> RunDir:
        return self.make(raw=True)

    def write_raw(self, trial_id: str, role: str, text: str) -> str:
        rel = f"raw/{trial_id}.{role}.txt"
        path = self.path / rel
        try:
            with open_new(path) as fh:      # a link planted at its name is not written through
                fh.write(text)
        except OSError as exc:
            with contextlib.suppress(OSError):      # read-only or gone: nothing to remove
                path.unlink(missing_ok=True)
            raise write_error(self.path, exc) from exc
        return rel

    def append(self, record: TrialRecord) -> None:
        """Append one record and fsync it. A failed write (a full disk) leaves the file
        as it was before, never a torn line, and raises ResultsWriteError."""
        line = json.dumps(record.to_dict(), default=str) + "\n"
        size = self.trials_file.stat().st_size if self.trials_file.exists() else 0
        try:
            with open(self.trials_file, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.truncate(self.trials_file, size)
            raise write_error(self.path, exc) from exc

    def repair_torn_tail(self) -> Path | None:
        """A last line without its newline (the controller died mid-write) would swallow
        the next record appended: cut it off, keeping it in ``trials.jsonl.torn-<time>``
        beside the file. Returns that file, or None if there was nothing to cut."""
        if not self.torn_tail():
            return None
        data = self.trials_file.read_bytes()
        keep = data.rfind(b"\n") + 1
        kept = self.path / f"trials.jsonl.torn-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            kept.write_bytes(data[keep:])
            os.truncate(self.trials_file, keep)
        except OSError as exc:
            raise write_error(self.path, exc) from exc
        return kept

    def records(self, *, strict: bool = False, manifest: RunFacts | None = None,
                skipped: list[str] | None = None) -> Iterator[TrialRecord]:
        """Every trial record, as written. A torn last line (a crash mid-write, no final
        newline) is skipped. ``strict``: any other line that is not a trial record, or
        whose values no trial can have (``plausible.impossible``, against ``manifest``
        where given), is an error naming the file and line (a report must not silently
        drop a trial); else it is skipped too."""
        for _, rec in self.numbered_records(strict=strict, manifest=manifest,
                                            skipped=skipped):
            yield rec

    def numbered_records(self, *, strict: bool = False, manifest: RunFacts | None = None,
                         skipped: list[str] | None = None
                         ) -> Iterator[tuple[int, TrialRecord]]:
        """(line number, record) for every record; see :meth:`records`. Whatever
        ``strict`` says, trials.jsonl must be a regular file of this directory (not a
        link), no line may exceed ``MAX_RECORD_BYTES``, and a record of a newer format is
        refused. Not ``strict``: the line each complete line skipped would have raised is
        added to ``skipped`` (for a reader that says what it could not count)."""
        if not self.trials_file.exists():
            return
        try:
            fh = open_regular(self.trials_file, nofollow=True)
        except (OSError, TextFileError) as exc:
            raise UsageError(f"{self.trials_file}: cannot read: "
                             f"{getattr(exc, 'strerror', None) or exc}") from exc
        with fh:
            yield from self._parse_lines(fh, strict, manifest, skipped)

    def _parse_lines(self, fh, strict: bool, manifest: RunFacts | None,
                     skipped: list[str] | None) -> Iterator[tuple[int, TrialRecord]]:
        where = self.trials_file
        for i, raw in enumerate(iter(lambda: fh.readline(MAX_RECORD_BYTES + 1), b""),
                                start=1):
            if len(raw) > MAX_RECORD_BYTES:
                raise UsageError(f"{where}:{i}: a line longer than "
                                 f"{size_text(MAX_RECORD_BYTES)}: not a trial record (the "
                                 "file is corrupt or not nicbench's)")
            torn = not raw.endswith(b"\n")     # only the last line can be
            if not raw.strip():
                continue
            try:
                rec = _record(raw, f"{where}:{i}", manifest)
            except _BadLine as exc:
                if torn and exc.unfinished:
                    continue            # a crash mid-write: the caller says so if it will
                if strict:
                    raise UsageError(str(exc)) from None
                if skipped is not None:
                    skipped.append(str(exc))
                continue
            yield i, rec

    def torn_tail(self) -> bool:
        """Does trials.jsonl end in a line without its newline (a crash mid-write)?"""
        try:
            fh = open_regular(self.trials_file, nofollow=True)
        except (OSError, TextFileError):
            return False        # absent, or not a file of this directory: not read
        with fh:
            if not os.fstat(fh.fileno()).st_size:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"

    def line_count(self) -> int:
        """The lines of trials.jsonl, a last one without its newline included."""
        n, last = 0, b"\n"
        with open_regular(self.trials_file, nofollow=True) as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                n += chunk.count(b"\n")
                last = chunk[-1:]
        return n + (last != b"\n")

    def done_keys(self, keep_failed: bool = False,
                  manifest: RunFacts | None = None) -> set[TrialKey]:
        """The trials a resume does not run again (see records.settled). Read strictly, so
        that a corrupt line is refused rather than its trial measured again beside it."""
        return {r.key for r in current(self.records(strict=True, manifest=manifest))
                if settled(r, keep_failed)}


class _BadLine(Exception):
    """A line of trials.jsonl that is not a record nicbench could have written;
    ``unfinished``: not even JSON (a torn last line may be that, and is skipped)."""

    def __init__(self, message: str, unfinished: bool = False):
        super().__init__(message)
        self.unfinished = unfinished


def _record(raw: bytes, where: str, manifest: RunFacts | None) -> TrialRecord:
    """The record of one line, or _BadLine saying why not (``where``: file:line)."""
    try:
        data = _loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        version = data.get("format_version", 1)
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise UsageError(f"{where}: a trial record of format_version {version}, newer "
                             f"than this nicbench reads ({FORMAT_VERSION}): read it with a "
                             "newer nicbench")
        _check_types(data)
        if plainly_possible(data):
            rec = plain_record(data)
            bad = in_run(rec, manifest) if manifest is not None else None
            if bad is not None:
                raise _BadLine(f"{where}: {bad}: not a trial nicbench could have measured "
                               "(the file was edited or is corrupt)")
            return rec
        rec = TrialRecord.from_dict(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        why = (f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
               else "not UTF-8" if isinstance(exc, UnicodeDecodeError)
               else "nested too deep")
        raise _BadLine(f"{where}: not a JSON trial record ({why}): the file is corrupt",
                       unfinished=True) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise _BadLine(f"{where}: not a nicbench trial record ({_why(exc)}): the file is "
                       "corrupt or from another program") from None
    bad = impossible(rec, manifest)
    if bad is not None:
        raise _BadLine(f"{where}: {bad}: not a trial nicbench could have measured (the "
                       "file was edited or is corrupt)")
    return rec


# A line's digits as "0", the rest as " ": 19 digits in a row are found by one search
# (a regular expression takes five times orjson's parse here).
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGITS = b"0" * 19


def _loads(raw: bytes) -> object:
    """``json.loads`` of a line: by orjson (a quarter of the time, a store's import reads
    millions of lines) where it parses the line as json does, else by json itself, whose
    result and errors (NaN and Infinity, nesting, not UTF-8, lone surrogates) are the ones
    every reader has always given. orjson reads an integer beyond 64 bits as a float,
    json as an integer: a line with a run of 19 digits or more goes to json."""
    if _orjson is not None and _LONG_DIGITS not in raw.translate(_DIGITS):
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(raw.decode("utf-8"))


_RECORD_FIELDS = tuple(f.name for f in fields(TrialRecord))


class ScratchRunDir(RunDir):
    """A run's directory whose trials stay in memory, for a run nobody reads back
    (``--plan``'s, over planning hosts): no trials.jsonl, nothing fsynced, no raw files;
    the records are read back as stored, in order."""

    def __init__(self, path: str | Path):
        super().__init__(path)
        # Each record as its values (a fifth of a record's size: a plan of 10,000
        # points keeps 30,000 of them), made a record again when read back.
        self._kept: list[tuple] = []

    def append(self, record: TrialRecord) -> None:
        self._kept.append(tuple(getattr(record, name) for name in _RECORD_FIELDS))

    def write_raw(self, trial_id: str, role: str, text: str) -> str:
        return f"raw/{trial_id}.{role}.txt"

    def numbered_records(self, *, strict: bool = False, manifest: RunFacts | None = None,
                         skipped: list[str] | None = None
                         ) -> Iterator[tuple[int, TrialRecord]]:
        for i, values in enumerate(list(self._kept), start=1):
            yield i, TrialRecord(**dict(zip(_RECORD_FIELDS, values, strict=True)))

    def torn_tail(self) -> bool:
        return False


# Check the stored types before building a record: a string where a rate belongs would
# only fail later, in a statistic or a chart, as an internal error.
def _check_types(data: dict) -> None:
    # One look per key the line holds, by the value's exact type (what json.loads makes);
    # a value that does not pass is looked at again in field order below, so that the
    # message names the first wrong field as it always did.
    fast = _fast_types()
    for name, value in data.items():
        allowed = fast.get(name)
        if allowed is None:
            continue
        t = type(value)
        if t is float:
            if float in allowed and value - value == 0.0:     # finite: inf - inf is nan
                continue
        elif t in allowed:
            continue
        break
    else:
        return
    for name, nullable, what, check in _field_types():
        if name not in data:
            continue
        value = data[name]
        if value is None and nullable:
            continue
        if not check(value):
            raise ValueError(f"{name} {_short(value)} is not {what}")


@functools.cache
def _field_types() -> tuple[tuple[str, bool, str, Callable[[object], bool]], ...]:
    """(field, None allowed, what it must be, the check) of each record field whose type
    is checked: worked out once, not for every line (a store's import reads millions)."""
    out = []
    for f in fields(TrialRecord):
        kind = str(f.type)
        core = kind.removesuffix(" | None").split("[")[0]
        if core in _TYPES:
            out.append((f.name, kind.endswith("| None"), *_TYPES[core]))
    return tuple(out)


@functools.cache
def _fast_types() -> dict[str, frozenset[type]]:
    """field -> the exact types of a value that passes its check without a closer look
    (a float only if finite; None where the field may be None)."""
    exact: dict[str, set[type]] = {
        "float": {float}, "int": {int}, "str": {str}, "Kind": {str}, "Status": {str},
        "Failure": {str}, "dict": {dict}, "list": {list}}
    out = {}
    for f in fields(TrialRecord):
        kind = str(f.type)
        core = kind.removesuffix(" | None").split("[")[0]
        if core in exact:
            out[f.name] = frozenset(exact[core] | ({type(None)} if kind.endswith("| None")
                                                   else set()))
    return out


def _number(v: object) -> bool:
    # an integer too large for a float (json reads any number of digits) is not one
    # either: every figure is computed with as a float
    if isinstance(v, int) and not isinstance(v, bool):
        return abs(v) <= _FLOAT_MAX
    return isinstance(v, float) and math.isfinite(v)


_FLOAT_MAX = sys.float_info.max


_TYPES: dict[str, tuple[str, Callable[[object], bool]]] = {
    "float": ("a finite number", _number),
    "int": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "str": ("a string", lambda v: isinstance(v, str)),
    "Kind": ("a string", lambda v: isinstance(v, str)),
    "Status": ("a string", lambda v: isinstance(v, str)),
    "Failure": ("a string", lambda v: isinstance(v, str)),
    "dict": ("a JSON object", lambda v: isinstance(v, dict)),
    "list": ("a JSON list", lambda v: isinstance(v, list)),
}


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _why(exc: Exception) -> str:
    if isinstance(exc, TypeError):
        return str(exc).replace("TrialRecord.__init__() ", "")
    if isinstance(exc, KeyError):
        return f"missing {exc}"
    return str(exc)


def write_error(path: Path, exc: OSError) -> ResultsWriteError:
    """A ResultsWriteError that names the real cause (full, read-only, no permission,
    gone) and what to do about it."""
    return ResultsWriteError(path, _cause(path, exc))


def _cause(path: Path, exc: OSError) -> str:
    said = exc.strerror or str(exc)
    resume = "then continue the run with --resume"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        with contextlib.suppress(OSError):
            said += f" ({shutil.disk_usage(path).free / 1e6:.1f} MB free on its file system)"
        return f"{said}: free some space (or choose another --out), {resume}"
    if exc.errno == errno.EROFS:
        return f"its file system is read-only ({said}): make it writable again, {resume}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to write in it ({said}): give this user write access, {resume}"
    if exc.errno == errno.ENOENT or not path.is_dir():
        return ("the directory is gone (deleted or moved during the run): what it held went "
                "with it; start the run again (or resume it where it was moved to)")
    return f"{said}: {resume} once it can be written"


def new_run_id() -> str:
    """The run's time to the second and four random hex digits: runs that start in the
    same second (the runs of a fast campaign, the controllers of one sharded night) keep
    ids of their own in a results store, where run_id is the key of a run."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
