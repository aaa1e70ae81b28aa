"""``nicbench check``: is every pair ready to measure?"""

from __future__ import annotations

from nicbench.cli import console
from nicbench.cli.console import out

DEFAULT_INVENTORY = "inventory.yaml"


def cmd_check(args) -> int:
    from nicbench.execution.readiness import TOOLS, check
    from nicbench.config.loader import load_inventory
    from nicbench.tools.registry import CATALOG

    inv = load_inventory(args.inventory, CATALOG)
    profile = None
    if args.profile:
        from nicbench.config.loader import load_profile, resolve_profile_path

        profile = load_profile(resolve_profile_path(args.profile), CATALOG)
    reports = check(inv, args.pairs or None, trust_new_keys=args.trust_new_host_keys,
                    profile=profile)
    rows = []
    for rep in reports:
        for side in rep.sides:
            rows.append([rep.pair, side.host, side.interface, side.address, side.state,
                         side.mtu, side.max_mtu, side.driver,
                         " ".join(f"{t}={side.tools.get(t) or '-'}" for t in TOOLS),
                         "yes" if side.reaches_peer else "NO"])
    console.table(["pair", "host", "if", "address", "state", "mtu", "max", "driver", "tools",
                   "reach"], rows)
    for rep in reports:
        for line in rep.skipped:
            out(line)
    problems = [p for rep in reports for p in rep.problems]
    for p in problems:
        console.problem(p)
    ready = sum(r.ready for r in reports)
    out(f"{ready} of {len(reports)} pairs ready" + (f" to run {profile.name}" if profile else ""))
    return 0 if not problems else 1


def register(sub) -> None:
    ck = sub.add_parser("check", help="check that every pair is ready to measure")
    ck.add_argument("pairs", nargs="*", metavar="PAIR")
    ck.add_argument("-i", "--inventory", default=DEFAULT_INVENTORY)
    ck.add_argument("--trust-new-host-keys", action="store_true",
                    help="record the key of a host not yet in known_hosts (never replaces one)")
    ck.add_argument("--profile", metavar="PROFILE",
                    help="also check the pairs can run this profile: its platform, its tools, "
                         "and which of its MTUs each adapter will skip")
    ck.set_defaults(func=cmd_check)
