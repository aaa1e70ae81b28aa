"""The netio command lines: netio's own size series, or one block size with -b."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from nicbench.tools.drivers import DRIVERS, Endpoints

ENDS = Endpoints(receiver_addr="198.18.0.1", sender_addr="198.18.0.2", protocol="tcp")


def test_default_runs_netios_own_series():
    plan = DRIVERS["netio"].plan("netio", "netio", {}, ENDS, "t1")
    assert plan.server == ["netio", "-s", "-t", "-p", "18767"]
    assert plan.client == ["netio", "-t", "-p", "18767", "198.18.0.1"]


def test_one_block_size():
    plan = DRIVERS["netio"].plan("netio", "netio", {"block": "8K"}, ENDS, "t1")
    assert plan.client == ["netio", "-t", "-p", "18767", "-b", "8k", "198.18.0.1"]


@pytest.mark.parametrize("bad", ["1500", 0])
def test_block_must_be_whole_kilobytes(bad):
    with pytest.raises(ValidationError, match="whole kilobytes"):
        DRIVERS["netio"].params({"block": bad})
