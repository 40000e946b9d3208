"""Entities asleep in backoffQ (``FastPath.bulk_retries``).

A stuck PodGroup on an unchanged cluster is retried at every backoff expiry (1 s, 2 s, … up to
10 s × √size, each aligned to the 1 s flush window) for as long as nothing changes, and each of
those retries repeats its last attempt exactly (``fastpath.attempts``). Its retry times until the
next change are fixed by the backoff alone: the first at ``backoff_done_ms`` of its requeue, each
next one at ``backoff_done_ms`` of the one before (the retry's requeue is its timestamp, and its
count grows by one). A sleeping entity stays in backoffQ (``where`` is BACKOFF) but in no heap and
with no wake; ``advance`` counts the retries the reference path would have run before a time, at
once: in a loop while the backoff still doubles, then in closed form (at the cap every retry is
the same period after the one before: a retry time is a flush tick, a multiple of the window).

The queue wakes a sleeper (puts it where the reference has it, in backoffQ or activeQ) before the
scheduler generation changes and before anything else touches it, and advances it at every flush
that finds it due (a retry that falls on another entity's flush runs for real); its ``Sleeper``
accounts each batch of retries (counters, the failure streak) as the attempts would have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gangsim.scheduler.framework.types import QueuedEntity


class Sleeper(Protocol):
    """What a sleeping entity's retries do besides the queue's own counters (``fastpath.bulk``)."""

    def retried(self, times: int, first_ms: int, last_ms: int, max_gap_ms: int) -> None:
        """``times`` retries, the first at ``first_ms``, the last at ``last_ms``, at most
        ``max_gap_ms`` apart after the first, each repeating the attempt the entity slept after."""
        ...


@dataclass(slots=True, eq=False)
class Sleeping:
    entity: QueuedEntity
    sleeper: Sleeper
    due: int  # its next retry: the flush tick at which the reference's backoffQ releases it
    duration: int  # the backoff ``due`` was computed with
    period: int = 0  # at the backoff's cap: the time from one retry to the next (0: not known yet)


def advance(s: Sleeping, limit: int, backoff_duration: Callable[[QueuedEntity], int], backoff_done_ms: Callable[[QueuedEntity], int]) -> None:
    """Run ``s``'s retries before ``limit`` (exclusive) as the reference path would: each one
    counted on the entity (``attempts``, ``unschedulable_count``, ``timestamp_ms``: what
    ``finish`` and ``requeue_after_failure`` change) and all of them told to the sleeper at once."""
    e = s.entity
    times = first = last = gap = 0
    while s.due < limit:
        t = s.due
        if times:
            gap = max(gap, t - last)
        else:
            first = t
        if s.period:
            n = (limit - 1 - t) // s.period + 1
            if n > 1:
                gap = max(gap, s.period)
            last = t + (n - 1) * s.period
            times += n
            e.attempts += n
            e.unschedulable_count += n
            e.timestamp_ms = last
            s.due = last + s.period
            break
        times += 1
        last = t
        e.attempts += 1
        e.unschedulable_count += 1
        e.timestamp_ms = t
        d = backoff_duration(e)
        s.due = backoff_done_ms(e)
        if d == s.duration:  # the backoff stopped doubling: at its cap from here on
            s.period = s.due - t
        s.duration = d
    if times:
        s.sleeper.retried(times, first, last, gap)
