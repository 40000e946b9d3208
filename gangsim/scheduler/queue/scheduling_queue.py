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
from collections.abc import Callable, Iterable

from gangsim.api.config import SchedulerConfig
from gangsim.scheduler.framework.interface import Status
from gangsim.scheduler.framework.types import PodRun, QueuedEntity, QueueLocation
from gangsim.scheduler.queue.joined_runs import RunJoins
from gangsim.scheduler.queue.pod_runs import PodRunMoves
from gangsim.scheduler.queue.sleepers import Sleeper, Sleeping, advance

NEVER = 1 << 62
ACTIVE = QueueLocation.ACTIVE
BACKOFF = QueueLocation.BACKOFF
UNSCHEDULABLE = QueueLocation.UNSCHEDULABLE
GATED = QueueLocation.GATED
IN_FLIGHT = QueueLocation.IN_FLIGHT
NONE = QueueLocation.NONE
WAITING = QueueLocation.WAITING


class SchedulingQueue(PodRunMoves):
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
        group_runs: bool = True,
        join_group_runs: bool = True,
    ) -> None:
        """``entity_of``: pod uid -> its entity, which the queue keeps right for the pods of a
        ``PodRun`` it splits or joins; ``pod_runs``: ``add_pod`` queues a Job's pods as runs;
        ``join_runs`` (with ``pod_runs``): runs of different Jobs that failed alike are joined
        in the unschedulable pool (``_join``). ``group_runs`` False: the pods of a PodGroup are
        each their own entity, never in a run (with gang scheduling, where GangScheduling gates,
        activates and moves them member by member: ``fastpath.gated_members``); only pods of
        none form runs. ``join_group_runs`` False: runs of a PodGroup's pods are not joined (a
        PreEnqueue plugin reads more than the spec: ``PRE_ENQUEUE_SPEC_ONLY``; a pod of no
        PodGroup has nothing else to read, so its runs are joined anyway: ``RunJoins.alike``)."""
        self.config = config
        self._entity_of: dict[int, QueuedEntity] = {} if entity_of is None else entity_of
        self._pod_runs = pod_runs
        self._group_runs = group_runs
        self._join_group_runs = join_group_runs
        self._joins = RunJoins() if pod_runs and join_runs else None  # FastPath.joined_runs
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
        # FastPath.bulk_retries (``queue.sleepers``): sleeping entities by key, and by next retry
        self.sleeping: dict[str, Sleeping] = {}
        self._sleep_heap: list[tuple[int, int, Sleeping]] = []
        # the last ``pop``: (when, the QueueSort key of the entity it took from activeQ, whether a
        # pop at that instant found activeQ empty): where a sleeper's retry due now stands
        self._popped: tuple[int, tuple, bool] = (-1, (), False)

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
            if self._joins is not None and isinstance(e, PodRun):
                self._joins.unindex(e)
            for p in e.unschedulable_plugins:
                bucket = self._by_plugin.get(p)
                if bucket is not None:
                    bucket.pop(e.key, None)
        elif e.where == GATED:
            self.gated.pop(e.key, None)
            self.gate_changes += 1
        e.where = NONE

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
        # initial × 2^(count-1), capped (upstream doubles in a loop, stopping at the cap; the
        # shift is bounded, as the doubling past the cap changes nothing)
        return min(self.config.pod_initial_backoff_ms << min(count - 1, 62), cap)

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
            if self._joins is not None:
                self._joins.appended(self._seq)
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
        if self._run_pre_enqueue(e):
            self._enqueue(e, check_backoff)

    def _enqueue(self, e: QueuedEntity, check_backoff: bool) -> None:
        """``e`` passed PreEnqueue: to backoffQ while it is backing off, else to activeQ."""
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
        if self._joins is not None and isinstance(e, PodRun):
            self._join(e)

    # ---- after an attempt (AddUnschedulableIfNotPresent / AddAttemptedPodGroupIfNeeded) ------
    def requeue_after_failure(self, e: QueuedEntity, *, to_backoff: bool, sleeper: Sleeper | None = None) -> None:
        """``to_backoff``: groups (§4.5) and errored pods go straight to backoffQ/activeQ;
        rejected single pods are parked in the unschedulable pool. ``sleeper``: ``e``'s retries
        until the next generation change repeat this attempt (``FastPath.bulk_retries``): in
        backoffQ it sleeps (``queue.sleepers``) unless something already could change its next
        attempt (``is_stale``: then it may be popped early)."""
        e.timestamp_ms = self._now()
        if e.key not in self.entities:
            self.entities[e.key] = e
            if self._joins is not None:
                self._joins.gaps = False  # (back after ``done``: its seqs were taken for gone)
        if to_backoff or not e.unschedulable_plugins:
            if self._run_pre_enqueue(e):
                done = self.backoff_done_ms(e)  # (``is_backing_off``, computed once)
                if self._now() < done:
                    if sleeper is not None and not self._is_stale(e):
                        self._sleep(e, sleeper, done)
                    else:
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
        if e.key in self.sleeping:
            self.wake(e, place=False)
        self._detach(e)
        self.entities.pop(e.key, None)
        self._tokens.pop(e.key, None)
        if self._joins is not None:
            for s in e.seqs if isinstance(e, PodRun) else (e.seq,):
                self._joins.gone(s)

    def wait(self, e: QueuedEntity) -> None:
        """``e``'s pod waits at Permit: out of every queue structure, in flight until it is
        allowed (bound: ``done``) or rejected (requeued with its ``seq``). Unlike ``done`` its
        ``seq`` stays taken, so no run is joined across it (``_join``): it may sort between."""
        if e.key in self.sleeping:
            self.wake(e, place=False)
        self._detach(e)
        e.where = WAITING
        self.entities[e.key] = e

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

    def move_passed(self, *entities: QueuedEntity) -> None:
        """``move_entity`` for each gated entity, in order, whose PreEnqueue is known to pass (the
        caller left on each what asking PreEnqueue would: ``fastpath.gated_members``, siblings
        let go)."""
        for e in entities:
            e.gated_message = ""  # (``_run_pre_enqueue`` on a pass)
            self._enqueue(e, True)

    def activate(self, e: QueuedEntity) -> None:
        """``Activate``: straight to activeQ (if not in flight)."""
        if e.key in self.sleeping:
            self.wake(e)
        if e.where in (GATED, UNSCHEDULABLE, BACKOFF):
            if self._run_pre_enqueue(e):
                self._push_active(e)

    # ---- timers -------------------------------------------------------------------------------
    def flush_backoff(self) -> None:
        """Move every entity whose backoff is complete to activeQ (the 1 s flush)."""
        now = self._now()
        self._backoff_wake = None
        if self._sleep_heap and self._sleep_heap[0][0] <= now:
            self._flush_sleepers(now)
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
            key, token, e = heapq.heappop(heap)
            if token == self._tokens.get(e.key):
                self._detach(e)
                e.where = IN_FLIGHT
                if isinstance(e, PodRun):
                    e.popped_done = None
                now = self._now()
                self._popped = (now, key, self._popped[0] == now and self._popped[2])
                return e
        self._popped = (self._now(), (), True)
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
        if e.key in self.sleeping:
            self.wake(e)
        self._detach(e)
        self.entities[e.key] = e
        e.where = IN_FLIGHT

    def has_active(self) -> bool:
        heap = self._active
        while heap and heap[0][1] != self._tokens.get(heap[0][2].key):
            heapq.heappop(heap)
        return bool(heap)

    # ---- sleeping entities (FastPath.bulk_retries, ``queue.sleepers``) ------------------------------
    def _sleep(self, e: QueuedEntity, sleeper: Sleeper, done: int) -> None:
        """``e`` in backoffQ until ``done``, asleep: in no heap, with no wake."""
        self._detach(e)
        e.where = BACKOFF
        s = Sleeping(e, sleeper, done, self.backoff_duration(e))
        self.sleeping[e.key] = s
        heapq.heappush(self._sleep_heap, (done, self._tokens[e.key], s))

    def _advance(self, s: Sleeping, limit: int) -> None:
        advance(s, limit, self.backoff_duration, self.backoff_done_ms)

    def _flush_sleepers(self, now: int) -> None:
        """The flush at ``now`` (``flush_backoff``) finds sleepers due: their retries before now are
        counted; one whose retry falls on now leaves backoffQ as the reference's flush moves it,
        awake (that retry runs for real); the others sleep on until their next retry."""
        heap = self._sleep_heap
        while heap and heap[0][0] <= now:
            _, token, s = heapq.heappop(heap)
            e = s.entity
            if self.sleeping.get(e.key) is not s or token != self._tokens.get(e.key):
                continue
            self._advance(s, now)
            if s.due == now:
                del self.sleeping[e.key]
                self._push_active(e)
            else:
                heapq.heappush(heap, (s.due, token, s))

    def wake(self, e: QueuedEntity, *, place: bool = True) -> None:
        """``e`` (asleep) where the reference has it at this point of the instant: its retries
        until now counted, then in backoffQ until its next one, or in activeQ when its retry due
        now was flushed already and the pops now have not reached it (its QueueSort key is after
        the key of the entity in flight, and activeQ was not found empty now). A retry due now
        before any pop now is still ahead (the flush precedes the instant's cycles): backoffQ
        until now. ``place=False``: counted only (it leaves the queue)."""
        s = self.sleeping.pop(e.key)
        now = self._now()
        self._advance(s, now)
        if s.due == now:
            at, key, drained = self._popped
            if at == now and (drained or self._sort_key(e) < key):
                self._advance(s, now + 1)  # popped before the entity in flight: it ran
            elif at == now:
                if place:
                    self._push_active(e)
                return
        if place:
            self._push_backoff(e, s.due)

    def wake_all(self) -> None:
        """Every sleeper awake (``wake``): the scheduler generation is about to change."""
        if not self.sleeping:
            return
        for e in [s.entity for s in self.sleeping.values()]:
            self.wake(e)
        self._sleep_heap.clear()

    def advance_sleepers(self, limit: int) -> None:
        """Count every sleeper's retries before ``limit`` (the end of a replay, or of a test's
        ``run_until``); they sleep on."""
        for s in self.sleeping.values():
            self._advance(s, limit)
        self._sleep_heap = [(s.due, self._tokens[s.entity.key], s) for s in self.sleeping.values()]
        heapq.heapify(self._sleep_heap)
