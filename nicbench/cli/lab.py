"""``nicbench lab``: the local lab of namespace hosts."""

from __future__ import annotations

import os
from pathlib import Path
import sys

from nicbench.cli import console
from nicbench.cli.console import out
from nicbench.errors import LabError, UsageError


def _env_slot() -> int:
    raw = os.environ.get("NICBENCH_LAB_SLOT", "0")
    if not raw.strip().isdigit():
        raise UsageError(f"NICBENCH_LAB_SLOT={raw!r}: not a slot number (0 to 14; unset "
                         "it for slot 0)")
    return int(raw)


def _env_lab_spec(args, recorded: dict | None = None):
    """The lab the command line and the environment ask for; what they leave out comes
    from ``recorded`` (the spec in the lab's state.json) when there is one, else the
    defaults, so that `lab up` rebuilds a damaged lab as it was made."""
    from nicbench.lab.lab import LabSpec

    was = recorded or {}
    adapters = tuple(a for a in (getattr(args, "adapters", None) or "").split(",") if a)
    adapters = adapters or tuple(was.get("adapters", LabSpec.adapters))
    pairs = getattr(args, "pairs", None)
    rate = getattr(args, "rate", None)
    # Adapters slowed with `lab shape` stay slowed, unless the command line sets every
    # link's rate anew.
    ceilings = {} if rate else {k: v for k, v in (was.get("ceilings") or {}).items()
                                if k in adapters}
    try:
        return LabSpec(
            prefix=os.environ.get("NICBENCH_LAB_PREFIX", was.get("prefix", "nb")),
            slot=_env_slot() if "NICBENCH_LAB_SLOT" in os.environ else was.get("slot", 0),
            pairs=pairs if pairs is not None else was.get("pairs", LabSpec.pairs),
            rate=rate or was.get("rate"), adapters=adapters, ceilings=ceilings)
    except LabError as exc:
        # Everything LabSpec checks came from the environment or the command line.
        raise UsageError(f"{exc} (from NICBENCH_LAB_PREFIX, NICBENCH_LAB_SLOT or the "
                         "command line)") from None


def _lab_dir(args) -> str:
    """--dir (checked with the other paths), else $NICBENCH_LAB_DIR, else .lab: a
    directory the lab writes its state and keys into."""
    from nicbench.cli.paths import check_dir_to_write

    if args.dir:
        return args.dir
    env = os.environ.get("NICBENCH_LAB_DIR")
    if env:
        check_dir_to_write(env, "NICBENCH_LAB_DIR=")
    return env or ".lab"


def cmd_lab_up(args) -> int:
    from nicbench.lab.lab import Lab

    directory = _lab_dir(args)
    state = Lab(_env_lab_spec(args), directory).read_state()
    lab = Lab(_env_lab_spec(args, _recorded(state, directory)), directory,
              progress=lambda m: out(f"lab: {m}"))
    lab.up()
    out(f"lab up: {len(lab.spec.hosts())} hosts, {len(lab.spec.links())} test links; "
         f"inventory {lab.inventory_file}")
    if lab.spec.prefix != "nb":     # inventory.yaml describes the default lab, not this one
        out(f"run on it with: nicbench run PROFILE -i {lab.inventory_file} (or keep "
            f"NICBENCH_LAB_PREFIX={lab.spec.prefix} set"
            + ("" if Path(directory) == Path(".lab") or os.environ.get("NICBENCH_LAB_DIR")
               else f" with NICBENCH_LAB_DIR={directory}") + ")")
    return 0


def _recorded(state, directory: str) -> dict | None:
    """The spec a lab's state.json recorded, checked as a whole (a hand-edited or
    foreign file is one line saying how to start afresh)."""
    from nicbench.lab.lab import LabSpec

    if state is None:
        return None
    spec = state.spec
    try:
        if not isinstance(spec, dict):
            raise TypeError("not a mapping")
        LabSpec(**{**spec, "adapters": tuple(spec.get("adapters", ()))})
    except (LabError, TypeError, ValueError) as exc:
        raise UsageError(f"{directory}/state.json: its lab spec cannot be used ({exc}): "
                         f"take the lab down (nicbench lab down --dir {directory}) and "
                         "bring it up again") from None
    return spec


def cmd_lab_down(args) -> int:
    from nicbench.lab.lab import Lab

    lab = Lab.existing(_lab_dir(args), _env_lab_spec(args))
    removed = lab.down()
    out(f"lab down: removed {len(removed)} objects" + (f" ({', '.join(removed)})" if removed else ""))
    return 0


def cmd_lab_status(args) -> int:
    from nicbench.lab.lab import Lab

    lab = Lab.existing(_lab_dir(args), _env_lab_spec(args))
    rows = lab.status()
    console.table(["host", "namespace", "address", "sshd"],
                  [[r["host"], "yes" if r["namespace"] else "no", r["address"],
                    r["sshd_pid"] or "not running"] for r in rows])
    up = all(r["namespace"] and r["sshd_pid"] for r in rows)
    out("lab is up" if up else "lab is down or incomplete (nicbench lab up)")
    return 0 if up else 1


def cmd_lab_shape(args) -> int:
    from dataclasses import replace

    from nicbench.lab.lab import Lab, LabSpec, rate_bps

    key = args.adapter
    if (args.rate is None) == (not args.reset):
        raise UsageError(f"nicbench lab shape {key}: give --rate RATE (e.g. 500mbit) or "
                         "--reset (back to the adapter's own rate), one of the two")
    if args.rate is not None:
        try:
            rate_bps(args.rate)
        except LabError as exc:
            raise UsageError(f"nicbench lab shape {key} --rate: {exc}") from None
    directory = _lab_dir(args)
    lab = Lab(LabSpec(), directory)
    lab.preflight()
    state = lab.read_state()
    if state is None:
        raise UsageError(f"no lab in {directory} to shape: nicbench lab up first (or give "
                         "--dir the lab's directory)")
    _recorded(state, directory)      # a spoiled state.json is one line, not a traceback
    lab = Lab.existing(directory, LabSpec())
    if key not in lab.spec.adapters:
        raise UsageError(f"nicbench lab shape {key}: the lab in {directory} has no adapter "
                         f"{key!r} (it has {', '.join(lab.spec.adapters)})")
    before = lab.spec.adapter(key).shaped_rate
    ceilings = {k: v for k, v in lab.spec.ceilings.items() if k != key}
    if args.rate is not None:
        ceilings[key] = args.rate
    try:
        replace(lab.spec, ceilings=ceilings)      # checked before anything changes
    except LabError as exc:
        raise UsageError(f"nicbench lab shape {key} --rate {args.rate}: {exc}") from None
    now = lab.shape(key, args.rate).adapter(key).shaped_rate
    back = "" if args.reset else f"; `nicbench lab shape {key} --reset` gives back {before}"
    out(f"lab: {key} shaped to {now} (was {before}); `nicbench lab up` keeps it so{back}")
    return 0


def cmd_lab_inventory(args) -> int:
    from nicbench.lab.lab import render_inventory

    sys.stdout.write(render_inventory(_env_lab_spec(args), args.key_dir))
    return 0


def register(sub) -> None:
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
    sh = labsub.add_parser("shape", help="slow one emulated adapter's links to a rate, "
                                         "or give them back their own (--reset)")
    sh.add_argument("adapter", metavar="ADAPTER", help="an adapter of the lab, e.g. gbe")
    sh.add_argument("--rate", help="the links' new tbf rate, tc syntax (e.g. 500mbit): "
                                   "from 1mbit up to the adapter's line rate")
    sh.add_argument("--reset", action="store_true",
                    help="give the adapter back its own rate")
    sh.set_defaults(func=cmd_lab_shape)
    li = labsub.add_parser("inventory", help="print the inventory describing the lab")
    li.add_argument("--pairs", type=int)
    li.add_argument("--rate")
    li.add_argument("--adapters")
    li.add_argument("--key-dir", default=".lab")
    li.set_defaults(func=cmd_lab_inventory)
    for sp in (up, down, st, sh):
        sp.add_argument("--dir", help="lab state directory (default .lab, or $NICBENCH_LAB_DIR)")
    li.set_defaults(dir=None)
