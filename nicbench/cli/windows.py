"""``nicbench windows capture``: record what a real Windows host answers to every
read-only command nicbench sends, as fixtures for the readers (README, "Windows hosts")."""

from __future__ import annotations

from nicbench.cli import console
from nicbench.cli.console import out
from nicbench.errors import UsageError


def cmd_capture(args) -> int:
    from nicbench.config.loader import load_inventory
    from nicbench.tools.registry import CATALOG
    from nicbench.platforms.hosts import HostPool
    from nicbench.platforms.windows import WindowsPlatform
    from nicbench.platforms.windows_capture import Captured, capture

    inv = load_inventory(args.inventory, CATALOG)
    host = inv.host(args.host)
    if host.os != "windows":
        raise UsageError(f"{host.name} is an os: {host.os} host; `windows capture` records "
                         "Windows hosts (os: windows in the inventory)")
    interfaces: list[str] = []
    peers: list[str] = []
    for pair in inv.pairs:
        for mine, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if mine.host == host.name:
                interfaces += [mine.interface] if mine.interface not in interfaces else []
                peers += [other.address] if other.address not in peers else []

    def said(c: Captured) -> None:
        if c.error:
            status = c.error
        else:
            status = "timed out" if c.timed_out else f"exit {c.exit_status}"
            status += f", {len(c.stdout)} bytes"
            if c.read is not None:
                status += f", {c.reads}: {'understood' if c.read == 'ok' else c.read}"
        out(f"  {c.name:<26} {status}")

    out(f"nicbench windows capture {host.name} -> {args.out}")
    with HostPool(inv, trust_new_keys=args.trust_new_host_keys) as pool:
        platform = pool.platform(host.name)
        if not isinstance(platform, WindowsPlatform):   # pragma: no cover - os checked above
            raise UsageError(f"{host.name}: not a Windows platform")
        done = capture(platform, args.out, interfaces, peers, say=said)
    failed = [c for c in done if c.error]
    misread = [c for c in done if c.read not in (None, "ok")]
    out(f"\n{len(done) - len(failed)} of {len(done)} commands captured into {args.out}/ "
        "(manifest.json, and per command its decoded script, stdout and stderr as sent)")
    if misread:
        out(f"{len(misread)} answers were not understood by their readers "
            f"({', '.join(c.name for c in misread)}): the capture shows what to fix")
    out("Hand the directory back (issue #11), or add it under "
        "tests/fixtures/windows/<host>-<build>/ with a line in its SOURCES.md.")
    for c in failed:
        console.error(f"{host.name}: {c.name}: {c.error}")
    return 1 if failed else 0


def register(sub) -> None:
    win = sub.add_parser("windows", help="Windows hosts: record a host's answers as fixtures")
    wsub = win.add_subparsers(dest="windows_command", metavar="COMMAND")
    cap = wsub.add_parser(
        "capture", help="run every read-only command nicbench sends to Windows on one host "
                        "and save the raw answers (nothing on the host is changed)")
    cap.add_argument("host", metavar="HOST", help="the host's name in the inventory (os: windows)")
    cap.add_argument("-i", "--inventory", default="inventory.yaml")
    cap.add_argument("--out", required=True, metavar="DIR",
                     help="a new directory for the capture")
    cap.add_argument("--trust-new-host-keys", action="store_true",
                     help="record the key of a host not yet in known_hosts (never replaces one)")
    cap.set_defaults(func=cmd_capture)
