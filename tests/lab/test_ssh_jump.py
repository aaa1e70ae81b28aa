"""Jump hosts (ProxyJump) against the lab's real sshd: a bastion namespace in front of the
lab's hosts (``tests/lab/bastion.py``), reached the way a user reaches a real lab,
through an ssh_config file written by the test.

The proof that a connection went through the bastion: while a test runs inside
``bastion.only_through(host)``, that host's sshd resets every connection that does not come
from the bastion (a direct connection is shown to fail), and the host itself reports the
client address in ``$SSH_CONNECTION``, which is the bastion's address on its link to the
host. Every address is inside the lab's 198.19.0.0/16; no name is looked up anywhere.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.config.loader import load_inventory
from nicbench.tools.registry import CATALOG
from nicbench.errors import ConnectError, HostKeyError
from bastion import LabBastion
from nicbench.platforms.hosts import ssh_target
from nicbench.polling import poll_until
from nicbench.remote.ssh import SshConnection, SshTarget

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bastion(lab):
    b = LabBastion(lab)
    try:
        b.up()
        yield b
        # Every connection through it was closed: only its sshd listener is left there.
        assert poll_until(lambda: len(namespace_pids(b.name)) == 1, 5, 0.1), \
            f"sessions left open on the bastion: {namespace_pids(b.name)}"
    finally:
        b.down()
    assert b.name not in lab.existing_namespaces()


def namespace_pids(ns: str) -> list[str]:
    return subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                          timeout=10).stdout.split()


@pytest.fixture(autouse=True)
def _no_ambient_agent(monkeypatch):
    # The user's own agent must play no part: these tests log in with the lab's key file.
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def host_key(lab, host) -> tuple[str, str]:
    kind, b64 = (lab.host_dir(host) / "ssh_host_ed25519_key.pub").read_text().split()[:2]
    return kind, b64


def logins(log: Path) -> list[str]:
    """The 'from' address of every accepted login in an sshd log."""
    if not log.exists():
        return []
    return [line.split(" from ")[1].split()[0] for line in log.read_text().splitlines()
            if line.startswith("Accepted publickey")]


def write_files(lab, bastion, tmp_path: Path, *, bastion_key: tuple[str, str] | None = None,
                extra_known: str = "") -> Path:
    """known_hosts (the lab's hosts and the bastion) and an ssh_config naming lab-a and
    lab-b behind lab-bastion; returns the config's path."""
    kind, b64 = bastion_key or bastion.host_key()
    known = tmp_path / "known_hosts"
    known.write_text(lab.known_hosts.read_text() + f"{bastion.address} {kind} {b64}\n"
                     + extra_known)
    a, b = lab.spec.hosts()[:2]
    config = tmp_path / "ssh_config"
    config.write_text(f"""\
# a real lab's ~/.ssh/config, in miniature: the hosts only through the bastion
Host lab-bastion
    HostName {bastion.address}
    User root

Host lab-a
    HostName {a.address}
    ProxyJump lab-bastion

Host lab-b
    HostName {b.address}
    ProxyJump lab-bastion

Host lab-*
    IdentityFile {lab.client_key}
    IdentitiesOnly yes
    IdentityAgent none
    UserKnownHostsFile {known}
    ConnectTimeout 5
""")
    return config


def write_inventory(lab, config: Path, tmp_path: Path, **ssh_extra: str) -> Path:
    a, b = lab.spec.hosts()[:2]
    link = lab.spec.links()[0]
    extra = "".join(f", {k}: {json.dumps(v)}" for k, v in ssh_extra.items())
    inv = tmp_path / "inventory.yaml"
    inv.write_text(f"""\
format_version: 1
hosts:
  - name: {a.name}
    ssh: {{config: {config}, alias: lab-a{extra}}}
  - name: {b.name}
    ssh: {{config: {config}, alias: lab-b{extra}}}
adapters:
  - {{id: lab-{link.adapter.key}, vendor: lab, model: {link.adapter.key}, driver: {{name: veth}}}}
pairs:
  - name: {link.pair_name}
    adapter: lab-{link.adapter.key}
    a: {{host: {a.name}, interface: {link.ifname}, address: {link.address('a')}}}
    b: {{host: {b.name}, interface: {link.ifname}, address: {link.address('b')}}}
""")
    return inv


def target_of(inventory: Path, name: str) -> SshTarget:
    inv = load_inventory(inventory, CATALOG)
    return ssh_target(inv, inv.host(name))


def direct(lab, host) -> SshTarget:
    return SshTarget(name=host.name, address=host.address, key_file=str(lab.client_key),
                     known_hosts=str(lab.known_hosts), connect_timeout_s=5)


def run(target: SshTarget, argv: list[str], **kw) -> str:
    conn = SshConnection(target, **kw)
    try:
        return conn.run(argv).stdout
    finally:
        conn.close()


def test_the_host_is_reached_only_through_the_bastion(lab, bastion, tmp_path):
    b = lab.spec.hosts()[1]
    link = lab.spec.links()[0]
    inv = write_inventory(lab, write_files(lab, bastion, tmp_path), tmp_path)
    t = target_of(inv, b.name)
    assert [(j.address, j.label) for j in t.jumps] == [
        (bastion.address, f"jump host lab-bastion (root@{bastion.address}:22)")]
    with bastion.only_through(b):
        with pytest.raises(ConnectError) as info:
            run(direct(lab, b), ["true"])
        assert str(info.value).startswith(
            f"{b.name}: cannot reach {b.address}:22: Connection refused")
        before = logins(bastion.log)
        out = run(t, ["sh", "-c", 'echo "$SSH_CONNECTION"; ip -br addr show dev "$1"', "x",
                      link.ifname])
    client, _, server, port = out.splitlines()[0].split()
    assert (client, server, port) == (bastion.link_address(b), b.address, "22")
    assert f"{link.address('b')}/24" in out              # and it ran in host b's namespace
    assert logins(lab.host_dir(b) / "sshd.log")[-1] == bastion.link_address(b)
    assert logins(bastion.log)[len(before):] == [bastion.gateway]   # we logged in there
    assert run(direct(lab, b), ["echo", "direct"]) == "direct\n"    # the rule is gone


def test_two_jump_hosts_in_a_row(lab, bastion, tmp_path):
    # controller -> host a -> the bastion (over its link to a) -> host b
    a, b = lab.spec.hosts()[:2]
    kind, b64 = bastion.host_key()
    config = write_files(lab, bastion, tmp_path,
                         extra_known=f"{bastion.link_address(a)} {kind} {b64}\n")
    inv = write_inventory(lab, config, tmp_path,
                          proxy_jump=f"root@{a.address},root@{bastion.link_address(a)}",
                          known_hosts=str(tmp_path / "known_hosts"),
                          key_file=str(lab.client_key))
    t = target_of(inv, b.name)
    assert [j.label for j in t.jumps] == [f"jump host root@{a.address}:22",
                                          f"jump host root@{bastion.link_address(a)}:22"]
    before_a, before_bastion = logins(lab.host_dir(a) / "sshd.log"), logins(bastion.log)
    with bastion.only_through(b):
        out = run(t, ["sh", "-c", 'echo "$SSH_CONNECTION"'])
    assert out.split()[0] == bastion.link_address(b)
    assert logins(lab.host_dir(a) / "sshd.log")[len(before_a):] == [a.gateway]
    assert logins(bastion.log)[len(before_bastion):] == [bastion.link_address(a, "host")]

    # the second jump host's key is checked too, against the name it is reached by
    bad_known = tmp_path / "bad_known_hosts"
    akind, ab64 = host_key(lab, a)
    bad_known.write_text(lab.known_hosts.read_text()
                         + f"{bastion.link_address(a)} {akind} {ab64}\n")
    with pytest.raises(HostKeyError) as info:
        run(replace(t, jumps=tuple(replace(j, known_hosts=str(bad_known)) for j in t.jumps)),
            ["true"])
    assert str(info.value).startswith(
        f"{b.name}: jump host root@{bastion.link_address(a)}:22: host key of "
        f"{bastion.link_address(a)} differs from the one in {bad_known}")


def test_a_wrong_bastion_host_key_is_refused_before_any_login(lab, bastion, tmp_path):
    a, b = lab.spec.hosts()[:2]
    wrong = host_key(lab, a)                     # host a's key, claimed for the bastion
    inv = write_inventory(lab, write_files(lab, bastion, tmp_path, bastion_key=wrong),
                          tmp_path)
    known = tmp_path / "known_hosts"
    recorded = known.read_text()
    before = logins(bastion.log), logins(lab.host_dir(b) / "sshd.log")
    for trust_new_keys in (False, True):         # a different key is never replaced
        with pytest.raises(HostKeyError) as info:
            run(target_of(inv, b.name), ["true"], trust_new_keys=trust_new_keys)
        assert str(info.value) == (
            f"{b.name}: jump host lab-bastion (root@{bastion.address}:22): host key of "
            f"{bastion.address} differs from the one in {known} (if the host was "
            "reinstalled, remove its line from known_hosts and check the new key by hand)")
    assert (logins(bastion.log), logins(lab.host_dir(b) / "sshd.log")) == before
    assert known.read_text() == recorded


def test_an_unknown_bastion_is_recorded_only_when_asked(lab, bastion, tmp_path):
    b = lab.spec.hosts()[1]
    inv = write_inventory(lab, write_files(lab, bastion, tmp_path), tmp_path)
    known = tmp_path / "known_hosts"
    known.write_text(lab.known_hosts.read_text())          # the hosts, not the bastion
    before = logins(bastion.log)
    with pytest.raises(HostKeyError) as info:
        run(target_of(inv, b.name), ["true"])
    assert str(info.value).startswith(
        f"{b.name}: jump host lab-bastion (root@{bastion.address}:22): {bastion.address} is "
        f"not in {known}")
    assert logins(bastion.log) == before
    assert run(target_of(inv, b.name), ["echo", "ok"], trust_new_keys=True) == "ok\n"
    kind, b64 = bastion.host_key()
    assert known.read_text() == lab.known_hosts.read_text() + \
        f"{bastion.address} {kind} {b64}\n"


def test_a_host_the_bastion_cannot_reach_is_its_failure(lab, bastion, tmp_path):
    b = lab.spec.hosts()[1]
    config = write_files(lab, bastion, tmp_path)
    inv = write_inventory(lab, config, tmp_path)
    unused = f"{bastion.link_net}.250"      # in the bastion's range, routed nowhere
    t = replace(target_of(inv, b.name), address=unused)
    with pytest.raises(ConnectError) as info:
        run(t, ["true"])
    message = (f"{b.name}: jump host lab-bastion (root@{bastion.address}:22) cannot connect "
               f"to {unused}:22: Connect failed (is the host up and its address right as the "
               "jump host sees it? does the jump host allow forwarding (AllowTcpForwarding)?)")
    assert str(info.value) == message
    # as the command line says it: that line, and nothing of paramiko's own logging
    config.write_text(config.read_text().replace(f"HostName {b.address}",
                                                 f"HostName {unused}"))
    proc = nicbench("check", "-i", str(inv), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"nicbench: problem: {link_name(lab)}: {message}"]


def link_name(lab) -> str:
    return lab.spec.links()[0].pair_name


def test_nicbench_check_through_the_bastion(lab, bastion, tmp_path):
    a, b = lab.spec.hosts()[:2]
    inv = write_inventory(lab, write_files(lab, bastion, tmp_path), tmp_path)
    before = {h.name: logins(lab.host_dir(h) / "sshd.log") for h in (a, b)}
    with bastion.only_through(a, b):
        proc = nicbench("check", "-i", str(inv), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[-1] == "1 of 1 pairs ready"
    for h in (a, b):
        new = logins(lab.host_dir(h) / "sshd.log")[len(before[h.name]):]
        assert new and set(new) == {bastion.link_address(h)}


def test_a_hop_that_does_not_answer_fails_within_its_connect_timeout(lab, bastion, tmp_path):
    # An unused address on the bastion's own management /24: the bastion's connect waits
    # for ARP that nothing answers; the wait is ours to bound (2 s here), hop by hop.
    b = lab.spec.hosts()[1]
    inv = write_inventory(lab, write_files(lab, bastion, tmp_path), tmp_path,
                          connect_timeout_s="2")
    unused = f"{bastion.mgmt_net}.77"
    t = replace(target_of(inv, b.name), address=unused)
    assert [h.connect_timeout_s for h in t.hops] == [2.0, 2.0]
    t0 = time.monotonic()
    with pytest.raises(ConnectError) as info:
        run(t, ["true"])
    assert time.monotonic() - t0 < 2 + 2
    assert re.match(rf"{b.name}: (jump host lab-bastion \(root@{re.escape(bastion.address)}"
                    rf":22\) cannot connect to {re.escape(unused)}:22: |"
                    rf"jump host lab-bastion \(root@{re.escape(bastion.address)}:22\) got no "
                    rf"answer from {re.escape(unused)}:22 within 2 s)",
                    str(info.value)), str(info.value)
