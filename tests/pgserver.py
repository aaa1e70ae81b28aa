"""A throwaway PostgreSQL server for the store's tests: Debian's ``postgresql`` binaries
(``/usr/lib/postgresql/*/bin``), a data directory in a new temp directory, listening on a
unix socket in that directory only (no TCP), run as the unprivileged ``postgres`` user
when the tests run as root. Stopped, and its directory removed, at the end.

``start()`` returns a :class:`PgServer`, or raises :class:`Unavailable` with the reason
it cannot start (the only case where the PostgreSQL half of the store tests skips).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

USER = "nicbench"
START_TIMEOUT_S = 60


class Unavailable(Exception):
    """Why no server could be started here."""


@dataclass
class PgServer:
    root: Path
    bin: Path
    as_user: list[str]        # the command prefix that runs a binary as the server's user
    _n: int = 0

    @property
    def socket_dir(self) -> Path:
        return self.root

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@/{database}?host={quote(str(self.socket_dir), safe='')}"

    def new_database(self) -> str:
        """A new empty database's URL (each test its own)."""
        import psycopg

        self._n += 1
        name = f"nbtest{os.getpid()}_{self._n}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("/")[3].split("?")[0]
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def password_role(self, role: str, password: str) -> str:
        """A role that must give ``password`` (scram-sha-256, on this server's socket);
        returns the URL, without the password, of a new database it owns."""
        import psycopg

        hba = self.root / "data" / "pg_hba.conf"
        line = f"local all {role} scram-sha-256\n"
        if line not in hba.read_text():
            hba.write_text(line + hba.read_text())
        url = self.new_database()
        name = url.split("/")[3].split("?")[0]
        with psycopg.connect(self.url(), autocommit=True) as con:
            if not con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                               [role]).fetchall():
                con.execute(f"CREATE ROLE {role} LOGIN")
            con.execute(f"ALTER ROLE {role} PASSWORD '{password}'")
            con.execute(f"ALTER DATABASE {name} OWNER TO {role}")
            con.execute("SELECT pg_reload_conf()")
        with psycopg.connect(self.url(name), autocommit=True) as con:
            con.execute(f"ALTER SCHEMA public OWNER TO {role}")
        return f"postgresql://{role}@/{name}?host={quote(str(self.socket_dir), safe='')}"

    def stop(self) -> None:
        try:
            subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D",
                            str(self.root / "data"), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=START_TIMEOUT_S, check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start() -> PgServer:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise Unavailable("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): "
                          "install Debian's postgresql package (scripts/setup.sh does)")
    bindir = Path(found[-1]).parent
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="nicbench-pg-"))
    try:
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise Unavailable("running as root and no 'postgres' user to run the "
                                  "server as") from None
            os.chown(root, pw.pw_uid, pw.pw_gid)
            as_user = ["runuser", "-u", "postgres", "--"]
        _run([*as_user, str(bindir / "initdb"), "-D", str(root / "data"), "-U", USER,
              "--auth=trust", "-E", "UTF8", "--no-sync"], "initdb")
        _run([*as_user, str(bindir / "pg_ctl"), "-D", str(root / "data"), "-w", "-t",
              str(START_TIMEOUT_S), "-l", str(root / "server.log"), "-o",
              f"-c listen_addresses='' -k {root} -c fsync=off", "start"], "pg_ctl start")
    except BaseException:
        with contextlib.suppress(Exception):
            subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(root / "data"),
                            "-m", "immediate", "stop"], capture_output=True, timeout=30,
                           check=False)
        shutil.rmtree(root, ignore_errors=True)
        raise
    return PgServer(root=root, bin=bindir, as_user=as_user)


def _run(cmd: list[str], what: str) -> None:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=START_TIMEOUT_S,
                             check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{what}: {exc}") from None
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["?"]
        raise Unavailable(f"{what} exited {res.returncode}: {tail[0]}")
