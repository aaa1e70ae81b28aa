"""The nicbench command as tests run it: in a subprocess as a user would (``nicbench``,
``start`` + ``read_until`` for a run watched while it goes), or in this process
(``in_process``, to read what it printed through capsys).

The environment is the test's without ``NICBENCH_*`` (``NICBENCH_STORE=none``: a run
writes no results store unless the test gives one) (the lab's names must not leak
into a command that runs on another lab), and without ``SSH_AUTH_SOCK`` unless asked
(an agent on the machine must not log a test in).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def env(*, agent: bool = False, **extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items()
           if not k.startswith("NICBENCH_") and (agent or k != "SSH_AUTH_SOCK")}
    # No results store unless the test gives one (not reports/nicbench.duckdb of REPO).
    return {**out, "NICBENCH_STORE": "none", **extra}


def argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "nicbench.cli", *args]


def nicbench(*args: str, cwd: Path = REPO, timeout: float = 120,
             environ: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv(*args), cwd=cwd, env=environ or env(), capture_output=True,
                          text=True, timeout=timeout)


def start(*args: str, cwd: Path = REPO) -> subprocess.Popen:
    return subprocess.Popen(argv(*args), cwd=cwd, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_until(proc: subprocess.Popen, predicate, timeout_s: float) -> list[str]:
    """Lines of proc's stdout up to and including the first one ``predicate(line,
    lines)`` accepts; an AssertionError with what was read if not within ``timeout_s``."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    lines: list[str] = []
    while time.monotonic() < deadline:
        if not sel.select(max(0.0, deadline - time.monotonic())):
            break
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if predicate(line, lines):
            return lines
    raise AssertionError(f"not seen within {timeout_s} s; output so far: {lines}")


def in_process(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process: (exit code, stdout, stderr)."""
    from nicbench import cli

    capsys.readouterr()
    try:
        rc = cli.main(list(args))
    except SystemExit as exc:          # argparse's own errors
        rc = int(exc.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err
