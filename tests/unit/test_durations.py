"""The one way nicbench says a duration (CLI progress, status, the morning summary)."""

from nicbench.durations import duration


def test_durations_as_people_read_them():
    assert [duration(s) for s in (None, -3, 0, 7.9, 59, 60, 185, 3599, 3600, 3725, 90061)] \
        == ["?", "0s", "0s", "7s", "59s", "1m00s", "3m05s", "59m59s", "1h00m", "1h02m",
            "25h01m"]
