"""One trial on a pair: every role's receiver up, every sender run at once, each tool's
outputs kept and judged by its own parser.

A test's own tool is the trial's load (the one role of most tests); the tools beside it
(``tests[].beside``) run in the same trial, started and stopped with it (one
:class:`~nicbench.execution.roles.RoleRun` each). Failure is detected, never assumed
away: a non-zero exit, the tool's own error text, a timeout (the tool is killed on its
host), output that cannot be read, and a transfer that moved almost nothing (iperf exits
0 over a dead link) all give a failed trial with a reason. Every trial is returned as a
record, failed or not, with its raw output saved.

A tool beside the load that fails fails the trial too ("probe iperf2: ..."): the test
declared both figures, so a repetition with one of them missing is not a measurement of
it, and counting it failed lets the runner's retries and give-up rules see it. The load's
own figures stay in the record, and each beside tool's outcome in its RoleResult.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from nicbench.config.profile import BesideSpec, Role, TestSpec
from nicbench.errors import NicbenchError, ResultsWriteError, TrialError
from nicbench.execution.judge import DEAD_LINK_BPS
from nicbench.execution.roles import RoleRun, failure_of, reason_of
from nicbench.execution.trialcontext import (LISTEN_TIMEOUT_S, SERVER_EXIT_WAIT_S,
                                             TIMEOUT_MARGIN_S, TrialContext,
                                             client_timeout_s, server_end, trial_names)
from nicbench.results.records import Failure, Kind, RoleResult, Status, TrialRecord
from nicbench.tools.params import resolve

__all__ = ["DEAD_LINK_BPS", "LISTEN_TIMEOUT_S", "SERVER_EXIT_WAIT_S", "TIMEOUT_MARGIN_S",
           "TrialContext", "beside_params", "client_timeout_s", "run_trial", "server_end",
           "trial_names"]


def run_trial(ctx: TrialContext, test: TestSpec, params: dict[str, Any], *, repetition: int,
              kind: Kind = Kind.REPETITION, offered_bps: int | None = None,
              timeout_s: float = 120.0) -> TrialRecord:
    trial_id, tag = trial_names(ctx, test.name, kind, repetition, offered_bps)
    stem = f"nicbench-{tag}-{uuid.uuid4().hex[:8]}"
    rec = TrialRecord(
        run_id=ctx.run_id, trial_id=trial_id, pair=ctx.pair, adapter=ctx.adapter,
        adapter_label=ctx.adapter_label, tool=test.tool, test=test.name,
        protocol=test.protocol, point=ctx.point, mtu=ctx.mtu, repetition=repetition,
        kind=kind, status=Status.FAILED, offered_bps=offered_bps,
        hosts={"receiver": ctx.receiver.host, "sender": ctx.sender.host},
        started_at=time.time())
    t0 = time.monotonic()
    roles = [RoleRun(ctx, Role.LOAD, test.tool, rec, stem)]
    for spec in test.beside:
        out = RoleResult(spec.role, spec.tool, spec.protocol, Status.FAILED)
        roles.append(RoleRun(ctx, spec.role, spec.tool, out, f"{stem}.{spec.role}"))
        rec.beside.append(out)
    try:
        # Every path of every role, journaled in one write before any is made.
        journaled = roles[0].prepare(params, offered_bps, tag, timeout_s)
        for role, spec in zip(roles[1:], test.beside, strict=True):
            journaled += role.prepare(beside_params(ctx, spec), None, tag, timeout_s)
        ctx.expect(*journaled)
        for role in roles:
            if not role.start_server():
                _blame(rec, role)
                return rec
        _run_clients(roles)
        _collect(rec, roles)
        return rec
    except ResultsWriteError:
        raise       # the run cannot store results: stop it, do not record a failure
    except NicbenchError as exc:
        if rec.failure is None:
            rec.fail(failure_of(exc), reason_of(exc))
        return rec
    finally:
        for role in roles:
            role.stop()
        ctx.cleared(*[path for role in roles for path in role.gone()])   # one journal write
        for role in roles:
            role.store_raw(trial_id)
        _unjudged(rec)
        rec.wall_s = time.monotonic() - t0
        rec.ended_at = time.time()


def beside_params(ctx: TrialContext, spec: BesideSpec) -> dict[str, Any]:
    """A beside tool's params with the point's variables, as the runner resolves the
    test's own."""
    try:
        return resolve(dict(spec.params), ctx.point_vars)
    except KeyError as exc:
        raise TrialError(f"{spec.role} {spec.tool}: params use ${exc.args[0]}, which "
                            f"point {ctx.point} does not set") from exc


def _run_clients(roles: list[RoleRun]) -> None:
    """Every client at once: each tool beside the load on a thread of its own, started
    first, the load's in this thread; then all of them waited for."""
    for role in roles:
        role.begin()
    for role in roles[1:]:
        role.start_client_thread()
    roles[0].run_client()
    for role in roles[1:]:
        role.wait()


def _collect(rec: TrialRecord, roles: list[RoleRun]) -> None:
    """Every server finished and every output judged; the load's errors are the
    trial's, a beside tool's its own (and then the trial's through _blame)."""
    roles[0].collect()
    for role in roles[1:]:
        try:
            role.collect()
        except NicbenchError as exc:
            role.fail_by(exc)
    for role in roles[1:]:
        _blame(rec, role)


def _blame(rec: TrialRecord, role: RoleRun) -> None:
    """A beside tool that did not measure fails a trial that had not failed already."""
    out = role.out
    if out is rec or out.failure is None or rec.failure is not None:
        return
    rec.fail(out.failure, f"{role.role} {role.tool}: {out.reason}")


def _unjudged(rec: TrialRecord) -> None:
    """A beside tool that the trial's end stopped before it was judged says so."""
    for out in rec.beside:
        if out.status is Status.FAILED and out.failure is None:
            out.fail(Failure.NOT_RUN, "stopped with the trial"
                     + (f": {rec.reason}" if rec.reason else ""))
