"""An inventory host's SSH settings, resolved against an OpenSSH client config, into the
:class:`~nicbench.remote.ssh.SshTarget` to dial (jump hosts included).

What is read from the config (ssh_config(5), through paramiko's ``SSHConfig``, which
applies ``Host`` and ``Match`` blocks and expands ``~`` and ``%`` tokens as ssh does):
``HostName``, ``User``, ``Port``, ``IdentityFile`` (several), ``IdentitiesOnly``,
``IdentityAgent``, ``UserKnownHostsFile``, ``HostKeyAlias``, ``ConnectTimeout``,
``ProxyJump`` and ``Include`` (which paramiko does not follow, so it is expanded here).
``ProxyCommand`` is refused rather than ignored: ignoring it would connect some other way
than the user's ssh does. ``StrictHostKeyChecking`` is ignored: host keys are always
verified (``--trust-new-host-keys`` is the only way to record a new one).

Precedence: what the inventory says explicitly, then the config, then nicbench's defaults
(user root, port 22, 10 s per hop). For a jump host (``ProxyJump``, in the inventory or
the config): ``user@`` and ``:port`` written in the jump, then its own entry in the same
config, then ssh's defaults (your login name, port 22); the inventory's ``known_hosts``,
``allow_agent``, ``identities_only`` and ``connect_timeout_s`` apply to every hop, and its
``key_file`` to a jump host that names no ``IdentityFile``. As with ssh, the first jump
host's own ``ProxyJump`` is followed; the others' are not.

Nothing here touches the network, but paramiko's lookup does what ssh does: a
``CanonicalizeHostname`` or ``Match exec`` in the file is carried out.
"""

from __future__ import annotations

import getpass
import glob
import io
import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import paramiko

from nicbench.config.fields import USER_RE
from nicbench.textfile import TextFileError, open_regular
from nicbench.config.jump import JumpSpec, is_host, parse_proxy_jump
from nicbench.errors import ConfigError
from nicbench.remote.ssh import MAX_HOPS, SshTarget

DEFAULT_USER = "root"
DEFAULT_PORT = 22
DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 300.0
MAX_INCLUDE_DEPTH = 16          # as OpenSSH's READCONF_MAX_DEPTH
MAX_CONFIG_BYTES = 1024 * 1024
UNMATCHED = "nicbench-no-such-host.invalid"   # looked up to tell an alias from the defaults


@dataclass(frozen=True)
class HostSettings:
    """What the inventory says about reaching one host; None means "not said"."""

    name: str
    address: str | None = None
    alias: str | None = None
    config: str | None = None
    port: int | None = None
    user: str | None = None
    key_file: str | None = None
    known_hosts: str | None = None
    proxy_jump: str | None = None
    allow_agent: bool | None = None
    identities_only: bool | None = None
    connect_timeout_s: float | None = None
    shell: str = "posix"


class Config:
    """One ssh_config file (with its Includes), looked up as ssh would."""

    def __init__(self, path: str, host: str):
        self.path = path
        self.host = host
        text = "\n".join(_read_with_includes(Path(path), host, path, 0))
        self.ssh = paramiko.SSHConfig()
        try:
            self.ssh.parse(io.StringIO(text))
        except (paramiko.SSHException, ValueError) as exc:
            raise self.error(f"not an ssh_config file: {exc}") from exc

    def error(self, message: str) -> ConfigError:
        return ConfigError(message, file=self.path, key=self.host)

    def lookup(self, name: str) -> dict:
        try:
            return dict(self.ssh.lookup(name))
        except (paramiko.SSHException, ValueError, TypeError, ImportError, OSError) as exc:
            raise self.error(f"looking up {name!r} failed: {exc}") from exc

    def matches(self, name: str, options: dict) -> bool:
        """Whether some Host or Match block other than the defaults applies to ``name``."""
        plain = self.lookup(UNMATCHED)
        plain["hostname"] = name
        return options != plain


def _read_with_includes(path: Path, host: str, top: str, depth: int) -> list[str]:
    if depth > MAX_INCLUDE_DEPTH:
        raise ConfigError(f"Include nested deeper than {MAX_INCLUDE_DEPTH} (a loop?)",
                          file=top, key=host)
    text = _read_text(path, host)
    out: list[str] = []
    header: str | None = None
    for line in text.splitlines():
        words = line.strip().replace("=", " ", 1).split(None, 1)
        keyword = words[0].lower() if words else ""
        if keyword in ("host", "match"):
            header = line
        if keyword != "include" or len(words) < 2:
            out.append(line)
            continue
        try:
            names = shlex.split(words[1])
        except ValueError as exc:
            raise ConfigError(f"Include {words[1]!r}: {exc}", file=str(path), key=host) from exc
        for name in names:
            # As ssh: relative to ~/.ssh, every match of a glob, in order; none is no error.
            pattern = os.path.expanduser(name)
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.expanduser("~/.ssh"), pattern)
            for included in sorted(glob.glob(pattern)):
                out += _read_with_includes(Path(included), host, top, depth + 1)
        if header is not None:
            out.append(header)      # the rest of the including block stays in that block
    return out


def _read_text(path: Path, host: str) -> str:
    where = str(path)
    try:
        # a regular file only, read bounded: a FIFO would block, /dev/zero never end
        with open_regular(path) as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError("ssh config file not found (check hosts[].ssh.config)", file=where,
                          key=host) from None
    except TextFileError as exc:
        if exc.message.startswith("a directory"):
            raise ConfigError("ssh config is a directory (name the file, e.g. "
                              "~/.ssh/config)", file=where, key=host) from None
        raise ConfigError(f"ssh config: {exc.message}", file=where, key=host) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the ssh config: {exc.strerror or exc}", file=where,
                          key=host) from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError("larger than 1 MB: not an ssh_config file", file=where, key=host)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise ConfigError("binary data, not an ssh_config file", file=where, key=host)
    return text


# -- resolution -------------------------------------------------------------------------------

def resolve(s: HostSettings) -> SshTarget:
    """The SshTarget for one inventory host. A problem in the ssh_config is a ConfigError
    naming that file; one the inventory must fix names no file and has ``key`` set to the
    key under ``hosts[].`` (the caller adds the inventory's name and index)."""
    cfg = Config(s.config, s.name) if s.config else None
    lookup_name = s.alias or s.address
    if lookup_name is None:
        raise ConfigError("an address, or ssh.alias naming a Host of ssh.config, is needed",
                          key="address")
    opts = cfg.lookup(lookup_name) if cfg else {}
    if cfg and s.alias and not cfg.matches(s.alias, opts):
        raise cfg.error(f"ssh.alias {s.alias!r} matches no Host of this file (only its "
                        "defaults): check the spelling, or give hosts[].address")
    address = s.address or _hostname(cfg, opts, lookup_name)
    known_hosts = _known_hosts(s, cfg, opts)
    if not known_hosts:
        where = f", or UserKnownHostsFile for {lookup_name} in {s.config}" if cfg else ""
        raise ConfigError(f"no known_hosts file: set ssh.known_hosts{where} (host keys are "
                          "always verified)", key="ssh.known_hosts")
    target = SshTarget(
        name=s.name, address=address,
        port=s.port or _port(cfg, opts) or DEFAULT_PORT,
        user=s.user or _user(cfg, opts) or DEFAULT_USER,
        key_file=s.key_file,
        known_hosts=known_hosts[0],
        connect_timeout_s=s.connect_timeout_s or _timeout(cfg, opts) or DEFAULT_TIMEOUT_S,
        shell=s.shell,
        key_files=() if s.key_file else tuple(opts.get("identityfile", ())),
        more_known_hosts=tuple(known_hosts[1:]),
        host_key_alias=_host_key_alias(cfg, opts),
        allow_agent=_allow_agent(s, cfg, opts),
        agent_socket=_agent_socket(opts),
        identities_only=_identities_only(s, cfg, opts))
    jumps = _jump_specs(s, cfg, opts)
    if not jumps:
        return target
    hops = _resolve_jumps(s, cfg, jumps, target, seen=(lookup_name,), depth=0)
    if len(hops) >= MAX_HOPS:
        raise ConfigError(f"{len(hops)} jump hosts on the way to {s.name} (at most "
                          f"{MAX_HOPS - 1}): a ProxyJump loop?",
                          file=s.config if cfg else None,
                          key=s.name if cfg else "ssh.proxy_jump")
    return replace(target, jumps=tuple(hops))


def _jump_specs(s: HostSettings, cfg: Config | None, opts: dict) -> list[JumpSpec]:
    if s.proxy_jump is not None:         # the inventory's
        try:
            return parse_proxy_jump(s.proxy_jump)
        except ValueError as exc:
            raise ConfigError(str(exc), key="ssh.proxy_jump") from exc
    if opts.get("proxycommand"):
        assert cfg is not None
        raise cfg.error(f"ProxyCommand ({opts['proxycommand']}) is not supported: use "
                        "ProxyJump, or set hosts[].ssh.proxy_jump")
    if not opts.get("proxyjump"):
        return []
    assert cfg is not None
    try:
        return parse_proxy_jump(opts["proxyjump"])
    except ValueError as exc:
        raise cfg.error(f"ProxyJump: {exc}") from exc


def _resolve_jumps(s: HostSettings, cfg: Config | None, specs: list[JumpSpec],
                   target: SshTarget, seen: tuple[str, ...], depth: int) -> list[SshTarget]:
    """The jump hosts for ``specs``, the first one's own ProxyJump (if any) before it."""
    hops: list[SshTarget] = []
    for i, spec in enumerate(specs):
        if spec.host in seen:
            raise ConfigError(f"ProxyJump loop: {' -> '.join((*seen, spec.host))}",
                              file=s.config if cfg else None,
                              key=s.name if cfg else "ssh.proxy_jump")
        opts = cfg.lookup(spec.host) if cfg else {}
        if i == 0 and depth < MAX_HOPS and opts.get("proxyjump"):
            assert cfg is not None
            try:
                before = parse_proxy_jump(opts["proxyjump"])
            except ValueError as exc:
                raise cfg.error(f"ProxyJump of {spec.host}: {exc}") from exc
            hops += _resolve_jumps(s, cfg, before, target, (*seen, spec.host), depth + 1)
        elif opts.get("proxycommand") and i == 0:
            assert cfg is not None
            raise cfg.error(f"ProxyCommand of jump host {spec.host} is not supported: use "
                            "ProxyJump")
        hops.append(_jump(s, cfg, spec, opts, target))
        if len(hops) >= MAX_HOPS:
            break
    return hops


def _jump(s: HostSettings, cfg: Config | None, spec: JumpSpec, opts: dict,
          target: SshTarget) -> SshTarget:
    address = _hostname(cfg, opts, spec.host) if cfg else spec.host
    port = spec.port or _port(cfg, opts) or DEFAULT_PORT
    user = spec.user or _user(cfg, opts) or getpass.getuser()
    own_keys = tuple(opts.get("identityfile", ()))
    known = ([s.known_hosts] if s.known_hosts else _config_known_hosts(cfg, opts)) or \
        list(target.known_hosts_files)
    return SshTarget(
        name=s.name, address=address, port=port, user=user,
        key_file=None if own_keys else s.key_file,
        known_hosts=known[0], connect_timeout_s=s.connect_timeout_s or _timeout(cfg, opts)
        or DEFAULT_TIMEOUT_S,
        key_files=own_keys, more_known_hosts=tuple(known[1:]),
        host_key_alias=_host_key_alias(cfg, opts),
        allow_agent=_allow_agent(s, cfg, opts), agent_socket=_agent_socket(opts),
        identities_only=_identities_only(s, cfg, opts),
        label=f"jump host {spec.host} ({user}@{address}:{port})" if spec.host != address
        else f"jump host {user}@{address}:{port}")


# -- one option each ----------------------------------------------------------------------------

def _hostname(cfg: Config | None, opts: dict, name: str) -> str:
    value = str(opts.get("hostname") or name)
    if not is_host(value):
        if cfg is None:
            raise ConfigError(f"{value!r} is not a host name or address", key="ssh.proxy_jump")
        raise cfg.error(f"HostName {value!r} (for {name}) is not a host name or address")
    return value


def _port(cfg: Config | None, opts: dict) -> int | None:
    if cfg is None or "port" not in opts:
        return None
    try:
        port = int(opts["port"])
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise cfg.error(f"Port {opts['port']!r} is not 1-65535")
    return port


def _user(cfg: Config | None, opts: dict) -> str | None:
    if cfg is None or "user" not in opts:
        return None
    if not USER_RE.match(opts["user"]):
        raise cfg.error(f"User {opts['user']!r} is not a plain login name")
    return str(opts["user"])


def _timeout(cfg: Config | None, opts: dict) -> float | None:
    if cfg is None or "connecttimeout" not in opts:
        return None
    try:
        value = float(opts["connecttimeout"])
    except ValueError:
        value = 0.0
    if not 0 < value <= MAX_TIMEOUT_S:
        raise cfg.error(f"ConnectTimeout {opts['connecttimeout']!r} is not 1-"
                        f"{MAX_TIMEOUT_S:g} seconds")
    return value


def _host_key_alias(cfg: Config | None, opts: dict) -> str | None:
    value = opts.get("hostkeyalias")
    if cfg is None or not value:
        return None
    if not is_host(value):
        raise cfg.error(f"HostKeyAlias {value!r} is not a host name")
    return str(value)


def _config_known_hosts(cfg: Config | None, opts: dict) -> list[str]:
    value = opts.get("userknownhostsfile")
    if cfg is None or not value or value.strip().lower() == "none":
        return []
    home = os.path.expanduser("~")
    return [os.path.expanduser(p.replace("%d", home).replace("%u", getpass.getuser()))
            for p in shlex.split(value)]


def _known_hosts(s: HostSettings, cfg: Config | None, opts: dict) -> list[str]:
    return [s.known_hosts] if s.known_hosts else _config_known_hosts(cfg, opts)


def _allow_agent(s: HostSettings, cfg: Config | None, opts: dict) -> bool:
    if s.allow_agent is not None:
        return s.allow_agent
    if cfg is None:
        return False     # an inventory without an ssh_config: key files only, as always
    return str(opts.get("identityagent", "")).lower() != "none"


def _agent_socket(opts: dict) -> str | None:
    value = opts.get("identityagent")
    return None if not value or str(value).lower() == "none" else str(value)


def _identities_only(s: HostSettings, cfg: Config | None, opts: dict) -> bool:
    if s.identities_only is not None:
        return s.identities_only
    if cfg is None:
        return False
    return str(opts.get("identitiesonly", "no")).lower() == "yes"
