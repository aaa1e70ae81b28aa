"""Edge cases of the iperf 2 and iperf3 parsers that the golden files do not cover.

Inputs here are real samples from tests/golden/ cut short, damaged or re-arranged on purpose
(each test says how), so that what is tested is the parser's handling of bad input, not a
typed-up imitation of iperf.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nicbench.errors import ParseError
from nicbench.tools import iperf2, iperf3

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def sample(name: str) -> str:
    for folder in ("samples", "captures"):
        path = GOLDEN / folder / name
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(name)


def cut(text: str, keep_lines: int) -> str:
    return "\n".join(text.splitlines()[:keep_lines]) + "\n"


# --------------------------------------------------------------------- empty and garbage

@pytest.mark.parametrize("parser", [iperf2, iperf3], ids=["iperf2", "iperf3"])
@pytest.mark.parametrize("text", ["", "\n\n", "   \n\t\n"], ids=["empty", "newlines", "blank"])
def test_empty_input_is_refused(parser, text):
    with pytest.raises(ParseError, match="empty input"):
        parser.parse(text)


@pytest.mark.parametrize("parser", [iperf2, iperf3], ids=["iperf2", "iperf3"])
def test_garbage_is_refused_with_a_line_number(parser):
    garbage = "total 12\ndrwxr-xr-x 2 root root 4096 .\nPING 10.0.0.1 56(84) bytes of data.\n"
    with pytest.raises(ParseError, match=r"line \d+") as err:
        parser.parse(garbage)
    assert err.value.tool == parser.NAME
    assert err.value.expected  # says what it looked for


def test_iperf3_garbage_json_names_where_it_stopped():
    with pytest.raises(ParseError, match=r"line 1 column \d+"):
        iperf3.parse('{"start": {"version": "iperf 3.12"}, oops}')


def test_iperf3_json_documents_must_be_objects():
    text = sample("iperf3_error_connrefused.json") + "\n42\n"
    line_of_42 = text.splitlines().index("42") + 1
    with pytest.raises(ParseError, match=rf"JSON object.*line {line_of_42}\)"):
        iperf3.parse(text)


# --------------------------------------------------------------------- truncated output

def test_iperf2_text_cut_after_the_header():
    text = cut(sample("iperf2_tcp_client_text.txt"), 6)  # up to the "[ ID] Interval" line
    with pytest.raises(ParseError, match=r"result row.*line 6"):
        iperf2.parse(text)


def test_iperf2_text_cut_after_interval_rows():
    # Rows 0-1, 1-2, 2-3 survive; the whole-run row 0.0000-3.0175 is gone. The first
    # interval row starts at 0 too and must not be taken for the whole run.
    text = cut(sample("iperf2_tcp_client_text.txt"), 9)
    with pytest.raises(ParseError, match=r"whole-run row.*line (8|9)"):
        iperf2.parse(text)


def test_iperf2_csv_cut_before_the_whole_run_rows():
    text = cut(sample("iperf2_tcp_client_csv_P2_i1.txt"), 4)  # the four interval rows only
    with pytest.raises(ParseError, match=r"whole-run row.*line \d"):
        iperf2.parse(text)


def test_iperf2_two_streams_with_one_whole_run_row_missing():
    # Server of a -P 2 run (no interval rows) cut right after stream [3]'s whole-run row:
    # [2] connected but its row never came.
    lines = sample("iperf2_tcp_server_enhanced.txt").splitlines()
    end = next(i for i, l in enumerate(lines) if l.startswith("[  3] 0.0000-1.9989"))
    with pytest.raises(ParseError, match=rf"2 streams.*line {end + 1}\)"):
        iperf2.parse("\n".join(lines[: end + 1]))


def test_iperf2_client_cut_inside_the_last_interval_of_two_streams():
    # Enhanced -P 2 client cut right after stream [1]'s whole-run row: [2] has interval rows
    # but no whole-run row.
    lines = sample("iperf2_tcp_client_enhanced_P2_w256K_l64K_M1400.txt").splitlines()
    end = next(i for i, l in enumerate(lines) if l.startswith("[  1] 0.0000-2.0065"))
    with pytest.raises(ParseError, match=r"whole-run row for stream 2.*line \d+"):
        iperf2.parse("\n".join(lines[: end + 1]))


def test_iperf2_udp_client_cut_inside_the_server_report_falls_back_to_sender():
    # Cut after "Server Report:" (header only): no receiver row, so the sent rate is all
    # there is, and rate_from says so.
    lines = sample("iperf2_udp_client_text.txt").splitlines()
    run = iperf2.parse("\n".join(lines[:-1]))
    assert run.throughput_bps == pytest.approx(105e6)
    assert run.extra["rate_from"] == "sender"
    assert run.udp is None


def test_iperf2_csv_with_an_unknown_column_count():
    row = sample("iperf2_tcp_client_csv.txt").splitlines()[0] + ",42"
    with pytest.raises(ParseError, match=r"columns, found 10.*line 1"):
        iperf2.parse(row)


def test_iperf2_csv_with_a_stray_line():
    text = sample("iperf2_tcp_client_csv.txt") + "Segmentation fault\n"
    with pytest.raises(ParseError, match=r"CSV row.*line 4"):
        iperf2.parse(text)


def test_iperf3_json_cut_mid_document():
    text = sample("iperf3_tcp_client.json")
    with pytest.raises(ParseError, match=r"complete JSON document.*line \d+ column \d+"):
        iperf3.parse(text[: len(text) // 2])


def test_iperf3_json_with_no_end_and_no_error():
    doc = json.loads(sample("iperf3_tcp_client.json"))
    doc["end"] = {}
    with pytest.raises(ParseError, match=r"end.sum_received.*\(end is empty"):
        iperf3.parse(json.dumps(doc))


def test_iperf3_text_cut_before_the_summary():
    lines = sample("iperf3_tcp_client_text_V.txt").splitlines()
    sep = next(i for i, l in enumerate(lines) if l.startswith("- - -"))
    with pytest.raises(ParseError, match=rf"summary line.*line {sep}"):
        iperf3.parse("\n".join(lines[:sep]))


def test_iperf3_text_two_streams_with_one_summary_missing():
    # Keep stream [5]'s sender/receiver lines, drop [7]'s and the [SUM] lines.
    lines = [l for l in sample("iperf3_lab_tcp_P2_client_text.txt").splitlines()
             if not (re.match(r"^\[(  7|SUM)\].*(sender|receiver)$", l.strip()))]
    with pytest.raises(ParseError, match=r"2 streams.*line \d+"):
        iperf3.parse("\n".join(lines))


# --------------------------------------------------------------------- line endings, sessions

def test_iperf2_reads_windows_line_endings():
    text = sample("iperf2_udp_client_text.txt").replace("\n", "\r\n")
    run = iperf2.parse(text)
    assert run.throughput_bps == pytest.approx(105e6)
    assert (run.udp.lost, run.udp.total) == (0, 26753)


def test_iperf3_reads_windows_line_endings():
    run = iperf3.parse(sample("pkb__iperf3_win_udp_client.txt").replace("\n", "\r\n"))
    assert (run.udp.lost, run.udp.total) == (35148, 62949)


def test_iperf3_server_json_with_several_tests_returns_the_last():
    first = sample("iperf3_tcp_server.json")
    second = sample("iperf3_tcp_P2_server.json")
    run = iperf3.parse(first + second)
    assert run.streams == 2
    assert run.throughput_bps == pytest.approx(
        json.loads(second)["end"]["sum_received"]["bits_per_second"])
    assert run.extra["sessions"] == 2


def test_iperf3_error_with_figures_keeps_both():
    doc = json.loads(sample("iperf3_tcp_client.json"))
    doc["error"] = "interrupt - the client has terminated"
    run = iperf3.parse(json.dumps(doc))
    assert run.error == "interrupt - the client has terminated"
    assert run.throughput_bps == pytest.approx(doc["end"]["sum_received"]["bits_per_second"])


# --------------------------------------------------------------------- iperf3 before 3.11

def _legacy_udp_client() -> dict:
    """iperf3_udp_client.json as iperf3 < 3.11 writes it: only end.sum, no sum_sent/_received."""
    doc = json.loads(sample("iperf3_udp_client.json"))
    del doc["end"]["sum_sent"], doc["end"]["sum_received"]
    return doc


def test_iperf3_legacy_udp_client_reports_the_sent_rate_and_says_so():
    doc = _legacy_udp_client()
    legacy = doc["end"]["sum"]
    run = iperf3.parse(json.dumps(doc))
    assert run.extra["rate_from"] == "sender"
    assert run.throughput_bps == pytest.approx(legacy["bits_per_second"])
    assert run.sent_bps == pytest.approx(legacy["bits_per_second"])
    assert (run.udp.lost, run.udp.total) == (legacy["lost_packets"], legacy["packets"])


def test_iperf3_legacy_udp_client_uses_embedded_server_output_for_received_rate():
    doc = _legacy_udp_client()
    doc["server_output_json"] = json.loads(sample("iperf3_udp_server.json"))
    received = doc["server_output_json"]["end"]["sum_received"]
    run = iperf3.parse(json.dumps(doc))
    assert run.extra["rate_from"] == "server_output"
    assert run.throughput_bps == pytest.approx(received["bits_per_second"])
    assert run.sent_bps == pytest.approx(doc["end"]["sum"]["bits_per_second"])
    assert (run.udp.lost, run.udp.total) == (received["lost_packets"], received["packets"])


def test_iperf3_unreadable_embedded_server_text_is_reported_not_fatal():
    doc = json.loads(sample("iperf3_udp_client_get_server_output_serverText.json"))
    doc["server_output_text"] = "Accepted connection from 127.0.0.1, port 1\n"
    run = iperf3.parse(json.dumps(doc))
    assert run.throughput_bps == pytest.approx(doc["end"]["sum_received"]["bits_per_second"])
    assert "server_parse_error" in run.extra and "server" not in run.extra


# --------------------------------------------------------------------- looks_like

IPERF2_INPUTS = ["iperf2_tcp_client_text.txt", "iperf2_tcp_server_csv.txt",
                 "iperf2_udp_server_enhanced_lossy.txt", "iperf2_error_connrefused_csv.txt",
                 "iperf2_v2.0.x_udp_client_csv_public.txt"]
IPERF3_INPUTS = ["iperf3_tcp_client.json", "iperf3_error_connrefused.json",
                 "iperf3_udp_server_text.txt", "pkb__iperf3_win_udp_client.txt",
                 "iperf3_lab_text_connrefused.txt"]


@pytest.mark.parametrize("name", IPERF2_INPUTS)
def test_looks_like_iperf2(name):
    text = sample(name)
    assert iperf2.looks_like(text) and not iperf3.looks_like(text)


@pytest.mark.parametrize("name", IPERF3_INPUTS)
def test_looks_like_iperf3(name):
    text = sample(name)
    assert iperf3.looks_like(text) and not iperf2.looks_like(text)


@pytest.mark.parametrize("text", ["", "hello\n", '{"a": 1', "42\n"])
def test_looks_like_neither(text):
    assert not iperf2.looks_like(text) and not iperf3.looks_like(text)
