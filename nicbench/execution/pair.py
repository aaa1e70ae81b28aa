"""One pair through the phases: prepare it, then each point in turn (apply, measure each
pending test, restore), and when it cannot go on, the reason stored for every
configuration it leaves unmeasured.

:class:`PairRun` is the unit the scheduler runs (one thread per pair measured at once):
:meth:`PairRun.alone` ends only this pair on an error of its own (a host answering oddly,
a host lost) and tells how it ended; a stop ends it between trials; a results directory
that cannot be written stops the run.
"""

from __future__ import annotations

from nicbench.config.inventory import Pair
from nicbench.config.profile import Point, TestSpec
from nicbench.errors import (ConnectError, HostKeyError, NicbenchError, ResultsWriteError,
                             TuningError)
from nicbench.execution import events as ev
from nicbench.execution.context import HostLost, RunContext, Stopped
from nicbench.execution.measure import Trials, measure_for
from nicbench.execution.ossettings import grouped
from nicbench.execution.point import PointTuning
from nicbench.execution.prepare import prepare_pair
from nicbench.execution.sides import Hosts, PairSides
from nicbench.execution.recorder import Where
from nicbench.execution.trial import TrialContext
from nicbench.results.records import Failure, Kind, TrialKey


class PairRun:
    def __init__(self, run: RunContext, hosts: Hosts, pair: Pair):
        self.run = run
        self.hosts = hosts
        self.pair = pair
        adapter = run.inventory.adapter(pair.adapter)
        self.adapter_id, self.adapter_label = adapter.id, adapter.label

    def alone(self) -> None:
        """The pair, whatever becomes of the others."""
        state = ev.PairState.STOPPED   # unless it ends otherwise (Ctrl-C in the main thread)
        try:
            self.measure()
            state = ev.PairState.DONE
        except Stopped:
            pass
        except ResultsWriteError:
            state = ev.PairState.FAILED
            raise
        except NicbenchError as exc:
            state = ev.PairState.FAILED
            reason = exc.one_line()
            with self.run.lock:
                self.run.unmeasured[self.pair.name] = reason
            self.give_up(self.run.profile.points, Failure.REMOTE, reason)
        except Exception:
            state = ev.PairState.FAILED
            raise
        finally:
            self.run.tell(ev.PairEnded(pair=self.pair.name, state=state))

    def not_ready(self, failure: Failure, reason: str) -> None:
        """The pair, found not ready before the run changed anything: every
        configuration not measured yet is recorded as not measurable, with why."""
        self.run.tell(ev.PairStarted(pair=self.pair.name))
        with self.run.lock:
            self.run.unmeasured[self.pair.name] = reason
        self.give_up(self.run.profile.points, failure, reason)
        self.run.tell(ev.PairEnded(pair=self.pair.name, state=ev.PairState.FAILED))

    def measure(self) -> None:
        run, pair = self.run, self.pair
        run.tell(ev.PairStarted(pair=pair.name))
        lost = [h for h in (pair.receiver_side.host, pair.sender_side.host) if h in run.lost]
        if lost:
            self.give_up(run.profile.points, Failure.HOST_LOST,
                         f"{lost[0]}: {run.lost[lost[0]]}")
            return
        try:
            sides = prepare_pair(run, self.hosts, pair)
        except TuningError as exc:
            reason = (f"{exc.host}: {exc.kernel_message} (check the cable and "
                      "pairs[].a/b.interface in the inventory)")
            run.unmeasured[pair.name] = reason
            self.give_up(run.profile.points, Failure.INTERFACE, reason)
            return
        except (ConnectError, HostKeyError) as exc:
            run.lost[exc.host] = exc.message
            self.give_up(run.profile.points, Failure.HOST_LOST, exc.one_line())
            return
        points = grouped(run.profile.points)   # one reboot per Windows registry set
        for k, point in enumerate(points):
            run.check_stop()
            try:
                self.point(sides, point, points[k + 1] if k + 1 < len(points) else None)
            except HostLost as exc:
                run.lost[exc.host] = exc.reason
                run.tell(ev.Warning(f"{exc.host} is lost ({exc.reason}): the rest of "
                                    f"pair {pair.name} is not measured"))
                self.give_up(points[k:], Failure.HOST_LOST, str(exc))
                return

    def point(self, sides: PairSides, point: Point, next_point: Point | None) -> None:
        run = self.run
        tests = run.profile.tests_at(point)   # a test's points: may leave it out here
        pending = [t for t in tests if not self.stands(point, t)]
        run.recorder.advance(sum(measure_for(run.profile, t).planned()
                                 for t in tests if t not in pending))
        if not pending:
            return
        run.tell(ev.PointStarted(pair=self.pair.name, point=point.name))
        tuning = PointTuning(run, sides)
        trials = Trials(run, self.trial_context(sides, point), point)
        try:
            try:
                tuning.apply(point, pending)
            except TuningError as exc:
                tuning.skip(trials.where, pending, exc)
                return
            except (ConnectError, HostKeyError) as exc:
                raise HostLost(exc.host, exc.message) from None
            for test in pending:
                measure_for(run.profile, test).run(run, trials)
        finally:
            tuning.restore(next_point)

    def trial_context(self, sides: PairSides, point: Point) -> TrialContext:
        (receiver, r_if, r_addr), (sender, s_if, s_addr) = sides.ends
        return TrialContext(run_dir=self.run.run_dir, run_id=self.run.run_id,
                            pair=self.pair.name, adapter=self.adapter_id,
                            adapter_label=self.adapter_label, point=point.name,
                            mtu=point.ip_mtu, receiver=receiver, sender=sender,
                            receiver_addr=r_addr, sender_addr=s_addr,
                            journal=self.run.tuning, point_vars=dict(point.vars),
                            receiver_iface=r_if, sender_iface=s_if)

    def stands(self, point: Point, test: TestSpec) -> bool:
        """Does every trial of ``test`` at ``point`` stand already (stored, or a record
        that stands for them: refused, given up)?"""
        recorder = self.run.recorder
        key = (self.pair.name, point.name, test.name)
        if recorder.stored(TrialKey(*key, Kind.SKIPPED, None)) or \
                recorder.stored(TrialKey(*key, Kind.GIVEN_UP, None)):
            return True
        return measure_for(self.run.profile, test).stands(recorder, *key[:2])

    def give_up(self, points: list[Point], failure: Failure, reason: str) -> None:
        """Record every configuration of the pair at ``points`` not measured yet as not
        measurable now, with the reason."""
        run = self.run
        run.tell(ev.Warning(f"pair {self.pair.name}: {reason}"))
        for point in points:
            where = Where(self.pair.name, self.adapter_id, self.adapter_label, point)
            for test in run.profile.tests_at(point):
                if self.stands(point, test):
                    continue
                planned = measure_for(run.profile, test).planned()
                run.recorder.marker(where, test, Kind.SKIPPED, failure, reason,
                                    not_run=planned)
                run.recorder.advance(planned)
