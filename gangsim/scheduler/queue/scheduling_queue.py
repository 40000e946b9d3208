"""The scheduling queue of SEMANTICS §4, in simulated time.

- activeQ: heap in the QueueSort plugin's order (PrioritySort: priority desc, timestamp asc,
  arrival seq).
- backoffQ: two heaps (normal and error) by (backoff window, then QueueSort order). An
  entity leaves at the first 1 s flush tick after its backoff window (§4.3).
- unschedulable pool: entities rejected by plugins, indexed by rejecting plugin so a cluster
  event moves exactly the entities whose plugins registered for it (queueing hints, §4.5), and
  flushed after 5 min on 30 s ticks. Gated entities (PreEnqueue) are parked beside it.

Heaps use lazy invalidation: each push carries the entity's ``token``; moving an entity gives it
a new one. Tokens come from one counter for every entity, so an entity that leaves for good
(``done``) drops its token (a heap entry left behind can then match no token: no entity ever
gets a used one again), and the table holds only the entities still queued.
Pop-from-backoffQ (§4.3) takes the head of the normal backoffQ when activeQ is empty — but only
an entity whose last attempt predates the latest cluster change: repeating an attempt on an
unchanged cluster cannot change its outcome, and in a zero-time cycle it would spin forever
(``is_stale``: has anything that could help it happened since its last attempt?).
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Iterable

from gangsim.api.config import SchedulerConfig
from gangsim.scheduler.framework.interface import Status
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, PodRun, QueuedEntity, QueueLocation

NEVER = 1 << 62
ACTIVE = QueueLocation.ACTIVE
BACKOFF = QueueLocation.BACKOFF
UNSCHEDULABLE = QueueLocation.UNSCHEDULABLE
GATED = QueueLocation.GATED
IN_FLIGHT = QueueLocation.IN_FLIGHT


class SchedulingQueue:
    def __init__(
        self,
        config: SchedulerConfig,
        *,
        now: Callable[[], int],
        is_stale: Callable[[QueuedEntity], bool],
        wake_at: Callable[[int], None],
        pre_enqueue: Callable[[QueuedEntity], Status | None],
        sort_key: Callable[[QueuedEntity], tuple],
        entity_of: dict[int, QueuedEntity] | None = None,
        pod_runs: bool = False,
        join_runs: bool = False,
    ) -> None:
        """``entity_of``: pod uid -> its entity, which the queue keeps right for the pods of a
        ``PodRun`` it splits or joins; ``pod_runs``: ``add_pod`` queues a Job's pods as runs;
        ``join_runs`` (with ``pod_runs``): runs of different Jobs that failed alike are joined
        in the unschedulable pool (``_join``)."""
        self.config = config
        self._entity_of: dict[int, QueuedEntity] = {} if entity_of is None else entity_of
        self._pod_runs = pod_runs
        self._join_runs = pod_runs and join_runs
        # the runs in the unschedulable pool by their first and by their last pod's ``seq`` (``_join``)
        self._pool_first: dict[int, PodRun] = {}
        self._pool_last: dict[int, PodRun] = {}
        self.joins = 0  # runs joined so far (a work counter)
        # ``_left[s]``: ``s`` while an entity holding ``seq`` s is queued, a smaller seq once it
        # left for good (``done``, ``leave``): ``_queued_at_or_before`` follows it (path halving)
        # to the greatest seq still queued. ``_gaps``: False once an entity came back after
        # leaving (a pod rejected at Permit; not under ``pod``), then only consecutive seqs join
        self._left = array("q", [0]) if self._join_runs else None
        self._gaps = True
        self._last_run: PodRun | None = None  # the run ``add_pod`` queued last
        self._sort_key = sort_key  # the QueueSort plugin's order (PrioritySort)
        self._now = now
        self._is_stale = is_stale
        self._wake_at = wake_at
        self._pre_enqueue = pre_enqueue
        self._active: list[tuple] = []
        self._backoff: list[tuple] = []
        self._error_backoff: list[tuple] = []
        self._tokens: dict[str, int] = {}  # key -> the entity's current token (queued entities only)
        self._last_token = 0
        # a gated entity left the gated set or was gated again with another message, so far
        # (``fastpath.gated_members``: what a group's gated members were told still holds while it is unchanged)
        self.gate_changes = 0
        # an entity entered backoffQ, the unschedulable pool or the gated set (or was gated again),
        # or a run of several pods was queued, so far: while unchanged, ``activate`` of an entity
        # that was in none of them and no such run does nothing (``FastPath.sibling_activation``)
        self.activation_epoch = 0
        self.entities: dict[str, QueuedEntity] = {}
        self.unschedulable: dict[str, QueuedEntity] = {}
        self.gated: dict[str, QueuedEntity] = {}
        self._by_plugin: dict[str, dict[str, QueuedEntity]] = {}
        self._flush_heap: list[tuple[int, int, str, int]] = []
        self._seq = 0
        self._backoff_wake: int | None = None
        self._flush_wake: int | None = None

    # ---- bookkeeping -------------------------------------------------------------------------
    def _token(self, e: QueuedEntity) -> int:
        """A new token for ``e``, unique over all entities: two heap entries never tie (a
        ``PodRun``'s stale entry has the sort key its first pod's own entity gets)."""
        self._last_token = t = self._last_token + 1
        self._tokens[e.key] = t
        return t

    def _detach(self, e: QueuedEntity) -> None:
        """Remove ``e`` from whatever structure holds it (heaps lazily)."""
        self._token(e)
        if e.where == UNSCHEDULABLE:
            self.unschedulable.pop(e.key, None)
            if self._join_runs and isinstance(e, PodRun):
                self._unindex(e)
            for p in e.unschedulable_plugins:
                bucket = self._by_plugin.get(p)
                if bucket is not None:
                    bucket.pop(e.key, None)
        elif e.where == GATED:
            self.gated.pop(e.key, None)
            self.gate_changes += 1
        e.where = QueueLocation.NONE

    def __len__(self) -> int:
        return len(self.entities)

    # ---- backoff (§4.3) ----------------------------------------------------------------------
    def backoff_duration(self, e: QueuedEntity) -> int:
        count = e.consecutive_errors if e.consecutive_errors > 0 else e.unschedulable_count
        if e.attempts == 0 or count == 0:
            return 0
        cap = self.config.pod_max_backoff_ms
        if e.size > 1:
            cap = int(cap * math.sqrt(e.size))  # maxBackoff × √(entity size) for groups
        d = self.config.pod_initial_backoff_ms
        for _ in range(1, count):
            if d > cap - d:
                return cap
            d += d
        return min(d, cap)

    def backoff_done_ms(self, e: QueuedEntity) -> int:
        """First instant at which ``e`` no longer backs off (end of its 1 s ordering window)."""
        d = self.backoff_duration(e)
        if d == 0:
            return e.timestamp_ms
        expiration = e.timestamp_ms + d
        w = self.config.backoff_window_ms if self.config.pop_from_backoff else 0
        if w <= 0:
            return expiration
        return (expiration // w) * w + w

    def is_backing_off(self, e: QueuedEntity) -> bool:
        return self._now() < self.backoff_done_ms(e)

    # ---- adding ------------------------------------------------------------------------------
    def add(self, e: QueuedEntity) -> None:
        """A new entity (pod created / group formed): PreEnqueue, then activeQ."""
        self.entities[e.key] = e
        if not e.seq:
            self._seq += 1
            e.seq = self._seq
            if self._left is not None:
                self._left.append(self._seq)
        self._move_to_active_or_backoff(e, check_backoff=False)

    def _run_pre_enqueue(self, e: QueuedEntity) -> bool:
        st = self._pre_enqueue(e)
        if st is None:
            e.gated_message = ""
            return True
        self.activation_epoch += 1
        if e.where == GATED:  # gated again: it stays in the gated set (which no heap holds)
            if e.gated_message != st.message:
                self.gate_changes += 1
                e.gated_message = st.message
            return False
        self._detach(e)
        e.gated_message = st.message
        e.where = GATED
        self.gated[e.key] = e
        return False

    def _move_to_active_or_backoff(self, e: QueuedEntity, *, check_backoff: bool = True) -> None:
        if not self._run_pre_enqueue(e):
            return
        if check_backoff and self.is_backing_off(e):
            self._push_backoff(e)
        else:
            self._push_active(e)

    def _push_active(self, e: QueuedEntity) -> None:
        self._detach(e)
        e.where = ACTIVE
        if len(e.pods) > 1 and isinstance(e, PodRun):
            self.activation_epoch += 1
        heapq.heappush(self._active, (self._sort_key(e), self._tokens[e.key], e))

    def _push_backoff(self, e: QueuedEntity, done: int | None = None) -> None:
        self._detach(e)
        e.where = BACKOFF
        self.activation_epoch += 1
        if done is None:
            done = self.backoff_done_ms(e)
        heap = self._backoff if done == NEVER or e.consecutive_errors == 0 else self._error_backoff
        heapq.heappush(heap, (done, self._sort_key(e), self._tokens[e.key], e))
        if done == NEVER:
            return
        if self._backoff_wake is None or done < self._backoff_wake:
            self._backoff_wake = done
            self._wake_at(done)

    def _park_unschedulable(self, e: QueuedEntity, parked_ms: int | None = None) -> None:
        self._detach(e)
        e.where = UNSCHEDULABLE
        self.activation_epoch += 1
        e.parked_ms = self._now() if parked_ms is None else parked_ms
        self.unschedulable[e.key] = e
        for p in e.unschedulable_plugins:
            self._by_plugin.setdefault(p, {})[e.key] = e
        heapq.heappush(self._flush_heap, (e.parked_ms, e.seq, e.key, self._tokens[e.key]))
        if self._flush_wake is None or self._flush_wake <= e.parked_ms:
            # (a pending flush tick stays right: parking times only grow, so the oldest entry's
            # tick can only move later, and _schedule_flush never moves a pending tick later)
            self._schedule_flush()
        if self._join_runs and isinstance(e, PodRun):
            self._join(e)

    # ---- after an attempt (AddUnschedulableIfNotPresent / AddAttemptedPodGroupIfNeeded) ------
    def requeue_after_failure(self, e: QueuedEntity, *, to_backoff: bool) -> None:
        """``to_backoff``: groups (§4.5) and errored pods go straight to backoffQ/activeQ;
        rejected single pods are parked in the unschedulable pool."""
        e.timestamp_ms = self._now()
        if e.key not in self.entities:
            self.entities[e.key] = e
            self._gaps = False  # (back after ``done``: its seqs were taken for gone)
        if to_backoff or not e.unschedulable_plugins:
            if self._run_pre_enqueue(e):
                done = self.backoff_done_ms(e)  # (``is_backing_off``, computed once)
                if self._now() < done:
                    self._push_backoff(e, done)
                elif not self._is_stale(e):
                    # No backoff and nothing changed since the attempt: an immediate retry would
                    # repeat it exactly (a zero-time spin). Wait in backoffQ for the next change.
                    self._push_backoff(e, done=NEVER)
                else:
                    self._push_active(e)
        else:
            self._park_unschedulable(e)

    def reposition(self, e: QueuedEntity) -> None:
        """Re-insert ``e`` after its timestamp changed."""
        if e.where == ACTIVE:
            self._push_active(e)
        elif e.where == BACKOFF:
            self._push_backoff(e)

    def done(self, e: QueuedEntity) -> None:
        """The entity left the queue for good (bound, deleted)."""
        self._detach(e)
        self.entities.pop(e.key, None)
        self._tokens.pop(e.key, None)
        if self._left is not None:
            for s in e.seqs if isinstance(e, PodRun) else (e.seq,):
                self._gone(s)

    # ---- events (queueing hints, §4.5) -------------------------------------------------------
    def move_for_plugins(self, plugins: Iterable[str]) -> int:
        """Move unschedulable entities rejected by any of ``plugins`` to backoffQ/activeQ."""
        if not self.unschedulable:
            return 0
        found: dict[str, QueuedEntity] = {}
        for p in plugins:
            bucket = self._by_plugin.get(p)
            if bucket:
                found.update(bucket)
        for e in sorted(found.values(), key=lambda x: x.seq):
            self._move_to_active_or_backoff(e)
        return len(found)

    def move_entity(self, e: QueuedEntity) -> None:
        """Re-run PreEnqueue for a gated or unschedulable entity (its pods or group changed)."""
        if e.where in (GATED, UNSCHEDULABLE):
            self._move_to_active_or_backoff(e)

    def activate(self, e: QueuedEntity) -> None:
        """``Activate``: straight to activeQ (if not in flight)."""
        if e.where in (GATED, UNSCHEDULABLE, BACKOFF):
            if self._run_pre_enqueue(e):
                self._push_active(e)

    # ---- timers -------------------------------------------------------------------------------
    def flush_backoff(self) -> None:
        """Move every entity whose backoff is complete to activeQ (the 1 s flush)."""
        now = self._now()
        self._backoff_wake = None
        for heap in (self._backoff, self._error_backoff):
            while heap:
                done, _, token, e = heap[0]
                if token != self._tokens.get(e.key):
                    heapq.heappop(heap)
                    continue
                if done > now:
                    break
                heapq.heappop(heap)
                self._push_active(e)
        nxt = self._next_backoff_done()
        if nxt is not None:
            self._backoff_wake = nxt
            self._wake_at(nxt)

    def _next_backoff_done(self) -> int | None:
        best = None
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][2] != self._tokens.get(heap[0][3].key):
                heapq.heappop(heap)
            if heap and heap[0][0] != NEVER and (best is None or heap[0][0] < best):
                best = heap[0][0]
        return best

    def _schedule_flush(self) -> None:
        heap = self._flush_heap
        while heap and (heap[0][2] not in self.unschedulable or heap[0][3] != self._tokens.get(heap[0][2])):
            heapq.heappop(heap)
        if not heap:
            return
        interval = self.config.unschedulable_flush_interval_ms
        max_age = self.config.pod_max_in_unschedulable_ms
        # first flush tick T (a multiple of the interval) with T - parked > max_age
        tick = ((heap[0][0] + max_age) // interval + 1) * interval
        if self._flush_wake is None or tick < self._flush_wake or self._flush_wake <= self._now():
            self._flush_wake = tick
            self._wake_at(tick)

    def flush_unschedulable(self) -> None:
        """``flushUnschedulablePodsLeftover``: entities parked for more than 5 min move on."""
        now = self._now()
        if self._flush_wake is not None and now < self._flush_wake:
            return
        self._flush_wake = None
        max_age = self.config.pod_max_in_unschedulable_ms
        moved: list[QueuedEntity] = []
        heap = self._flush_heap
        while heap:
            parked, _, key, token = heap[0]
            e = self.unschedulable.get(key)
            if e is None or token != self._tokens.get(key):
                heapq.heappop(heap)
                continue
            if now - parked <= max_age:
                break
            heapq.heappop(heap)
            moved.append(e)
        for e in sorted(moved, key=lambda x: x.seq):
            self._move_to_active_or_backoff(e)
        self._schedule_flush()

    # ---- popping --------------------------------------------------------------------------------
    def pop(self) -> QueuedEntity | None:
        heap = self._active
        while heap:
            _, token, e = heapq.heappop(heap)
            if token == self._tokens.get(e.key):
                self._detach(e)
                e.where = IN_FLIGHT
                if isinstance(e, PodRun):
                    e.popped_done = None
                return e
        return self._pop_backoff_early(waiting_for_change_only=not self.config.pop_from_backoff)

    def _pop_backoff_early(self, *, waiting_for_change_only: bool) -> QueuedEntity | None:
        heap = self._backoff
        skipped: list[tuple] = []
        found = None
        while heap:
            item = heapq.heappop(heap)
            e = item[3]
            if item[2] != self._tokens.get(e.key):
                continue
            if (waiting_for_change_only and item[0] != NEVER) or not self._is_stale(e):
                skipped.append(item)
                continue
            found = e
            if isinstance(e, PodRun):
                e.popped_done = item[0]
            break
        for item in skipped:
            heapq.heappush(heap, item)
        if found is not None:
            self._detach(found)
            found.where = IN_FLIGHT
        return found

    def take(self, e: QueuedEntity) -> None:
        """``PopSpecificPod``: ``e`` joins the cycle in flight (a CompositePodGroup hierarchy's
        other PodGroups join the cycle of the one popped)."""
        self._detach(e)
        self.entities[e.key] = e
        e.where = IN_FLIGHT

    def has_active(self) -> bool:
        heap = self._active
        while heap and heap[0][1] != self._tokens.get(heap[0][2].key):
            heapq.heappop(heap)
        return bool(heap)

    # ---- pod runs (FastPath.pod_runs) -----------------------------------------------------------
    def add_pod(self, pod: PodInfo) -> QueuedEntity:
        """A new pod's entity, added (``add``). With ``pod_runs`` a signable pod joins the run the
        last ``add_pod`` queued when on the reference path the two entities would be alike and
        adjacent: same spec object (so the same signature, priority and PreEnqueue verdict:
        PreEnqueue reads a pod's spec and group only), same group key, nothing queued since, and
        the run still as it was added (in activeQ, never attempted, timestamped now)."""
        now = self._now()
        run = self._last_run
        if self._pod_runs and pod.signature and run is not None:
            last = run.pods[-1]
            if last.spec is pod.spec and last.group_key == pod.group_key and run.seqs[-1] == self._seq and run.where == ACTIVE and run.attempts == 0 and run.timestamp_ms == now:
                self._seq += 1
                self.activation_epoch += 1
                run.pods.append(pod)
                run.seqs.append(self._seq)
                if self._left is not None:
                    self._left.append(self._seq)
                return run
        if not (self._pod_runs and pod.signature):
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
            indexed = self._join_runs and e.where == UNSCHEDULABLE
            if indexed:
                self._unindex(e)
            i = next(i for i, p in enumerate(e.pods) if p is pod)
            if self._left is not None:
                self._gone(e.seqs[i])
            del e.pods[i], e.seqs[i]
            e.seq = e.seqs[0]
            e.failures = e.pre_enqueue_memo = None
            if indexed:
                self._index(e)
            return
        self.done(e)

    # ---- joined runs (FastPath.joined_runs) -------------------------------------------------------
    def _join(self, e: PodRun) -> None:
        """``e`` was just parked in the unschedulable pool: it absorbs the run parked there whose
        first pod's ``seq`` follows its last pod's, or joins the one whose last pod's precedes its
        first, when they are alike (``_alike``). Consecutive ``seq`` means that no other entity
        sorts between them (the order is priority, timestamp, ``seq``), so on the reference path
        their pods, each its own entity, are moved, popped and tried one after the other from now
        on, as the pods of one run are; whatever would treat one of them differently splits the
        run first, as for any run (``peel``, ``single``, ``leave``). Pods that left the queue for
        good between them (bound, deleted) change none of that: the run before ``e`` is the one
        holding the greatest ``seq`` still queued before ``e``'s first."""
        before = e.seqs[0] - 1
        prev = self._pool_last.get(self._queued_at_or_before(before) if self._gaps else before)
        if prev is not None and self._alike(prev, e):
            self._absorb(prev, e)
            e = prev
        nxt = self._pool_first.get(e.seqs[-1] + 1)
        if nxt is not None and self._alike(e, nxt):
            self._absorb(e, nxt)
        self._index(e)

    def _alike(self, a: PodRun, b: PodRun) -> bool:
        """Would ``a``'s pods and ``b``'s, each its own entity, stay alike on the reference path:
        just failed at the same instant on the same cluster (timestamp, parking time, scheduler
        generation, rejecting plugins), one memo key (signature, priority, preemption policy:
        ``fastpath.repeat``) and one backoff from now on (the same count of failures, or both at
        the cap, where more failures change nothing: ``backoff_duration`` is the only reader of
        a run's counts). Their pods are not nominated (a pod is nominated by its own PostFilter,
        on the single path, after it left its run) and passed PreEnqueue, whose plugins read the
        spec only, which does not change while they are in the run."""
        if a.timestamp_ms != b.timestamp_ms or a.parked_ms != b.parked_ms or a.last_attempt_generation != b.last_attempt_generation:
            return False
        if a.consecutive_errors or b.consecutive_errors or a.unschedulable_plugins != b.unschedulable_plugins:
            return False
        if a.unschedulable_count != b.unschedulable_count:
            cap = self.config.pod_max_backoff_ms
            if self.backoff_duration(a) != cap or self.backoff_duration(b) != cap:
                return False
        p, q = a.pods[0], b.pods[0]
        if p.nominated_row != NO_NODE or q.nominated_row != NO_NODE or not p.signature:
            return False
        s, t = p.spec, q.spec
        return s.priority == t.priority and s.preemption_policy == t.preemption_policy and (p.group_key == "") == (q.group_key == "") and p.signature == q.signature

    def _absorb(self, into: PodRun, other: PodRun) -> None:
        """``other`` (in the pool, after ``into`` in ``seq``) ends: its pods join ``into``."""
        self._detach(other)
        self.entities.pop(other.key, None)
        self._tokens.pop(other.key, None)
        if self._pool_last.get(into.seqs[-1]) is into:
            del self._pool_last[into.seqs[-1]]
        into.pods += other.pods
        into.seqs += other.seqs
        into.failures = None  # (its streak was for its own pods: the next failure opens one for all)
        entity_of = self._entity_of
        for pod in other.pods:
            entity_of[pod.uid] = into
        if self._last_run is other:
            self._last_run = None
        self.joins += 1

    def _gone(self, s: int) -> None:
        """No entity holds ``seq`` s any more, nor ever will again."""
        if 0 < s < len(self._left):  # type: ignore[arg-type]
            self._left[s] = s - 1  # type: ignore[index]

    def _queued_at_or_before(self, s: int) -> int:
        """The greatest ``seq`` at most ``s`` an entity still queued holds (0: none)."""
        left = self._left
        while left[s] != s:  # type: ignore[index]
            left[s] = left[left[s]]  # type: ignore[index]
            s = left[s]  # type: ignore[index]
        return s

    def _index(self, e: PodRun) -> None:
        self._pool_first[e.seqs[0]] = e
        self._pool_last[e.seqs[-1]] = e

    def _unindex(self, e: PodRun) -> None:
        if self._pool_first.get(e.seqs[0]) is e:
            del self._pool_first[e.seqs[0]]
        if self._pool_last.get(e.seqs[-1]) is e:
            del self._pool_last[e.seqs[-1]]
