"""The pod-by-pod scheduling cycle (SEMANTICS §3): PreFilter → Filter → PostFilter | Score →
Reserve → Permit → Bind. Binding is synchronous and takes no simulated time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangsim.eventlog import EventReason
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.types import Diagnosis, PodInfo, PodPhase, QueuedEntity, fit_error_message

if TYPE_CHECKING:
    from gangsim.scheduler.scheduler import Scheduler

PREEMPTING_MESSAGE = "{}: preempting to accommodate a higher priority pod"


def schedule_one(sched: "Scheduler", e: QueuedEntity) -> None:
    pod = e.pods[0]
    if pod.phase is not PodPhase.PENDING:
        sched.queue.done(e)
        return
    fw = sched.framework_for(pod)
    if fw is None:
        sched.queue.done(e)
        return
    e.attempts += 1
    if e.initial_attempt_ms is None:
        e.initial_attempt_ms = sched.cluster.now
    e.last_attempt_generation = sched.generation
    sched.cluster.attempted(pod)
    state = CycleState()
    result, diagnosis = fw.schedule_pod(state, pod)
    if result is None:
        handle_fit_error(sched, e, pod, diagnosis)
        return
    assume_and_bind(sched, e, pod, result.suggested_row)


def handle_fit_error(sched: "Scheduler", e: QueuedEntity, pod: PodInfo, diagnosis: Diagnosis) -> None:
    """No node fits: PostFilter (DefaultPreemption), then the failure handler."""
    num_nodes = sched.nodes.num_nodes
    nominated: int | None = None  # None = leave the nomination as it is
    evaluator = sched.evaluators.get(pod.spec.scheduler_name)
    if evaluator is not None and num_nodes > 0 and run_pod_preemption_allowed(sched, pod):
        res = evaluator.preempt(pod, diagnosis)
        if res.message:
            diagnosis.post_filter_msg = "preemption: " + res.message
        nominated = res.nominated_row
        if res.success and res.candidate is not None:
            actuate_preemption(sched, pod, res.candidate.row, res.candidate.victims, by_group=False)
    elif evaluator is not None and num_nodes > 0:
        diagnosis.post_filter_msg = "preemption: " + pod_preemption_refusal(sched, pod)
    message = fit_error_message(num_nodes, diagnosis)
    if nominated is not None and sched.nominator.nominate(pod, nominated):
        sched.bump()
    sched.log.event(sched.cluster.now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
    sched.cluster.scheduling_failed(pod, message)
    e.unschedulable_plugins = frozenset(diagnosis.unschedulable_plugins)
    sched.requeue_failed(e, Status(Code.UNSCHEDULABLE, (message,)))


def run_pod_preemption_allowed(sched: "Scheduler", pod: PodInfo) -> bool:
    """Under ``gang`` a pod of a PodGroup never preempts pod-by-pod (WAP handles groups, §5 step 0)."""
    return not (sched.policy.workload_aware_preemption and pod.group_key and sched.group_exists(pod.group_key))


def pod_preemption_refusal(sched: "Scheduler", pod: PodInfo) -> str:
    return "not eligible due to workload aware preemption enabled"


def actuate_preemption(sched: "Scheduler", preemptor: PodInfo, row: int, victims: list[PodInfo], *, by_group: bool, preemptor_name: str = "", preemptor_priority: int | None = None) -> None:
    """§5 step 6: DisruptionTarget + delete each victim (a victim waiting at Permit is rejected
    instead), then clear lower-priority nominations to the node."""
    name = preemptor_name or preemptor.key
    prio = preemptor.priority if preemptor_priority is None else preemptor_priority
    message = (
        f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod group"
        if by_group
        else PREEMPTING_MESSAGE.format(preemptor.spec.scheduler_name)
    )
    fresh = [v for v in victims if not v.terminating]  # never counted twice (INTERFACE rule 9)
    sched.preempt_victims(fresh, name, prio, message)
    for q in sched.nominator.pods_for_row(row):
        if q.priority < prio and q.uid != preemptor.uid:
            sched.nominator.clear(q)
    sched.bump()


def assume_and_bind(sched: "Scheduler", e: QueuedEntity, pod: PodInfo, row: int) -> None:
    sched.snapshot.assign(pod, row)
    permit = sched.run_permit(pod, row)
    if permit is not None:
        return  # waiting at Permit: resources stay reserved; the entity is parked in flight
    bind(sched, e, pod, row)


def bind(sched: "Scheduler", e: QueuedEntity | None, pod: PodInfo, row: int) -> None:
    """The binding cycle: the API server clears the nomination; the kubelet starts the pod."""
    pod.phase = PodPhase.BOUND
    pod.start_ms = sched.cluster.now
    sched.nominator.clear(pod)
    if e is not None:
        sched.queue.done(e)
    sched.entity_of.pop(pod.uid, None)
    sched.note_bind(pod)
    sched.log.event(
        sched.cluster.now,
        "Pod",
        pod.key,
        sched.nodes.names[row],
        EventReason.SCHEDULED,
        f"Successfully assigned {pod.key} to {sched.nodes.names[row]}",
    )
    sched.cluster.bind(pod, row)
    sched.on_assigned(pod)


def actuate_group_preemption(sched: "Scheduler", st, res) -> None:
    """§11.2 step 8: evict the victims of a PodGroup preemptor; DisruptionTarget on victim groups."""
    group = st.group
    priority = group.priority if group else 0
    scheduler_name = next((p.spec.scheduler_name for p in st.members.values()), "default-scheduler")
    message = f"{scheduler_name}: preempting to accommodate a higher priority podgroup"
    victims = [p for u in res.victims for p in u.pods if not p.terminating]
    sched.preempt_victims(victims, st.key, priority, message, preemptor_kind="podgroup")
    for key in sorted({u.group_key for u in res.victims if u.group_key}):
        sched.log.event(sched.cluster.now, "PodGroup", key, "", EventReason.DISRUPTION_TARGET, f"DisruptionTarget: preempted by podgroup {st.key}")
    rows = sorted({row for _, row in res.placed})
    for row in rows:
        for q in sched.nominator.pods_for_row(row):
            if q.priority < priority and q.group_key != st.key:
                sched.nominator.clear(q)
    sched.bump()
