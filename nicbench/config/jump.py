"""ProxyJump values (``[user@]host[:port],...`` or ``none``): what the inventory's
``ssh.proxy_jump`` and an ssh_config's ``ProxyJump`` say, parsed without touching a
network. Here, below both, so that the inventory checks the value as it loads and
``remote/ssh_config.py`` resolves it, and config/ needs nothing from remote/."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from nicbench.config.fields import HOSTNAME_RE, USER_RE


@dataclass(frozen=True)
class JumpSpec:
    host: str
    user: str | None = None
    port: int | None = None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (f"{self.user}@" if self.user else "") + host + \
            (f":{self.port}" if self.port else "")


_JUMP_RE = re.compile(r"^(?:ssh://)?(?:(?P<user>[^@/\s]+)@)?"
                      r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:@/\[\]\s]+))"
                      r"(?::(?P<port>\d{1,5}))?/?$")


def parse_proxy_jump(text: str) -> list[JumpSpec]:
    """``[user@]host[:port]`` (or ``ssh://[user@]host[:port]``), comma-separated, first
    hop first; ``none`` is no jump host. ValueError says what is wrong."""
    text = text.strip()
    if text.lower() == "none":
        return []
    specs = []
    for part in text.split(","):
        m = _JUMP_RE.match(part.strip())
        host = m and (m.group("v6") or m.group("host"))
        if not m or not host:
            raise ValueError(f"{part.strip()!r} is not a jump host ([user@]host[:port], "
                             "several separated by commas, or none)")
        if not is_host(host):
            raise ValueError(f"{host!r} in ProxyJump is not a host name or address")
        user = m.group("user")
        if user is not None and not USER_RE.match(user):
            raise ValueError(f"{user!r} in ProxyJump is not a user name")
        port = int(m.group("port")) if m.group("port") else None
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"port {port} in ProxyJump is not 1-65535")
        specs.append(JumpSpec(host=host, user=user, port=port))
    return specs


def is_host(text: str) -> bool:
    """A host name or an IP address."""
    if HOSTNAME_RE.match(text):
        return True
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False
