"""Commands on a host over SSH (paramiko): one transport per host, a channel per command.

Host keys are verified against the inventory's known_hosts file and never accepted
silently. ``trust_new_keys=True`` is the documented opt-in (``--trust-new-host-keys``) that
records the key of a host that has none yet, like OpenSSH's ``accept-new``; a key that
differs from the recorded one is always refused.

Every paramiko and socket error is translated into a nicbench error here, once.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import paramiko

from nicbench.errors import AuthError, ConnectError, HostKeyError, RemoteError
from nicbench.remote.command import display
from nicbench.remote.connection import Connection
from nicbench.remote.result import Result, make_result
from nicbench.remote.shell import SHELLS


EOF_GRACE_S = 1.0


@dataclass(frozen=True)
class SshTarget:
    name: str           # inventory host name, used in every message
    address: str
    port: int = 22
    user: str = "root"
    key_file: str | None = None
    known_hosts: str | None = None
    connect_timeout_s: float = 10.0
    shell: str = "posix"


class _RecordNewKey(paramiko.MissingHostKeyPolicy):
    """Opt-in: append the key of a host unknown to known_hosts (never replaces one)."""

    def __init__(self, path: str):
        self.path = path

    def missing_host_key(self, client, hostname, key):
        client.get_host_keys().add(hostname, key.get_name(), key)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="ascii") as fh:
            fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


class SshConnection(Connection):
    def __init__(self, target: SshTarget, *, trust_new_keys: bool = False):
        super().__init__(target.name, SHELLS[target.shell]())
        self.target = target
        self.trust_new_keys = trust_new_keys
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    # -- connection ---------------------------------------------------------------
    def _connect(self) -> paramiko.SSHClient:
        with self._lock:
            if self._client is not None:
                tr = self._client.get_transport()
                if tr is not None and tr.is_active():
                    return self._client
                self._client.close()
                self._client = None
            t = self.target
            client = paramiko.SSHClient()
            if not t.known_hosts:
                raise HostKeyError(t.name, "no known_hosts file configured",
                                   "set hosts[].ssh.known_hosts in the inventory")
            if os.path.exists(t.known_hosts):
                client.load_host_keys(t.known_hosts)
            elif not self.trust_new_keys:
                raise HostKeyError(t.name, f"known_hosts file {t.known_hosts} does not exist",
                                   "create it (ssh-keyscan, checked by hand) or run with "
                                   "--trust-new-host-keys once")
            client.set_missing_host_key_policy(
                _RecordNewKey(t.known_hosts) if self.trust_new_keys else paramiko.RejectPolicy())
            try:
                client.connect(
                    t.address, port=t.port, username=t.user,
                    key_filename=t.key_file, look_for_keys=False, allow_agent=False,
                    timeout=t.connect_timeout_s, banner_timeout=t.connect_timeout_s,
                    auth_timeout=t.connect_timeout_s)
            except paramiko.BadHostKeyException as exc:
                raise HostKeyError(
                    t.name, f"host key of {t.address} differs from the one in {t.known_hosts}",
                    "if the host was reinstalled, remove its line from known_hosts and check "
                    "the new key by hand") from exc
            except paramiko.AuthenticationException as exc:
                raise AuthError(t.name, f"SSH authentication refused for {t.user}@{t.address}",
                                f"check hosts[].ssh.user and key_file ({t.key_file})") from exc
            except paramiko.SSHException as exc:
                if "known_hosts" in str(exc):
                    raise HostKeyError(
                        t.name, f"{t.address} is not in {t.known_hosts}",
                        "add its key (checked by hand) or run once with "
                        "--trust-new-host-keys") from exc
                raise ConnectError(t.name, f"SSH to {t.address}:{t.port} failed: {exc}",
                                   "is sshd running there?") from exc
            except (socket.timeout, TimeoutError) as exc:
                raise ConnectError(t.name, f"{t.address}:{t.port} did not answer within "
                                           f"{t.connect_timeout_s:g} s",
                                   "is the host up and the address right?") from exc
            except (OSError, paramiko.ssh_exception.NoValidConnectionsError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise ConnectError(t.name, f"cannot reach {t.address}:{t.port}: {reason}",
                                   "is the host up (for the lab: nicbench lab up)?") from exc
            # Small request/response exchanges: without TCP_NODELAY, Nagle and delayed ACKs
            # add ~40 ms twice to every command (measured: 90 ms -> a few ms per call).
            sock = _transport(client).sock
            if isinstance(sock, socket.socket):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._client = client
            return client

    def reconnect(self, timeout_s: float) -> None:
        """Connect again after the connection was lost, retrying with backoff (0.5 s,
        doubling to 8 s) for at most ``timeout_s``. The host key is verified as on the
        first connection: a changed key fails at once (HostKeyError), as does a refused
        login (AuthError); only an unreachable host is waited for."""
        self.close()
        deadline = time.monotonic() + timeout_s
        delay = 0.5
        while True:
            try:
                self._connect()
                return
            except ConnectError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConnectError(self.host, f"did not come back within {timeout_s:g} s "
                                       f"({exc.message})", exc.hint) from None
                time.sleep(min(delay, left))
                delay = min(delay * 2, 8.0)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- commands -----------------------------------------------------------------
    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        client = self._connect()
        started = time.time()
        t0 = time.monotonic()
        try:
            chan = _transport(client).open_session(timeout=self.target.connect_timeout_s)
            chan.exec_command(self.shell.render_with_pid(argv, pidfile))
            chan.shutdown_write()
        except (paramiko.SSHException, OSError, EOFError) as exc:
            self.close()
            raise ConnectError(self.host, f"SSH channel failed: {exc}",
                               "the host may have rebooted or dropped the connection") from exc

        out, err = bytearray(), bytearray()
        deadline = t0 + timeout
        timed_out = False
        # The exit status does not wake select(), so poll: fast at first (most commands
        # end in milliseconds), backing off to 50 ms for long ones.
        poll = 0.001
        # sshd sends the exit status as soon as the command exits, possibly before the rest
        # of its output (measured: 262144 of 300007 bytes had arrived). The output is
        # complete at EOF; only a leftover child still holding the pipe open keeps EOF
        # away, so after the exit status, wait for EOF at most EOF_GRACE_S of silence.
        quiet_since: float | None = None
        try:
            while True:
                if chan.recv_ready():
                    out += chan.recv(65536)
                    poll, quiet_since = 0.001, None
                    continue
                if chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                    poll, quiet_since = 0.001, None
                    continue
                if chan.exit_status_ready():
                    if chan.eof_received or chan.closed:
                        break
                    now = time.monotonic()
                    if quiet_since is None:
                        quiet_since = now
                    elif now - quiet_since > EOF_GRACE_S:
                        break
                elif chan.closed or not _transport(client).is_active():
                    # The connection went away under a running command (sshd killed, the
                    # host rebooted, the network dropped): no exit status will come.
                    raise _Lost()
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                select.select([chan], [], [], min(left, poll))
                poll = min(poll * 2, 0.05)
        except _Lost:
            self.close()
            raise ConnectError(self.host, f"the connection was lost while `{display(argv)}` "
                                          "ran", "the host may have rebooted or dropped "
                                          "the connection") from None
        except BaseException:
            # Ctrl-C or an error while waiting: kill the remote command, then re-raise.
            self._kill_remote(out)
            chan.close()
            raise
        if timed_out:
            self._kill_remote(out)
            status = None
        else:
            # Drain what arrived together with the exit status.
            while chan.recv_ready():
                out += chan.recv(65536)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(65536)
            status = chan.recv_exit_status()
            if status == -1 and _dropped(client):
                # The channel closed without an exit status because the connection went
                # (the session's sshd was killed, the host went down), not the command.
                self.close()
                raise ConnectError(self.host, f"the connection was lost while "
                                   f"`{display(argv)}` ran", "the host may have rebooted or "
                                   "dropped the connection")
        chan.close()
        stdout = out.decode("utf-8", "replace")
        _, _, stdout = stdout.partition("\n")  # first line is the wrapper's pid
        return make_result(self.host, argv, stdout=stdout,
                           stderr=err.decode("utf-8", "replace"), exit_status=status,
                           duration_s=time.monotonic() - t0, timed_out=timed_out,
                           started_at=started)

    def _kill_remote(self, out: bytearray) -> None:
        first = bytes(out).split(b"\n", 1)[0].strip()
        if not first.isdigit():
            return
        try:
            chan = _transport(self._connect()).open_session(timeout=5)
            chan.exec_command(self.shell.render(self.shell.kill_argv(int(first), "KILL")))
            chan.recv_exit_status()
            chan.close()
        except (paramiko.SSHException, OSError, EOFError, RemoteError):
            pass  # the host is gone; nothing left to kill from here


def _dropped(client: paramiko.SSHClient, wait_s: float = 0.5) -> bool:
    """Has the connection gone? A channel closed without an exit status is either a
    command killed by a signal (the connection lives on) or a dead connection, whose
    transport notices the closed socket a moment later."""
    tr = client.get_transport()
    deadline = time.monotonic() + wait_s
    while tr is not None and tr.is_active():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class _Lost(Exception):
    """The SSH connection died while a command ran."""


def _transport(client: paramiko.SSHClient) -> paramiko.Transport:
    tr = client.get_transport()
    if tr is None:    # closed under us: the caller's except clauses treat it as a lost host
        raise paramiko.SSHException("the SSH connection is closed")
    return tr
