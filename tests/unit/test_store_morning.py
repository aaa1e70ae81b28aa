"""A campaign's morning summary judges its night against the results store: the nights
before it need not sit beside it (each controller, each month, may have a directory of its
own); what the store holds of them is the history."""

from __future__ import annotations

import re

import numpy as np
import pytest
from nights import campaign_night

from nicbench.history.regressions import campaign_changes
from nicbench.store import open_store, resolve

GBE = 930e6                   # below the 1 Gbit/s link's 941.5 Mbit/s goodput at MTU 1500


def test_the_morning_summary_finds_the_change_against_the_store(tmp_path, store_at):
    rng = np.random.default_rng(5)
    earlier, tonight = tmp_path / "october", tmp_path / "november"
    earlier.mkdir()
    tonight.mkdir()
    for i in range(3):
        campaign_night(earlier / f"night-{i + 1}", f"2026110{i + 1}-030000",
                       {"gbe": list(GBE * (1 + rng.normal(0, 0.003, 4)))},
                       driver_version="3.2", store=store_at)
    runner = campaign_night(tonight / "night-4", "20261104-030000",
                            {"gbe": list(GBE * 0.95 * (1 + rng.normal(0, 0.003, 4)))},
                            driver_version="3.3", store=store_at)
    [line] = runner.morning.history
    said = re.fullmatch(r"gbe tcp MTU 1500: (-\d\.\d) % \[-\d\.\d, -\d\.\d\] since "
                        r"\d{4}-\d\d-\d\d, "
                        r"gbe driver_version 3\.2 -> 3\.3", line)
    assert said is not None, line
    assert float(said.group(1)) == pytest.approx(-5, abs=0.6)
    assert f"- {line}" in (tonight / "night-4" / "summary.md").read_text()
    # the directories alone hold no history for it: the store made the difference
    assert campaign_changes(tonight / "night-4") == []
    with open_store(resolve(store_at), write=False) as store:
        assert len(store.runs()) == 4
