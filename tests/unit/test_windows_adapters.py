"""Windows adapters by identity: the inventory names an adapter by its name (localized
defaults too: 'イーサネット', 'Local Area Connection* 2'), its ifIndex or its interface
GUID; nicbench reads all three at setup and names the adapter by GUID afterwards, so a
rename or a moved ifIndex changes nothing. A name is compared exactly, never as a
wildcard. Through the scripted Windows host."""

from __future__ import annotations

import textwrap

import pytest

from nicbench.config.fields import is_windows_ifname
from nicbench.config.inventory import Inventory
from nicbench.errors import TuningError
from nicbench.execution.runner import Runner
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.fake_windows import FakeAdapter, FakeWindowsHost, FakeWindowsPair
from nicbench.results.records import Status

from test_windows_run import PROFILE, profile, tools

LOCALIZED = ["イーサネット", "Local Area Connection* 2", "Подключение по локальной сети",
             "Ethernet (Intel) #2", "vEthernet (Default Switch)", "Conexión de área local 3"]
GUID = "{4A7D1E0C-0000-4000-8000-0000000000AB}"


@pytest.mark.parametrize("name", [*LOCALIZED, "Ethernet 2", "12", GUID, GUID.lower()])
def test_validation_takes_names_indexes_and_guids(name):
    assert is_windows_ifname(name)


@pytest.mark.parametrize("name", ["eth0;reboot", "a$b", "it's", " Ethernet", "Ethernet\n",
                                  "Ethernet\n2", "*", "_x", "x\0y", "a\"b", "{not-a-guid}",
                                  "x" * 300, "Ethernet`"])
def test_validation_refuses_what_is_no_adapter(name):
    assert not is_windows_ifname(name)


def inventory_text(a: str, b: str) -> str:
    return textwrap.dedent(f"""\
        hosts:
          - {{name: wa, address: 198.19.1.2, os: windows, ssh: {{user: bench, known_hosts: k}}}}
          - {{name: wb, address: 198.19.2.2, os: windows, ssh: {{user: bench, known_hosts: k}}}}
        adapters:
          - {{id: i350, vendor: Intel, model: I350-T2, driver: {{name: e1r}}}}
        pairs:
          - name: i350
            adapter: i350
            a: {{host: wa, interface: "{a}", address: 198.18.0.1}}
            b: {{host: wb, interface: "{b}", address: 198.18.0.2}}
        """)


def test_nicbench_validate_accepts_the_localized_inventories(tmp_path, capsys):
    from nicbench.cli import main

    for i, (a, b) in enumerate([("イーサネット", "Local Area Connection* 2"),
                                ("Подключение по локальной сети", "12"), (GUID, "7")]):
        path = tmp_path / f"inv{i}.yaml"
        path.write_text(inventory_text(a, b), encoding="utf-8")
        assert main(["validate", str(path)]) == 0, capsys.readouterr()
    bad = tmp_path / "bad.yaml"
    bad.write_text(inventory_text("Ethernet;reboot", "7"), encoding="utf-8")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "pairs[0].a.interface" in err and "an ifIndex, or an interface GUID" in err


def test_the_identity_becomes_the_scripts_parameters():
    assert wc.adapter_by(GUID.lower()) == ("guid", GUID)
    assert wc.adapter_by("12") == ("index", "12")
    assert wc.adapter_by("Local Area Connection* 2") == ("name", "Local Area Connection* 2")
    for argv in (wc.adapter_argv("x"), wc.set_advanced_argv("x", "*JumboPacket", "9014", 5),
                 wc.advanced_format_list_argv("x")):
        script = str(argv[1])
        # found by exact comparison; no cmdlet is given the name, whose -Name takes wildcards
        assert "$_.Name -eq $Adapter" in script and "-Name $" not in script


def pair_of(names: dict[str, str], **kw) -> FakeWindowsPair:
    """wa and wb whose test adapters are called ``names[host]`` on the host, beside a
    decoy whose name only a wildcard would match."""
    pair = FakeWindowsPair()
    for i, (host, name) in enumerate(names.items(), 1):
        pair.add(FakeWindowsHost(host, {
            name + "7": FakeAdapter(("10.9.9.9",), **kw),
            name: FakeAdapter((f"198.18.0.{i}",), **kw)}, tool_run=tools))
    return pair


def run_with(tmp_path, a: str, b: str, pair: FakeWindowsPair, text: str = PROFILE):
    inv = Inventory.model_validate({
        "hosts": [{"name": n, "address": f"198.19.{i}.2", "os": "windows",
                   "ssh": {"user": "bench", "known_hosts": "k"}}
                  for i, n in ((1, "wa"), (2, "wb"))],
        "adapters": [{"id": "i350", "vendor": "Intel", "model": "I350-T2",
                      "driver": {"name": "e1r"}}],
        "pairs": [{"name": "i350", "adapter": "i350",
                   "a": {"host": "wa", "interface": a, "address": "198.18.0.1"},
                   "b": {"host": "wb", "interface": b, "address": "198.18.0.2"}}]})
    run = Runner(profile(tmp_path, text), inv, tmp_path / "out", hosts=pair)
    return run, list(run.run().records())


def test_a_run_on_localized_names_names_them_by_guid_after_setup(tmp_path):
    pair = pair_of({"wa": "Local Area Connection* 2", "wb": "イーサネット"})
    run, recs = run_with(tmp_path, "Local Area Connection* 2", "イーサネット", pair)
    assert {r.point for r in recs if r.status is Status.OK} == {"frame1514", "frame9014"}
    assert run.problems == []
    for host, name in (("wa", "Local Area Connection* 2"), ("wb", "イーサネット")):
        h = pair.hosts[host]
        calls = [c for c in pair.connections[host].calls
                 if c.label in ("adapter", "set *JumboPacket")]
        assert calls[0].params == {"By": "name", "Adapter": name}
        assert {(c.params["By"], c.params["Adapter"]) for c in calls[1:]} == \
            {("guid", h.adapters[name].guid)}
        assert h.adapters[name].value == "1514"              # put back
        decoy = [c for c in pair.connections[host].calls if c.label == "set *JumboPacket"
                 and c.params["Adapter"] == h.adapters[name + "7"].guid]
        assert decoy == []                                    # never touched


def test_an_adapter_renamed_during_the_run_is_still_found_by_its_guid(tmp_path):
    pair = pair_of({"wa": "Ethernet 2", "wb": "Ethernet 2"})
    renamed = []

    def rename_once(call):
        if call.label == "shutdown.exe" and not renamed:
            renamed.append(True)
            pair.hosts["wa"].rename("Ethernet 2", "Ethernet 5")
    pair.hosts["wa"].on_call = rename_once
    run, recs = run_with(tmp_path, "Ethernet 2", "Ethernet 2", pair)
    assert renamed and run.problems == [] and run.lost == {}
    assert {r.point for r in recs if r.status is Status.OK} == {"frame1514", "frame9014"}
    assert pair.hosts["wa"].adapters["Ethernet 5"].value == "1514"      # put back


@pytest.mark.parametrize("by", ["index", "guid"])
def test_the_inventory_may_name_the_adapter_by_ifindex_or_guid(tmp_path, by):
    pair = pair_of({"wa": "Ethernet 2", "wb": "Ethernet 2"})
    a = pair.hosts["wa"].adapters["Ethernet 2"]
    ident = str(a.if_index) if by == "index" else a.guid.lower()
    run, recs = run_with(tmp_path, ident, "Ethernet 2", pair)
    assert any(r.status is Status.OK for r in recs) and run.problems == []
    facts = pair.platforms["wa"].interface_facts(ident)
    assert (facts.name, facts.if_index, facts.guid) == ("Ethernet 2", a.if_index, a.guid)


def test_an_adapter_not_there_is_one_line_naming_what_was_looked_for():
    pair = pair_of({"wa": "Ethernet 2"})
    with pytest.raises(TuningError) as info:
        pair.platform("wa").adapter("Local Area Connection* 9")
    assert "no adapter with name Local Area Connection* 9 (0 found" in str(info.value)
    assert "\n" not in str(info.value)
