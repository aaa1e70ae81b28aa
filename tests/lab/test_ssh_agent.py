"""Keys from ssh-agent, IdentitiesOnly, passphrase-protected keys and revoked host keys,
against the lab's real sshd.

Each test that needs an agent starts its own ``ssh-agent -D`` on a socket in its temp
directory (and ends it by its pid); the environment's own agent plays no part. Keys are
made with ssh-keygen in the temp directory; only the lab's client key is authorized.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from nicbench.config.loader import load_inventory
from nicbench.tools.registry import CATALOG
from nicbench.errors import AuthError, ConfigError, HostKeyError
from nicbench.platforms.hosts import ssh_target
from nicbench.polling import poll_until
from nicbench.remote.ssh import SshConnection, SshTarget

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _no_ambient_agent(monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


@pytest.fixture
def agent(tmp_path):
    """The socket of a fresh ssh-agent holding nothing."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert poll_until(sock.exists, timeout_s=10, interval_s=0.05), "ssh-agent did not start"
        yield sock
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def ssh_add(sock: Path, key: Path) -> None:
    subprocess.run(["ssh-add", "-q", str(key)], env={"SSH_AUTH_SOCK": str(sock)}, check=True,
                   timeout=30, capture_output=True)


def keygen(path: Path, passphrase: str = "") -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", path.name,
                    "-f", str(path)], check=True, timeout=30)
    return path


def logins(lab, host) -> int:
    log = lab.host_dir(host) / "sshd.log"
    return log.read_text().count("Accepted publickey") if log.exists() else 0


def inventory_target(lab, tmp_path: Path, config: str, **ssh: object) -> SshTarget:
    """An inventory naming host a through an ssh_config written here."""
    a = lab.spec.hosts()[0]
    (tmp_path / "ssh_config").write_text(config.format(address=a.address,
                                                       known=lab.known_hosts))
    extra = "".join(f", {k}: {str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in ssh.items())
    (tmp_path / "inventory.yaml").write_text(
        f"format_version: 1\nhosts:\n  - name: {a.name}\n"
        f"    ssh: {{config: ssh_config, alias: lab-a{extra}}}\n")
    inv = load_inventory(tmp_path / "inventory.yaml", CATALOG)
    return ssh_target(inv, inv.hosts[0])


def run(target: SshTarget, argv: list[str]) -> str:
    conn = SshConnection(target)
    try:
        return conn.run(argv).stdout
    finally:
        conn.close()


AGENT_CONFIG = """\
Host lab-a
    HostName {{address}}
    IdentityFile {key}
    IdentityAgent {sock}
    UserKnownHostsFile {{known}}
"""


def test_agent_keys_log_in_and_identities_only_keeps_them_out(lab, tmp_path, agent):
    a = lab.spec.hosts()[0]
    stranger = keygen(tmp_path / "stranger")          # a key the host does not accept
    ssh_add(agent, lab.client_key)
    config = AGENT_CONFIG.format(key=stranger, sock=agent)
    before = logins(lab, a)
    t = inventory_target(lab, tmp_path, config)
    assert (t.allow_agent, t.identities_only, t.agent_socket) == (True, False, str(agent))
    assert run(t, ["echo", "in"]) == "in\n"        # the file's key was refused, the agent's not
    assert logins(lab, a) == before + 1

    t = inventory_target(lab, tmp_path, config + "    IdentitiesOnly yes\n")
    with pytest.raises(AuthError) as info:
        run(t, ["true"])
    assert str(info.value) == (f"{a.name}: SSH authentication refused for root@{a.address} "
                               f"(check hosts[].ssh.user and key_file (tried: {stranger}))")
    # the inventory's word wins over the config's
    t = inventory_target(lab, tmp_path, config + "    IdentitiesOnly yes\n",
                         identities_only=False)
    assert run(t, ["true"]) == ""
    t = inventory_target(lab, tmp_path, config, allow_agent=False)
    with pytest.raises(AuthError):
        run(t, ["true"])


def test_a_passphrase_key_is_used_through_the_agent_that_holds_it(lab, tmp_path, agent):
    a = lab.spec.hosts()[0]
    locked = tmp_path / "locked"
    shutil.copy(lab.client_key, locked)
    locked.chmod(0o600)
    ssh_add(agent, locked)                         # the agent holds the key in the clear
    subprocess.run(["ssh-keygen", "-q", "-p", "-P", "", "-N", "a long passphrase", "-f",
                    str(locked)], check=True, timeout=30, capture_output=True)
    assert not Path(f"{locked}.pub").exists()      # its public half comes from the file
    config = AGENT_CONFIG.format(key=locked, sock=agent) + "    IdentitiesOnly yes\n"
    before = logins(lab, a)
    assert run(inventory_target(lab, tmp_path, config), ["echo", "unlocked"]) == "unlocked\n"
    assert logins(lab, a) == before + 1

    # without the agent: "needs a passphrase", before any connection
    with pytest.raises(ConfigError) as info:
        run(inventory_target(lab, tmp_path, config, allow_agent=False), ["true"])
    assert str(info.value) == (
        f"{locked}: {a.name}: the key needs a passphrase, which nicbench cannot ask for: "
        f"load it into ssh-agent (ssh-add {locked}) and set hosts[].ssh.allow_agent: true, "
        "or use a key without a passphrase")
    assert logins(lab, a) == before + 1


def test_a_key_the_host_refuses_is_authentication_refused_not_a_passphrase(lab, tmp_path):
    a = lab.spec.hosts()[0]
    stranger = keygen(tmp_path / "stranger")
    t = SshTarget(name=a.name, address=a.address, key_file=str(stranger),
                  known_hosts=str(lab.known_hosts), connect_timeout_s=5)
    with pytest.raises(AuthError) as info:
        run(t, ["true"])
    assert str(info.value) == (f"{a.name}: SSH authentication refused for root@{a.address} "
                               f"(check hosts[].ssh.user and key_file (tried: {stranger}))")


def test_a_revoked_host_key_is_refused_even_when_listed(lab, tmp_path):
    a = lab.spec.hosts()[0]
    kind, b64 = (lab.host_dir(a) / "ssh_host_ed25519_key.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(lab.known_hosts.read_text() + f"@revoked * {kind} {b64}\n")
    before = logins(lab, a)
    t = SshTarget(name=a.name, address=a.address, key_file=str(lab.client_key),
                  known_hosts=str(known), connect_timeout_s=5)
    with pytest.raises(HostKeyError) as info:
        run(t, ["true"])
    revoked_line = len(known.read_text().splitlines())
    assert str(info.value) == (
        f"{a.name}: host key of {a.address} is revoked (@revoked in {known}:{revoked_line}) "
        "(do not trust this host until its keys are checked)")
    assert logins(lab, a) == before


def test_an_inventory_without_a_config_may_allow_the_agent_of_ssh_auth_sock(lab, tmp_path,
                                                                           agent, monkeypatch):
    a = lab.spec.hosts()[0]
    ssh_add(agent, lab.client_key)
    (tmp_path / "inventory.yaml").write_text(
        f"format_version: 1\nhosts:\n  - name: {a.name}\n    address: {a.address}\n"
        f"    ssh: {{known_hosts: {lab.known_hosts}, allow_agent: true}}\n")
    inv = load_inventory(tmp_path / "inventory.yaml", CATALOG)
    t = ssh_target(inv, inv.hosts[0])
    assert (t.key_file, t.key_files, t.allow_agent, t.agent_socket) == (None, (), True, None)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    assert run(t, ["echo", "agent"]) == "agent\n"
    monkeypatch.delenv("SSH_AUTH_SOCK")
    with pytest.raises(ConfigError) as info:
        run(t, ["true"])
    assert str(info.value) == (
        f"{a.name}: no key to log in with: no key_file or IdentityFile is set and no "
        "ssh-agent is set (SSH_AUTH_SOCK is empty) (set hosts[].ssh.key_file, or add a key "
        "to the agent)")
