"""``manifest.json``: what a run was (profile, inventory, hosts, tools, times), typed.

Written by the runner as the run goes (after each pair's facts, and at the end), read
back by ``--resume``, ``restore`` and ``report`` as the same :class:`Manifest`, with the
profile and inventory validated again by their own models: a manifest from a newer
nicbench, or one that was edited into something else, is one clear error, never a
half-read run.

Host and interface facts are the platforms' own typed objects (``results/facts.py``),
written as the JSON objects of their fields.

Format versions: 1 (nicbench 0.1) kept the profile's ``mtu:`` shorthand beside the points
it expanded to; it is read by dropping the shorthand. 2 is written now.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler,
                      ValidationError, field_serializer, model_validator)

from nicbench.config.fields import STORED
from nicbench.config.inventory import Inventory
from nicbench.config.profile import Profile
from nicbench.errors import UsageError
from nicbench.results.facts import StoredHostFacts, StoredInterfaceFacts, WindowsHostFacts
from nicbench.textfile import TextFileError, decode_utf8, read_bytes, write_atomic

MANIFEST_VERSION = 2
# Profile, inventory and the facts of a few hosts: tens of KB. 4 MB is not a manifest.
MAX_MANIFEST_BYTES = 4 << 20


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    format_version: int = MANIFEST_VERSION
    run_id: str
    nicbench_version: str
    profile: Profile
    profile_file: str = ""
    inventory: Inventory
    inventory_file: str = ""
    inventory_dir: str = ""          # what the inventory's relative paths are relative to
    pairs: list[str]
    started_at: float = Field(default_factory=time.time)
    ended_at: float | None = None
    resumed_at: list[float] = Field(default_factory=list)
    hosts: dict[str, StoredHostFacts] = Field(default_factory=dict)            # host -> facts
    interfaces: dict[str, StoredInterfaceFacts] = Field(default_factory=dict)  # pair/host -> facts
    tools: dict[str, dict[str, str | None]] = Field(default_factory=dict)  # host -> versions
    restore_problems: list[str] = Field(default_factory=list)
    lost_hosts: dict[str, str] = Field(default_factory=dict)             # host -> why

    @model_validator(mode="before")
    @classmethod
    def _from_older(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("format_version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"format_version {version!r} is not a version number")
        if version > MANIFEST_VERSION:
            raise ValueError(f"format_version {version} is newer than this nicbench reads "
                             f"({MANIFEST_VERSION}): read it with a newer nicbench")
        if version == 1:
            data = dict(data)
            profile = data.get("profile")
            if isinstance(profile, dict) and profile.get("points"):
                data["profile"] = {k: v for k, v in profile.items() if k != "mtu"}
            data["format_version"] = MANIFEST_VERSION
        return data

    def note_registry(self, host: str, notes: list[str]) -> None:
        """Keep what became of the profile's registry values with a Windows host's facts."""
        facts = self.hosts.get(host)
        if isinstance(facts, WindowsHostFacts):
            self.hosts[host] = replace(facts, registry_notes=tuple(notes))

    @field_serializer("hosts", mode="wrap")
    def _hosts_out(self, hosts: dict[str, Any],
                   handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # registry_notes is in the file only once a run has some (as it always was).
        out = handler(hosts)
        for facts in out.values():
            if isinstance(facts, dict) and "registry_notes" in facts \
                    and facts["registry_notes"] is None:
                del facts["registry_notes"]
        return out

    @field_serializer("interfaces", mode="wrap")
    def _interfaces_out(self, interfaces: dict[str, Any],
                        handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # shaping is in the file only where something shapes the link (a lab's tbf), so
        # the manifests of unshaped NICs keep the bytes they always had.
        out = handler(interfaces)
        for facts in out.values():
            if isinstance(facts, dict) and facts.get("shaping", "") is None:
                del facts["shaping"]
        return out

    def write(self, path: str | Path) -> None:
        """Write atomically; on failure (a full disk) no temp file is left behind and
        the previous manifest stays whole."""
        from nicbench.results.rundir import write_error

        path = Path(path)
        try:
            write_atomic(path, json.dumps(self.model_dump(mode="json"), indent=1))
        except OSError as exc:
            raise write_error(path.parent, exc) from exc

    @classmethod
    def read(cls, path: str | Path) -> Manifest:
        """The manifest at ``path``; one UsageError line naming the file if it is not one."""
        path = Path(path)
        try:
            data = json.loads(decode_utf8(read_bytes(path, MAX_MANIFEST_BYTES,
                                                     "not a nicbench manifest",
                                                     nofollow=True)))
        except FileNotFoundError:
            raise UsageError(f"{path}: missing (not a nicbench results directory, or one "
                             "whose run never started)") from None
        except TextFileError as exc:
            raise UsageError(f"{path}{f':{exc.line}' if exc.line else ''}: {exc.message}") \
                from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}): the file is "
                             "corrupt") from None
        except RecursionError:
            raise UsageError(f"{path}: JSON nested too deep: not a nicbench manifest") from None
        if not isinstance(data, dict):
            raise UsageError(f"{path}: not a JSON object: the file is corrupt")
        try:
            return cls.model_validate(data, context=STORED)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(s) for s in err["loc"]) or "top level"
            more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
            msg = err["msg"].removeprefix("Value error, ")
            raise UsageError(f"{path}: {where}: {msg}{more}: not a manifest this nicbench "
                             "can read") from None


def shareable(path: str | Path) -> str:
    """The manifest at ``path`` as a report's data/ keeps it, for others to read: its JSON
    as written, without this machine's paths. ``inventory_dir`` (absolute) is left out,
    and the profile's and inventory's files and the inventory's SSH files (key,
    known_hosts, config) are named by their file names only. The tools' paths stay: they
    are paths on the hosts measured, part of what the run was. Read as ``Manifest.read``
    reads (a link is not followed); call it on a manifest that reads."""
    data = json.loads(decode_utf8(read_bytes(path, MAX_MANIFEST_BYTES,
                                             "not a nicbench manifest", nofollow=True)))
    data.pop("inventory_dir", None)
    for key in ("profile_file", "inventory_file"):
        if key in data:
            data[key] = _file_name(data[key])
    inventory = data.get("inventory") if isinstance(data.get("inventory"), dict) else {}
    for host in inventory.get("hosts") or []:
        ssh = host.get("ssh") if isinstance(host, dict) else None
        for key in ("key_file", "known_hosts", "config"):
            if isinstance(ssh, dict) and ssh.get(key):
                ssh[key] = _file_name(ssh[key])
    return json.dumps(data, indent=1)


def _file_name(path: object) -> str:
    """The last part of a path written on any OS (``C:\\lab\\inv.yaml`` -> ``inv.yaml``)."""
    return str(path or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The key paths where two JSON-like values differ (``tests[1].params.duration_s``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(sub)
            else:
                out += differences(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path} ({len(a)} -> {len(b)} entries)"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=False)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [path or "(top level)"]
