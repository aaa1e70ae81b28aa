"""``nicbench validate FILE...``: check inventories, profiles and campaign files without
touching a host.

Each file is told apart by its keys (``hosts:`` ... an inventory; ``tests:`` ... a
profile; ``runs:`` a campaign, its profiles and its inventory loaded too, every
cross-reference checked by the one function ``campaign`` and ``campaign --plan`` use,
``loader.load_campaign_checked``) and validated exactly as
``check``, ``run`` and ``campaign`` load it; every problem of every
file is one ``nicbench: error: file:line: key: message`` line. Exit 0 when all are valid,
2 otherwise.
"""

from __future__ import annotations

from nicbench.cli import console
from nicbench.cli.console import out
from nicbench.errors import ConfigError


def _n(count: int, what: str) -> str:
    return f"{count} {what}" + ("" if count == 1 else "s")


def summary(loaded) -> str:
    from nicbench.config.inventory import Inventory

    from nicbench.config.campaign import LoadedCampaign

    if isinstance(loaded, Inventory):
        return (f"inventory: {_n(len(loaded.hosts), 'host')}, "
                f"{_n(len(loaded.adapters), 'adapter')}, {_n(len(loaded.pairs), 'pair')}")
    if isinstance(loaded, LoadedCampaign):
        return (f"campaign {loaded.name}: {_n(len(loaded.runs), 'run')} "
                f"({', '.join(r.name for r in loaded.runs)}), up to "
                f"{loaded.campaign.parallel} pairs at once")
    return (f"profile {loaded.name}: {_n(len(loaded.points), 'point')}, "
            f"{_n(len(loaded.tests), 'test')}, platform {loaded.platform}")


def cmd_validate(args) -> int:
    from nicbench.config.campaign import LoadedCampaign
    from nicbench.config.loader import load_any, load_campaign_checked
    from nicbench.tools.registry import CATALOG

    bad = 0
    for name in args.files:
        try:
            loaded = load_any(name, CATALOG)
            if isinstance(loaded, LoadedCampaign):
                # exactly what `campaign` and `campaign --plan` check before they start
                loaded, _ = load_campaign_checked(name, args.inventory, CATALOG)
        except ConfigError as exc:
            bad += 1
            for line in exc.lines():
                console.error(line)
            continue
        out(f"{name}: ok ({summary(loaded)})")
    return 2 if bad else 0


def register(sub) -> None:
    va = sub.add_parser("validate", help="check inventories and profiles (no host is "
                                         "contacted)")
    va.add_argument("files", nargs="+", metavar="FILE",
                    help="inventory, profile or campaign files, told apart by their keys")
    va.add_argument("-i", "--inventory", default=None,
                    help="the inventory a campaign file is checked against, as `campaign "
                         "-i` (default: its inventory:, else inventory.yaml)")
    va.set_defaults(func=cmd_validate)
