"""A lab adapter's shaping: the spec's ceilings (``nicbench lab shape``), what state.json
keeps of them, and the ``shaping`` fact the manifest records (only where a link is shaped).

On the lab itself: tests/lab/test_history_lab.py (the rate measured and recorded)."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from nicbench.cli.lab import _env_lab_spec
from nicbench.errors import LabError
from nicbench.lab.lab import LabSpec, render_inventory
from nicbench.results.facts import InterfaceFacts
from nicbench.results.manifest import Manifest

REPORT_DATA = Path(__file__).resolve().parents[1] / "report" / "data"


def test_a_ceiling_slows_the_adapters_links_and_leaves_its_line_rate():
    spec = LabSpec(adapters=("gbe", "pci32"), ceilings={"gbe": "500mbit"})
    gbe = spec.adapter("gbe")
    assert (gbe.shaped_rate, gbe.rate) == ("500mbit", "1gbit")
    assert spec.adapter("pci32").shaped_rate == "600mbit"       # its own ceiling, untouched
    assert [link.adapter.shaped_rate for link in spec.links()] == ["500mbit", "600mbit"]
    # the inventory names the card's line rate, which a slowed card keeps
    assert render_inventory(spec, ".lab") == render_inventory(replace(spec, ceilings={}), ".lab")
    # pci32 can be given more than its own 600mbit cap, up to its 1gbit line
    assert LabSpec(adapters=("pci32",), ceilings={"pci32": "800mbit"}) \
        .adapter("pci32").shaped_rate == "800mbit"


def test_state_keeps_ceilings_only_once_there_are_some():
    plain = LabSpec(adapters=("gbe",))
    assert "ceilings" not in plain.to_json()          # a lab never shaped: state as before
    shaped = replace(plain, ceilings={"gbe": "500mbit"})
    stored = json.loads(json.dumps(shaped.to_json()))
    assert stored["ceilings"] == {"gbe": "500mbit"}
    assert LabSpec(**{**stored, "adapters": tuple(stored["adapters"])}) == shaped


@pytest.mark.parametrize(("ceilings", "says"), [
    ({"gbe": "2gbit"}, "2gbit is not between 1mbit and gbe's line rate 1gbit"),
    ({"gbe": "999kbit"}, "999kbit is not between 1mbit"),
    ({"gbe": "0mbit"}, "rate '0mbit' is not like 100mbit or 1gbit"),
    ({"gbe": "fast"}, "rate 'fast' is not like"),
    ({"gbe": "1e3mbit"}, "rate '1e3mbit' is not like"),
    ({"gbe": "nanmbit"}, "rate 'nanmbit' is not like"),
    ({"gbe": 500}, "rate 500 is not like"),
    ({"fe": "50mbit"}, "cannot shape 'fe': not an adapter of this lab (gbe)"),
    (["gbe"], "ceilings ['gbe'] must map adapters to rates"),
])
def test_bad_ceilings_are_refused_in_one_line(ceilings, says):
    with pytest.raises(LabError, match="^" + re.escape(says)):
        LabSpec(adapters=("gbe",), ceilings=ceilings)


def test_a_ceiling_is_bounded_by_the_lab_wide_rate():
    with pytest.raises(LabError, match="line rate 100mbit"):
        LabSpec(adapters=("gbe",), rate="100mbit", ceilings={"gbe": "500mbit"})
    assert LabSpec(adapters=("gbe",), rate="100mbit", ceilings={"gbe": "50mbit"}) \
        .adapter("gbe").shaped_rate == "50mbit"


def test_lab_up_keeps_recorded_ceilings_unless_the_command_line_sets_the_rate():
    recorded = LabSpec(adapters=("gbe", "fe"), ceilings={"gbe": "500mbit", "fe": "10mbit"}
                       ).to_json()
    args = argparse.Namespace(adapters=None, pairs=None, rate=None)
    assert _env_lab_spec(args, recorded).ceilings == {"gbe": "500mbit", "fe": "10mbit"}
    fewer = argparse.Namespace(adapters="gbe", pairs=None, rate=None)
    assert _env_lab_spec(fewer, recorded).ceilings == {"gbe": "500mbit"}
    anew = argparse.Namespace(adapters=None, pairs=None, rate="1gbit")
    assert _env_lab_spec(anew, recorded).ceilings == {}


def test_the_manifest_records_shaping_only_where_a_link_is_shaped(tmp_path):
    m = Manifest.read(REPORT_DATA / "run-a" / "manifest.json")
    m.interfaces["gbe/nbr-a"] = replace(m.interfaces["gbe/nbr-a"], shaping="tbf rate 500mbit")
    m.write(tmp_path / "manifest.json")
    stored = json.loads((tmp_path / "manifest.json").read_text())
    assert stored["interfaces"]["gbe/nbr-a"]["shaping"] == "tbf rate 500mbit"
    assert "shaping" not in stored["interfaces"]["gbe/nbr-b"]     # unshaped: as before
    back = Manifest.read(tmp_path / "manifest.json")
    assert back.interfaces["gbe/nbr-a"].shaping == "tbf rate 500mbit"
    assert back.interfaces["gbe/nbr-b"].shaping is None
    assert type(back.interfaces["gbe/nbr-a"]) is InterfaceFacts
