"""``--plan``: the real engine over planning hosts, connecting to nothing.

The inventory here names known_hosts and addresses nothing could reach: a plan that
tried to connect would fail. What the plan shows is what the platform code builds.
"""

from __future__ import annotations

import re
import textwrap

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.tools.registry import CATALOG
from nicbench.execution.plan import make_plan, render, same_commands, schedule_pairs

INVENTORY = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "ssh": {"known_hosts": "/nonexistent"}}
              for i, n in enumerate(("ha", "hb", "hc", "hd"), start=1)],
    "adapters": [{"id": "card", "vendor": "v", "model": "Card", "driver": {"name": "d"}}],
    "pairs": [{"name": "p1", "adapter": "card",
               "a": {"host": "ha", "interface": "t0", "address": "198.18.0.1"},
               "b": {"host": "hb", "interface": "t0", "address": "198.18.0.2"}},
              {"name": "p2", "adapter": "card",
               "a": {"host": "hc", "interface": "t1", "address": "198.18.1.1"},
               "b": {"host": "hd", "interface": "t1", "address": "198.18.1.2"}},
              {"name": "p3", "adapter": "card",
               "a": {"host": "ha", "interface": "t2", "address": "198.18.2.1"},
               "b": {"host": "hd", "interface": "t2", "address": "198.18.2.2"}}]})


def profile(tmp_path, body: str = """\
        repetitions: 3
        sysctl: {net.core.rmem_max: 4194304}
        mtu: [1500, 9000]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 2}}
        """):
    """A profile of this test's own: ``body`` after its name and source."""
    path = tmp_path / "p.yaml"
    path.write_text("name: planned\nsource: nicbench unit test\n" + textwrap.dedent(body))
    return load_profile(path, CATALOG)


def test_the_plan_lists_every_command_per_host_in_order(tmp_path):
    plan = make_plan(profile(tmp_path), INVENTORY, ["p1"])
    assert plan.trials == 6 and plan.pairs == ["p1"]
    ha = [s.command for s in plan.sent if s.host == "ha"]
    hb = [s.command for s in plan.sent if s.host == "hb"]
    # tuning at 9000 on both, the path checked, the receiver's server and the sender's
    # client, then everything put back
    for cmds in (ha, hb):
        assert "sysctl -w net.core.rmem_max=4194304" in cmds
        assert "ip link set dev t0 mtu 9000" in cmds
        assert cmds.index("ip link set dev t0 mtu 9000") < cmds.index("ip link set dev t0 mtu 1500")
    servers = [c for c in ha if "iperf3 -s" in c]
    clients = [c for c in hb if "iperf3 -c" in c]
    assert len(servers) == len(clients) == 6
    assert clients[0].endswith("iperf3 -c 198.18.0.1 -B 198.18.0.2 -p 5201 -J -t 2")
    assert all("ping" in c for c in ha + hb if "-M do" in c)
    assert any(c.startswith("ping -n -q -M do -s 8972") for c in hb)
    # the plan's trials carry the commands a run stores in trials.jsonl
    (first,) = [t for t in plan.trials_planned if t.point == "mtu9000" and t.repetition == 1]
    assert first.client == "iperf3 -c 198.18.0.1 -B 198.18.0.2 -p 5201 -J -t 2"


def test_repetitions_are_shown_once_with_their_count(tmp_path):
    lines = render(make_plan(profile(tmp_path), INVENTORY, ["p1"]))
    assert lines[0].startswith("plan: planned on 1 pairs (p1), 2 points, 1 tests: 6 trials")
    assert lines.count("   ... and 2 more repetitions of the same") == 4   # 2 points x 2 hosts
    assert "== ha" in lines and "== hb" in lines


def test_pairs_that_share_a_host_are_never_scheduled_together():
    at_once = schedule_pairs(INVENTORY, ["p1", "p2", "p3"], parallel=4, duration_s=10)
    assert [(s.pair, s.start_s, s.end_s) for s in at_once] == [
        ("p1", 0, 10), ("p2", 0, 10), ("p3", 10, 20)]       # p3 shares ha with p1, hd with p2
    one = schedule_pairs(INVENTORY, ["p1", "p2", "p3"], parallel=1, duration_s=10)
    assert [s.start_s for s in one] == [0, 10, 20]


def test_a_run_s_stored_command_matches_its_plan_but_for_the_attempt_token():
    planned = "NPtcp -h 198.18.0.1 -P 5002 -o /tmp/nicbench-g.mtu1500.netpipe.r1-@trial@.out"
    assert same_commands(planned, planned.replace("@trial@", "0a1b2c3d"))
    assert not same_commands(planned, planned.replace("5002", "5003").replace("@trial@",
                                                                                "0a1b2c3d"))


WINDOWS = Inventory.model_validate({
    "hosts": [{"name": n, "address": f"198.19.{i}.2", "os": "windows",
               "ssh": {"user": "bench", "known_hosts": "/nonexistent"}}
              for i, n in ((1, "wa"), (2, "wb"))],
    "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                  "driver": {"name": "e1r"}, "link_rate": "1gbit"}],
    "pairs": [{"name": "i350", "adapter": "i350",
               "a": {"host": "wa", "interface": "Ethernet 2", "address": "198.18.0.1"},
               "b": {"host": "wb", "interface": "Ethernet 2", "address": "198.18.0.2"}}]})


def test_a_windows_plan_shows_the_decoded_scripts_of_the_whole_method():
    """The Feb 2003 Windows method: jumbo frames in the adapter's keyword, the registry's
    TCP window values, a reboot, the firewall for the tools' ports, NTttcp.exe and
    iperf.exe, and everything put back: per host, in that order, as readable scripts."""
    from pathlib import Path

    plan = make_plan(load_profile(Path(__file__).resolve().parents[2] / "profiles" /
                                  "ixbt-2003-02-windows.yaml", CATALOG), WINDOWS)
    for host in ("wa", "wb"):
        cmds = [s.command for s in plan.sent if s.host == host]
        # decoded, not base64 (a base64 UTF-16 script is a long run of these characters)
        assert not [c for c in cmds if re.search(r"[A-Za-z0-9+/=]{120,}", c)]

        def first(*words: str, cmds: list[str] = cmds) -> int:
            return next(i for i, c in enumerate(cmds) if all(w in c for w in words))

        def last(*words: str, cmds: list[str] = cmds) -> int:
            return max(i for i, c in enumerate(cmds) if all(w in c for w in words))

        registry = first("$k.SetValue(", "$Name = 'TcpWindowSize'", "$Kind = 'DWord'")
        assert first("$k.SetValue(", "$Name = 'Tcp1323Opts'", "$Kind = 'DWord'") > registry
        reboot = first("'shutdown.exe' '/r'")
        assert reboot > registry
        firewall = first("New-NetFirewallRule")
        jumbo = first("Set-NetAdapterAdvancedProperty", "$Keyword = '*JumboPacket'",
                      "$Value = '9014'")
        if host == "wa":      # the receiver: servers started in the background
            ntttcp = first("$Exe = ''NTttcp.exe''", "$ArgLine = ''-r -m 1,0,198.18.0.1")
            iperf = first("$Exe = ''iperf.exe''", "$ArgLine = ''-s -B 198.18.0.1")
        else:                 # the sender: clients run in the foreground
            ntttcp = first("& 'NTttcp.exe' '-s'")
            iperf = first("& 'iperf.exe' '-c' '198.18.0.1'")
        assert reboot < ntttcp and jumbo < last("NTttcp.exe")
        assert firewall < iperf
        assert last("Set-NetAdapterAdvancedProperty", "$Value = '1514'") > jumbo  # back
        # the value was absent before the run: put back means deleted ($Kind = '')
        assert last("$Name = 'Tcp1323Opts'", "$Kind = ''\n") > \
            first("$Name = 'Tcp1323Opts'", "$Data = '3'")
        assert last("Remove-NetFirewallRule") > firewall
    assert any("more repetitions of the same" in line for line in render(plan))


def test_a_campaign_plan_lists_each_run_in_order_with_the_night_s_estimate(capsys,
                                                                         monkeypatch):
    from pathlib import Path

    from clihelp import in_process

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)          # the campaign's profiles and inventory, as shipped
    rc, out, err = in_process(capsys, "campaign", "profiles/lab-overnight.yaml", "--plan")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("campaign lab-overnight: 2 runs, ")
    runs = [line for line in lines if line.startswith("### run ")]
    assert runs == ["### run lab-roundup", "### run quick"]
    assert out.count("ip link set dev gbe mtu 16000") >= 2       # both hosts of gbe


def test_udp_search_probes_are_named_as_a_run_names_them(tmp_path):
    # A run keys each probe by its offered rate (".200000k"), and its paths on the hosts
    # carry that name: the plan must too, or --plan's paths differ from what ran.
    plan = make_plan(profile(tmp_path, """\
        repetitions: 1
        mtu: [1500]
        tests:
          - name: udp
            tool: iperf2
            protocol: udp
            params: {duration_s: 1}
            udp_search: {method: sweep, start_bps: 200M, stop_bps: 220M, step_bps: 10M}
        """), INVENTORY, ["p1"])
    clients = [s.command for s in plan.sent if s.host == "hb" and "iperf -c" in s.command]
    rates = sorted(int(b) for c in clients for b in re.findall(r" -b (\d+)", c))
    assert rates == [200_000_000, 210_000_000, 220_000_000]
    paths = [s.command for s in plan.sent if "-@trial@" in s.command and ".udp." in s.command]
    for kbit in (200000, 210000, 220000):
        assert any(f".{kbit}k-@trial@" in c for c in paths), kbit


def test_a_plan_of_repetitions_until_stable_gives_the_range(tmp_path):
    plan = make_plan(profile(tmp_path, """\
        repetitions: {min: 5, max: 10, until_ci_pct: 1.0}
        mtu: [1500, 9000]
        tests:
          - {name: tcp, tool: iperf3, params: {duration_s: 2}}
        """), INVENTORY, ["p1"])
    assert (plan.trials_min, plan.trials) == (12, 20)     # the median's interval: 6
    assert plan.estimate_min_s is not None and plan.estimate_min_s < plan.estimate_s
    lines = render(plan)
    assert lines[0].endswith("1 tests: 12 to 20 trials (repetitions until stable)")
    assert lines[1].startswith("estimated time: ") and " to " in lines[1].split("(")[0]
    # The planning hosts answer alike every time, so the planned run stops at its min.
    assert len([t for t in plan.trials_planned if t.point == "mtu1500"]) == 6
