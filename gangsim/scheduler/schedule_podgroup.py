"""The Workload (PodGroup) Scheduling Cycle of v1.37 (SEMANTICS §8), for ``--policy gang``.

One snapshot for the whole group: each queued pod runs Filter/Score in the group's pod order and
is assumed tentatively, so later pods see it; PlacementFeasible stops the pass early once
minCount cannot be met. Then one of the outcome paths of §8.5. Tentative placements are
reverted before submission; successful pods are then assumed for real and bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gangsim.api.objects import PreemptionPolicy
from gangsim.eventlog import EventReason
from gangsim.scheduler.cache.podgroup_state import PodGroupState
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, PodPhase, QueuedEntity, fit_error_message
from gangsim.scheduler.plugins import gangscheduling, names
from gangsim.scheduler.plugins.gangscheduling import Progress, placement_feasible

if TYPE_CHECKING:
    from gangsim.scheduler.scheduler import Scheduler

# KEP-5710 / v1.36 short forms (the newest hierarchy-aware forms are in VALIDATION_MESSAGES_NEWEST)
MSG_SCHEDULER_NAME = 'all pods in a single pod group should have the same .spec.schedulerName set, got: "{}" and "{}"'
MSG_PRIORITY = "all pods in a single pod group should match the priority of the pod group, got: {} and {}"
MSG_PREEMPTION_POLICY = "all pods in a pod group hierarchy should have the same preemption policy as the root pod group's preemption policy, got {} ({}) and {} ({})"
MSG_PREEMPTION_POLICY_PODS = "all pods in a pod group hierarchy should have the same preemption policy, got {} ({}) and {} ({})"
MSG_PROFILE = 'profile not found for scheduler name "{}"'
VALIDATION_MESSAGES_NEWEST = {
    "scheduler_name": 'all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "{}" ("{}") and "{}" ("{}")',
    "priority": 'all pods in a pod group hierarchy should have the same priority as the root pod group\'s priority, got {} ("{}") and {} ("{}")',
}

SCHEDULED, UNSCHEDULABLE, WAITING_ON_PREEMPTION, ERROR = "scheduled", "unschedulable", "waiting_on_preemption", "error"


@dataclass(slots=True)
class GroupResult:
    status: Status | None  # None = Success
    placed: list[tuple[PodInfo, int]] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)  # uid -> the pod's own failure message
    evaluated: int = 0
    preemption: object = None  # PartialSuccess: the preemption that won over binding


def pod_order(pods: list[PodInfo]) -> list[PodInfo]:
    """§8.2: priority desc, signature sub-group (by its first arrival), arrival, name."""
    first: dict[tuple, tuple[int, str]] = {}
    for p in sorted(pods, key=lambda p: (p.created_ms, p.name)):
        sig = p.signature or ("unsignable", p.uid)
        first.setdefault(sig, (p.created_ms, p.name))
    return sorted(pods, key=lambda p: (-p.priority, first[p.signature or ("unsignable", p.uid)], p.created_ms, p.name))


def validate(sched: "Scheduler", st: PodGroupState, pods: list[PodInfo]) -> str:
    """§1.5: scheduler name, priority and preemption policy across the group, before filtering."""
    group = st.group
    members = [m for m in st.members.values() if m.phase in (PodPhase.BOUND, PodPhase.WAITING)] + pods
    first = members[0]
    for p in members[1:]:
        if p.spec.scheduler_name != first.spec.scheduler_name:
            return MSG_SCHEDULER_NAME.format(first.spec.scheduler_name, p.spec.scheduler_name)
    group_priority = group.priority if group else 0
    for p in members:
        if p.priority != group_priority:
            return MSG_PRIORITY.format(p.priority, group_priority)
    group_policy = group.policy.preemption_policy if group else None
    if group_policy is not None:
        for p in members:
            if p.preemption_policy is not group_policy:
                return MSG_PREEMPTION_POLICY.format(p.preemption_policy.value, p.name, group_policy.value, st.key)
    else:
        for p in members[1:]:
            if p.preemption_policy is not first.preemption_policy:
                return MSG_PREEMPTION_POLICY_PODS.format(p.preemption_policy.value, p.name, first.preemption_policy.value, first.name)
    if first.spec.scheduler_name not in sched.frameworks:
        return MSG_PROFILE.format(first.spec.scheduler_name)
    return ""


def group_preemption_policy(st: PodGroupState, pods: list[PodInfo]) -> PreemptionPolicy:
    if st.group is not None and st.group.policy.preemption_policy is not None:
        return st.group.policy.preemption_policy
    return pods[0].preemption_policy if pods else PreemptionPolicy.PREEMPT_LOWER_PRIORITY


def run_algorithm(sched: "Scheduler", fw: Framework, st: PodGroupState, pods: list[PodInfo], *, scheduled0: int) -> GroupResult:
    """§8.3 on the live cache as the cycle's snapshot; tentative placements are reverted."""
    min_count = st.min_count
    progress = Progress(remaining=len(pods), scheduled=scheduled0)
    status = placement_feasible(min_count, progress)
    result = GroupResult(status)
    if status is not None and status.code == Code.UNSCHEDULABLE:
        return result
    if sched.config.opportunistic_batching:
        doomed = doomed_by_capacity(fw, pods, min_count, scheduled0)
        if doomed is not None:
            return doomed
    failed_signatures: dict[tuple, str] = {}
    snapshot = sched.snapshot
    try:
        for pod in pod_order(pods):
            result.evaluated += 1
            row = NO_NODE
            pruned = failed_signatures.get(pod.signature) if pod.signature else None
            if pruned is not None:
                result.failed[pod.uid] = pruned  # a twin already failed in this cycle
            else:
                res, diagnosis = fw.schedule_pod(CycleState(), pod)
                if res is None:
                    msg = fit_error_message(sched.nodes.num_nodes, diagnosis)
                    result.failed[pod.uid] = msg
                    if pod.signature:
                        failed_signatures[pod.signature] = msg
                else:
                    row = res.suggested_row
                    snapshot.assign(pod, row)
                    result.placed.append((pod, row))
            progress.remaining -= 1
            if row != NO_NODE:
                progress.scheduled += 1
            status = placement_feasible(min_count, progress)
            if status is not None and status.code == Code.UNSCHEDULABLE:
                break
    finally:
        for pod, _ in reversed(result.placed):
            snapshot.unassign(pod)
    result.status = _final_status(status, bool(result.placed))
    return result


def _final_status(status: Status | None, placed_any: bool) -> Status | None:
    """The cycle's verdict once the pass is over: Wait is Unschedulable, nothing placed is too."""
    if status is None:
        if not placed_any:
            return Status(Code.UNSCHEDULABLE, (gangscheduling.NO_PODS_SCHEDULABLE,), names.GANG_SCHEDULING)
        return None
    if status.code == Code.WAIT:
        return Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
    return status


def doomed_by_capacity(fw: Framework, pods: list[PodInfo], min_count: int, scheduled0: int) -> GroupResult | None:
    """The failed outcome of the pass, known without running it, or None.

    When every queued pod has one signature and the framework can count how many such pods the
    cluster still takes (``capacity_below``), the pass is fixed: the first
    ``capacity`` pods in pod order find a node, the next fails Filter and its twins are pruned.
    A failed pass reverts its tentative placements and shows only PlacementFeasible's counts, so
    it can be replayed on counts alone; a successful one must run for real (its placements
    depend on Score). Congested traces spend most cycles on such failures: a 32-node gang retried
    every minute while 10 nodes are free.
    """
    signature = pods[0].signature
    if not signature or any(p.signature != signature or p.nominated_row != NO_NODE for p in pods):
        return None
    # the pass reaches minCount exactly when the cluster takes minCount - scheduled0 more pods
    capacity = fw.capacity_below(pods[0], min_count - scheduled0)
    if capacity is None:
        return None
    # The pass on counts: pod i < capacity is placed; from pod ``capacity`` on every pod fails, and
    # PlacementFeasible stops the pass after pod i once scheduled + remaining < minCount, i.e. at
    # i = max(capacity, scheduled0 + capacity + len(pods) - minCount), if that is a pod.
    total = len(pods)
    stop_after = max(capacity, scheduled0 + capacity + total - min_count)
    evaluated = stop_after + 1 if stop_after < total else total
    placed = min(capacity, evaluated)
    progress = Progress(remaining=total - evaluated, scheduled=scheduled0 + placed)
    final = _final_status(placement_feasible(min_count, progress), placed > 0)
    if final is None:
        return None
    fw.account_full_scans(min(evaluated, capacity + 1))  # the ones that fit and the first that does not; its twins are pruned
    return GroupResult(final, evaluated=evaluated)


def schedule_podgroup(sched: "Scheduler", e: QueuedEntity) -> None:
    st = sched.group_state(e.group_key)
    now = sched.cluster.now
    pods = [p for p in e.pods if p.phase is PodPhase.PENDING and not p.terminating]
    if not pods:
        sched.queue.done(e)
        st.entity = None
        return
    e.attempts += 1
    st.attempts += 1
    if e.initial_attempt_ms is None:
        e.initial_attempt_ms = now
    e.last_attempt_generation = sched.generation
    sched.cluster.group_attempted(st.key)
    for p in pods:
        sched.cluster.attempted(p)
    started = time.perf_counter()

    message = validate(sched, st, pods)
    if message:
        finish(sched, e, st, pods, ERROR, Status(Code.ERROR, (message,), names.GANG_SCHEDULING), started)
        return
    fw = sched.frameworks[pods[0].spec.scheduler_name]
    scheduled0 = st.scheduled_count()
    result = run_algorithm(sched, fw, st, pods, scheduled0=scheduled0)
    status = result.status
    if status is None and partial_success_prefers_preemption(sched, fw, st, pods, result, scheduled0):
        return finish_waiting_on_preemption(sched, e, st, pods, result, started)
    if status is None:
        submit_success(sched, e, st, pods, result)
        finish(sched, e, st, pods, SCHEDULED, None, started, result=result)
        return
    outcome, status, nominations = sched.pod_group_post_filter(fw, st, pods, status)
    finish(sched, e, st, pods, outcome, status, started, result=result, nominations=nominations)


def partial_success_prefers_preemption(sched: "Scheduler", fw: Framework, st: PodGroupState, pods: list[PodInfo], result: GroupResult, scheduled0: int) -> bool:
    """KEP-4671 PartialSuccess (off by default, not in the shipped code): on a later cycle of a
    gang with some pods unschedulable, preemption that places more pods wins over binding."""
    if not sched.config.partial_success or scheduled0 == 0 or not result.failed or not st.is_gang:
        return False
    if not sched.policy.workload_aware_preemption:
        return False
    from gangsim.scheduler.preemption.podgroup import preempt_podgroup

    res = preempt_podgroup(sched, fw, st, pods)
    if res.status.code != Code.SUCCESS or len(res.placed) <= len(result.placed):
        return False
    result.preemption = res
    return True


def finish_waiting_on_preemption(sched: "Scheduler", e: QueuedEntity, st: PodGroupState, pods: list[PodInfo], result: GroupResult, started: float) -> None:
    from gangsim.scheduler.schedule_one import actuate_group_preemption

    res = result.preemption
    if res.victims:
        actuate_group_preemption(sched, st, res)
    status = Status(Code.UNSCHEDULABLE, ("PartialSuccess: preempting to place more pods of the group",), names.GANG_SCHEDULING)
    finish(sched, e, st, pods, WAITING_ON_PREEMPTION, status, started, result=result, nominations=res.nominations)


def submit_success(sched: "Scheduler", e: QueuedEntity, st: PodGroupState, pods: list[PodInfo], result: GroupResult) -> None:
    """§8.5 path 1: bind every pod that found a node; the others fail on their own status."""
    from gangsim.scheduler.schedule_one import bind

    for pod, row in result.placed:
        sched.snapshot.assign(pod, row)
        e.pods.remove(pod)
        bind(sched, None, pod, row)


def finish(
    sched: "Scheduler",
    e: QueuedEntity,
    st: PodGroupState,
    pods: list[PodInfo],
    outcome: str,
    status: Status | None,
    started: float,
    *,
    result: GroupResult | None = None,
    nominations: dict[int, int] | None = None,
) -> None:
    """Failure handling of every pod still queued, the condition, metrics and the requeue."""
    log = sched.log
    now = sched.cluster.now
    log.podgroup_attempts[outcome] = log.podgroup_attempts.get(outcome, 0) + 1
    log.timings.setdefault("podgroup_algorithm_s", []).append(time.perf_counter() - started)
    group_message = status.message if status is not None else ""
    bound_any = outcome == SCHEDULED
    for pod in list(e.pods):
        if pod.phase is not PodPhase.PENDING:
            continue
        if outcome == SCHEDULED and result is not None:
            message = result.failed.get(pod.uid, group_message or gangscheduling.NO_PODS_SCHEDULABLE)
        else:
            message = group_message
        target = nominations.get(pod.uid, NO_NODE) if nominations is not None else NO_NODE
        if sched.nominator.nominate(pod, target):
            sched.bump()
        log.event(now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
        sched.cluster.scheduling_failed(pod, message)
    set_condition(sched, st, outcome, group_message)
    sched.cluster.attempt_finished(st.key, bound=bound_any)
    if not [p for p in e.pods if p.phase is PodPhase.PENDING]:
        sched.queue.done(e)
        if st.entity is e:
            st.entity = None
        return
    # AddAttemptedPodGroupIfNeeded: straight back to backoffQ/activeQ, never the unschedulable pool
    if outcome == ERROR:
        e.consecutive_errors += 1
    else:
        e.consecutive_errors = 0
        e.unschedulable_count += 1
    e.unschedulable_plugins = frozenset({names.GANG_SCHEDULING})
    if outcome == SCHEDULED:
        # members were bound: the leftovers' next cycle counts them and is a different attempt
        e.last_attempt_generation = -1
    old_timestamp = e.timestamp_ms
    sched.queue.requeue_after_failure(e, to_backoff=True)
    if sched.config.requeue_leftovers_with_old_timestamp and outcome == SCHEDULED:
        e.timestamp_ms = old_timestamp  # KEP variant: leftovers keep their place in the queue
        sched.queue.reposition(e)


def set_condition(sched: "Scheduler", st: PodGroupState, outcome: str, message: str) -> None:
    """PodGroupInitiallyScheduled: True is terminal; events on every change (§1.4)."""
    if outcome == SCHEDULED:
        cond = ("True", "Scheduled", "")
    elif outcome == ERROR:
        cond = ("False", "SchedulerError", message)
    else:
        cond = ("False", "Unschedulable", message)
    if st.initially_scheduled and cond[0] != "True":
        return
    if cond == st.condition:
        return
    st.condition = cond
    sched.log.event(sched.cluster.now, "PodGroup", st.key, "", cond[1], message)
