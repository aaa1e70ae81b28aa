"""Windows registry values are put back exactly as they were: their type and raw data
(REG_SZ, REG_DWORD up to 0xffffffff, REG_QWORD, absent), by a run's end and by
`nicbench restore`; a restore that fails is one line naming the reg.exe command that
finishes it by hand; value names are the design's, never a pattern. Through the scripted
Windows host (nicbench/platforms/fake_windows.py), which answers the decoded scripts."""

from __future__ import annotations

import json

import pytest

from nicbench.errors import ConfigError, TuningError
from nicbench.execution.runner import Runner
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.fake_windows import FakeAdapter, FakeWindowsHost, FakeWindowsPair
from nicbench.platforms.tuning import TuningSession, read_journal_entries
from nicbench.platforms.windows_commands import RegValue
from nicbench.remote.powershell import WindowsScriptError
from nicbench.results.records import Status

from test_windows_run import INVENTORY, hosts, killed_mid_trial, profile
from windows_helpers import replay_hosts

SZ = RegValue("REG_SZ", "64K")
QWORD = RegValue("REG_QWORD", str(2 ** 64 - 1))
ALL_ONES = 0xFFFFFFFF


def one_host(**kw) -> tuple[FakeWindowsHost, object]:
    pair = FakeWindowsPair()
    host = pair.add(FakeWindowsHost("wa", {"Ethernet 2": FakeAdapter(("198.18.0.1",))}, **kw))
    return host, pair.platform("wa")


# -- the value as text: what the journal keeps --------------------------------------------
@pytest.mark.parametrize(("value", "text"), [
    (RegValue("REG_DWORD", "65535"), "65535"),            # as journals always held it
    (RegValue("REG_DWORD", str(ALL_ONES)), "4294967295"),
    (SZ, "REG_SZ:64K"),
    (RegValue("REG_SZ", ""), "REG_SZ:"),
    (RegValue("REG_SZ", "a: b"), "REG_SZ:a: b"),
    (QWORD, "REG_QWORD:18446744073709551615"),
    (RegValue("REG_MULTI_SZ", '["a", "b"]'), 'REG_MULTI_SZ:["a", "b"]'),
    (RegValue("REG_BINARY", "AAH/"), "REG_BINARY:AAH/"),
])
def test_a_value_and_its_journal_text_go_both_ways(value, text):
    assert value.text() == text
    assert RegValue.parse(text) == value


@pytest.mark.parametrize("text", ["64K", "REG_DWORD:4294967296", "REG_NONE:x", "-1",
                                  "REG_QWORD:18446744073709551616", "REG_BINARY:**",
                                  "REG_MULTI_SZ:[1]", "REG_SZ:a\0b"])
def test_text_that_is_no_value_nicbench_can_write_is_refused(text):
    with pytest.raises(ValueError):
        RegValue.parse(text)


def test_the_by_hand_command_writes_the_value_with_its_type():
    key = r'"HKLM\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters"'
    assert wc.registry_by_hand("TcpWindowSize", SZ) == \
        f'reg add {key} /v TcpWindowSize /t REG_SZ /d "64K" /f'
    assert wc.registry_by_hand("Tcp1323Opts", None) == f"reg delete {key} /v Tcp1323Opts /f"
    assert '/t REG_MULTI_SZ /d "a\\0b"' in wc.registry_by_hand(
        "TcpWindowSize", RegValue("REG_MULTI_SZ", '["a", "b"]'))


# -- read and written back through the platform -------------------------------------------
@pytest.mark.parametrize("original", [SZ, ALL_ONES, 0, QWORD,
                                      RegValue("REG_EXPAND_SZ", "%SystemRoot%\\x"),
                                      RegValue("REG_MULTI_SZ", '["1", "2"]'),
                                      RegValue("REG_BINARY", "/w==")])
def test_each_original_goes_back_with_its_type_and_data(original):
    host, plat = one_host(registry={"TcpWindowSize": original})
    session = TuningSession()
    assert session.apply(plat, "registry", "TcpWindowSize", "20971520")
    assert host.registry == {"TcpWindowSize": 20971520}
    assert session.restore() == []
    assert host.registry == {"TcpWindowSize": original}


def test_a_string_that_reads_like_the_wanted_number_is_still_rewritten_as_a_dword():
    host, plat = one_host(registry={"TcpWindowSize": RegValue("REG_SZ", "65535")})
    session = TuningSession()
    assert session.apply(plat, "registry", "TcpWindowSize", "65535")   # type differs
    assert host.registry == {"TcpWindowSize": 65535}
    session.restore()
    assert host.registry == {"TcpWindowSize": RegValue("REG_SZ", "65535")}


def test_an_absent_original_is_deleted_again():
    host, plat = one_host()
    with TuningSession() as session:
        session.apply(plat, "registry", "Tcp1323Opts", "3")
        assert host.registry == {"Tcp1323Opts": 3}
    assert host.registry == {}


def test_a_restore_the_host_refuses_is_a_problem_naming_the_command_to_finish_it():
    host, plat = one_host(registry={"TcpWindowSize": SZ})
    session = TuningSession()
    session.apply(plat, "registry", "TcpWindowSize", "20971520")
    host.registry_error = ("Exception calling \"SetValue\" with \"3\" argument(s): "
                           "\"Requested registry access is not allowed.\"")
    (problem,) = session.restore()
    said = str(problem)
    assert "to put back: REG_SZ:64K" in said and "Requested registry access" in said
    assert ('to finish by hand: reg add "HKLM\\SYSTEM\\CurrentControlSet\\Services\\Tcpip'
            '\\Parameters" /v TcpWindowSize /t REG_SZ /d "64K" /f') in said
    assert session.pending() and host.registry == {"TcpWindowSize": 20971520}


def test_a_journal_original_nicbench_cannot_write_is_a_tuning_error_not_a_crash():
    _host, plat = one_host()
    with pytest.raises(TuningError, match="not a value nicbench can write"):
        plat.set_setting("registry", "TcpWindowSize", "64K")   # an untyped non-number


def test_value_names_are_the_designs_never_a_pattern(tmp_path):
    with pytest.raises(WindowsScriptError, match="is not a Tcpip"):
        wc.set_registry_argv("*", 1)
    with pytest.raises(WindowsScriptError, match="is not a Tcpip"):
        wc.reg_get_argv("TcpWindowSize*")
    for name in ("'*'", "TcpWindowSizeX"):
        with pytest.raises(ConfigError, match=r"is not a Tcpip.Parameters value"):
            profile(tmp_path, f"platform: windows\npoints:\n  - frame_size: 1514\n"
                              f"    registry: {{{name}: 1}}\ntests: []\n")
    with pytest.raises(ConfigError, match="less than or equal to 4294967295"):
        profile(tmp_path, "platform: windows\npoints:\n  - frame_size: 1514\n"
                          "    registry: {TcpWindowSize: 0x100000000}\ntests: []\n")


# -- a whole run, and `nicbench restore` after a crash ----------------------------------------
ORIGINALS = {"wa": {"TcpWindowSize": SZ, "Tcp1323Opts": QWORD},
             "wb": {"TcpWindowSize": ALL_ONES}}


def test_a_run_puts_back_every_original_with_its_type(tmp_path):
    pair = hosts()
    for name, values in ORIGINALS.items():
        pair.hosts[name].registry.update(values)
    run = Runner(profile(tmp_path), INVENTORY, tmp_path / "out", hosts=pair)
    recs = list(run.run().records())
    assert any(r.status is Status.OK for r in recs) and run.problems == []
    for name, values in ORIGINALS.items():
        assert pair.hosts[name].registry == values, name


def test_restore_after_a_crash_puts_back_a_string_and_all_ones(tmp_path, monkeypatch, capsys):
    from nicbench.cli import main

    pair, out = killed_mid_trial(tmp_path, registry={"wa": {"TcpWindowSize": SZ},
                                                     "wb": {"TcpWindowSize": ALL_ONES}})
    assert pair.hosts["wa"].registry == {"TcpWindowSize": 0xffff}     # the run's value
    pending = {(c.host, c.key): c.original
               for c in read_journal_entries(out / "tuning.json")[0] if c.kind == "registry"}
    assert pending[("wa", "TcpWindowSize")] == "REG_SZ:64K"
    replay_hosts(monkeypatch, pair)
    assert main(["restore", str(out)]) == 0
    said = capsys.readouterr().out
    assert "restored wa registry TcpWindowSize = REG_SZ:64K" in said
    assert pair.hosts["wa"].registry == {"TcpWindowSize": SZ}
    assert pair.hosts["wb"].registry == {"TcpWindowSize": ALL_ONES}
    assert json.loads((out / "tuning.json").read_text())["changes"] == []


def test_a_journal_written_before_types_were_kept_still_restores_its_dwords(tmp_path):
    # format 2 journals held a REG_DWORD original as its decimal text: still read so.
    host, plat = one_host()
    journal = tmp_path / "tuning.json"
    journal.write_text(json.dumps({"format_version": 2, "changes": [
        {"host": "wa", "kind": "registry", "key": "TcpWindowSize", "original": "65535",
         "applied": "20971520"}], "leftovers": []}))
    session = TuningSession.load(journal)
    session.bind({"wa": plat})
    assert session.restore() == []
    assert host.registry == {"TcpWindowSize": 65535}

