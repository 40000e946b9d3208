"""Reserve → Permit → Bind (SEMANTICS §3 steps 6–8, §7), and the pods waiting at Permit
(kube's ``waitingPodsMap``). Binding is synchronous and takes no simulated time: the API server
clears the nomination, the kubelet starts the pod."""

from __future__ import annotations

from dataclasses import dataclass

from gangsim.eventlog import EventReason
from gangsim.scheduler.cycle_handle import SchedulerHandle
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import PodInfo, PodPhase, QueuedEntity

# enum members the per-pod paths read, as module names: read through its class, a member costs
# ~100 ns on Python 3.11 (EnumType's __getattr__ hook), a module name ~10 ns
WAITING = PodPhase.WAITING
PENDING = PodPhase.PENDING
BOUND = PodPhase.BOUND
WAIT = Code.WAIT
ASSIGNED_POD_ADD = ClusterEvent.ASSIGNED_POD_ADD
ASSIGNED_POD_DELETE = ClusterEvent.ASSIGNED_POD_DELETE


def assume_and_bind(h: SchedulerHandle, fw: Framework, state: CycleState, e: QueuedEntity | None, pod: PodInfo, row: int) -> Status | None:
    """Assume the pod on ``row`` (Reserve), run Permit, bind or wait. Returns a rejection
    (Reserve or Permit said no: the pod is unassumed again), else None."""
    h.snapshot.assign(pod, row)
    pod.phase = WAITING  # assumed: counted as scheduled by its group
    if not fw.reserve_plugins and not fw.permit_plugins:  # most profiles: nothing to wait for
        bind(h, e, pod, row)
        return None
    status = fw.run_reserve(state, pod, row)
    if status is None:
        status, timeout_ms = fw.run_permit(state, pod, row)
        if status is None:
            bind(h, e, pod, row)
            return None
        if status.code == WAIT:
            h.waiting_pods.add(fw, pod, row, timeout_ms)
            return None
    fw.run_unreserve(state, pod, row)
    h.snapshot.unassign(pod)
    pod.phase = PENDING
    return status


def bind(h: SchedulerHandle, e: QueuedEntity | None, pod: PodInfo, row: int) -> None:
    """The binding cycle: the API server clears the nomination; the kubelet starts the pod."""
    now = h.cluster.now
    pod.phase = BOUND
    pod.start_ms = now
    h.nominator.clear(pod)
    if e is not None:
        h.queue.done(e)
    h.note_bind(pod)
    node = h.snapshot.nodes.names[row]
    h.log.assigned(now, pod.key, node)  # Scheduled: "Successfully assigned <pod> to <node>"
    h.cluster.bind(pod, node)
    h.move_for(ASSIGNED_POD_ADD)


@dataclass(slots=True, eq=False)
class _Waiting:
    fw: Framework
    row: int
    timeout_ms: int


class WaitingPodsMap:
    """Pods reserved on a node and waiting at Permit (implements ``framework.handle.WaitingPods``).
    A Permit plugin allows them (they bind) or rejects them (they are unreserved and requeued);
    a waiting pod that is deleted is forgotten (its plugins unreserve it)."""

    def __init__(self, h: SchedulerHandle) -> None:
        self.h = h
        self._pods: dict[int, _Waiting] = {}

    def __contains__(self, pod: PodInfo) -> bool:
        return pod.uid in self._pods

    def add(self, fw: Framework, pod: PodInfo, row: int, timeout_ms: int) -> None:
        h = self.h
        self._pods[pod.uid] = _Waiting(fw, row, timeout_ms)
        e = h.entity_of(pod)
        if e is not None:
            h.queue.wait(e)  # in flight until allowed or rejected
        h.cluster.reserved(pod, h.snapshot.nodes.names[row])

    def allow(self, pod: PodInfo) -> None:
        w = self._pods.pop(pod.uid, None)
        if w is not None:
            bind(self.h, self.h.entity_of(pod), pod, w.row)

    def reject(self, pod: PodInfo, message: str, *, plugin: str, to_backoff: bool) -> None:
        """Unreserve a waiting pod and requeue it (timeout, preemption or node loss)."""
        w = self._pods.pop(pod.uid, None)
        if w is None:
            return
        h = self.h
        w.fw.run_unreserve(CycleState(), pod, w.row)
        h.snapshot.unassign(pod)
        pod.phase = PENDING
        h.cluster.unreserved(pod)
        h.log.event(h.cluster.now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
        h.cluster.scheduling_failed(pod, message)
        h.bump()
        e = h.entity_of(pod)
        if e is not None:
            e.unschedulable_plugins = frozenset({plugin}) if plugin else frozenset()
            e.unschedulable_count += 1
            e.consecutive_errors = 0
            # a timed-out pod is parked until its plugin's events; others go through backoffQ
            h.queue.requeue_after_failure(e, to_backoff=to_backoff)
        h.move_for(ASSIGNED_POD_DELETE)  # Unreserve frees the node

    def forget(self, pod: PodInfo) -> None:
        """A waiting pod was deleted: its plugins unreserve it; the caller frees the node."""
        w = self._pods.pop(pod.uid, None)
        if w is not None:
            w.fw.run_unreserve(CycleState(), pod, w.row)
