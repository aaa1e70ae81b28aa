"""Run ``nicbench`` commands for the bad-input corpus, each in its own bounded process.

``python forkrun.py`` imports nicbench once, then for every request on standard input
(one JSON object per line: ``argv``, ``cwd``, ``env``, ``timeout_s``, ``memory_bytes``,
``cpu_s``; ``exec``, Python code run instead of a command, tests the runner itself)
forks a child that runs ``nicbench.cli.main(argv)`` with its address space limited to
``memory_bytes`` more than this process had (``RLIMIT_AS``: a runaway allocation fails
in the child instead of taking the machine), stdout and stderr in files and stdin on
``/dev/null``. The child is killed after ``timeout_s`` of wall time, or by the kernel
(SIGXCPU) past ``cpu_s`` + 1 s of its own CPU time (``RLIMIT_CPU``). The answer is one
JSON line: ``rc`` (None if killed at its wall time; minus the signal if one ended it),
``stdout``, ``stderr``, ``seconds`` (wall), ``cpu_seconds`` (the child's user + system
time) and ``maxrss_bytes`` (the child's peak resident set, from ``os.wait4``, this
process's own pages included). What a case costs is its CPU time: its wall time on a
machine shared with other work says as much about the others.

Forking from one clean process that has already imported nicbench costs milliseconds per
case, where a fresh interpreter costs half a second: the whole corpus stays fast while
every case still runs alone, with its own limits, as a separate process.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import tempfile
import time

import contextlib
import importlib
import pkgutil

import nicbench

# What the commands import on first use (report: pandas and matplotlib; run: paramiko),
# loaded once here rather than in every child: every module of the package.
for _module in pkgutil.walk_packages(nicbench.__path__, "nicbench."):
    if not _module.name.endswith("__main__"):
        importlib.import_module(_module.name)
import nicbench.cli  # noqa: E402


def _vm_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _child(req: dict, out_path: str, err_path: str) -> None:
    rc = 99
    try:
        limit = _vm_bytes() + int(req["memory_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if req.get("cpu_s") is not None:
            cpu = int(float(req["cpu_s"])) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        os.chdir(req["cwd"])
        os.environ.update(req.get("env") or {})
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, out_path, os.O_WRONLY | os.O_TRUNC),
                                (2, err_path, os.O_WRONLY | os.O_TRUNC)):
            new = os.open(path, flags)
            os.dup2(new, fd)
            os.close(new)
        try:
            if "exec" in req:           # the runner's own test: code instead of a command
                exec(req["exec"], {})
                rc = 0
            else:
                rc = nicbench.cli.main(req["argv"])
        except SystemExit as exc:       # argparse's own errors
            rc = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:        # the runner's own failure: make it visible
        os.write(2, f"forkrun: {type(exc).__name__}: {exc}\n".encode())
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(rc if isinstance(rc, int) else 99)


def run(req: dict) -> dict:
    with tempfile.NamedTemporaryFile(delete=False) as out_f, \
            tempfile.NamedTemporaryFile(delete=False) as err_f:
        out_path, err_path = out_f.name, err_f.name
    try:
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(req, out_path, err_path)
        deadline = started + float(req["timeout_s"])
        timed_out = False
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                timed_out = True
                break
            time.sleep(0.002)
        seconds = time.monotonic() - started
        with open(out_path, errors="replace") as fh:
            stdout = fh.read()
        with open(err_path, errors="replace") as fh:
            stderr = fh.read()
    finally:
        os.unlink(out_path)
        os.unlink(err_path)
    return {"rc": None if timed_out else os.waitstatus_to_exitcode(status),
            "stdout": stdout, "stderr": stderr, "seconds": seconds,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "maxrss_bytes": usage.ru_maxrss * 1024}


def main() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
