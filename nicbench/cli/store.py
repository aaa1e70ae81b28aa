"""``nicbench store``: the results store's import, rebuild and info; and ``--store``,
which every command that writes or reads runs takes."""

from __future__ import annotations

import time

from nicbench.cli import console
from nicbench.cli.console import out

STORE_HELP = ("results store: a DuckDB file or a postgresql://... URL; 'none' for none "
              "(default: $NICBENCH_STORE, else reports/nicbench.duckdb)")


def add_store_option(parser) -> None:
    parser.add_argument("--store", metavar="STORE", default=None, help=STORE_HELP)


def resume_store(arg: str | None) -> tuple[list[str], str]:
    """The ``--store`` words a resume hint carries (the store the run wrote, so that the
    resumed trials go to the same one) and a note to print after it. A store from
    NICBENCH_STORE or the default is found again the same way: no words. A PostgreSQL
    URL is given without its password (never printed): the note says where to give it
    (PGPASSWORD or ~/.pgpass, which libpq reads when the URL has none)."""
    from nicbench.store.location import Source, StoreKind, resolve, secrets, without_secrets

    if arg is None:
        return [], ""
    location = resolve(arg)
    if location.kind is not StoreKind.POSTGRESQL or not secrets(location.target):
        return ["--store", location.target], ""
    return (["--store", without_secrets(location.target)],
            " (the store's password is not shown: give it in PGPASSWORD or ~/.pgpass, or "
            f"set {Source.ENV.value} to the whole URL and leave out --store)")


def checked_location(arg: str | None):
    """The store a run or campaign writes, opened once (made, or its schema checked) before
    anything runs: a store that is not one, of another version or that does not answer is
    one line and exit 2 before a host is touched. None: no store (``--store none``)."""
    from nicbench.store import open_store, resolve

    location = resolve(arg)
    if not location.enabled:
        return None
    open_store(location).close()
    return location


def run_sink(location, run_dir, listener):
    """The sink that writes a run's records to the store as they are stored (None: no
    store); close it when the run has ended."""
    from nicbench.store import StoreSink

    return None if location is None else StoreSink(location, run_dir, listener=listener)


def say_left_out(store, what: str) -> None:
    """The rows a store holds that no trial could have (``Store.left_out``), named once:
    they were left out of ``what``."""
    rows = getattr(store, "left_out", None) or []
    for row in rows[:10]:
        console.warn(f"{store.location.shown}: {row}: not a trial nicbench could have "
                     f"measured: left out of {what} (re-import its run with `nicbench "
                     "store rebuild`)")
    if len(rows) > 10:
        console.warn(f"... and {'more than 1000' if len(rows) > 1000 else len(rows) - 10} "
                     "more rows left out")


def history_store(location):
    """The store a campaign's morning summary reads its history from, opened to read
    (None: no store: the campaign directories beside it are the history)."""
    from nicbench.store import open_store

    return None if location is None else open_store(location, write=False)


def night_of(arg: str | None, directory: str) -> dict | None:
    """What the store holds of the night a campaign directory belongs to, every shard's
    runs together (the controllers of ``campaign --shard K/N`` each have a directory of
    their own): {campaign, night, shards, runs, trials}. None: not a campaign directory."""
    from nicbench.results.campaign import CampaignState, is_campaign
    from nicbench.store import open_store, resolve
    from nicbench.store.dataframes import NIGHT_TURNS_H

    if not is_campaign(directory):
        return None
    state = CampaignState.read(directory)
    night = time.strftime("%Y-%m-%d", time.gmtime(state.started_at - NIGHT_TURNS_H * 3600))
    with open_store(resolve(arg), write=False) as store:
        runs = store.runs(campaign=state.name, night=night)
    return {"campaign": state.name, "night": night,
            "shards": sorted(set(runs["shard"].dropna())),
            "runs": len(runs), "trials": int(runs["trials"].sum())}


def cmd_store_import(args) -> int:
    from nicbench.store import import_dirs, open_store, resolve

    location = resolve(args.store)
    counts = import_dirs(lambda: open_store(location), args.dirs)
    return _said(counts, location.shown, "imported into")


def cmd_store_rebuild(args) -> int:
    """Every run and trial taken out, then the directories imported: the store made
    again from its source of truth, in one command."""
    from nicbench.store import import_dirs, open_store, resolve
    from nicbench.store.importer import run_dirs_of

    location = resolve(args.store)
    list(run_dirs_of(args.dirs))           # a directory that is not one: said before clearing
    with open_store(location) as store:
        store.clear()
    counts = import_dirs(lambda: open_store(location), args.dirs)
    return _said(counts, location.shown, "rebuilt")


def _said(counts, where: str, verb: str) -> int:
    for line in counts.skipped_lines[:10]:
        console.warn(f"not imported: {line}")
    if len(counts.skipped_lines) > 10:
        console.warn(f"... and {len(counts.skipped_lines) - 10} more lines not imported")
    for line in counts.conflicts:
        console.error(line)
    out(f"{verb} {where}: runs {counts.runs_added} added, {counts.runs_already} already "
        f"there; trials {counts.trials_added} added, {counts.trials_already} already there"
        + (f", {counts.trials_removed} no longer standing removed"
           if counts.trials_removed else "")
        + (f"; {len(counts.skipped_lines)} lines not imported (above)"
           if counts.skipped_lines else ""))
    return 1 if counts.conflicts or counts.skipped_lines else 0


def cmd_store_info(args) -> int:
    from nicbench.store import open_store, resolve

    location = resolve(args.store)
    with open_store(location, write=False) as store:
        info = store.info()
    out(f"store: {info.location} ({info.kind}, schema version {info.schema_version})")
    out(f"runs: {info.runs} ({info.campaigns} campaigns), trials: {info.trials}")
    if info.first_run is not None and info.last_run is not None:
        out(f"first run: {_when(info.first_run)}, last run: {_when(info.last_run)}")
    return 0


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def register(sub) -> None:
    st = sub.add_parser("store", help="the results store: import runs, rebuild it, show "
                                      "what it holds")
    ssub = st.add_subparsers(dest="store_command", metavar="COMMAND")
    what = ("import results directories (runs, or campaign directories: their runs); what "
            "is there already is not added again")
    imp = ssub.add_parser("import", help=what, description=what)
    imp.add_argument("dirs", nargs="+", metavar="DIR",
                     help="a run's or a campaign's results directory")
    add_store_option(imp)
    imp.set_defaults(func=cmd_store_import)
    what = "make the store again from results directories (everything it held is replaced)"
    reb = ssub.add_parser("rebuild", help=what, description=what)
    reb.add_argument("--from", dest="dirs", nargs="+", required=True, metavar="DIR",
                     help="the run and campaign directories it is made of")
    add_store_option(reb)
    reb.set_defaults(func=cmd_store_rebuild)
    what = "where the store is, its schema version, how many runs and trials it holds"
    info = ssub.add_parser("info", help=what, description=what)
    add_store_option(info)
    info.set_defaults(func=cmd_store_info)
