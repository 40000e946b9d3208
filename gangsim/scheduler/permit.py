"""The v1.35 alpha Permit barrier of GangScheduling (SEMANTICS §7), for ``--policy permit``.

A gang member that passed Filter is reserved on its node and waits at Permit until
``|assumed ∪ bound| >= minCount``; the group shares one deadline (300 s by default), created at
the first Wait and reused by later Waits. Waiting pods hold their resources. When the quorum is
reached every waiting pod is allowed and binds; at the deadline all of them are rejected,
unreserved and requeued as unschedulable (GangScheduling is their rejecting plugin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangsim.eventlog import EventReason
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.types import PodInfo, PodPhase
from gangsim.scheduler.plugins import gangscheduling, names
from gangsim.scheduler.cache.podgroup_state import PodGroupState

if TYPE_CHECKING:
    from gangsim.scheduler.scheduler import Scheduler


class PermitBarrier:
    def __init__(self, sched: "Scheduler") -> None:
        self.sched = sched
        self._wait_ms: dict[int, int] = {}  # uid -> the timeout its Wait was given
        self._timers: dict[str, object] = {}  # group key -> its deadline timer

    def _drop_deadline(self, st: PodGroupState) -> None:
        """Nobody waits any more: the deadline no longer matters (and must not keep the replay busy)."""
        if st.waiting:
            return
        timer = self._timers.pop(st.key, None)
        if timer is not None:
            timer.cancel()  # type: ignore[attr-defined]
        st.deadline_ms = None

    def permit(self, pod: PodInfo, row: int) -> Status | None:
        sched = self.sched
        st = sched.group_states.get(pod.group_key) if pod.group_key else None
        if st is None or not st.is_gang:
            return None
        pod.phase = PodPhase.WAITING  # Reserve: counted as assumed
        if st.scheduled_count() >= st.min_count:
            pod.phase = PodPhase.PENDING
            for waiting in list(st.waiting.values()):
                self._allow(st, waiting)
            self._drop_deadline(st)
            return None
        now = sched.cluster.now
        if st.deadline_ms is None or st.deadline_ms <= now:
            deadline = now + sched.config.permit_timeout_ms
            st.deadline_ms = deadline
            self._timers[st.key] = sched.cluster.set_timer(deadline, lambda st=st, d=deadline: self._timeout(st, d))
        st.waiting[pod.uid] = pod
        self._wait_ms[pod.uid] = st.deadline_ms - now
        e = sched.entity_of.get(pod.uid)
        if e is not None:
            sched.queue.done(e)  # in flight until allowed or rejected
            e.where = "waiting"
            sched.queue.entities[e.key] = e
        sched.cluster.reserved(pod, row)
        # Activate the group's other unscheduled pods (they move to activeQ at once)
        for member in st.members.values():
            if member.phase is PodPhase.PENDING and member.uid != pod.uid:
                me = sched.entity_of.get(member.uid)
                if me is not None:
                    sched.queue.activate(me)
        return Status(Code.WAIT, (), names.GANG_SCHEDULING)

    def _allow(self, st: PodGroupState, pod: PodInfo) -> None:
        from gangsim.scheduler.schedule_one import bind

        st.waiting.pop(pod.uid, None)
        self._wait_ms.pop(pod.uid, None)
        bind(self.sched, self.sched.entity_of.get(pod.uid), pod, pod.node_row)

    def _timeout(self, st: PodGroupState, deadline: int) -> None:
        if st.deadline_ms != deadline:
            return
        st.deadline_ms = None
        self._timers.pop(st.key, None)
        for pod in list(st.waiting.values()):
            self.reject(pod, gangscheduling.permit_timeout_message(self._wait_ms.get(pod.uid, 0)), plugin=names.GANG_SCHEDULING)
        self.sched.cluster.request_cycle()

    def reject(self, pod: PodInfo, message: str, *, plugin: str = names.DEFAULT_PREEMPTION) -> None:
        """Unreserve a waiting pod and requeue it (timeout, preemption or node loss)."""
        sched = self.sched
        st = sched.group_states.get(pod.group_key)
        if st is None or pod.uid not in st.waiting:
            return
        del st.waiting[pod.uid]
        self._wait_ms.pop(pod.uid, None)
        if plugin != names.GANG_SCHEDULING:
            self._drop_deadline(st)
        sched.snapshot.unassign(pod)
        pod.phase = PodPhase.PENDING
        sched.cluster.unreserved(pod)
        sched.log.event(sched.cluster.now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
        sched.cluster.scheduling_failed(pod, message)
        sched.bump()
        e = sched.entity_of.get(pod.uid)
        if e is not None:
            e.unschedulable_plugins = frozenset({plugin})
            e.unschedulable_count += 1
            e.consecutive_errors = 0
            # a preempted waiting pod goes back through backoff; a timed-out one is parked
            sched.queue.requeue_after_failure(e, to_backoff=plugin != names.GANG_SCHEDULING)
        from gangsim.scheduler.scheduler import EVENT_ASSIGNED_POD_DELETE

        sched.queue.move_for_plugins(EVENT_ASSIGNED_POD_DELETE)  # Unreserve frees the node

    def forget(self, pod: PodInfo) -> None:
        st = self.sched.group_states.get(pod.group_key)
        if st is not None:
            st.waiting.pop(pod.uid, None)
            self._drop_deadline(st)
        self._wait_ms.pop(pod.uid, None)
