"""The keys one SSH hop logs in with: identity files and ssh-agent, in OpenSSH's order.

- Identity files come first, in the order given (the inventory's ``key_file``, else the
  ssh_config's ``IdentityFile`` lines). A file the ssh_config names that does not exist is
  skipped, as ssh skips it; one the inventory names must exist.
- A file that needs a passphrase is used through ssh-agent when the agent holds that key
  (as ssh does). nicbench never asks for a passphrase: otherwise the file is a
  ``ConfigError`` saying so (exit 2), never "authentication refused".
- The agent's other keys follow, unless ``IdentitiesOnly``.

Every problem with a local file or the agent is found here, before any host is contacted
when called from ``preflight``. Errors of paramiko's key loaders are translated here.
"""

from __future__ import annotations

import base64
import binascii
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.agent import AgentKey, AgentSSH

from nicbench.errors import ConfigError
from nicbench.textfile import TextFileError, open_regular

KEY_CLASSES: tuple[type[paramiko.PKey], ...] = (paramiko.Ed25519Key, paramiko.ECDSAKey,
                                                paramiko.RSAKey)
MAX_KEY_BYTES = 1024 * 1024
OPENSSH_MAGIC = b"openssh-key-v1\0"


@dataclass
class Identity:
    key: paramiko.PKey
    source: str                 # "/path/id_ed25519", "/path/id (via ssh-agent)", "ssh-agent"


@dataclass
class KeyFile:
    path: str
    key: paramiko.PKey | None   # None: the file needs a passphrase
    public_blob: bytes | None   # the public half, when it can be known


def _bad(host: str, path: str, message: str) -> ConfigError:
    return ConfigError(message, file=path, key=host)


def load_key_file(path: str, host: str, *, required: bool) -> KeyFile | None:
    """The key in ``path``; None if it does not exist and is not ``required``."""
    p = Path(path)
    try:
        # a regular file only: a FIFO would block, /dev/zero never end
        with open_regular(p) as fh:
            data = fh.read(MAX_KEY_BYTES + 1)
    except FileNotFoundError:
        if required:
            raise _bad(host, path, "key file not found (check hosts[].ssh.key_file)") from None
        return None
    except TextFileError as exc:
        if exc.message.startswith("a directory"):
            raise _bad(host, path, "key file is a directory (name the private key file "
                                   "itself)") from None
        raise _bad(host, path, f"key file: {exc.message}") from None
    except OSError as exc:
        raise _bad(host, path, f"cannot read the key file: {exc.strerror or exc} (check its "
                               "permissions)") from exc
    if len(data) > MAX_KEY_BYTES:
        raise _bad(host, path, "not a private key (larger than 1 MB)")
    encrypted = False
    for cls in KEY_CLASSES:
        try:
            return KeyFile(path, cls.from_private_key_file(str(p)), None)
        except paramiko.PasswordRequiredException:
            encrypted = True
            break
        except (paramiko.SSHException, ValueError, TypeError, IndexError, UnicodeError):
            continue     # another key type, or not a key at all: try the next reader
    if not encrypted:
        public_hint = " (that is a public key: name the private one, without .pub)" \
            if data.lstrip().startswith((b"ssh-", b"ecdsa-")) else ""
        raise _bad(host, path, "not a private key nicbench can read (ed25519, ecdsa or rsa, "
                               f"OpenSSH or PEM format){public_hint}")
    return KeyFile(path, None, _public_blob(p, data))


def _public_blob(path: Path, data: bytes) -> bytes | None:
    """The public half of a key whose private half is encrypted: from ``path.pub``, else
    from the unencrypted header of an OpenSSH-format key."""
    try:
        fields = Path(str(path) + ".pub").read_text(encoding="ascii").split()
        return base64.b64decode(fields[1], validate=True)
    except (OSError, UnicodeError, IndexError, binascii.Error, ValueError):
        pass
    try:
        body = b"".join(line for line in data.strip().splitlines()[1:-1])
        raw = base64.b64decode(body)
        if not raw.startswith(OPENSSH_MAGIC):
            return None
        msg = paramiko.Message(raw[len(OPENSSH_MAGIC):])
        msg.get_string()          # cipher
        msg.get_string()          # kdf
        msg.get_string()          # kdf options
        if msg.get_int() < 1:
            return None
        return msg.get_binary()
    except (binascii.Error, ValueError, IndexError, TypeError):
        return None


class Agent(AgentSSH):
    """A connection to one ssh-agent socket, with a timeout on every exchange.

    paramiko's ``Agent`` always dials ``$SSH_AUTH_SOCK`` without a timeout; its base class
    takes any connected socket through ``_connect`` (not in the type stubs)."""

    def __init__(self, path: str, timeout_s: float):
        super().__init__()
        self.path = path
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout_s)
        try:
            sock.connect(path)
            self._connect(sock)      # type: ignore[attr-defined]
        except BaseException:
            sock.close()
            raise

    def close(self) -> None:
        self._close()                # type: ignore[attr-defined]


@dataclass
class Agents:
    """The agents one connection attempt talks to, opened on first use, closed together.
    A socket that is not there or does not answer counts as an agent without keys (ssh
    goes on without it too); ``problems`` says why, for the messages that need it."""

    timeout_s: float
    opened: dict[str, Agent | None] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def keys(self, path: str | None) -> tuple[AgentKey, ...]:
        if not path:
            return ()
        if path not in self.opened:
            try:
                self.opened[path] = Agent(path, self.timeout_s)
            except (OSError, paramiko.SSHException, EOFError) as exc:
                self.opened[path] = None
                self.problems[path] = getattr(exc, "strerror", None) or str(exc) or \
                    type(exc).__name__
        agent = self.opened[path]
        return tuple(agent.get_keys()) if agent is not None else ()

    def close(self) -> None:
        for agent in self.opened.values():
            if agent is not None:
                agent.close()
        self.opened.clear()


def agent_socket(configured: str | None) -> str | None:
    """The agent socket: ssh_config's IdentityAgent if given, else ``$SSH_AUTH_SOCK``."""
    if configured in (None, "SSH_AUTH_SOCK", "$SSH_AUTH_SOCK"):
        return os.environ.get("SSH_AUTH_SOCK") or None
    return os.path.expanduser(os.path.expandvars(configured or ""))


def identities(*, host: str, label: str, key_files: tuple[str, ...], required: tuple[str, ...],
               allow_agent: bool, agent_path: str | None, identities_only: bool,
               agents: Agents) -> list[Identity]:
    """The keys to offer, in order. ``required`` are the files that must exist (the
    inventory's); ``label`` names the hop in messages ("" for the host itself)."""
    where = f"{label}: " if label else ""
    agent_keys = agents.keys(agent_path) if allow_agent else ()
    by_blob = {k.asbytes(): k for k in agent_keys}
    out: list[Identity] = []
    used: set[bytes] = set()
    for path in key_files:
        kf = load_key_file(path, host, required=path in required)
        if kf is None:
            continue
        if kf.key is not None:
            out.append(Identity(kf.key, path))
            used.add(kf.key.asbytes())
            continue
        in_agent = by_blob.get(kf.public_blob) if kf.public_blob else None
        if in_agent is None:
            raise ConfigError(
                f"{where}the key needs a passphrase, which nicbench cannot ask for: "
                + _passphrase_hint(path, allow_agent, agent_path, agents),
                file=path, key=host)
        out.append(Identity(in_agent, f"{path} (via ssh-agent)"))
        used.add(in_agent.asbytes())
    if not identities_only:
        out += [Identity(k, "ssh-agent") for k in agent_keys if k.asbytes() not in used]
    if not out:
        raise ConfigError(f"{where}no key to log in with: "
                          + _no_key_hint(key_files, allow_agent, agent_path, agents,
                                         identities_only), key=host)
    return out


def _passphrase_hint(path: str, allow_agent: bool, agent_path: str | None,
                     agents: Agents) -> str:
    if not allow_agent:
        return (f"load it into ssh-agent (ssh-add {path}) and set hosts[].ssh.allow_agent: "
                "true, or use a key without a passphrase")
    if not agent_path:
        return f"no ssh-agent is set (SSH_AUTH_SOCK is empty): start one and ssh-add {path}"
    if agent_path in agents.problems:
        return (f"the ssh-agent at {agent_path} cannot be used "
                f"({agents.problems[agent_path]}): start it and ssh-add {path}")
    return f"the ssh-agent at {agent_path} does not hold it: ssh-add {path}"


def _no_key_hint(key_files: tuple[str, ...], allow_agent: bool, agent_path: str | None,
                 agents: Agents, identities_only: bool) -> str:
    if key_files:
        listed = "none of " + ", ".join(key_files) + " exists"
    else:
        listed = "no key_file or IdentityFile is set"
    if not allow_agent:
        agent = "ssh-agent is not allowed (hosts[].ssh.allow_agent)"
    elif identities_only:
        agent = "IdentitiesOnly keeps the agent's other keys out"
    elif not agent_path:
        agent = "no ssh-agent is set (SSH_AUTH_SOCK is empty)"
    elif agent_path in agents.problems:
        agent = f"the ssh-agent at {agent_path} cannot be used ({agents.problems[agent_path]})"
    else:
        agent = f"the ssh-agent at {agent_path} holds no keys"
    return f"{listed} and {agent} (set hosts[].ssh.key_file, or add a key to the agent)"
