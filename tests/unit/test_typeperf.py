"""typeperf: the CPU counter parser on the real PDH-CSV sample, its refusals, and the argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from nicbench.errors import ParseError, UsageError
from nicbench.tools import typeperf

SAMPLE = (Path(__file__).resolve().parents[1] / "golden" / "samples"
          / "typeperf_public_winrs_sample.txt").read_text(encoding="utf-8")
HEADER, ROW = SAMPLE.splitlines()[:2]


def test_sample_cpu_column_is_found_by_header() -> None:
    # Third counter of the header, "\\AMAZONA-SDFU7B1\Processor(_Total)\% Processor Time";
    # its value in the one row is "0.005660".
    assert typeperf.parse_cpu(SAMPLE) == [0.00566]


def test_other_counters_are_ignored_and_order_does_not_matter() -> None:
    # The same header and row with the CPU column moved first: the parser must follow it.
    def swap(line: str) -> str:
        fields = line.split(",")
        return ",".join([fields[0], fields[3], fields[1], fields[2]])
    text = swap(HEADER) + "\n" + swap(ROW) + "\n"
    assert typeperf.parse_cpu(text) == [0.00566]


def test_several_samples_in_order_and_blank_ones_skipped() -> None:
    rows = [ROW, ROW.replace('"0.005660"', '"12.500000"'), ROW.replace('"0.005660"', '" "'),
            ROW.replace('"0.005660"', '"3.000000"')]
    text = "\r\n".join([HEADER, *rows, "Exiting, please wait...", "The command completed successfully."]) + "\r\n"
    assert typeperf.parse_cpu(text) == [0.00566, 12.5, 3.0]


def test_decimal_comma_locale() -> None:
    assert typeperf.parse_cpu(HEADER + "\n" + ROW.replace('"0.005660"', '"12,5"')) == [12.5]


def test_missing_counter_column_names_the_header_line() -> None:
    header = HEADER.replace("Processor(_Total)", "Processor(0)")
    with pytest.raises(ParseError, match=r"Processor\(_Total\).*line 1"):
        typeperf.parse_cpu(header + "\n" + ROW)


def test_other_counter_can_be_asked_for() -> None:
    assert typeperf.parse_cpu(SAMPLE, counter=r"\Memory\Pages/sec") == [0.0]


@pytest.mark.parametrize("text, where", [
    ("", "empty input"),
    ("Exiting, please wait...\n", "line 1"),
    ("time,cpu\n1,2\n", "line 1"),
])
def test_no_pdh_header(text: str, where: str) -> None:
    with pytest.raises(ParseError) as err:
        typeperf.parse_cpu(text)
    assert err.value.where.startswith(where)


def test_non_number_and_short_rows_are_refused() -> None:
    with pytest.raises(ParseError, match="line 2"):
        typeperf.parse_cpu(HEADER + "\n" + ROW.replace('"0.005660"', '"busy"'))
    with pytest.raises(ParseError, match="line 2"):
        typeperf.parse_cpu(HEADER + "\n" + ROW.rsplit(",", 1)[0])


def test_a_header_and_no_samples_is_no_samples() -> None:
    assert typeperf.parse_cpu(HEADER + "\nExiting, please wait...\n") == []


def test_argv() -> None:
    assert typeperf.typeperf_argv(samples=30) == [
        "typeperf", r"\Processor(_Total)\% Processor Time", "-si", "1", "-sc", "30"]
    assert typeperf.typeperf_argv(r"\Memory\Pages/sec", 2, samples=5) == [
        "typeperf", r"\Memory\Pages/sec", "-si", "2", "-sc", "5"]


@pytest.mark.parametrize("kwargs", [
    {"samples": 0}, {"samples": 3, "interval_s": 0}, {"samples": True},
    {"samples": 3, "counter": "Processor Time"},
])
def test_argv_refuses_bad_values(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        typeperf.typeperf_argv(**kwargs)
