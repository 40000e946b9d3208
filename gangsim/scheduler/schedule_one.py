"""The pod-by-pod scheduling cycle (SEMANTICS §3): PreFilter → Filter → PostFilter | Score →
Reserve → Permit → Bind (kube's ``schedule_one.go``)."""

from __future__ import annotations

from gangsim.eventlog import EventReason
from gangsim.scheduler.binding import assume_and_bind
from gangsim.scheduler.cycle_handle import SchedulerHandle
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import Diagnosis, PodInfo, PodPhase, QueuedEntity, fit_error_message


def schedule_one(h: SchedulerHandle, e: QueuedEntity) -> None:
    pod = e.pods[0]
    fw = h.framework_for(pod.spec.scheduler_name) if pod.phase is PodPhase.PENDING else None
    if fw is None:
        h.queue.done(e)
        return
    e.attempts += 1
    if e.initial_attempt_ms is None:
        e.initial_attempt_ms = h.cluster.now
    e.last_attempt_generation = h.generation
    h.cluster.attempted(pod)
    state = CycleState()
    rec = fw.recorder
    if rec is not None:  # gangsim explain: a real attempt
        rec.active = True
    try:
        result, diagnosis = fw.schedule_pod(state, pod, h.generation)
    finally:
        if rec is not None:
            rec.active = False
    if result is None:
        handle_fit_error(h, fw, state, e, pod, diagnosis)
        return
    rejected = assume_and_bind(h, fw, state, e, pod, result.suggested_row)
    if rejected is not None:
        fail(h, e, pod, rejected.message, rejected, frozenset({rejected.plugin}))


def handle_fit_error(h: SchedulerHandle, fw: Framework, state: CycleState, e: QueuedEntity, pod: PodInfo, diagnosis: Diagnosis) -> None:
    """No node fits: PostFilter (DefaultPreemption), then the failure handler."""
    num_nodes = h.snapshot.nodes.num_nodes
    nominated: int | None = None  # None = leave the nomination as it is
    if num_nodes > 0:
        res = fw.run_post_filter(state, pod, diagnosis)
        if res is not None:
            diagnosis.post_filter_msg = res.message
            nominated = res.nominated_row
    memo = fw.repeated_failures  # fast path: a replayed diagnosis renders the same message
    message = fit_error_message(num_nodes, diagnosis) if memo is None else memo.fit_error_message(num_nodes, diagnosis)
    if nominated is not None and h.nominator.nominate(pod, nominated):
        h.bump()
    fail(h, e, pod, message, Status(Code.UNSCHEDULABLE, (message,)), frozenset(diagnosis.unschedulable_plugins))


def fail(h: SchedulerHandle, e: QueuedEntity, pod: PodInfo, message: str, status: Status, plugins: frozenset[str]) -> None:
    """``handleSchedulingFailure``: the FailedScheduling event, then the queue (§4.5)."""
    h.log.event(h.cluster.now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
    h.cluster.scheduling_failed(pod, message)
    e.unschedulable_plugins = plugins
    if status.code == Code.ERROR:
        e.consecutive_errors += 1
    else:
        e.consecutive_errors = 0
        e.unschedulable_count += 1
    h.queue.requeue_after_failure(e, to_backoff=False)
