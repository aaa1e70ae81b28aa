"""``nicbench status DIR``: where a run or a campaign stands, from its files alone.

Safe from another terminal while the controller works, and after it: everything is read
(campaign.json, each run's manifest.json and trials.jsonl, heartbeat.json), nothing is
written, locked or repaired; files written atomically are read whole, and a last line of
trials.jsonl being appended is skipped until it is complete.

Per run and pair: trials done of planned (a skipped or given-up configuration counts the
trials it stands for; a UDP search counts its estimate), the configuration in progress,
trials failed and configurations not measured so far, and an ETA from that pair's own
trial times; the controller judged alive, dead, or finished
(:func:`~nicbench.execution.heartbeat.judge`).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nicbench.errors import UsageError
from nicbench.execution import heartbeat
from nicbench.config.profile import Profile
from nicbench.results.campaign import (CampaignState, CampaignStateName, RunState,
                                      RunStateName, is_campaign)
from nicbench.results.manifest import Manifest
from nicbench.results.records import Kind, TrialRecord
from nicbench.results.records import Status as TrialStatus
from nicbench.results.snapshot import read_run

RECENT = 30               # a pair's ETA is taken over its last trials


@dataclass
class PairStatus:
    run: str
    pair: str
    state: str            # waiting | running | done | stopped | failed | not started
    done: int
    planned: int
    failed: int           # trials that failed (as they stand now)
    skipped: int          # configurations recorded as not measured (refused, given up...)
    current: str = ""     # "mtu9000 iperf3-tcp" while it runs
    eta_s: float | None = None


@dataclass
class RunStatus:
    name: str
    profile: str
    state: RunStateName
    pairs: list[PairStatus] = field(default_factory=list)
    report: str | None = None
    unread: list[str] = field(default_factory=list)   # files not read (RunSnapshot.unread)

    @property
    def done(self) -> int:
        return sum(p.done for p in self.pairs)

    @property
    def planned(self) -> int:
        return sum(p.planned for p in self.pairs)


@dataclass
class Standing:
    kind: str             # campaign | run
    name: str
    path: str
    state: str            # running | finished | interrupted | failed | unknown
    controller: str       # one line: alive / dead / ended
    alive: bool | None
    runs: list[RunStatus]
    eta_s: float | None
    summary: str | None = None     # the morning summary, once written

    @property
    def done(self) -> int:
        return sum(r.done for r in self.runs)

    @property
    def planned(self) -> int:
        return sum(r.planned for r in self.runs)

    @property
    def ok(self) -> bool:
        """Nothing to worry about: alive and running, or finished."""
        return self.state == "finished" or (self.state == "running" and bool(self.alive))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(done=self.done, planned=self.planned)
        return data


def status(path: str | Path) -> Standing:
    """The status of the run or campaign directory ``path``."""
    path = Path(path)
    if not path.is_dir():
        raise UsageError(f"{path}: no such directory")
    if is_campaign(path):
        return _campaign(path)
    if (path / "manifest.json").is_file():
        parent = path.parent
        if is_campaign(parent):         # a run of a campaign: the campaign's controller
            whole = _campaign(parent)
            whole.runs = [r for r in whole.runs if r.name == path.name]
            return whole
        return _plain_run(path)
    raise UsageError(f"{path}: not a run or campaign directory (no manifest.json or "
                     "campaign.json)")


def _campaign(path: Path) -> Standing:
    state = CampaignState.read(path)
    beat = heartbeat.read(path)
    pulse = heartbeat.judge(beat)
    live = beat if pulse.alive else None
    runs = [_run(path / r.name, r.name, r, live) for r in state.runs]
    summary = "summary.md" if (path / "summary.md").is_file() else None
    st = state.state if state.state is not CampaignStateName.RUNNING or pulse.alive is not False \
        else "running"
    return Standing(kind="campaign", name=state.name, path=str(path), state=st,
                  controller=pulse.text, alive=pulse.alive, runs=runs,
                  eta_s=(live or {}).get("eta_s"), summary=summary)


def _plain_run(path: Path) -> Standing:
    beat = heartbeat.read(path)
    pulse = heartbeat.judge(beat)
    live = beat if pulse.alive else None
    run = _run(path, "", None, live)
    if beat is None:
        ended = Manifest.read(path / "manifest.json").ended_at is not None
        state = "finished" if ended else "unknown"
        text = "ended (manifest.json has its end)" if ended else pulse.text
    else:
        state, text = str(beat.get("state")), pulse.text
    return Standing(kind="run", name=run.profile, path=str(path), state=state, controller=text,
                  alive=pulse.alive, runs=[run], eta_s=(live or {}).get("eta_s"))


def _run(path: Path, name: str, rs: RunState | None, live: dict | None) -> RunStatus:
    """One run's pairs from its files; ``live``: a living controller's heartbeat."""
    snap = read_run(path)
    profile = snap.profile
    pairs_planned = list(rs.pairs) if rs else []
    if snap.manifest is not None:
        pairs_planned = pairs_planned or list(snap.manifest.pairs)
    ended = snap.manifest is not None and snap.manifest.ended_at is not None
    state = rs.state if rs else (RunStateName.DONE if ended else RunStateName.RUNNING)
    run = RunStatus(name=name or path.name, profile=rs.profile if rs else
                    (profile.name if profile else path.name), state=state,
                    report=rs.report if rs else None, unread=list(snap.unread))
    beats = (live or {}).get("pairs", {}) if live and (live.get("run") in (None, name)
                                                       or rs is None) else {}
    for pair in pairs_planned:
        ps = _pair(run, pair, snap.by_pair.get(pair, []), profile,
                   beats.get(f"{name}/{pair}" if name else pair))
        if profile is None and rs is not None and rs.pairs:
            ps.planned = rs.planned // len(rs.pairs)   # not begun: campaign.json's plan
        run.pairs.append(ps)
    return run


def _pair(run: RunStatus, pair: str, recs: list[TrialRecord], profile: Profile | None,
          beat: dict | None) -> PairStatus:
    planned = done = 0
    if profile is not None:
        for point in profile.points:
            for test in profile.tests_at(point):
                want = profile.planned_trials(test)
                mine = [r for r in recs if r.point == point.name and r.test == test.name]
                got = sum(1 for r in mine if r.kind in (Kind.REPETITION, Kind.UDP_SEARCH)) \
                    + sum(r.not_run or 0 for r in mine
                          if r.kind in (Kind.SKIPPED, Kind.GIVEN_UP))
                planned += want
                done += min(want, got)
    failed = sum(1 for r in recs if r.status is TrialStatus.FAILED)
    skipped = sum(1 for r in recs if r.kind in (Kind.SKIPPED, Kind.GIVEN_UP))
    if beat is not None:
        state = str(beat.get("state") or "waiting")
    elif run.state is RunStateName.DONE or (planned and done >= planned):
        state = "done"
    elif not recs:
        state = "not started" if run.state is not RunStateName.RUNNING else "waiting"
    else:
        state = "stopped"
    current_at = " ".join(x for x in ((beat or {}).get("point"), (beat or {}).get("test"))
                          if x) if state == "running" else ""
    walls = [r.wall_s for r in recs if r.wall_s][-RECENT:]
    eta = statistics.fmean(walls) * (planned - done) \
        if walls and planned > done and state in ("running", "waiting") else None
    return PairStatus(run=run.name, pair=pair, state=state, done=done, planned=planned,
                      failed=failed, skipped=skipped, current=current_at, eta_s=eta)
