"""A corpus of results directories for ``bench/store.py``: copies of one real lab run with
its adapters and pairs renamed and its night moved, so that many nights of many adapters
can be made from one run measured here.

Each run made from the source is the source's manifest.json and trials.jsonl with every
pair and adapter id renamed for its group (``gbe`` -> ``gbe-g3``, ``lab-gbe`` ->
``lab-gbe-g3``: one group is one copy of the source's adapters), its run_id new, and every
time in it moved by whole nights; its raw/ is left out (the store does not read it). The
values measured are the source's, byte for byte.

Small and separate on purpose: another corpus (more real runs) can replace it as long as
it offers :func:`write_runs`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

NIGHT_S = 24 * 3600


class Source:
    """One real run directory, read once."""

    def __init__(self, run_dir: str | Path):
        run_dir = Path(run_dir)
        self.manifest = (run_dir / "manifest.json").read_text(encoding="utf-8")
        self.lines = (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()
        data = json.loads(self.manifest)
        self.run_id = data["run_id"]
        self.started_at = data["started_at"]
        self.names = sorted({*data["pairs"]}
                            | {a["id"] for a in data["inventory"]["adapters"]},
                            key=len, reverse=True)
        self.trials = len(self.lines)

    def renamed(self, text: str, group: int) -> str:
        """Every quoted pair or adapter id (and a pair's ``PAIR.`` / ``PAIR/`` prefix in
        trial ids and interface keys) renamed for ``group``."""
        names = "|".join(re.escape(n) for n in self.names)
        return re.sub(rf'(?<=")({names})(?=["./])', rf"\g<1>-g{group}", text)

    def moved(self, text: str, night: int) -> str:
        """Every time of the run (``started_at``/``ended_at``/``resumed_at`` values)
        moved forward by ``night`` nights."""
        shift = night * NIGHT_S

        def move(m: re.Match) -> str:
            return f'{m.group(1)}{float(m.group(2)) + shift!r}'

        return re.sub(r'("(?:started_at|ended_at)": )([0-9.]+)', move, text)


def write_runs(source: Source, dest: str | Path, *, first: int, count: int,
               groups: int) -> list[Path]:
    """Runs ``first`` .. ``first + count - 1`` of the corpus, each a results directory in
    ``dest``: run i is group ``i % groups`` on night ``i // groups``."""
    dest = Path(dest)
    made = []
    for i in range(first, first + count):
        group, night = i % groups, i // groups
        run_id = f"corpus-{night:05d}-g{group:03d}"
        out = dest / run_id
        out.mkdir(parents=True)
        manifest = source.moved(source.renamed(source.manifest, group), night)
        (out / "manifest.json").write_text(
            manifest.replace(f'"run_id": "{source.run_id}"', f'"run_id": "{run_id}"', 1),
            encoding="utf-8")
        trials = source.moved(source.renamed("\n".join(source.lines), group), night)
        (out / "trials.jsonl").write_text(
            trials.replace(f'"run_id": "{source.run_id}"', f'"run_id": "{run_id}"') + "\n",
            encoding="utf-8")
        made.append(out)
    return made
