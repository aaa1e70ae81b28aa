"""What the fault-injection tests share: running the real CLI against the session lab,
reading its progress, and looking at the lab hosts independently of nicbench (ip, sysctl
and /proc read directly, never through nicbench's own platform code).

Every wait is bounded; every helper that looks for leftovers looks only for this test's
own names (each test names its tests uniquely), since other lab users may run too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from clihelp import REPO, argv, env, nicbench, read_until, start  # noqa: F401
from procs import in_namespace

def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return nicbench(*args, timeout=timeout)


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def wait_for(check, timeout_s: float, what: str, interval_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s} s")
        time.sleep(interval_s)


def write_profile(tmp_path: Path, text: str, name: str = "profile.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def inventory_copy(lab, change) -> Path:
    """A copy of the lab's inventory, beside it (its relative key paths still hold),
    edited by ``change(data)``; the caller removes it."""
    data = yaml.safe_load(lab.inventory_file.read_text())
    change(data)
    path = lab.inventory_file.with_name(f"inventory-faults-{os.getpid()}-{time.monotonic_ns()}.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def records(out: Path) -> list[dict]:
    """Every line of trials.jsonl as JSON (each must parse: nothing torn)."""
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def standing(recs: list[dict]) -> list[dict]:
    """The records that stand (a later one of the same key supersedes), as summaries
    count them; reimplemented here from the rule, not imported."""
    last: dict[tuple, int] = {}
    config_last: dict[tuple, int] = {}
    for i, r in enumerate(recs):
        last[(r["pair"], r["point"], r["test"], r["kind"], r["repetition"])] = i
        config_last[(r["pair"], r["point"], r["test"])] = i
    return [r for i, r in enumerate(recs)
            if (config_last[(r["pair"], r["point"], r["test"])] == i
                if r["kind"] in ("skipped", "given-up")
                else last[(r["pair"], r["point"], r["test"], r["kind"], r["repetition"])] == i)]


def assert_no_duplicates(recs: list[dict]) -> None:
    keys = [(r["pair"], r["point"], r["test"], r["kind"], r["repetition"]) for r in recs]
    assert len(keys) == len(set(keys)), keys


def mtu(ns: str, ifname: str) -> int:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", "dev", ifname],
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return int(json.loads(out)[0]["mtu"])


def sysctl(ns: str, name: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", name], check=True,
                          capture_output=True, text=True, timeout=10).stdout.strip()


def processes(ns: str, needle: str) -> list[int]:
    """Live processes in namespace ``ns`` whose command line contains ``needle``."""
    return in_namespace(ns, lambda cmd: needle in cmd)


def leftovers(test_name: str) -> list[str]:
    """Files or directories a trial of the test ``test_name`` left in /tmp (the lab's
    hosts share this machine's file system)."""
    return sorted(str(p) for p in Path("/tmp").glob(f"nicbench-*.{test_name}.*"))


@contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (mount's -o size=) at ``mount``, made and unmounted after: a
    results directory's own file system, to fill up or make read-only."""
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "nicbench-faults",
                    str(mount)], check=True, timeout=10)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], timeout=30)
