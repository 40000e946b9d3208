"""Fixtures and checks for the acceptance scenarios of SCENARIOS.md (sections A, B, F, I).

The "one-node" fixture of S01–S13: one node ``node`` with ``cpu: 4``; gang pods ``p1..p4`` are
cpu 1, priority 100, ``schedulingGroup.podGroupName: pg1``; ``blocker`` is cpu 2 and
``small-blocker`` cpu 1, both priority 100 with terminationGracePeriod 0.

Upstream integration tests run without backoff and, for the v1.35 Permit barrier, with a 5 s
group timeout: ``CONFIG`` carries the same knobs.

A scenario is a trace plus a list of :class:`Check` — the state of the replay at a simulated time
(``at_s``, run with that horizon) or at the end (``at_s=None``). Messages are compared exactly;
:class:`Prefix` is used only where SEMANTICS.md says more text is appended whose wording it does not
fix (§8.5 path 3: "WAP's failure message is appended to the status").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from builders import NO_BACKOFF, create, make_group, make_node, make_pod, run
from gangsim.api.config import SchedulerConfig
from gangsim.api.trace import Trace
from gangsim.eventlog import EventLog

CONFIG: SchedulerConfig = NO_BACKOFF.with_changes(permit_timeout_ms=5000)

# Messages (SEMANTICS §4.4, §5, §7, §8.4, §8.5; framework runtime for the Permit timeout)
WAITING_FOR_GROUP = 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
INSUFFICIENT_CPU = "0/1 nodes are available: 1 Insufficient cpu."
NO_VICTIMS = "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
CLASSIC_NO_VICTIMS = f"{INSUFFICIENT_CPU} {NO_VICTIMS}"
NO_PODS_SCHEDULABLE = "no pods were schedulable"
PERMIT_TIMEOUT_5S = "rejected due to timeout after waiting 5s at plugin GangScheduling"

CONDITION_REASONS = ("Scheduled", "Unschedulable", "SchedulerError")


@dataclass(frozen=True)
class Prefix:
    """A message that must start with ``text`` (+ an optional suffix after a space, ',' or ';')."""

    text: str

    def matches(self, message: str) -> bool:
        if message == self.text:
            return True
        return message.startswith(self.text) and message[len(self.text)] in " ;,"

    def __repr__(self) -> str:
        return f"Prefix({self.text!r}...)"


def message_matches(want: str | Prefix | None, got: str) -> bool:
    """``None``: any message (the text is not fixed by SEMANTICS.md, e.g. a success condition)."""
    if want is None:
        return True
    return want.matches(got) if isinstance(want, Prefix) else want == got


# ---- the one-node fixture --------------------------------------------------------------------
def node(at_s: float = 0):
    return create(make_node("node", cpu=4, labels={"topology.kubernetes.io/zone": "zone1"}), at_s)


def member(name: str, at_s: float = 0, *, group: str = "pg1", cpu: float = 1, priority: int = 100, **kw):
    """A gang pod (``p1..p4``, ``other-p1..``): cpu 1, priority 100, in ``pg1``."""
    return create(make_pod(name, cpu=cpu, priority=priority, group=group, **kw), at_s)


def members(*names: str, at_s: float = 0, **kw) -> list:
    return [member(n, at_s, **kw) for n in names]


def blocker(at_s: float = 0, *, name: str = "blocker", cpu: float = 2, priority: int = 100):
    """``blocker`` (cpu 2), ``small-blocker`` (cpu 1) or ``low-priority-blocker`` (prio 10): grace 0."""
    return create(make_pod(name, cpu=cpu, priority=priority, grace_s=0), at_s)


def gang_pg1(at_s: float = 0, min_count: int = 3, **kw):
    return create(make_group("pg1", min_count, priority=100, **kw), at_s)


def basic_pg1(at_s: float = 0):
    return create(make_group("pg1", basic=True, priority=100), at_s)


# ---- reading a log ---------------------------------------------------------------------------
def short(obj: str) -> str:
    return obj.split("/", 1)[-1]


def bound(log: EventLog) -> dict[str, tuple[float, str]]:
    """pod -> (bind time in s, node) of every incarnation that was bound."""
    return {short(p.pod): (p.bound_ms / 1000, p.node) for p in log.pods if p.bound_ms is not None}


def pending(log: EventLog) -> dict[str, str]:
    """pod -> waiting_reason of every pod never bound and not ended."""
    return {short(p.pod): p.waiting_reason for p in log.pods if p.bound_ms is None and p.ended_ms is None}


def attempts(log: EventLog) -> dict[str, int]:
    return {short(p.pod): p.scheduling_attempts for p in log.pods}


def events(log: EventLog, *, kind: str | None = None, reasons: tuple[str, ...] | None = None) -> list[tuple[float, str, str, str]]:
    """(t in s, object name, reason, message) in log order."""
    out = []
    for i in range(len(log.ev_t_ms)):
        if kind is not None and log.ev_kind[i] != kind:
            continue
        if reasons is not None and log.ev_reason[i] not in reasons:
            continue
        out.append((log.ev_t_ms[i] / 1000, short(log.ev_object[i]), log.ev_reason[i], log.ev_message[i]))
    return out


def condition_events(log: EventLog) -> list[tuple[float, str, str, str]]:
    """PodGroup condition changes (PodGroupInitiallyScheduled), INTERFACE rule 10."""
    return events(log, kind="PodGroup", reasons=CONDITION_REASONS)


# ---- checks -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """The replay's state at ``at_s`` (a horizon) or, with ``at_s=None``, at the end.

    - ``bound``: exactly these pods are bound, at these times (s) on these nodes;
    - ``pending``: exactly these pods are pending, each with this ``waiting_reason``;
    - ``attempts``: scheduling attempts of these pods (0 = gated, never attempted);
    - ``events``: (t_s, object, reason, message) that must all appear in the log;
    - ``conditions``: the exact list of PodGroup condition events (t_s, object, reason, message);
      None = not checked (``permit`` models v1.35, which had no PodGroup condition).
    - ``ended``: pod -> (end time s, end_reason).
    """

    at_s: float | None = None
    bound: dict[str, tuple[float, str]] | None = None
    pending: dict[str, str | Prefix] | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    events: tuple[tuple[float, str, str, str | Prefix | None], ...] = ()
    conditions: tuple[tuple[float, str, str, str | Prefix | None], ...] | None = None
    ended: dict[str, tuple[float, str]] = field(default_factory=dict)


def replay_at(trace: Trace, policy: str, at_s: float | None) -> EventLog:
    return run(trace, policy, horizon_ms=None if at_s is None else int(at_s * 1000))


def assert_check(log: EventLog, check: Check) -> None:
    where = "end" if check.at_s is None else f"t={check.at_s}s"
    if check.bound is not None:
        assert bound(log) == check.bound, f"bound pods at {where}"
    if check.pending is not None:
        got = pending(log)
        assert sorted(got) == sorted(check.pending), f"pending pods at {where}: {got}"
        for name, want in check.pending.items():
            assert message_matches(want, got[name]), f"waiting_reason of {name} at {where}: {got[name]!r} != {want!r}"
    if check.attempts:
        got_attempts = attempts(log)
        assert {n: got_attempts[n] for n in check.attempts} == check.attempts, f"scheduling attempts at {where}"
    if check.events:
        all_events = events(log)
        for t_s, obj, reason, message in check.events:
            hits = [e for e in all_events if e[0] == t_s and e[1] == obj and e[2] == reason and message_matches(message, e[3])]
            near = [e for e in all_events if e[1] == obj]
            assert hits, f"no event {(t_s, obj, reason, message)} by {where}; events of {obj}: {near}"
    if check.conditions is not None:
        got_conditions = condition_events(log)
        assert len(got_conditions) == len(check.conditions), f"PodGroup conditions at {where}: {got_conditions}"
        for want, got_c in zip(check.conditions, got_conditions):
            assert got_c[:3] == want[:3] and message_matches(want[3], got_c[3]), f"PodGroup conditions at {where}: {got_conditions}"
    for name, (t_s, reason) in check.ended.items():
        rows = [p for p in log.pods if short(p.pod) == name]
        assert [(None if p.ended_ms is None else p.ended_ms / 1000, p.end_reason) for p in rows] == [(t_s, reason)], f"end of {name} at {where}"
