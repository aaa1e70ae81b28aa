"""A results directory that cannot be written is said with its real cause (full,
read-only, no permission, gone), once, with the hosts put back (fake hosts; the lab
versions are tests/faults/test_results_dir.py)."""

from __future__ import annotations

import errno
import os
import shutil

import pytest
from test_runner import INVENTORY, fake, iperf3_ok, mtus, profile

from nicbench.errors import ResultsWriteError
from nicbench.execution import events as ev
from nicbench.execution.runner import Runner
from nicbench.results.rundir import write_error


@pytest.mark.parametrize(("code", "said"), [
    (errno.ENOSPC, "No space left on device ("),
    (errno.EDQUOT, "free some space (or choose another --out), then continue the run "
                   "with --resume"),
    (errno.EROFS, "its file system is read-only (Read-only file system): make it writable "
                  "again, then continue the run with --resume"),
    (errno.EACCES, "no permission to write in it (Permission denied): give this user write "
                   "access, then continue the run with --resume"),
    (errno.EPERM, "no permission to write in it (Operation not permitted)"),
])
def test_each_cause_has_its_own_words(tmp_path, code, said):
    text = str(write_error(tmp_path, OSError(code, os.strerror(code))))
    assert text.startswith(f"{tmp_path}: cannot write results: ")
    assert said in text
    assert ("free some space" in text) == (code in (errno.ENOSPC, errno.EDQUOT))


def test_a_directory_that_is_gone_says_so(tmp_path):
    gone = tmp_path / "run"
    text = str(write_error(gone, OSError(errno.ENOENT, "No such file or directory")))
    assert text == (f"{gone}: cannot write results: the directory is gone (deleted or moved "
                    "during the run): what it held went with it; start the run again (or "
                    "resume it where it was moved to)")


def test_a_directory_deleted_mid_run_stops_it_once_with_the_hosts_put_back(tmp_path):
    out = tmp_path / "out"
    hosts = fake(iperf3_ok)
    warnings: list[str] = []
    done = 0

    def listen(event: ev.Event) -> None:
        nonlocal done
        if isinstance(event, ev.Warning):
            warnings.append(event.message)
        if isinstance(event, ev.TrialDone):
            done += 1
            if done == 2:                       # inside the MTU 9000 point
                shutil.rmtree(out)

    run = Runner(profile(tmp_path, """\
        repetitions: 3
        mtu: [9000]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 1}}
        """), INVENTORY, out, hosts=hosts, listener=listen)
    with pytest.raises(ResultsWriteError) as stopped:
        run.run()
    assert "the directory is gone" in str(stopped.value)
    assert warnings == []                       # said once: by the error itself
    assert mtus(hosts) == {"ha": 1500, "hb": 1500}
    assert not out.exists()
