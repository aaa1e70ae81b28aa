"""Reading a trial record's line the fast way (orjson where it parses the line, a type
check per key the line holds, enums by look-up) says exactly what the plain way said:
the same record, or the same one line refusing it, for lines json and orjson read
differently (NaN, Infinity, integers beyond 64 bits, lone surrogates, deep nesting,
invalid UTF-8) and for lines with more than one wrong field (the first in field order
is named, as before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nicbench.results import rundir as results_store
from nicbench.results.records import OLD_KEYS
from nicbench.results.rundir import RunDir

LINE = (Path(__file__).resolve().parents[1] / "report" / "data" / "roundup"
        / "trials.jsonl").read_text().splitlines()[0]


def _with(**changes: str) -> bytes:
    """The real line with fields' JSON text replaced (kept in their place)."""
    data = json.loads(LINE)
    text = json.dumps(data)
    for name, value in changes.items():
        old = f'"{name}": {json.dumps(data[name])}'
        assert old in text
        text = text.replace(old, f'"{name}": {value}')
    return text.encode()


def _grouped(cpu: str) -> bytes:
    """The real line as format 3 writes it: its CPU keys out, ``cpu`` in their place."""
    data = json.loads(LINE)
    text = json.dumps({**{k: v for k, v in data.items() if k not in OLD_KEYS},
                       "format_version": 3, "cpu": "CPU"})
    return text.replace('"cpu": "CPU"', f'"cpu": {cpu}').encode()


CASES = {
    "as stored": LINE.encode(),
    "NaN rate": _with(throughput_bps="NaN"),
    "Infinity duration": _with(duration_s="Infinity"),
    "-Infinity cpu": _with(cpu_sender_pct="-Infinity"),
    "int beyond 64 bits as a rate": _with(throughput_bps=str(2 ** 70)),
    "int beyond 64 bits as an mtu": _with(mtu=str(2 ** 70)),
    "1e400 as a rate": _with(throughput_bps="1e400"),
    "-0.0 as a rate": _with(sent_bps="-0.0"),
    "an int of 19 digits inside a string": _with(adapter_label='"x1234567890123456789"'),
    "duplicate key": LINE.encode().replace(b'"mtu": 1500,', b'"mtu": 1500, "mtu": 9000,'),
    "an int too large for a float as a duration": _with(duration_s="1" + "0" * 400),
    "an int as a rate": _with(throughput_bps="900000000"),
    "lone surrogate": _with(adapter_label='"x\\ud800y"'),
    "deep nesting": _with(extra="[" * 5000 + "]" * 5000),
    "not UTF-8": LINE.encode().replace(b"LX-1000", b"LX-\xff000"),
    "two wrong fields, the later first in the line": (
        b'{"mtu": "big", "run_id": 7' + LINE.encode()[LINE.index(","):]),
    "a bool for a rate": _with(sent_bps="true"),
    "a string for a kind": _with(kind='"nonsense"'),
    "a list for a status": _with(status="[]"),
    "not a JSON object": b"[1, 2]",
    "torn": LINE.encode()[:300],
    "a bool for a format-2 cpu key": _with(cpu_receiver_pct="true"),
    "an int too large for a float as a format-2 cpu key": _with(
        cpu_sender_pct="1" + "0" * 400),
    "format 3, its cpu grouped": _grouped('{"sender": {"busy": 51.5, "tool": 3.25, '
                                          '"other": 40.0}, "receiver": null}'),
    "format 3, a cpu of a string": _grouped('{"sender": {"busy": "51.5"}}'),
    "format 3, a cpu side without busy": _grouped('{"sender": {"tool": 1.0}}'),
    "format 3, a cpu over 100": _grouped('{"receiver": {"busy": 100.5}}'),
}


def _the_full_way(monkeypatch) -> None:
    """json alone, every key's type looked at in field order, every record by from_dict
    and judged by plausible.impossible."""
    monkeypatch.setattr(results_store, "_orjson", None)
    monkeypatch.setattr(results_store, "_fast_types", lambda: _NoneFast())
    monkeypatch.setattr(results_store, "plainly_possible", lambda data: False)


class _NoneFast(dict):
    """No value passes at a glance: every line's keys are looked at in field order."""

    def get(self, key, default=None):
        return frozenset()


def _read(raw: bytes) -> tuple[str, object]:
    try:
        return "record", results_store._record(raw, "trials.jsonl:1", None)
    except results_store._BadLine as exc:
        return "refused", (str(exc), exc.unfinished)
    except Exception as exc:       # compared as they are
        return "raised", (type(exc).__name__, str(exc))


@pytest.mark.parametrize("case", list(CASES))
def test_a_line_reads_as_json_alone_read_it(case, monkeypatch):
    raw = CASES[case]
    fast = _read(raw)
    monkeypatch.setattr(results_store, "_orjson", None)
    _the_full_way(monkeypatch)
    plain = _read(raw)
    assert fast == plain
    if case in ("as stored", "format 3, its cpu grouped"):
        assert fast[0] == "record"
    elif case not in ("lone surrogate", "-0.0 as a rate", "duplicate key", "an int as a rate",
                      "an int of 19 digits inside a string"):
        assert fast[0] != "record", fast


def test_the_first_wrong_field_in_field_order_is_named(tmp_path):
    (tmp_path / "trials.jsonl").write_bytes(
        CASES["two wrong fields, the later first in the line"] + b"\n")
    with pytest.raises(Exception) as info:
        list(RunDir(tmp_path).records(strict=True))
    assert "trials.jsonl:1: not a nicbench trial record (run_id 7 is not a string)" \
        in str(info.value)


# Real lines of every kind the project keeps (throughput, refusals, stalls, UDP, latency,
# bidirectional, loaded, netPIPE curves, format 1), each changed at the plain path's
# every boundary: the fast reading accepts exactly what the full one accepts, makes the
# same record of it, and refuses the rest in the same words.
DATA = Path(__file__).resolve().parents[1]
SOURCES = [*sorted(DATA.glob("report/data/*/trials.jsonl")),
           DATA / "unit" / "data" / "stored" / "udp_trials.jsonl"]
MAX_REP = 10_001 * 15 * 2
CHANGES: list[dict] = [
    {}, {"throughput_bps": -1}, {"throughput_bps": 0}, {"throughput_bps": 1e13},
    {"throughput_bps": 1.0000001e13}, {"throughput_bps": None},
    {"throughput_bps": None, "status": "failed"}, {"sent_bps": -0.5}, {"sent_bps": 2e13},
    {"offered_bps": 3e13}, {"offered_bps": 5}, {"status": "nonsense"},
    {"status": "skipped"}, {"kind": "skipped", "repetition": None},
    {"kind": "given-up", "repetition": None}, {"kind": "udp-search"}, {"kind": "bad"},
    {"kind": "repetition", "repetition": None}, {"kind": "udp-search", "repetition": None},
    {"failure": ""}, {"failure": "bad"}, {"failure": None}, {"failure": "refused"},
    {"repetition": 0}, {"repetition": 1}, {"repetition": MAX_REP},
    {"repetition": MAX_REP + 1}, {"repetition": -3}, {"mtu": 67}, {"mtu": 68},
    {"mtu": 65536}, {"mtu": 65537}, {"raw": {"client": "../x"}}, {"raw": {"client": "raw/"}},
    {"raw": {"client": "raw/a/../b"}}, {"raw": {"c": "raw/x.txt"}}, {"raw": {"c": 5}},
    {"raw": {"c": "raw\\x"}}, {"raw": {}}, {"format_version": 1}, {"format_version": 3},
    {"points": [{"size_bytes": 1, "throughput_bps": 1.0}]}, {"points": [{"size_bytes": 1}]},
    {"udp": {"lost": 0, "total": 1, "loss_pct": 0.0, "jitter_ms": 0.1}}, {"udp": {"x": 1}},
    {"latency": None}, {"bidir": None}, {"frame": None}, {"beside": []},
    {"beside": [{"tool": "x"}]}, {"zzz": 1}, {"adapter_label": None},
    {"cpu_sender_pct": 101}, {"cpu_receiver_pct": -1}, {"cpu_sender_pct": None},
    {"cpu_sender_other_pct": 5.0, "cpu_sender_tool_pct": 2}, {"cpu_receiver_tool_pct": "x"},
    {"cpu_sender_pct": 100, "cpu_receiver_pct": 0}, {"cpu": {"sender": {"busy": 1.0}}},
]
# Format 3: the CPU keys grouped (the line without them, its cpu one of these).
CPUS: list[object] = [
    None, {"sender": {"busy": 50.0, "tool": 3.0, "other": 40.0}, "receiver": None},
    {"sender": None, "receiver": {"busy": 100, "tool": None, "other": None}},
    {"sender": {"busy": 100.5}}, {"receiver": {"busy": -0.1}}, {"sender": {"tool": 1.0}},
    {"sender": {"busy": 1.0, "x": 2}}, {"sender": {"busy": True}}, {"sender": []},
    {"host": None}, [], "50", {"sender": {"busy": 5, "tool": "2"}},
]
DROPS = ["adapter_label", "repetition", "format_version", "points", "raw", "mtu", "hosts"]


def _lines() -> list[bytes]:
    out = []
    for path in SOURCES:
        lines = path.read_bytes().splitlines()
        out += lines[:: max(1, len(lines) // 12)]
    return out


def _variants(line: bytes) -> list[bytes]:
    data = json.loads(line)
    out = [json.dumps({**data, **change}).encode() for change in CHANGES]
    out += [json.dumps({k: v for k, v in data.items() if k != drop}).encode()
            for drop in DROPS if drop in data]
    grouped = {k: v for k, v in data.items() if k not in OLD_KEYS} | {"format_version": 3}
    out += [json.dumps(grouped | {"cpu": cpu}).encode() for cpu in CPUS]
    return out


def test_the_fast_reading_accepts_what_the_full_one_accepts_and_refuses_the_same(
        monkeypatch):
    lines = [v for line in _lines() for v in _variants(line)]
    assert len(lines) > 1000
    taken = []
    plainly = results_store.plainly_possible
    monkeypatch.setattr(results_store, "plainly_possible",
                        lambda data: taken.append(plainly(data)) or taken[-1])
    fast = [_read(raw) for raw in lines]
    _the_full_way(monkeypatch)
    full = [_read(raw) for raw in lines]
    for raw, a, b in zip(lines, fast, full, strict=True):
        assert a == b, raw
        if a[0] == "record":
            assert a[1].to_dict() == b[1].to_dict()
    assert {"record", "refused"} <= {a[0] for a in fast}
    assert sum(taken) > 200             # the fast way was taken, not only the full one
    assert len(taken) - sum(taken) > 200


def test_an_integer_too_large_for_a_float_is_one_line_not_a_crash():
    kind, (message, _) = _read(CASES["an int too large for a float as a duration"])
    assert kind == "refused"
    assert "not a nicbench trial record (duration_s 1000000000000000000000000000000000000" \
        in message and "is not a finite number)" in message
