"""Load and validate inventory and profile files into frozen objects.

The one place where pydantic's errors become nicbench ``ConfigError`` lines of the form
``file:line: key.path: message``. All problems of a file are reported together.

What a file may say about tools (a test's ``tool:`` and ``params:``, a host's ``tools:``)
is checked against a :class:`ToolCatalog` that the caller hands in
(``tools.registry.CATALOG``): the tools' parameter models import config's field types,
so config/ cannot import the tools; it says what it needs of them instead.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ValidationError

from nicbench.config import campaign as camp_mod
from nicbench.config import inventory as inv_mod
from nicbench.config import profile as prof_mod
from nicbench.config.fields import UNION_TAGS, tools_context
from nicbench.config.source import KeyPath, Where, load_yaml, merge
from nicbench.errors import ConfigError, ConfigErrors

MAX_EXTENDS_DEPTH = 8


@dataclass(frozen=True)
class ToolCatalog:
    """The tools a file may name, and the check of a test's params against its tool's
    parameter model: (sub key path under the test, message) per problem."""

    names: tuple[str, ...]
    check_params: Callable[[prof_mod.TestSpec, prof_mod.Profile], Iterable[tuple[tuple, str]]]


def load_inventory(path: str | Path, tools: ToolCatalog) -> inv_mod.Inventory:
    data, where = load_yaml(path)
    inv = _validate(inv_mod.Inventory, data, where, tools)
    inv = inv.model_copy(update={"base_dir": str(Path(path).resolve().parent),
                                 "file": where.default_file})
    _raise_all(inv_mod.cross_check(inv, where))
    return inv


def load_profile(path: str | Path, tools: ToolCatalog) -> prof_mod.Profile:
    data, where = _load_with_extends(Path(path), [])
    if isinstance(data, dict) and "runs" in data and "tests" not in data:
        raise ConfigError("a campaign file, not a profile: run it with `nicbench campaign "
                          f"{path}`", file=where.default_file, line=1)
    if isinstance(data, dict) and isinstance(data.get("mtu"), list) and not data.get("points"):
        where.as_written = _mtu_shorthand
    if isinstance(data, dict) and any(o[1] is not None
                                      for o in prof_mod.sweep_origins(data.get("tests"))):
        where.as_written = _swept_as_written(prof_mod.sweep_origins(data["tests"]),
                                             where.as_written)
    profile = _validate(prof_mod.Profile, data, where, tools)
    profile = profile.model_copy(update={"file": where.default_file})
    _raise_all(prof_mod.cross_check(profile, where, tools.check_params))
    return profile


# Keys that tell the two kinds of file apart (``nicbench validate`` takes either).
_INVENTORY_KEYS = {"hosts", "adapters", "pairs"}
_PROFILE_KEYS = {"tests", "source", "points", "mtu", "extends"}


def load_any(path: str | Path, tools: ToolCatalog) -> inv_mod.Inventory | prof_mod.Profile | \
        camp_mod.LoadedCampaign:
    """An inventory, a profile or a campaign, told apart by its top-level keys."""
    data, where = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of keys at the top level (an inventory or a "
                          "profile)", file=where.default_file, line=1)
    keys = set(data)
    if "runs" in keys:
        return load_campaign(path, tools)
    if keys & _INVENTORY_KEYS:
        return load_inventory(path, tools)
    if keys & _PROFILE_KEYS:
        return load_profile(path, tools)
    raise ConfigError("neither an inventory (hosts:, adapters:, pairs:) nor a profile "
                      "(tests:, source:, mtu: or points:)", file=where.default_file, line=1)


def load_campaign_checked(path: str | Path, inventory: str | None, tools: ToolCatalog
                          ) -> tuple[camp_mod.LoadedCampaign, inv_mod.Inventory]:
    """A campaign file with the inventory it runs on (``inventory``: -i, else the file's
    ``inventory:``, else inventory.yaml), every cross-reference checked: the runs' pairs
    in that inventory, its hosts of the profiles' platforms. What ``campaign`` and
    ``campaign --plan`` load, and ``validate`` checks: one function, so that validate
    says ok exactly when the campaign would start."""
    loaded = load_campaign(path, tools)
    inv_path = loaded.inventory_path(inventory)
    if not inventory and loaded.campaign.inventory:
        _check_named_inventory(loaded, inv_path)
    inv = load_inventory(inv_path, tools)
    _raise_all(loaded.check_inventory(inv))
    return loaded, inv


def _check_named_inventory(loaded: camp_mod.LoadedCampaign, path: str) -> None:
    """The campaign's ``inventory:`` names a file that is there and is an inventory, else
    one error on that line of the campaign (not a page of the other file's keys)."""
    try:
        data, _ = load_yaml(path)
    except ConfigError as exc:
        raise loaded.where.error(("inventory",), f"{loaded.campaign.inventory!r}: "
                                 f"{exc.message}") from None
    if isinstance(data, dict) and not set(data) & _INVENTORY_KEYS:
        what = ("a campaign" if "runs" in data else "a profile" if set(data) & _PROFILE_KEYS
                else "not an inventory (no hosts:, adapters: or pairs:)")
        if what.startswith("a "):
            what += ", not an inventory"
        raise loaded.where.error(("inventory",), f"{loaded.campaign.inventory!r} is {what}")


def resolve_profile_path(name: str, search_dir: str | Path = "profiles") -> Path:
    """``quick`` or ``profiles/quick.yaml`` or any path -> an existing file."""
    p = Path(name)
    if p.exists():
        return p
    for candidate in (Path(search_dir) / name, Path(search_dir) / f"{name}.yaml"):
        if candidate.exists():
            return candidate
    known = sorted(x.stem for x in Path(search_dir).glob("*.yaml")) if Path(search_dir).is_dir() else []
    raise ConfigError(f"profile not found (profiles in {search_dir}/: {', '.join(known) or 'none'})",
                      file=name)


def load_campaign(path: str | Path, tools: ToolCatalog) -> camp_mod.LoadedCampaign:
    """A campaign file, validated, with every run's profile loaded; every problem of the
    file and of its profiles at once (a profile's own problems name the profile's file)."""
    data, where = load_yaml(path)
    campaign = _validate(camp_mod.Campaign, data, where, tools)
    base_dir = Path(path).resolve().parent
    campaign = campaign.model_copy(update={"file": where.default_file,
                                           "base_dir": str(base_dir)})
    errors: list[ConfigError] = []
    profiles: list[tuple[prof_mod.Profile, str] | None] = []
    for i, run in enumerate(campaign.runs):
        try:
            found = campaign_profile_path(run.profile, base_dir)
            profiles.append((load_profile(found, tools), str(found)))
        except ConfigError as exc:
            profiles.append(None)
            if exc.file is None:      # not found: the campaign's line says which
                errors.append(where.error(("runs", i, "profile"), exc.message))
            else:
                errors += exc.errors if isinstance(exc, ConfigErrors) else [exc]
    errors += camp_mod.cross_check(campaign, where,
                                   [p[0].name if p else None for p in profiles])
    _raise_all(errors)
    loaded = [p for p in profiles if p is not None]
    names = camp_mod.run_names(campaign, [p.name for p, _ in loaded])
    runs = tuple(camp_mod.PlannedRun(
        name=name, index=i, profile=loaded[i][0], profile_file=loaded[i][1],
        pairs=tuple(campaign.runs[i].pairs) if campaign.runs[i].pairs else None,
        keep_failed=campaign.runs[i].keep_failed) for i, name in names)
    return camp_mod.LoadedCampaign(campaign=campaign, runs=runs,
                                   text=where.text, where=where)


def campaign_profile_path(value: str, base_dir: Path) -> Path:
    """A campaign's ``profile:``: a path (with a / or ending in .yaml) relative to the
    campaign file; a name, looked up in profiles/ of the current directory (as ``nicbench
    run`` does), then in profiles/ beside the campaign file and beside its directory (a
    clone's profiles/ is found from anywhere)."""
    if "/" in value or value.endswith((".yaml", ".yml")):
        p = Path(value).expanduser()
        p = p if p.is_absolute() else base_dir / p
        if not _is_file(p):
            raise ConfigError(f"profile file {str(p)[:200]} not found")
        return p
    dirs: list[Path] = []
    for d in (Path("profiles"), base_dir / "profiles", base_dir.parent / "profiles"):
        if d.resolve() not in [x.resolve() for x in dirs]:
            dirs.append(d)
    for d in dirs:
        if _is_file(d / f"{value}.yaml"):
            return d / f"{value}.yaml"
    known = sorted({x.stem for d in dirs if d.is_dir() for x in d.glob("*.yaml")})
    raise ConfigError(f"profile '{value[:80]}' not found in {' or '.join(str(d) for d in dirs)} "
                      f"(profiles: {', '.join(known) or 'none'})")


def _is_file(path: Path) -> bool:
    """Is there a file at ``path``? No for a name the OS cannot take (too long, a link
    loop): the caller says it was not found."""
    try:
        return path.is_file()
    except (OSError, RuntimeError):
        return False


def _load_with_extends(path: Path, chain: list[Path]) -> tuple[Any, Where]:
    data, where = load_yaml(path)
    if not isinstance(data, dict) or "extends" not in data:
        return data, where
    parent_name = data.pop("extends")
    if not isinstance(parent_name, str):
        raise where.error(("extends",), "extends must be a file name")
    parent = (path.parent / parent_name)
    if not parent.suffix:
        parent = parent.with_suffix(".yaml")
    try:
        if parent.resolve() in [p.resolve() for p in [*chain, path]]:
            raise where.error(("extends",), f"extends loop through {parent_name}")
        found = parent.exists()
    except (OSError, RuntimeError) as exc:   # a name too long, a loop of symbolic links
        why = getattr(exc, "strerror", None) or "a loop of symbolic links"
        raise where.error(("extends",), f"parent profile {parent_name[:80]}: {why}") \
            from None
    if len(chain) >= MAX_EXTENDS_DEPTH:
        raise where.error(("extends",), f"extends chain deeper than {MAX_EXTENDS_DEPTH}")
    if not found:
        raise where.error(("extends",), f"parent profile {parent} not found")
    base, base_where = _load_with_extends(parent, [*chain, path])
    # mtu: and points: are two spellings of one key: the child's replaces the parent's.
    for mine, other in (("mtu", "points"), ("points", "mtu")):
        if mine in data and isinstance(base, dict):
            base.pop(other, None)
    merged = merge(base, base_where, data, where)
    base_where.default_file = where.default_file
    return merged, base_where


def _mtu_shorthand(path: KeyPath) -> KeyPath:
    """points[i] and points[i].mtu of a profile that wrote mtu: [..] are its mtu[i]."""
    if path[:1] == ("points",) and (len(path) == 1 or path[2:] in ((), ("mtu",))):
        return ("mtu", *path[1:2])
    return path


def _swept_as_written(origins: list[tuple[int, str | None, int | None]],
                      then: Callable[[KeyPath], KeyPath]) -> Callable[[KeyPath], KeyPath]:
    """tests[k] of a profile whose sweep: made several tests of one are tests[i] as
    written; their params.PARAM is that sweep's value, their name its test's name."""
    def as_written(path: KeyPath) -> KeyPath:
        if path[:1] == ("tests",) and len(path) >= 2 and isinstance(path[1], int) \
                and 0 <= path[1] < len(origins):
            i, param, j = origins[path[1]]
            rest = path[2:]
            if param is not None and (rest[:2] == ("params", param) or rest[:1] == ("swept",)):
                rest = ("sweep", param, j, *rest[2:]) if rest[:1] == ("params",) \
                    else ("sweep", param, j)
            path = ("tests", i, *rest)
        return then(path)
    return as_written


def _raise_all(errors: list[ConfigError]) -> None:
    if errors:
        raise ConfigErrors(errors)


def _validate(model: type[BaseModel], data: Any, where: Where, tools: ToolCatalog):
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of keys at the top level", file=where.default_file,
                          line=1)
    # Fields the loader sets itself (base_dir, file) are not keys a file may write.
    errors = [where.error((key,), f"unknown key '{key}' (allowed: {_allowed(model)})")
              for key in data if key in model.model_fields and model.model_fields[key].exclude]
    try:
        validated = model.model_validate(data, context=tools_context(tools.names))
    except ValidationError as exc:
        errors += [_translate(model, err, where) for err in exc.errors()]
    if errors:
        raise ConfigErrors(errors)
    return validated


def _allowed(model: type[BaseModel]) -> str:
    return ", ".join(name for name, f in model.model_fields.items() if not f.exclude)


def _translate(root: type[BaseModel], err: Any, where: Where) -> ConfigError:
    # pydantic puts validator names into loc for some types (e.g. 'function-after[...]')
    # and the tag of a tagged union's member (UNION_TAGS); keep only real keys and list
    # indices.
    loc: KeyPath = tuple(step for step in err["loc"]
                         if isinstance(step, int) or not (
                             "[" in str(step) or step in UNION_TAGS.ALL
                             or ("-" in str(step) and str(step).startswith("function"))))
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = _allowed(parent) if parent else ""
        hint = f" (allowed: {allowed})" if allowed else ""
        return where.error(loc, f"unknown key '{loc[-1]}'{hint}")
    if kind == "missing":
        return where.error(loc, "required key is missing")
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return where.error(loc, f"{err['input']!r} is not one of {expected}")
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if kind not in ("value_error", "assertion_error") and "input" in err \
            and not isinstance(err["input"], (dict, list)):
        msg = f"{msg} (got {err['input']!r})"
    return where.error(loc, msg)


def _model_at(root: type[BaseModel], path: KeyPath) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``path`` (for 'allowed keys')."""
    current: Any = root
    for step in path:
        current = _unwrap(current)
        if isinstance(step, int):
            args = typing.get_args(current)
            current = args[0] if args else None
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(step)
            current = field.annotation if field else None
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(tp: Any) -> Any:
    """Optional[X] / X | None / Annotated[X, ...] -> X (the model-bearing member)."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
            continue
        if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            members = [_unwrap(a) for a in typing.get_args(tp) if a is not type(None)]
            models = [a for a in members if isinstance(a, type) and issubclass(a, BaseModel)]
            tp = models[0] if models else members[0]
            continue
        return tp
