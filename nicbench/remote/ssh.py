"""Commands on a host over SSH (paramiko): one connection per host, a channel per command
(a trial's few commands: one shell kept running, :class:`WarmShell`).

Two halves, kept apart so that either can change alone:

- **establishing** a connection, :func:`establish`: every hop of the way (the jump hosts of
  ``ProxyJump``, then the host), each over the one before it (a ``direct-tcpip`` channel),
  each with its host key verified against known_hosts and its own keys (identity files,
  ssh-agent). ``preflight`` does the part that needs no network (known_hosts files, key
  files, the agent), so bad local input is found before any host is contacted.
- **running commands** over the established connection, :class:`SshConnection`.

Host keys are verified at every hop against the known_hosts files and never accepted
silently. ``trust_new_keys=True`` is the documented opt-in (``--trust-new-host-keys``) that
records the key of a host that has none yet, like OpenSSH's ``accept-new``; a key that
differs from the recorded one, or a revoked one, is always refused.

Every paramiko and socket error is translated into a nicbench error here, once: a local
file that is not what it should be is a ``ConfigError`` (exit 2); a hop that cannot be
reached a ``ConnectError``, a refused key an ``AuthError``, a host key a ``HostKeyError``,
each naming the hop when it is a jump host.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import paramiko

from nicbench.errors import AuthError, ConnectError, HostKeyError, RemoteError
from nicbench.remote.capture import Capture
from nicbench.remote.command import display
from nicbench.remote.connection import Connection
from nicbench.remote.known_hosts import KnownHosts, host_key_name
from nicbench.remote.result import Result
from nicbench.remote.shell import SHELLS
from nicbench.remote.ssh_channel import MAX_POLL_S, _await_output, _Lost, _result, _transport
from nicbench.remote.ssh_keys import Agents, Identity, agent_socket, identities
from nicbench.remote.ssh_powershell import WarmPowerShell

EOF_GRACE_S = 1.0
MAX_HOPS = 8                # jump hosts and the host itself
_GONE_HINT = "the host may have rebooted or dropped the connection"

# paramiko logs what it also raises (a refused channel: "Secsh channel 1 open FAILED");
# without a handler Python printed that to stderr beside nicbench's own one-line error.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


@dataclass(frozen=True)
class SshTarget:
    """One SSH server to log in to: an inventory host, or a jump host on the way to one.

    The first eight fields are the direct, key-file-only connection nicbench always made;
    the rest carry what an ssh_config can add (``platforms.hosts.ssh_target`` fills them
    from the inventory and ``remote.ssh_config``)."""

    name: str           # inventory host name, used in every message
    address: str
    port: int = 22
    user: str = "root"
    key_file: str | None = None          # must exist (the inventory named it)
    known_hosts: str | None = None       # new keys are recorded here
    connect_timeout_s: float = 10.0      # per hop: TCP connect, SSH handshake, each auth
    shell: str = "posix"
    key_files: tuple[str, ...] = ()      # more keys (IdentityFile), skipped when missing
    more_known_hosts: tuple[str, ...] = ()   # more files to look keys up in
    host_key_alias: str | None = None    # the name its keys are recorded under
    allow_agent: bool = False
    agent_socket: str | None = None      # ssh_config IdentityAgent; None: $SSH_AUTH_SOCK
    identities_only: bool = False        # agent keys only when they are one of the files'
    jumps: tuple[SshTarget, ...] = ()  # jump hosts, the first one dialled first
    label: str = ""                      # "" for the host; "jump host X (...)" for a jump

    @property
    def identity_files(self) -> tuple[str, ...]:
        return ((self.key_file,) if self.key_file else ()) + self.key_files

    @property
    def known_hosts_files(self) -> tuple[str, ...]:
        return ((self.known_hosts,) if self.known_hosts else ()) + self.more_known_hosts

    @property
    def host_key_name(self) -> str:
        return self.host_key_alias or host_key_name(self.address, self.port)

    @property
    def hops(self) -> tuple[SshTarget, ...]:
        return (*self.jumps, self)


class SshSession:
    """The transports of one established connection: the jump hosts', then the host's."""

    def __init__(self, transports: list[paramiko.Transport]):
        self.transports = transports

    @property
    def transport(self) -> paramiko.Transport:
        return self.transports[-1]

    def is_active(self) -> bool:
        return all(t.is_active() for t in self.transports)

    def close(self) -> None:
        for t in reversed(self.transports):    # the host first, then the hops it runs over
            t.close()


# -- establishing a connection ---------------------------------------------------------------

@dataclass
class _Hop:
    """A hop with what it needs from this machine, read before any network."""

    target: SshTarget
    known: KnownHosts
    keys: list[Identity]

    @property
    def where(self) -> str:
        return f"{self.target.label}: " if self.target.label else ""


def _prepare(target: SshTarget, agents: Agents) -> list[_Hop]:
    hops = target.hops
    if len(hops) > MAX_HOPS:
        raise ConnectError(target.name, f"{len(hops) - 1} jump hosts (at most "
                                        f"{MAX_HOPS - 1})", "shorten the ProxyJump chain")
    out = []
    for hop in hops:
        where = f"{hop.label}: " if hop.label else ""
        if not hop.known_hosts_files:
            raise HostKeyError(target.name, f"{where}no known_hosts file configured",
                               "set hosts[].ssh.known_hosts in the inventory")
        known = KnownHosts(hop.known_hosts_files, target.name)
        keys = identities(host=target.name, label=hop.label, key_files=hop.identity_files,
                          required=(hop.key_file,) if hop.key_file else (),
                          allow_agent=hop.allow_agent,
                          agent_path=agent_socket(hop.agent_socket) if hop.allow_agent else None,
                          identities_only=hop.identities_only, agents=agents)
        out.append(_Hop(hop, known, keys))
    return out


def preflight(target: SshTarget) -> None:
    """Everything about ``target`` that can be checked without the network: its known_hosts
    files, key files and agent, at every hop. Raises what ``establish`` would (ConfigError
    for bad local input)."""
    agents = Agents(timeout_s=max(h.connect_timeout_s for h in target.hops))
    try:
        _prepare(target, agents)
    finally:
        agents.close()


def establish(target: SshTarget, *, trust_new_keys: bool = False) -> SshSession:
    """Log in to ``target``, through its jump hosts if it has any. Each hop is bounded by
    its ``connect_timeout_s`` (TCP connect or channel open, handshake, authentication)."""
    agents = Agents(timeout_s=max(h.connect_timeout_s for h in target.hops))
    transports: list[paramiko.Transport] = []
    try:
        hops = _prepare(target, agents)
        for hop in hops:
            if not hop.known.exists() and not trust_new_keys:
                raise HostKeyError(
                    target.name, f"{hop.where}known_hosts file {hop.known.shown()} does not "
                                 "exist",
                    "create it (ssh-keyscan, checked by hand) or run with "
                    "--trust-new-host-keys once")
        previous: _Hop | None = None
        for hop in hops:
            sock = _dial(hop, previous, transports[-1] if transports else None)
            transports.append(_handshake(hop, sock, trust_new_keys))
            _authenticate(hop, transports[-1])
            if hop is not hops[-1]:
                _nodelay_on_jump_host(hop, transports[-1])
            previous = hop
        return SshSession(transports)
    except BaseException:
        for t in reversed(transports):
            t.close()
        raise
    finally:
        agents.close()


def _dial(hop: _Hop, previous: _Hop | None, via: paramiko.Transport | None):
    """A byte stream to the hop's sshd: a TCP socket, or a channel through the hop before."""
    t = hop.target
    if via is None or previous is None:
        try:
            sock = socket.create_connection((t.address, t.port), timeout=t.connect_timeout_s)
        except TimeoutError as exc:
            raise ConnectError(t.name, f"{hop.where}{t.address}:{t.port} did not answer "
                                       f"within {t.connect_timeout_s:g} s",
                               "is the host up and the address right?") from exc
        except OSError as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ConnectError(t.name, f"{hop.where}cannot reach {t.address}:{t.port}: "
                                       f"{reason}",
                               "is the host up (for the lab: nicbench lab up)?") from exc
        # Small request/response exchanges: without TCP_NODELAY, Nagle and delayed ACKs
        # add ~40 ms twice to every command (measured: 90 ms -> a few ms per call).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    through = previous.target.label
    try:
        return via.open_channel("direct-tcpip", (t.address, t.port), ("127.0.0.1", 0),
                                timeout=t.connect_timeout_s)
    except paramiko.ChannelException as exc:
        raise ConnectError(t.name, f"{hop.where}{through} cannot connect to "
                                   f"{t.address}:{t.port}: {exc.text}",
                           "is the host up and its address right as the jump host sees it? "
                           "does the jump host allow forwarding (AllowTcpForwarding)?") from exc
    except (paramiko.SSHException, EOFError, OSError) as exc:
        if "timeout" in str(exc).lower():
            raise ConnectError(t.name, f"{hop.where}{through} got no answer from "
                                       f"{t.address}:{t.port} within "
                                       f"{t.connect_timeout_s:g} s",
                               "is the host up and the address right?") from exc
        raise ConnectError(t.name, f"{through} dropped the connection: {exc}",
                           "is the jump host up?") from exc


def _handshake(hop: _Hop, sock, trust_new_keys: bool) -> paramiko.Transport:
    """An SSH transport over ``sock`` whose server has proved the key known_hosts has."""
    t = hop.target
    name = t.host_key_name
    try:
        tr = paramiko.Transport(sock)
    except (paramiko.SSHException, OSError, EOFError) as exc:
        sock.close()
        raise ConnectError(t.name, f"{hop.where}SSH to {t.address}:{t.port} failed: {exc}",
                           "is sshd running there?") from exc
    try:
        tr.banner_timeout = tr.handshake_timeout = tr.auth_timeout = t.connect_timeout_s
        _prefer_known_key_types(tr, hop.known.key_types(name))
        try:
            tr.start_client(timeout=t.connect_timeout_s)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            text = str(exc) or type(exc).__name__
            if isinstance(exc, (socket.timeout, TimeoutError)) or "timed out" in text.lower()                     or "timeout" in text.lower():
                raise ConnectError(t.name, f"{hop.where}{t.address}:{t.port} did not finish "
                                           f"the SSH handshake within "
                                           f"{t.connect_timeout_s:g} s",
                                   "is it an sshd, and is the host overloaded?") from exc
            raise ConnectError(t.name, f"{hop.where}SSH to {t.address}:{t.port} failed: "
                                       f"{text}", "is sshd running there?") from exc
        key = tr.get_remote_server_key()
        verdict = hop.known.verdict(name, key.get_name(), key.asbytes())
        if verdict == "revoked":
            entry = hop.known.revoked(name, key.get_name(), key.asbytes())
            assert entry is not None
            raise HostKeyError(t.name, f"{hop.where}host key of {name} is revoked "
                                       f"(@revoked in {entry.file}:{entry.line})",
                               "do not trust this host until its keys are checked")
        if verdict == "different":
            raise HostKeyError(
                t.name, f"{hop.where}host key of {name} differs from the one in "
                        f"{hop.known.shown()}",
                "if the host was reinstalled, remove its line from known_hosts and check "
                "the new key by hand")
        if verdict == "unknown":
            if not trust_new_keys:
                raise HostKeyError(
                    t.name, f"{hop.where}{name} is not in {hop.known.shown()}",
                    "add its key (checked by hand) or run once with --trust-new-host-keys")
            hop.known.record(name, key.get_name(), key.asbytes())
        return tr
    except BaseException:
        tr.close()
        raise


def _prefer_known_key_types(tr: paramiko.Transport, known_types: list[str]) -> None:
    """Ask the server for a key of a type known_hosts has (as ssh and paramiko do), so a
    host with an rsa line is not refused for offering its ed25519 key first."""
    if not known_types:
        return
    opts = tr.get_security_options()
    offered = list(opts.key_types)
    wanted = []
    for kt in known_types:
        wanted += ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] if kt == "ssh-rsa" else [kt]
    first = [kt for kt in wanted if kt in offered]
    if first:
        opts.key_types = tuple(dict.fromkeys(first + offered))


def _authenticate(hop: _Hop, tr: paramiko.Transport) -> None:
    t = hop.target
    who = f"{t.user}@{t.address}"
    for ident in hop.keys:
        try:
            tr.auth_publickey(t.user, ident.key)
        except paramiko.BadAuthenticationType as exc:
            raise AuthError(t.name, f"{hop.where}{who} does not accept public keys (it "
                                    f"allows: {', '.join(exc.allowed_types) or 'nothing'})",
                            "nicbench logs in with keys only") from exc
        except paramiko.AuthenticationException as exc:
            if "timeout" in str(exc).lower():
                raise ConnectError(t.name, f"{hop.where}{who} did not answer the login "
                                           f"within {t.connect_timeout_s:g} s",
                                   "is the host overloaded?") from exc
            continue      # this key is refused: offer the next
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if not tr.is_active():
                raise ConnectError(t.name, f"{hop.where}{who} dropped the connection during "
                                           f"the login: {exc}",
                                   "does its sshd allow this user?") from exc
            continue      # e.g. the agent would not sign with this key
        if tr.is_authenticated():
            return
        raise AuthError(t.name, f"{hop.where}{who} asks for more than a key to log in",
                        "nicbench logs in with a key only (AuthenticationMethods)")
    tried = ", ".join(dict.fromkeys(i.source for i in hop.keys))
    raise AuthError(t.name, f"{hop.where}SSH authentication refused for {who}",
                    f"check hosts[].ssh.user and key_file (tried: {tried})")


def _nodelay_on_jump_host(hop: _Hop, tr: paramiko.Transport) -> None:
    """Make the jump host's sshd turn Nagle off on our connection: sshd sets TCP_NODELAY
    when a session first runs a command, and forwarding alone never does, so every reply
    through a jump host waited for our delayed ACK (measured on the lab: 50 ms per
    command through a bastion, 13 ms direct). The command's own fate does not matter
    (the channel is closed at once); a host that refuses sessions is simply slower."""
    try:
        chan = tr.open_session(timeout=hop.target.connect_timeout_s)
        try:
            chan.exec_command("exit 0")
        finally:
            chan.close()
    except (paramiko.SSHException, EOFError, OSError):
        pass


# -- running commands ------------------------------------------------------------------------

class SshConnection(Connection):
    """``warm_powershell``: a Windows host runs every command in one PowerShell session
    kept for the run (``ssh_powershell``); False: a powershell.exe per command."""

    def __init__(self, target: SshTarget, *, trust_new_keys: bool = False,
                 warm_powershell: bool = True):
        super().__init__(target.name, SHELLS[target.shell]())
        self.target = target
        self.trust_new_keys = trust_new_keys
        self._session: SshSession | None = None
        self._lock = threading.Lock()
        self._warm: WarmShell | WarmPowerShell | None = None
        self._warm_lock = threading.Lock()
        self.warm_all = warm_powershell and self.shell.name == "powershell"
        self.warm_lost = False      # said once; every later command is a process of its own

    def _connect(self) -> SshSession:
        """The established connection, made (again) if there is none or it has dropped."""
        with self._lock:
            if self._session is not None:
                if self._session.is_active():
                    return self._session
                self._session.close()
                self._session = None
            self._session = establish(self.target, trust_new_keys=self.trust_new_keys)
            return self._session

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
        self._drop_warm()
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    # -- commands -----------------------------------------------------------------
    def _exec(self, argv: Sequence[str], timeout: float,
              pidfile: str | None = None) -> Result:
        session = self._connect()
        started = time.time()
        t0 = time.monotonic()
        try:
            chan = _transport(session).open_session(timeout=self.target.connect_timeout_s)
            chan.exec_command(self.shell.render_with_pid(argv, pidfile))
            chan.shutdown_write()
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise self._channel_failed(exc) from exc

        cout, cerr = Capture(self.max_output), Capture(self.max_output)
        out, err = cout.data, cerr.data
        deadline = t0 + timeout
        timed_out = False
        # The exit status does not end the wait for output, so poll: fast at first (most commands
        # end in milliseconds), backing off to MAX_POLL_S for long ones.
        poll = 0.001
        # sshd sends the exit status as soon as the command exits, possibly before the rest
        # of its output (measured: 262144 of 300007 bytes had arrived). The output is
        # complete at EOF; only a leftover child still holding the pipe open keeps EOF
        # away, so after the exit status, wait for EOF at most EOF_GRACE_S of silence.
        quiet_since: float | None = None
        try:
            while not (cout.over or cerr.over):
                if chan.recv_ready():
                    cout.add(chan.recv(65536))
                    poll, quiet_since = 0.001, None
                    continue
                if chan.recv_stderr_ready():
                    cerr.add(chan.recv_stderr(65536))
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
                elif chan.closed or not session.is_active():
                    # The connection went away under a running command (sshd killed, the
                    # host rebooted, the network dropped, or a jump host on the way did):
                    # no exit status will come.
                    raise _Lost()
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                came = _await_output(chan, min(left, poll))
                if came:
                    cout.add(came)     # within the cap, as every read
                    poll, quiet_since = 0.001, None
                    continue
                poll = min(poll * 2, MAX_POLL_S)
        except _Lost:
            raise self._lost(argv) from None
        except BaseException:
            # Ctrl-C or an error while waiting: kill the remote command, then re-raise.
            self._kill_remote(out)
            chan.close()
            raise
        if timed_out or cout.over or cerr.over:
            self._kill_remote(out)
            chan.close()
            return _result(self.host, argv, out, err, None, t0, started, timed_out,
                           truncated=cout.over or cerr.over)
        # Drain what arrived together with the exit status.
        while chan.recv_ready() and not cout.add(chan.recv(65536)):
            pass
        while chan.recv_stderr_ready() and not cerr.add(chan.recv_stderr(65536)):
            pass
        status = chan.recv_exit_status()
        if status == -1 and _dropped(session):
            # The channel closed without an exit status because the connection went
            # (the session's sshd was killed, the host went down), not the command.
            raise self._lost(argv)
        chan.close()
        return _result(self.host, argv, out, err, status, t0, started,
                       truncated=cout.over or cerr.over)

    # A connection that failed under a command is closed (its warm shell with it) before
    # the error is raised; the next call connects again.
    def _lost(self, argv: Sequence[str]) -> ConnectError:
        self.close()
        return ConnectError(self.host, f"the connection was lost while `{display(argv)}` ran",
                            _GONE_HINT)

    def _channel_failed(self, exc: BaseException) -> ConnectError:
        self.close()
        return ConnectError(self.host, f"SSH channel failed: {exc}", _GONE_HINT)

    def _drop_warm(self) -> None:
        warm, self._warm = self._warm, None
        if warm is not None:
            warm.close()

    def _exec_warm(self, argv: Sequence[str], timeout: float,
                   pidfile: str | None = None) -> Result:
        if self.warm_all:
            return self._exec_powershell(argv, timeout, pidfile)
        if self.shell.name != "posix" or pidfile is not None:
            return self._exec(argv, timeout, pidfile)
        return self._through_warm(WarmShell, lambda: self.shell.render_with_pid(argv),
                                  argv, timeout, pidfile)

    def _exec_powershell(self, argv: Sequence[str], timeout: float,
                         pidfile: str | None) -> Result:
        """A Windows command in the host's warm PowerShell (started by the first command,
        again after a timeout or a reconnect), or in a powershell.exe of its own once the
        session was lost, or while another thread uses it."""
        if self.warm_lost:
            return self._exec(argv, timeout, pidfile)
        shell: Any = self.shell          # a WindowsShell: it has warm_script
        return self._through_warm(WarmPowerShell, lambda: shell.warm_script(argv, pidfile),
                                  argv, timeout, pidfile)

    def _through_warm(self, kind: type[WarmShell] | type[WarmPowerShell],
                      script: Callable[[], str], argv: Sequence[str], timeout: float,
                      pidfile: str | None) -> Result:
        """``argv`` (as ``script()``) in the connection's kept session of ``kind``, made
        anew when there is none or it cannot be used; alone (``_exec``) while another
        thread has the session, or once a PowerShell session was lost."""
        from nicbench.remote.warm_powershell import SessionLost, fall_back

        if not self._warm_lock.acquire(blocking=False):
            return self._exec(argv, timeout, pidfile)   # another thread has the session
        try:
            session = self._connect()
            try:
                if not isinstance(self._warm, kind) or not self._warm.usable(session):
                    self._drop_warm()
                    self._warm = kind(session, self.target.connect_timeout_s)
                return self._warm.run(argv, script(), timeout, self)
            except SessionLost as exc:   # a PowerShell session that could not go on
                self._drop_warm()
                return fall_back(self, exc, argv, lambda: self._exec(argv, timeout, pidfile))
            except _Lost:
                raise self._lost(argv) from None
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise self._channel_failed(exc) from exc
            except BaseException:
                self._drop_warm()     # Ctrl-C or an error: its state is unknown, start anew
                raise
        finally:
            self._warm_lock.release()

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


def _dropped(session: SshSession, wait_s: float = 0.5) -> bool:
    """Has the connection gone? A channel closed without an exit status is either a
    command killed by a signal (the connection lives on) or a dead connection, whose
    transport notices the closed socket a moment later."""
    deadline = time.monotonic() + wait_s
    while session.is_active():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class WarmShell:
    """One ``sh`` on one channel that runs a trial's commands one after another.

    A command on a channel of its own costs a channel, an sshd fork and the user's login
    shell before it starts: 4.1 ms on the lab against 1.6 ms here (one fork and exec from
    a shell already running), and a trial makes three such calls. Each command runs as
    over a channel of its own: in a session of its own (``setsid``: the process group a
    timeout kills), stdin from /dev/null, its output and exit status read back up to a
    marker line with a nonce (no command output can fake it). The shell ends with its
    channel: when nicbench closes the connection, or its controller dies and sshd
    closes the session.
    """

    def __init__(self, session: SshSession, open_timeout_s: float):
        self.transport = _transport(session)
        self.chan = self.transport.open_session(timeout=open_timeout_s)
        # The shell's own complaints (a child's "Terminated") go nowhere; the commands'
        # error output goes to the channel's, kept on descriptor 3.
        self.chan.exec_command("exec sh")
        self.chan.sendall(b"exec 3>&2 2>/dev/null\n")
        self.calls = 0

    def usable(self, session: SshSession) -> bool:
        return (session.transport is self.transport and self.transport.is_active()
                and not self.chan.closed and not self.chan.exit_status_ready())

    def close(self) -> None:
        with contextlib.suppress(paramiko.SSHException, OSError, EOFError):
            self.chan.close()

    def run(self, argv: Sequence[str], command: str, timeout: float,
            conn: SshConnection) -> Result:
        self.calls += 1
        mark = f"@@nicbench-done {self.calls}.{uuid.uuid4().hex}"
        end_out = re.compile(rb"\n" + re.escape(mark.encode()) + rb" (\d+)\n")
        end_err = b"\n" + mark.encode() + b"\n"
        started = time.time()
        t0 = time.monotonic()
        # In a subshell that becomes the command: a redirection on a plain command would
        # also be in force for the shell's own "Terminated" as it waits.
        self.chan.sendall((f"(exec setsid {command} </dev/null 2>&3 3>&-); "
                           f"printf '\\n{mark} %s\\n' \"$?\"; printf '\\n{mark}\\n' >&3\n"
                           ).encode())
        cout, cerr = Capture(conn.max_output), Capture(conn.max_output)
        out, err = cout.data, cerr.data
        deadline = t0 + timeout
        poll = 0.001
        done: re.Match[bytes]
        found: re.Match[bytes] | None = None
        err_end = -1
        # Where the markers are looked for: in what came since the last look (and the
        # length of a marker before it), never the whole reply again.
        looked_out = looked_err = 0
        try:
            while True:
                got = False
                if self.chan.recv_ready():
                    got = cout.add(self.chan.recv(65536)) or True
                elif self.chan.recv_stderr_ready():
                    got = cerr.add(self.chan.recv_stderr(65536)) or True
                if cout.over or cerr.over:
                    conn._kill_remote(out)
                    self.close()     # the rest of its reply still comes: this shell is done
                    return _result(conn.host, argv, out, err, None, t0, started,
                                   truncated=True)
                if got:
                    poll = 0.001
                    continue
                if found is None:
                    found = end_out.search(out, max(0, looked_out - len(mark) - 32))
                    looked_out = len(out)
                if found is not None and err_end < 0:
                    err_end = err.find(end_err, max(0, looked_err - len(end_err)))
                    looked_err = len(err)
                if found is not None and err_end >= 0:
                    done = found
                    break
                if self.chan.closed or self.chan.exit_status_ready() or \
                        not self.transport.is_active():
                    raise _Lost()
                left = deadline - time.monotonic()
                if left <= 0:
                    conn._kill_remote(out)
                    self.close()     # its marker may still come: this shell is done
                    return _result(conn.host, argv, out, err, None, t0, started, True)
                came = _await_output(self.chan, min(left, poll))
                if came:
                    cout.add(came)     # within the cap, as every read
                    poll = 0.001
                    continue
                poll = min(poll * 2, MAX_POLL_S)
        except _Lost:
            raise
        except BaseException:
            conn._kill_remote(out)    # Ctrl-C while it ran: kill it, then re-raise
            raise
        return _result(conn.host, argv, out[:done.start()], err[:err_end],
                       int(done.group(1)), t0, started)
