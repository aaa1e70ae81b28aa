"""Windows operations as pairs: a command builder (argv for :class:`WindowsShell`) and a
pure reader of what it prints. Nothing here talks to a host.

Readers take CIM objects as JSON (``ConvertTo-Json``), never formatted tables: tables
truncate (``*JumboPac...``) and labels are localized (windows.md, pitfalls 6-7). Where
only text exists (reg.exe, ping.exe, cmdlet errors) the reader keys on what is not
translated: value positions, ``TTL=``, the exit status. Each reader is tested on the real
outputs in ``tests/fixtures/windows`` (see its READERS.md for which reader has a real
capture and which has only the shape the cmdlet documents).

Scripts get every value from the inventory or a profile as a ``$Name`` parameter (a
single-quoted literal): nothing is pasted into their text.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from nicbench.config.fields import REGISTRY_NAMES, WINDOWS_GUID_RE, WINDOWS_IFINDEX_RE
from nicbench.errors import ParseError
from nicbench.platforms.base import CpuTimes
from nicbench.remote.powershell import WindowsScriptError, ps_script

TCPIP_PARAMETERS = r"HKLM\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters"
# The jumbo keywords drivers use, in the order they are tried: the NDIS standard one,
# then vendors' (Intel MFD falls back to MaxFrameSize; virtio's is MTU, PKB's IBM script).
JUMBO_KEYWORDS = ("*JumboPacket", "JumboPacket", "MaxFrameSize", "MTU")
# Keywords whose value is an IP MTU, not a frame size with the 14-byte header.
MTU_STYLE_KEYWORDS = ("MTU",)
# "TcpWindowSize, NumTcbTablePartitions and MaxHashTableSize are no longer supported,
# and are ignored" since Windows Vista / Server 2008 (windowsserverdocs
# net-sub-performance-tuning-nics.md); GlobalMaxTcpWindowSize went with TcpWindowSize.
IGNORED_SINCE_VISTA = ("TcpWindowSize", "GlobalMaxTcpWindowSize", "NumTcbTablePartitions",
                       "MaxHashTableSize")
ABSENT = "<absent>"
FIREWALL_GROUP = "nicbench"


def _json(text: str, what: str) -> Any:
    body = text.strip().lstrip("\ufeff")
    if not body:
        raise ParseError("windows", f"{what} as JSON", "empty output")
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ParseError("windows", f"{what} as JSON",
                         f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _items(value: Any) -> list[Any]:
    """ConvertTo-Json writes one object bare and several as an array; None is none."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


# -- host facts ----------------------------------------------------------------------
HOST_FACTS = r"""
$os = Get-CimInstance -ClassName Win32_OperatingSystem
$cpu = @(Get-CimInstance -ClassName Win32_Processor)
$defender = $null
try { $defender = [bool](Get-MpComputerStatus).RealTimeProtectionEnabled } catch { }
$tuning = $null
try { $tuning = [string](Get-NetTCPSetting -SettingName Internet).AutoTuningLevelLocal } catch { }
[Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject ([ordered]@{
    hostname = [Environment]::MachineName
    caption = [string]$os.Caption
    version = [string]$os.Version
    build = [string]$os.BuildNumber
    last_boot = $os.LastBootUpTime.ToUniversalTime().ToString('o')
    cpus = [int](($cpu | Measure-Object -Property NumberOfLogicalProcessors -Sum).Sum)
    cpu_model = [string]$cpu[0].Name
    defender_realtime = $defender
    autotuning = $tuning
    temp = [IO.Path]::GetTempPath()
})))
"""


def host_facts_argv() -> list[str]:
    return ps_script(HOST_FACTS, "host-facts")


@dataclass(frozen=True)
class WindowsHost:
    hostname: str | None
    caption: str
    version: str
    build: str
    last_boot: str
    cpus: int | None
    cpu_model: str | None
    defender_realtime: bool | None
    autotuning: str | None
    temp: str = ""              # the SSH user's TEMP, where nicbench's files go

    @property
    def major_minor(self) -> tuple[int, int]:
        parts = [int(p) for p in re.findall(r"\d+", self.version)[:2]] + [0, 0]
        return parts[0], parts[1]

    def ignores(self, registry_value: str) -> bool:
        """Does this Windows ignore that Tcpip\\Parameters value (Vista = 6.0 and later)?"""
        return self.major_minor >= (6, 0) and registry_value in IGNORED_SINCE_VISTA


def read_host_facts(text: str) -> WindowsHost:
    d = _json(text, "host facts")
    if not isinstance(d, dict) or "version" not in d:
        raise ParseError("windows", "an object with caption, version, build", "$")
    return WindowsHost(hostname=d.get("hostname") or None, caption=str(d.get("caption") or ""),
                       version=str(d["version"]), build=str(d.get("build") or ""),
                       last_boot=str(d.get("last_boot") or ""), cpus=_int(d.get("cpus")),
                       cpu_model=d.get("cpu_model") or None,
                       defender_realtime=d.get("defender_realtime"),
                       autotuning=d.get("autotuning") or None,
                       temp=str(d.get("temp") or ""))


LAST_BOOT = r"""
[Console]::Out.WriteLine((Get-CimInstance -ClassName Win32_OperatingSystem).LastBootUpTime.ToUniversalTime().ToString('o'))
"""


def last_boot_argv() -> list[str]:
    return ps_script(LAST_BOOT, "last-boot")


def read_last_boot(text: str) -> str:
    value = text.strip()
    if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", value):
        raise ParseError("windows", "a boot time like 2024-05-01T08:00:00.0000000Z",
                         f"line 1: {value[:60]!r}")
    return value


# -- adapters ------------------------------------------------------------------------
def adapter_by(ident: str) -> tuple[str, str]:
    """How the inventory names an adapter: ("guid", "{...}"), ("index", "7") or
    ("name", "Ethernet 2"). The platform names it by GUID once it knows it."""
    if WINDOWS_GUID_RE.fullmatch(ident):
        return "guid", ident.upper()
    if WINDOWS_IFINDEX_RE.fullmatch(ident):
        return "index", ident
    return "name", ident


def _adapter_params(ident: str) -> dict[str, str]:
    by, value = adapter_by(ident)
    return {"By": by, "Adapter": value}


# The adapter nicbench means, found by exact comparison: Get-NetAdapter -Name and the
# other cmdlets' -Name take wildcards, and a localized default name has one ('Local
# Area Connection* 2'). Exactly one must match.
FIND_ADAPTER = r"""
function Find-Adapter {
    $found = @(Get-NetAdapter | Where-Object {
        if ($By -eq 'guid') { $_.InterfaceGuid -eq $Adapter }
        elseif ($By -eq 'index') { $_.ifIndex -eq [int]$Adapter }
        else { $_.Name -eq $Adapter }
    })
    if ($found.Count -ne 1) {
        throw ('no adapter with ' + $By + ' ' + $Adapter + ' (' + $found.Count + ' found; Get-NetAdapter lists them)')
    }
    return $found[0]
}
function Get-AdvancedProperties($a) {
    @(Get-NetAdapterAdvancedProperty -AllProperties -ErrorAction SilentlyContinue | Where-Object { $_.ifAlias -eq $a.Name })
}
"""

ADAPTER = FIND_ADAPTER + r"""
$a = Find-Adapter
$ip = Get-NetIPInterface -InterfaceIndex $a.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue
$addr = @(Get-NetIPAddress -InterfaceIndex $a.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue | ForEach-Object { [string]$_.IPAddress })
$adv = @(Get-AdvancedProperties $a | ForEach-Object {
    [ordered]@{keyword = [string]$_.RegistryKeyword; display = [string]$_.DisplayName
               value = @($_.RegistryValue | ForEach-Object { [string]$_ })
               valid = @($_.ValidRegistryValues | ForEach-Object { [string]$_ })
               min = $_.NumericParameterMinValue; max = $_.NumericParameterMaxValue
               step = $_.NumericParameterStepValue}
})
[Console]::Out.WriteLine((ConvertTo-Json -Compress -Depth 4 -InputObject ([ordered]@{
    name = [string]$a.Name; description = [string]$a.InterfaceDescription
    status = [string]$a.Status; if_index = [int]$a.ifIndex; guid = [string]$a.InterfaceGuid
    mac = [string]$a.MacAddress; link_speed = [string]$a.LinkSpeed
    driver_provider = [string]$a.DriverProvider; driver_version = [string]$a.DriverVersion
    driver_description = [string]$a.DriverDescription; driver_date = [string]$a.DriverDate
    nl_mtu = $(if ($ip) { [int]$ip.NlMtu } else { $null })
    addresses = $addr; advanced = $adv
})))
"""


def adapter_argv(ident: str) -> list[str]:
    """The adapter's facts as JSON; ``ident`` its name, ifIndex or GUID."""
    return ps_script(ADAPTER, "adapter", **_adapter_params(ident))


@dataclass(frozen=True)
class AdvancedProperty:
    """One of a driver's advanced properties (Get-NetAdapterAdvancedProperty)."""

    keyword: str
    value: str | None            # RegistryValue (an array in CIM; its first element)
    valid: tuple[str, ...] = ()  # ValidRegistryValues (enumerations)
    minimum: int | None = None   # NumericParameterMinValue/Max/Step (integers)
    maximum: int | None = None
    step: int | None = None
    display: str = ""

    def refusal(self, value: str) -> str | None:
        """Why the driver would refuse ``value`` (its own list or range), None if it
        lists or ranges it."""
        if self.valid:
            if value not in self.valid:
                return (f"the driver's valid values for {self.keyword} are "
                        f"{', '.join(self.valid)}")
            return None
        n = _int(value)
        if self.minimum is not None and self.maximum is not None:
            step = self.step or 1
            if n is None or not self.minimum <= n <= self.maximum or \
                    (n - self.minimum) % step:
                return (f"the driver takes {self.keyword} from {self.minimum} to "
                        f"{self.maximum}" + (f" in steps of {step}" if step != 1 else ""))
        return None

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> AdvancedProperty:
        """From a JSON object of :data:`ADAPTER` or a Format-List record (fixtures)."""
        def listed(raw: Any) -> tuple[str, ...]:
            if isinstance(raw, list):
                return tuple(str(v) for v in raw)
            text = str(raw or "").strip()
            if text.startswith("{") and text.endswith("}"):   # Format-List: {1514, 9014}
                text = text[1:-1]
            return tuple(v.strip() for v in text.split(",") if v.strip())

        values = listed(rec.get("value", rec.get("RegistryValue")))
        return cls(keyword=str(rec.get("keyword", rec.get("RegistryKeyword", ""))),
                   value=values[0] if values else None,
                   valid=listed(rec.get("valid", rec.get("ValidRegistryValues"))),
                   minimum=_int(rec.get("min", rec.get("NumericParameterMinValue"))),
                   maximum=_int(rec.get("max", rec.get("NumericParameterMaxValue"))),
                   step=_int(rec.get("step", rec.get("NumericParameterStepValue"))),
                   display=str(rec.get("display", rec.get("DisplayName", "")) or ""))


@dataclass(frozen=True)
class WindowsAdapter:
    name: str
    description: str
    status: str
    if_index: int | None
    guid: str
    mac: str
    link_speed: str
    driver_provider: str
    driver_version: str
    driver_description: str
    nl_mtu: int | None
    addresses: tuple[str, ...]
    advanced: tuple[AdvancedProperty, ...] = field(default=())

    def property(self, keyword: str) -> AdvancedProperty | None:
        return next((p for p in self.advanced if p.keyword == keyword), None)

    def jumbo(self, keywords: tuple[str, ...] = JUMBO_KEYWORDS) -> AdvancedProperty | None:
        """The driver's jumbo-frame property: the first of ``keywords`` it has."""
        for k in keywords:
            if (p := self.property(k)) is not None:
                return p
        return None


def read_adapter(text: str) -> WindowsAdapter:
    d = _json(text, "adapter")
    if not isinstance(d, dict) or "name" not in d:
        raise ParseError("windows", "an adapter object with name and status", "$")
    return WindowsAdapter(
        name=str(d["name"]), description=str(d.get("description") or ""),
        status=str(d.get("status") or ""), if_index=_int(d.get("if_index")),
        guid=str(d.get("guid") or ""), mac=str(d.get("mac") or ""),
        link_speed=str(d.get("link_speed") or ""),
        driver_provider=str(d.get("driver_provider") or ""),
        driver_version=str(d.get("driver_version") or ""),
        driver_description=str(d.get("driver_description") or ""),
        nl_mtu=_int(d.get("nl_mtu")),
        addresses=tuple(str(a) for a in _items(d.get("addresses"))),
        advanced=tuple(AdvancedProperty.from_record(r) for r in _items(d.get("advanced"))
                       if isinstance(r, dict)))


ADVANCED_FORMAT_LIST = FIND_ADAPTER + r"""
Get-AdvancedProperties (Find-Adapter) | Format-List -Property * | Out-String -Width 4096
"""


def advanced_format_list_argv(ident: str) -> list[str]:
    """Every advanced property of an adapter as Format-List prints it (for captures:
    the form of the E810 fixture, read by :func:`read_format_list`)."""
    return ps_script(ADVANCED_FORMAT_LIST, "adapter-format-list", **_adapter_params(ident))


def read_format_list(text: str) -> list[dict[str, str]]:
    """``... | Format-List`` output -> one dict per record (blank lines separate records;
    ``Name : value``, with the value's continuation lines indented). For captures made
    by hand; the platform itself reads JSON."""
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    last = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if current:
                records.append(current)
            current, last = {}, None
            continue
        m = re.match(r"^(\S[^:]*?)\s*: ?(.*)$", line)
        if m and not line.startswith(" "):
            last = m.group(1)
            current[last] = m.group(2).rstrip()
        elif last is not None:
            current[last] += " " + line.strip()
    if current:
        records.append(current)
    return records


SET_ADVANCED = FIND_ADAPTER + r"""
$a = Find-Adapter
$p = @(Get-AdvancedProperties $a | Where-Object { $_.RegistryKeyword -eq $Keyword })
if ($p.Count -ne 1) { throw ('adapter ' + $a.Name + ' has no property ' + $Keyword) }
$p[0] | Set-NetAdapterAdvancedProperty -RegistryValue $Value
# The miniport restarts: wait (bounded) until the adapter is Up again.
for ($i = 0; (Get-NetAdapter -InterfaceIndex $a.ifIndex).Status -ne 'Up'; $i++) {
    if ($i -ge [int]$UpPolls) { [Console]::Error.WriteLine('adapter ' + $a.Name + ' not Up after the change'); exit 3 }
    Start-Sleep -Milliseconds 250
}
"""


def set_advanced_argv(ident: str, keyword: str, value: str, up_timeout_s: float) -> list[str]:
    """Set one advanced property of the adapter ``ident`` (name, ifIndex or GUID), then
    wait until it is Up again (exit 3 if not within ``up_timeout_s``)."""
    return ps_script(SET_ADVANCED, f"set {keyword}", **_adapter_params(ident), Keyword=keyword,
                     Value=value, UpPolls=max(1, round(up_timeout_s / 0.25)))


def read_set_property_error(stderr: str) -> tuple[str, tuple[str, ...]]:
    """The cmdlet's refusal (``No matching keyword value found. The following are valid
    keyword values: 0, 1``) -> (its sentence, the valid values it lists)."""
    for line in stderr.splitlines():
        text = line.strip()
        if text.startswith("Set-NetAdapterAdvancedProperty :"):
            text = text.split(":", 1)[1].strip()
        if not text or text.startswith(("At line", "+ ", "Set-NetAdapter")):
            continue
        m = re.search(r"valid keyword values:\s*(.+)$", text)
        valid = tuple(v.strip() for v in m.group(1).split(",")) if m else ()
        return text, valid
    return (stderr.strip().splitlines() or ["refused without a message"])[0], ()


# -- registry (Tcpip\Parameters) -----------------------------------------------------
def reg_query_argv(name: str) -> list[str]:
    """``reg query <Tcpip\\Parameters> /v NAME``: exit 1 when the value is absent."""
    return ["reg.exe", "query", TCPIP_PARAMETERS, "/v", name]


def read_reg_query(text: str, name: str) -> tuple[str, str]:
    """reg.exe's value line ``    NAME    REG_TYPE    DATA`` -> (type, data); data of a
    REG_DWORD is printed as hex (0xffff) and returned as decimal text."""
    for line in text.splitlines():
        parts = re.split(r"\s{4,}|\t", line.strip(), maxsplit=2)
        if len(parts) >= 2 and parts[0].lower() == name.lower() and parts[1].startswith("REG_"):
            data = parts[2].strip() if len(parts) > 2 else ""
            if parts[1] in ("REG_DWORD", "REG_QWORD") and data.lower().startswith("0x"):
                data = str(int(data, 16))
            return parts[1], data
    raise ParseError("reg", f"a '{name}    REG_...' value line", "no such line")


# reg.exe's type names (what a person types to put a value back) -> .NET's
# RegistryValueKind, which the scripts use.
REG_KINDS = {"REG_SZ": "String", "REG_EXPAND_SZ": "ExpandString", "REG_DWORD": "DWord",
             "REG_QWORD": "QWord", "REG_MULTI_SZ": "MultiString", "REG_BINARY": "Binary"}
_NET_KINDS = {v: k for k, v in REG_KINDS.items()}


def check_registry_name(name: str) -> str:
    """``name`` if nicbench may write it (:data:`REGISTRY_NAMES`), else
    WindowsScriptError: the second wall behind the profile's validation."""
    if name not in REGISTRY_NAMES:
        raise WindowsScriptError(f"{name!r} is not a Tcpip\\Parameters value nicbench "
                                 f"sets ({', '.join(REGISTRY_NAMES)})")
    return name


@dataclass(frozen=True)
class RegValue:
    """A registry value exactly as it was: its type and its raw data as text (REG_DWORD
    and REG_QWORD: the unsigned number in decimal, 0xffffffff = 4294967295; REG_SZ and
    REG_EXPAND_SZ: the string, unexpanded; REG_MULTI_SZ: a JSON list of strings;
    REG_BINARY: base64 of the bytes).

    In the journal (:meth:`text`) a REG_DWORD is its decimal number, as journals have
    always held it and as a profile's value reads, and any other type is
    ``TYPE:data`` (``REG_SZ:64K``), so the original goes back with its type."""

    kind: str
    data: str

    def __post_init__(self) -> None:
        if self.kind not in REG_KINDS:
            raise ValueError(f"registry type {self.kind!r} is not one of "
                             f"{', '.join(REG_KINDS)}")
        if "\0" in self.data:
            raise ValueError("registry data with a NUL cannot be sent to a script")
        bits = {"REG_DWORD": 32, "REG_QWORD": 64}.get(self.kind)
        if bits is not None and not (self.data.isascii() and self.data.isdigit()
                                     and int(self.data) < 1 << bits):
            raise ValueError(f"{self.data!r} is not a {self.kind} (0 to {(1 << bits) - 1})")
        if self.kind == "REG_MULTI_SZ":
            items = json.loads(self.data)
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ValueError(f"{self.data!r} is not a JSON list of strings")
        if self.kind == "REG_BINARY":
            base64.b64decode(self.data, validate=True)

    def text(self) -> str:
        return self.data if self.kind == "REG_DWORD" else f"{self.kind}:{self.data}"

    @classmethod
    def parse(cls, text: str) -> RegValue:
        """The journal's (or a profile's) text -> the value; ValueError if it is neither
        a decimal REG_DWORD nor ``TYPE:data``."""
        if text.isascii() and text.isdigit():
            return cls("REG_DWORD", text)
        kind, sep, data = text.partition(":")
        if not sep or kind not in REG_KINDS:
            raise ValueError(f"{text!r} is neither a REG_DWORD number nor TYPE:data")
        return cls(kind, data)

    def by_hand(self, name: str) -> str:
        """The reg.exe command that writes this value (what a person runs when nicbench
        could not)."""
        data = self.data
        if self.kind == "REG_MULTI_SZ":
            data = "\\0".join(json.loads(self.data))
        elif self.kind == "REG_BINARY":
            data = base64.b64decode(self.data).hex()
        return (f'reg add "{TCPIP_PARAMETERS}" /v {name} /t {self.kind} /d "{data}" /f')


def registry_by_hand(name: str, value: RegValue | None) -> str:
    """The reg.exe command that puts ``name`` back as ``value`` (None: deletes it)."""
    if value is None:
        return f'reg delete "{TCPIP_PARAMETERS}" /v {name} /f'
    return value.by_hand(name)


_REG_SUBKEY = TCPIP_PARAMETERS.split("\\", 1)[1]

# .NET's registry API, not New-ItemProperty: it reads a value's type (GetValueKind) and
# raw data (not expanded), and writes a DWORD of 0xffffffff as the Int32 -1 it is stored
# as (New-ItemProperty refuses 4294967295 for a DWord).
REG_GET = r"""
$k = [Microsoft.Win32.Registry]::LocalMachine.OpenSubKey($Sub)
if ($null -eq $k -or @($k.GetValueNames()) -notcontains $Name) { [Console]::Out.WriteLine('<absent>'); exit 0 }
try {
    $kind = [string]$k.GetValueKind($Name)
    $v = $k.GetValue($Name, $null, [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
} finally { $k.Close() }
switch ($kind) {
    'DWord' { $data = [string][BitConverter]::ToUInt32([BitConverter]::GetBytes([int]$v), 0) }
    'QWord' { $data = [string][BitConverter]::ToUInt64([BitConverter]::GetBytes([long]$v), 0) }
    'Binary' { $data = [Convert]::ToBase64String([byte[]]$v) }
    'MultiString' { $data = ConvertTo-Json -Compress -InputObject @($v | ForEach-Object { [string]$_ }) }
    default { $data = [string]$v }
}
[Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject ([ordered]@{kind = $kind; data = $data})))
"""

SET_REGISTRY = r"""
$k = [Microsoft.Win32.Registry]::LocalMachine.CreateSubKey($Sub)
try {
    if ($Kind -eq '') {
        $k.DeleteValue($Name, $false)
    } else {
        switch ($Kind) {
            'DWord' { $v = [BitConverter]::ToInt32([BitConverter]::GetBytes([uint32]$Data), 0) }
            'QWord' { $v = [BitConverter]::ToInt64([BitConverter]::GetBytes([uint64]$Data), 0) }
            'Binary' { $v = [Convert]::FromBase64String($Data) }
            'MultiString' { $v = [string[]]@(ConvertFrom-Json $Data | ForEach-Object { [string]$_ }) }
            default { $v = [string]$Data }
        }
        $k.SetValue($Name, $v, [Microsoft.Win32.RegistryValueKind]$Kind)
    }
} finally { $k.Close() }
"""


def reg_get_argv(name: str) -> list[str]:
    """A ``Tcpip\\Parameters`` value's type and raw data as JSON, or ``<absent>``."""
    return ps_script(REG_GET, "reg-get", Sub=_REG_SUBKEY, Name=check_registry_name(name))


def read_reg_get(text: str) -> RegValue | None:
    """:func:`reg_get_argv`'s answer -> the value, None if it is absent."""
    if text.strip() == ABSENT:
        return None
    d = _json(text, "registry value")
    if not isinstance(d, dict) or "kind" not in d or "data" not in d:
        raise ParseError("windows", "a registry value as {kind, data}", "$")
    kind = _NET_KINDS.get(str(d["kind"]))
    if kind is None:
        raise ParseError("windows", f"a registry type nicbench can put back "
                                    f"({', '.join(REG_KINDS)})", f"kind {d['kind']!r}")
    try:
        return RegValue(kind, str(d["data"]))
    except ValueError as exc:
        raise ParseError("windows", f"{kind} data", str(exc)) from None


def set_registry_argv(name: str, value: RegValue | int | None) -> list[str]:
    """Write ``name`` with its type and data (an int: a REG_DWORD; None: delete it, the
    value was absent before)."""
    if isinstance(value, int):
        value = RegValue("REG_DWORD", str(value))
    return ps_script(SET_REGISTRY, f"{'delete' if value is None else 'set'} {name}",
                     Sub=_REG_SUBKEY, Name=check_registry_name(name),
                     Kind="" if value is None else REG_KINDS[value.kind],
                     Data="" if value is None else value.data)


# -- firewall --------------------------------------------------------------------------
FIREWALL_GET = r"""
$r = Get-NetFirewallRule -Name ($Name + '-tcp') -ErrorAction SilentlyContinue
if ($r) { [Console]::Out.WriteLine([string]$r.Description) } else { [Console]::Out.WriteLine('<absent>') }
"""

FIREWALL_SET = r"""
Remove-NetFirewallRule -Name ($Name + '-tcp'), ($Name + '-udp') -ErrorAction SilentlyContinue
if ($Ports -ne '') {
    foreach ($proto in 'TCP', 'UDP') {
        $null = New-NetFirewallRule -Name ($Name + '-' + $proto.ToLower()) -DisplayName ($Name + ' ' + $proto) -Group $Group -Description $Ports -Direction Inbound -Action Allow -Protocol $proto -LocalPort ($Ports -split ',')
    }
}
"""


def firewall_get_argv(name: str) -> list[str]:
    return ps_script(FIREWALL_GET, "firewall-get", Name=name)


def firewall_set_argv(name: str, ports: str | None) -> list[str]:
    """Allow inbound TCP and UDP to ``ports`` ("5001,6001-6002") in group nicbench;
    None removes the rules."""
    return ps_script(FIREWALL_SET, "firewall-remove" if ports is None else "firewall-allow",
                     Name=name, Ports=ports or "", Group=FIREWALL_GROUP)


def port_spec(ports: tuple[int, ...] | list[int]) -> str:
    """Ports as New-NetFirewallRule -LocalPort takes them, runs collapsed: 5001-5004,6001."""
    out: list[str] = []
    nums = sorted({int(p) for p in ports})
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(out)


# -- ping --------------------------------------------------------------------------------
def ping_argv(peer: str, payload: int | None = None, source: str | None = None) -> list[str]:
    """One echo; with ``payload``, Don't Fragment set and that many data bytes; with
    ``source``, sent from that address (``-S``: the test link's, so the echo proves that
    link and not whatever route the host would pick)."""
    argv = ["ping.exe", "-n", "1", "-w", "2000"]
    if source is not None:
        argv += ["-S", source]
    if payload is not None:
        argv += ["-f", "-l", str(int(payload))]
    return [*argv, peer]


def source_address(addresses: tuple[str, ...], peer: str) -> str | None:
    """Of an adapter's IPv4 addresses, the one nearest ``peer`` (the longest common
    prefix): the test link's own address to send from. None: the adapter has none."""
    import ipaddress

    try:
        want = int(ipaddress.IPv4Address(peer))
    except ValueError:
        return None
    best, best_bits = None, -1
    for text in addresses:
        try:
            mine = int(ipaddress.IPv4Address(text))
        except ValueError:
            continue
        bits = 32 - (mine ^ want).bit_length()
        if bits > best_bits:
            best, best_bits = text, bits
    return best


def read_ping(text: str, peer: str) -> tuple[bool, str]:
    """Was there a reply from ``peer``? ping.exe's exit status is said to be 0 for
    "Destination host unreachable" replies, and its words are translated ("Antwort
    von"), so a reply is a line naming the peer with ``TTL=``. Returns (replied, the
    line that says what happened)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "TTL=" in ln.upper().replace(" ", "") and peer in ln:
            return True, ln
    said = [ln for ln in lines if not ln.lower().startswith(("pinging", "ping statistics",
                                                                "packets:", "approximate"))]
    return False, said[0] if said else "no reply"


# -- CPU ---------------------------------------------------------------------------------
CPU_RAW = r"""
$c = @(Get-CimInstance -ClassName Win32_PerfRawData_PerfOS_Processor | Where-Object { $_.Name -ne '_Total' } | ForEach-Object {
    [ordered]@{name = [string]$_.Name; idle = [string]$_.PercentProcessorTime; ts = [string]$_.Timestamp_Sys100NS}
})
[Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject $c))
"""


def cpu_raw_argv() -> list[str]:
    return ps_script(CPU_RAW, "cpu-raw")


def read_cpu_raw(text: str) -> tuple[CpuTimes, int]:
    """Raw per-CPU counters -> cumulative CpuTimes and the number of processors.

    ``PercentProcessorTime`` raw is a PERF_100NSEC_TIMER_INV: the processor's idle time
    in 100 ns; ``Timestamp_Sys100NS`` the time base. Per CPU, busy% = 100 (1 - dX/dY);
    summed over CPUs: total = sum Y, busy = sum (Y - X), so busy_pct_since() is the mean
    of the per-CPU figures. The values are strings: uint64 counters lose digits as JSON
    numbers in PowerShell 5.1."""
    rows = _items(_json(text, "processor counters"))
    total = busy = 0
    for i, r in enumerate(rows):
        x, y = _int(r.get("idle")) if isinstance(r, dict) else None, \
            _int(r.get("ts")) if isinstance(r, dict) else None
        if x is None or y is None:
            raise ParseError("windows", "idle and ts counters per processor", f"$[{i}]")
        total += y
        busy += y - x
    if not rows:
        raise ParseError("windows", "at least one processor", "$")
    return CpuTimes(busy=float(busy), total=float(total)), len(rows)


# -- listening ports ---------------------------------------------------------------------
WAIT_LISTENING = r"""
for ($i = 0; $i -lt [int]$Polls; $i++) {
    if ($Protocol -eq 'udp') { $l = Get-NetUDPEndpoint -LocalPort ([int]$Port) -ErrorAction SilentlyContinue }
    else { $l = Get-NetTCPConnection -State Listen -LocalPort ([int]$Port) -ErrorAction SilentlyContinue }
    if ($l) { exit 0 }
    Start-Sleep -Milliseconds 20
}
exit 1
"""


def wait_listening_argv(port: int, protocol: str, timeout_s: float) -> list[str]:
    # Each poll costs a CIM query (~50 ms on a real host), plus the 20 ms pause.
    return ps_script(WAIT_LISTENING, "wait-listening", Port=int(port), Protocol=protocol,
                     Polls=max(1, round(timeout_s / 0.07)))


# -- tools ---------------------------------------------------------------------------------
TOOL_FILE = r"""
$c = Get-Command -Name $Exe -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
if (-not $c) { exit 1 }
[Console]::Out.WriteLine($c.Source)
[Console]::Out.WriteLine([string]$c.FileVersionInfo.FileVersion)
"""


def tool_file_argv(exe: str) -> list[str]:
    return ps_script(TOOL_FILE, "tool-file", Exe=exe)


def read_tool_file(text: str) -> tuple[str, str | None]:
    """(path, file version or None) of an executable found by Get-Command."""
    lines = [*text.split("\n"), "", ""]
    version = lines[1].strip() or None
    return lines[0].strip(), version


# -- reboot --------------------------------------------------------------------------------
def reboot_argv() -> list[str]:
    """Restart in 5 s, applications forced, reason "planned: application: maintenance".
    Admin sessions over OpenSSH are elevated (Win32-OpenSSH#1713), so this is obeyed."""
    return ["shutdown.exe", "/r", "/t", "5", "/f", "/d", "p:4:1"]


# -- netsh (capture and fallbacks) -------------------------------------------------------
def read_netsh_tcp_global(text: str) -> list[str]:
    """``netsh int tcp show global`` -> its values in order. The labels are translated
    (de-DE: "Autom. Abstimmungsgrad Empfangsfenster") and the columns not aligned; the
    values are not translated, so they are read by position, never by label."""
    values = []
    for line in text.splitlines():
        if ":" in line and not line.strip().startswith("-"):
            values.append(line.rsplit(":", 1)[1].strip())
    return values
