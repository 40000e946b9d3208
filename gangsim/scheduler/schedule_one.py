"""The pod-by-pod scheduling cycle (SEMANTICS §3): PreFilter → Filter → PostFilter | Score →
Reserve → Permit → Bind (kube's ``schedule_one.go``), and a ``PodRun``'s cycles (fast path)."""

from __future__ import annotations

from collections.abc import Callable

from gangsim.eventlog import EventReason
from gangsim.scheduler.binding import assume_and_bind
from gangsim.scheduler.cycle_handle import SchedulerHandle
from gangsim.scheduler.fastpath import run_pass
from gangsim.scheduler.fastpath.repeat import RepeatedFailures
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import Diagnosis, PodInfo, PodPhase, PodRun, QueuedEntity, ScheduleResult, fit_error_message

# enum members the per-pod paths read, as module names: read through its class, a member costs
# ~100 ns on Python 3.11 (EnumType's __getattr__ hook), a module name ~10 ns
PENDING = PodPhase.PENDING


def schedule_one(h: SchedulerHandle, e: QueuedEntity) -> int:
    """One cycle of ``e`` (a pod); returns how many pod attempts it made: 1, or for a
    ``PodRun`` whose pods failed together, one per pod (each a cycle on the reference path)."""
    if isinstance(e, PodRun) and len(e.pods) > 1:
        return schedule_run(h, e)
    pod = e.pods[0]
    fw = h.framework_for(pod.spec.scheduler_name) if pod.phase is PENDING else None
    if fw is None:
        h.queue.done(e)
        return 1
    note_attempt(h, e)
    # FastPath.failure_streaks: after a failure that opened a streak, the attempt is recorded
    # after the pass, in the streak when it fails the same way (``fail``); the pass reads
    # nothing ``attempted`` writes, and a PostFilter that may preempt, or a bind, gets it first
    deferred = e.failures is not None
    if not deferred:
        h.cluster.attempted(pod)
    state = CycleState()
    rec = fw.recorder
    if rec is not None:  # gangsim explain: a real attempt
        rec.active = True
    try:
        result, diagnosis = fw.schedule_pod(state, pod, h.generation, upcoming=_siblings(h, pod))
    finally:
        if rec is not None:
            rec.active = False
    if result is None:
        handle_fit_error(h, fw, state, e, pod, diagnosis, attempted=not deferred)
        return 1
    if deferred:
        h.cluster.attempted(pod)
    finish(h, fw, state, e, pod, result, diagnosis)
    return 1


def _siblings(h: SchedulerHandle, pod: PodInfo) -> Callable[[], list[PodInfo]] | None:
    """``pod`` and its group's other pending pods of its shape: under ``permit`` the ones
    likely to be popped after it (``fastpath.counted_searches``); None: not a group's pod."""
    st = h.pod_group(pod.group_key) if pod.group_key and pod.signature else None
    if st is None:
        return None
    return lambda: [pod, *(m for m in st.members.values() if m is not pod and m.phase is PENDING and m.signature == pod.signature)]


def note_attempt(h: SchedulerHandle, e: QueuedEntity) -> None:
    """What an attempt changes on the queue entity (the pass reads none of it)."""
    e.attempts += 1
    if e.initial_attempt_ms is None:
        e.initial_attempt_ms = h.cluster.now
    e.last_attempt_generation = h.generation


def finish(h: SchedulerHandle, fw: Framework, state: CycleState, e: QueuedEntity, pod: PodInfo, result: ScheduleResult | None, diagnosis: Diagnosis) -> None:
    """After the Filter/Score pass: the failure handler, or Reserve → Permit → Bind."""
    if result is None:
        handle_fit_error(h, fw, state, e, pod, diagnosis)
        return
    rejected = assume_and_bind(h, fw, state, e, pod, result.suggested_row)
    if rejected is not None:
        fail(h, e, pod, rejected.message, rejected, frozenset({rejected.plugin}))


def handle_fit_error(h: SchedulerHandle, fw: Framework, state: CycleState, e: QueuedEntity, pod: PodInfo, diagnosis: Diagnosis, *, attempted: bool = True) -> None:
    """No node fits: PostFilter (DefaultPreemption), then the failure handler. ``attempted``
    False: the attempt is not recorded yet (``schedule_one``'s deferred attempt): it is before
    a PostFilter that may preempt, else with the failure (``fail``)."""
    num_nodes = h.snapshot.nodes.num_nodes
    nominated: int | None = None  # None = leave the nomination as it is
    memo = fw.repeated_failures  # fast path: a replayed diagnosis renders the same message
    if num_nodes > 0:
        repeat = memo.repeated_post_filter(state, pod, diagnosis, h.generation) if memo is not None and fw.fast_path.repeated_post_filter else None
        if repeat is None and not attempted:
            h.cluster.attempted(pod)
            attempted = True
        res = repeat(1) if repeat is not None else fw.run_post_filter(state, pod, diagnosis)
        if res is not None:
            diagnosis.post_filter_msg = res.message
            nominated = res.nominated_row
    message = fit_error_message(num_nodes, diagnosis) if memo is None else memo.fit_error_message(num_nodes, diagnosis)
    if nominated is not None and h.nominator.nominate(pod, nominated):
        h.bump()
    fail(h, e, pod, message, Status(Code.UNSCHEDULABLE, (message,)), frozenset(diagnosis.unschedulable_plugins), attempted=attempted, streaks=fw.fast_path.failure_streaks, renew=fw.fast_path.renewed_failures)


def fail(h: SchedulerHandle, e: QueuedEntity, pod: PodInfo, message: str, status: Status, plugins: frozenset[str], *, attempted: bool = True, streaks: bool = False, renew: bool = False) -> None:
    """``handleSchedulingFailure``: the FailedScheduling event, then the queue (§4.5).

    ``streaks`` (``FastPath.failure_streaks``): the failure opens a streak (``ClusterAPI.failures_recorded``),
    and with the attempt not recorded yet (``attempted`` False, the last failure's streak live)
    a failure like the last one is recorded in it, in O(1) (``ClusterAPI.failed_again``: the
    attempt, the aggregated event and the waiting reason), as a ``PodRun``'s pods are."""
    infos, messages = (pod,), (message,)
    if not attempted:
        if h.cluster.failed_again(e.failures, infos, messages, renew=renew):  # type: ignore[arg-type]
            requeue(h, e, plugins, error=status.code == Code.ERROR)
            return
        h.cluster.attempted(pod)
    h.log.event(h.cluster.now, "Pod", pod.key, "", EventReason.FAILED_SCHEDULING, message)
    h.cluster.scheduling_failed(pod, message)
    if streaks:
        e.failures = h.cluster.failures_recorded(infos, messages)
    requeue(h, e, plugins, error=status.code == Code.ERROR)


def requeue(h: SchedulerHandle, e: QueuedEntity, plugins: frozenset[str], *, error: bool) -> None:
    e.unschedulable_plugins = plugins
    if error:
        e.consecutive_errors += 1
    else:
        e.consecutive_errors = 0
        e.unschedulable_count += 1
    h.queue.requeue_after_failure(e, to_backoff=False)


# ---- a PodRun (FastPath.pod_runs) -------------------------------------------------------------
def schedule_run(h: SchedulerHandle, run: PodRun) -> int:
    """The cycles of a run's pods, which on the reference path are popped one after the other.
    The first pod's pass runs as usual. When it fails and each of the others would fail the
    same way — its diagnosis replayed for them (``fastpath.repeat``: same signature, same
    cluster state), PostFilter saying the same for each without preempting
    (``RepeatedFailures.post_filter_repeater``), no pod nominated — the run's attempts are recorded at
    once: the counters times the pods, each pod's attempt, FailedScheduling event and waiting
    reason (a repeat of the run's last failure in O(1): ``ClusterAPI.failed_again``), and one
    requeue of the run. Otherwise the first pod leaves the run (``SchedulingQueue.peel``) and
    goes on as a single pod; the others wait where they were, and are the next ones popped."""
    pod = run.pods[0]
    fw = h.framework_for(pod.spec.scheduler_name) if pod.phase is PENDING else None
    memo = fw.repeated_failures if fw is not None and fw.recorder is None else None
    if fw is None or memo is None:  # (gangsim explain records each pod's own pass)
        return schedule_one(h, h.queue.peel(run))
    if fw.fast_path.run_passes and run.popped_done is None:
        planned = run_pass.plan(fw, run.pods)
        if planned is not None:
            return _bind_planned(h, fw, run, planned)
    state = CycleState()
    result, diagnosis = fw.schedule_pod(state, pod, h.generation, upcoming=lambda: run.pods)
    size = len(run.pods)  # (read first: parked again, the run may be joined by the next, FastPath.joined_runs)
    if result is None and _fail_together(h, fw, memo, state, run, diagnosis):
        return size
    e = h.queue.peel(run)
    note_attempt(h, e)
    h.cluster.attempted(pod)  # (the pass before it records nothing this reads)
    finish(h, fw, state, e, pod, result, diagnosis)
    return 1


def _fail_together(h: SchedulerHandle, fw: Framework, memo: RepeatedFailures, state: CycleState, run: PodRun, diagnosis: Diagnosis) -> bool:
    """Record every pod of ``run`` failing with the first pod's ``diagnosis`` when that is what
    the reference path would do pod by pod (see ``schedule_run``); False: nothing done."""
    pods = run.pods
    num_nodes = h.snapshot.nodes.num_nodes
    repeat = memo.post_filter_repeater(state, pods[0], diagnosis) if num_nodes > 0 else None
    if num_nodes > 0 and repeat is None:
        return False
    if memo.replay(pods[1], h.generation, times=len(pods) - 1, like=diagnosis) is None:
        return False
    if repeat is not None:
        res = repeat(len(pods))  # never a nomination: the pods' (none) stay as they are
        if res is not None:
            diagnosis.post_filter_msg = res.message
    message = memo.fit_error_message(num_nodes, diagnosis)
    infos, messages = tuple(pods), (message,) * len(pods)
    streaks = fw.fast_path.failure_streaks
    if not (streaks and h.cluster.failed_again(run.failures, infos, messages, renew=fw.fast_path.renewed_failures)):
        now = h.cluster.now
        for p in pods:  # as the reference path records each pod's cycle, in order
            h.cluster.attempted(p)
            h.log.event(now, "Pod", p.key, "", EventReason.FAILED_SCHEDULING, message)
            h.cluster.scheduling_failed(p, message)
        run.failures = h.cluster.failures_recorded(infos, messages, peelable=fw.fast_path.streak_peel) if streaks else None
    note_attempt(h, run)
    requeue(h, run, frozenset(diagnosis.unschedulable_plugins), error=False)
    h.log.count("pod_run_attempts", len(infos) - 1)  # a work counter, not in reports: attempts recorded with the first's
    return True


def _bind_planned(h: SchedulerHandle, fw: Framework, run: PodRun, planned: run_pass.RunPass) -> int:
    """``FastPath.run_passes``: the run's first pods placed where their passes would put them
    (``fastpath.run_pass``), each peeled, attempted and bound as on the reference path, where
    the scheduling loop pops the run between them; it stops early when a bind changed more than
    its row or something else would be popped next. Returns the pods placed, one cycle each."""
    queue = h.queue
    pods = run.pods
    placed = 0
    while True:
        pod = pods[placed]
        row = planned.take(placed)
        last = placed == len(pods) - 1
        e = queue.last_of(run) if last else queue.peel_at(run, placed)
        note_attempt(h, e)
        h.cluster.attempted(pod)
        assume_and_bind(h, fw, CycleState(), e, pod, row)  # binds: the pass has no Reserve or Permit plugin
        placed += 1
        if last:
            break
        if placed == planned.size or pods[placed].phase is not PENDING or not planned.still_holds(pods[placed]) or not queue.run_is_next(run):
            queue.put_back(run, placed)
            break
    if placed > 1:
        h.log.count("run_pass_pods", placed - 1)  # a work counter, not in reports: pods placed without a pass of their own
    return placed
