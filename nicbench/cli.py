"""The ``nicbench`` command: parse arguments, call the library, print results and errors.

Kept thin on purpose: every command is a function of a few lines over library calls.
Every failure the library raises on purpose (``NicbenchError``) becomes one line per
problem on stderr and the error's exit code; never a traceback (``--debug`` shows one).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from nicbench import __version__
from nicbench.errors import NicbenchError

DEFAULT_INVENTORY = "inventory.yaml"


def _env_lab_spec(args):
    from nicbench.lab.lab import LabSpec

    adapters = tuple(a for a in (getattr(args, "adapters", None) or "").split(",") if a)
    kw = {"prefix": os.environ.get("NICBENCH_LAB_PREFIX", "nb"),
          "slot": int(os.environ.get("NICBENCH_LAB_SLOT", "0"))}
    if getattr(args, "pairs", None):
        kw["pairs"] = args.pairs
    if getattr(args, "rate", None):
        kw["rate"] = args.rate
    if adapters:
        kw["adapters"] = adapters
    return LabSpec(**kw)


def _lab_dir(args) -> str:
    return args.dir or os.environ.get("NICBENCH_LAB_DIR", ".lab")


def _out(text: str = "") -> None:
    print(text, flush=True)


def _table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# -- lab ---------------------------------------------------------------------------
def cmd_lab_up(args) -> int:
    from nicbench.lab.lab import Lab

    lab = Lab(_env_lab_spec(args), _lab_dir(args), progress=lambda m: _out(f"lab: {m}"))
    lab.up()
    _out(f"lab up: {len(lab.spec.hosts())} hosts, {len(lab.spec.links())} test links; "
         f"inventory {lab.inventory_file}")
    return 0


def cmd_lab_down(args) -> int:
    from nicbench.lab.lab import Lab

    lab = Lab.existing(_lab_dir(args), _env_lab_spec(args))
    removed = lab.down()
    _out(f"lab down: removed {len(removed)} objects" + (f" ({', '.join(removed)})" if removed else ""))
    return 0


def cmd_lab_status(args) -> int:
    from nicbench.lab.lab import Lab

    lab = Lab.existing(_lab_dir(args), _env_lab_spec(args))
    rows = lab.status()
    _out(_table(["host", "namespace", "address", "sshd"],
                [[r["host"], "yes" if r["namespace"] else "no", r["address"],
                  r["sshd_pid"] or "not running"] for r in rows]))
    up = all(r["namespace"] and r["sshd_pid"] for r in rows)
    _out("lab is up" if up else "lab is down or incomplete (nicbench lab up)")
    return 0 if up else 1


def cmd_lab_inventory(args) -> int:
    from nicbench.lab.lab import render_inventory

    sys.stdout.write(render_inventory(_env_lab_spec(args), args.key_dir))
    return 0


# -- check -------------------------------------------------------------------------
def cmd_check(args) -> int:
    from nicbench.check import TOOLS, check
    from nicbench.config.loader import load_inventory

    inv = load_inventory(args.inventory)
    profile = None
    if args.profile:
        from nicbench.config.loader import load_profile, resolve_profile_path

        profile = load_profile(resolve_profile_path(args.profile))
    reports = check(inv, args.pairs or None, trust_new_keys=args.trust_new_host_keys,
                    profile=profile)
    rows = []
    for rep in reports:
        for side in rep.sides:
            rows.append([rep.pair, side.host, side.interface, side.address, side.state,
                         side.mtu, side.max_mtu, side.driver,
                         " ".join(f"{t}={side.tools.get(t) or '-'}" for t in TOOLS),
                         "yes" if side.reaches_peer else "NO"])
    _out(_table(["pair", "host", "if", "address", "state", "mtu", "max", "driver", "tools",
                 "reach"], rows))
    for rep in reports:
        for line in rep.skipped:
            _out(line)
    problems = [p for rep in reports for p in rep.problems]
    for p in problems:
        print(f"nicbench: problem: {p}", file=sys.stderr)
    ready = sum(r.ready for r in reports)
    _out(f"{ready} of {len(reports)} pairs ready" + (f" to run {profile.name}" if profile else ""))
    return 0 if not problems else 1


# -- report ------------------------------------------------------------------------
def cmd_report(args) -> int:
    from nicbench.report import build_report

    page = build_report(args.dirs, args.out, link_rates=args.link_rate,
                        warn=lambda m: print(f"nicbench: warning: {m}", file=sys.stderr))
    _out(f"report: {page}")
    return 0


# -- argument parsing --------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nicbench",
        description="Benchmark network adapters between host pairs the way the 2002-2003 "
                    "roundups did: tune, run the tools many times, keep every sample, chart.")
    p.add_argument("--version", action="version", version=f"nicbench {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    lab = sub.add_parser("lab", help="the local lab of namespace hosts (root)")
    labsub = lab.add_subparsers(dest="lab_command", metavar="ACTION")
    up = labsub.add_parser("up", help="build (or repair) the lab")
    up.add_argument("--pairs", type=int, help="host pairs (default 1)")
    up.add_argument("--rate", help="line rate of every test link, e.g. 1gbit (default: "
                                   "each emulated adapter's own)")
    up.add_argument("--adapters", help="comma-separated emulated adapters "
                                       "(default: gbe,pci32,nojumbo,stall,fe)")
    up.set_defaults(func=cmd_lab_up)
    down = labsub.add_parser("down", help="remove everything the lab made")
    down.set_defaults(func=cmd_lab_down)
    st = labsub.add_parser("status", help="show the lab's hosts")
    st.set_defaults(func=cmd_lab_status)
    li = labsub.add_parser("inventory", help="print the inventory describing the lab")
    li.add_argument("--pairs", type=int)
    li.add_argument("--rate")
    li.add_argument("--adapters")
    li.add_argument("--key-dir", default=".lab")
    li.set_defaults(func=cmd_lab_inventory)
    for sp in (up, down, st):
        sp.add_argument("--dir", help="lab state directory (default .lab, or $NICBENCH_LAB_DIR)")
    li.set_defaults(dir=None)

    ck = sub.add_parser("check", help="check that every pair is ready to measure")
    ck.add_argument("pairs", nargs="*", metavar="PAIR")
    ck.add_argument("-i", "--inventory", default=DEFAULT_INVENTORY)
    ck.add_argument("--trust-new-host-keys", action="store_true",
                    help="record the key of a host not yet in known_hosts (never replaces one)")
    ck.add_argument("--profile", metavar="PROFILE",
                    help="also check the pairs can run this profile: its platform, its tools, "
                         "and which of its MTUs each adapter will skip")
    ck.set_defaults(func=cmd_check)

    rp = sub.add_parser("report", help="charts and tables of one or more results directories")
    rp.add_argument("dirs", nargs="+", metavar="DIR", help="results directory of a run")
    rp.add_argument("--out", help="report directory (default reports/report-<time>/)")
    rp.add_argument("--link-rate", action="append", default=[], metavar="NAME=RATE",
                    help="line rate of a pair or adapter id, e.g. gbe=1gbit (repeat); "
                         "overrides the rate read from the inventory")
    rp.set_defaults(func=cmd_report)

    _add_later_commands(sub)
    return p


def _add_later_commands(sub) -> None:
    """Commands whose modules import heavier libraries are registered by those modules."""
    from nicbench import commands

    commands.register(sub)


def _term_as_interrupt(*_):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        if args.command == "lab":
            parser.parse_args(["lab", "--help"])
        parser.print_help()
        return 2
    # SIGTERM (kill, CI timeouts) unwinds like Ctrl-C, so every finally restores hosts.
    signal.signal(signal.SIGTERM, _term_as_interrupt)
    try:
        return args.func(args)
    except NicbenchError as exc:
        lines = exc.lines() if hasattr(exc, "lines") else [str(exc)]
        for line in lines:
            print(f"nicbench: error: {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("nicbench: interrupted; host settings were restored", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: say so in one line unless --debug
        if args.debug:
            raise
        print(f"nicbench: internal error: {type(exc).__name__}: {exc} "
              "(run with --debug for a traceback and report it)", file=sys.stderr)
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
