"""The Workload (PodGroup) Scheduling Cycle of v1.37 (SEMANTICS §8), for ``--policy gang``
(kube's ``schedule_one_podgroup.go``, ``algorithm_podgroup.go``).

One snapshot for the whole group: each queued pod runs Filter/Score in the group's pod order and
is assumed tentatively, so later pods see it; PlacementFeasible stops the pass early once
minCount cannot be met. Then one of the outcome paths of §8.5. Tentative placements are
reverted before submission; successful pods are then assumed for real and bound.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter, countOf

from gangsim.errors import go_quote
from gangsim.eventlog import EventReason
from gangsim.scheduler.binding import bind
from gangsim.scheduler.cycle_handle import SchedulerHandle
from gangsim.scheduler.fastpath import attempts, bulk, counted, doomed
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.schedule_placement import run_placement_algorithm
from gangsim.scheduler.framework.types import (
    NO_NODE,
    Condition,
    ConditionStatus,
    CycleOutcome,
    GroupResult,
    PodGroupState,
    PodInfo,
    PodPhase,
    QueuedEntity,
    fit_error_message,
    none_nominated,
)

# ``Scheduler.validatePodGroup`` (schedule_one_podgroup.go, the CompositePodGroup-era code), operands
# in upstream's order: the offending pod's value and name first, then the reference (the first
# queued pod, or the root PodGroup's value and key). Go's %q quotes the names; gangsim's group has
# no hierarchy, so the root pod group is the group itself (its key printed as "<namespace>/<name>").
MSG_SCHEDULER_NAME = 'all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: {} ({}) and {} ({})'
MSG_PRIORITY = "all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got {} ({}) and {} ({})"
MSG_PREEMPTION_POLICY = "all pods in a pod group hierarchy should have the same preemption policy as the root pod group's preemption policy, got {} ({}) and {} ({})"
MSG_PREEMPTION_POLICY_PODS = "all pods in a pod group hierarchy should have the same preemption policy, got {} ({}) and {} ({})"
MSG_PROFILE = 'profile not found for scheduler name "{}"'
NO_PODS_SCHEDULABLE = "no pods were schedulable"
PARTIAL_SUCCESS = "PartialSuccess: preempting to place more pods of the group"
ALGORITHM_S = "podgroup_algorithm_s"  # ``EventLog.timings``: the algorithm's wall time per attempt

# A stuck gang of 32–256 pods is retried again and again: where it measured faster (counting
# phases, looking for a terminating pod), the per-pod reads of an attempt go through ``map`` and
# ``countOf``.
_PHASE, _TERMINATING = attrgetter("phase"), attrgetter("terminating")
_SPEC, _UID, _AFFINITY = attrgetter("spec"), attrgetter("uid"), attrgetter("spec.affinity")
_SIGNATURE = attrgetter("signature")


def pending_pods(pods: list[PodInfo]) -> list[PodInfo]:
    """``[p for p in pods if p.phase is PodPhase.PENDING]``."""
    if countOf(map(_PHASE, pods), PodPhase.PENDING) == len(pods):
        return list(pods)
    return [p for p in pods if p.phase is PodPhase.PENDING]


def pod_order(pods: list[PodInfo]) -> list[PodInfo]:
    """§8.2: priority desc, signature sub-group (by its first arrival), arrival, name."""
    first: dict[tuple, tuple[int, str]] = {}
    for p in sorted(pods, key=lambda p: (p.created_ms, p.name)):
        sig = p.signature or ("unsignable", p.uid)
        first.setdefault(sig, (p.created_ms, p.name))
    return sorted(pods, key=lambda p: (-p.priority, first[p.signature or ("unsignable", p.uid)], p.created_ms, p.name))


def group_pod_order(fw: Framework, st: PodGroupState, pods: list[PodInfo]) -> list[PodInfo]:
    """``pod_order`` of the group's queued pods; with ``FastPath.failure_streaks`` kept for the
    group while they are the same pods with the same specs (an update replaces the spec, and the
    order reads nothing else that can change), as a stuck gang retries."""
    if not fw.fast_path.failure_streaks:
        return pod_order(pods)
    key = (tuple(pods), tuple(map(_SPEC, pods)))
    memo = st.order_memo
    if memo is not None and memo[0] == key:
        return memo[1]
    ordered = pod_order(pods)
    st.order_memo = (key, ordered)
    return ordered


def validate(h: SchedulerHandle, st: PodGroupState, pods: list[PodInfo], scheduled: int | None = None) -> str:
    """§1.5 (``validatePodGroup``): each pod, queued ones first then the scheduled ones, must have
    the first queued pod's scheduler name, the group's priority and its preemption policy (the
    first queued pod's when the group sets none); then the profile must exist. ``scheduled``:
    ``st.scheduled_count()`` when the caller knows it."""
    group = st.group
    first = pods[0]
    group_priority = group.priority if group else 0
    group_policy = group.policy.preemption_policy if group else None
    q = go_quote
    # the checks read only a pod's spec (a Job's pods share their template's): a pod with the
    # spec object the pod before it passed with passes too, and is not checked again
    passed = None
    everyone = pods + st.scheduled_members(scheduled) if scheduled is None or scheduled else pods
    if countOf(map(id, map(_SPEC, everyone)), id(first.spec)) == len(everyone):  # (``first`` leads ``everyone``)
        everyone = everyone[:1]  # one spec object for all (a stuck Job's gang): the others are skipped below
    for p in everyone:
        if p.spec is passed:
            continue
        if p.spec.scheduler_name != first.spec.scheduler_name:
            return MSG_SCHEDULER_NAME.format(q(p.spec.scheduler_name), q(p.name), q(first.spec.scheduler_name), q(first.name))
        if p.priority != group_priority:
            return MSG_PRIORITY.format(p.priority, q(p.name), group_priority, q(st.key))
        if group_policy is not None:
            if p.preemption_policy is not group_policy:
                return MSG_PREEMPTION_POLICY.format(p.preemption_policy.value, q(p.name), group_policy.value, q(st.key))
        elif p.preemption_policy is not first.preemption_policy:
            return MSG_PREEMPTION_POLICY_PODS.format(p.preemption_policy.value, q(p.name), first.preemption_policy.value, q(first.name))
        passed = p.spec
    if h.framework_for(first.spec.scheduler_name) is None:
        return MSG_PROFILE.format(first.spec.scheduler_name)
    return ""


def wait_as_unschedulable(status: Status | None) -> Status | None:
    """``podGroupPotentiallyFeasible``: a Wait left at the end of the pass is Unschedulable."""
    if status is not None and status.code == Code.WAIT:
        return Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
    return status


def nodes_in_placement(fw: Framework) -> int:
    """The N of a FitError's "0/N nodes are available": ``NumAllNodes`` is the snapshot's
    ``NumNodesInPlacement()`` (pkg/scheduler/schedule_one.go ``schedulePod``;
    backend/cache/snapshot.go ``NumNodesInPlacement``), the placement's nodes while a KEP-5732
    placement is assumed, else every node: the rows a pod's search runs over."""
    return len(doomed.search_rows(fw))


def doomed_fit_error(fw: Framework, placed: list[PodInfo], fill: tuple[tuple[int, int], ...], pod: PodInfo) -> str:
    """The FitError of the first pod a doomed pass fails, as the pass pod by pod would print it:
    the placed pods fill the feasible rows (``fill``), then Filter runs on every node of the
    search (the placement's under KEP-5732; they all fail, so the rotation does not matter). The
    search state and its counters are left alone.

    A stuck gang repeats the same doomed pass on an unchanged cluster: the text is kept for the
    pod's signature, ``fill``, the node table's generation after the pass (any change to any
    node bumps it) and the placement, and reused while those are the same."""
    snapshot = fw.snapshot
    nodes = snapshot.nodes
    key = (pod.signature, fill, nodes.generation, doomed.search_key(fw))
    if fw.doomed_fit_error is not None and fw.doomed_fit_error[0] == key:
        return fw.doomed_fit_error[1]
    assigned: list[PodInfo] = []
    rows_computed = fw.filter_rows_computed
    with doomed.put_back(fw):  # the kept plans of this search still hold after the fill is taken back
        try:
            it = iter(placed)
            for row, count in fill:
                for _ in range(count):
                    p = next(it)
                    snapshot.assign(p, row)
                    assigned.append(p)
            order = doomed.search_rows(fw)  # the placement's rows under KEP-5732
            state = CycleState()
            codes, plugin = fw.run_filters(state, pod, order, nominated=False)
            message = fit_error_message(len(order), fw.diagnose(state, pod, order, codes, plugin))  # NumNodesInPlacement
        finally:
            for p in reversed(assigned):
                snapshot.unassign(p)
            fw.filter_rows_computed = rows_computed
    fw.doomed_fit_error = ((*key[:2], nodes.generation, key[3]), message)
    return message


def run_algorithm(fw: Framework, st: PodGroupState, pods: list[PodInfo], scheduled0: int | None = None, *, keep: Callable[[], bool] | None = None) -> GroupResult:
    """``RunRootSchedulingAlgorithm``: the placement loop when the profile has placement plugins
    (TopologyAwareWorkloadScheduling), else the default pass; a success that placed no pod is
    Unschedulable "no pods were schedulable". ``scheduled0``: ``st.scheduled_count()`` when the
    caller knows it; ``keep``: see ``default_pass``."""
    if fw.placement_generate_plugins:
        result = run_placement_algorithm(fw, st, pods, default_pass)
    else:
        result = default_pass(fw, st, pods, scheduled0=scheduled0, keep=keep)
    if result.status is None and not result.placed:
        result.status = Status(Code.UNSCHEDULABLE, (NO_PODS_SCHEDULABLE,))
    return result


def default_pass(fw: Framework, st: PodGroupState, pods: list[PodInfo], *, messages: bool = True, scheduled0: int | None = None, keep: Callable[[], bool] | None = None) -> GroupResult:
    """§8.3 (``podGroupSchedulingDefaultAlgorithm``) on the live cache as the cycle's snapshot,
    over the nodes of ``fw.placement`` when one is set; tentative placements are reverted.
    ``messages=False``: the caller drops the per-pod FitErrors of an infeasible result (a
    placement evaluated after the first), so a pass decided from counts does not render them.
    ``scheduled0``: ``st.scheduled_count()`` when the caller knows it.
    ``keep`` (fast path ``FastPath.keep_placements``, the caller binds a success at once): asked
    only after a pass pod by pod that placed pods and succeeded (a doomed or counted pass never
    asks: a stuck gang's retries skip it), and when it says True that pass keeps its tentative
    placements assumed (``result.kept``) instead of reverting them for the caller to assume the
    same pods on the same rows again."""
    if scheduled0 is None:
        scheduled0 = st.scheduled_count()
    status = fw.run_placement_feasible(st, scheduled0, len(pods))
    result = GroupResult(status)
    if status is not None and status.code == Code.UNSCHEDULABLE:
        return result
    fast = fw.fast_path
    if not pods:  # a CompositePodGroup's child with no pod in this cycle: the shortcuts need one
        result.status = wait_as_unschedulable(status)
        return result
    if fast.doomed_pass and (fw.placement is None or fast.placement_passes):  # fast path: a doomed single-shape pass decided from counts
        plan = doomed.plan(fw, pods, st.min_count, scheduled0)
        if plan is None and fast.doomed_prefix and fw.placement is None:
            plan = doomed_prefix(fw, st, pods, scheduled0)
        if plan is not None:
            verdict = wait_as_unschedulable(fw.run_placement_feasible(st, scheduled0 + plan.placed, len(pods) - plan.evaluated))
            if verdict is not None or plan.placed == 0:
                doomed.account(fw, plan)
                fw.doomed_passes += 1
                result = GroupResult(verdict, evaluated=plan.evaluated, plan=plan)
                if plan.evaluated > plan.placed and (messages or verdict is None):  # the first pod that fails and its pruned twins
                    ordered = group_pod_order(fw, st, pods)
                    message = doomed_fit_error(fw, ordered[: plan.placed], plan.fill, ordered[plan.placed])
                    result.failed = {p.uid: message for p in ordered[plan.placed : plan.evaluated]}
                return result
    if fast.doomed_pass and (fast.placement_passes if fw.placement is not None else fast.counted_pass):  # fast path: a pass where every pod fits, replayed
        layout = counted.layout(fw, pods, big=fast.counted_windows)
        if layout is not None:
            fw.counted_passes += 1
            return counted_pass(fw, st, pods, layout, scheduled0)
    failed_signatures: dict[tuple, str] = {}
    snapshot = fw.snapshot
    num_nodes = nodes_in_placement(fw)
    scheduled, remaining = scheduled0, len(pods)
    try:
        for pod in group_pod_order(fw, st, pods):
            result.evaluated += 1
            row = NO_NODE
            pruned = failed_signatures.get(pod.signature) if pod.signature else None
            if pruned is not None:
                result.failed[pod.uid] = pruned  # a twin already failed in this cycle
            else:
                res, diagnosis = fw.schedule_pod(CycleState(), pod)
                if res is None:
                    msg = fit_error_message(num_nodes, diagnosis)
                    result.failed[pod.uid] = msg
                    if pod.signature:
                        failed_signatures[pod.signature] = msg
                else:
                    row = res.suggested_row
                    snapshot.assign(pod, row)
                    result.placed.append((pod, row))
            remaining -= 1
            if row != NO_NODE:
                scheduled += 1
            status = fw.run_placement_feasible(st, scheduled, remaining)
            if status is not None and status.code == Code.UNSCHEDULABLE:
                break
        result.status = wait_as_unschedulable(status)
        result.kept = result.status is None and bool(result.placed) and keep is not None and keep()
    finally:
        if not result.kept:
            for pod, _ in reversed(result.placed):
                snapshot.unassign(pod)
    return result


def doomed_prefix(fw: Framework, st: PodGroupState, pods: list[PodInfo], scheduled0: int) -> doomed.DoomedPass | None:
    """Fast path (``FastPath.doomed_prefix``): the doomed plan of a pass over pods of several
    shapes, when the group needs every one of them (minCount = ``scheduled0`` + its pods) and the
    pods of its first shape in pod order are doomed on their own. Those come first in pod order
    (one priority, ``validate``; a shape's sub-group sorts by its first arrival, and no two
    shapes share that), so the pass pod by pod places what they can, fails the next one, and
    PlacementFeasible stops it there (scheduled + remaining = minCount - 1): no pod of another
    shape is searched. That is ``doomed.plan`` of the first shape's ``k`` pods with minCount
    ``scheduled0 + k``, whose pass stops at the same pod after the same searches."""
    total = len(pods)
    if st.min_count != scheduled0 + total or countOf(map(_SIGNATURE, pods), pods[0].signature) == total:
        return None  # (one shape: ``doomed.plan`` had the whole group)
    ordered = group_pod_order(fw, st, pods)
    signature = ordered[0].signature
    if not signature or not none_nominated(ordered):
        return None
    k = countOf(map(_SIGNATURE, ordered), signature)  # (the first k in pod order)
    return doomed.plan(fw, ordered[:k], scheduled0 + k, scheduled0)


def counted_pass(fw: Framework, st: PodGroupState, pods: list[PodInfo], layout: counted.Replay, scheduled0: int) -> GroupResult:
    """``default_pass`` when every pod finds a node and the searches are replayed
    (``fastpath.counted``): PlacementFeasible after each pod as the pass runs it, the i-th pod in
    pod order on the row the i-th search takes; nothing is placed, so nothing to revert.
    ``scheduled0``: ``st.scheduled_count()``."""
    ordered = pod_order(pods)
    scheduled = scheduled0
    evaluated, status = 0, None
    for _ in ordered:
        evaluated += 1
        scheduled += 1
        status = fw.run_placement_feasible(st, scheduled, len(pods) - evaluated)
        if status is not None and status.code == Code.UNSCHEDULABLE:
            break
    rows = counted.searches(fw, layout, evaluated)
    return GroupResult(wait_as_unschedulable(status), evaluated=evaluated, placed=list(zip(ordered, rows)))


def begin_attempt(h: SchedulerHandle, e: QueuedEntity, st: PodGroupState) -> list[PodInfo]:
    """The group's queued pods that are still pending and not being deleted (``skipPodSchedule``),
    the attempt counted; none left: the entity leaves the queue."""
    pods = pending_pods(e.pods)
    if any(map(_TERMINATING, pods)):
        pods = [p for p in pods if not p.terminating]
    if not pods:
        h.queue.done(e)
        st.entity = None
        return pods
    count_attempt(h, e, st)
    return pods


def count_attempt(h: SchedulerHandle, e: QueuedEntity, st: PodGroupState) -> None:
    """An attempt of ``e`` starts: its counters, and the generation it reads."""
    e.attempts += 1
    st.attempts += 1
    if e.initial_attempt_ms is None:
        e.initial_attempt_ms = h.cluster.now
    e.last_attempt_generation = h.generation
    h.cluster.group_attempted(st.key)
    # (each pod's own ``attempted`` is told in ``finish``, once the outcome says whether the
    # attempt only repeats the last one; nothing in between reads it)


def schedule_podgroup(h: SchedulerHandle, e: QueuedEntity, st: PodGroupState) -> None:
    last = attempts.reusable(st, e, h.generation)
    # fast path (FastPath.repeated_attempts): the last attempt again (not under gangsim explain)
    if last is not None and last.framework.recorder is None:  # type: ignore[attr-defined]
        repeat_attempt(h, e, st, last)
        return
    st.repeat = None
    pods = begin_attempt(h, e, st)
    if not pods:
        return
    started = time.perf_counter()

    scheduled0 = st.scheduled_count()
    message = validate(h, st, pods, scheduled0)
    if message:
        finish(h, e, st, pods, CycleOutcome.ERROR, Status(Code.ERROR, (message,)), started)
        return
    fw = h.framework_for(pods[0].spec.scheduler_name)
    assert fw is not None  # validate checked the profile
    rec = fw.recorder
    if rec is not None:  # gangsim explain: this pass is the real one (preemption's are dry runs)
        rec.active = True
    try:
        result = run_algorithm(fw, st, pods, scheduled0, keep=lambda: keeps_placements(h, fw, pods))
    finally:
        if rec is not None:
            rec.active = False
    status = result.status
    if status is None:
        partial = partial_success_preemption(h, fw, st, pods, result, scheduled0)
        if partial is not None:
            # KEP-4671 PartialSuccess: preemption that places more pods won over binding
            finish(h, e, st, pods, CycleOutcome.WAITING_ON_PREEMPTION, Status(Code.UNSCHEDULABLE, (PARTIAL_SUCCESS,)), started, result=result, nominations=partial)
            return
        if result.kept:  # (the fast path kept the pass's placements assumed)
            h.kept_unbound[:] = result.placed
        for pod, row in result.placed:  # §8.5 path 1: bind every pod that found a node
            if result.kept:
                del h.kept_unbound[0]
            else:
                h.snapshot.assign(pod, row)
            e.pods.remove(pod)
            bind(h, None, pod, row)
        finish(h, e, st, pods, CycleOutcome.SCHEDULED, None, started, result=result)
        return
    after_failed_pass(h, fw, e, st, pods, result, started)


def after_failed_pass(h: SchedulerHandle, fw: Framework, e: QueuedEntity, st: PodGroupState, pods: list[PodInfo], result: GroupResult, started: float, last: attempts.Repeat | None = None) -> None:
    """§8.1 step 6 after a pass that failed: PodGroupPostFilter (workload-aware preemption), then
    ``finish``. ``last``: the attempt this one repeats (its tuples are this one's). An attempt
    the doomed pass decided, that nominated nothing and left pods queued is kept for the next
    to repeat (``fastpath.attempts``), and the group may sleep through those repeats
    (``fastpath.bulk``)."""
    status = result.status
    assert status is not None
    outcome, nominations = CycleOutcome.UNSCHEDULABLE, None
    reasons = status.reasons
    for r in fw.run_pod_group_post_filter(st, pods, status):
        reasons += tuple(x for x in r.status.reasons if x)
        if r.status.code == Code.SUCCESS:
            outcome, nominations = CycleOutcome.WAITING_ON_PREEMPTION, r.nominations
    code = Code.UNSCHEDULABLE if outcome is CycleOutcome.WAITING_ON_PREEMPTION else status.code
    tuples = (last.pending, last.messages) if last is not None else None
    plan = result.plan
    keeps = outcome is CycleOutcome.UNSCHEDULABLE and (last is not None or (plan is not None and fw.fast_path.repeated_attempts and not fw.placement_generate_plugins and fw.recorder is None))
    sleeper = bulk.retries(h, fw, st, pods, plan, status) if keeps else None
    pending, messages = finish(h, e, st, pods, outcome, Status(code, reasons, status.plugin), started, result=result, nominations=nominations, tuples=tuples, sleeper=sleeper)
    if last is not None and outcome is CycleOutcome.UNSCHEDULABLE and st.entity is e:
        last.generation = h.generation
    elif keeps and st.entity is e:
        attempts.keep(st, attempts.Repeat(e, h.generation, fw, pods, plan, result, pending, messages))  # type: ignore[arg-type]
    else:
        st.repeat = None


def repeat_attempt(h: SchedulerHandle, e: QueuedEntity, st: PodGroupState, last: attempts.Repeat) -> None:
    """``schedule_podgroup`` for an attempt that repeats ``last`` (``fastpath.attempts``): the
    same pods, ``validate`` passed, the pass decided by the same doomed plan with the same
    result; its effect on the search state replayed."""
    count_attempt(h, e, st)
    started = time.perf_counter()
    fw = last.framework
    assert isinstance(fw, Framework)
    doomed.account(fw, last.plan)
    fw.doomed_passes += 1
    h.log.count("attempts_repeated")  # a work counter, not in reports
    after_failed_pass(h, fw, e, st, last.pods, last.result, started, last)


def keeps_placements(h: SchedulerHandle, fw: Framework, pods: list[PodInfo]) -> bool:
    """Fast path (``FastPath.keep_placements``): may a successful pass leave its placements
    assumed for the binds that follow at once? Reverting them and assuming each again just before
    its bind gives the same rows, devices and pod order on every node (the same assignments in
    the same order; a pod a bind makes the kubelet admit by ``spec.nodeName`` in between is put
    before the ones not bound yet, ``Scheduler.on_pod_assigned``), so only what a bind reads of
    the other placements could differ: PartialSuccess preempts with them reverted, and a bind
    under pod affinity releases the queue when any assigned pod carries an affinity term
    (``Scheduler.note_bind``), so neither may be in play."""
    if not fw.fast_path.keep_placements or h.config.partial_success:
        return False
    if countOf(map(_AFFINITY, pods), None) == len(pods):
        return True  # (no pod has an affinity at all: a gang's usual case, counted at C speed)
    return not any(p.spec.affinity is not None and p.spec.affinity.has_pod_affinity for p in pods)


def partial_success_preemption(h: SchedulerHandle, fw: Framework, st: PodGroupState, pods: list[PodInfo], result: GroupResult, scheduled0: int) -> dict[int, int] | None:
    """KEP-4671 PartialSuccess (off by default, not in the shipped code): on a later cycle of a
    gang with some pods unschedulable, preemption that places more pods wins over binding.
    Returns the nominations when it did."""
    if not h.config.partial_success or scheduled0 == 0 or not result.failed or not st.is_gang:
        return None
    if not h.features.workload_aware_preemption:
        return None
    for r in fw.run_pod_group_post_filter(st, pods, Status(Code.UNSCHEDULABLE), only_if_more_than=len(result.placed)):
        if r.status.code == Code.SUCCESS:
            return r.nominations or {}
    return None


def finish(
    h: SchedulerHandle,
    e: QueuedEntity,
    st: PodGroupState,
    attempted: list[PodInfo],
    outcome: CycleOutcome,
    status: Status | None,
    started: float,
    *,
    result: GroupResult | None = None,
    nominations: dict[int, int] | None = None,
    tuples: tuple[tuple[PodInfo, ...], tuple[str, ...]] | None = None,
    sleeper: bulk.Retries | None = None,
) -> tuple[tuple[PodInfo, ...], tuple[str, ...]]:
    """Failure handling of every pod still queued, the condition, metrics and the requeue;
    ``attempted``: the pods the attempt was for. ``tuples``: the pods still pending and their
    messages, as the attempt this one repeats left them, nominating none (``fastpath.attempts``);
    returned. ``sleeper``: the next attempts repeat this one and may run in bulk while the
    group sleeps in backoffQ, if its failure was recorded so that they record it again
    (``fastpath.bulk``)."""
    log = h.log
    log.podgroup_attempts[outcome.value] = log.podgroup_attempts.get(outcome.value, 0) + 1
    timings = log.timings.get(ALGORITHM_S)
    if timings is None:
        timings = log.timings[ALGORITHM_S] = array("d")
    timings.append(time.perf_counter() - started)
    group_message = status.message if status is not None else ""
    if tuples is not None:
        pending, messages = tuples
    else:
        pending = tuple(pending_pods(e.pods))
        # submitPodGroupAlgorithmResult (schedule_one_podgroup.go): a pod that failed Filter on
        # its own carries its own FitError whatever the group's outcome (unless the group
        # errored); placed and never-evaluated pods carry the group's status
        if outcome is CycleOutcome.ERROR or result is None:
            messages = (group_message,) * len(pending)
        else:
            failed, default = result.failed, group_message or NO_PODS_SCHEDULABLE
            messages = tuple(map(failed.get, map(_UID, pending), repeat(default, len(pending))))
    if not repeats_last_failure(h, st, attempted, pending, messages, outcome, nominations, cleared=tuples is not None):
        record_failures(h, attempted, pending, messages, nominations)
        st.failures = h.cluster.failures_recorded(pending, messages) if outcome is CycleOutcome.UNSCHEDULABLE and nominations is None else None
    set_condition(h, st, outcome, group_message)
    h.cluster.attempt_finished(st.key, bound=outcome is CycleOutcome.SCHEDULED)
    if not pending:
        h.queue.done(e)
        if st.entity is e:
            st.entity = None
        st.failures = st.order_memo = st.repeat = None  # nothing left to repeat: let the memos go
        return pending, messages
    # AddAttemptedPodGroupIfNeeded: straight back to backoffQ/activeQ, never the unschedulable pool
    if outcome is CycleOutcome.ERROR:
        e.consecutive_errors += 1
    else:
        e.consecutive_errors = 0
        e.unschedulable_count += 1
    e.unschedulable_plugins = frozenset({status.plugin}) if status is not None and status.plugin else frozenset()
    if outcome is CycleOutcome.SCHEDULED:
        # members were bound: the leftovers' next cycle counts them and is a different attempt
        e.last_attempt_generation = -1
    old_timestamp = e.timestamp_ms
    if sleeper is not None and not bulk.may_sleep(h, sleeper, st, attempted, pending, messages):
        sleeper = None
    h.queue.requeue_after_failure(e, to_backoff=True, sleeper=sleeper)
    if h.config.requeue_leftovers_with_old_timestamp and outcome is CycleOutcome.SCHEDULED:
        e.timestamp_ms = old_timestamp  # KEP variant: leftovers keep their place in the queue
        h.queue.reposition(e)
    return pending, messages


def repeats_last_failure(
    h: SchedulerHandle,
    st: PodGroupState,
    attempted: list[PodInfo],
    pending: tuple[PodInfo, ...],
    messages: tuple[str, ...],
    outcome: CycleOutcome,
    nominations: dict[int, int] | None,
    *,
    cleared: bool = False,
) -> bool:
    """Fast path (``FastPath.failure_streaks``): the attempt failed the same pods as the group's
    last failed attempt, each with the same message, nominating none: the cluster records it
    once for the group when that is exact (``ClusterAPI.failed_again``; True: recorded). Then the per-pod path
    would change no pod's nomination (all cleared by the last attempt; the doomed pass and the
    pass pod by pod leave them alone), log only aggregated events and rewrite the same reasons.
    ``cleared``: the pods are known to have no nomination (the attempt this one repeats left them so)."""
    if st.failures is None or outcome is not CycleOutcome.UNSCHEDULABLE or nominations is not None:
        return False
    if not h.config.effective_fast_path.failure_streaks or len(attempted) != len(pending):
        return False
    if not cleared and not none_nominated(pending):
        return False
    return h.cluster.failed_again(st.failures, pending, messages, renew=h.config.effective_fast_path.renewed_failures)


def record_failures(h: SchedulerHandle, attempted: list[PodInfo], pending: tuple[PodInfo, ...], messages: tuple[str, ...], nominations: dict[int, int] | None) -> None:
    """The reference path: each attempted pod's attempt, then for each pod still pending its
    nomination, its FailedScheduling event and its waiting reason."""
    now = h.cluster.now
    for p in attempted:
        h.cluster.attempted(p)
    for pod, message in zip(pending, messages):
        target = nominations.get(pod.uid, NO_NODE) if nominations is not None else NO_NODE
        if h.nominator.nominate(pod, target):
            h.bump()
        h.log.event(now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
        h.cluster.scheduling_failed(pod, message)


def set_condition(h: SchedulerHandle, st: PodGroupState, outcome: CycleOutcome, message: str, kind: str = "PodGroup") -> None:
    """PodGroupInitiallyScheduled (a CompositePodGroup's: CompositePodGroupInitiallyScheduled,
    same reasons): True is terminal; events on every change (§1.4)."""
    if outcome is CycleOutcome.SCHEDULED:
        cond = Condition(ConditionStatus.TRUE, "Scheduled", "")
    elif outcome is CycleOutcome.ERROR:
        cond = Condition(ConditionStatus.FALSE, "SchedulerError", message)
    else:
        cond = Condition(ConditionStatus.FALSE, "Unschedulable", message)
    if st.initially_scheduled and cond.status is not ConditionStatus.TRUE:
        return
    if cond == st.condition:
        return
    st.condition = cond
    h.log.event(h.cluster.now, kind, st.key, "", cond.reason, message)
