"""Fixtures of the report tests: two real results directories, their model, one rendering.

``data/run-a`` and ``data/run-b`` are real runs on a private lab (see data/README.md):
run A has gbe and nojumbo (refuses MTU 9000), run B has gbe again (a second "night") and
stall (stalls at MTU 9000, gives up after two failures; netPIPE times out). Their raw/
directories were trimmed to a few trials, so the report must cope with missing raw files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
RUN_A = DATA / "run-a"
RUN_B = DATA / "run-b"


@pytest.fixture(scope="session")
def runs():
    from nicbench.report.load import load_runs

    return load_runs([RUN_A, RUN_B])


@pytest.fixture(scope="session")
def model(runs):
    from nicbench.report.build import build

    return build(runs)


@pytest.fixture(scope="session")
def rendered(runs, tmp_path_factory):
    """The report of both runs, written once for the session: (report model, report.html).
    Its own model (rendering fills in files and sizes), from the runs already read."""
    from nicbench.report.build import build
    from nicbench.report.page import write_page, write_tables
    from nicbench.report.render import render_all

    out = tmp_path_factory.mktemp("report")
    report = build(runs)
    render_all(report, out)
    write_tables(report, out)
    return report, write_page(report, out)


@pytest.fixture
def copy_run(tmp_path):
    """copy_run(src, name) -> a writable copy of a results directory under tmp_path."""

    def copy(src: Path, name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(src, dst)
        return dst

    return copy
