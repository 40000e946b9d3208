"""SchedulingGates: a pod with ``spec.schedulingGates`` waits at PreEnqueue until they are removed."""

from __future__ import annotations

from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import PreEnqueuePlugin, Status
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names

WAITING_FOR_GATES = "waiting for scheduling gates: [{}]"


class SchedulingGates(PreEnqueuePlugin):
    NAME = names.SCHEDULING_GATES
    PRE_ENQUEUE_SPEC_ONLY = True  # spec.schedulingGates only

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        pass  # stateless

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        return Status.unresolvable(WAITING_FOR_GATES.format(" ".join(gates)), plugin=self.NAME)
