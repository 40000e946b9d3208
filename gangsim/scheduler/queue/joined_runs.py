"""Joined runs (``FastPath.joined_runs``, issue 16, RICC under ``pod``): the unschedulable pool's
``PodRun`` entities indexed by their first and last pod's ``seq``, and which ``seq`` are still
queued, so that a run just parked finds the run parked right before or after it in the queue's
order (``SchedulingQueue._join``) and joins it when the two are alike (``alike``).

``left[s]`` is ``s`` while an entity holding ``seq`` s is queued, a smaller seq once it left for
good (``done``, ``leave``): ``queued_at_or_before`` follows it (path halving) to the greatest seq
still queued. ``gaps`` turns False once an entity came back after leaving: then only
consecutive seqs join. (A pod waiting at Permit has not left: a rejected one comes back with
its seq, so the seq stays taken until the pod binds, ``SchedulingQueue.wait``.)
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from gangsim.scheduler.framework.types import NO_NODE, PodRun, QueuedEntity


class RunJoins:
    __slots__ = ("first", "last", "left", "gaps", "joins")

    def __init__(self) -> None:
        self.first: dict[int, PodRun] = {}  # the runs in the pool by their first pod's seq
        self.last: dict[int, PodRun] = {}  # ... and by their last pod's
        self.left = array("q", [0])
        self.gaps = True
        self.joins = 0  # runs joined so far (a work counter)

    def appended(self, seq: int) -> None:
        """``seq`` was just handed out (the next after the last)."""
        self.left.append(seq)

    def gone(self, s: int) -> None:
        """No entity holds ``seq`` s any more, nor ever will again."""
        if 0 < s < len(self.left):
            self.left[s] = s - 1

    def queued_at_or_before(self, s: int) -> int:
        """The greatest ``seq`` at most ``s`` an entity still queued holds (0: none)."""
        left = self.left
        while left[s] != s:
            left[s] = left[left[s]]
            s = left[s]
        return s

    def before(self, e: PodRun) -> PodRun | None:
        """The run in the pool holding the greatest ``seq`` still queued before ``e``'s first
        (pods that left for good between them change nothing: see ``SchedulingQueue._join``)."""
        before = e.seqs[0] - 1
        return self.last.get(self.queued_at_or_before(before) if self.gaps else before)

    def after(self, e: PodRun) -> PodRun | None:
        """The run in the pool whose first ``seq`` follows ``e``'s last."""
        return self.first.get(e.seqs[-1] + 1)

    def index(self, e: PodRun) -> None:
        self.first[e.seqs[0]] = e
        self.last[e.seqs[-1]] = e

    def unindex(self, e: PodRun) -> None:
        if self.first.get(e.seqs[0]) is e:
            del self.first[e.seqs[0]]
        self.unindex_last(e)

    def unindex_last(self, e: PodRun) -> None:
        if self.last.get(e.seqs[-1]) is e:
            del self.last[e.seqs[-1]]

    @staticmethod
    def alike(a: PodRun, b: PodRun, backoff_duration: Callable[[QueuedEntity], int], cap_ms: int) -> bool:
        """Would ``a``'s pods and ``b``'s, each its own entity, stay alike on the reference path:
        just failed at the same instant on the same cluster (timestamp, parking time, scheduler
        generation, rejecting plugins), one memo key (signature, priority, preemption policy:
        ``fastpath.repeat``) and one backoff from now on (the same count of failures, or both at
        the cap, where more failures change nothing: ``backoff_duration`` is the only reader of
        a run's counts). Their pods are not nominated (a pod is nominated by its own PostFilter,
        on the single path, after it left its run) and passed PreEnqueue, whose answer reads the
        spec only, which does not change while they are in the run: for a pod of no PodGroup by
        the ``PreEnqueuePlugin`` contract (the spec and the PodGroup only), for a PodGroup's
        pods when every plugin says so (the queue's ``join_group_runs``)."""
        if a.timestamp_ms != b.timestamp_ms or a.parked_ms != b.parked_ms or a.last_attempt_generation != b.last_attempt_generation:
            return False
        if a.consecutive_errors or b.consecutive_errors or a.unschedulable_plugins != b.unschedulable_plugins:
            return False
        if a.unschedulable_count != b.unschedulable_count and (backoff_duration(a) != cap_ms or backoff_duration(b) != cap_ms):
            return False
        p, q = a.pods[0], b.pods[0]
        if p.nominated_row != NO_NODE or q.nominated_row != NO_NODE or not p.signature:
            return False
        s, t = p.spec, q.spec
        return s.priority == t.priority and s.preemption_policy == t.preemption_policy and (p.group_key == "") == (q.group_key == "") and p.signature == q.signature
