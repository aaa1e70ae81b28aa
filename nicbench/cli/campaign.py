"""``nicbench campaign`` and ``nicbench status``."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

from nicbench.cli import console
from nicbench.cli.console import out
from nicbench.durations import duration
from nicbench.cli.run import RunPrinter, _parallel
from nicbench.execution import events as ev


class CampaignPrinter(RunPrinter):
    """A campaign's events: the runs' lines (each trial says its pair and point, with the
    campaign's counts and ETA) between one line per run begun and ended; on a terminal
    one progress bar for the whole campaign."""

    def __call__(self, event) -> None:
        from nicbench.execution import campaign as cp

        match event:
            case cp.CampaignStarted(name=name, runs=runs, total=total, done=done,
                                    parallel=parallel, shard=shard, resumed=resumed):
                what = "resuming" if resumed else "running"
                self.line(f"{what} {len(runs)} runs ({', '.join(runs)}): {total} trials "
                          f"planned, {done} done; up to {parallel} pairs at once"
                          + (f", shard {shard}" if shard else ""))
                if self._bar is not None:
                    self._task = self._bar.add_task(name, total=total, completed=done)
            case cp.RunBegins(i=i, n=n, name=name, profile=profile, pairs=pairs,
                              resumed=resumed):
                self._where = name
                self.line(f"== run {i}/{n} {name} ({profile}{', resumed' if resumed else ''}"
                          f"): {', '.join(pairs)}")
            case cp.RunEnds(name=name, state=state, error=error, report=report):
                self.line(f"== run {name}: {state}" + (f": {error}" if error else "")
                          + (f"; report {report}" if report else ""))
            case cp.OnFinishRan(command=command, exit_status=status, error=error, tail=tail):
                if error:
                    console.error(f"on_finish `{command}` failed: {error}"
                                  + (f": {tail.strip().splitlines()[-1]}" if tail.strip()
                                     else ""))
                else:
                    self.line(f"on_finish `{command}`: exit {status}")
            case cp.CampaignEnded():
                pass
            case ev.RunStarted():
                self._parallel = True      # runs and pairs interleave: say where
            case _:
                super().__call__(event)


def _build_report(run_dir: Path) -> Path:
    from nicbench.report import build_report

    return build_report([str(run_dir)], str(run_dir / "report"), warn=console.warn)


def cmd_campaign(args) -> int:
    from nicbench.config.loader import load_campaign_checked, resolve_profile_path
    from nicbench.tools.registry import CATALOG
    from nicbench.execution.campaign import CampaignRunner, parse_shard
    from nicbench.results.morning import matrix

    loaded, inv = load_campaign_checked(resolve_profile_path(args.file), args.inventory,
                                        CATALOG)
    for name in args.pair or []:
        inv.pair(name)          # an unknown name is refused before anything is printed
    shard = parse_shard(args.shard) if args.shard else None
    if args.plan:
        return _plan(loaded, inv, args, shard)
    from nicbench.cli.store import checked_location, history_store, run_sink

    location = checked_location(args.store)
    out_dir = Path(args.resume or args.out or
                   f"reports/{loaded.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    out(f"nicbench campaign {loaded.name} -> {out_dir}")
    with CampaignPrinter() as printer:
        runner = CampaignRunner(loaded, inv, out_dir, resume=bool(args.resume),
                                parallel=args.parallel, only_pairs=args.pair, shard=shard,
                                listener=printer, trust_new_keys=args.trust_new_host_keys,
                                build_report=_build_report,
                                sinks=lambda run_dir, tell: run_sink(location, run_dir, tell),
                                history=lambda: history_store(location))
        try:
            status = runner.run()
        except KeyboardInterrupt:
            if runner.state is not None:
                from nicbench.cli.store import resume_store

                store, note = resume_store(args.store)
                again = shlex.join(["nicbench", "campaign", args.file, *store, "--resume",
                                    str(out_dir)])
                console.warn(f"campaign interrupted: summary in {out_dir}/summary.md; "
                             f"continue it with `{again}`{note}")
            raise
    m = runner.morning
    if m is not None:
        out("")
        cols, rows = matrix(m)
        out("best selected value per method and test, Mbit/s, and where "
            "(* not everything measured):")
        console.table(["adapter", "pair"] + [f"{r} {t}" for r, t in cols],
                      [[adapter, pair, *values] for pair, adapter, values, _ in rows])
        for c in m.cells:
            for why in c.reasons:
                console.problem(f"{c.pair} {c.run}: {why}")
        for p in m.problems:
            console.error(p)
        out(f"\n{_headline(m)}")
    out(f"summary: {out_dir}/summary.md")
    out(f"index: {out_dir}/index.html")
    return status


def _plan(loaded, inv, args, shard) -> int:
    """Each run's plan in the campaign's order, connecting to nothing, and the whole
    night's estimate."""
    from nicbench.execution.campaign import plan as campaign_order
    from nicbench.execution.plan import duration_text, make_plan, render

    parallel = args.parallel or loaded.campaign.parallel
    profiles = {r.name: r.profile for r in loaded.runs}
    runs = campaign_order(loaded, inv, args.pair, shard, seed=0)
    plans = [(rs.name, make_plan(profiles[rs.name], inv, rs.pairs, parallel)) for rs in runs]
    total = sum(p.estimate_s for _, p in plans)
    order = "" if loaded.campaign.order == "listed" else \
        " (order: shuffle; the real order comes from the seed drawn when it starts)"
    out(f"campaign {loaded.name}: {len(plans)} runs, {sum(p.trials for _, p in plans)} "
        f"trials, up to {parallel} pairs at once; estimated time {duration_text(total)}"
        f"{order}")
    for name, p in plans:
        out("")
        out(f"### run {name}")
        for line in render(p):
            out(line)
    return 0


def _headline(m) -> str:
    from nicbench.results.morning import headline

    return headline(m)


def cmd_status(args) -> int:
    from nicbench.execution.status import status

    st = status(args.dir)
    for r in st.runs:
        for line in r.unread:
            console.warn(line)
    night = None
    if args.store is not None:      # the whole night, every controller's share of it
        from nicbench.cli.store import night_of

        night = night_of(args.store, args.dir)
    if args.json:
        out(json.dumps({**st.to_json(), **({"store": night} if night else {})}, indent=1))
        return 0 if st.ok else 1
    out(f"{st.kind} {st.name} ({st.path}): {st.state}")
    out(f"controller: {st.controller}")
    eta = f", ETA {duration(st.eta_s)}" if st.eta_s is not None and st.state == "running" \
        else ""
    out(f"trials: {st.done}/{st.planned}{eta}")
    rows = []
    for r in st.runs:
        for p in r.pairs:
            rows.append([r.name, p.pair, p.state, f"{p.done}/{p.planned}", p.current or "-",
                         p.failed, p.skipped, duration(p.eta_s) if p.eta_s is not None
                         else "-"])
    out("")
    console.table(["run", "pair", "state", "trials", "current", "failed", "not measured",
                   "ETA"], rows)
    if st.summary:
        out(f"\nsummary: {Path(st.path) / st.summary}")
    if night:
        shards = f" (shards {', '.join(night['shards'])})" if night["shards"] else ""
        out(f"store: night {night['night']} of {night['campaign']}: {night['runs']} runs"
            f"{shards}, {night['trials']} trials")
    return 0 if st.ok else 1


def register(sub) -> None:
    from nicbench.cli.store import add_store_option

    cp = sub.add_parser("campaign", help="run a campaign file: several runs for one night, "
                                         "host-disjoint pairs at once")
    cp.add_argument("file", help="campaign file, or the name of one in profiles/ "
                                 "(lab-overnight)")
    cp.add_argument("-i", "--inventory", default=None,
                    help="inventory (default: the campaign's inventory:, else inventory.yaml)")
    cp.add_argument("--out", help="campaign directory (default reports/<name>-<time>/)")
    cp.add_argument("--resume", metavar="DIR", help="continue a campaign that stopped")
    cp.add_argument("--parallel", type=_parallel, default=None, metavar="N",
                    help="most pairs measured at once (default: the file's parallel:)")
    cp.add_argument("--pair", action="append", metavar="NAME",
                    help="only this pair (repeat): a share of the campaign for this "
                         "controller")
    cp.add_argument("--shard", metavar="K/N",
                    help="run share K of N: pairs split so that no host is in two shares")
    cp.add_argument("--trust-new-host-keys", action="store_true")
    cp.add_argument("--plan", action="store_true",
                    help="print every run's commands per host in order, the trials, the "
                         "estimated time and how the pairs run at once, and stop (connects "
                         "to nothing)")
    add_store_option(cp)
    cp.set_defaults(func=cmd_campaign)

    st = sub.add_parser("status", help="progress of a run or campaign directory (safe while "
                                       "it runs)")
    st.add_argument("dir", help="a run's or a campaign's directory")
    st.add_argument("--json", action="store_true", help="the same as JSON")
    st.add_argument("--store", metavar="STORE", default=None,
                    help="also what this results store holds of the campaign's night, "
                         "every shard's runs (a DuckDB file or postgresql://... URL)")
    st.set_defaults(func=cmd_status)
