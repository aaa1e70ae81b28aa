"""YAML with memory of where every value came from.

``load_yaml(path)`` returns plain Python data plus a :class:`Where` map from key paths
(``("pairs", 0, "a", "host")``) to ``(file, line)``, so every validation error can name
the file, the line and the key. Duplicate keys, which YAML silently merges, are errors.
Profiles that ``extends:`` another are merged here too, keeping each key's own origin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from nicbench.errors import ConfigError

KeyPath = tuple[Any, ...]


def render_path(path: KeyPath) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + str(step)
    return out


class Where:
    """Origins of values: key path -> (file, line)."""

    def __init__(self, default_file: str):
        self.default_file = default_file
        self.lines: dict[KeyPath, tuple[str, int]] = {}

    def find(self, path: KeyPath) -> tuple[str, int | None]:
        """The origin of ``path`` or of its closest ancestor that has one."""
        path = tuple(path)
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return self.default_file, None
            path = path[:-1]

    def error(self, path: KeyPath, message: str) -> ConfigError:
        file, line = self.find(path)
        return ConfigError(message, file=file, line=line, key=render_path(path) or None)


def _display_name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_yaml(path: str | Path) -> tuple[Any, Where]:
    path = Path(path)
    name = _display_name(path)
    where = Where(name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found (check the path; for the local lab the "
                          "repository's inventory.yaml works after `nicbench lab up`)",
                          file=name) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=name) from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"not valid YAML: {problem}", file=name,
                          line=mark.line + 1 if mark else None) from exc
    if node is None:
        raise ConfigError("file is empty", file=name)
    return _convert(node, (), where, name), where


def _convert(node: yaml.Node, path: KeyPath, where: Where, name: str) -> Any:
    where.lines[path] = (name, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node, name)
            if key in out:
                raise ConfigError(f"duplicate key '{key}'", file=name,
                                  line=key_node.start_mark.line + 1,
                                  key=render_path(path) or None)
            # The key's own line is the useful one (values may start on the next line).
            out[key] = _convert(value_node, path + (key,), where, name)
            where.lines[path + (key,)] = (name, key_node.start_mark.line + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, path + (i,), where, name) for i, item in enumerate(node.value)]
    return _scalar(node, name)


_SCALARS = yaml.SafeLoader("")


def _scalar(node: yaml.Node, name: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError("keys and values here must be plain scalars", file=name,
                          line=node.start_mark.line + 1)
    try:
        return _SCALARS.construct_object(node, deep=True)
    except yaml.YAMLError as exc:  # e.g. an unknown tag such as !!python/object
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"not valid YAML: {problem}", file=name,
                          line=node.start_mark.line + 1) from exc


def merge(base: Any, base_where: Where, over: Any, over_where: Where,
          path: KeyPath = ()) -> Any:
    """Deep-merge ``over`` onto ``base`` (maps merge, lists and scalars replace), moving the
    origins of replaced values in ``base_where`` to those of ``over_where``."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            sub = path + (key,)
            if key in base:
                out[key] = merge(base[key], base_where, value, over_where, sub)
            else:
                out[key] = value
                _copy_origins(over_where, base_where, sub)
            if sub in over_where.lines:
                base_where.lines[sub] = over_where.lines[sub]
        return out
    for p in [p for p in base_where.lines if p[:len(path)] == path and len(p) > len(path)]:
        del base_where.lines[p]
    _copy_origins(over_where, base_where, path)
    return over


def _copy_origins(src: Where, dst: Where, prefix: KeyPath) -> None:
    for p, origin in src.lines.items():
        if p[:len(prefix)] == prefix:
            dst.lines[p] = origin
