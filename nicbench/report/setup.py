"""The setup section: per run, the hosts, versions, adapters, interfaces, profile and the
exact commands, from the manifest and the trials.

Nothing here names a path of the machine that made the report: a run is named by its
letter, label and directory name, its files are the copy in the report's ``data/``
folder, and the profile and inventory files by their names.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path, PurePath

from nicbench.config.profile import UntilStable
from nicbench.report.configs import Index, point_label
from nicbench.report.load import Run
from nicbench.report.model import Command, RunSetup
from nicbench.results.records import TrialRecord

DATA_DIR = "data"


def _copied(path: Path) -> bool:
    """A raw output the report's data/ holds: a regular file, not a link (see
    results/runfiles.py)."""
    return path.is_file() and not path.is_symlink()


def data_dir(run: Run) -> str:
    """Where the report keeps a copy of the run's files, relative to the report."""
    return f"{DATA_DIR}/{run.letter}-{run.name}"


def _when(ts: float | None) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(ts))


def file_name(path: str) -> str:
    """A file named in a manifest, without the directories of the machine it ran on."""
    return PurePath(path).name if path else ""


def setup_of(ix: Index) -> list[RunSetup]:
    return [_run_setup(ix, run) for run in ix.runs]


def _run_setup(ix: Index, run: Run) -> RunSetup:
    m = run.manifest
    profile = run.profile
    versions: dict[str, set[str]] = defaultdict(set)
    by_config: dict[tuple[str, str, str], list[TrialRecord]] = defaultdict(list)
    for r in run.records:
        if r.version:
            versions[r.tool].add(str(r.version))
        if r.commands:
            by_config[(r.pair, r.point, r.test)].append(r)
    base = data_dir(run)
    commands = []
    for (pair, point, test), recs in by_config.items():
        first = recs[0]
        distinct = {(r.commands.get("server"), r.commands.get("client")) for r in recs}
        raw = next((f"{base}/{path}" for r in recs for path in r.raw.values()
                    if _copied(run.path / path)), "")
        commands.append(Command(
            entry=ix.entry_of[(run.index, pair)].label, point=point_label(point, first.mtu),
            test=test, server=first.commands.get("server", ""),
            client=first.commands.get("client", ""),
            receiver=first.hosts.get("receiver", ""), sender=first.hosts.get("sender", ""),
            trials=len(recs), variants=len(distinct), raw=raw))
    started = [r.started_at for r in run.records if r.started_at]
    ended = [r.ended_at for r in run.records if r.ended_at]
    facts: list[tuple[str, str]] = [
        ("label", f"{run.letter}" + (f" = {run.label}" if run.label != run.letter else "")),
        ("directory", run.name), ("its files in this report", f"{base}/"),
    ]
    if profile is not None:
        facts += [
            ("profile", profile.name + (f" ({file_name(m.profile_file)})"
                                        if m is not None and m.profile_file else "")),
            ("method source", profile.source), ("description", profile.description.strip()),
            ("repetitions / select", f"{_repetitions(profile.repetitions)} / {profile.select}"),
            ("profile sysctl", json.dumps(profile.sysctl) if profile.sysctl else ""),
        ]
    if m is not None:
        facts += [("inventory", file_name(m.inventory_file)),
                  ("nicbench", m.nicbench_version)]
    facts += [
        ("started", _when(m.started_at if m is not None else min(started, default=None))),
        ("ended", _when(m.ended_at if m is not None and m.ended_at
                        else max(ended, default=None))),
        ("resumed", ", ".join(_when(t) for t in m.resumed_at) if m is not None else ""),
        ("hosts lost", "; ".join(f"{h}: {why}" for h, why in m.lost_hosts.items())
         if m is not None else ""),
    ]
    hosts: list[list[object]] = []
    adapters: list[list[object]] = []
    interfaces: list[list[object]] = []
    tests: list[list[object]] = []
    points: list[list[object]] = []
    if m is not None:
        for h, f in m.hosts.items():
            tools = m.tools.get(h) or {}
            hosts.append([h, f.os, f.kernel, f.cpu_model, f.cpus, f.hostname,
                          ", ".join(f"{t}={v or 'not installed'}" for t, v in tools.items())])
        pairs = {p.name: p for p in m.inventory.pairs}
        for e in (e for e in ix.entries if e.run_index == run.index):
            a = run.adapter(e.adapter)
            found = pairs.get(e.pair)
            sides = "; ".join(f"{side}: {s.host} {s.interface} {s.address}"
                              for side, s in (("a", found.a), ("b", found.b))) if found else ""
            if found:
                sides += f" (receiver {found.receiver})"
            if a is None:
                adapters.append([e.label, "", "", "", "", "", "", sides, ""])
                continue
            drv = f"{a.driver.name} {a.driver.version or ''}".strip()
            adapters.append([e.label, a.vendor, a.model, a.chipset or "", a.bus or "", drv,
                             "yes" if a.emulated else "no", sides, a.notes or ""])
        for name, i in m.interfaces.items():
            interfaces.append([name, i.kind or "", i.driver, i.driver_version,
                               i.firmware or "", i.bus_info or "", i.mtu, i.max_mtu,
                               ", ".join(k for k, v in i.offloads.items() if v) or "none"])
    if profile is not None:
        for t in profile.tests:
            name = t.name if t.points is None else f"{t.name} (at {', '.join(t.points)} only)"
            tests.append([name, t.tool, t.protocol, json.dumps(t.params),
                          _repetitions(profile.repetition_policy(t)), profile.select_for(t),
                          profile.timeout_for(t),
                          t.udp_search.model_dump_json() if t.udp_search else ""])
        for p in profile.points:
            points.append([p.name, p.mtu or "", p.frame_size or "", json.dumps(p.sysctl),
                           json.dumps(p.registry), json.dumps(p.vars)])
    record_versions = ", ".join(f"{t} {'/'.join(sorted(v))}" for t, v in versions.items())
    return RunSetup(
        index=run.index, label=run.label, run_id=run.run_id, name=run.name, data_dir=base,
        facts=[(k, v) for k, v in facts if v], hosts=hosts, adapters=adapters,
        interfaces=interfaces, tests=tests, points=points, commands=commands,
        record_versions=record_versions,
        restore_problems=list(m.restore_problems) if m is not None else [],
        no_manifest=m is None, torn_line=run.torn_line)


def _repetitions(policy: int | UntilStable) -> str | int:
    return policy.describe() if isinstance(policy, UntilStable) else policy
