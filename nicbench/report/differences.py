"""What differs between two compared runs, besides the cards: hosts, cards' settings, tools,
method, nicbench itself.

Read from each run's manifest (``hosts``, ``interfaces``, ``tools``, the profile and the
inventory), host by host: the hosts of a pair in run A are matched with the same sides of
the same adapter's pair in run B. One :class:`Difference` per fact that differs, grouped by
host (then card, then profile and run); a fact one run did not record (an older manifest,
a platform that cannot read it) is "not recorded", never a difference.

A difference in what a figure depends on is marked next to the rows it concerns
(:meth:`Difference.covers`, :attr:`Difference.mark`): the CPU model for the CPU figures
(and the throughput of a lab whose links are CPU-bound), a tool's version for its
parser, the repetition policy for "best", a card's driver, firmware and offloads for its
throughput.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from nicbench.results.facts import HostFacts, InterfaceFacts
from nicbench.report.load import Run
from nicbench.report.model import Entry, MethodWarning

# host facts: key -> (what, what a figure depends on it for); others keep their key
HOST_FACTS: dict[str, tuple[str, str]] = {
    "cpu_model": ("CPU model", "CPU %, CPU-bound throughput"),
    "cpus": ("CPU count", "CPU %, CPU-bound throughput"),
    "memory_bytes": ("memory", "buffers"),
    "os": ("OS", "network stack"),
    "kernel": ("kernel", "network stack"),
    "os_build": ("OS build", "network stack"),
    "caption": ("OS build", "network stack"),
    "version": ("OS version", "network stack"),
    "build": ("OS build number", "network stack"),
}
# facts that differ from boot to boot or name the machine: listed, never marked
HOST_UNMARKED = {"hostname"}
HOST_IGNORED = {"last_boot", "cpu_counters"}
IFACE_FACTS: dict[str, tuple[str, str]] = {
    "driver": ("driver", "throughput"),
    "driver_version": ("driver version", "throughput"),
    "firmware": ("firmware", "throughput"),
    "offloads": ("offloads", "throughput"),
    "rings": ("ring sizes", "throughput"),
    "coalescing": ("interrupt coalescing", "throughput, CPU %"),
    "kind": ("interface kind", "throughput"),
    "max_mtu": ("largest MTU", "which points run"),
}
# the interface's state when the pair was prepared, or its name and place: not a method
IFACE_IGNORED = {"name", "mtu", "state", "carrier", "lower", "addresses", "bus_info"}
# what the list of facts checked always names, recorded or not
CHECKED = ["CPU model", "CPU count", "memory", "kernel", "OS build", "driver (inventory)",
           "driver", "driver version", "firmware", "offloads", "ring sizes", "interrupt coalescing",
           "tool versions", "repetitions", "selection rule", "test parameters", "points",
           "nicbench version", "lab or real hosts"]


@dataclass
class Difference:
    runs: tuple[str, str]             # the runs' labels
    group: str                        # "host nbr-a", "card gbe", "profile", "run"
    what: str                         # "CPU model"
    a: str
    b: str
    depends: str = ""                 # what a figure depends on it for; "" = not marked
    detail: str = ""                  # which test, point or parameter
    said: str = ""                    # the line in words, where the values alone are not
    entries: set[tuple[str, str]] | None = None   # (A entry, B entry) keys; None = all
    tools: set[str] | None = None
    tests: set[str] | None = None
    points: set[str] | None = None

    @property
    def text(self) -> str:
        if self.said:
            return self.said
        ra, rb = self.runs
        return f"{self.detail + ': ' if self.detail else ''}{self.a} in {ra}, {self.b} in {rb}"

    @property
    def mark(self) -> str:
        return f"{self.what} ({self.depends})"

    def covers(self, a: Entry, b: Entry, tool: str, test: str, point: str) -> bool:
        return bool(self.depends) and \
            (self.entries is None or (a.key, b.key) in self.entries) and \
            (self.tools is None or tool in self.tools) and \
            (self.tests is None or test in self.tests) and \
            (self.points is None or point in self.points)


@dataclass
class RunDifferences:
    """Everything two runs were compared on: what differs, what was the same, what one
    of them did not record."""

    a: Run
    b: Run
    differences: list[Difference] = field(default_factory=list)
    same: set[str] = field(default_factory=set)
    not_recorded: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def differ(self, d: Difference) -> None:
        self.differences.append(d)

    def compare(self, what: str, va: Any, vb: Any) -> bool:
        """Are both recorded and different? Records ``same`` / ``not_recorded``."""
        if va is None or vb is None or va == "" or vb == "":
            missing = [r.label for r, v in ((self.a, va), (self.b, vb)) if v is None or v == ""]
            self.not_recorded[what].update(missing)
            return False
        if va == vb:
            self.same.add(what)
            return False
        return True

    def warnings(self) -> list[MethodWarning]:
        who = f"runs {self.a.label} and {self.b.label}"
        out = [MethodWarning("no manifest", f"run {r.label} has no manifest.json: its hosts, "
                             "cards, tool versions and method are unknown, so nothing is "
                             "said of them below", group=who)
               for r in (self.a, self.b) if r.manifest is None]
        out += [MethodWarning(d.what, d.text, group=f"{who}, {d.group}")
                for d in self.differences]
        differing = {d.what for d in self.differences}
        same = [w for w in CHECKED if w in self.same and w not in differing]
        same += sorted(self.same - differing - set(CHECKED))
        if same:
            out.append(MethodWarning("no differences found in", ", ".join(same), group=who,
                                     difference=False))
        missing = [f"{w} ({_runs_word(self.not_recorded[w])})"
                   for w in CHECKED if self.not_recorded.get(w)
                   and w not in differing and w not in self.same]
        unread = [w for w in CHECKED if w not in self.same and w not in differing
                  and not self.not_recorded.get(w)]
        if self.a.manifest is None or self.b.manifest is None:
            unread = []                 # said once above
        if missing or unread:
            out.append(MethodWarning("not recorded (not counted as a difference)",
                                     ", ".join(missing + [f"{w} (neither run)" for w in unread]),
                                     group=who, difference=False))
        return out


def _runs_word(labels: set[str]) -> str:
    return ("run " if len(labels) == 1 else "runs ") + " and ".join(sorted(labels))


def run_differences(ra: Run, rb: Run, pairs: list[tuple[Entry, Entry]],
                    tests: list[str]) -> RunDifferences:
    out = RunDifferences(ra, rb)
    _run_facts(out, pairs)
    _profile(out, tests)
    for side_a, side_b, entries in _matched_hosts(ra, rb, pairs):
        _host(out, side_a, side_b, entries)
    for a, b in pairs:
        _interfaces(out, a, b)
    order = {"run": 0, "profile": 1}
    out.differences.sort(key=lambda d: (order.get(d.group, 2), d.group))
    return out


def _labels(ra: Run, rb: Run) -> tuple[str, str]:
    return ra.label, rb.label


# -- the run ------------------------------------------------------------------------------
def _run_facts(out: RunDifferences, pairs: list[tuple[Entry, Entry]]) -> None:
    ma, mb = out.a.manifest, out.b.manifest
    va = ma.nicbench_version if ma else None
    vb = mb.nicbench_version if mb else None
    if out.compare("nicbench version", va, vb):
        out.differ(Difference(_labels(out.a, out.b), "run", "nicbench version", str(va),
                              str(vb), "parser and rules"))
    for a, b in pairs:
        if out.compare("driver (inventory)", a.adapter_label, b.adapter_label):
            out.differ(Difference(_labels(out.a, out.b), f"card {a.adapter}",
                                  "driver (inventory)", a.adapter_label, b.adapter_label,
                                  "throughput", entries={(a.key, b.key)}))
        la, lb = _lab(out.a, a), _lab(out.b, b)
        if out.compare("lab or real hosts", la, lb):
            out.differ(Difference(_labels(out.a, out.b), f"card {a.adapter}",
                                  "lab or real hosts", str(la), str(lb), "everything",
                                  entries={(a.key, b.key)}))


def _lab(run: Run, e: Entry) -> str | None:
    if run.inventory is None:
        return None
    return "emulated (lab)" if e.emulated else "real card"


# -- the profile --------------------------------------------------------------------------
def _profile(out: RunDifferences, tests: list[str]) -> None:
    pa, pb = out.a.profile, out.b.profile
    runs = _labels(out.a, out.b)
    if pa is None or pb is None:
        for what in ("repetitions", "selection rule", "test parameters", "points"):
            out.compare(what, pa, pb)
        return
    for test in tests:
        ta, tb = pa.test(test), pb.test(test)
        if ta is None or tb is None:
            continue
        sa, sb = pa.select_for(ta), pb.select_for(tb)
        na, nb = pa.repetitions_for(ta), pb.repetitions_for(tb)
        # one run each: nothing was selected
        if out.compare("selection rule", sa, sb) and (na, nb) != (1, 1):
            out.differ(Difference(
                runs, "profile", "selection rule", f"{sa} of {na}", f"{sb} of {nb}",
                "the selected figures a_bps, b_bps", detail=test, tests={test},
                said=f"{test}: {runs[0]} keeps the {sa} of {na}, {runs[1]} the {sb} of {nb}; "
                     "the charts draw each run's own selection side by side, the "
                     "comparison's word comes from all the repetitions"))
        if out.compare("repetitions", na, nb):
            out.differ(Difference(runs, "profile", "repetitions", str(na), str(nb),
                                  "the spread, and what 'best' picks from", detail=test,
                                  tests={test}))
        pa_, pb_ = dict(ta.params), dict(tb.params)
        if out.compare("test parameters", pa_ or "none", pb_ or "none"):
            for key in sorted(set(pa_) | set(pb_)):
                if pa_.get(key) != pb_.get(key):
                    out.differ(Difference(runs, "profile", "test parameters",
                                          str(pa_.get(key, "unset")),
                                          str(pb_.get(key, "unset")), "throughput",
                                          detail=f"{test} {key}", tests={test}))
        if out.compare("tool", ta.tool, tb.tool):
            out.differ(Difference(runs, "profile", "tool", ta.tool, tb.tool,
                                  "everything", detail=test, tests={test}))
    points = {p.name for p in pa.points} & {p.name for p in pb.points}
    for name in sorted(points):
        xa, xb = pa.point(name), pb.point(name)
        assert xa is not None and xb is not None
        sa_ = {**pa.sysctl, **xa.sysctl, **{f"${k}": v for k, v in xa.vars.items()},
               **{f"registry {k}": v for k, v in xa.registry.items()}}
        sb_ = {**pb.sysctl, **xb.sysctl, **{f"${k}": v for k, v in xb.vars.items()},
               **{f"registry {k}": v for k, v in xb.registry.items()}}
        if out.compare("points", sa_ or "none", sb_ or "none"):
            for key in sorted(set(sa_) | set(sb_)):
                if sa_.get(key) != sb_.get(key):
                    out.differ(Difference(runs, "profile", "points",
                                          str(sa_.get(key, "unset")),
                                          str(sb_.get(key, "unset")), "throughput",
                                          detail=f"{name} {key}", points={name}))


# -- hosts --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Side:
    run: Run
    host: str
    pair: str


def _sides(run: Run, pair: str) -> tuple[str, str] | None:
    inv = run.inventory
    p = next((p for p in inv.pairs if p.name == pair), None) if inv is not None else None
    return (p.a.host, p.b.host) if p is not None else None


def _matched_hosts(ra: Run, rb: Run, pairs: list[tuple[Entry, Entry]]
                   ) -> list[tuple[_Side, _Side, set[tuple[str, str]]]]:
    """(host in A, host in B, the entry pairs they carry), the same side of each pair."""
    matched: dict[tuple[str, str], tuple[_Side, _Side, set[tuple[str, str]]]] = {}
    for a, b in pairs:
        sa, sb = _sides(ra, a.pair), _sides(rb, b.pair)
        if sa is None or sb is None:
            continue
        for ha, hb in zip(sa, sb, strict=True):
            key = (ha, hb)
            if key not in matched:
                matched[key] = (_Side(ra, ha, a.pair), _Side(rb, hb, b.pair), set())
            matched[key][2].add((a.key, b.key))
    return list(matched.values())


def _host_label(a: _Side, b: _Side) -> str:
    if a.host == b.host:
        return f"host {a.host}"
    return f"host {a.host} ({a.run.label}) / {b.host} ({b.run.label})"


def _show(key: str, value: Any) -> str:
    if key == "memory_bytes" and isinstance(value, int):
        return f"{value / 2**30:.1f} GiB"
    return str(value)


def _host(out: RunDifferences, a: _Side, b: _Side, entries: set[tuple[str, str]]) -> None:
    runs, group = _labels(out.a, out.b), _host_label(a, b)
    fa = _facts(out.a.manifest.hosts.get(a.host)) if out.a.manifest else {}
    fb = _facts(out.b.manifest.hosts.get(b.host)) if out.b.manifest else {}
    for key in [*HOST_FACTS, *sorted((set(fa) | set(fb)) - set(HOST_FACTS))]:
        if key in HOST_IGNORED:
            continue
        what, depends = HOST_FACTS.get(key, (key.replace("_", " "), ""))
        if key not in HOST_FACTS and key not in HOST_UNMARKED:
            depends = "host"
        if key in ("caption", "version", "build") and key not in fa and key not in fb:
            continue                    # Windows names; a Linux host has os_build
        if out.compare(what, fa.get(key), fb.get(key)):
            out.differ(Difference(runs, group, what, _show(key, fa[key]), _show(key, fb[key]),
                                  depends, entries=set(entries)))
    ta = out.a.manifest.tools.get(a.host, {}) if out.a.manifest else {}
    tb = out.b.manifest.tools.get(b.host, {}) if out.b.manifest else {}
    if not ta or not tb:
        out.compare("tool versions", ta or None, tb or None)
        return
    for tool in sorted(set(ta) & set(tb)):
        va, vb = ta[tool], tb[tool]
        if out.compare("tool versions", va, vb):
            out.differ(Difference(runs, group, f"{tool} version", str(va), str(vb),
                                  "parser", entries=set(entries), tools={tool}))


# -- cards --------------------------------------------------------------------------------
def _iface(run: Run, pair: str, host: str) -> dict[str, Any]:
    return _facts(run.manifest.interfaces.get(f"{pair}/{host}")) if run.manifest else {}


def _facts(facts: HostFacts | InterfaceFacts | None) -> dict[str, Any]:
    """A host's or interface's facts as the manifest keeps them, by name (none: empty)."""
    return {} if facts is None else asdict(facts)


def _interfaces(out: RunDifferences, a: Entry, b: Entry) -> None:
    runs = _labels(out.a, out.b)
    sa, sb = _sides(out.a, a.pair), _sides(out.b, b.pair)
    if sa is None or sb is None:
        return
    for ha, hb in zip(sa, sb, strict=True):
        fa, fb = _iface(out.a, a.pair, ha), _iface(out.b, b.pair, hb)
        group = f"card {a.adapter} on host {ha}" + (f" / {hb}" if hb != ha else "")
        keys = [*IFACE_FACTS, *sorted((set(fa) | set(fb)) - set(IFACE_FACTS))]
        for key in keys:
            if key in IFACE_IGNORED:
                continue
            what, depends = IFACE_FACTS.get(key, (key.replace("_", " "), "throughput"))
            va, vb = fa.get(key), fb.get(key)
            if key == "offloads" and isinstance(va, dict) and isinstance(vb, dict):
                if out.compare(what, va, vb):
                    for feature in sorted(set(va) | set(vb)):
                        if va.get(feature) != vb.get(feature):
                            out.differ(Difference(
                                runs, group, f"offload {feature}", _onoff(va.get(feature)),
                                _onoff(vb.get(feature)), depends, entries={(a.key, b.key)}))
                continue
            if out.compare(what, va, vb):
                out.differ(Difference(runs, group, what, str(va), str(vb), depends,
                                      entries={(a.key, b.key)}))


def _onoff(v: Any) -> str:
    return "not recorded" if v is None else ("on" if v else "off")
