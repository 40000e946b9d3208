"""A stuck PodGroup's retries on an unchanged cluster, accounted in bulk (``FastPath.bulk_retries``).

A group whose attempt the doomed pass decided is kept for its next attempt to repeat
(``fastpath.attempts``) while the scheduler generation stays the same. Every retry until the next
change is then that repeat: the same pods fail with the same messages, recorded as one more
failure of the group's FailureStreak; the same doomed plan moves the search state; the same
PodGroupPostFilter fails without victims. Nothing a repeat does is read by another group's
attempt, and its effects add up, so they need not run one at a time: the group sleeps in backoffQ
with no wake (``queue.sleepers``), and ``Retries.retried`` records a batch of its retries at
once — what ``repeat_attempt`` and ``finish`` record for each (the attempt counters, the gang's
``schedule_attempts``, the scheduling cycles, the PodGroup attempt metric, PostFilter's
counters, the streak's repeats and times, the doomed plan's rows).

Where a repeat's effect depends on the order of the attempts, the group does not sleep (the
shortcut is exact only without it): a doomed plan whose searches stop early moves the shared
rotating start index by where each one stops (``plan.ranked``), a PodGroupPostFilter that would
run a dry run or act, a failure not recorded as a repeat of the streak (a preemption waits on the
group's attempts, a pod left the attempt), and an entity something could already change
(``SchedulingQueue.requeue_after_failure``: not stale).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gangsim.api.config import FastPath
from gangsim.eventlog import EventLog
from gangsim.scheduler.fastpath import doomed
from gangsim.scheduler.fastpath.doomed import DoomedPass
from gangsim.scheduler.framework.handle import ClusterAPI
from gangsim.scheduler.framework.interface import PodGroupPostFilterPlugin, RepeatablePodGroupPostFilterPlugin, Status
from gangsim.scheduler.framework.types import CycleOutcome, PodGroupState, PodInfo

UNSCHEDULABLE = CycleOutcome.UNSCHEDULABLE.value
_REPEATABLE: dict[type, bool] = {}  # plugin class -> is it a RepeatablePodGroupPostFilterPlugin


class SchedulerHandle(Protocol):
    """What a batch of retries records on (``cycle_handle.SchedulerHandle``)."""

    cluster: ClusterAPI
    log: EventLog
    cycles: int


class Framework(Protocol):
    """What a batch of retries records on (``framework.runtime.Framework``)."""

    fast_path: FastPath
    recorder: object
    doomed_passes: int
    filter_rows_evaluated: int
    pod_group_post_filter_plugins: list[PodGroupPostFilterPlugin]


@dataclass(slots=True, eq=False)
class Retries:
    """The ``queue.sleepers.Sleeper`` of group ``st``: its attempt failed with a doomed plan on
    ``fw`` whose searches scan ``rows`` rows in all, each over every node (so the rotating start
    index is where it was); ``pending`` and ``messages`` as its failure handling recorded them."""

    h: SchedulerHandle
    fw: Framework
    st: PodGroupState
    rows: int
    post_filter: Callable[[int], None]
    pending: tuple[PodInfo, ...] = ()
    messages: tuple[str, ...] = ()

    def retried(self, times: int, first_ms: int, last_ms: int, max_gap_ms: int) -> None:
        h, fw, st, log = self.h, self.fw, self.st, self.h.log
        st.attempts += times  # count_attempt (the entity's counters: the queue's)
        h.cluster.group_attempted(st.key, times)
        h.cycles += times
        fw.filter_rows_evaluated += self.rows * times  # doomed.account of a plan with full scans
        fw.doomed_passes += times
        self.post_filter(times)
        log.podgroup_attempts[UNSCHEDULABLE] = log.podgroup_attempts.get(UNSCHEDULABLE, 0) + times
        recorded = h.cluster.failed_again(st.failures, self.pending, self.messages, times=times, at_ms=first_ms, last_ms=last_ms, max_gap_ms=max_gap_ms)
        assert recorded, f"{st.key}: a sleeping group's failure streak ended while it slept"
        log.count("attempts_repeated", times)  # work counters, not in reports
        log.count("attempts_slept", times)


def retries(h: SchedulerHandle, fw: Framework, st: PodGroupState, pods: list[PodInfo], plan: DoomedPass | None, status: Status) -> Retries | None:
    """The sleeper of ``st`` after its attempt of ``pods`` failed with ``status`` on a doomed
    ``plan``, kept for the next attempt to repeat, when the repeats may run in bulk (the
    failure's recording is checked by ``may_sleep``); None otherwise."""
    if plan is None or not fw.fast_path.bulk_retries or fw.recorder is not None:
        return None
    if plan.ranked is not None and plan.scans:
        return None  # each search moves the shared start index by where it stops: order matters
    post_filter = post_filter_repeater(fw, st, pods, status)
    if post_filter is None:
        return None
    # (the number of nodes is the one of the attempt: a node added or removed changes the generation)
    return Retries(h, fw, st, plan.scans * len(doomed.search_rows(fw)), post_filter)  # type: ignore[arg-type]


def may_sleep(h: SchedulerHandle, r: Retries, st: PodGroupState, attempted: list[PodInfo], pending: tuple[PodInfo, ...], messages: tuple[str, ...]) -> bool:
    """After the failure was recorded: would the next repeat record it again as one more
    failure of the streak (``schedule_podgroup.repeats_last_failure``), with no preemption
    waiting on the group's attempts? Then ``r`` holds the repeat's tuples."""
    if len(attempted) != len(pending) or not h.cluster.failed_again(st.failures, pending, messages, also=(st.key,), record=False):
        return False
    r.pending, r.messages = pending, messages
    return True


def post_filter_repeater(fw: Framework, st: PodGroupState, pods: list[PodInfo], status: Status) -> Callable[[int], None] | None:
    """``fw.run_pod_group_post_filter`` called ``times`` more times on this unchanged cluster, at
    once, when every plugin can say what its calls would do and none acts
    (``RepeatablePodGroupPostFilterPlugin``); None (nothing done) otherwise."""
    repeats = []
    for p in fw.pod_group_post_filter_plugins:
        repeatable = _REPEATABLE.get(type(p))
        if repeatable is None:  # (isinstance against a runtime-checkable Protocol is slow: once per class)
            repeatable = _REPEATABLE[type(p)] = isinstance(p, RepeatablePodGroupPostFilterPlugin)
        if not repeatable:
            return None
        repeat = p.pod_group_post_filter_repeater(st, pods, status)
        if repeat is None:
            return None
        repeats.append(repeat)

    def run(times: int) -> None:
        for repeat in repeats:
            repeat(times)

    return run
