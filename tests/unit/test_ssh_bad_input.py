"""Local SSH input that is not what it should be: one clear line, exit 2, before any host.

known_hosts files, key files and the agent are checked by ``remote/ssh.py`` before it
dials (``preflight``, which ``HostPool`` runs for every host when it is made), so none of
these tests needs a host: the targets point at 127.0.0.1 port 1, where nothing listens;
a test that got as far as dialling would fail with "Connection refused" instead.

Keys are made with ssh-keygen in the test's temp directory; known_hosts lines are
OpenSSH's own (``ssh-keygen -H`` hashes them).
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
from clihelp import nicbench

from nicbench.errors import ConfigError
from nicbench.remote.known_hosts import KnownHosts
from nicbench.remote.ssh import SshConnection, SshTarget, preflight

NOWHERE = "127.0.0.1"


def keygen(path: Path, *extra: str, passphrase: str = "") -> Path:
    if path.exists():
        return path
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", path.name,
                    "-f", str(path), *extra], check=True, timeout=30)
    return path


def pub(path: Path) -> tuple[str, str]:
    kind, b64 = Path(f"{path}.pub").read_text().split()[:2]
    return kind, b64


@pytest.fixture
def keys(tmp_path, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    d = tmp_path / "keys"
    d.mkdir()
    return d


def target(tmp_path: Path, **kw) -> SshTarget:
    kw.setdefault("key_file", str(keygen(tmp_path / "keys" / "plain")))
    kw.setdefault("known_hosts", str(tmp_path / "known_hosts"))
    return SshTarget(name="nb-a", address=NOWHERE, port=1, connect_timeout_s=2, **kw)


def refused(t: SshTarget) -> str:
    """The ConfigError a connection attempt raises (and preflight raises the same)."""
    with pytest.raises(ConfigError) as before:
        preflight(t)
    c = SshConnection(t)
    try:
        with pytest.raises(ConfigError) as info:
            c.run(["true"])
    finally:
        c.close()
    assert str(before.value) == str(info.value)
    assert "\n" not in str(info.value)
    return str(info.value)


# -- known_hosts ----------------------------------------------------------------------------

def test_known_hosts_that_is_a_directory(tmp_path, keys):
    (tmp_path / "known_hosts").mkdir()
    assert refused(target(tmp_path)) == (
        f"{tmp_path}/known_hosts: nb-a: known_hosts is a directory, not a file (name the file "
        f"itself, e.g. {tmp_path}/known_hosts/known_hosts)")


def test_binary_known_hosts(tmp_path, keys):
    (tmp_path / "known_hosts").write_bytes(bytes(range(256)))
    assert refused(target(tmp_path)) == (
        f"{tmp_path}/known_hosts: nb-a: binary data, not a known_hosts file (lines of 'host "
        "key-type base64-key'; check hosts[].ssh.known_hosts)")


def test_a_private_key_given_as_known_hosts(tmp_path, keys):
    key = keygen(keys / "other")
    (tmp_path / "known_hosts").write_text(key.read_text())
    assert refused(target(tmp_path)) == (
        f"{tmp_path}/known_hosts:1: nb-a: the key of '-----BEGIN' is not base64 (fix or "
        "delete the line)")


@pytest.mark.parametrize("line, message", [
    ("198.19.81.2 ssh-ed25519", "not a known_hosts line ('198.19.81.2 ssh-ed25519'): expected "
                                "'host key-type base64-key' (fix or delete the line)"),
    ("198.19.81.2 ssh-rsa {ed25519}", "the key of '198.19.81.2' is not a ssh-rsa key (fix or "
                                      "delete the line)"),
    ("198.19.81.2 ssh-ed25519 {ed25519}xx", "the key of '198.19.81.2' is not base64 (fix or "
                                            "delete the line)"),
    ("@trusted 198.19.81.2 ssh-ed25519 {ed25519}", "unknown marker '@trusted' (known: "
                                                   "@revoked, @cert-authority)"),
])
def test_malformed_known_hosts_line_is_named_by_number(tmp_path, keys, line, message):
    _, b64 = pub(keygen(keys / "host"))
    (tmp_path / "known_hosts").write_text(
        f"# comment\n\n198.19.81.9 ssh-ed25519 {b64}\n" + line.format(ed25519=b64) + "\n")
    assert refused(target(tmp_path)) == f"{tmp_path}/known_hosts:4: nb-a: {message}"


def test_a_jump_hosts_known_hosts_is_checked_too(tmp_path, keys):
    (tmp_path / "jump_known_hosts").write_bytes(b"\x00" * 10)
    good = tmp_path / "known_hosts"
    good.write_text("")
    jump = target(tmp_path, known_hosts=str(tmp_path / "jump_known_hosts"),
                  label="jump host j (root@127.0.0.1:1)")
    assert refused(target(tmp_path, jumps=(jump,))).startswith(
        f"{tmp_path}/jump_known_hosts: nb-a: binary data")


# -- keys -------------------------------------------------------------------------------------

def test_a_key_that_needs_a_passphrase(tmp_path, keys):
    key = keygen(keys / "locked", passphrase="s3cret phrase")
    assert refused(target(tmp_path, key_file=str(key))) == (
        f"{key}: nb-a: the key needs a passphrase, which nicbench cannot ask for: load it "
        f"into ssh-agent (ssh-add {key}) and set hosts[].ssh.allow_agent: true, or use a key "
        "without a passphrase")


def test_a_pem_rsa_key_that_needs_a_passphrase(tmp_path, keys):
    key = keys / "rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "passphrase1",
                    "-f", str(key)], check=True, timeout=60)
    assert "the key needs a passphrase" in refused(target(tmp_path, key_file=str(key)))


def test_passphrase_key_with_the_agent_allowed_but_none_running(tmp_path, keys, monkeypatch):
    key = keygen(keys / "locked", passphrase="passphrase1")
    assert refused(target(tmp_path, key_file=str(key), allow_agent=True)) == (
        f"{key}: nb-a: the key needs a passphrase, which nicbench cannot ask for: no "
        f"ssh-agent is set (SSH_AUTH_SOCK is empty): start one and ssh-add {key}")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "no-agent.sock"))
    assert refused(target(tmp_path, key_file=str(key), allow_agent=True)) == (
        f"{key}: nb-a: the key needs a passphrase, which nicbench cannot ask for: the "
        f"ssh-agent at {tmp_path}/no-agent.sock cannot be used (No such file or directory): "
        f"start it and ssh-add {key}")


@pytest.mark.parametrize("make, message", [
    (lambda d: Path(f"{keygen(d / 'k')}.pub"),
     "not a private key nicbench can read (ed25519, ecdsa or rsa, OpenSSH or PEM format) "
     "(that is a public key: name the private one, without .pub)"),
    (lambda d: d / "absent", "key file not found (check hosts[].ssh.key_file)"),
    (lambda d: d, "key file is a directory (name the private key file itself)"),
])
def test_key_files_that_are_not_keys(tmp_path, keys, make, message):
    path = make(keys)
    assert refused(target(tmp_path, key_file=str(path))) == f"{path}: nb-a: {message}"


def test_identity_files_of_an_ssh_config_that_do_not_exist_are_skipped_as_ssh_does(tmp_path,
                                                                                  keys):
    plain = keygen(keys / "plain")
    t = target(tmp_path, key_file=None, key_files=(str(keys / "absent"), str(plain)))
    (tmp_path / "known_hosts").write_text("")
    preflight(t)        # no error: the missing one is skipped
    assert refused(target(tmp_path, key_file=None, key_files=(str(keys / "absent"),))) == (
        f"nb-a: no key to log in with: none of {keys}/absent exists and ssh-agent is not "
        "allowed (hosts[].ssh.allow_agent) (set hosts[].ssh.key_file, or add a key to the "
        "agent)")


# -- the command line -------------------------------------------------------------------------

INVENTORY = """\
format_version: 1
hosts:
  - name: nb-a
    address: 127.0.0.1
    ssh: {{port: 1, key_file: {key}, known_hosts: {known}, connect_timeout_s: 2}}
  - name: nb-b
    address: 127.0.0.1
    ssh: {{port: 1, key_file: {key}, known_hosts: {known}, connect_timeout_s: 2}}
adapters:
  - {{id: x, vendor: v, model: m, driver: {{name: d}}}}
pairs:
  - {{name: p, adapter: x, a: {{host: nb-a, interface: gbe, address: 198.18.0.1}},
      b: {{host: nb-b, interface: gbe, address: 198.18.0.2}}}}
"""


@pytest.mark.parametrize("case", ["binary known_hosts", "directory known_hosts",
                                  "passphrase key"])
@pytest.mark.parametrize("command", ["check", "run"])
def test_the_command_line_says_it_in_one_line_and_exits_2(tmp_path, keys, case, command):
    key = keygen(keys / "k", passphrase="passphrase1" if case == "passphrase key" else "")
    known = tmp_path / "known_hosts"
    if case == "binary known_hosts":
        known.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(200))
    elif case == "directory known_hosts":
        known.mkdir()
    (tmp_path / "inventory.yaml").write_text(INVENTORY.format(key=key, known=known))
    args = ["check", "-i", "inventory.yaml"] if command == "check" else \
        ["run", str(Path(__file__).resolve().parents[2] / "profiles" / "quick.yaml"),
         "-i", "inventory.yaml", "--out", str(tmp_path / "out")]
    proc = nicbench(*args, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nicbench: error: "), proc.stderr
    expected = {"binary known_hosts": f"{known}: nb-a: binary data, not a known_hosts file",
                "directory known_hosts": f"{known}: nb-a: known_hosts is a directory",
                "passphrase key": f"{key}: nb-a: the key needs a passphrase"}[case]
    assert lines[0].startswith(f"nicbench: error: {expected}")
    assert "Connection refused" not in proc.stdout + proc.stderr


# -- known_hosts matching, as OpenSSH matches ---------------------------------------------------

def test_known_hosts_matching(tmp_path):
    k1, k2 = (keygen(tmp_path / n) for n in ("k1", "k2"))
    (t1, b1), (t2, b2) = pub(k1), pub(k2)
    blob1, blob2 = base64.b64decode(b1), base64.b64decode(b2)
    path = tmp_path / "known_hosts"
    path.write_text(f"198.19.81.2 {t1} {b1}\n"
                    f"[198.19.81.3]:2222 {t1} {b1}\n"
                    f"*.lab.test,!bad.lab.test {t1} {b1}\n"
                    f"hashed.lab {t2} {b2}\n"
                    f"@cert-authority *.ca.test {t2} {b2}\n"
                    f"198.19.81.4 sk-ssh-ed25519@openssh.com {_sk_blob_b64()}\n")
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(path)], check=True, timeout=30,
                   capture_output=True)
    assert "hashed.lab" not in path.read_text()          # OpenSSH hashed every name
    known = KnownHosts([str(path)], "nb-a")
    assert known.verdict("198.19.81.2", t1, blob1) == "known"
    assert known.verdict("198.19.81.2", t2, blob2) == "different"
    assert known.verdict("[198.19.81.3]:2222", t1, blob1) == "known"
    assert known.verdict("198.19.81.3", t1, blob1) == "unknown"        # port 22 is another
    assert known.verdict("hashed.lab", t2, blob2) == "known"
    assert known.verdict("198.19.81.9", t1, blob1) == "unknown"
    assert known.verdict("x.ca.test", t2, blob2) == "unknown"          # CA lines: no trust
    # a host recorded only with a key type nicbench cannot use is known, so never new
    assert known.verdict("198.19.81.4", t1, blob1) == "different"
    # wildcards and negation (written after hashing: ssh-keygen -H skips patterns)
    with open(path, "a") as fh:
        fh.write(f"*.lab.test,!bad.lab.test {t1} {b1}\n")
    known = KnownHosts([str(path)], "nb-a")
    assert known.verdict("a.lab.test", t1, blob1) == "known"
    assert known.verdict("bad.lab.test", t1, blob1) == "unknown"
    with open(path, "a") as fh:
        fh.write(f"@revoked * {t1} {b1}\n")
    known = KnownHosts([str(path)], "nb-a")
    assert known.verdict("198.19.81.2", t1, blob1) == "revoked"
    assert known.verdict("hashed.lab", t2, blob2) == "known"


def _sk_blob_b64() -> str:
    """A well-formed public blob of a FIDO key type (which paramiko cannot use)."""
    kind = b"sk-ssh-ed25519@openssh.com"
    body = len(kind).to_bytes(4, "big") + kind + (32).to_bytes(4, "big") + bytes(32) + \
        (15).to_bytes(4, "big") + b"ssh:nicbench.te"
    return base64.b64encode(body).decode()
