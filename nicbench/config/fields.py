"""Strict field types for values that can reach a host's shell or filesystem.

Quoting is always applied when a command is rendered; these patterns are a second wall,
so that a typo or a hostile value (``eth0;reboot``) is refused when the file is loaded,
with its line number, rather than discovered on a host at 3 a.m.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any
from collections.abc import Collection

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationInfo

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LINUX_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,14}$")   # IFNAMSIZ-1
# A Windows adapter: its name (localized defaults too: 'イーサネット', 'Подключение по
# локальной сети', 'Local Area Connection* 2': any letters and digits, space and
# _ ( ) . # * -; it only ever reaches a script as a single-quoted literal, compared
# exactly, never as a wildcard), its ifIndex (digits), or its interface GUID ({...}).
WINDOWS_IFNAME_RE = re.compile(r"^[^\W_][\w ().#*-]{0,255}$")
WINDOWS_IFINDEX_RE = re.compile(r"^[1-9][0-9]{0,9}$")
WINDOWS_GUID_RE = re.compile(r"^\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-"
                             r"[0-9A-Fa-f]{12}\}$")
HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9-]{1,63})*$")
PATH_RE = re.compile(r"^[A-Za-z0-9_./~+-][A-Za-z0-9_./~+:\\-]{0,511}$")
USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
SYSCTL_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_-]+)+$")
# The Tcpip\Parameters values a profile may set (docs/windows.md §4: the reviews' TCP
# window and RFC 1323 options, and the ones Windows ignores since Vista): a value name is
# never a pattern (``*`` would be created literally).
REGISTRY_NAMES = ("TcpWindowSize", "GlobalMaxTcpWindowSize", "Tcp1323Opts",
                  "NumTcbTablePartitions", "MaxHashTableSize")
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


# What a size or a rate in a file may be: a socket buffer or block of 1 byte to 1 GiB
# (netPIPE's largest default block is 8 MB; a 10^12-byte "upper" is a typo), a rate of
# 1 bit/s to 10 Tbit/s.
MAX_SIZE = 1 << 30
MAX_RATE = 10 ** 13


def _no_bool(value: Any) -> Any:
    # YAML 1.1 reads yes/no/on/off/true/false as booleans, and pydantic would then take
    # True as the number 1: "port: yes" must not become port 1.
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a YAML boolean (yes/no/on/off/true/false), "
                         "not a number")
    return value


def _in_range(value: float, low: float, high: float, what: str, shown: str) -> int:
    if not low <= value <= high:
        raise ValueError(f"{shown} is out of range: {what}")
    return int(value)


def parse_size(value: Any) -> int:
    """``64K`` -> 65536, ``1M`` -> 1048576, ``24576`` -> 24576 (binary prefixes, as the
    tools themselves read them); 1 byte to 1G."""
    _no_bool(value)
    what = "a size is 1 byte to 1G"
    if isinstance(value, int):
        return _in_range(value, 1, MAX_SIZE, what, str(value))
    m = SIZE_RE.match(str(value).strip())
    if not m:
        raise ValueError(f"{value!r} is not a size (bytes, or a number with K, M or G)")
    mult = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[m.group(2).lower()]
    return _in_range(float(m.group(1)) * mult, 1, MAX_SIZE, what, repr(value))


def parse_rate(value: Any) -> int:
    """``200M`` / ``200mbit`` -> 200000000 bit/s (SI prefixes, as iperf's -b reads them);
    1 bit/s to 10 Tbit/s."""
    _no_bool(value)
    what = "a rate is 1 bit/s to 10000G"
    if isinstance(value, (int, float)):
        return _in_range(value, 1, MAX_RATE, what, repr(value))   # NaN is in no range
    m = RATE_RE.match(str(value).strip())
    if not m:
        raise ValueError(f"{value!r} is not a rate (bit/s, or a number with K, M or G)")
    mult = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}[m.group(2).lower()]
    return _in_range(float(m.group(1)) * mult, 1, MAX_RATE, what, repr(value))


Name = Annotated[str, AfterValidator(_pattern(NAME_RE, "name", "letters, digits, _ . -"))]


def _label(value: Any, info: ValidationInfo) -> Any:
    return value if stored(info) else _pattern(NAME_RE, "name", "letters, digits, _ . -")(value)


# A point's label names files and results: a Name (a run saved before that rule reads back).
Label = Annotated[str, AfterValidator(_label)]
HostAddress = Annotated[str, BeforeValidator(_host_address)]
IpAddress = Annotated[str, BeforeValidator(_address)]
FilePath = Annotated[str, AfterValidator(_pattern(
    PATH_RE, "path", "letters, digits and _ . / ~ + - only; no spaces or shell characters"))]
UserName = Annotated[str, AfterValidator(_pattern(USER_RE, "user name", "a plain login name"))]
# A profile tunes the network stack: net.* only, plus the few other knobs network tuning
# guides set for throughput (each with its reason). Anything else a profile could set as
# root (kernel.core_pattern runs a program of its choosing) is refused at load.
SYSCTLS_OUTSIDE_NET = {
    "kernel.numa_balancing": "page migration moves a receiver's buffers mid-run "
                             "(tuned's network-latency profile turns it off)",
    "vm.min_free_kbytes": "headroom for atomic allocations on the receive path at high "
                          "packet rates (NIC vendors' tuning guides raise it)",
}


# Validation context of a run's saved profile and inventory (manifest.json): the rules of
# what a file may ask for (these sysctls, these tool names) apply to new runs; a run made
# before a rule existed is still read back.
STORED = {"stored": True}


def stored(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("stored"))


def tools_context(names: Collection[str]) -> dict[str, Any]:
    """The validation context of a file being loaded: the tool names the caller knows
    (``tools/registry.py``'s, handed in: config/ does not import the tools, which import
    this module)."""
    return {"tools": tuple(names)}


def _known_tool(name: str, info: ValidationInfo) -> str:
    known = info.context.get("tools") if info.context else None
    if known is None:
        return name   # a stored run, or a model built in code: no catalog to check against
    if name not in known:
        names = [repr(t) for t in known]
        raise ValueError(f"{name!r} is not one of {', '.join(names[:-1])} or {names[-1]}")
    return name


# A test's tool: and a host's tools: keys: a tool the loader's caller knows.
ToolName = Annotated[str, AfterValidator(_known_tool)]


def _sysctl_name(value: Any, info: ValidationInfo) -> Any:
    _pattern(SYSCTL_RE, "sysctl name", "like net.core.rmem_max")(value)
    if stored(info):
        return value
    if not value.startswith("net.") and value not in SYSCTLS_OUTSIDE_NET:
        raise ValueError(f"{value!r}: a profile may set net.* sysctls only (and "
                         f"{', '.join(sorted(SYSCTLS_OUTSIDE_NET))})")
    return value


SysctlName = Annotated[str, AfterValidator(_sysctl_name)]
def _registry_name(value: Any) -> Any:
    if value not in REGISTRY_NAMES:
        raise ValueError(f"{value!r} is not a Tcpip\\Parameters value nicbench sets (one of "
                         f"{', '.join(REGISTRY_NAMES)})")
    return value


RegistryName = Annotated[str, AfterValidator(_registry_name)]
Size = Annotated[int, BeforeValidator(parse_size)]
Rate = Annotated[int, BeforeValidator(parse_rate)]
# Numbers in files: as pydantic reads them (22, 22.0 or "22"), but never a YAML boolean.
Int = Annotated[int, BeforeValidator(_no_bool)]


class UNION_TAGS:
    """Tags of the config's tagged unions (one key, two forms): pydantic puts them into
    an error's location, and the loader drops them from the key path it reports."""

    COUNT = "tagged-count"
    STABLE = "tagged-until-stable"
    ALL = (COUNT, STABLE)


Float = Annotated[float, BeforeValidator(_no_bool)]


def is_linux_ifname(value: str) -> bool:
    return bool(LINUX_IFNAME_RE.match(value))


def is_windows_ifname(value: str) -> bool:
    """A Windows adapter's name, ifIndex or interface GUID (see WINDOWS_IFNAME_RE)."""
    return bool(WINDOWS_IFNAME_RE.fullmatch(value) or WINDOWS_GUID_RE.fullmatch(value)) \
        and value == value.strip()


def check_arg(value: Any) -> Any:
    """Tool argument values: numbers, or short words without shell characters."""
    if isinstance(value, (bool, int, float)):
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
    if isinstance(value, bool):     # it would be written as "True"
        raise ValueError(f"{value!r} is a YAML boolean (yes/no/on/off/true/false): a "
                         "sysctl takes a number such as 1 or 0")
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
