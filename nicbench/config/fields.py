"""Strict field types for values that can reach a host's shell or filesystem.

Quoting is always applied when a command is rendered; these patterns are a second wall,
so that a typo or a hostile value (``eth0;reboot``) is refused when the file is loaded,
with its line number, rather than discovered on a host at 3 a.m.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ConfigDict, BaseModel

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LINUX_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,14}$")   # IFNAMSIZ-1
WINDOWS_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _().#-]{0,63}$")
HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9-]{1,63})*$")
PATH_RE = re.compile(r"^[A-Za-z0-9_./~+-][A-Za-z0-9_./~+:\\-]{0,511}$")
USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
SYSCTL_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_-]+)+$")
REGISTRY_NAME_RE = re.compile(r"^[A-Za-z0-9_*]{1,64}$")
ARG_RE = re.compile(r"^[A-Za-z0-9_.:,+/-]{1,64}$")
VAR_REF_RE = re.compile(r"^\$[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")   # "$window": a points[].vars key
SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kKmMgG]?)$")
RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:bit|bps|b)?(?:/s)?$")


def _pattern(regex: re.Pattern, what: str, hint: str):
    def check(value: Any) -> Any:
        if not isinstance(value, str) or not regex.match(value):
            raise ValueError(f"{value!r} is not a valid {what} ({hint})")
        return value
    return check


def _address(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not an address (write it as a string)")
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address") from None


def _host_address(value: Any) -> str:
    if isinstance(value, str) and HOSTNAME_RE.match(value):
        return value
    return _address(value)


def parse_size(value: Any) -> int:
    """``64K`` -> 65536, ``1M`` -> 1048576, ``24576`` -> 24576 (binary prefixes, as the
    tools themselves read them)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    m = SIZE_RE.match(str(value).strip())
    if not m:
        raise ValueError(f"{value!r} is not a size (bytes, or a number with K, M or G)")
    mult = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def parse_rate(value: Any) -> int:
    """``200M`` / ``200mbit`` -> 200000000 bit/s (SI prefixes, as iperf's -b reads them)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a rate")
    if isinstance(value, (int, float)):
        return int(value)
    m = RATE_RE.match(str(value).strip())
    if not m:
        raise ValueError(f"{value!r} is not a rate (bit/s, or a number with K, M or G)")
    mult = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


Name = Annotated[str, AfterValidator(_pattern(NAME_RE, "name", "letters, digits, _ . -"))]
HostAddress = Annotated[str, BeforeValidator(_host_address)]
IpAddress = Annotated[str, BeforeValidator(_address)]
FilePath = Annotated[str, AfterValidator(_pattern(
    PATH_RE, "path", "letters, digits and _ . / ~ + - only; no spaces or shell characters"))]
UserName = Annotated[str, AfterValidator(_pattern(USER_RE, "user name", "a plain login name"))]
SysctlName = Annotated[str, AfterValidator(_pattern(SYSCTL_RE, "sysctl name", "like net.core.rmem_max"))]
RegistryName = Annotated[str, AfterValidator(_pattern(REGISTRY_NAME_RE, "registry value name", "like TcpWindowSize"))]
Size = Annotated[int, BeforeValidator(parse_size)]
Rate = Annotated[int, BeforeValidator(parse_rate)]


def is_linux_ifname(value: str) -> bool:
    return bool(LINUX_IFNAME_RE.match(value))


def is_windows_ifname(value: str) -> bool:
    return bool(WINDOWS_IFNAME_RE.match(value))


def check_arg(value: Any) -> Any:
    """Tool argument values: numbers, or short words without shell characters."""
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and ARG_RE.match(value):
        return value
    raise ValueError(f"{value!r} is not an allowed tool argument "
                     "(numbers or words of letters, digits and _ . : , + / -)")


def check_param(value: Any) -> Any:
    """A test parameter: a tool argument, or ``"$name"`` naming a per-point variable
    (resolved before any command is built; the profile check makes sure it exists)."""
    if isinstance(value, str) and VAR_REF_RE.match(value):
        return value
    try:
        return check_arg(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an allowed tool argument (numbers or words of "
                         "letters, digits and _ . : , + / -, or $name for a points[].vars "
                         "variable)") from None


SYSCTL_VALUE_RE = re.compile(r"^[A-Za-z0-9_.:,+/-]+(?:[ \t]+[A-Za-z0-9_.:,+/-]+){0,7}$")


def check_sysctl_value(value: Any) -> Any:
    """A sysctl value: a tool argument, or a few of them separated by spaces, as the
    vector sysctls read (``net.ipv4.tcp_rmem: "4096 131072 16777216"``)."""
    if isinstance(value, str) and len(value) <= 128 and SYSCTL_VALUE_RE.match(value):
        return value
    try:
        return check_arg(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an allowed sysctl value (numbers or words of "
                         "letters, digits and _ . : , + / -, up to 8 separated by spaces)"
                         ) from None


ToolArg = Annotated[Any, AfterValidator(check_arg)]
SysctlValue = Annotated[Any, AfterValidator(check_sysctl_value)]
ToolParam = Annotated[Any, AfterValidator(check_param)]


class Strict(BaseModel):
    """Unknown keys are errors: a typo in an overnight run must not pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
