"""A discrete-event loop in integer milliseconds (after SimPy's ``Environment``).

Heap entries are ``(t_ms, phase, seq, handler, payload, productive)``. ``seq`` comes from a counter owned by
the engine, so two engines never share state and equal-time entries keep insertion order within a
phase. Timers are cancelled lazily: the owner keeps a token and stale entries are skipped.

The trace's own events (``feed``) arrive in time order before the run: they wait in a list beside
the heap, and the run takes whichever of the list's next entry and the heap's top comes first by
``(t_ms, phase, seq)`` — the order one heap of all of them gives, without a sift through a heap
as large as the trace for each (a quarter of a million trace events: ~2 µs each).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from enum import IntEnum
from typing import Any

Handler = Callable[[Any], None]


class Phase(IntEnum):
    """Order of work inside one instant (documented in README "Time and ordering")."""

    API = 0  # trace events: objects created, patched, deleted, nodes failing
    KUBELET = 1  # pods finishing their work, victims ending their grace period
    TIMEOUT = 2  # rendezvous and Permit timeouts
    QUEUE = 3  # backoff expiry and the unschedulable-pods flush
    SCHEDULE = 4  # the scheduler drains its queue (binding takes no simulated time)
    SAMPLE = 5  # the timeline's sample of the state the instant leaves (``Cluster._sample``)


class Timer:
    """A cancellable heap entry (lazy deletion)."""

    __slots__ = ("cancelled", "t_ms", "_engine", "_productive")

    def __init__(self, t_ms: int, engine: "Engine", productive: bool) -> None:
        self.t_ms = t_ms
        self.cancelled = False
        self._engine = engine
        self._productive = productive

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            if self._productive:
                self._engine.productive -= 1


class Engine:
    def __init__(self) -> None:
        self.now: int = 0
        self._heap: list[tuple[int, int, int, Handler, Any, bool]] = []
        self._fed: list[tuple[int, int, int, Handler, Any, bool]] = []  # ``feed``'s entries, in order
        self._next_fed = 0  # the first of them not run yet
        self._seq = itertools.count()
        # entries that can change the cluster (not queue housekeeping): the run is idle at 0
        self.productive = 0

    def at(self, t_ms: int, phase: Phase, handler: Handler, payload: Any = None, *, productive: bool = True) -> None:
        if t_ms < self.now:
            raise RuntimeError(f"event scheduled in the past: {t_ms} < {self.now}")
        if productive:
            self.productive += 1
        heapq.heappush(self._heap, (t_ms, phase, next(self._seq), handler, payload, productive))

    def timer(self, t_ms: int, phase: Phase, handler: Handler, payload: Any = None) -> Timer:
        """Like ``at`` but cancellable; a cancelled timer stops counting as productive at once."""
        if t_ms < self.now:
            raise RuntimeError(f"timer set in the past: {t_ms} < {self.now}")
        token = Timer(t_ms, self, True)
        self.productive += 1

        def fire(p: Any, _token: Timer = token, _handler: Handler = handler) -> None:
            if not _token.cancelled:
                self.productive -= 1
                _token.cancelled = True
                _handler(p)

        # the timer keeps its own count (cancel() may take it back early): not productive here
        heapq.heappush(self._heap, (t_ms, phase, next(self._seq), fire, payload, False))
        return token

    def feed(self, t_ms: int, phase: Phase, handler: Handler, payload: Any = None) -> None:
        """``at`` (productive) for an entry that comes no earlier than the last one fed (the trace's
        events, in order), kept in the list beside the heap; one that would come earlier goes to
        the heap. The run's order is ``at``'s either way."""
        entry = (t_ms, phase, next(self._seq), handler, payload, True)
        if t_ms < self.now:
            raise RuntimeError(f"event scheduled in the past: {t_ms} < {self.now}")
        self.productive += 1
        fed = self._fed
        if len(fed) > self._next_fed and entry < fed[-1]:
            heapq.heappush(self._heap, entry)
        else:
            fed.append(entry)

    def _first(self) -> tuple | None:
        """The entry the run takes next (not taken)."""
        heap, fed, i = self._heap, self._fed, self._next_fed
        if i < len(fed) and (not heap or fed[i] < heap[0]):
            return fed[i]
        return heap[0] if heap else None

    def peek(self) -> int | None:
        first = self._first()
        return None if first is None else first[0]

    def run(self, until_ms: int, stop: Callable[[], bool] | None = None) -> None:
        """Run every entry with ``t_ms < until_ms`` (the horizon is exclusive).

        ``stop`` is asked between instants; returning True ends the run early.
        """
        heap, fed = self._heap, self._fed
        pop = heapq.heappop
        while True:
            i = self._next_fed
            if i < len(fed) and (not heap or fed[i] < heap[0]):
                t = fed[i][0]
                from_heap = False
            elif heap:
                t = heap[0][0]
                from_heap = True
            else:
                break
            if t >= until_ms:
                break
            if t != self.now:
                if stop is not None and stop():
                    return
                self.now = t
            if from_heap:
                _, _, _, handler, payload, productive = pop(heap)
            else:
                _, _, _, handler, payload, productive = fed[i]
                fed[i] = None  # type: ignore[call-overload]  # (its payload is freed as the heap's would be)
                self._next_fed = i + 1
            if productive:
                self.productive -= 1
            handler(payload)
