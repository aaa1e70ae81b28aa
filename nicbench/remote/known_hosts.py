"""known_hosts files read the way OpenSSH reads them, and one server key checked against them.

paramiko's own reader skips every line it cannot parse and lets an unreadable file escape
as a bare OSError, so a file that is not a known_hosts file at all (a directory, a private
key, a binary) looked like "host unknown". Here such a file is a ``ConfigError`` naming the
file and line (exit 2), checked before any host is contacted.

What a line may be (sshd(8), SSH_KNOWN_HOSTS FILE FORMAT)::

    [@revoked|@cert-authority] patterns key-type base64-key [comment]

Patterns are comma-separated host names or addresses, ``[host]:port`` for a port other than
22, hashed names (``|1|salt|hash``), ``*`` and ``?`` wildcards and ``!`` negation. A key
marked ``@revoked`` is refused for every host even if another line lists it;
``@cert-authority`` lines are skipped (nicbench does not verify host certificates).
A key type this nicbench does not know is kept: the host counts as known, and a server
key of another type is then refused, never trusted anew.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import re
import struct
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from collections.abc import Iterable

from nicbench.errors import ConfigError
from nicbench.textfile import TextFileError, open_regular

MAX_BYTES = 16 * 1024 * 1024      # a known_hosts larger than this is not one
KEY_TYPE_RE = re.compile(r"^[A-Za-z0-9@._+-]{1,64}$")


@dataclass(frozen=True)
class Entry:
    patterns: tuple[str, ...]
    key_type: str
    blob: bytes
    marker: str | None          # None, "@revoked" or "@cert-authority"
    file: str
    line: int


def host_key_name(address: str, port: int) -> str:
    """The name a host's keys are recorded under: ``host`` for port 22, else ``[host]:port``."""
    return address if port == 22 else f"[{address}]:{port}"


def _glob_re(pattern: str) -> re.Pattern:
    return re.compile("^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                                    for c in pattern) + "$", re.IGNORECASE)


def _hashed_match(name: str, pattern: str) -> bool:
    # |1|base64(salt)|base64(HMAC-SHA1(salt, name))
    try:
        _, _, salt_b64, hash_b64 = pattern.split("|", 3)
        salt = base64.b64decode(salt_b64, validate=True)
        expected = base64.b64decode(hash_b64, validate=True)
    except (ValueError, binascii.Error):
        return False
    return hmac.compare_digest(hmac.new(salt, name.encode(), sha1).digest(), expected)


def names_match(name: str, patterns: Iterable[str]) -> bool:
    """OpenSSH's rule: some pattern matches and no negated one does."""
    matched = False
    for pattern in patterns:
        if pattern.startswith("|1|"):
            if _hashed_match(name, pattern):
                matched = True
            continue
        negated = pattern.startswith("!")
        if _glob_re(pattern[1:] if negated else pattern).match(name):
            if negated:
                return False
            matched = True
    return matched


class KnownHosts:
    """The entries of one or more known_hosts files, in order. ``files[0]`` is where a new
    key is recorded (``--trust-new-host-keys``); a file that does not exist holds nothing."""

    def __init__(self, files: Iterable[str], host: str):
        self.files = list(files)
        self.host = host              # the inventory host, for messages
        self.entries: list[Entry] = []
        for path in self.files:
            self.entries += read_file(path, host)

    def shown(self) -> str:
        return " or ".join(self.files)

    def exists(self) -> bool:
        return any(os.path.exists(p) for p in self.files)

    def for_name(self, name: str) -> list[Entry]:
        return [e for e in self.entries if e.marker is None and names_match(name, e.patterns)]

    def key_types(self, name: str) -> list[str]:
        """The key types recorded for ``name``, first recorded first."""
        return list(dict.fromkeys(e.key_type for e in self.for_name(name)))

    def revoked(self, name: str, key_type: str, blob: bytes) -> Entry | None:
        for e in self.entries:
            if e.marker == "@revoked" and e.blob == blob and names_match(name, e.patterns):
                return e
        return None

    def verdict(self, name: str, key_type: str, blob: bytes) -> str:
        """``known`` (a line for ``name`` has this key), ``revoked``, ``different`` (the
        host is recorded with other keys) or ``unknown``."""
        if self.revoked(name, key_type, blob):
            return "revoked"
        entries = self.for_name(name)
        if any(e.blob == blob for e in entries):
            return "known"
        return "different" if entries else "unknown"

    def record(self, name: str, key_type: str, blob: bytes) -> str:
        """Append ``name key-type key`` to the first file (made if missing); returns it."""
        path = Path(self.files[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        b64 = base64.b64encode(blob).decode("ascii")
        with open(path, "a", encoding="ascii") as fh:
            fh.write(f"{name} {key_type} {b64}\n")
        self.entries.append(Entry((name,), key_type, blob, None, str(path), 0))
        return str(path)


def _bad(host: str, path: str, message: str, line: int | None = None) -> ConfigError:
    return ConfigError(message, file=path, line=line, key=host)


def read_file(path: str, host: str) -> list[Entry]:
    """The entries of one file; [] if it does not exist. Anything else that is not a
    known_hosts file is one ConfigError naming the file (and the line)."""
    p = Path(path)
    try:
        # a regular file only: a FIFO would block, /dev/zero never end
        with open_regular(p) as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return []
    except TextFileError as exc:
        if exc.message.startswith("a directory"):
            raise _bad(host, path, "known_hosts is a directory, not a file (name the file "
                                   f"itself, e.g. {p / 'known_hosts'})") from None
        raise _bad(host, path, f"known_hosts: {exc.message}") from None
    except OSError as exc:
        raise _bad(host, path, f"cannot read known_hosts: {exc.strerror or exc} (check its "
                               "permissions)") from exc
    if len(data) > MAX_BYTES:
        raise _bad(host, path, f"larger than {MAX_BYTES // 2 ** 20} MB: not a known_hosts "
                               "file (check hosts[].ssh.known_hosts)")
    try:
        text = data.decode("utf-8")
        if "\0" in text:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
    except UnicodeDecodeError:
        raise _bad(host, path, "binary data, not a known_hosts file (lines of 'host "
                               "key-type base64-key'; check hosts[].ssh.known_hosts)") from None
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        entries.append(parse_line(line, path, number, host))
    return [e for e in entries if e.marker != "@cert-authority"]


def parse_line(line: str, path: str, number: int, host: str) -> Entry:
    fields = line.split()
    marker = None
    if fields[0].startswith("@"):
        marker = fields.pop(0)
        if marker not in ("@revoked", "@cert-authority"):
            raise _bad(host, path, f"unknown marker {marker!r} (known: @revoked, "
                                   "@cert-authority)", number)
    if len(fields) < 3:
        raise _bad(host, path, f"not a known_hosts line ({_show(line)}): expected "
                               "'host key-type base64-key' (fix or delete the line)", number)
    patterns, key_type, key_b64 = fields[0], fields[1], fields[2]
    if not KEY_TYPE_RE.match(key_type):
        raise _bad(host, path, f"{_show(key_type)} is not a key type (fix or delete the "
                               "line)", number)
    try:
        blob = base64.b64decode(key_b64, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(host, path, f"the key of {_show(patterns)} is not base64 (fix or delete "
                               "the line)", number) from None
    if _blob_type(blob) != key_type:
        raise _bad(host, path, f"the key of {_show(patterns)} is not a {key_type} key "
                               "(fix or delete the line)", number)
    return Entry(tuple(patterns.split(",")), key_type, blob, marker, path, number)


def _blob_type(blob: bytes) -> str | None:
    """The key type a public key blob says it is (its first SSH string)."""
    if len(blob) < 4:
        return None
    (n,) = struct.unpack(">I", blob[:4])
    if n > 64 or len(blob) < 4 + n:
        return None
    try:
        return blob[4:4 + n].decode("ascii")
    except UnicodeDecodeError:
        return None


def _show(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
