"""YAML with memory of where every value came from.

``load_yaml(path)`` returns plain Python data plus a :class:`Where` map from key paths
(``("pairs", 0, "a", "host")``) to ``(file, line)``, so every validation error can name
the file, the line and the key. Duplicate keys, which YAML silently merges, are errors.
Only a regular file of at most 1 MB of UTF-8 is read, nested at most 40 deep, with no
recursive alias and at most 100000 values once aliases are expanded: anything else is one
``file:line: message``, not a hang, a MemoryError or a RecursionError.
Profiles that ``extends:`` another are merged here too, keeping each key's own origin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Callable

import yaml

from nicbench.errors import ConfigError
from nicbench.textfile import TextFileError, decode_utf8, read_bytes

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
        self.text = ""        # the file as read (bounded and decoded), for a copy of it
        self.lines: dict[KeyPath, tuple[str, int]] = {}
        # Maps a path of the validated data to the one the file wrote, where they differ
        # (a profile's mtu: [..] shorthand becomes points: [..]).
        self.as_written: Callable[[KeyPath], KeyPath] = lambda path: path

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
        path = self.as_written(tuple(path))
        file, line = self.find(path)
        return ConfigError(message, file=file, line=line, key=render_path(path) or None)


def _display_name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):   # elsewhere; a name too long; a link loop
        return str(path)


# Bounds on what a configuration file may be: far above any real inventory or profile,
# far below what would let a typo or a hostile file eat the machine (a YAML "billion
# laughs" expands a few hundred bytes into gigabytes; deep nesting overflows the stack).
MAX_FILE_BYTES = 1 << 20       # 1 MB
MAX_DEPTH = 40                 # nested mappings and lists
MAX_VALUES = 100_000           # values after aliases are expanded


def load_yaml(path: str | Path) -> tuple[Any, Where]:
    path = Path(path)
    name = _display_name(path)
    where = Where(name)
    try:
        text = decode_utf8(read_bytes(path, MAX_FILE_BYTES, "not an inventory or profile"))
    except FileNotFoundError:
        raise ConfigError("file not found (check the path; for the local lab the "
                          "repository's inventory.yaml works after `nicbench lab up`)",
                          file=name) from None
    except TextFileError as exc:
        raise ConfigError(exc.message, file=name, line=exc.line) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=name) from exc
    where.text = text
    loader = _BoundedLoader(text, name)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        if context and problem.startswith("but "):   # "... a single document ... but found"
            problem = f"{context} {problem}"
        raise ConfigError(f"not valid YAML: {problem}", file=name,
                          line=mark.line + 1 if mark else None) from exc
    finally:
        loader.dispose()
    if node is None:
        raise ConfigError("file is empty", file=name)
    return _Converter(where, name).convert(node, ()), where


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's composer with a depth limit and no recursive aliases (``&a [*a]``), so
    composing can neither overflow the stack nor build a cycle."""

    def __init__(self, text: str, name: str):
        super().__init__(text)
        self._name = name
        self._depth = 0
        self._open_anchors: list[str] = []

    def _refuse(self, message: str, event: yaml.Event) -> ConfigError:
        mark = event.start_mark
        return ConfigError(message, file=self._name, line=mark.line + 1 if mark else None)

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise self._refuse(f"recursive alias *{event.anchor} (it refers to a "
                                   "value that contains it): write the value out", event)
            return super().compose_node(parent, index)
        if not isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            return super().compose_node(parent, index)
        if self._depth >= MAX_DEPTH:
            raise self._refuse(f"nested deeper than {MAX_DEPTH} levels: not an inventory "
                               "or profile", event)
        self._depth += 1
        self._open_anchors.append(event.anchor or "")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open_anchors.pop()


class _Converter:
    """Composed nodes -> plain data, recording each value's line; counts every value,
    including each copy an alias makes, against ``MAX_VALUES``."""

    def __init__(self, where: Where, name: str):
        self.where = where
        self.name = name
        self.values = 0
        self.seen: set[int] = set()
        self.aliased = False

    def convert(self, node: yaml.Node, path: KeyPath) -> Any:
        self.values += 1
        if id(node) in self.seen:
            self.aliased = True
        self.seen.add(id(node))
        if self.values > MAX_VALUES:
            why = ("its aliases expand to" if self.aliased else "it holds")
            raise ConfigError(f"{why} more than {MAX_VALUES} values (a YAML alias bomb?): "
                              "not an inventory or profile", file=self.name,
                              line=node.start_mark.line + 1)
        self.where.lines[path] = (self.name, node.start_mark.line + 1)
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) \
                and node.tag not in _PLAIN_COLLECTIONS:
            # A scalar's tag is refused when it is constructed; a collection's would be
            # silently dropped (!!python/object/apply:os.system [..] read as a list).
            raise ConfigError(f"not valid YAML: the tag {node.tag!r} is not allowed here "
                              "(plain mappings, lists and values only)", file=self.name,
                              line=node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = _scalar(key_node, self.name)
                if key in out:
                    raise ConfigError(f"duplicate key '{key}'", file=self.name,
                                      line=key_node.start_mark.line + 1,
                                      key=render_path(path) or None)
                # The key's own line is the useful one (values may start on the next line).
                out[key] = self.convert(value_node, (*path, key))
                self.where.lines[(*path, key)] = (self.name, key_node.start_mark.line + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        return _scalar(node, self.name)


_SCALARS = yaml.SafeLoader("")
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


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
    except (ValueError, OverflowError) as exc:   # a number of 5000 digits
        raise ConfigError(f"not a usable value: {str(exc).split(';')[0]}", file=name,
                          line=node.start_mark.line + 1) from exc


def merge(base: Any, base_where: Where, over: Any, over_where: Where,
          path: KeyPath = ()) -> Any:
    """Deep-merge ``over`` onto ``base`` (maps merge, lists and scalars replace), moving the
    origins of replaced values in ``base_where`` to those of ``over_where``."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            sub = (*path, key)
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
