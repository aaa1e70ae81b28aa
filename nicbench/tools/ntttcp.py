"""NTttcp: command builders and pure parsers for Microsoft's NTttcp and ntttcp-for-linux.

Responsible for turning what one NTttcp process printed or saved into a :class:`ParsedRun`,
and for the argument lists that start NTttcp the way the reviews and today's tools expect.
Nothing here runs a command.

Output formats parsed (``extra["format"]`` names which one a run came from)
----------------------------------------------------------------------------
``win_xml``      NTttcp.exe 5.x ``-xml`` file (root ``<ntttcps>``/``<ntttcpr>``,
    ``version="5.33"``). ``<total_bytes metric="MB">`` is 2^20 bytes and
    ``<throughput metric="mbps">`` is 10^6 bit/s: 2085.379314 MB * 2^20 * 8 / 60.015 s =
    291.48e6, the file's own mbps (../shared/samples/ntttcp_win_v5.33_pkb_*).
``win_console``  NTttcp.exe 5.x console: a per-thread table (``Thread Time(s) Throughput(KB/s)
    Avg B / Compl``) and, after ``#####  Totals:  #####``, header / ``====`` / value blocks
    (``Bytes(MEG) realtime(s) ... Throughput(MB/s)`` ... ``Avg. CPU %``). Columns are cut at
    the ``=`` runs of the underline, so the tool's four blocks and the one-line reflow of the
    published 5.28 sample read the same. KB = 2^10 and MB = 2^20 bytes: the sample's
    per-thread KB/s add up to 1024 x its total MB/s. The console does not say TCP or UDP; it
    is read from an echoed command line (``-u``) when there is one, else TCP (the default).
``linux_xml``, ``linux_json``  ntttcp-for-linux ``-x`` / ``-j`` files. Same element names as
    Windows but ``MB`` is 10^6 bytes (src/util.c: ``total_bytes_MB = total_bytes /
    DECIMAL_BASED_UNIT_M``; the sample's 477.865736 MB is the console's 477865736 bytes).
    Their ``version="5.33-linux"`` is a constant the tool writes for compatibility, not its
    own version, so ``version`` stays None and the constant goes to ``extra``.
``linux_console`` ntttcp-for-linux 1.4.x console (``NTTTCP for Linux 1.4.3`` banner, ``INFO:``
    lines, ``#####  Totals:  #####``); throughput in bit/s with SI prefixes (bps/Kbps/Mbps/Gbps).

CPU: ``cpu_pct`` is the tool's own figure. Windows: ``<cpu metric="%">`` / ``Avg. CPU %``
(the figure the reviews charted; taken as printed). ntttcp-for-linux: ``cpu busy (all)`` /
``<cpu_busy_all>`` / JSON ``cpu``, which src/util.c computes as the process's clock() time over
wall time: the process's own CPU as % of ONE core (it can exceed 100 on several cores;
before 1.4.0 the XML wrote it as ``<cpu metric="%">``); ``extra["cpu_pct_basis"]`` says which.

Throughput: ``throughput_bps`` is the tool's own total for the end that wrote the file (the
receiver's rate in a receiver file, the sender's in a sender file); ``sent_bps`` is set for
sender files. A UDP loss figure needs both ends' files, so ``udp`` stays None here.

Command builders and their sources
----------------------------------
* Windows 2000 DDK ``ntttcps``/``ntttcpr`` as the 2002-2003 reviews ran them:
  ``ntttcps -m 1,0,<receiver> -a 4 -l 256K -n 10000``, receiver the same plus
  ``-rb 20000000`` for jumbo frames (the review printed the transmitter line without ``-l``
  before 256K, a typo). The Windows profiles ask NTttcp.exe 5.x for exactly these options.
* NTttcp.exe 5.x (microsoft/ntttcp PrintUsage): ``-s|-r``, ``-m <threads>,<cpu|*>,<receiver>``,
  ``-t <seconds>``, ``-u``, ``-l``, ``-a``, ``-rb``, ``-xml [filename]``.
* ntttcp-for-linux 1.4.x (src/parameter.c, getopt ``"r::s::...m:...t:...O::x::j::QVh"``):
  ``-s|-r``, ``-m <ports>,<cpu|*>,<receiver>``, ``-t``, ``-u``, ``-b <bytes>``, ``-x [file]``,
  ``-j [file]``. Its options are not NTttcp.exe's: ``-b`` is the length of each send/recv
  buffer (NTttcp.exe's ``-l``), ``-l`` is connections per sender thread (the driver once
  passed the 256 KB buffer length there: the sender opened its maximum, 1000 connections,
  seen on the lab, tests/golden/captures/README.md), ``-V`` is verbose (it starts a 60 s
  receiver: the version is asked with ``-h``, which prints the banner and exits), and it
  has no socket receive buffer option (NTttcp.exe's ``-rb``).
  ``-x``/``-j`` take an optional argument that the tool also accepts as the next word, but
  only if it does not start with ``-``; the builders refuse such names rather than let the
  log silently go to the default file.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

from pydantic import Field

from nicbench.config.fields import Float, Int, Size, Strict
from nicbench.errors import ParseError, UsageError
from nicbench.tools.base import KIB, MIB, MBIT_SI, ParsedRun
from nicbench.tools.driver import Driver, Endpoints, Plan, Shape, Tool, VersionProbe
from nicbench.tools.params import VarRef

NAME = "ntttcp"

# Windows NTttcp: "MB"/"MEG" = 2^20 bytes, "KB" = 2^10. ntttcp-for-linux: "MB" = 10^6.
_WIN_MB = MIB
_WIN_KB = KIB
_LINUX_MB = 1_000_000
# ntttcp-for-linux console rates (src/util.c unit_bps[] with decimal units).
_LINUX_RATE_PREFIX = {"bps": 1.0, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}

_CPU_BASIS_WINDOWS = "Windows NTttcp 'Avg. CPU %' / <cpu>, as the tool reports it"
_CPU_BASIS_LINUX = ("ntttcp-for-linux 'cpu busy (all)': this process's own CPU time as % of "
                    "one core (may exceed 100 on several cores)")


# --------------------------------------------------------------------------- detection


def looks_like(text: str) -> bool:
    """True when ``text`` is NTttcp (Windows or Linux) output this module can read."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("<"):
        # allow an <?xml ...?> prolog before the root element
        return bool(re.match(r"(?:<\?xml[^>]*\?>\s*)?<ntttcp[sr]\b", head))
    if head.startswith("{"):
        return bool(re.search(r'"ntttcp[sr]"\s*:', head[:200]))
    if "NTTTCP for Linux" in text:
        return True
    return "#####  Totals:  #####" in text and (
        "Throughput(KB/s)" in text or "Bytes(MEG)" in text)


def parse(text: str) -> ParsedRun:
    """Parse one NTttcp result (XML, JSON or console; Windows or Linux) into a ParsedRun."""
    head = text.lstrip("\ufeff \t\r\n")
    if not head:
        raise ParseError(NAME, "NTttcp output (XML, JSON or console)", "empty input")
    if head.startswith("<"):
        return _parse_xml(head)
    if head.startswith("{"):
        return _parse_json(head)
    if "NTTTCP for Linux" in text:
        return _parse_linux_console(text)
    if "#####  Totals:  #####" in text or "Throughput(KB/s)" in text:
        return _parse_windows_console(text)
    first = head.splitlines()[0]
    raise ParseError(NAME, "NTttcp XML (<ntttcps>/<ntttcpr>), ntttcp-for-linux JSON, or an "
                     "NTttcp console with a '#####  Totals:  #####' block",
                     f"line 1: {first[:80]!r}")


# --------------------------------------------------------------------------- XML


def _parse_xml(text: str) -> ParsedRun:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        hint = ""
        if "junk after document element" in str(exc):
            # NTttcp.exe appends to an existing -xml file instead of replacing it.
            hint = " (two documents in one file? NTttcp.exe appends to an existing -xml file)"
        raise ParseError(NAME, f"one well-formed NTttcp XML document{hint}",
                         f"line {line}, column {col}: {exc}") from exc
    if root.tag not in ("ntttcps", "ntttcpr"):
        raise ParseError(NAME, "an <ntttcps> or <ntttcpr> root element", f"/{root.tag}")
    role = "sender" if root.tag == "ntttcps" else "receiver"
    version_attr = root.get("version")
    linux = bool(version_attr and version_attr.endswith("-linux")) or (
        root.find("cpu_busy_all") is not None)
    path = f"/{root.tag}"

    def metric(tag: str, name: str, required: bool = True) -> float | None:
        el = _metric_el(root, tag, name, path if required else None)
        return None if el is None else _number(el.text, f"{path}/{tag}[@metric='{name}']")

    def plain(tag: str) -> float | None:
        el = root.find(tag)
        return None if el is None else _number(el.text, f"{path}/{tag}")

    mbps = metric("throughput", "mbps")
    assert mbps is not None
    total_mb = metric("total_bytes", "MB")
    realtime = metric("realtime", "s")
    udp_el = root.find("parameters/udp")
    protocol = "udp" if udp_el is not None and (udp_el.text or "").strip() == "True" else "tcp"

    threads = root.findall("thread")
    thread_bps = [_number(_required_el(t, "throughput", "mbps", f"{path}/thread").text,
                          f"{path}/thread[@index='{t.get('index')}']") * MBIT_SI
                  for t in threads]
    conns = plain("conns_tested")
    streams = len(threads) if threads else (int(conns) if conns is not None else None)

    extra: dict[str, Any] = {
        "format": "linux_xml" if linux else "win_xml",
        "role": role,
        "mb_unit_bytes": _LINUX_MB if linux else _WIN_MB,
        "computername": root.get("computername"),
    }
    if linux:
        extra["format_version"] = version_attr
    counts = (("packets_sent", plain("packets_sent")),
              ("packets_received", plain("packets_received")),
              ("retransmits", plain("packets_retransmitted")),
              ("errors", plain("errors")),
              ("buffer_len_bytes", plain("bufferLen")),
              ("cpu_cores", metric("cpu_cores", "cpu cores", required=False)))
    rates = (("cycles_per_byte", metric("cycles", "cycles/byte", required=False)
              if root.find("cycles") is not None else plain("cycles_per_byte")),
             ("avg_frame_size_bytes", metric("avg_frame_size", "B", required=False)),
             ("interrupts_per_s", metric("interrupts", "count/sec", required=False)),
             ("dpcs_per_s", metric("dpcs", "count/sec", required=False)))
    for key, value in counts:
        if value is not None:
            extra[key] = int(value)
    for key, value in rates:
        if value is not None:
            extra[key] = value
    if thread_bps:
        extra["thread_throughput_bps"] = thread_bps
    retrans_segs = metric("tcp_retransmits", "retrans_segs", required=False)
    if retrans_segs is not None:
        extra["retrans_segs"] = int(retrans_segs)

    if linux:
        cpu = metric("cpu_busy_all", "%", required=False)
        if cpu is None:
            # ntttcp-for-linux before 1.4.0 wrote the same figure (cpu_busy_percent) as
            # <cpu metric="%"> (src/util.c until commit 60fda25, "Add missing outputs to
            # xml logging").
            cpu = metric("cpu", "%", required=False)
        extra["cpu_pct_basis"] = _CPU_BASIS_LINUX
    else:
        cpu = metric("cpu", "%", required=False)
        extra["cpu_pct_basis"] = _CPU_BASIS_WINDOWS
    throughput_bps = mbps * MBIT_SI
    return ParsedRun(
        tool=NAME,
        protocol=protocol,
        throughput_bps=throughput_bps,
        version=None if linux else version_attr,
        duration_s=realtime,
        streams=streams,
        cpu_pct=cpu,
        bytes_total=None if total_mb is None else total_mb * (_LINUX_MB if linux else _WIN_MB),
        sent_bps=throughput_bps if role == "sender" else None,
        extra=extra,
    )


def _metric_el(parent: ET.Element, tag: str, name: str, where: str | None) -> ET.Element | None:
    """``parent``'s first ``<tag metric="name">``; when there is none, None, or a ParseError
    placed at ``where`` if one is given (the element is required)."""
    for el in parent.findall(tag):
        if el.get("metric") == name:
            return el
    if where is not None:
        raise ParseError(NAME, f"<{tag} metric=\"{name}\">", where)
    return None


def _required_el(parent: ET.Element, tag: str, name: str, where: str) -> ET.Element:
    el = _metric_el(parent, tag, name, where)
    assert el is not None      # _metric_el raised where it is missing
    return el


# --------------------------------------------------------------------------- JSON


def _parse_json(text: str) -> ParsedRun:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(NAME, "a well-formed ntttcp-for-linux JSON document",
                         f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    except RecursionError:
        raise ParseError(NAME, "an ntttcp-for-linux JSON document", "nested too deep") from None
    if not isinstance(doc, dict) or not ({"ntttcps", "ntttcpr"} & set(doc)):
        raise ParseError(NAME, "a top-level \"ntttcps\" or \"ntttcpr\" object", "$")
    key = "ntttcps" if "ntttcps" in doc else "ntttcpr"
    body = doc[key]
    path = f"$.{key}"
    if not isinstance(body, dict):
        raise ParseError(NAME, "an object", path)
    role = "sender" if key == "ntttcps" else "receiver"

    def value_of(name: str, required: bool = True) -> float | None:
        item = body.get(name)
        if item is None:
            if required:
                raise ParseError(NAME, f"a \"{name}\" field", path)
            return None
        if isinstance(item, dict):
            return _number(item.get("value"), f"{path}.{name}.value")
        return _number(item, f"{path}.{name}")

    def listed(name: str, metric_name: str, required: bool = True) -> float | None:
        for i, item in enumerate(body.get(name) or []):
            if isinstance(item, dict) and item.get("metric") == metric_name:
                return _number(item.get("value"), f"{path}.{name}[{i}].value")
        if required:
            raise ParseError(NAME, f"a {name} entry with metric \"{metric_name}\"",
                             f"{path}.{name}")
        return None

    mbps = listed("throughputs", "mbps")
    assert mbps is not None
    total_mb = value_of("totalBytes", required=False)
    params = body.get("parameters") or {}
    protocol = "udp" if str(params.get("udp", "False")) == "True" else "tcp"
    extra: dict[str, Any] = {
        "format": "linux_json",
        "role": role,
        "mb_unit_bytes": _LINUX_MB,
        "format_version": body.get("version"),
        "computername": body.get("computername"),
        "cpu_pct_basis": _CPU_BASIS_LINUX,
    }
    cycles = value_of("cycles", required=False)
    if cycles is not None:
        extra["cycles_per_byte"] = cycles
    for name, field in (("packets_sent", "packetsSent"), ("packets_received", "packetsReceived"),
                        ("retransmits", "packets_retransmitted"), ("errors", "errors")):
        value = value_of(field, required=False)
        if value is not None:
            extra[name] = int(value)
    retrans_segs = listed("tcp_retransmits", "retrans_segs", required=False)
    if retrans_segs is not None:
        extra["retrans_segs"] = int(retrans_segs)
    throughput_bps = mbps * MBIT_SI
    return ParsedRun(
        tool=NAME,
        protocol=protocol,
        throughput_bps=throughput_bps,
        version=None,
        duration_s=value_of("realTime", required=False),
        # The JSON file has no connection count (the XML's <conns_tested> is not in it).
        streams=None,
        cpu_pct=value_of("cpu", required=False),
        bytes_total=None if total_mb is None else total_mb * _LINUX_MB,
        sent_bps=throughput_bps if role == "sender" else None,
        extra=extra,
    )


# --------------------------------------------------------------------------- Linux console

_LINUX_BANNER = re.compile(r"NTTTCP for Linux (?P<v>\d+(?:\.\d+)+)")
# "01:52:38 INFO: test duration\t:4.00 seconds" -> key "test duration", value "4.00 seconds"
_LINUX_KV = re.compile(r"^(?:\d\d:\d\d:\d\d )?INFO:\s*(?P<key>[^:\t][^:]*?)\s*:(?P<value>.*)$")
_LINUX_COUNT = re.compile(r"INFO:\s*(?P<n>\d+) (?P<what>threads created|connections tested)")
_LINUX_RATE = re.compile(r"^(?P<v>[\d.]+)(?P<unit>bps|Kbps|Mbps|Gbps)$")


def _parse_linux_console(text: str) -> ParsedRun:
    lines = text.splitlines()
    version = m[1] if (m := _LINUX_BANNER.search(text)) else None
    values: dict[str, tuple[str, int]] = {}
    counts: dict[str, int] = {}
    totals_at = None
    protocol_line = None
    role_line = None
    for lineno, line in enumerate(lines, start=1):
        if "#####  Totals:  #####" in line:
            totals_at = lineno
            continue
        if c := _LINUX_COUNT.search(line):
            counts[c["what"]] = int(c["n"])
        stripped = line.strip()
        if stripped in ("*** sender role", "*** receiver role"):
            role_line = stripped.split()[1]
        if re.match(r"^protocol:\s+(TCP|UDP)$", stripped):
            protocol_line = stripped.split()[-1].lower()
        if totals_at is not None and (kv := _LINUX_KV.match(stripped)):
            values.setdefault(kv["key"].strip(), (kv["value"].strip(), lineno))
    if totals_at is None:
        errors = [ln.strip() for ln in lines if re.search(r"\bERR", ln)]
        said = f"; ntttcp said: {errors[0]}" if errors else ""
        raise ParseError(NAME, f"a '#####  Totals:  #####' block{said}",
                         f"end of input after line {len(lines)}")

    def need(key: str) -> tuple[str, int]:
        if key not in values:
            raise ParseError(NAME, f"a '{key}' line in the totals",
                             f"after line {totals_at} (totals)")
        return values[key]

    raw, where = need("throughput")
    rate = _LINUX_RATE.match(raw)
    if not rate:
        raise ParseError(NAME, "a throughput like '955.28Mbps'", f"line {where}: {raw!r}")
    throughput_bps = _number(rate["v"], f"line {where}") * _LINUX_RATE_PREFIX[rate["unit"]]
    raw, where = need("test duration")
    duration = _number(raw.removesuffix("seconds").strip(), f"line {where}")
    raw, where = need("total bytes")
    total = _number(raw, f"line {where}")
    cpu = None
    if "cpu busy (all)" in values:
        raw, where = values["cpu busy (all)"]
        cpu = _number(raw.rstrip("%"), f"line {where}")

    # src/util.c prints "retrans segs" only for TCP, and "N connections tested" only on the
    # sender; -V adds explicit "protocol:" and "*** sender role" lines, which win.
    protocol = protocol_line or ("tcp" if "retrans segs" in values else "udp")
    role = role_line or ("sender" if "connections tested" in counts else "receiver")
    extra: dict[str, Any] = {"format": "linux_console", "role": role,
                             "cpu_pct_basis": _CPU_BASIS_LINUX}
    for name, key, cast in (("retransmits", "retrans segs", int),
                            ("cycles_per_byte", "cycles/byte", float),
                            ("cpu_cores", "cpu cores", int),
                            ("packets_sent", "tx_packets", int),
                            ("packets_received", "rx_packets", int)):
        if key in values:
            raw, where = values[key]
            extra[name] = cast(_number(raw, f"line {where}"))
    for key in ("user", "system", "idle", "iowait", "softirq"):
        if key in values:
            raw, where = values[key]
            extra[f"cpu_{key}_pct"] = _number(raw.rstrip("%"), f"line {where}")
    if "threads created" in counts:
        extra["threads"] = counts["threads created"]
    return ParsedRun(
        tool=NAME,
        protocol=protocol,
        throughput_bps=throughput_bps,
        version=version,
        duration_s=duration,
        streams=counts.get("connections tested"),
        cpu_pct=cpu,
        bytes_total=total,
        sent_bps=throughput_bps if role == "sender" else None,
        extra=extra,
    )


# --------------------------------------------------------------------------- Windows console

_WIN_VERSION = re.compile(r"Copyright Version (?P<v>\d+(?:\.\d+)+)")
_UNDERLINE = re.compile(r"^=+(?: +=+)*$")
_CMDLINE = re.compile(r"ntttcp(?:\.exe)?\s+(?P<args>.*)$", re.IGNORECASE)


def _table_blocks(lines: list[str]) -> list[tuple[int, list[str], list[list[str]]]]:
    """Every header / ``=====`` / rows block: (underline line number, names, rows).

    Names are cut from the header at the columns of the ``=`` runs (they contain spaces:
    "Avg Frame Size"); values are whitespace-separated numbers, one per column.
    """
    blocks = []
    for i, line in enumerate(lines):
        if not _UNDERLINE.match(line.rstrip()) or i == 0:
            continue
        spans = [m.span() for m in re.finditer(r"=+", line)]
        header = lines[i - 1]
        names = [header[a:b if k + 1 < len(spans) else None].strip()
                 for k, (a, b) in enumerate(spans)]
        rows = []
        for row in lines[i + 1:]:
            fields = row.split()
            if len(fields) != len(spans) or not all(_is_number(f) for f in fields):
                break
            rows.append(fields)
        blocks.append((i + 1, names, rows))
    return blocks


def _parse_windows_console(text: str) -> ParsedRun:
    lines = text.splitlines()
    version = m["v"] if (m := _WIN_VERSION.search(text)) else None
    totals_at = next((n for n, ln in enumerate(lines, start=1)
                      if "#####  Totals:  #####" in ln), None)
    if totals_at is None:
        raise ParseError(NAME, "a '#####  Totals:  #####' block",
                         f"end of input after line {len(lines)}")
    totals: dict[str, tuple[str, int]] = {}
    thread_rows: list[dict[str, str]] = []
    for lineno, names, rows in _table_blocks(lines):
        if lineno < totals_at:
            if names and names[0] == "Thread":
                thread_rows = [dict(zip(names, r, strict=False)) for r in rows]
            continue
        if len(rows) != 1:
            raise ParseError(NAME, "one row of values under each totals header",
                             f"line {lineno + 1}")
        for name, value in zip(names, rows[0], strict=False):
            totals[name] = (value, lineno + 1)

    def total(name: str, required: bool = True) -> float | None:
        if name not in totals:
            if required:
                raise ParseError(NAME, f"a '{name}' column in the totals",
                                 f"after line {totals_at} (totals)")
            return None
        raw, where = totals[name]
        return _number(raw, f"line {where}, column {name!r}")

    mb_per_s = total("Throughput(MB/s)")
    assert mb_per_s is not None
    throughput_bps = mb_per_s * _WIN_MB * 8
    meg = total("Bytes(MEG)", required=False)

    args: list[str] = []
    for line in lines:
        if c := _CMDLINE.search(line):
            args = c["args"].split()
            break
    role = "sender" if "-s" in args else "receiver" if "-r" in args else None
    protocol = "udp" if "-u" in args else "tcp"

    extra: dict[str, Any] = {
        "format": "win_console",
        "role": role,
        "mb_unit_bytes": _WIN_MB,
        "protocol_source": "command line" if args else "default (no command line in output)",
        "cpu_pct_basis": _CPU_BASIS_WINDOWS,
    }
    for name, column, cast in (
            ("cycles_per_byte", "Cycles/Byte", float), ("packets_sent", "Packets Sent", int),
            ("packets_received", "Packets Received", int), ("retransmits", "Retransmits", int),
            ("errors", "Errors", int), ("avg_frame_size_bytes", "Avg Frame Size", float),
            ("dpcs_per_s", "DPCs(count/s)", float), ("interrupts_per_s", "Intr(count/s)", float)):
        figure = total(column, required=False)
        if figure is not None:
            extra[name] = cast(figure)
    if thread_rows:
        extra["thread_throughput_bps"] = [
            _number(r.get("Throughput(KB/s)"), f"thread table row {i}") * _WIN_KB * 8
            for i, r in enumerate(thread_rows)]
    return ParsedRun(
        tool=NAME,
        protocol=protocol,
        throughput_bps=throughput_bps,
        version=version,
        duration_s=total("realtime(s)", required=False),
        streams=len(thread_rows) or None,
        cpu_pct=total("Avg. CPU %", required=False),
        bytes_total=None if meg is None else meg * _WIN_MB,
        sent_bps=throughput_bps if role == "sender" else None,
        extra=extra,
    )


# --------------------------------------------------------------------------- helpers


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _number(raw: object, where: str) -> float:
    try:
        value = float(str(raw).strip())
    except (TypeError, ValueError):
        raise ParseError(NAME, "a number", f"{where}: {raw!r}") from None
    if not math.isfinite(value):
        raise ParseError(NAME, "a finite number", f"{where}: {raw!r}")
    return value


# --------------------------------------------------------------------------- builders


def _mapping(threads: int, proc: int | str, receiver_ip: str) -> str:
    """The ``-m`` 3-tuple ``threads,processor,receiver`` shared by every NTttcp."""
    if not isinstance(receiver_ip, str) or not receiver_ip or re.search(r"[\s,]", receiver_ip):
        raise UsageError(f"NTttcp receiver address {receiver_ip!r}: needs a host or address "
                         "without spaces or commas (it goes into the -m mapping)")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise UsageError(f"NTttcp threads {threads!r}: needs an integer >= 1")
    if proc != "*" and (isinstance(proc, bool) or not isinstance(proc, int) or proc < 0):
        raise UsageError(f"NTttcp processor {proc!r}: needs a CPU number >= 0 or '*'")
    return f"{threads},{proc},{receiver_ip}"


def _positive(name: str, value: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"NTttcp {name} {value!r}: needs an integer >= 1")
    return str(value)


def _linux_argv(role: str, receiver_ip: str, *, threads: int, proc: int | str,
                duration_s: int, udp: bool, xml_file: str | None, json_file: str | None,
                exe: str, port: int | None = None, length: int | None = None,
                no_sync: bool = False) -> list[str]:
    argv = [exe, role, "-m", _mapping(threads, proc, receiver_ip),
            "-t", _positive("duration (-t)", duration_s)]
    if no_sync:
        argv.append("-N")    # talking to Windows NTttcp (its -ns): no sync connection
    if port is not None:
        argv += ["-p", _positive("port base (-p)", port)]
    if length is not None:     # its -b is the buffer length; its -l counts connections
        argv += ["-b", _positive("buffer length (-b)", length)]
    if udp:
        argv.append("-u")
    if xml_file is not None:
        argv += ["-x", _log_name(xml_file, "-x")]
    if json_file is not None:
        argv += ["-j", _log_name(json_file, "-j")]
    return argv


def linux_sender_argv(receiver_ip: str, *, threads: int = 1, proc: int | str = "*",
                      duration_s: int = 60, udp: bool = False, xml_file: str | None = None,
                      json_file: str | None = None, exe: str = "ntttcp",
                      **sizes: Any) -> list[str]:
    """ntttcp-for-linux sender: ``ntttcp -s -m 1,*,<ip> -t 60 [-p P] [-b LENGTH] [-u]
    [-x f.xml] [-j f.json]`` (``sizes``: port, length)."""
    return _linux_argv("-s", receiver_ip, threads=threads, proc=proc, duration_s=duration_s,
                       udp=udp, xml_file=xml_file, json_file=json_file, exe=exe, **sizes)


def linux_receiver_argv(receiver_ip: str, *, threads: int = 1, proc: int | str = "*",
                        duration_s: int = 60, udp: bool = False, xml_file: str | None = None,
                        json_file: str | None = None, exe: str = "ntttcp",
                        **sizes: Any) -> list[str]:
    """ntttcp-for-linux receiver: ``ntttcp -r -m 1,*,<own ip> -t 60 [-p P] [-b LENGTH]
    [-u] [-x f] [-j f]``."""
    return _linux_argv("-r", receiver_ip, threads=threads, proc=proc, duration_s=duration_s,
                       udp=udp, xml_file=xml_file, json_file=json_file, exe=exe, **sizes)


def win_argv(role: str, receiver_ip: str, *, exe: str, threads: int, proc: int | str,
             port: int, length: str, async_count: int, count: int | None,
             duration_s: int | None, udp: bool, rb: int | None, no_sync: bool,
             xml_file: str | None) -> list[str]:
    """NTttcp.exe 5.x (-s sender, -r receiver) with the DDK method's -a/-l/-n or a time:
    ``NTttcp.exe -r -m 1,0,<ip> -p 5001 -a 4 -l 256K -n 10000 [-t T] [-rb N] [-u] [-ns]
    [-xml f]``. With both -n and -t, -t is the longest the test may run (PrintUsage)."""
    if role not in ("-s", "-r"):
        raise UsageError(f"NTttcp role {role!r}")
    if not re.fullmatch(r"\d+[KkMm]?", str(length)):
        raise UsageError(f"NTttcp buffer length {length!r}: needs a size like 256K")
    argv = [exe, role, "-m", _mapping(threads, proc, receiver_ip),
            "-p", _positive("port base (-p)", port),
            "-a", _positive("outstanding I/O (-a)", async_count), "-l", str(length)]
    if count is not None:
        argv += ["-n", _positive("buffer count (-n)", count)]
    if duration_s is not None:
        argv += ["-t", _positive("duration (-t)", duration_s)]
    if rb is not None:
        argv += ["-rb", _positive("receive buffer (-rb)", rb)]
    if udp:
        argv.append("-u")
    if no_sync:
        argv.append("-ns")   # the other end is ntttcp-for-linux (its -N)
    if xml_file is not None:
        argv += ["-xml", _log_name(xml_file, "-xml")]
    return argv


def ntttcp_ports(base: int, threads: int, sync: bool) -> tuple[int, ...]:
    """The ports a receiver listens on: one data port per thread from the base, and
    each one + 1000 for NTttcp's sync connections (src/ntttcp.c SendReceiveToken)."""
    data = tuple(range(base, base + threads))
    return data + (tuple(p + 1000 for p in data) if sync else ())


def _error_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if re.match(r"^\s*ERROR\b", ln)]


def _log_name(name: str, option: str) -> str:
    # The tools take the file name as the next word only if it does not start with "-";
    # otherwise they write to their default file and treat the name as another option.
    if not isinstance(name, str) or not name or name.startswith("-"):
        raise UsageError(f"NTttcp {option} file name {name!r}: needs a name that does not "
                         "start with '-'")
    return name


# -- parameters, driver and the tool -------------------------------------------------
class NtttcpParams(Strict):
    threads: Int = Field(1, ge=1, le=64)      # -m threads,cpu,ip
    cpu: Int = Field(0, ge=-1, le=1024)
    async_count: Int = Field(4, ge=1, le=64)  # -a
    length: Size | VarRef = 262144            # -l
    count: Int | None = Field(None, ge=1, le=10 ** 9)  # -n buffers (Windows DDK method)
    duration_s: Float | None = Field(None, ge=1, le=3600)  # -t, whole seconds
    receive_buffer: Size | VarRef | None = None  # -rb
    port: Int = Field(5001, ge=1024, le=65535)


# The last line of an ntttcp-for-linux receiver's totals ("09:40:46 INFO: cpu busy (all)
# :6.97%"), for grep -E.
LINUX_LAST_TOTALS_LINE = r"INFO: cpu busy \(all\)[[:space:]]*:"


def _no_receive_buffer(p: NtttcpParams) -> None:
    if p.receive_buffer is not None:
        raise UsageError("ntttcp-for-linux has no socket receive buffer option (NTttcp.exe's "
                         "-rb): drop receive_buffer for a Linux receiver")


class NtttcpDriver(Driver):
    """NTttcp.exe on Windows ends, ntttcp-for-linux on Linux ends, both at once for a
    mixed pair (no-sync on both sides: ntttcp-for-linux wiki, VirtualClient #584/#587)."""

    params = NtttcpParams

    def plan(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
             ends: Endpoints, tag: str) -> Plan:
        if "windows" in (ends.receiver_os, ends.sender_os):
            return self._plan_windows(exe_server, exe_client, raw_params, ends)
        p = self.parse_params(raw_params)
        # -n (a buffer count) and -a are the Windows tools' (DDK ntttcps/ntttcpr, NTttcp.exe);
        # ntttcp-for-linux runs for a time and has neither: refuse rather than drop them.
        if p.count is not None or p.async_count != NtttcpParams.model_fields["async_count"].default:
            raise UsageError("ntttcp-for-linux has no -n (count) or -a (async_count): those "
                             "are for Windows NTttcp; use duration_s on Linux hosts")
        _no_receive_buffer(p)
        duration = p.duration_s or 10
        kw = {"threads": p.threads, "proc": p.cpu, "duration_s": int(duration),
              "udp": ends.protocol == "udp", "port": p.port, "length": int(p.length)}
        server = linux_receiver_argv(ends.receiver_addr, exe=exe_server, **kw)
        client = linux_sender_argv(ends.receiver_addr, exe=exe_client, **kw)
        if ends.protocol == "udp":
            # A 1.4.3 UDP receiver prints its totals and then never exits (seen on the
            # lab, tests/golden/captures/README.md): stopped once its last totals line,
            # already written, is there.
            return Plan(server=server, client=client, port=p.port, listen_protocol="udp",
                        server_exits=False, expected_s=float(duration),
                        report_re=LINUX_LAST_TOTALS_LINE, report_wait_s=5.0,
                        stop_signal="KILL")
        return Plan(server=server, client=client, port=p.port, listen_protocol=ends.protocol,
                    server_exits=True, expected_s=float(duration))

    def _plan_windows(self, exe_server: str, exe_client: str, raw_params: dict[str, Any],
                      ends: Endpoints) -> Plan:
        p = self.parse_params(raw_params)
        mixed = ends.receiver_os != ends.sender_os
        if ends.receiver_os != "windows":
            _no_receive_buffer(p)
        if mixed and p.duration_s is None:
            raise UsageError("NTttcp between Windows and Linux needs duration_s: -t must "
                             "be given to both ends (ntttcp-for-linux#63)")
        duration = int(p.duration_s) if p.duration_s else None
        proc: int | str = "*" if p.cpu < 0 else p.cpu
        length = str(int(p.length))
        rb = None if p.receive_buffer is None else int(p.receive_buffer)

        def end(os_name: str, role: str, exe: str, xml_file: str | None) -> list[str]:
            if os_name == "windows":
                return win_argv(role, ends.receiver_addr, exe=exe, threads=p.threads,
                                proc=proc, port=p.port, length=length,
                                async_count=p.async_count, count=p.count,
                                duration_s=duration, udp=ends.protocol == "udp",
                                rb=rb if role == "-r" else None, no_sync=mixed,
                                xml_file=xml_file)
            assert duration is not None
            builder = linux_receiver_argv if role == "-r" else linux_sender_argv
            return builder(ends.receiver_addr, exe=exe, threads=p.threads, proc=proc,
                           duration_s=duration, udp=ends.protocol == "udp", port=p.port,
                           length=int(p.length), no_sync=True)

        # The sender's figures go to a fresh -xml file per trial (NTttcp.exe appends to
        # an existing one), read back and removed by the trial.
        xml = ends.client_file if ends.sender_os == "windows" else None
        return Plan(server=end(ends.receiver_os, "-r", exe_server, None),
                    client=end(ends.sender_os, "-s", exe_client, xml),
                    port=p.port, listen_protocol=ends.protocol, server_exits=True,
                    expected_s=float(duration) if duration else None, client_outfile=xml,
                    ports=ntttcp_ports(p.port, p.threads, sync=not mixed))

    def interpret(self, client_text: str, server_text: str, outfile_text: str | None,
                  protocol: str) -> ParsedRun:
        # NTttcp.exe exits 0 after a failed run ("Cover up errors returned from DoWork"
        # in src/ntttcp.c): success is what the output says. The receiver's totals
        # (never a sum of its threads: 5.40 prints 0.000 per thread, microsoft/ntttcp#24)
        # are the result; the sender's XML file, else its console, gives the sent rate.
        errors = _error_lines(server_text) + _error_lines(client_text)
        sent: ParsedRun | None = None
        for text in (outfile_text, client_text):
            if text and text.strip():
                try:
                    sent = parse(text)
                    break
                except ParseError:
                    continue
        try:
            received: ParsedRun | None = parse(server_text)
        except ParseError:
            received = None
        if received is None and sent is None:
            return parse(outfile_text or client_text)   # raises: neither end has figures
        if received is None:
            assert sent is not None
            return replace(sent, error=sent.error or (errors[0] if errors else None),
                           no_receiver_report=True)
        out = received
        if sent is not None:
            out = replace(received, sent_bps=sent.throughput_bps, cpu_pct=sent.cpu_pct,
                          extra={**received.extra, "receiver_cpu_pct": received.cpu_pct})
        return replace(out, error=errors[0] if errors else out.error)


# The bound's allowance for NTttcp's timing (results.plausible.above_bound): bytes over the
# run's duration as its own clock timed it (warm-up and cool-down excluded by its timer,
# with a scheduler tick's and a buffer's worth of bytes on either side): 10 ms over the
# duration.
TIMING_ERROR_S = 0.01

TOOL = Tool(
    timing_error_s=TIMING_ERROR_S,
    name=NAME, display="NTttcp", params=NtttcpParams, driver=NtttcpDriver(),
    parse=parse, looks_like=looks_like,
    executables={'linux': 'ntttcp', 'windows': 'NTttcp.exe'},
    version=VersionProbe(args=("-h",), regex=r"(?:NTTTCP for Linux|ntttcp)[^\d]*(\d+\.\d+(?:\.\d+)?)"),
    result=Shape.RATE, detect_priority=20,
    units="Windows: MB = 2^20 bytes, mbps = 10^6 bit/s; ntttcp-for-linux: MB = 10^6 bytes")
