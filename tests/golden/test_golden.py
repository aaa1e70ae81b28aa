"""Golden-file tests: every ``cases/*.yaml`` runs a tool parser on a real captured output.

A case is data, not code. Adding a case means adding one YAML file::

    tool: iperf3                      # imports nicbench.tools.<tool> and calls its parse(text)
    input: samples/iperf3_tcp_client.json   # relative to tests/golden/
    encoding: utf-8                   # optional; the file is decoded with it, newlines kept as-is
    expected:                         # a subset of ParsedRun.to_json(); absent keys are not checked
      protocol: tcp
      throughput_bps: 21793769512.334747
      udp: {lost: 0, total: 191}      # nested mappings are compared key by key, also a subset
      sent_bps: null                  # null asserts the field is None / absent from to_json()

A size sweep (netPIPE, netio) may check its points by count and ends instead of listing all::

    expected:
      points_count: 82                                  # len(points)
      points_first: {size_bytes: 1, throughput_bps: 793289.0}   # points[0], as a subset
      points_last: {size_bytes: 65539}                  # points[-1], as a subset

Inputs that must be refused::

    expected: {raises: ParseError, match: "line 3"}   # match: optional regex on str(error)

Numbers compare with ``pytest.approx(rel=1e-6)``; strings, booleans and null compare exactly;
lists compare element by element and must have the same length. Expected values must be read
off the input file by a person (with a YAML comment for any arithmetic), never produced by
running the parser: a golden value copied from the parser's own output cannot catch its bugs.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from nicbench import errors
from nicbench.tools.base import ParsedRun

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases").glob("*.yaml"))

# Keys a case may name under ``expected``: what to_json() can print plus the dataclass fields,
# so that a misspelt key fails loudly instead of silently comparing None with None.
_POINT_KEYS = {"points_count", "points_first", "points_last"}
_KNOWN_KEYS = {f.name for f in dataclasses.fields(ParsedRun)} | {"raises", "match"} | _POINT_KEYS
_CASE_KEYS = {"tool", "input", "encoding", "expected"}
_NUMBER_LIKE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _load_case(path: Path) -> dict[str, Any]:
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(case, dict), f"{path.name}: a case file must be a mapping"
    unknown = set(case) - _CASE_KEYS
    assert not unknown, f"{path.name}: unknown top-level keys {sorted(unknown)}"
    for key in ("tool", "input", "expected"):
        assert key in case, f"{path.name}: missing '{key}'"
    unknown = set(case["expected"]) - _KNOWN_KEYS
    assert not unknown, f"{path.name}: expected names unknown fields {sorted(unknown)}"
    return case


def assert_matches(actual: Any, expected: Any, where: str = "expected") -> None:
    """Check ``expected`` (from YAML) against ``actual`` (from to_json()), as a subset."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected a mapping, parser gave {actual!r}"
        for key, want in expected.items():
            # to_json() leaves out optional fields that are None, so absent means None.
            assert_matches(actual.get(key), want, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, (list, tuple)), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{where}: expected {len(expected)} items, parser gave {len(actual)}")
        for i, (got, want) in enumerate(zip(actual, expected, strict=False)):
            assert_matches(got, want, f"{where}[{i}]")
    elif expected is None or isinstance(expected, (bool, str)):
        if (isinstance(expected, str) and _NUMBER_LIKE.match(expected)
                and isinstance(actual, (int, float)) and not isinstance(actual, bool)):
            # PyYAML reads 1e6 (no dot, no exponent sign) as a string: say so, don't mislead.
            pytest.fail(f"{where}: YAML read {expected!r} as a string; write a number such as "
                        f"1000000.0 or 1.0e+6")
        assert actual == expected, f"{where}: expected {expected!r}, parser gave {actual!r}"
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), (
            f"{where}: expected {expected!r}, parser gave {actual!r}")
        assert actual == pytest.approx(expected, rel=1e-6), (
            f"{where}: expected {expected!r}, parser gave {actual!r}")
    else:  # pragma: no cover - YAML only produces the types above
        pytest.fail(f"{where}: cannot compare a {type(expected).__name__}")


def assert_points(points: list, expected: dict[str, Any]) -> None:
    """Check the ``points_count`` / ``points_first`` / ``points_last`` keys of a case."""
    if "points_count" in expected:
        assert len(points) == expected["points_count"], (
            f"expected.points_count: expected {expected['points_count']}, "
            f"parser gave {len(points)} points")
    for key, index in (("points_first", 0), ("points_last", -1)):
        if key in expected:
            assert points, f"expected.{key}: parser gave no points"
            assert_matches(points[index], expected[key], f"expected.{key}")


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_golden(case_path: Path) -> None:
    case = _load_case(case_path)
    parser = importlib.import_module(f"nicbench.tools.{case['tool']}")
    # Decode ourselves and keep newlines untouched: parsers must cope with CRLF from Windows.
    text = (HERE / case["input"]).read_bytes().decode(case.get("encoding", "utf-8"))
    expected = dict(case["expected"])

    if "raises" in expected:
        exc_type = getattr(errors, expected.pop("raises"))
        with pytest.raises(exc_type, match=expected.pop("match", None)):
            parser.parse(text)
        return

    run = parser.parse(text)
    assert isinstance(run, ParsedRun), f"parse() returned {type(run).__name__}, not ParsedRun"
    got = run.to_json()
    assert_points(got["points"], {k: expected.pop(k) for k in _POINT_KEYS & set(expected)})
    assert_matches(got, expected)


def test_there_are_cases() -> None:
    assert CASES, "no golden cases found under tests/golden/cases"


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_case_input_exists(case_path: Path) -> None:
    case = _load_case(case_path)
    assert (HERE / case["input"]).is_file(), f"{case_path.name}: no file {case['input']}"


# The comparator itself must be able to fail, or every golden test would pass vacuously.
@pytest.mark.parametrize("actual, expected", [
    ({"throughput_bps": 1.0e9}, {"throughput_bps": 1.1e9}),
    ({"throughput_bps": None}, {"throughput_bps": 5.0}),
    ({"udp": {"lost": 1, "total": 10}}, {"udp": {"lost": 2}}),
    ({"udp": None}, {"udp": {"lost": 0}}),
    ({"version": "3.12"}, {"version": "3.1"}),
    ({"points": [{"size_bytes": 1}]}, {"points": []}),
    ({}, {"error": "refused"}),
    ({"throughput_bps": 1000000.0}, {"throughput_bps": "1e6"}),
])
def test_comparator_rejects_mismatch(actual: dict, expected: dict) -> None:
    with pytest.raises(pytest.fail.Exception if expected.get("throughput_bps") == "1e6"
                       else AssertionError):
        assert_matches(actual, expected)


@pytest.mark.parametrize("points, expected", [
    ([{"size_bytes": 1}], {"points_count": 2}),
    ([], {"points_first": {"size_bytes": 1}}),
    ([{"size_bytes": 1}, {"size_bytes": 2}], {"points_first": {"size_bytes": 2}}),
    ([{"size_bytes": 1}, {"size_bytes": 2}], {"points_last": {"size_bytes": 1}}),
])
def test_points_keys_reject_mismatch(points: list, expected: dict) -> None:
    with pytest.raises(AssertionError):
        assert_points(points, expected)


def test_comparator_accepts_subset_within_tolerance() -> None:
    assert_matches({"throughput_bps": 1.0e9, "streams": 2, "extra": {"a": 1}},
                   {"throughput_bps": 1.0000001e9, "streams": 2, "sent_bps": None})
