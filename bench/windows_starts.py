"""Process starts per trial on Windows hosts, counted through the scripted Windows host.

A run keeps one warm PowerShell per Windows host (nicbench/remote/warm_powershell.py): every
command is a framed script in it, and it starts the background tools itself, so a trial
starts no process; the session is started by the host's first command and again after
each reboot. Without it (the fallback once a session is lost), every command is a
``powershell.exe -EncodedCommand`` of its own and a background tool one more (its
WMI-created runner). The design expects each start to cost a few hundred ms there
(docs/windows.md, design 1), against 0.03 s of harness per trial on Linux. This runs one
point of NTttcp and iperf 2 trials (3 each) through the real Runner, WindowsPlatform and
WindowsShell against the scripted hosts of ``nicbench/platforms/fake_windows.py``
(answering with the real captures the unit tests use), both ways, counts each host's
starts between one trial's start and the next, and prints them with what ``--plan``
charges. No lab, no root, no Windows: it counts starts, it does not time them. The last
line is the figures, for machines:

    windows_starts: receiver=... sender=... per_trial=... sessions=... plan_starts=... plan_per_trial=... alone_per_trial=... seconds_each=...

    python bench/windows_starts.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))   # startcounter, a test-only counter

from nicbench.config.inventory import Inventory  # noqa: E402
from nicbench.config.loader import load_profile  # noqa: E402
from nicbench.execution.plan import POWERSHELL_START_S, make_plan  # noqa: E402
from nicbench.execution.runner import Runner  # noqa: E402
from nicbench.platforms.fake_windows import ToolRun, windows_pair  # noqa: E402
from startcounter import StartCounter  # noqa: E402
from nicbench.tools.registry import CATALOG  # noqa: E402

TESTS = REPO / "tests"
CAPTURES = {
    "ntttcp_server": TESTS / "fixtures/windows/gh-ntttcp-24__ntttcp_win_v5.40_console.txt",
    "ntttcp_xml": TESTS / "golden/samples/ntttcp_win_v5.33_pkb_ntttcp_tcp_sender.xml",
    "iperf_client": TESTS / "golden/captures/iperf2_lab_tcp_client_enhanced.txt",
    "iperf_server": TESTS / "golden/captures/iperf2_lab_tcp_server_enhanced.txt",
}
PROFILE = """\
    name: windows-starts
    source: bench/windows_starts.py
    platform: windows
    repetitions: 3
    points:
      - frame_size: 1514
    tests:
      - name: ntttcp
        tool: ntttcp
        params: {threads: 1, cpu: 0, async_count: 4, length: 256K, count: 10000}
      - name: iperf-tcp
        tool: iperf2
        params: {duration_s: 10, window: 64K}
    """
INVENTORY = {
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "os": "windows",
               "ssh": {"user": "bench", "known_hosts": "k"}} for i, n in ((1, "wa"), (2, "wb"))],
    "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                  "driver": {"name": "e1r"}}],
    "pairs": [{"name": "i350", "adapter": "i350",
               "a": {"host": "wa", "interface": "Ethernet 2", "address": "198.18.0.1"},
               "b": {"host": "wb", "interface": "Ethernet 2", "address": "198.18.0.2"}}]}


def per_trial(profile, inventory, tools, run_dir: Path, warm: bool):
    pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                         "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tools)
    pair.warm = warm
    counter = StartCounter(pair)
    Runner(profile, inventory, run_dir, hosts=pair, listener=counter).run()
    return counter.per_trial(), sum(h.sessions for h in pair.hosts.values())


def main() -> int:
    text = {k: p.read_bytes() for k, p in CAPTURES.items()}

    def tools(host, argv):
        if argv[0] == "NTttcp.exe":
            return ToolRun(server=text["ntttcp_server"].decode(), outfile=text["ntttcp_xml"])
        return ToolRun(client=text["iperf_client"].decode(),
                       server=text["iperf_server"].decode())

    inventory = Inventory.model_validate(INVENTORY)
    with tempfile.TemporaryDirectory(prefix="nicbench-bench-") as tmp:
        path = Path(tmp) / "profile.yaml"
        path.write_text(textwrap.dedent(PROFILE))
        profile = load_profile(path, CATALOG)
        warm, sessions = per_trial(profile, inventory, tools, Path(tmp) / "warm", True)
        alone, _ = per_trial(profile, inventory, tools, Path(tmp) / "alone", False)
        plan = make_plan(profile, inventory)
    print("  test       warm session        a process per command")
    for (test, starts), (_, old) in zip(warm, alone, strict=True):
        print(f"  {test:10} receiver {starts['wa']:2} sender {starts['wb']:2}   "
              f"receiver {old['wa']:2} sender {old['wb']:2}")
    receiver = statistics.mean(s["wa"] for _, s in warm)
    sender = statistics.mean(s["wb"] for _, s in warm)
    before = statistics.mean(s["wa"] + s["wb"] for _, s in alone)
    planned = plan.windows_trial_starts / max(1, plan.windows_trials)
    print(f"windows_starts: receiver={receiver:.3g} sender={sender:.3g} "
          f"per_trial={receiver + sender:.3g} sessions={sessions} "
          f"plan_starts={plan.windows_starts} plan_per_trial={planned:.3g} "
          f"alone_per_trial={before:.3g} seconds_each={POWERSHELL_START_S:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
