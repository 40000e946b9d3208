"""The scheduling queue's moves of ``PodRun`` entities (``FastPath.pod_runs``: a Job's pods
queued as one entity while they are treated alike; ``FastPath.run_passes``: several of them
placed in one cycle; ``FastPath.joined_runs``: runs of different Jobs joined in the
unschedulable pool), kept apart from ``scheduling_queue`` so that each file reads as one part of
the queue (upstream splits its queue into active_queue.go, backoff_queue.go and
scheduling_queue.go alike). ``SchedulingQueue`` is the only class built on it: the attributes
below are its own, documented there.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from gangsim.api.config import SchedulerConfig
from gangsim.scheduler.framework.types import PodInfo, PodRun, QueuedEntity, QueueLocation
from gangsim.scheduler.queue.joined_runs import RunJoins

# The most pods a run holds: a run is any grouping of adjacent alike entities (the reference path
# has one per pod), so its length changes no outcome. But a pod leaving a run's head deletes
# from the front of its lists, O(length): SB-50k's 50,000 pods created at once made one run,
# and its ~5,500 passes moved 2 GB of list memory (7 % of the replay's instructions). Capped,
# that cost is bounded; a Job's pods beyond it form the next run, and runs join up to it.
MAX_RUN_PODS = 2048

ACTIVE = QueueLocation.ACTIVE
BACKOFF = QueueLocation.BACKOFF
UNSCHEDULABLE = QueueLocation.UNSCHEDULABLE
IN_FLIGHT = QueueLocation.IN_FLIGHT


class PodRunMoves:
    config: SchedulerConfig
    entities: dict[str, QueuedEntity]
    activation_epoch: int
    _entity_of: dict[int, QueuedEntity]
    _pod_runs: bool
    _group_runs: bool
    _join_group_runs: bool
    _joins: RunJoins | None
    _last_run: PodRun | None
    _seq: int
    _now: Callable[[], int]
    _sort_key: Callable[[QueuedEntity], tuple]
    _tokens: dict[str, int]
    _active: list
    _backoff: list
    _error_backoff: list

    # ---- pod runs (FastPath.pod_runs) -----------------------------------------------------------
    def add_pod(self, pod: PodInfo) -> QueuedEntity:
        """A new pod's entity, added (``add``). With ``pod_runs`` a signable pod joins the run the
        last ``add_pod`` queued when on the reference path the two entities would be alike and
        adjacent: same spec object (so the same signature, priority and PreEnqueue verdict:
        PreEnqueue reads a pod's spec and group only), same group key, nothing queued since, the
        run still as it was added (in activeQ, never attempted, timestamped now) and shorter than
        ``MAX_RUN_PODS``. A pod of a PodGroup forms runs only with ``_group_runs``."""
        now = self._now()
        run = self._last_run
        runs = self._pod_runs and pod.signature and (self._group_runs or not pod.group_key)
        if runs and run is not None:
            last = run.pods[-1]
            if len(run.pods) < MAX_RUN_PODS and last.spec is pod.spec and last.group_key == pod.group_key and run.seqs[-1] == self._seq and run.where == ACTIVE and run.attempts == 0 and run.timestamp_ms == now:
                self._seq += 1
                self.activation_epoch += 1
                run.pods.append(pod)
                run.seqs.append(self._seq)
                if self._joins is not None:
                    self._joins.appended(self._seq)
                return run
        if not runs:
            e = QueuedEntity(key=str(pod.uid), pods=[pod], timestamp_ms=now)
            self.add(e)
            return e
        run = self._last_run = PodRun(key=f"run:{pod.uid}", pods=[pod], timestamp_ms=now)
        self.add(run)
        run.seqs.append(run.seq)
        return run

    def _single(self, run: PodRun, i: int) -> QueuedEntity:
        """The ``i``-th pod of ``run`` as the entity it would be on the reference path (not queued)."""
        pod = run.pods[i]
        one = QueuedEntity(
            key=str(pod.uid),
            pods=[pod],
            timestamp_ms=run.timestamp_ms,
            initial_attempt_ms=run.initial_attempt_ms,
            attempts=run.attempts,
            unschedulable_count=run.unschedulable_count,
            consecutive_errors=run.consecutive_errors,
            unschedulable_plugins=run.unschedulable_plugins,
            last_attempt_generation=run.last_attempt_generation,
            gated_message=run.gated_message,
            seq=run.seqs[i],
            parked_ms=run.parked_ms,
        )
        self.entities[one.key] = one
        self._entity_of[pod.uid] = one
        return one

    def peel(self, run: PodRun) -> QueuedEntity:
        """``run`` (in flight, two pods or more) gives up its first pod: that pod's own entity,
        in flight, is returned, and the others go back where the run was popped from (activeQ,
        or backoffQ at the same time), where they were on the reference path meanwhile."""
        one = self._single(run, 0)
        one.where = IN_FLIGHT
        self._drop_head(run, 1)
        if run.popped_done is None:
            self._push_active(run)
        else:
            self._push_backoff(run, done=run.popped_done)
        return one

    @staticmethod
    def _drop_head(run: PodRun, k: int) -> None:
        """``run``'s first ``k`` pods left it (peeled; its failure token and PreEnqueue memo
        stay: they know that pods leave)."""
        del run.pods[:k], run.seqs[:k]
        run.seq = run.seqs[0]

    # (FastPath.run_passes) a cycle that places several of a run's pods one after the other
    # peels them as ``peel`` does, except that the run stays in flight in between and the peeled
    # pods leave its lists at once (deleting a long list's head pod by pod is quadratic): nothing
    # a bind does reads an entity in flight; ``run_is_next`` answers what ``pop`` would.
    def peel_at(self, run: PodRun, i: int) -> QueuedEntity:
        """``peel`` of ``run``'s pod ``i`` when pods ``0..i-1`` were peeled by ``peel_at`` in
        this cycle: its own entity, in flight; the run's head is then pod ``i+1`` (the last pod is
        the run itself: ``last_of``)."""
        one = self._single(run, i)
        one.where = IN_FLIGHT
        run.seq = run.seqs[i + 1]
        return one

    def last_of(self, run: PodRun) -> PodRun:
        """``run`` of one pod, its last: the others were peeled by ``peel_at``."""
        self._drop_head(run, len(run.pods) - 1)
        return run

    def put_back(self, run: PodRun, peeled: int) -> None:
        """After ``peel_at`` of ``run``'s first ``peeled`` pods: the run as ``peel`` leaves it (it
        was popped from activeQ)."""
        self._drop_head(run, peeled)
        self._push_active(run)

    def run_is_next(self, run: PodRun) -> bool:
        """``pop`` would return ``run`` were it back in activeQ (``put_back``)."""
        heap = self._active
        while heap and heap[0][1] != self._tokens.get(heap[0][2].key):
            heapq.heappop(heap)
        return not heap or self._sort_key(run) < heap[0][0]

    def single(self, e: QueuedEntity | None, pod: PodInfo) -> QueuedEntity | None:
        """``pod``'s own entity: when ``e`` (its entity) is a run of several pods, the run is split
        into its pods first, each placed where the run is (an update or an activation treats
        the pod differently from the others from now on; both come from outside a cycle, when
        the run is in activeQ, backoffQ or the unschedulable pool)."""
        if not isinstance(e, PodRun) or len(e.pods) == 1:
            return e
        where, done = e.where, None
        if where == BACKOFF:
            token = self._tokens.get(e.key)
            done = next(item[0] for heap in (self._backoff, self._error_backoff) for item in heap if item[3] is e and item[2] == token)
        self._detach(e)
        self.entities.pop(e.key, None)
        if self._last_run is e:
            self._last_run = None
        for i in range(len(e.pods)):
            one = self._single(e, i)
            if where == ACTIVE:
                self._push_active(one)
            elif where == BACKOFF:
                self._push_backoff(one, done)
            else:  # the unschedulable pool (a run of several pods is never gated: they share the
                # spec PreEnqueue let through, and a pod whose spec changes leaves the run first)
                self._park_unschedulable(one, e.parked_ms)
        return self._entity_of[pod.uid]

    def leave(self, e: QueuedEntity, pod: PodInfo) -> None:
        """``pod`` is gone: its entity leaves the queue (``done``), or its run goes on without it
        (the others' state and order are unchanged; a run's heap entries order it by its first
        pod's ``seq``, and no other entity has a ``seq`` between its pods')."""
        if isinstance(e, PodRun) and len(e.pods) > 1:
            joins = self._joins
            indexed = joins is not None and e.where == UNSCHEDULABLE
            if indexed:
                joins.unindex(e)  # type: ignore[union-attr]
            i = next(i for i, p in enumerate(e.pods) if p is pod)
            if joins is not None:
                joins.gone(e.seqs[i])
            del e.pods[i], e.seqs[i]
            e.seq = e.seqs[0]
            e.failures = e.pre_enqueue_memo = None
            if indexed:
                joins.index(e)  # type: ignore[union-attr]
            return
        self.done(e)

    # ---- joined runs (FastPath.joined_runs, ``queue.joined_runs``) ------------------------------
    def _join(self, e: PodRun) -> None:
        """``e`` was just parked in the unschedulable pool: it absorbs the run parked there whose
        first pod's ``seq`` follows its last pod's, or joins the one whose last pod's precedes its
        first, when they are alike (``RunJoins.alike``). Consecutive ``seq`` means that no other entity
        sorts between them (the order is priority, timestamp, ``seq``), so on the reference path
        their pods, each its own entity, are moved, popped and tried one after the other from now
        on, as the pods of one run are; whatever would treat one of them differently splits the
        run first, as for any run (``peel``, ``single``, ``leave``). Pods that left the queue for
        good between them (bound, deleted) change none of that: the run before ``e`` is the one
        holding the greatest ``seq`` still queued before ``e``'s first."""
        joins = self._joins
        assert joins is not None
        prev = joins.before(e)
        if prev is not None and self._joinable(prev, e):
            self._absorb(prev, e)
            e = prev
        nxt = joins.after(e)
        if nxt is not None and self._joinable(e, nxt):
            self._absorb(e, nxt)
        joins.index(e)

    def _joinable(self, first: PodRun, then: PodRun) -> bool:
        """``then`` (parked right after ``first`` in ``seq``) can join ``first``: alike, and the two
        within ``MAX_RUN_PODS``."""
        if first.pods[0].group_key and not self._join_group_runs:
            return False
        return len(first.pods) + len(then.pods) <= MAX_RUN_PODS and self._joins.alike(first, then, self.backoff_duration, self.config.pod_max_backoff_ms)  # type: ignore[union-attr]

    def _absorb(self, into: PodRun, other: PodRun) -> None:
        """``other`` (in the pool, after ``into`` in ``seq``) ends: its pods join ``into``."""
        self._detach(other)
        self.entities.pop(other.key, None)
        self._tokens.pop(other.key, None)
        self._joins.unindex_last(into)  # type: ignore[union-attr]
        into.pods += other.pods
        into.seqs += other.seqs
        into.failures = None  # (its streak was for its own pods: the next failure opens one for all)
        entity_of = self._entity_of
        for pod in other.pods:
            entity_of[pod.uid] = into
        if self._last_run is other:
            self._last_run = None
        self._joins.joins += 1  # type: ignore[union-attr]
