"""Fixtures of the report tests: two real results directories, their model, one rendering.

``data/run-a`` and ``data/run-b`` are real runs on a private lab (see data/README.md):
run A has gbe and nojumbo (refuses MTU 9000), run B has gbe again (a second "night") and
stall (stalls at MTU 9000, gives up after two failures; netPIPE times out). Their raw/
directories were trimmed to a few trials, so the report must cope with missing raw files.
Both are format-1 records (nicbench 0.1): the failure of each is inferred when read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
RUN_A = DATA / "run-a"
RUN_B = DATA / "run-b"
REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "references" / "arnold-2002-netio.yaml"


@pytest.fixture(scope="session")
def runs():
    from nicbench.report.load import load_runs

    return load_runs([RUN_A, RUN_B])


@pytest.fixture(scope="session")
def model(runs):
    from nicbench.report.build import build

    return build(runs)


def write_report(out: Path, dirs, **kw):
    """(report model, report.html) of ``dirs`` written to ``out``, as build_report does."""
    from nicbench.report import _prepare_out
    from nicbench.report.build import build
    from nicbench.report.load import load_runs
    from nicbench.report.page import copy_runs, write_figures, write_page, write_tables
    from nicbench.report.reference import load_reference
    from nicbench.report.svg import render_all

    runs = load_runs(dirs, labels=kw.get("labels", ()))
    ref = load_reference(str(kw["reference"])) if kw.get("reference") else None
    _prepare_out(out, runs)
    report = build(runs, reference=ref)
    render_all(report)
    single = kw.get("single_file", False)
    if not single:
        write_figures(report, out)
    write_tables(report, out)
    copy_runs(runs, out)
    return report, write_page(report, out, single)


@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """The report of both runs (and the shipped reference file), written once for the
    session: (report model, report.html)."""
    return write_report(tmp_path_factory.mktemp("report"), [RUN_A, RUN_B],
                        reference=REFERENCE)


@pytest.fixture
def copy_run(tmp_path):
    """copy_run(src, name) -> a writable copy of a results directory under tmp_path."""

    def copy(src: Path, name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(src, dst)
        return dst

    return copy
