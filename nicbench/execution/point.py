"""The apply and restore phases of one tuning point on one pair.

:meth:`PointTuning.apply` journals each original and sets the profile's and the point's
sysctls, the OS settings beyond them (Windows registry with its reboot, firewall), and the
MTU on both ends, then proves the path carries the MTU in both directions.
:meth:`PointTuning.restore` puts back this pair's hosts when the point ends, so each point
starts from the hosts' own settings. A point the hosts refuse is stored as skipped for
every pending test, with the kernel's words (:meth:`PointTuning.skip`): the run goes on,
as the reviews did.
"""

from __future__ import annotations


from nicbench.config.profile import Point, TestSpec
from nicbench.errors import TuningError
from nicbench.execution import events as ev
from nicbench.execution.context import RunContext
from nicbench.execution.sides import PairSides
from nicbench.execution.recorder import Where
from nicbench.results.records import Failure, Kind


class PointTuning:
    def __init__(self, run: RunContext, sides: PairSides):
        self.run = run
        self.sides = sides

    def apply(self, point: Point, tests: list[TestSpec]) -> None:
        tuning = self.run.tuning
        (receiver, r_if, r_addr), (sender, s_if, s_addr) = self.sides.ends
        for name, value in {**self.run.profile.sysctl, **point.sysctl}.items():
            tuning.set_sysctl(receiver, name, str(value))
            tuning.set_sysctl(sender, name, str(value))
        self.run.os_settings.apply(self.sides, point, tests)   # Windows: registry, firewall
        tuning.set_mtu(receiver, r_if, point.ip_mtu)
        tuning.set_mtu(sender, s_if, point.ip_mtu)
        sender.verify_path_mtu(s_if, r_addr, point.ip_mtu)
        receiver.verify_path_mtu(r_if, s_addr, point.ip_mtu)

    def skip(self, where: Where, pending: list[TestSpec], exc: TuningError) -> None:
        failure = Failure.of_tuning(exc.kind)
        reason = f"{exc.host}: {exc.setting} {exc.value}: {exc.kernel_message}"
        self.run.tell(ev.PointSkipped(pair=where.pair, point=where.point.name,
                                      failure=failure, reason=reason))
        recorder = self.run.recorder
        for test in pending:
            recorder.marker(where, test, Kind.SKIPPED, failure, reason,
                            not_run=self.run.profile.planned_trials(test),
                            kernel_message=exc.kernel_message, extra={"host": exc.host})
            recorder.advance(self.run.profile.planned_trials(test))

    def restore(self, next_point: Point | None = None) -> None:
        # Each point starts from the hosts' own settings, so a refused point cannot leave
        # the next one on a half-applied state; only Windows registry values stay for a
        # next point that sets them too (each change costs a reboot). What cannot be put
        # back now (a host gone) stays in the journal for the end of the run, and for
        # `nicbench restore`. Only this pair's hosts: other pairs may be in the middle of
        # their own points.
        self.run.tuning.restore(hosts=self.sides.host_names,
                                only=self.run.os_settings.restore_filter(next_point))
        self.run.tuning.forget_restored()
