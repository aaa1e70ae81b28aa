"""Nights of real runs for the history tests: each a real results directory made by the
engine on fake hosts (``platforms/fake.py``), every trial the lab's captured iperf3 JSON
with its receiver's rate set to the figure the test chooses, the adapter's driver version
as the test says, the run's start moved to the night it stands for."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from datetime import datetime, UTC
from pathlib import Path
from unittest import mock

import numpy as np

from nicbench.config.inventory import Inventory
from nicbench.config.loader import load_profile
from nicbench.execution.runner import Runner
from nicbench.platforms.fake import Answer, FakeHosts, FakeInterface, ToolCall
from nicbench.results.manifest import Manifest
from nicbench.tools.registry import CATALOG

CAPTURES = Path(__file__).resolve().parent / "golden" / "captures"
IPERF3_TCP = json.loads((CAPTURES / "iperf3_lab_tcp_P2_client.json").read_text())

PROFILE = """\
    name: nightly
    source: nicbench history test
    repetitions: {reps}
    select: median
    mtu: [1500]
    tests:
      - {{name: tcp, tool: iperf3, params: {{duration_s: 1}}}}
    """


def inventory(adapters: Sequence[str] = ("gbe",)) -> Inventory:
    """Hosts nb-a and nb-b, one pair per adapter (named as the adapter), 1 Gbit/s links."""
    return Inventory.model_validate({
        "hosts": [{"name": n, "address": f"198.19.0.{i}", "ssh": {"known_hosts": "k"}}
                  for i, n in ((1, "nb-a"), (2, "nb-b"))],
        "adapters": [{"id": a, "vendor": "v", "model": f"Card {a}", "driver": {"name": "d"},
                      "link_rate": "1gbit"} for a in adapters],
        "pairs": [{"name": a, "adapter": a,
                   "a": {"host": "nb-a", "interface": f"t{k}", "address": f"198.18.{k}.1"},
                   "b": {"host": "nb-b", "interface": f"t{k}", "address": f"198.18.{k}.2"}}
                  for k, a in enumerate(adapters)]})


def iperf3_at(rate_bps: float) -> str:
    doc = json.loads(json.dumps(IPERF3_TCP))
    doc["end"]["sum_received"]["bits_per_second"] = rate_bps
    doc["end"]["sum_sent"]["bits_per_second"] = rate_bps * 1.01
    return json.dumps(doc)


def night(out: Path, day: str, rates: dict[str, Sequence[float]], *,
          driver_version: str = "1.0", reps: int | None = None) -> Path:
    """One run into ``out`` (a new directory): adapter -> the rate of each repetition, in
    order; started at 03:00 UTC on ``day`` (YYYY-MM-DD), run id ``<day>-030000``."""
    n = reps or len(next(iter(rates.values())))
    adapters = list(rates)
    inv = inventory(adapters)
    queue = {a: list(r) for a, r in rates.items()}
    address_of = {f"198.18.{k}.1": a for k, a in enumerate(adapters)}

    def answer(call: ToolCall) -> Answer:
        adapter = next(a for addr, a in address_of.items() if addr in call.argv)
        return Answer(client=iperf3_at(queue[adapter].pop(0)))

    hosts = FakeHosts(answer)
    for side, host in ((1, "nb-a"), (2, "nb-b")):
        hosts.add(host, {f"t{k}": FakeInterface(addresses=(f"198.18.{k}.{side}",),
                                                 driver="fake-nic",
                                                 driver_version=driver_version)
                         for k in range(len(adapters))})
    profile_file = out.parent / f"{out.name}.profile.yaml"
    profile_file.write_text(textwrap.dedent(PROFILE.format(reps=n)))
    run_id = day.replace("-", "") + "-030000"
    with mock.patch("nicbench.execution.opening.new_run_id", return_value=run_id):
        run_dir = Runner(load_profile(profile_file, CATALOG), inv, out, hosts=hosts).run()
    assert all(not q for q in queue.values()), "every rate was measured"
    manifest = Manifest.read(run_dir.manifest_file)
    manifest.started_at = datetime.fromisoformat(day).replace(
        hour=3, tzinfo=UTC).timestamp()
    manifest.write(run_dir.manifest_file)
    return run_dir.path


CAMPAIGN = """\
    format_version: 1
    name: {name}
    report: false
    runs:
      - profile: {profile}
    """


def campaign_night(out: Path, run_id: str, rates: dict[str, Sequence[float]], *,
                   driver_version: str = "1.0", name: str = "nightly", store: str | None = None):
    """One campaign (one run of the nightly profile) into ``out``, by the campaign engine
    on fake hosts; its run's id is ``run_id``. With ``store``, its records go to that
    results store as they are stored and the morning summary reads its history from it,
    as ``nicbench campaign --store`` wires them. Returns the CampaignRunner, which has run."""
    from nicbench.config.loader import load_campaign
    from nicbench.execution.campaign import CampaignRunner

    n = len(next(iter(rates.values())))
    profile = out.parent / f"{out.name}.profile.yaml"
    profile.write_text(textwrap.dedent(PROFILE.format(reps=n)))
    file = out.parent / f"{out.name}.campaign.yaml"
    file.write_text(textwrap.dedent(CAMPAIGN.format(profile=profile.name, name=name)))
    adapters = list(rates)
    queue = {a: list(r) for a, r in rates.items()}
    address_of = {f"198.18.{k}.1": a for k, a in enumerate(adapters)}

    def answer(call: ToolCall) -> Answer:
        adapter = next(a for addr, a in address_of.items() if addr in call.argv)
        return Answer(client=iperf3_at(queue[adapter].pop(0)))

    def hosts() -> FakeHosts:
        made = FakeHosts(answer)
        for side, host in ((1, "nb-a"), (2, "nb-b")):
            made.add(host, {f"t{k}": FakeInterface(addresses=(f"198.18.{k}.{side}",),
                                                    driver="fake-nic",
                                                    driver_version=driver_version)
                            for k in range(len(adapters))})
        return made

    wired: dict = {}
    if store is not None:
        from nicbench.cli.store import checked_location, history_store, run_sink

        location = checked_location(store)
        wired = {"sinks": lambda run_dir, tell: run_sink(location, run_dir, tell),
                 "history": lambda: history_store(location)}
    runner = CampaignRunner(load_campaign(file, CATALOG), inventory(adapters), out,
                            hosts=hosts, **wired)
    with mock.patch("nicbench.execution.opening.new_run_id", return_value=run_id):
        runner.run()
    assert all(not q for q in queue.values()), "every rate was measured"
    return runner


ROUNDUP = Path(__file__).resolve().parent / "report" / "data" / "roundup"


def real_series(run: Path = ROUNDUP) -> dict[tuple[str, str, str], list[dict]]:
    """The successful rate repetitions of a committed real run (netPIPE's curves left
    out), by (adapter, test, point), each its stored record."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for line in (run / "trials.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] == "repetition" and rec["status"] == "ok" \
                and rec["throughput_bps"] and rec["tool"] != "netpipe":
            out.setdefault((rec["adapter"], rec["test"], rec["point"]), []).append(rec)
    return out


def real_nights(out: Path, count: int, *, seed: int, night_pct: float = 0.5,
                levels: dict[tuple[str, str, str], Sequence[float]] | None = None,
                facts: Sequence[dict[str, dict[str, str]]] = (),
                first: str = "2026-09-01", run: Path = ROUNDUP) -> list[Path]:
    """``count`` nights made from the real run ``run``: each night its manifest (every
    fact as the run recorded it, but those ``facts[i]`` sets: pair -> interface field ->
    value, on both hosts) and each configuration's repetitions drawn again from that
    configuration's real ones (as many, with replacement), the whole night moved by one
    draw of ``night_pct`` % night-to-night variation (seeded), times the configuration's
    level that night (``levels``: a factor per night, 1 elsewhere)."""
    from datetime import timedelta

    rng = np.random.default_rng(seed)
    series = real_series(run)
    manifest = json.loads((run / "manifest.json").read_text())
    start = datetime.fromisoformat(first).replace(hour=3, tzinfo=UTC)
    dirs = []
    for i in range(count):
        when = start + timedelta(days=i)
        run_id = when.strftime("%Y%m%d-%H%M%S")
        d = out / f"night-{i + 1:02d}"
        d.mkdir(parents=True)
        m = json.loads(json.dumps(manifest))
        m["run_id"], m["started_at"] = run_id, when.timestamp()
        m["ended_at"] = when.timestamp() + 3600
        for pair, fields in (facts[i] if i < len(facts) else {}).items():
            for key, iface in m["interfaces"].items():
                if key.split("/")[0] == pair:
                    iface.update(fields)
        (d / "manifest.json").write_text(json.dumps(m))
        lines = []
        for key, recs in series.items():
            factor = (1 + rng.normal(0, night_pct / 100)) * (
                (levels or {}).get(key, [1.0] * count)[i])
            values = np.array([r["throughput_bps"] for r in recs])
            for rec, v in zip(recs, rng.choice(values, len(values)), strict=True):
                lines.append(json.dumps({**rec, "run_id": run_id,
                                         "throughput_bps": float(v) * factor}))
        (d / "trials.jsonl").write_text("\n".join(lines) + "\n")
        dirs.append(d)
    return dirs
