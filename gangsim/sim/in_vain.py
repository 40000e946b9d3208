"""Was a preemption in vain? (INTERFACE: a victim is ``in_vain`` when its preemptor was not bound
within the next scheduling attempt after the victim ended.)

One ``Decision`` per preemption decision: it is *armed* once all its victims are gone; the
preemptor's next attempt then decides it (bound: not in vain; not bound: in vain). A preemptor
that disappears, or a decision still open at the horizon, counts as in vain.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangsim.eventlog import VictimRecord


@dataclass(slots=True, eq=False)
class Decision:
    preemptor: str
    victims: list[VictimRecord]
    alive: int
    armed: bool = False
    attempting: bool = False

    def resolve(self, in_vain: bool) -> None:
        for v in self.victims:
            if v.in_vain is None:
                v.in_vain = in_vain


class InVainTracker:
    def __init__(self) -> None:
        self._decisions: dict[str, list[Decision]] = {}  # preemptor ref -> open decisions
        self._decision_of_victim: dict[int, tuple[Decision, VictimRecord]] = {}

    def decided(self, preemptor: str, records: list[VictimRecord], terminating: list[tuple[int, VictimRecord]]) -> None:
        """A decision evicted ``records``; ``terminating`` (uid, record) still hold their node."""
        d = Decision(preemptor, records, alive=len(terminating), armed=not terminating)
        self._decisions.setdefault(preemptor, []).append(d)
        for uid, rec in terminating:
            self._decision_of_victim[uid] = (d, rec)

    def attempt_started(self, ref: str) -> None:
        for d in self._decisions.get(ref, ()):
            if d.armed:
                d.attempting = True

    def idle_for(self, *refs: tuple[str, ...]) -> bool:
        """No open decision has any of the ``refs`` tuples' keys as its preemptor: their attempts
        change nothing here. (Several tuples rather than one joined: with no decision open, as
        mostly, a stuck gang's retry builds no copy of its 256 pods' keys.)"""
        if not self._decisions:
            return True
        keys = self._decisions.keys()
        return all(keys.isdisjoint(r) for r in refs)  # (refs: a joined run's thousands of pods)

    def attempt_finished(self, ref: str, *, bound: bool) -> None:
        open_ = self._decisions.get(ref)
        if not open_:
            return
        keep = []
        for d in open_:
            if bound:
                d.resolve(False)
            elif d.attempting:
                d.resolve(True)
            else:
                keep.append(d)
        if keep:
            self._decisions[ref] = keep
        else:
            del self._decisions[ref]

    def victim_ended(self, uid: int, now_ms: int) -> None:
        hit = self._decision_of_victim.pop(uid, None)
        if hit is None:
            return
        d, rec = hit
        rec.ended_ms = now_ms
        d.alive -= 1
        if d.alive == 0:
            d.armed = True

    def preemptor_gone(self, ref: str) -> None:
        for d in self._decisions.pop(ref, ()):
            d.resolve(True)

    def finish(self) -> None:
        """At the horizon: decisions still open count as in vain."""
        for ds in self._decisions.values():
            for d in ds:
                d.resolve(True)
        self._decisions.clear()
