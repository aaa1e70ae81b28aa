"""Every kind of bad inventory or profile gives one exact ``file:line: key.path: message``.

Each test writes a small YAML file into a temp directory (the working directory during the
test, so messages name ``inventory.yaml`` as a user would see it) and asserts the whole
message. Line numbers are looked up in the text the test wrote (``line_of``), so the
assertion checks that the loader points at the line a person would fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nicbench.config.fields import STORED
from nicbench.config.loader import ToolCatalog, load_inventory, load_profile
from nicbench.config.profile import Profile
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConfigError, ConfigErrors, UsageError

INVENTORY = """\
# a two-host inventory; tests below change one thing each
format_version: 1
hosts:
  - name: nb-a
    address: 198.19.1.2
    ssh:
      known_hosts: .lab/known_hosts
  - name: nb-b
    address: 198.19.2.2
    ssh:
      known_hosts: .lab/known_hosts
adapters:
  - id: lab-gbe
    vendor: nicbench lab
    model: LX-1000 Gigabit
    driver: {name: veth}
pairs:
  - name: gbe
    adapter: lab-gbe
    a:
      host: nb-a
      interface: gbe
      address: 198.18.0.1
    b:
      host: nb-b
      interface: gbe
      address: 198.18.0.2
"""

PROFILE = """\
format_version: 1
name: base
source: "Test review, section 1"
repetitions: 5
mtu: [1500, 9000]
tests:
  - name: tcp
    tool: iperf3
    params:
      duration_s: 4
      window: 64K
"""


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based number of the line holding the ``occurrence``-th ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) >= occurrence, f"{needle!r} not in the test's own YAML"
    return hits[occurrence - 1]


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} must occur exactly once"
    return text.replace(old, new)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def inventory_error(text: str, name: str = "inventory.yaml") -> ConfigError:
    Path(name).write_text(text)
    with pytest.raises(ConfigError) as info:
        load_inventory(name, CATALOG)
    return info.value


def lines_of(err: ConfigError) -> list[str]:
    return err.lines() if isinstance(err, ConfigErrors) else [str(err)]


# -- inventory -----------------------------------------------------------------------
def test_good_inventory_loads(workdir):
    Path("inventory.yaml").write_text(INVENTORY)
    inv = load_inventory("inventory.yaml", CATALOG)
    assert [h.name for h in inv.hosts] == ["nb-a", "nb-b"]
    assert inv.pair("gbe").b.address == "198.18.0.2"
    assert inv.base_dir == str(workdir.resolve())


def test_an_unknown_pair_name_is_a_usage_error_naming_the_pairs(workdir):
    Path("inventory.yaml").write_text(INVENTORY)
    inv = load_inventory("inventory.yaml", CATALOG)
    with pytest.raises(UsageError) as info:
        inv.pair("nosuch")
    names = ", ".join(p.name for p in inv.pairs)
    assert str(info.value) == f"unknown pair 'nosuch' (pairs in inventory.yaml: {names})"


def test_unknown_key_lists_the_allowed_keys(workdir):
    text = edit(INVENTORY, "    address: 198.19.2.2\n",
                "    address: 198.19.2.2\n    adress: 198.19.2.3\n")
    err = inventory_error(text)
    assert lines_of(err) == [
        f"inventory.yaml:{line_of(text, 'adress:')}: hosts[1].adress: unknown key 'adress' "
        "(allowed: name, address, os, ssh, tools)"]


def test_unknown_top_level_key_does_not_offer_loader_fields(workdir):
    # base_dir and file are set by the loader; a file must not be able to set them.
    text = INVENTORY + "base_dir: /etc\n"
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'base_dir')}: base_dir: unknown key 'base_dir' "
        "(allowed: format_version, hosts, adapters, pairs)"]


def test_unknown_host_reference(workdir):
    text = edit(INVENTORY, "host: nb-a", "host: nb-c")
    err = inventory_error(text)
    assert str(err) == (f"inventory.yaml:{line_of(text, 'host: nb-c')}: pairs[0].a.host: "
                        "unknown host 'nb-c' (hosts: nb-a, nb-b)")
    assert err.exit_code == 2


def test_bad_test_address(workdir):
    text = edit(INVENTORY, "address: 198.18.0.2", "address: 198.18.0.300")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, '198.18.0.300')}: pairs[0].b.address: "
        "'198.18.0.300' is not an IPv4 or IPv6 address"]


def test_bad_host_address(workdir):
    text = edit(INVENTORY, "address: 198.19.1.2", 'address: "nb a;reboot"')
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'nb a;reboot')}: hosts[0].address: "
        "'nb a;reboot' is not an IPv4 or IPv6 address"]


def test_interface_with_shell_characters_is_refused(workdir):
    text = edit(INVENTORY, "interface: gbe\n      address: 198.18.0.1",
                "interface: eth0;reboot\n      address: 198.18.0.1")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'eth0;reboot')}: pairs[0].a.interface: "
        "'eth0;reboot' is not a valid linux interface name "
        "(at most 15 of letters, digits and _ . @ : -)"]


def test_duplicate_key(workdir):
    text = edit(INVENTORY, "    model: LX-1000 Gigabit\n",
                "    model: LX-1000 Gigabit\n    model: LX-2000\n")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'model: LX-2000')}: adapters[0]: duplicate key 'model'"]


def test_duplicate_host_names(workdir):
    text = edit(INVENTORY, "name: nb-b", "name: nb-a")
    # Both problems are reported in one go: the duplicate, and the pair's now-unknown host.
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'name: nb-a', 2)}: hosts[1].name: "
        "duplicate name 'nb-a' (also hosts[0])",
        f"inventory.yaml:{line_of(text, 'host: nb-b')}: pairs[0].b.host: "
        "unknown host 'nb-b' (hosts: nb-a)"]


def test_duplicate_pair_names(workdir):
    second = INVENTORY[INVENTORY.index("  - name: gbe"):].replace("pairs:\n", "")
    text = INVENTORY + second
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'name: gbe', 2)}: pairs[1].name: "
        "duplicate name 'gbe' (also pairs[0])"]


def test_invalid_yaml(workdir):
    text = edit(INVENTORY, "  - id: lab-gbe\n", "  - id: lab-gbe\n   bad: indent\n")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'bad: indent')}: not valid YAML: "
        "expected <block end>, but found '<block mapping start>'"]


def test_tab_indentation(workdir):
    text = edit(INVENTORY, "    model: LX-1000 Gigabit\n", "\tmodel: LX-1000 Gigabit\n")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, chr(9) + 'model')}: not valid YAML: "
        "found character '\\t' that cannot start any token"]


def test_yaml_tags_are_not_constructed(workdir):
    # safe loading: an object tag is an error with a line, not a Python object or a crash
    text = edit(INVENTORY, "vendor: nicbench lab", "vendor: !!python/object:os.system x")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'python/object')}: not valid YAML: could not determine "
        "a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"]


def test_non_scalar_key_names_file_and_line(workdir):
    text = edit(INVENTORY, "    driver: {name: veth}\n", "    driver: {name: veth}\n    [a, b]: 1\n")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, '[a, b]')}: keys and values here must be plain scalars"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(workdir, text):
    assert lines_of(inventory_error(text)) == ["inventory.yaml: file is empty"]


def test_top_level_not_a_mapping(workdir):
    assert lines_of(inventory_error("- nb-a\n- nb-b\n")) == [
        "inventory.yaml:1: expected a mapping of keys at the top level"]


def test_missing_file(workdir):
    with pytest.raises(ConfigError) as info:
        load_inventory("nothere.yaml", CATALOG)
    assert str(info.value).startswith("nothere.yaml: file not found")


def test_missing_required_key(workdir):
    text = edit(INVENTORY, "    model: LX-1000 Gigabit\n", "")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, '- id: lab-gbe')}: adapters[0].model: "
        "required key is missing"]


def test_missing_nested_required_key(workdir):
    text = edit(INVENTORY, "    ssh:\n      known_hosts: .lab/known_hosts\nadapters:",
                "    ssh: {port: 22}\nadapters:")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'ssh: {port: 22}')}: hosts[1].ssh.known_hosts: "
        "required key is missing"]


def test_wrong_type(workdir):
    text = edit(INVENTORY, "      known_hosts: .lab/known_hosts\n  - name: nb-b",
                "      known_hosts: .lab/known_hosts\n      port: many\n  - name: nb-b")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'port: many')}: hosts[0].ssh.port: Input should be a "
        "valid integer, unable to parse string as an integer (got 'many')"]


def test_wrong_type_list_expected(workdir):
    text = edit(INVENTORY, "hosts:\n  - name: nb-a", "hosts: nb-a\nxhosts:\n  - name: nb-a")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'hosts: nb-a')}: hosts: Input should be a valid list "
        "(got 'nb-a')",
        f"inventory.yaml:{line_of(text, 'xhosts')}: xhosts: unknown key 'xhosts' "
        "(allowed: format_version, hosts, adapters, pairs)"]


def test_out_of_range_port(workdir):
    text = edit(INVENTORY, "      known_hosts: .lab/known_hosts\n  - name: nb-b",
                "      known_hosts: .lab/known_hosts\n      port: 70000\n  - name: nb-b")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'port: 70000')}: hosts[0].ssh.port: "
        "Input should be less than or equal to 65535 (got 70000)"]


def test_both_sides_on_one_host(workdir):
    text = edit(INVENTORY, "host: nb-b", "host: nb-a")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'host: nb-a', 2)}: pairs[0].b.host: "
        "both sides are on host 'nb-a' (a pair needs two hosts)"]


def test_unknown_adapter_reference(workdir):
    text = edit(INVENTORY, "adapter: lab-gbe", "adapter: lab-x")
    assert lines_of(inventory_error(text)) == [
        f"inventory.yaml:{line_of(text, 'adapter: lab-x')}: pairs[0].adapter: "
        "unknown adapter 'lab-x' (adapters: lab-gbe)"]


def test_several_problems_reported_together(workdir):
    text = edit(edit(INVENTORY, "host: nb-a", "host: nb-c"), "interface: gbe\n      address: 198.18.0.2",
                "interface: eth0`id`\n      address: 198.18.0.2")
    err = inventory_error(text)
    assert isinstance(err, ConfigErrors)
    assert [e.line for e in err.errors] == [line_of(text, "host: nb-c"),
                                           line_of(text, "eth0`id`")]


# -- profiles ------------------------------------------------------------------------
def profile_error(files: dict[str, str], load: str) -> ConfigError:
    for name, text in files.items():
        Path(name).write_text(text)
    with pytest.raises(ConfigError) as info:
        load_profile(load, CATALOG)
    return info.value


def test_good_profile_loads(workdir):
    Path("base.yaml").write_text(PROFILE)
    p = load_profile("base.yaml", CATALOG)
    assert [pt.mtu for pt in p.points] == [1500, 9000]
    assert p.tests[0].params == {"duration_s": 4, "window": "64K"}


def test_unknown_tool(workdir):
    text = edit(PROFILE, "tool: iperf3", "tool: iperf4")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'iperf4')}: tests[0].tool: 'iperf4' is not one of "
        "'iperf2', 'iperf3', 'netpipe', 'ntttcp', 'netio' or 'sockperf'"]


def test_the_tools_are_the_callers_catalog(workdir):
    # config/ does not import the tools: the names and the params check are handed in
    seen = []

    def check_params(test, profile):
        seen.append(test.name)
        return [(("params", "window"), "no windows here")]

    mine = ToolCatalog(names=("iperf3", "netio"), check_params=check_params)
    text = edit(PROFILE, "tool: iperf3", "tool: iperf2")
    Path("p.yaml").write_text(text)
    assert lines_of(_load_error("p.yaml", mine)) == [
        f"p.yaml:{line_of(text, 'iperf2')}: tests[0].tool: 'iperf2' is not one of "
        "'iperf3' or 'netio'"]
    Path("q.yaml").write_text(PROFILE)
    assert lines_of(_load_error("q.yaml", mine)) == [
        f"q.yaml:{line_of(PROFILE, 'window')}: tests[0].params.window: no windows here"]
    assert seen == ["tcp"]


def test_a_stored_profile_reads_back_a_tool_no_longer_known():
    # a run's manifest is validated without a catalog: a tool since removed still reads
    profile = Profile.model_validate({"name": "p", "source": "s", "mtu": [1500],
                                      "tests": [{"name": "t", "tool": "iperf1"}]},
                                     context=STORED)
    assert profile.tests[0].tool == "iperf1"


def _load_error(name: str, tools: ToolCatalog) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_profile(name, tools)
    return info.value


def test_unknown_tool_parameter(workdir):
    # The parameter names come from the tool registry.
    from nicbench.tools.registry import TOOLS

    text = edit(PROFILE, "window: 64K", "windw: 64K")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'windw')}: tests[0].params.windw: iperf3 has no parameter "
        f"'windw' (parameters: {', '.join(TOOLS['iperf3'].params.model_fields)})"]
    assert "window" in TOOLS["iperf3"].params.model_fields


def test_bad_tool_parameter_value(workdir):
    text = edit(PROFILE, "duration_s: 4", "duration_s: 0")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'duration_s: 0')}: tests[0].params.duration_s: "
        "Input should be greater than or equal to 1 at mtu1500"]


def test_shell_characters_in_a_parameter(workdir):
    text = edit(PROFILE, "window: 64K", "window: 64K;reboot")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, '64K;reboot')}: tests[0].params.window: '64K;reboot' is not an "
        "allowed tool argument (numbers or words of letters, digits and _ . : , + / -, "
        "or $name for a points[].vars variable)"]


POINT_VARS = """\
name: vars
source: "Test review, section 2"
points:
  - mtu: 1500
    vars: {win: 64K}
  - mtu: 9000
    vars: {win: 256K}
tests:
  - name: tcp
    tool: iperf3
    params:
      window: $win
"""


def test_point_variable_resolves(workdir):
    Path("p.yaml").write_text(POINT_VARS)
    p = load_profile("p.yaml", CATALOG)
    assert p.tests[0].params["window"] == "$win"
    assert [pt.vars["win"] for pt in p.points] == ["64K", "256K"]


def test_undefined_point_variable(workdir):
    text = edit(POINT_VARS, "  - mtu: 9000\n    vars: {win: 256K}\n", "  - mtu: 9000\n")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'window: $win')}: tests[0].params.window: "
        "uses $win but points[1] (mtu9000) has no vars.win"]


def test_point_variable_value_checked_against_the_tool(workdir):
    text = edit(POINT_VARS, "vars: {win: 256K}", "vars: {win: lots}")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'window: $win')}: tests[0].params.window: "
        "'lots' is not a size (bytes, or a number with K, M or G) at mtu9000"]


def test_extends_child_overrides_parent(workdir):
    Path("base.yaml").write_text(PROFILE)
    Path("child.yaml").write_text("extends: base\nname: child\nrepetitions: 3\n")
    p = load_profile("child.yaml", CATALOG)
    assert (p.name, p.repetitions, p.source) == ("child", 3, "Test review, section 1")
    assert [pt.mtu for pt in p.points] == [1500, 9000]      # inherited
    assert p.file == "child.yaml"


def test_extends_error_in_child_points_into_child(workdir):
    child = "extends: base.yaml\nname: child\nrepetitions: 0\n"
    assert lines_of(profile_error({"base.yaml": PROFILE, "child.yaml": child}, "child.yaml")) == [
        f"child.yaml:{line_of(child, 'repetitions')}: repetitions: "
        "Input should be greater than or equal to 1 (got 0)"]


def test_extends_error_in_parent_points_into_parent(workdir):
    parent = edit(PROFILE, "repetitions: 5", "repetitions: 0")
    child = "extends: base\nname: child\n"
    assert lines_of(profile_error({"base.yaml": parent, "child.yaml": child}, "child.yaml")) == [
        f"base.yaml:{line_of(parent, 'repetitions')}: repetitions: "
        "Input should be greater than or equal to 1 (got 0)"]


def test_extends_child_fixes_parent(workdir):
    Path("base.yaml").write_text(edit(PROFILE, "repetitions: 5", "repetitions: 0"))
    Path("child.yaml").write_text("extends: base\nname: child\nrepetitions: 2\n")
    assert load_profile("child.yaml", CATALOG).repetitions == 2


def test_extends_loop(workdir):
    a = "extends: b\nname: a\n"
    b = "name: b\nsource: x\nextends: a.yaml\n"
    assert lines_of(profile_error({"a.yaml": a, "b.yaml": b}, "a.yaml")) == [
        f"b.yaml:{line_of(b, 'extends')}: extends: extends loop through a.yaml"]


def test_extends_itself(workdir):
    assert lines_of(profile_error({"s.yaml": "extends: s\nname: s\n"}, "s.yaml")) == [
        "s.yaml:1: extends: extends loop through s"]


def test_extends_missing_parent(workdir):
    assert lines_of(profile_error({"s.yaml": "name: s\nextends: gone\n"}, "s.yaml")) == [
        "s.yaml:2: extends: parent profile gone.yaml not found"]


def test_profile_without_points(workdir):
    text = edit(PROFILE, "mtu: [1500, 9000]\n", "")
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        "p.yaml:1: no tuning points: give mtu: [..] or points: [..]"]


# -- the CLI -------------------------------------------------------------------------
def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nicbench.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def test_cli_check_bad_inventory_exits_2_with_one_line(workdir):
    text = edit(INVENTORY, "host: nb-a", "host: nb-c")
    Path("bad.yaml").write_text(text)
    proc = run_cli("check", "-i", "bad.yaml", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stderr == (f"nicbench: error: bad.yaml:{line_of(text, 'nb-c')}: pairs[0].a.host: "
                           "unknown host 'nb-c' (hosts: nb-a, nb-b)\n")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_cli_check_reports_every_problem_of_a_file(workdir):
    text = edit(INVENTORY, "name: nb-b", "name: nb-a")
    Path("bad.yaml").write_text(text)
    proc = run_cli("check", "-i", "bad.yaml", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"nicbench: error: bad.yaml:{line_of(text, 'name: nb-a', 2)}: hosts[1].name: "
        "duplicate name 'nb-a' (also hosts[0])",
        f"nicbench: error: bad.yaml:{line_of(text, 'host: nb-b')}: pairs[0].b.host: "
        "unknown host 'nb-b' (hosts: nb-a)"]


def test_cli_check_invalid_yaml(workdir):
    Path("bad.yaml").write_text("hosts: [\n")
    proc = run_cli("check", "-i", "bad.yaml", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stderr.startswith("nicbench: error: bad.yaml:2: not valid YAML: ")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


# -- the README's examples -----------------------------------------------------------------
def test_readme_yaml_examples_load(workdir):
    import re

    readme = Path(__file__).resolve().parents[2] / "README.md"
    # the first and the last: "Reaching real labs" has its own (tests/unit/test_ssh_settings.py)
    blocks = re.findall(r"```yaml\n(.*?)```", readme.read_text(), re.S)
    inventory = blocks[0]
    profile = [b for b in blocks if "\ntests:" in b][-1]   # not the campaign file's
    Path("inventory.yaml").write_text(inventory)
    inv = load_inventory("inventory.yaml", CATALOG)
    assert [p.name for p in inv.pairs] == ["gbe"]
    Path("profile.yaml").write_text(profile)
    prof = load_profile("profile.yaml", CATALOG)
    assert [p.mtu for p in prof.points] == [1500, 3000, 6000, 9000]
    # the commented-out alternative, with its "$win" variable, is valid too
    alt = (profile.replace("# points:", "points:").replace("#   - ", "  - ")
           .replace("mtu: [1500, 3000, 6000, 9000]", "# mtu")
           .replace("window: 256K}", "window: $win}"))
    Path("alt.yaml").write_text(alt)
    assert [p.vars["win"] for p in load_profile("alt.yaml", CATALOG).points] == ["64K", "256K"]


def test_vector_sysctl_values_with_spaces_load(workdir):
    text = edit(PROFILE, "mtu: [1500, 9000]",
                'mtu: [1500, 9000]\nsysctl:\n  net.ipv4.tcp_rmem: "4096 131072 16777216"')
    Path("p.yaml").write_text(text)
    assert load_profile("p.yaml", CATALOG).sysctl == {"net.ipv4.tcp_rmem": "4096 131072 16777216"}


def test_shell_characters_in_a_sysctl_value(workdir):
    text = edit(PROFILE, "mtu: [1500, 9000]",
                'mtu: [1500, 9000]\nsysctl:\n  net.ipv4.tcp_rmem: "4096 $(reboot)"')
    assert lines_of(profile_error({"p.yaml": text}, "p.yaml")) == [
        f"p.yaml:{line_of(text, 'reboot')}: sysctl.net.ipv4.tcp_rmem: '4096 $(reboot)' is not "
        "an allowed sysctl value (numbers or words of letters, digits and _ . : , + / -, up to "
        "8 separated by spaces)"]
