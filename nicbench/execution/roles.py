"""One tool's part in a trial (:class:`RoleRun`): its paths on the hosts, its server on
the receiver, the server's finish, its client on the sender, its outputs judged, and its
clean-up. A trial drives one per role (``execution/trial.py``): the test's own tool as
the load, and each tool beside it (``tests[].beside``).

The client's state is what the clean-up needs to know: a client never started or ended
left nothing (its script removed its files); one that ran past its time was reaped at
once; one still running when the trial stopped (an error, Ctrl-C, a lost connection)
stays journaled for the run's final restore.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from enum import Enum
from typing import Any

from nicbench.config.profile import Role
from nicbench.errors import (CommandTimeout, ConnectError, HostKeyError, NicbenchError,
                             OutputTooLarge, RemoteError)
from nicbench.execution.conformance import LinkWindow, held_to_plan
from nicbench.execution.judge import Outcome, apply, error_words, judge, not_read
from nicbench.execution.trialcontext import (LISTEN_TIMEOUT_S, TrialContext, client_timeout_s,
                                             server_end)
from nicbench.interrupts import interrupts_held
from nicbench.limits import MAX_OUTPUT_BYTES, TRUNCATED_MARK, over_cap
from nicbench.platforms.base import (ClientRun, Finishing, Platform, ServerEnd, ServerFinish,
                                     ServerStart, cpu_split)
from nicbench.remote.command import display
from nicbench.remote.connection import Background
from nicbench.results.records import Failure, TrialRecord
from nicbench.tools.driver import Driver, Endpoints, Plan
from nicbench.tools.registry import TOOLS

Journaled = tuple[Platform, str, str, int | None]


class ClientState(Enum):
    NOT_STARTED = "not started"
    RUNNING = "running"
    ENDED = "ended"
    REAPED = "reaped"       # ran past its time: killed and its files removed at once


def failure_of(exc: NicbenchError) -> Failure:
    """The failure of a trial that an error stopped."""
    if isinstance(exc, (ConnectError, HostKeyError)):
        return Failure.HOST_LOST
    if isinstance(exc, OutputTooLarge):
        return Failure.OUTPUT_CAP
    return Failure.REMOTE if isinstance(exc, RemoteError) else Failure.TOOL_ERROR


def reason_of(exc: NicbenchError) -> str:
    """The reason of a trial that an error stopped, in one line."""
    if isinstance(exc, OutputTooLarge):
        return over_cap(f"{exc.result.host}: `{exc.result.command[:60]}`")
    return exc.one_line()


class RoleRun:
    """One tool of a trial, from its command lines to its clean-up; what it gives goes to
    ``out`` (the trial's record for the load, a RoleResult beside it)."""

    plan: Plan                 # set by prepare(), which comes first
    client_timeout: float
    end: ServerEnd

    def __init__(self, ctx: TrialContext, role: Role, tool: str, out: Outcome, stem: str):
        self.ctx, self.role, self.tool, self.out = ctx, role, tool, out
        self.receiver, self.sender = ctx.receiver, ctx.sender
        # Paths on the hosts, unique to this attempt (a trial retried, or resumed after a
        # crash, never meets what an earlier attempt left).
        self.server_dir = ctx.receiver.scratch_file(stem + ".d")
        self.client_pid = ctx.sender.scratch_file(stem + ".pid")
        self.client_file = ctx.sender.scratch_file(stem + ".out")
        self.client_paths: list[str] = []
        self.state = ClientState.NOT_STARTED
        self.server_asked = False
        self.started: ServerStart | None = None
        self.server: Background | None = None
        self.finishing: Finishing | None = None
        self.ran: ClientRun | None = None
        self.client_text = self.server_text = ""
        self.outfile_text: str | None = None
        self.thread: threading.Thread | None = None

    @property
    def driver(self) -> Driver:
        return TOOLS[self.tool].driver

    @property
    def links(self) -> tuple[str | None, str | None]:
        """The test interfaces whose counters this role's calls read (receiver, sender):
        the load's, which the trial is held to (tools beside it share the same link)."""
        if self.role is not Role.LOAD:
            return None, None
        return self.ctx.receiver_iface, self.ctx.sender_iface

    @property
    def raw_prefix(self) -> str:
        """Its raw files' role in their names: the load's as they always were."""
        return "" if self.role is Role.LOAD else f"{self.role}-"

    # -- before anything is made -----------------------------------------------------
    def prepare(self, params: dict[str, Any], offered_bps: int | None, tag: str,
                timeout_s: float) -> list[Journaled]:
        """Its command lines, and every path it will make, for the journal."""
        ctx = self.ctx
        ends = Endpoints(ctx.receiver_addr, ctx.sender_addr, self.out.protocol, offered_bps,
                         receiver_os=self.receiver.os_name, sender_os=self.sender.os_name,
                         client_file=self.client_file)
        plan = self.plan = self.driver.plan(self.receiver.executable(self.tool),
                                            self.sender.executable(self.tool),
                                            params, ends, tag)
        self.out.commands = {"server": display(plan.server), "client": display(plan.client)}
        self.out.version = _tool_version(self.sender, self.tool)
        self.client_timeout = client_timeout_s(plan, timeout_s)
        self.end = server_end(plan, timeout_s,
                              overlap=self.receiver.conn is not self.sender.conn)
        self.client_paths = [self.client_pid]
        journaled: list[Journaled] = [
            (self.receiver, self.server_dir, f"server {display(plan.server)}", plan.port),
            (self.sender, self.client_pid, f"client {display(plan.client)}", None)]
        if plan.client_outfile:
            self.client_paths.append(plan.client_outfile)
            journaled.append((self.sender, plan.client_outfile,
                              f"output of {plan.client[0]}", None))
        return journaled

    # -- the run -------------------------------------------------------------------
    def start_server(self) -> bool:
        """Its server up and listening; False (and why in ``out``) if it is not."""
        plan = self.plan
        self.server_asked = True     # from here a lost connection may leave a server behind
        with interrupts_held():      # a Ctrl-C here would leave a server nobody stops
            started = self.receiver.start_server(plan.server, self.server_dir, plan.port,
                                                 plan.listen_protocol, LISTEN_TIMEOUT_S,
                                                 link=self.links[0])
            self.server = started.server
        self.started = started
        if not started.listening and not started.ended:
            self.out.fail(Failure.NOT_LISTENING,
                          f"{self.receiver.host}: nothing listened on {plan.listen_protocol} "
                          f"port {plan.port} within {LISTEN_TIMEOUT_S:g} s")
            return False
        # Something listens on the port, but it may not be our server: one that could not
        # bind (another tool holds the port; NPtcp binds every address) has ended by now,
        # and the client would measure whatever does listen there.
        if started.ended:
            res = started.server.collect()
            self.server_text = res.stdout + res.stderr
            self.out.exit_status["server"] = res.exit_status
            self.out.fail(Failure.SERVER_ENDED,
                          f"the receiver's server ended before the transfer (exit "
                          f"{res.exit_status}): {error_words(res.stdout + chr(10) + res.stderr)}")
            return False
        return True

    def begin(self) -> None:
        """The client is about to start: the receiver's finish begins with it (where the
        two are on different connections it waits there while the client runs)."""
        assert self.server is not None
        self.state = ClientState.RUNNING
        self.finishing = self.receiver.begin_finish(self.server, self.end, link=self.links[0])

    def run_client(self) -> None:
        """The client, to its end (or killed at its time)."""
        plan = self.plan
        try:
            ran = self.sender.run_client(plan.client, self.client_timeout, self.client_pid,
                                         plan.client_outfile, link=self.links[1])
        except (CommandTimeout, OutputTooLarge) as exc:
            self.client_text = exc.result.stdout + exc.result.stderr
            if isinstance(exc, OutputTooLarge):
                self.out.fail(Failure.OUTPUT_CAP, over_cap("client"))
            else:
                self.out.fail(Failure.TIMEOUT, f"timeout: the sender ran past "
                                               f"{self.client_timeout:g} s and was killed")
            self._reap()
            self.state = ClientState.REAPED
            return
        self.state = ClientState.ENDED
        self.ran = ran
        client = ran.result
        self.client_text = client.stdout + (("\n" + client.stderr)
                                            if client.stderr.strip() else "")
        self.out.exit_status["client"] = client.exit_status
        self.outfile_text = ran.outfile

    def start_client_thread(self) -> None:
        """The client on a thread of its own (a tool beside the load)."""
        self.thread = threading.Thread(target=self._client_caught, daemon=True,
                                       name=f"{self.role} client {self.sender.host}")
        self.thread.start()

    def _client_caught(self) -> None:
        try:
            self.run_client()
        except NicbenchError as exc:     # its connection lost, say: its own failure
            self.fail_by(exc)

    def fail_by(self, exc: NicbenchError) -> None:
        if self.out.failure is None:
            self.out.fail(failure_of(exc), reason_of(exc))

    def wait(self) -> None:
        """Its client thread ended (bounded: the client's own call has its timeout)."""
        while self.thread is not None and self.thread.is_alive():
            self.thread.join(0.2)

    def collect(self) -> None:
        """The server's finish and both outputs judged, once the client has ended."""
        if self.state is not ClientState.ENDED:
            return
        assert self.finishing is not None and self.ran is not None
        finish = self.finishing.result()
        self.server_text = finish.result.stdout + (("\n" + finish.result.stderr)
                                                   if finish.result.stderr.strip() else "")
        self.out.exit_status["server"] = finish.result.exit_status
        ran, started = self.ran, self.started
        over = [end for end, text in self._texts() if len(text) > MAX_OUTPUT_BYTES]
        if over:      # not parsed: the head of an output is not the tool's result
            j = not_read(Failure.OUTPUT_CAP, over_cap(over[0]))
        else:
            j = judge(self.driver, ran.result, self.client_text, self.server_text,
                      self.outfile_text, self.out.protocol,
                      self.out.offered_bps if isinstance(self.out, TrialRecord) else None)
        if isinstance(self.out, TrialRecord):
            # Each host over the transfer: the sender around its client; the receiver
            # from the finish's start where it slept through the transfer, else from the
            # server's start, to the transfer's end.
            cpu = (cpu_split(ran.cpu0, ran.cpu1, ran.tool_ticks),
                   cpu_split(finish.cpu0 or (started.cpu if started is not None else None),
                             finish.cpu, finish.tool_ticks))
            j = held_to_plan(replace(j, cpu=cpu), self.plan.expected_s, self._windows(finish))
        apply(self.out, j)

    def _windows(self, finish: ServerFinish) -> list[LinkWindow]:
        """The test interfaces' counters around the transfer, on each host that reads them."""
        assert self.ran is not None
        r_if, s_if = self.links
        windows = []
        if r_if is not None:
            windows.append(LinkWindow(self.receiver.host, r_if,
                                      self.started.link if self.started else None,
                                      finish.link))
        if s_if is not None:
            windows.append(LinkWindow(self.sender.host, s_if, self.ran.link0, self.ran.link1))
        return windows

    # -- after ---------------------------------------------------------------------
    def stop(self) -> None:
        """End whatever of it still runs (an error, Ctrl-C): its finish, its server, and
        a client still running on its thread (killed, so the trial does not wait out its
        time)."""
        if self.finishing is not None:
            with interrupts_held():
                self.finishing.abandon()     # a finish still under way
        if self.server is not None and not self.server.collected:
            try:
                with interrupts_held():
                    self.server.stop(grace_s=1.0)
                    res = self.server.collect()
                self.server_text = self.server_text or (res.stdout + res.stderr)
            except NicbenchError:
                pass
        if self.thread is not None and self.thread.is_alive():
            with interrupts_held():
                self._reap()
            self.wait()

    def gone(self) -> list[tuple[Platform, str]]:
        """What of it is gone from the hosts: the client's paths when its script removed
        them as it ended, or it never started; the server's directory once collect
        removed it, or it was never asked for. A client that ran past its time was reaped
        (and cleared) already; a client or server whose connection was lost stays
        journaled for the run's final restore."""
        gone = [(self.sender, p) for p in self.client_paths
                if self.state in (ClientState.NOT_STARTED, ClientState.ENDED)]
        if not self.server_asked or (self.server is not None and self.server.collected):
            gone.append((self.receiver, self.server_dir))
        return gone

    def _texts(self) -> list[tuple[str, str]]:
        return [(end, text) for end, text in (("client", self.client_text),
                                              ("server", self.server_text),
                                              ("outfile", self.outfile_text)) if text]

    def store_raw(self, trial_id: str) -> None:
        """Each end's output in raw/: at most the first MAX_OUTPUT_BYTES of it, marked
        where it was cut."""
        self.out.raw = {
            end: self.ctx.run_dir.write_raw(
                trial_id, self.raw_prefix + end,
                text if len(text) <= MAX_OUTPUT_BYTES
                else text[:MAX_OUTPUT_BYTES] + TRUNCATED_MARK)
            for end, text in self._texts()}

    def _reap(self) -> None:
        """Remove what a killed command left at once (else the run's end does it)."""
        try:
            self.sender.reap(self.client_paths)
        except NicbenchError:
            return
        self.ctx.cleared(*[(self.sender, path) for path in self.client_paths])


def _tool_version(platform: Platform, tool: str) -> str | None:
    """The installed tool's version, for tools whose output does not print it (iperf 2
    clients, NPtcp). The run probed it for the manifest already; the platform caches it."""
    try:
        return platform.tool_version(tool, platform.executable(tool))
    except NicbenchError:
        return None
