"""The controller's pulse: ``DIR/heartbeat.json``, so ``nicbench status`` can tell a
controller that died from one that is only slow.

While a run or a campaign goes, :class:`Heartbeat` keeps a small JSON file up to date:
the controller's pid, host name and process start time, when it started and last beat,
the run in progress, each pair's state and current configuration (point and test), and
the trial counts with the ETA. It is written atomically (a reader never sees half of it),
when a pair or a point begins or ends, after trials at most once a second, and by a thread of its own every ``BEAT_S`` seconds
even when no event comes (a 60 s netPIPE trial sends none), so a beat older than
``STALE_S`` means the controller is stopped, hung or gone. At the end the file says how
the controller ended.

:func:`judge` reads it back for ``status``: on the same host the pid (and its start time,
so a reused pid is not taken for the controller) says whether the process lives; from
another host only the age of the last beat can.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicbench.durations import duration
from nicbench.execution import events as ev
from nicbench.textfile import TextFileError, decode_utf8, read_bytes, write_atomic

HEARTBEAT_FILE = "heartbeat.json"
MAX_HEARTBEAT_BYTES = 1 << 20    # a few hundred bytes are written
HEARTBEAT_VERSION = 1
BEAT_S = 2.0              # the beat thread's interval
EVENT_WRITE_S = 1.0       # events rewrite the file at most this often
STALE_S = 15.0            # a running controller that has not beaten for this long is stuck


def _process_start(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, /proc/PID/stat field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


class Heartbeat:
    """A listener that keeps ``path`` up to date; :meth:`start` it, :meth:`close` it with
    how the controller ended. Events from several pairs' threads are serialized by the
    runner; the beat thread takes the same lock as the events."""

    def __init__(self, path: str | Path, *, kind: str, name: str, beat_s: float = BEAT_S):
        self.path = Path(path)
        self.beat_s = beat_s
        self._lock = threading.Lock()
        self._quit = threading.Event()
        self._thread: threading.Thread | None = None
        self._written = 0.0
        self.error: str | None = None
        now = time.time()
        self.data: dict[str, Any] = {
            "format_version": HEARTBEAT_VERSION, "kind": kind, "name": name,
            "pid": os.getpid(), "host": socket.gethostname(),
            "pid_start": _process_start(os.getpid()), "boot_id": _boot_id(),
            "started_at": now, "beat_at": now, "beat_s": beat_s, "state": "running",
            "ended_at": None, "run": None, "pairs": {}, "done": 0, "total": 0,
            "eta_s": None}

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> Heartbeat:
        self._write()
        self._thread = threading.Thread(target=self._beat, name="nicbench-heartbeat",
                                        daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._quit.wait(self.beat_s):
            self._write()

    def close(self, state: str) -> None:
        """The controller ends: ``finished``, ``interrupted`` or ``failed``."""
        self._quit.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self.data["state"] = state
            self.data["ended_at"] = time.time()
            for pair in self.data["pairs"].values():
                if pair.get("state") == "running":
                    pair["state"] = "stopped"
        self._write()

    # -- what happens -----------------------------------------------------------------
    def set_run(self, name: str | None, total: int | None = None) -> None:
        """The run now in progress (a campaign's run directory), and the whole's total."""
        with self._lock:
            self.data["run"] = name
            if total is not None:
                self.data["total"] = total
        self._write()

    def __call__(self, event: ev.Event) -> None:
        with self._lock:
            pairs = self.data["pairs"]
            run = self.data["run"]
            match event:
                case ev.RunStarted(pairs=names, total=total):
                    for name in names:
                        pairs[_key(run, name)] = {"run": run, "pair": name,
                                                  "state": "waiting"}
                    if not self.data["total"]:
                        self.data["total"] = total
                case ev.PairStarted(pair=name):
                    pairs.setdefault(_key(run, name), {"run": run, "pair": name}).update(
                        state="running", since=time.time())
                case ev.PairEnded(pair=name, state=state):
                    pairs.setdefault(_key(run, name), {"run": run, "pair": name}).update(
                        state=state, point=None, test=None)
                case ev.PointStarted(pair=name, point=point):
                    pairs.setdefault(_key(run, name), {"run": run, "pair": name}).update(
                        point=point, test=None)
                case ev.TrialStarted(pair=name, point=point, test=test):
                    pairs.setdefault(_key(run, name), {"run": run, "pair": name}).update(
                        point=point, test=test)
                case ev.TrialDone(record=r, done=done, total=total, eta_s=eta):
                    pairs.setdefault(_key(run, r.pair), {"run": run, "pair": r.pair}).update(
                        last_at=time.time())
                    self.data.update(done=done, total=total, eta_s=eta)
                case _:
                    return
        # A pair or a point begun or ended is worth saying at once (there are few);
        # trials, at most once a second.
        if not isinstance(event, (ev.TrialStarted, ev.TrialDone)) or \
                time.time() - self._written >= EVENT_WRITE_S:
            self._write()

    def _write(self) -> None:
        with self._lock:
            self.data["beat_at"] = time.time()
            text = json.dumps(self.data, indent=1)
        try:
            write_atomic(self.path, text,
                         tmp=self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp"))
            self._written = time.time()
            self.error = None
        except OSError as exc:        # a pulse that cannot be written never stops the run
            self.error = f"{self.path}: cannot write: {exc.strerror or exc}"


def _key(run: str | None, pair: str) -> str:
    return f"{run}/{pair}" if run else pair


# -- reading it back -------------------------------------------------------------------
@dataclass(frozen=True)
class Pulse:
    """What a heartbeat file says about its controller."""

    alive: bool | None        # None: cannot tell (no file)
    ended: bool
    text: str                 # one line for people
    data: dict[str, Any]


def read(directory: str | Path) -> dict[str, Any] | None:
    """What heartbeat.json says; None if there is no such file to read (missing, not a
    regular file, larger than any heartbeat, not JSON)."""
    try:
        data = json.loads(decode_utf8(read_bytes(Path(directory) / HEARTBEAT_FILE,
                                                 MAX_HEARTBEAT_BYTES, "not a heartbeat",
                                                 nofollow=True)))
    except (OSError, TextFileError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def judge(data: dict[str, Any] | None, now: float | None = None) -> Pulse:
    """Is the controller that writes ``data`` alive, dead, or finished?"""
    if data is None:
        return Pulse(None, False, "no heartbeat.json: the controller never started, or "
                     "the run was made by an older nicbench", {})
    now = time.time() if now is None else now
    pid, host = data.get("pid"), data.get("host")
    who = f"pid {pid} on {host}"
    age = now - float(data.get("beat_at") or 0)
    if data.get("state") != "running":
        ended = data.get("ended_at") or data.get("beat_at") or 0
        return Pulse(False, True, f"{data.get('state')} at {_clock(ended)} ({who})", data)
    if host == socket.gethostname() and data.get("boot_id") in (None, _boot_id()) \
            and isinstance(pid, int):
        running = _process_start(pid)
        if running is None or (data.get("pid_start") is not None
                               and running != data.get("pid_start")):
            return Pulse(False, False, f"DEAD: the controller ({who}) is gone; its last "
                         f"beat was {duration(age)} ago, at {_clock(data.get('beat_at'))}", data)
        if age > STALE_S:
            return Pulse(True, False, f"alive but silent for {duration(age)} ({who}): hung?",
                         data)
        return Pulse(True, False, f"alive ({who}, last beat {duration(age)} ago)", data)
    if age > STALE_S:
        return Pulse(False, False, f"silent for {duration(age)}: the controller ({who}) is dead "
                     "or cut off from this directory", data)
    return Pulse(True, False, f"alive ({who}, last beat {duration(age)} ago)", data)


def _clock(t: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError):
        return "?"
