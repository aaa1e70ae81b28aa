"""How an inventory host's SSH settings and its ssh_config become the SshTarget to dial.

Every test writes its own inventory and ssh_config into a temp directory and points HOME
there, so ``~`` and ``%d`` expand into it and nothing of the machine's own ~/.ssh is read.
Nothing here opens a connection: addresses are only strings, all in the lab's range.
"""

from __future__ import annotations

import pytest

from nicbench.config.loader import load_inventory
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConfigError, ConfigErrors
from nicbench.platforms.hosts import ssh_target
from nicbench.config.jump import JumpSpec, parse_proxy_jump

PAIRLESS = """\
format_version: 1
hosts:
  - name: nb-a
{host}
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def inventory(home, host_yaml: str, ssh_config: str | None = None):
    if ssh_config is not None:
        (home / "ssh_config").write_text(ssh_config)
    (home / "inventory.yaml").write_text(PAIRLESS.format(host=host_yaml))
    return load_inventory(home / "inventory.yaml", CATALOG)


def target_of(home, host_yaml: str, ssh_config: str | None = None):
    inv = inventory(home, host_yaml, ssh_config)
    return ssh_target(inv, inv.hosts[0])


def config_error(home, host_yaml: str, ssh_config: str | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        target_of(home, host_yaml, ssh_config)
    return str(info.value)


BASTION_CONFIG = """\
# a real lab's ~/.ssh/config, in miniature
Host lab-bastion
    HostName 198.19.95.2
    User jumper
    Port 2200
    IdentityFile ~/.ssh/bastion_key

Host lab-a lab-b
    IdentityFile ~/.ssh/lab_key
    IdentityFile %d/.ssh/lab_key2
    UserKnownHostsFile ~/.ssh/lab_known_hosts
    ConnectTimeout 7

Host lab-a
    HostName 198.19.81.2
    User bench
    Port 2222
    ProxyJump lab-bastion
"""


def test_without_a_config_the_inventory_is_all_there_is(home):
    t = target_of(home, """\
    address: 198.19.81.2
    ssh: {key_file: keys/id, known_hosts: kh}""")
    assert (t.address, t.port, t.user, t.connect_timeout_s) == ("198.19.81.2", 22, "root", 10.0)
    assert (t.key_file, t.known_hosts) == (str(home / "keys/id"), str(home / "kh"))
    assert (t.key_files, t.more_known_hosts, t.jumps) == ((), (), ())
    assert (t.allow_agent, t.identities_only, t.label) == (False, False, "")


def test_an_alias_takes_hostname_user_port_keys_and_known_hosts_from_the_config(home):
    t = target_of(home, """\
    ssh: {config: ssh_config, alias: lab-a}""", BASTION_CONFIG)
    assert (t.name, t.address, t.port, t.user) == ("nb-a", "198.19.81.2", 2222, "bench")
    assert t.key_file is None
    assert t.key_files == (str(home / ".ssh/lab_key"), str(home / ".ssh/lab_key2"))
    assert t.known_hosts == str(home / ".ssh/lab_known_hosts")
    assert t.connect_timeout_s == 7.0
    assert t.allow_agent is True          # with an ssh_config, the agent as ssh uses it
    assert t.identities_only is False


def test_identity_files_add_up_over_every_matching_block_as_in_ssh(home):
    t = target_of(home, """\
    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}""", """\
Host lab-a
    HostName 198.19.81.2
    IdentityFile ~/one
    User first
Host lab-*
    IdentityFile ~/two
    User second
Host *
    IdentityFile ~/one
""")
    assert t.key_files == (str(home / "one"), str(home / "two"))   # in order, once each
    assert t.user == "first"                                        # first value wins


def test_the_jump_host_is_resolved_through_the_same_config(home):
    t = target_of(home, """\
    ssh: {config: ssh_config, alias: lab-a}""", BASTION_CONFIG)
    [jump] = t.jumps
    assert (jump.name, jump.address, jump.port, jump.user) == ("nb-a", "198.19.95.2", 2200,
                                                               "jumper")
    assert jump.key_files == (str(home / ".ssh/bastion_key"),)
    assert jump.label == "jump host lab-bastion (jumper@198.19.95.2:2200)"
    # the bastion's entry has no UserKnownHostsFile: the host's own known_hosts checks it
    assert jump.known_hosts_files == (str(home / ".ssh/lab_known_hosts"),)
    assert t.hops == (jump, t)


def test_what_the_inventory_writes_wins_over_the_config(home):
    t = target_of(home, """\
    address: 198.19.81.9
    ssh:
      config: ssh_config
      alias: lab-a
      port: 22
      user: root
      key_file: my_key
      known_hosts: my_known_hosts
      connect_timeout_s: 3
      allow_agent: false
      identities_only: true
      proxy_jump: none""", BASTION_CONFIG)
    assert (t.address, t.port, t.user, t.connect_timeout_s) == ("198.19.81.9", 22, "root", 3.0)
    assert (t.key_file, t.key_files) == (str(home / "my_key"), ())
    assert t.known_hosts_files == (str(home / "my_known_hosts"),)
    assert (t.allow_agent, t.identities_only, t.jumps) == (False, True, ())


def test_inventory_proxy_jump_forms_and_what_applies_to_every_hop(home):
    t = target_of(home, """\
    ssh:
      config: ssh_config
      alias: lab-a
      known_hosts: kh
      key_file: k
      connect_timeout_s: 4
      identities_only: true
      proxy_jump: ops@198.19.95.2:2201,ssh://[fd00::1]:2202,lab-bastion""", BASTION_CONFIG)
    a, b, c = t.jumps
    assert (a.user, a.address, a.port) == ("ops", "198.19.95.2", 2201)
    assert (b.user, b.address, b.port) == ("root", "fd00::1", 2202)   # root: who runs this
    assert (c.user, c.address, c.port) == ("jumper", "198.19.95.2", 2200)
    for hop in (a, b, c):
        assert hop.known_hosts_files == (str(home / "kh"),)
        assert (hop.connect_timeout_s, hop.identities_only) == (4.0, True)
    # the inventory's key for jump hosts that name none; their own IdentityFile otherwise
    assert (a.key_file, b.key_file) == (str(home / "k"), str(home / "k"))
    assert (c.key_file, c.key_files) == (None, (str(home / ".ssh/bastion_key"),))


def test_the_first_jump_hosts_own_proxy_jump_is_followed(home):
    t = target_of(home, """\
    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}""", """\
Host lab-a
    HostName 198.19.81.2
    ProxyJump inner,198.19.95.7
Host inner
    HostName 198.19.95.3
    ProxyJump outer
Host outer
    HostName 198.19.95.4
""")
    assert [j.address for j in t.jumps] == ["198.19.95.4", "198.19.95.3", "198.19.95.7"]


def test_include_is_followed_relative_to_dot_ssh_and_keeps_the_including_block(home):
    (home / ".ssh" / "conf.d").mkdir(parents=True)
    (home / ".ssh" / "conf.d" / "lab").write_text(
        "Host lab-a\n    HostName 198.19.81.2\n    Port 2222\n")
    t = target_of(home, """\
    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}""", """\
Host lab-*
    Include conf.d/*
    User bench
""")
    assert (t.address, t.port, t.user) == ("198.19.81.2", 2222, "bench")


@pytest.mark.parametrize("host_yaml, config, message", [
    ("    ssh: {config: ssh_config, alias: lab-x, known_hosts: kh}",
     "Host lab-a\n    HostName 198.19.81.2\nHost *\n    User bench\n",
     "{home}/ssh_config: nb-a: ssh.alias 'lab-x' matches no Host of this file (only its defaults): "
     "check the spelling, or give hosts[].address"),
    ("    ssh: {config: ssh_config, alias: lab-a}",
     "Host lab-a\n    HostName 198.19.81.2\n",
     "inventory.yaml: hosts[0].ssh.known_hosts: no known_hosts file: set ssh.known_hosts, or "
     "UserKnownHostsFile for lab-a in {home}/ssh_config (host keys are always verified)"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    HostName 198.19.81.2\n    ProxyCommand nc %h %p\n",
     "{home}/ssh_config: nb-a: ProxyCommand (nc 198.19.81.2 22) is not supported: use ProxyJump, "
     "or set hosts[].ssh.proxy_jump"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    ProxyJump j1\nHost j1\n    ProxyJump j2\nHost j2\n    ProxyJump j1\n",
     "{home}/ssh_config: nb-a: ProxyJump loop: lab-a -> j1 -> j2 -> j1"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    HostName 198.19.81.2\n    Port twenty-two\n",
     "{home}/ssh_config: nb-a: Port 'twenty-two' is not 1-65535"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    HostName 198.19.81.2;reboot\n",
     "{home}/ssh_config: nb-a: HostName '198.19.81.2;reboot' (for lab-a) is not a host name or "
     "address"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    ProxyJump bad@@host\n",
     "{home}/ssh_config: nb-a: ProxyJump: 'bad@@host' is not a jump host ([user@]host[:port], "
     "several separated by commas, or none)"),
    ("    ssh: {config: ssh_config, alias: lab-a, known_hosts: kh}",
     "Host lab-a\n    HostName\n",
     "{home}/ssh_config: nb-a: not an ssh_config file: Unparsable line HostName"),
])
def test_config_problems_are_one_line_naming_the_file(home, host_yaml, config, message):
    assert config_error(home, host_yaml, config) == message.format(home=home)


def test_the_config_file_itself_must_be_one(home):
    (home / "ssh_config").mkdir()
    assert config_error(home, "    ssh: {config: ssh_config, alias: lab-a}") == \
        f"{home}/ssh_config: nb-a: ssh config is a directory (name the file, e.g. ~/.ssh/config)"
    (home / "ssh_config").rmdir()
    (home / "ssh_config").write_bytes(b"Host a\n\x00\x01\x02\xff")
    assert config_error(home, "    ssh: {config: ssh_config, alias: lab-a}") == \
        f"{home}/ssh_config: nb-a: binary data, not an ssh_config file"
    (home / "ssh_config").unlink()
    assert config_error(home, "    ssh: {config: ssh_config, alias: lab-a}") == \
        f"{home}/ssh_config: nb-a: ssh config file not found (check hosts[].ssh.config)"


@pytest.mark.parametrize("host_yaml, line_needle, message", [
    ("    address: 198.19.81.2\n    ssh: {alias: lab-a, known_hosts: kh}", "alias",
     "hosts[0].ssh.alias: an alias names a Host of an ssh_config file: set ssh.config too "
     "(e.g. ~/.ssh/config)"),
    ("    ssh: {known_hosts: kh}", "- name: nb-a",
     "hosts[0].address: required key is missing (or set ssh.alias to the host's entry in "
     "ssh.config)"),
    ("    address: 198.19.81.2\n    ssh: {known_hosts: kh, proxy_jump: 'a@b@c'}", "proxy_jump",
     "hosts[0].ssh.proxy_jump: 'a@b@c' is not a jump host ([user@]host[:port], several "
     "separated by commas, or none)"),
    ("    address: 198.19.81.2\n    ssh: {known_hosts: kh, proxy_jump: 'x;reboot'}",
     "proxy_jump", "hosts[0].ssh.proxy_jump: 'x;reboot' in ProxyJump is not a host name or "
                   "address"),
])
def test_inventory_mistakes_are_found_when_it_is_loaded(home, host_yaml, line_needle,
                                                         message):
    with pytest.raises(ConfigErrors) as info:
        inventory(home, host_yaml)
    text = PAIRLESS.format(host=host_yaml)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if line_needle in l)
    assert info.value.lines() == [f"inventory.yaml:{line}: {message}"]


@pytest.mark.parametrize("text, specs", [
    ("bastion", [JumpSpec("bastion")]),
    ("ops@bastion:2222", [JumpSpec("bastion", "ops", 2222)]),
    ("ssh://ops@198.19.95.2:22/", [JumpSpec("198.19.95.2", "ops", 22)]),
    ("[fd00::1]:2200,root@j2", [JumpSpec("fd00::1", None, 2200), JumpSpec("j2", "root")]),
    (" a , b ", [JumpSpec("a"), JumpSpec("b")]),
    ("none", []),
    ("NONE", []),
])
def test_proxy_jump_forms(text, specs):
    assert parse_proxy_jump(text) == specs


@pytest.mark.parametrize("text", ["", "a,,b", "user@", "@host", "host:0", "host:70000",
                                  "a b", "[not-v6]", "host:22:33", "us er@host"])
def test_proxy_jump_refuses(text):
    with pytest.raises(ValueError):
        parse_proxy_jump(text)


def test_the_readme_example_resolves_as_it_says(home):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    part = readme.split("### Reaching real labs", 1)[1].split("\n### ", 1)[0]
    inventory_yaml, ssh_config = re.findall(r"```(?:yaml)?\n(.*?)```", part, re.S)[:2]
    (home / ".ssh").mkdir()
    (home / ".ssh" / "config").write_text(ssh_config)
    (home / "inventory.yaml").write_text(inventory_yaml)
    inv = load_inventory(home / "inventory.yaml", CATALOG)
    t = ssh_target(inv, inv.hosts[0])
    assert (t.name, t.address, t.user, t.port) == ("lab-a", "lab-a.bench.example.org", "root", 22)
    assert t.key_files == (str(home / ".ssh/lab_ed25519"),)
    assert t.known_hosts_files == (str(home / ".ssh/known_hosts"),)
    assert t.allow_agent and not t.identities_only
    [jump] = t.jumps
    assert jump.label == "jump host bastion (ops@bastion.example.org:22)"
    assert jump.known_hosts_files == t.known_hosts_files
