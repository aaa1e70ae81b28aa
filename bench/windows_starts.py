"""Process starts per trial on Windows hosts, counted through the scripted Windows host.

Every command nicbench sends to Windows is a ``powershell.exe -EncodedCommand`` of its
own, and a background tool one more (its runner, created by WMI); the design expects
each start to cost a few hundred ms there (docs/windows.md, design 1), against 0.03 s of
harness per trial on Linux. This runs one point of NTttcp and iperf 2 trials (3 each)
through the real Runner, WindowsPlatform and WindowsShell against the scripted hosts of
``nicbench/platforms/fake_windows.py`` (answering with the real captures the unit tests
use), counts each host's starts between one trial's start and the next, and prints them
with what ``--plan`` charges for them. No lab, no root, no Windows: it counts commands,
it does not time them. The last line is the figures, for machines:

    windows_starts: receiver=... sender=... per_trial=... plan_per_trial=... seconds_each=...

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

from nicbench.config.inventory import Inventory  # noqa: E402
from nicbench.config.loader import load_profile  # noqa: E402
from nicbench.execution.plan import POWERSHELL_START_S, make_plan  # noqa: E402
from nicbench.execution.runner import Runner  # noqa: E402
from nicbench.platforms.fake_windows import StartCounter, ToolRun, windows_pair  # noqa: E402
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
        pair = windows_pair({"wa": ("Ethernet 2", "198.18.0.1"),
                             "wb": ("Ethernet 2", "198.18.0.2")}, tool_run=tools)
        counter = StartCounter(pair)
        Runner(profile, inventory, Path(tmp) / "run", hosts=pair, listener=counter).run()
        plan = make_plan(profile, inventory)
    per_trial = counter.per_trial()
    for test, starts in per_trial:
        print(f"  {test:10} receiver wa {starts['wa']:2}  sender wb {starts['wb']:2}")
    receiver = statistics.mean(s["wa"] for _, s in per_trial)
    sender = statistics.mean(s["wb"] for _, s in per_trial)
    planned = plan.windows_starts / max(1, plan.windows_trials)
    print(f"windows_starts: receiver={receiver:.3g} sender={sender:.3g} "
          f"per_trial={receiver + sender:.3g} plan_per_trial={planned:.3g} "
          f"seconds_each={POWERSHELL_START_S:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
