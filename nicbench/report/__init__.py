"""``nicbench report``: charts and tables combining one or more results directories.

::

    load.py     results directories -> checked Run objects (one clear error per bad one)
    theory.py   Ethernet goodput limits and the link rate of a pair
    model.py    the report as data: entries, figure models, tables, failures
    build.py    runs -> models, one function per chart family
    render.py   figure models -> figures/<id>.svg and .png (matplotlib, Agg)
    page.py     models -> report.html and tables/*.csv

``build_report`` runs them in that order and returns the path of report.html.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from nicbench.errors import NicbenchError, UsageError

Warn = Callable[[str], None]


def build_report(dirs: list[str], out: str | None = None, *, link_rates=(),
                 warn: Warn | None = None) -> Path:
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.report.page import write_page, write_tables
    from nicbench.report.render import render_all
    from nicbench.report.theory import parse_link_rates

    rates = parse_link_rates(link_rates)
    runs = load_runs(dirs, warn)
    _check_rate_names(rates, runs)
    target = Path(out) if out else _default_out()
    _prepare_out(target, runs)
    report = build(runs, rates)
    try:
        render_all(report, target)
        write_tables(report, target)
        return write_page(report, target)
    except OSError as exc:
        raise NicbenchError(f"{exc.filename or target}: cannot write the report: "
                            f"{exc.strerror or exc}") from exc


def _default_out() -> Path:
    base = Path("reports") / f"report-{time.strftime('%Y%m%d-%H%M%S')}"
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def _check_rate_names(rates: dict, runs) -> None:
    known = set()
    for run in runs:
        for r in run.records:
            known.update((r["pair"], r["adapter"]))
    for name in rates:
        if name not in known:
            raise UsageError(f"--link-rate {name}=...: no pair or adapter named {name!r} in "
                             f"these runs (pairs and adapters: {', '.join(sorted(known))})")


def _prepare_out(out: Path, runs) -> None:
    """OUT is new, empty, or an earlier report (whose figures and tables are replaced);
    never a results directory or anything else."""
    real = out.resolve()
    for run in runs:
        if real == run.path.resolve():
            raise UsageError(f"--out {out}: that is a results directory; choose another --out")
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"--out {out}: exists and is not a directory")
        ours = {"report.html", "report.html.tmp", "figures", "tables"}
        if any(p.name not in ours for p in out.iterdir()):
            raise UsageError(f"--out {out}: exists and holds more than a report; choose a "
                             "new or empty directory")
        # an earlier report's figures and tables would linger unreferenced: remove them
        for sub, patterns in (("figures", ("*.svg", "*.png")), ("tables", ("*.csv",))):
            for pattern in patterns:
                for old in (out / sub).glob(pattern):
                    old.unlink()
    try:
        (out / "figures").mkdir(parents=True, exist_ok=True)
        (out / "tables").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NicbenchError(f"{out}: cannot create the report directory: "
                            f"{exc.strerror or exc}") from exc
