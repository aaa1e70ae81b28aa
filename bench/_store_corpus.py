"""A corpus of runs for the results store's benchmark (``bench/store.py``, issue 21): many
nights of many adapters, cloned from real lab runs by copying and renaming their JSON lines.

The sources are real runs (``bench/data/store-corpus``, see its README: the same short
profile on a lab's gbe, pci32 and nojumbo cards, once as built and once with gbe slowed to
500mbit by ``nicbench lab shape``); ``--from``/``sources`` takes other run directories.
Every pair of every source is a template; adapter *i* of the corpus clones template
*i mod templates* under new names (pair ``gbe007``, adapter ``lab-gbe-007``, model "LX-1000
Gigabit #007"), with its records, its interface facts and its refusals. A run of the corpus
holds every adapter; run *r* is on night ``r * nights // runs`` (dates from ``first_night``,
one day apart, the runs of a night 5 minutes apart from 20:00 UTC). Where a run needs more
trials per adapter than its template has, the template's measured trials are repeated as
further repetitions (the manifest's profile plans that many, so the records read as
plausible). Each adapter's figures move a little from night to night (a fixed pseudo-random
walk within +-0.5 %), and ``slowed`` makes chosen adapters slower from a chosen night on,
their link's shaping fact changed to match: a regression with its setup change to find.

Records are made as text: each template line is parsed once into a template whose names,
times, repetitions and figures are slots, and a record is that template filled in (no
``json.dumps`` per record). Deterministic: the same arguments give the same bytes.
Independent of the store: it writes run directories (``manifest.json``, ``trials.jsonl``;
no raw/), which every results reader reads.

    from _store_corpus import corpus
    for run in corpus(runs=100, adapters=50, trials_per_run=10_000):   # 1,000,000 trials
        run.write(dest)            # or use run.manifest_text and run.lines directly

    python bench/_store_corpus.py DEST [--runs 100] [--adapters 50] [--trials-per-run N]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = (HERE / "data" / "store-corpus" / "plain", HERE / "data" / "store-corpus" / "slowed")
FIRST_NIGHT = date(2026, 10, 1)
NIGHT_START_H = 20
RUN_GAP_S = 300
MAX_RUNS = 100_000
MAX_ADAPTERS = 999               # three digits in the clones' names
MAX_TRIALS = 10_000_000
# Fields a clone's record changes; everything else is the source's text, unchanged.
SLOTS = ("run_id", "trial_id", "pair", "adapter", "adapter_label", "repetition",
         "throughput_bps", "started_at", "ended_at", "raw")
_SLOT = re.compile(r'"\\u0000(\w+)\\u0000"')


@dataclass(frozen=True)
class _Template:
    """One source record as a format string with its slots cut out, and the values of
    those slots in the source."""

    fmt: str
    pair: str
    trial_id: str
    label: str
    repetition: int | None
    throughput_bps: float | None
    started_at: float
    ended_at: float | None
    raw: dict[str, str]

    @classmethod
    def of(cls, line: str) -> _Template:
        rec = json.loads(line)
        holes = {k: f"\0{k}\0" for k in SLOTS if k in rec}
        cut = _SLOT.split(json.dumps({**rec, **holes}))
        fmt = "".join(part.replace("{", "{{").replace("}", "}}") if n % 2 == 0
                      else "{" + part + "}" for n, part in enumerate(cut))
        return cls(fmt=fmt, pair=rec["pair"], trial_id=rec["trial_id"],
                   label=rec.get("adapter_label") or "", repetition=rec.get("repetition"),
                   throughput_bps=rec.get("throughput_bps"), started_at=rec["started_at"],
                   ended_at=rec.get("ended_at"), raw=rec.get("raw") or {})

    def trial_id_at(self, name: str, pass_: int, repetition: int | None) -> str:
        """This record's trial id for the clone ``name``, in repetition pass ``pass_``."""
        tid = name + self.trial_id[len(self.pair):]
        if pass_ and self.repetition is not None:
            old = f".r{self.repetition}"
            tid = tid[: -len(old)] + f".r{repetition}" if tid.endswith(old) \
                else f"{tid}.x{pass_}"
        return tid


@dataclass(frozen=True)
class _Source:
    manifest: dict
    templates: dict[str, list[_Template]]      # pair -> its records, in file order

    @classmethod
    def read(cls, directory: Path) -> _Source:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        templates: dict[str, list[_Template]] = {}
        with open(directory / "trials.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    t = _Template.of(line)
                    templates.setdefault(t.pair, []).append(t)
        return cls(manifest, templates)

    @property
    def span_s(self) -> float:
        return float(self.manifest["ended_at"] - self.manifest["started_at"])

    @property
    def most_repetitions(self) -> int:
        return max((t.repetition or 0 for ts in self.templates.values() for t in ts),
                   default=0)


@dataclass(frozen=True)
class _Clone:
    """Adapter ``index`` of the corpus: a source pair under new names."""

    index: int
    source: _Source
    pair: str            # the source's pair name
    name: str            # the clone's pair name
    adapter: dict        # the clone's inventory adapter
    labels: dict[str, str]       # source adapter_label -> the clone's, JSON-encoded
    slots: dict[str, str]        # the slots the same in all its records, JSON-encoded
    passes_before: int           # runs of its template before it in a run

    @property
    def records(self) -> list[_Template]:
        return self.source.templates[self.pair]

    @property
    def measured(self) -> list[_Template]:
        return [t for t in self.records if t.repetition is not None]


@dataclass(frozen=True)
class CorpusRun:
    """One run of the corpus: its manifest and its trials.jsonl lines (no newlines)."""

    run_id: str
    night: int
    manifest: dict
    lines: list[str]

    @property
    def manifest_text(self) -> str:
        return json.dumps(self.manifest, indent=1)

    def write(self, parent: str | Path) -> Path:
        """The run as a results directory ``parent/run_id`` (manifest.json, trials.jsonl)."""
        out = Path(parent) / self.run_id
        out.mkdir(parents=True)
        (out / "manifest.json").write_text(self.manifest_text, encoding="utf-8")
        with open(out / "trials.jsonl", "w", encoding="utf-8") as fh:
            fh.write("\n".join(self.lines))
            fh.write("\n")
        return out


def _rate_text(bps: float) -> str:
    for unit, mult in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps >= mult and round(bps) % mult == 0:
            return f"{round(bps) // mult}{unit}"
    return f"{round(bps)}bit"


def _slowed_shaping(shaping: str | None, factor: float) -> str | None:
    """``tbf rate 1gbit`` slowed by ``factor`` (0.5: ``tbf rate 500mbit``)."""
    m = re.fullmatch(r"tbf rate (\d+)(kbit|mbit|gbit)", shaping or "")
    if m is None:
        return shaping
    bps = int(m.group(1)) * {"kbit": 10**3, "mbit": 10**6, "gbit": 10**9}[m.group(2)]
    return f"tbf rate {_rate_text(bps * factor)}"


def _wobble(index: int, night: int) -> float:
    """A fixed pseudo-random factor within +-0.5 % for an adapter on a night."""
    return 1.0 + ((index * 7919 + night * 104729) % 1001 - 500) / 100_000


def _clones(sources: Sequence[_Source], adapters: int,
            group: int | None = None) -> list[_Clone]:
    """``adapters`` clones round the sources' pairs: named by their index (``gbe007``), or
    all of one ``group`` (``gbe-g3``, as bench/store.py names them)."""
    pairs = [(s, p) for s in sources for p in s.manifest["pairs"] if s.templates.get(p)]
    if not pairs:
        raise ValueError("the sources have no pair with trials to clone")
    out = []
    for k in range(adapters):
        source, pair = pairs[k % len(pairs)]
        inv_pair = next(p for p in source.manifest["inventory"]["pairs"] if p["name"] == pair)
        adapter = next(a for a in source.manifest["inventory"]["adapters"]
                       if a["id"] == inv_pair["adapter"])
        if group is None:
            i, suffix, name = k, f"-{k:03d}", f"{pair}{k:03d}"
            model = f"{adapter['model']} #{k:03d}"
        else:
            i, suffix, name = group * adapters + k, f"-g{group}", f"{pair}-g{group}"
            model = f"{adapter['model']} g{group}"
        clone = {**adapter, "id": adapter["id"] + suffix, "model": model}
        labels = {t.label: json.dumps(model + t.label[len(adapter["model"]):])
                  for t in source.templates[pair]}
        out.append(_Clone(i, source, pair, name, clone, labels,
                          {"pair": json.dumps(name), "adapter": json.dumps(clone["id"])},
                          passes_before=k // len(pairs)))
    return out


def _base_manifest(sources: Sequence[_Source], clones: Sequence[_Clone],
                   repetitions: int) -> dict:
    m = copy.deepcopy(sources[0].manifest)
    hosts = {h["name"]: h for s in sources for h in s.manifest["inventory"]["hosts"]}
    pairs = []
    for c in clones:
        src = next(p for p in c.source.manifest["inventory"]["pairs"] if p["name"] == c.pair)
        pairs.append({**src, "name": c.name, "adapter": c.adapter["id"]})
    m["inventory"] = {**m["inventory"], "hosts": list(hosts.values()),
                      "adapters": [c.adapter for c in clones], "pairs": pairs}
    m["pairs"] = [c.name for c in clones]
    m["interfaces"] = {f"{c.name}/{key.split('/', 1)[1]}": facts for c in clones
                       for key, facts in c.source.manifest["interfaces"].items()
                       if key.split("/", 1)[0] == c.pair}
    m["hosts"] = {k: v for s in sources for k, v in s.manifest["hosts"].items()}
    m["tools"] = {k: v for s in sources for k, v in s.manifest["tools"].items()}
    m["resumed_at"], m["restore_problems"], m["lost_hosts"] = [], [], {}
    profile = m["profile"]
    profile["repetitions"] = max(profile.get("repetitions") or 1, repetitions)
    for test in profile.get("tests", []):
        if test.get("repetitions"):
            test["repetitions"] = max(test["repetitions"], repetitions)
    return m


def nights_back(nights: int, today: date | None = None) -> date:
    """The first of ``nights`` nights that all lie before ``today``: a store refuses a
    trial from the future (issue 32), so a corpus that must import ends last night."""
    return (today or datetime.now(UTC).date()) - timedelta(days=nights + 1)


def corpus(runs: int = 100, adapters: int = 50, nights: int | None = None,
           trials_per_run: int | None = None, sources: Sequence[str | Path] = SOURCES,
           first_night: date = FIRST_NIGHT,
           slowed: Mapping[int, tuple[int, float]] | None = None) -> Iterator[CorpusRun]:
    """``runs`` runs of ``adapters`` adapters each over ``nights`` nights (default: one
    run a night). ``trials_per_run``: records per run (default: every adapter's template
    once), shared out evenly between the adapters. ``slowed``: adapter index -> (first
    night, factor) from which its figures and its link's tbf rate are ``factor`` of
    before. A generator: each run is made when asked for."""
    nights = runs if nights is None else nights
    if not 1 <= runs <= MAX_RUNS or not 1 <= adapters <= MAX_ADAPTERS \
            or not 1 <= nights <= runs:
        raise ValueError(f"runs 1..{MAX_RUNS}, adapters 1..{MAX_ADAPTERS}, nights 1..runs")
    if trials_per_run is not None and not adapters <= trials_per_run <= MAX_TRIALS:
        raise ValueError(f"trials_per_run: at least one per adapter, at most {MAX_TRIALS}")
    srcs = [_Source.read(Path(s)) for s in sources]
    clones = _clones(srcs, adapters)
    shares = [len(c.records) for c in clones] if trials_per_run is None \
        else [trials_per_run // adapters + (i < trials_per_run % adapters)
              for i in range(adapters)]
    passes = max(_passes(c, n) for c, n in zip(clones, shares, strict=True))
    most = max(s.most_repetitions for s in srcs)
    base = _base_manifest(srcs, clones, passes * most)
    plan = [(c, _lines(c, n, passes, most)) for c, n in zip(clones, shares, strict=True)]
    per_night = -(-runs // nights)
    for r in range(runs):
        night = r * nights // runs
        yield _run(base, plan, night, _start(first_night, night, r % per_night),
                   slowed or {})


def _start(first_night: date, night: int, k: int) -> float:
    """When the ``k``-th run of ``night`` starts: 20:00 UTC, runs 5 minutes apart."""
    return (datetime.combine(first_night + timedelta(days=night), datetime.min.time(), UTC)
            + timedelta(hours=NIGHT_START_H, seconds=RUN_GAP_S * k)).timestamp()


def _passes(clone: _Clone, n: int) -> int:
    if n <= len(clone.records):
        return 1
    if not clone.measured:
        raise ValueError(f"pair {clone.pair} has no measured trial to repeat")
    return 1 + math.ceil((n - len(clone.records)) / len(clone.measured))


@dataclass(frozen=True)
class _Line:
    """A record of a clone, all filled in but what changes from run to run: the run id
    (JSON), the throughput, and the start and end times, which go between ``parts`` in
    the order ``late`` (0-3: those four)."""

    parts: tuple[str, ...]
    late: tuple[int, ...]
    throughput_bps: float | None
    started_at: float        # less the source run's start, plus the passes before it
    ended_at: float | None

    def text(self, values: tuple[str, str, str, str]) -> str:
        p = self.parts
        if self.late == (0, 1, 2, 3):       # every record nicbench writes: the fast way
            return (p[0] + values[0] + p[1] + values[1] + p[2] + values[2] + p[3]
                    + values[3] + p[4])
        out = [p[0]]
        for part, k in zip(p[1:], self.late, strict=True):
            out += (values[k], part)
        return "".join(out)


_LATE = {"run_id": "\x000\x00", "throughput_bps": "\x001\x00", "started_at": "\x002\x00",
         "ended_at": "\x003\x00"}


def _lines(c: _Clone, n: int, passes: int, most: int) -> list[_Line]:
    """Clone ``c``'s ``n`` records, the same in every run but for the late slots."""
    span = c.source.span_s
    origin = c.source.manifest["started_at"] - c.passes_before * passes * span
    out: list[_Line] = []
    pass_ = 0
    while len(out) < n:
        for t in (c.records if pass_ == 0 else c.measured)[: n - len(out)]:
            rep = None if t.repetition is None else t.repetition + pass_ * most
            tid = t.trial_id_at(c.name, pass_, rep)
            raw = {role: rel.replace(f"raw/{t.trial_id}", f"raw/{tid}", 1)
                   for role, rel in t.raw.items()}
            text = t.fmt.format_map({
                **c.slots, **_LATE, "trial_id": json.dumps(tid),
                "adapter_label": c.labels[t.label],
                "repetition": "null" if rep is None else str(rep), "raw": json.dumps(raw)})
            cut = text.split("\0")
            out.append(_Line(tuple(cut[0::2]), tuple(int(k) for k in cut[1::2]),
                             t.throughput_bps, t.started_at - origin + pass_ * span,
                             None if t.ended_at is None
                             else t.ended_at - origin + pass_ * span))
        pass_ += 1
    return out


def _run(base: dict, plan: Sequence[tuple[_Clone, list[_Line]]], night: int, start: float,
         slowed: Mapping[int, tuple[int, float]]) -> CorpusRun:
    run_id = datetime.fromtimestamp(start, UTC).strftime("%Y%m%d-%H%M%S")
    rid = json.dumps(run_id)
    manifest = {**base, "run_id": run_id, "started_at": start}
    lines: list[str] = []
    end = start
    for c, recs in plan:
        since, factor = slowed.get(c.index, (night + 1, 1.0))
        factor = factor if night >= since else 1.0
        if factor != 1.0:
            manifest["interfaces"] = dict(manifest["interfaces"])
            for key, facts in base["interfaces"].items():
                if key.split("/", 1)[0] == c.name:
                    manifest["interfaces"][key] = {
                        **facts, "shaping": _slowed_shaping(facts.get("shaping"), factor)}
        factor *= _wobble(c.index, night)
        for r in recs:
            ended = None if r.ended_at is None else r.ended_at + start
            lines.append(r.text((
                rid, "null" if r.throughput_bps is None else repr(r.throughput_bps * factor),
                repr(r.started_at + start), "null" if ended is None else repr(ended))))
            if ended is not None and ended > end:
                end = ended
    manifest["ended_at"] = end
    return CorpusRun(run_id, night, manifest, lines)


# -- the interface bench/store.py takes: one source, runs of one group of adapters each ---
class Source:
    """One real run directory, read once, for :func:`write_runs`; ``trials``: records
    in each run made of it."""

    def __init__(self, run_dir: str | Path):
        self.source = _Source.read(Path(run_dir))
        self.pairs = [p for p in self.source.manifest["pairs"] if self.source.templates.get(p)]
        self.trials = sum(len(self.source.templates[p]) for p in self.pairs)
        self._groups: dict[int, tuple[dict, list[tuple[_Clone, list[_Line]]]]] = {}

    def group(self, group: int) -> tuple[dict, list[tuple[_Clone, list[_Line]]]]:
        """The manifest and records of group ``group``'s run, but for the night."""
        if group not in self._groups:
            clones = _clones([self.source], len(self.pairs), group=group)
            most = self.source.most_repetitions
            self._groups[group] = (_base_manifest([self.source], clones, most),
                                   [(c, _lines(c, len(c.records), 1, most)) for c in clones])
        return self._groups[group]


def write_runs(source: Source, dest: str | Path, *, first: int, count: int,
               groups: int, first_night: date = FIRST_NIGHT) -> list[Path]:
    """Runs ``first`` .. ``first + count - 1`` of the corpus, each a results directory in
    ``dest``: run *i* holds group ``i % groups`` (the source's adapters as ``lab-gbe-g3``,
    pairs ``gbe-g3``) on night ``i // groups`` after ``first_night``."""
    if not 1 <= groups <= 200 or first < 0 or not 0 <= count <= MAX_RUNS:
        raise ValueError("groups 1..200 (runs of a night 5 minutes apart), first >= 0, "
                         f"count 0..{MAX_RUNS}")
    made = []
    for i in range(first, first + count):
        group, night = i % groups, i // groups
        base, plan = source.group(group)
        made.append(_run(base, plan, night, _start(first_night, night, group), {})
                    .write(dest))
    return made


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write a corpus of cloned lab runs.")
    p.add_argument("dest", help="a new directory for the runs")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--adapters", type=int, default=50)
    p.add_argument("--nights", type=int)
    p.add_argument("--trials-per-run", type=int)
    p.add_argument("--from", dest="sources", action="append",
                   help="a results directory to clone (repeatable; default: "
                        "bench/data/store-corpus/plain and slowed)")
    args = p.parse_args(argv)
    dest = Path(args.dest)
    if dest.exists():
        sys.exit(f"bench: error: {dest} exists: give a new directory")
    t0 = time.perf_counter()
    trials = runs = 0
    try:
        for run in corpus(args.runs, args.adapters, args.nights, args.trials_per_run,
                          args.sources or SOURCES):
            run.write(dest)
            runs, trials = runs + 1, trials + len(run.lines)
    except (ValueError, OSError, KeyError) as exc:
        sys.exit(f"bench: error: {exc}")
    print(f"store_corpus: runs={runs} trials={trials} seconds={time.perf_counter() - t0:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
