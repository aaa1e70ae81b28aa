"""``nicbench run`` and ``nicbench restore``."""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path
from typing import Any

from nicbench.cli import console
from nicbench.cli.console import mbit, out
from nicbench.durations import duration
from nicbench.errors import UsageError
from nicbench.execution import events as ev


class RunPrinter:
    """Prints a run's events: a line per event, and on a terminal a progress bar with the
    ETA below them."""

    def __init__(self) -> None:
        self._bar: Any = None           # rich.progress.Progress on a terminal
        self._task: Any = None
        self._where = ""
        self._parallel = False          # pairs at once: each trial line says where it ran

    def __enter__(self) -> RunPrinter:
        if console.is_terminal():
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeRemainingColumn(), transient=True)
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()

    def line(self, text: str) -> None:
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            out(text)

    def __call__(self, event: ev.Event) -> None:
        match event:
            case ev.RunStarted(total=total, parallel=parallel):
                self._parallel = parallel > 1
                if self._bar is not None:
                    self._task = self._bar.add_task("starting", total=total)
            case ev.PointStarted(pair=pair, point=point):
                self._where = f"{pair} {point}"
                self.line(f"== {pair} {point}")
            case ev.PointSkipped(pair=pair, point=point, reason=reason):
                self.line(f"   skipped {pair} {point}: {reason}")
            case ev.GaveUp(pair=pair, point=point, test=test, reason=reason):
                where = f"{pair} {point} " if self._parallel else ""
                self.line(f"   gave up {where}{test}: {reason}")
            case ev.TrialDone(record=r, i=i, n=n, done=done, total=total, eta_s=eta):
                of = f"/{n}" if n else ""
                offered = f" offered {mbit(r.offered_bps)}" if r.offered_bps else ""
                result = _figure(r) if r.ok else f"FAILED: {r.reason}"
                where = f"{r.pair} {r.point} " if self._parallel else ""
                self.line(f"   [{done:>4}/{total}] {where}{r.test} #{i}{of}{offered}: {result}  "
                          f"(ETA {duration(eta)})")
                if self._bar is not None and self._task is not None:
                    self._bar.update(self._task, completed=done,
                                     description=f"{self._where} {r.test}")
            case ev.RepetitionsStopped(pair=pair, point=point, test=test, why=why):
                where = f"{pair} {point} " if self._parallel else ""
                self.line(f"   {where}{test}: {why}")
            case ev.UdpSearchDone(test=test, method=method, best_bps=best, offered_bps=off,
                                  trials=n):
                self.line(f"   {test}: {method} found {mbit(best)} Mbit/s (offered "
                          f"{mbit(off)}) in {n} trials")
            case ev.FrameRateFound(test=test, frame_bytes=frame, bound=bound, pps=pps,
                                   line_pps=line, trials=n, hi_pps=hi, confirm_s=secs,
                                   loss_pct=loss):
                found = f"{pps:,.0f} pps ({100 * pps / line:.1f} % of line rate " \
                    f"{int(line):,})" if pps is not None else "none confirmed"
                if pps is not None and secs is not None:
                    found += f", confirmed {secs:.0f} s at {loss or 0:g} % loss"
                if hi is not None:
                    found += f", failed at {hi:,}"
                self.line(f"   {test}: {frame} B {bound.value.upper()} {found} "
                          f"({n} trials at this size)")
            case ev.HostRebooted(host=host, seconds=seconds, reason=reason):
                self.line(f"   rebooted {host} for the {reason} (back after "
                          f"{duration(seconds)})")
            case ev.SettingRestored():
                pass   # every point restores its settings; the journal has them
            case ev.Warning(message=message):
                console.warn(message)


def cmd_run(args) -> int:
    from nicbench.config.loader import load_inventory, load_profile, resolve_profile_path
    from nicbench.tools.registry import CATALOG
    from nicbench.execution.plan import eta_prior
    from nicbench.execution.runner import Runner

    if args.resume and not Path(args.resume).is_dir():
        state = "not a directory" if Path(args.resume).exists() else "no such directory"
        raise UsageError(f"--resume {args.resume}: {state}: give the results directory of "
                         "the run to continue")
    profile = load_profile(resolve_profile_path(args.profile), CATALOG)
    args.inventory = default_inventory(args.inventory)
    inv = load_inventory(args.inventory, CATALOG)
    for name in args.pair or []:
        inv.pair(name)      # an unknown name is refused before anything is printed
    if args.plan:
        from nicbench.execution.plan import make_plan, render

        for line in render(make_plan(profile, inv, args.pair, parallel=args.parallel)):
            out(line)
        return 0
    from nicbench.cli.store import checked_location, run_sink

    location = checked_location(args.store)
    out_dir = args.out or args.resume or \
        f"reports/{profile.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    out(f"nicbench run {profile.name} -> {out_dir}")
    printer = RunPrinter()
    pulse = Pulse(profile.name, printer)
    sink = run_sink(location, out_dir, pulse)
    runner = Runner(profile, inv, out_dir, pairs=args.pair, resume=bool(args.resume),
                    keep_failed=args.keep_failed, listener=pulse,
                    trust_new_keys=args.trust_new_host_keys, parallel=args.parallel,
                    sinks=[sink] if sink else [],
                    eta_prior=eta_prior(profile, inv, args.pair or [p.name for p in inv.pairs],
                                        args.parallel))
    with runner.owning():       # the directory is this command's until it ends
        with printer, pulse:
            try:
                run_dir = runner.run()
            except KeyboardInterrupt:
                pulse.ending = "interrupted"
                _left_changed(runner)
                _say_resume(args, runner)
                raise
            finally:
                if sink is not None:
                    sink.close()
        return _ended(args, runner, run_dir)


def _plateau_bps(r) -> float | None:
    """A curve tool's (netPIPE) run as the report gives it: its plateau, bit/s (None for
    any other record)."""
    if not r.points:
        return None
    from nicbench.report.netpipe import plateau_of

    return plateau_of(r)


def _plateaus(run_dir, summary) -> dict[tuple[str, str, str], tuple[float | None, float | None]]:
    """(selected, median) plateau per curve configuration, the report's figures: the
    summary's own are the curves' burst maxima (netPIPE 1878-1985 Mbit/s on a Gigabit
    link)."""
    from nicbench.report.netpipe import _select
    from nicbench.results.records import current

    curves = {(r.pair, r.point, r.test): r.select for r in summary}
    found: dict[tuple[str, str, str], list[float]] = {}
    read = getattr(run_dir, "records", None)
    if read is None:
        return {}
    try:
        records = current(read())
    except (OSError, ValueError):
        return {}
    for rec in records:
        key = (rec.pair, rec.point, rec.test)
        if key in curves and rec.ok and (v := _plateau_bps(rec)) is not None:
            found.setdefault(key, []).append(v)
    return {k: (_select(v, curves[k]), _select(v, "median")) for k, v in found.items()}


def _ended(args, runner, run_dir) -> int:
    """The summary table, the report if asked, and what was not measured or put back."""
    from nicbench.cli.summary import summary_lines, terminal_width

    out("")
    width = terminal_width() if console.is_terminal() else None
    for line in summary_lines(runner.summary, width, _plateaus(run_dir, runner.summary)):
        out(line)
    out(f"\nresults: {run_dir.path}/ (summary.csv, trials.jsonl, raw/)")
    if args.report:
        from nicbench.report import build_report

        page = build_report([str(run_dir.path)], str(run_dir.path / "report"),
                            warn=console.warn)
        out(f"report: {page}")
    for pair, why in runner.unmeasured.items():
        console.error(f"pair {pair} could not be measured: {why}")
    for host, why in runner.lost.items():
        console.error(f"{host} was lost during the run ({why}): its pairs were not measured "
                      f"to the end; resume with {resume_hint(args, run_dir.path)} once "
                      "it answers")
    left = _left_changed(runner)
    return 1 if left or runner.lost or runner.unmeasured else 0


class Pulse:
    """The run's heartbeat (DIR/heartbeat.json, for ``nicbench status DIR``) beside the
    printer: started once the run has its directory, closed with how the run ended."""

    def __init__(self, name: str, then: ev.Listener):
        self.name = name
        self.then = then
        self.heartbeat: Any = None
        self.ending = "failed"

    def __call__(self, event: ev.Event) -> None:
        from nicbench.execution.heartbeat import HEARTBEAT_FILE, Heartbeat

        if isinstance(event, ev.RunStarted) and self.heartbeat is None:
            self.heartbeat = Heartbeat(Path(event.out) / HEARTBEAT_FILE, kind="run",
                                       name=self.name).start()
        if self.heartbeat is not None:
            self.heartbeat(event)
        self.then(event)

    def __enter__(self) -> Pulse:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self.heartbeat is not None:
            self.heartbeat.close("finished" if exc_type is None else self.ending)


DEFAULT_INVENTORY = "inventory.yaml"     # describes the default lab (prefix nb)


def default_inventory(given: str | None) -> str:
    """-i as given; else, with another lab prefix (NICBENCH_LAB_PREFIX), that lab's own
    inventory (NICBENCH_LAB_DIR or .lab), said in one line; else inventory.yaml."""
    import os

    if given is not None:
        return given
    prefix = os.environ.get("NICBENCH_LAB_PREFIX", "")
    if prefix and prefix != "nb":
        lab_inv = Path(os.environ.get("NICBENCH_LAB_DIR") or ".lab") / "inventory.yaml"
        if lab_inv.is_file():
            out(f"inventory: {lab_inv} (the lab of NICBENCH_LAB_PREFIX={prefix}; -i FILE "
                "for another)")
            return str(lab_inv)
        console.warn(f"NICBENCH_LAB_PREFIX={prefix} but no lab inventory at {lab_inv}: "
                     f"using {DEFAULT_INVENTORY} (the default lab's); pass -i FILE, e.g. "
                     "the inventory `nicbench lab up` printed")
    return DEFAULT_INVENTORY


def resume_command(args, directory) -> str:
    """The command that continues this run: its profile, inventory, pairs and store as
    given (a store's password left out, the note after the command says where to give
    it: ``cli.store.resume_store``)."""
    from nicbench.cli.store import resume_store

    words = ["nicbench", "run", args.profile]
    if args.inventory not in (None, DEFAULT_INVENTORY):
        words += ["-i", args.inventory]
    for pair in args.pair or []:
        words += ["--pair", pair]
    if args.parallel > 1:
        words += ["--parallel", str(args.parallel)]
    store, _ = resume_store(getattr(args, "store", None))
    return shlex.join([*words, *store, "--resume", str(directory)])


def resume_hint(args, directory) -> str:
    """`the resume command` and, if its store's password is left out, where to give it."""
    from nicbench.cli.store import resume_store

    return f"`{resume_command(args, directory)}`" + resume_store(getattr(args, "store", None))[1]


def _say_resume(args, runner) -> None:
    """After Ctrl-C or SIGTERM: how to continue, once the run has stored something
    (before that, the same command starts it again)."""
    trials = runner.run_dir.trials_file
    try:
        stored = trials.stat().st_size > 0
    except OSError:
        return
    if stored:
        console.warn(f"run interrupted: continue it with "
                     f"{resume_hint(args, runner.run_dir.path)}")


def _left_changed(runner) -> bool:
    """Say what the run could not put back, and how to do it later."""
    for p in runner.problems:
        console.error(f"still changed: {p}")
    if runner.problems:
        hosts = ", ".join(sorted({p.host for p in runner.problems}))
        console.error(f"settings on {hosts} were not all put back: when the host answers, "
                      f"run `nicbench restore {runner.run_dir.path}`")
    return bool(runner.problems)


def cmd_restore(args) -> int:
    """Put back what a run's journal holds, on the hosts as the run recorded them."""
    from nicbench.results.dirlock import owned
    from nicbench.results.rundir import RunDir

    run_dir = RunDir(args.dir)
    if not run_dir.path.is_dir():
        raise UsageError(f"{run_dir.path}: no such results directory")
    with owned(run_dir.path):       # never beside a run or another restore of it
        return _restore(run_dir, args)


def _restore(run_dir, args) -> int:
    from nicbench.platforms.base import PlatformOptions
    from nicbench.platforms.hosts import HostPool
    from nicbench.platforms.tuning import TuningSession
    from nicbench.results.manifest import Manifest

    journal = run_dir.journal_file
    if not journal.exists() and not journal.is_symlink():   # a link is refused by the reader
        out("nothing to restore (no tuning journal: nothing is left changed by that run)")
        return 0
    session = TuningSession.load(journal, on_restore=_said_restored)
    hosts = sorted(session.hosts())
    if not hosts:
        out("nothing to restore")
        return 0
    manifest = Manifest.read(run_dir.manifest_file)
    inv = _recorded_inventory(manifest, args.inventory, hosts)
    # A reboot marker put back waits as long as the run's profile said.
    with HostPool(inv, options=PlatformOptions.of(manifest.profile)) as pool:
        platforms = {h: pool.platform(h) for h in hosts}
        session.bind(platforms)
        for x in session.leftovers:
            out(f"stopping {x.host} {x.what} ({x.path})")
        problems = session.restore()
    for p in problems:
        console.error(f"still changed: {p}")
    return 1 if problems else 0


def _said_restored(change) -> None:
    from nicbench.platforms.base import SettingKind

    if change.kind is SettingKind.REBOOT:   # a Windows journal marker: restoring it rebooted
        out(f"rebooted {change.host}: the registry values put back take effect at boot")
    else:
        out(f"restored {change.host} {change.kind} {change.key} = "
            f"{'<absent>' if change.original is None else change.original}")


def _recorded_inventory(manifest, given: str | None, hosts: list[str]):
    """The inventory the run was made with (its hosts and addresses, not whatever the
    current file says); with ``-i``, that file must agree for these hosts."""
    from nicbench.config.loader import load_inventory
    from nicbench.tools.registry import CATALOG
    from nicbench.results.manifest import differences

    inv = manifest.inventory.model_copy(update={"base_dir": manifest.inventory_dir or ".",
                                                "file": manifest.inventory_file})
    for h in hosts:
        inv.host(h)        # a journal naming a host the run did not have: one clear line
    if given:
        other = load_inventory(given, CATALOG)
        for h in hosts:
            try:
                now = other.host(h).model_dump(mode="json")
            except UsageError:
                raise UsageError(f"{given}: has no host '{h}', which the run changed: "
                                 "restore without -i (the run's own inventory is used)") \
                    from None
            diff = differences(inv.host(h).model_dump(mode="json"), now)
            if diff:
                raise UsageError(f"{given}: host '{h}' differs from the one the run was made "
                                 f"with ({', '.join(diff[:3])}): restore without -i, or with "
                                 "the inventory the run used")
    return inv


def _parallel(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of pairs from 1 to 64")
    return n


def register(sub) -> None:
    from nicbench.cli.store import add_store_option

    run = sub.add_parser("run", help="run a profile on the inventory's pairs")
    run.add_argument("profile", help="profile name (profiles/NAME.yaml) or file")
    run.add_argument("-i", "--inventory", default=None,
                     help="inventory file (default inventory.yaml; with another "
                          "NICBENCH_LAB_PREFIX, that lab's own inventory)")
    run.add_argument("--pair", action="append", metavar="NAME", help="only this pair (repeat)")
    run.add_argument("--out", help="results directory (default reports/<profile>-<time>/)")
    run.add_argument("--resume", metavar="DIR", help="continue a run that stopped half-way")
    run.add_argument("--keep-failed", action="store_true",
                     help="with --resume: leave failed and given-up configurations as they "
                          "are (by default they are measured again)")
    run.add_argument("--trust-new-host-keys", action="store_true")
    run.add_argument("--plan", action="store_true",
                     help="print every command the run would send, per host and in order, "
                          "the number of trials and an estimate of the time, and stop "
                          "(connects to nothing)")
    run.add_argument("--parallel", type=_parallel, default=1, metavar="N",
                     help="measure up to N pairs at once; pairs that share a host never run "
                          "at the same time (default 1: one pair after another)")
    run.add_argument("--report", action="store_true",
                     help="build the report of the run in DIR/report/ when it ends")
    add_store_option(run)
    run.set_defaults(func=cmd_run)

    rst = sub.add_parser("restore", help="put back settings a run left changed (after a crash)")
    rst.add_argument("dir", help="the run's results directory")
    rst.add_argument("-i", "--inventory", default=None,
                     help="check the hosts against this inventory (default: the run's own "
                          "record of them is used)")
    rst.set_defaults(func=cmd_restore)


def _figure(r) -> str:
    """A trial's figure on its progress line: its throughput (a netPIPE curve's plateau,
    the report's figure, with its burst maximum marked as such), a latency run's round
    trips (p50/p99 in ms), and a probe's beside the load."""
    lat = r.latency
    flat = _plateau_bps(r)
    text = (f"plateau {mbit(flat)} Mbit/s (burst {mbit(r.throughput_bps)})"
            if flat is not None and r.throughput_bps is not None else
            f"{mbit(r.throughput_bps)} Mbit/s" if r.throughput_bps is not None else
            f"p50 {_ms(r.extra, lat, 'p50')}, p99 {_ms(r.extra, lat, 'p99')}" if lat else "")
    for b in r.beside:
        if b.latency is not None:
            text += (f"; {b.role} p50 {b.latency.p50_us / 1000:.2f} ms, "
                     f"p99 {b.latency.p99_us / 1000:.2f} ms")
    return text


def _ms(extra: dict[str, Any], lat, name: str) -> str:
    """One repetition's percentile in ms; a histogram's as its bin ("0.10-0.20 ms")."""
    high = getattr(lat, f"{name}_us") / 1000
    low = extra.get(f"{name}_low_us")
    return f"{low / 1000:.2f}-{high:.2f} ms" if isinstance(low, (int, float)) and \
        low < high * 1000 else f"{high:.2f} ms"
