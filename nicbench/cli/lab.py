"""``nicbench lab``: the local lab of namespace hosts."""

from __future__ import annotations

import os
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
    pairs = getattr(args, "pairs", None)
    try:
        return LabSpec(
            prefix=os.environ.get("NICBENCH_LAB_PREFIX", was.get("prefix", "nb")),
            slot=_env_slot() if "NICBENCH_LAB_SLOT" in os.environ else was.get("slot", 0),
            pairs=pairs if pairs is not None else was.get("pairs", LabSpec.pairs),
            rate=getattr(args, "rate", None) or was.get("rate"),
            adapters=adapters or tuple(was.get("adapters", LabSpec.adapters)))
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
    li = labsub.add_parser("inventory", help="print the inventory describing the lab")
    li.add_argument("--pairs", type=int)
    li.add_argument("--rate")
    li.add_argument("--adapters")
    li.add_argument("--key-dir", default=".lab")
    li.set_defaults(func=cmd_lab_inventory)
    for sp in (up, down, st):
        sp.add_argument("--dir", help="lab state directory (default .lab, or $NICBENCH_LAB_DIR)")
    li.set_defaults(dir=None)
