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

from nicbench.results import store as results_store
from nicbench.results.store import RunDir

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
}


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
    monkeypatch.setattr(results_store, "_fast_types", lambda: _NoneFast())
    plain = _read(raw)
    assert fast == plain
    if case == "as stored":
        assert fast[0] == "record"
    elif case not in ("lone surrogate", "-0.0 as a rate", "duplicate key",
                      "an int of 19 digits inside a string"):
        assert fast[0] != "record", fast


def test_the_first_wrong_field_in_field_order_is_named(tmp_path):
    (tmp_path / "trials.jsonl").write_bytes(
        CASES["two wrong fields, the later first in the line"] + b"\n")
    with pytest.raises(Exception) as info:
        list(RunDir(tmp_path).records(strict=True))
    assert "trials.jsonl:1: not a nicbench trial record (run_id 7 is not a string)" \
        in str(info.value)
