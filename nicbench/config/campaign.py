"""Campaign files: several runs (a profile over pairs each) for one unattended night.

::

    format_version: 1
    name: overnight
    parallel: 4            # most pairs measured at once (pairs sharing a host never are)
    order: listed          # listed | shuffle (seed: recorded, so a resume keeps the order)
    runs:
      - profile: lab-roundup        # a name under profiles/, or a path (.yaml, or with /)
        pairs: [gbe, pci32]         # default: every pair of the inventory
      - profile: netio-2002-iperf2
    on_finish: [mail, -s, "nicbench overnight", -A, "{summary}", lab@example.org]

Loaded like a profile (:func:`nicbench.config.loader.load_campaign`): an unknown key, a
wrong type, a profile that does not load, two runs of the same name, a pair the
inventory does not have, a Windows method on Linux pairs or an ``on_finish`` written as
a shell line is refused with ``file:line: key.path: message``, every problem at once,
before anything is run. The profiles' own problems point into the profiles' files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from nicbench.config.fields import FilePath, Float, Int, Name, Strict
from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile, check_platforms
from nicbench.config.source import Where
from nicbench.errors import ConfigError, UsageError

# Words of on_finish that are replaced when the command runs (the rest is passed as is).
PLACEHOLDERS = {
    "{summary}": "the summary's path (DIR/summary.md)",
    "{index}": "the index page's path (DIR/index.html)",
    "{dir}": "the campaign directory",
    "{status}": "the campaign's exit status: 0 everything measured, 1 not, 130 interrupted",
}
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _argv(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError("write the command as a list of words, e.g. [mail, -s, nicbench, "
                         "\"{summary}\"]: it is run without a shell, so nothing in it is "
                         "ever read by one")
    if not isinstance(value, list) or not value:
        raise ValueError("a command: a non-empty list of words")
    for word in value:
        if not isinstance(word, str) or not word or "\0" in word:
            raise ValueError(f"{word!r}: every word is a non-empty string")
        for m in _PLACEHOLDER.findall(word):
            if m not in PLACEHOLDERS:
                raise ValueError(f"{m} in {word!r} is not one of {', '.join(PLACEHOLDERS)}")
    return value


Argv = Annotated[list[str], BeforeValidator(_argv)]


class CampaignRun(Strict):
    """One run of the campaign: a profile over some pairs, into its own directory."""

    profile: FilePath
    name: Name | None = None          # its directory (default: the profile's name)
    pairs: list[Name] | None = Field(None, min_length=1)
    repeat: Int = Field(1, ge=1, le=100)  # run it this many times (NAME.1, NAME.2, ...)
    keep_failed: bool = False         # a resume leaves failed configurations as they are


class Campaign(Strict):
    format_version: Literal[1] = 1
    name: Name
    description: str = ""
    inventory: FilePath | None = None  # relative to this file (-i on the command line wins)
    parallel: Int = Field(1, ge=1, le=64)
    order: Literal["listed", "shuffle"] = "listed"
    seed: Int | None = Field(None, ge=0, le=2**32 - 1)   # shuffle's seed (default: drawn)
    report: bool = True               # build each run's report as it ends
    on_finish: Argv | None = None
    on_finish_timeout_s: Float = Field(300.0, gt=0, le=3600)
    runs: list[CampaignRun] = Field(min_length=1)

    file: str = Field("", exclude=True)
    base_dir: str = Field(".", exclude=True)


@dataclass(frozen=True)
class PlannedRun:
    """A run as the campaign will make it: its directory name, its loaded profile, the
    pairs asked for (None: every pair of the inventory)."""

    name: str
    index: int                        # runs[index] in the file
    profile: Profile
    profile_file: str
    pairs: tuple[str, ...] | None
    keep_failed: bool = False


@dataclass(frozen=True)
class LoadedCampaign:
    """A campaign file, validated, with its runs' profiles loaded."""

    campaign: Campaign
    runs: tuple[PlannedRun, ...]
    text: str                         # the file as it was read (kept in campaign.json)
    where: Where

    @property
    def name(self) -> str:
        return self.campaign.name

    def inventory_path(self, given: str | None) -> str:
        """The inventory to use: -i, else the file's ``inventory:`` (relative to the
        file), else inventory.yaml."""
        if given:
            return given
        if self.campaign.inventory:
            p = Path(self.campaign.inventory).expanduser()
            return str(p if p.is_absolute() else Path(self.campaign.base_dir) / p)
        return "inventory.yaml"

    def check_inventory(self, inventory: Inventory) -> list[ConfigError]:
        """The runs' pairs exist in the inventory and run the profiles' OS."""
        errors: list[ConfigError] = []
        known = [p.name for p in inventory.pairs]
        where_inv = inventory.file or "the inventory"
        for i, run in enumerate(self.campaign.runs):
            for j, name in enumerate(run.pairs or []):
                if name not in known:
                    errors.append(self.where.error(
                        ("runs", i, "pairs", j),
                        f"unknown pair '{name}' (pairs in {where_inv}: "
                        f"{', '.join(known) or 'none'})"))
        for planned in self.runs:
            pairs = [p for p in inventory.pairs
                     if planned.pairs is None or p.name in planned.pairs]
            if not pairs and planned.pairs is not None and not set(planned.pairs) & set(known):
                continue        # every pair it names is unknown: said above, line by line
            if not pairs:
                errors.append(self.where.error(("runs", planned.index),
                                               f"no pairs to run (the inventory {where_inv} "
                                               "has none)"))
                continue
            try:
                check_platforms(planned.profile, inventory, pairs)
            except UsageError as exc:
                errors.append(self.where.error(("runs", planned.index, "profile"), str(exc)))
        return errors


def run_names(campaign: Campaign, profile_names: list[str]) -> list[tuple[int, str]]:
    """(runs index, directory name) of every run, repeats expanded, in listed order."""
    out = []
    for i, (run, pname) in enumerate(zip(campaign.runs, profile_names, strict=False)):
        base = run.name or pname
        if run.repeat == 1:
            out.append((i, base))
        else:
            out += [(i, f"{base}.{k}") for k in range(1, run.repeat + 1)]
    return out


def cross_check(campaign: Campaign, where: Where,
                profile_names: list[str | None]) -> list[ConfigError]:
    """What the model cannot see alone: run names unique, a seed only with shuffle.
    ``profile_names``: each run's profile's name (None where it did not load)."""
    errors: list[ConfigError] = []
    seen: dict[str, int] = {}
    for i, (run, pname) in enumerate(zip(campaign.runs, profile_names, strict=False)):
        if pname is None:
            continue
        names = run_names(campaign.model_copy(update={"runs": [run]}), [pname])
        for _, name in names:
            if name in seen:
                key = ("runs", i, "name") if run.name else ("runs", i, "profile")
                errors.append(where.error(key, f"a second run named '{name}' (also runs"
                                          f"[{seen[name]}]): each run has its own directory; "
                                          "give one a name:"))
            seen.setdefault(name, i)
        if run.pairs and len(set(run.pairs)) != len(run.pairs):
            dup = next(p for p in run.pairs if run.pairs.count(p) > 1)
            errors.append(where.error(("runs", i, "pairs"), f"pair '{dup}' listed twice"))
    if campaign.seed is not None and campaign.order != "shuffle":
        errors.append(where.error(("seed",), "a seed is for order: shuffle"))
    return errors
