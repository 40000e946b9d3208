"""client-go's event aggregation as the event log records it, and the failure streaks that count
a stuck gang's repeated failures in O(1) instead of pod by pod (issue 16).

``Aggregation`` is a part of ``gangsim.eventlog.EventLog`` (its base: the log's fields are
declared there): the similar-events window of each object, and the ``FailureStreak`` methods.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMBINED_PREFIX", "SIMILAR_EVENTS_INTERVAL_MS", "SIMILAR_EVENTS_MAX", "Aggregation", "FailureStreak"]

# client-go's EventAggregator (tools/record/events_cache.go, defaults): once an object has had 10
# distinct messages for one reason, each within 10 minutes of the previous, they are combined into
# one event, "(combined from similar events): <message>", which later ones only update.
SIMILAR_EVENTS_MAX = 10
SIMILAR_EVENTS_INTERVAL_MS = 600_000
COMBINED_PREFIX = "(combined from similar events): "


@dataclass(slots=True, eq=False)
class FailureStreak:
    """Attempts that failed each of ``objs`` again with the message of its last failure, word for
    word (a stuck gang retried on a cluster that changed elsewhere), or with new messages that
    its objects' combined similar-events windows take without an event (``fail_anew``). Such an
    event is aggregated away (``EventLog.event``) and changes nothing but the time of the object's
    last failure (the similar-events window) and, at its row of ``pods``, its attempt count: a
    streak keeps these once for all its objects and ``EventLog.settle`` writes them onto each
    object when anything else happens to one of them, and at the end of the replay."""

    kind: str
    reason: str
    objs: tuple[str, ...]
    messages: tuple[str, ...]
    rows: tuple[int, ...]  # each object's row in ``EventLog.pods`` (-1: none)
    opened_ms: int  # the failure the repeats repeat
    repeats: int = 0
    last_ms: int = 0
    max_gap_ms: int = 0  # the longest time between two consecutive failures of the streak
    live: bool = True
    # ``FastPath.streak_peel`` (a ``PodRun``'s streak): an event of the streak's first object
    # takes that object out (its repeats written, as ``settle`` writes them) and the streak stays
    # live for the others; ``start``: how many of ``objs`` left that way
    peelable: bool = False
    start: int = 0
    # ``FastPath.renewed_failures``: whether every object's similar-events window held combined
    # messages (``None``: not looked at yet); it cannot change while the streak is live
    combined: bool | None = None


class Aggregation:
    """The ``EventLog`` methods of the similar-events window and of failure streaks."""

    __slots__ = ()

    def _combine_similar(self, t_ms: int, kind: str, obj: str, reason: str, message: str) -> str:
        """The message to record, or "" when the event only updates an earlier combined one."""
        key = (kind, obj, reason)
        similar = self._similar.get(key)
        if similar is None or t_ms - similar[0] > SIMILAR_EVENTS_INTERVAL_MS:
            similar = self._similar[key] = [t_ms, ()]
        similar[0] = t_ms
        messages = similar[1]
        if messages is None:
            return ""
        if message not in messages:
            messages = similar[1] = (*messages, message)
        if len(messages) < SIMILAR_EVENTS_MAX:
            return message
        similar[1] = None
        return COMBINED_PREFIX + message

    def open_streak(self, t_ms: int, kind: str, reason: str, objs: tuple[str, ...], messages: tuple[str, ...], rows: tuple[int, ...], *, peelable: bool = False) -> FailureStreak:
        """Right after ``event`` recorded (or aggregated) ``reason`` with ``messages[i]`` for each
        ``objs[i]`` (row ``rows[i]`` of ``pods``, -1: none) at ``t_ms``: a streak their repeats
        can be counted in (``fail_again``). ``peelable``: see ``FailureStreak.peelable``."""
        streak = FailureStreak(kind, reason, objs, messages, rows, t_ms, peelable=peelable)
        streak_of = self._streak_of
        for obj in objs:
            old = streak_of.get((kind, obj))
            if old is not None:
                self.settle(old)
            streak_of[(kind, obj)] = streak
        return streak

    def fail_again(self, streak: FailureStreak, t_ms: int, *, times: int = 1, last_ms: int | None = None, max_gap_ms: int = 0) -> None:
        """Every object of the live ``streak`` failed again at ``t_ms`` with its last message:
        what ``event`` would do for each (aggregate it away) and one attempt more, in O(1).
        ``times``: that many failures, the first at ``t_ms``, the last at ``last_ms``, at most
        ``max_gap_ms`` apart after the first (``FastPath.bulk_retries``: a sleeping group's)."""
        assert streak.live
        streak.max_gap_ms = max(streak.max_gap_ms, t_ms - (streak.last_ms if streak.repeats else streak.opened_ms), max_gap_ms)
        streak.last_ms = t_ms if last_ms is None else last_ms
        streak.repeats += times
        self.count("events_aggregated", (len(streak.objs) - streak.start) * times)
        self.count("failures_repeated", times)  # a work counter, not in reports: attempts recorded this way

    def fail_anew(self, streak: FailureStreak, t_ms: int, messages: tuple[str, ...]) -> bool:
        """Every object still in the live ``streak`` failed again at ``t_ms``, with ``messages[i]``
        now (some or all new): recorded as a repeat, in O(1) but for each object's last failure and
        waiting reason, when ``event`` would aggregate each new message away too. That holds when
        every object's similar-events window had combined its messages (``_combine_similar`` then
        only moves the window's time) and stays open (no gap past the interval since the streak
        opened, nor now). The streak repeats the new messages from then on. False (nothing
        recorded) otherwise: the caller records the attempt pod by pod."""
        gap = t_ms - (streak.last_ms if streak.repeats else streak.opened_ms)
        if max(gap, streak.max_gap_ms) > SIMILAR_EVENTS_INTERVAL_MS or not self._combined(streak):
            return False
        k, kind, reason = streak.start, streak.kind, streak.reason
        last_failure, waiting = self._last_failure, self.pods.waiting_reason
        for obj, message, row in zip(streak.objs[k:], messages, streak.rows[k:]):
            last_failure[(kind, obj)] = (reason, message)
            if row >= 0:
                waiting[row] = message
        streak.messages = streak.messages[:k] + messages
        self.fail_again(streak, t_ms)
        self.count("failures_renewed")  # a work counter, not in reports: of those, with new messages
        return True

    def _combined(self, streak: FailureStreak) -> bool:
        """Whether each object of ``streak`` has combined messages in its similar-events window.
        Looked at once: a live streak's objects record no event of their own (one settles or
        peels it first), and its repeats leave a window combined unless a gap passed the interval
        (``fail_anew`` checks the gaps)."""
        if streak.combined is None:
            similar, kind, reason = self._similar, streak.kind, streak.reason
            streak.combined = all((w := similar.get((kind, obj, reason))) is not None and w[1] is None for obj in streak.objs[streak.start :])
        return streak.combined

    def settle(self, streak: FailureStreak) -> None:
        """Write the streak's repeats onto its objects (as ``event`` and the attempt counts would
        have, one repeat at a time) and end it."""
        if not streak.live:
            return
        streak.live = False
        kind, k = streak.kind, streak.start
        objs = streak.objs[k:] if k else streak.objs
        for obj in objs:
            if self._streak_of.get((kind, obj)) is streak:
                del self._streak_of[(kind, obj)]
        if not streak.repeats:
            return
        for obj, message, row in zip(objs, streak.messages[k:], streak.rows[k:]):
            self._write_repeats(streak, obj, message, row)

    def _write_repeats(self, streak: FailureStreak, obj: str, message: str, row: int) -> None:
        """What ``streak``'s repeats left on ``obj``: its attempt count and similar-events window."""
        if row >= 0:
            self.pods.scheduling_attempts[row] += streak.repeats
        similar = self._similar[(streak.kind, obj, streak.reason)]
        # ``_combine_similar`` on a repeated message: a gap past the interval (the first one
        # from ``opened_ms``, the time ``similar`` held when the streak opened) restarts the
        # object's distinct messages with this one; otherwise only the time moves
        if streak.max_gap_ms > SIMILAR_EVENTS_INTERVAL_MS:
            similar[1] = (message,)
        similar[0] = streak.last_ms

    def _peel(self, streak: FailureStreak) -> None:
        """The first object of the live, peelable ``streak`` leaves it (an event of its own is
        being recorded): its repeats written, as ``settle`` would; the others stay in it."""
        k = streak.start
        obj = streak.objs[k]
        del self._streak_of[(streak.kind, obj)]
        if streak.repeats:
            self._write_repeats(streak, obj, streak.messages[k], streak.rows[k])
        streak.start = k + 1
        if streak.start == len(streak.objs):
            streak.live = False

    def settle_all(self) -> None:
        """End every live streak (before the log is read)."""
        for streak in list(self._streak_of.values()):
            self.settle(streak)
