"""Acceptance scenarios S01–S04, S07, S08, S15, S39 (SCENARIOS.md §A, §B, §I) and §7 Permit cases
(§F), under the policies each scenario names.

Steps map to trace times: step 1 at 0 s, later steps at 1 s, 2 s, ...; a later "delete the
blocker" step at the time given in the table. Every case runs with the upstream integration knobs
(no backoff, Permit group timeout 5 s) — ``kit.CONFIG``.

Each row: an id ``S<nn>-<policy>[-variant]``, the trace events, the policy, and checks of the state
at a given simulated time (replayed with that horizon) and at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from builders import create, delete, make_group, make_node, make_pod, make_trace, patch, run, victims
from gangsim.api.objects import Taint, Toleration

from .kit import (
    CLASSIC_NO_VICTIMS,
    CONFIG,
    INSUFFICIENT_CPU,
    PERMIT_TIMEOUT_5S,
    WAITING_FOR_GROUP,
    WAITING_FOR_MIN_COUNT,
    Check,
    Prefix,
    assert_check,
    basic_pg1,
    blocker,
    bound,
    condition_events,
    events,
    gang_pg1,
    member,
    members,
    node,
    pending,
    replay_at,
)

N = "node"
P123 = ("p1", "p2", "p3")


def cannot(scheduled: int, remaining: int, min_count: int = 3) -> Prefix:
    """PlacementFeasible's Unschedulable status (§8.4); WAP may append its own failure (§8.5 path 3)."""
    return Prefix(f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining")


def gated(names, message, t_s):
    return tuple((t_s, n, "Gated", message) for n in names)


@dataclass(frozen=True)
class Scenario:
    id: str
    policy: str
    events: tuple
    checks: tuple[Check, ...]

    def param(self, *marks):
        return pytest.param(self, id=self.id, marks=marks)


# ---- S01 Gang schedules when PodGroup and resources exist --------------------------------------
S01_EVENTS = (node(), gang_pg1(0), *members(*P123))
S01_BOUND = {p: (0, N) for p in P123}
S01 = [
    Scenario("S01-gang", "gang", S01_EVENTS, (Check(bound=S01_BOUND, pending={}, conditions=((0, "pg1", "Scheduled", None),)),)),
    Scenario(
        "S01-permit",
        "permit",
        S01_EVENTS,
        # p1, p2 wait at Permit (holding their CPU), p3 completes the quorum and all three bind
        (Check(bound=S01_BOUND, pending={}, events=((0, "p1", "WaitingOnPermit", None), (0, "p2", "WaitingOnPermit", None))),),
    ),
    Scenario("S01-pod", "pod", S01_EVENTS, (Check(bound=S01_BOUND, pending={}, conditions=()),)),
]

# ---- S02 Gang waits for quorum, then schedules -------------------------------------------------
S02_EVENTS = (node(), gang_pg1(0), *members("p1", "p2", at_s=1), member("p3", 2))
S02_GATED = Check(
    at_s=1.5,
    bound={},
    pending={"p1": WAITING_FOR_MIN_COUNT, "p2": WAITING_FOR_MIN_COUNT},
    attempts={"p1": 0, "p2": 0},  # gated at PreEnqueue: never attempted
    events=gated(("p1", "p2"), WAITING_FOR_MIN_COUNT, 1),
)
S02_DONE = {p: (2, N) for p in P123}
S02 = [
    Scenario(
        "S02-gang",
        "gang",
        S02_EVENTS,
        (
            replace(S02_GATED, conditions=()),
            Check(bound=S02_DONE, pending={}, conditions=((2, "pg1", "Scheduled", None),)),
        ),
    ),
    Scenario("S02-permit", "permit", S02_EVENTS, (S02_GATED, Check(bound=S02_DONE, pending={}))),
    # contrast: without gang semantics p1, p2 bind at once (2 CPU used before p3 exists)
    Scenario(
        "S02-pod",
        "pod",
        S02_EVENTS,
        (Check(at_s=1.5, bound={"p1": (1, N), "p2": (1, N)}, pending={}), Check(bound={"p1": (1, N), "p2": (1, N), "p3": (2, N)}, conditions=())),
    ),
]

# ---- S03 Gang waits for its PodGroup object, then for resources --------------------------------
S03_EVENTS = (node(), blocker(0), *members(*P123, at_s=1), gang_pg1(2), delete("Pod", "blocker", 20))
S03_GATED = Check(
    at_s=1.5,
    bound={"blocker": (0, N)},
    pending={p: WAITING_FOR_GROUP for p in P123},
    attempts={p: 0 for p in P123},
    events=gated(P123, WAITING_FOR_GROUP, 1),
)
S03_DONE = {"blocker": (0, N), **{p: (20, N) for p in P123}}
S03 = [
    Scenario(
        "S03-gang",
        "gang",
        S03_EVENTS,
        (
            replace(S03_GATED, conditions=()),
            # one cycle: p1, p2 fit, p3 fails -> PlacementFeasible Unschedulable; nothing bound;
            # p3 carries its own FitError, p1 and p2 the group's status (submitPodGroupAlgorithmResult)
            Check(
                at_s=19,
                bound={"blocker": (0, N)},
                pending={"p1": cannot(2, 0), "p2": cannot(2, 0), "p3": INSUFFICIENT_CPU},
                events=((2, "p1", "FailedScheduling", cannot(2, 0)), (2, "p2", "FailedScheduling", cannot(2, 0)), (2, "p3", "FailedScheduling", INSUFFICIENT_CPU)),
                conditions=((2, "pg1", "Unschedulable", cannot(2, 0)),),
            ),
            Check(
                bound=S03_DONE,
                pending={},
                ended={"blocker": (20, "Deleted")},
                conditions=((2, "pg1", "Unschedulable", cannot(2, 0)), (20, "pg1", "Scheduled", None)),
            ),
        ),
    ),
    Scenario(
        "S03-permit",
        "permit",
        S03_EVENTS,
        (
            S03_GATED,
            # p1, p2 are assumed on the node and wait at Permit; p3 does not fit (2 CPU held)
            Check(
                at_s=4,
                bound={"blocker": (0, N)},
                events=(
                    (2, "p1", "WaitingOnPermit", None),
                    (2, "p2", "WaitingOnPermit", None),
                    (2, "p3", "FailedScheduling", CLASSIC_NO_VICTIMS),
                ),
            ),
            # the 5 s group deadline rejects both waiting pods; still nothing bound
            Check(
                at_s=8,
                bound={"blocker": (0, N)},
                events=((7, "p1", "FailedScheduling", PERMIT_TIMEOUT_5S), (7, "p2", "FailedScheduling", PERMIT_TIMEOUT_5S)),
            ),
            Check(bound=S03_DONE, pending={}),
        ),
    ),
    Scenario(
        "S03-pod",
        "pod",
        S03_EVENTS,
        (
            Check(
                at_s=19,
                bound={"blocker": (0, N), "p1": (1, N), "p2": (1, N)},
                pending={"p3": CLASSIC_NO_VICTIMS},
                events=((1, "p3", "FailedScheduling", CLASSIC_NO_VICTIMS),),
            ),
            Check(bound={"blocker": (0, N), "p1": (1, N), "p2": (1, N), "p3": (20, N)}, pending={}, conditions=()),
        ),
    ),
]

# ---- S04 minCount met, the extra member waits for capacity -------------------------------------
P1234 = ("p1", "p2", "p3", "p4")
S04_EVENTS = (node(), blocker(0, name="small-blocker", cpu=1), *members(*P1234, at_s=1), gang_pg1(2), delete("Pod", "small-blocker", 3))
S04_GATED = Check(at_s=1.5, bound={"small-blocker": (0, N)}, pending={p: WAITING_FOR_GROUP for p in P1234}, attempts={p: 0 for p in P1234})
S04_AT_2 = {"small-blocker": (0, N), **{p: (2, N) for p in P123}}
S04 = [
    Scenario(
        "S04-gang",
        "gang",
        S04_EVENTS,
        (
            S04_GATED,
            # group Success (3 >= minCount): p4 fails on its own status, no preemption for it;
            # the no-backoff retry of the group (S=3, R=1 -> 3, 0) schedules nothing (§8.3, S15):
            # the group status is "no pods were schedulable", p4 keeps its own FitError
            Check(
                at_s=2.5,
                bound=S04_AT_2,
                pending={"p4": INSUFFICIENT_CPU},
                events=((2, "p4", "FailedScheduling", INSUFFICIENT_CPU),),
                conditions=((2, "pg1", "Scheduled", None),),
            ),
            # the 4th binds alone later; the True condition is terminal (no Unschedulable event)
            Check(bound={**S04_AT_2, "p4": (3, N)}, pending={}, conditions=((2, "pg1", "Scheduled", None),)),
        ),
    ),
    Scenario(
        "S04-permit",
        "permit",
        S04_EVENTS,
        (
            S04_GATED,
            Check(at_s=2.5, bound=S04_AT_2, pending={"p4": CLASSIC_NO_VICTIMS}),
            Check(bound={**S04_AT_2, "p4": (3, N)}, pending={}),
        ),
    ),
    Scenario(
        "S04-pod",
        "pod",
        S04_EVENTS,
        (
            Check(at_s=2.5, bound={"small-blocker": (0, N), **{p: (1, N) for p in P123}}, pending={"p4": CLASSIC_NO_VICTIMS}),
            Check(bound={"small-blocker": (0, N), **{p: (1, N) for p in P123}, "p4": (3, N)}, pending={}, conditions=()),
        ),
    ),
]

# ---- S07 Basic group behaves pod-by-pod (no quorum) --------------------------------------------
S07_EVENTS = (node(), basic_pg1(0), member("p1", 1), *members("p2", "p3", at_s=2))
S07_CHECKS = (
    Check(at_s=1.5, bound={"p1": (1, N)}, pending={}),
    Check(bound={"p1": (1, N), "p2": (2, N), "p3": (2, N)}, pending={}),
)
S07 = [
    # §1.4 rule 4: a basic group's condition is True as soon as any member binds
    Scenario("S07-gang", "gang", S07_EVENTS, (*S07_CHECKS, Check(conditions=((1, "pg1", "Scheduled", None),)))),
    Scenario("S07-permit", "permit", S07_EVENTS, S07_CHECKS),
    Scenario("S07-pod", "pod", S07_EVENTS, (*S07_CHECKS, Check(conditions=()))),
]

# ---- S08 Basic group: partial placement, then completion ---------------------------------------
S08_EVENTS = (node(), blocker(0), *members(*P123, at_s=1), basic_pg1(2), delete("Pod", "blocker", 3))
S08_GATED = Check(at_s=1.5, bound={"blocker": (0, N)}, pending={p: WAITING_FOR_GROUP for p in P123}, attempts={p: 0 for p in P123})
S08_AT_2 = {"blocker": (0, N), "p1": (2, N), "p2": (2, N)}
S08 = [
    Scenario(
        "S08-gang",
        "gang",
        S08_EVENTS,
        (
            replace(S08_GATED, conditions=()),
            Check(
                at_s=2.5,
                bound=S08_AT_2,
                pending={"p3": INSUFFICIENT_CPU},  # its own FitError, not the group's status
                events=((2, "p3", "FailedScheduling", INSUFFICIENT_CPU),),
                conditions=((2, "pg1", "Scheduled", None),),
            ),
            Check(bound={**S08_AT_2, "p3": (3, N)}, pending={}, conditions=((2, "pg1", "Scheduled", None),)),
        ),
    ),
    Scenario(
        "S08-permit",
        "permit",
        S08_EVENTS,
        (S08_GATED, Check(at_s=2.5, bound=S08_AT_2, pending={"p3": CLASSIC_NO_VICTIMS}), Check(bound={**S08_AT_2, "p3": (3, N)}, pending={})),
    ),
    Scenario(
        "S08-pod",
        "pod",
        S08_EVENTS,
        (
            Check(at_s=1.5, bound={"blocker": (0, N), "p1": (1, N), "p2": (1, N)}, pending={"p3": CLASSIC_NO_VICTIMS}),
            Check(bound={"blocker": (0, N), "p1": (1, N), "p2": (1, N), "p3": (3, N)}, pending={}, conditions=()),
        ),
    ),
]

# ---- S15 Subsequent cycle of an already-satisfied gang ----------------------------------------
S15_EVENTS = (node(), gang_pg1(0), *members(*P123), blocker(0, name="small-blocker", cpu=1), member("q5", 1), delete("Pod", "small-blocker", 2))
S15_AT_0 = {"small-blocker": (0, N), **{p: (0, N) for p in P123}}
S15 = [
    Scenario(
        "S15-gang",
        "gang",
        S15_EVENTS,
        (
            # (S=3, R=1) Success -> q5 fails -> (3, 0) Success with nothing new: Unschedulable
            # "no pods were schedulable" (the group's status; q5 carries its own FitError,
            # submitPodGroupAlgorithmResult); the condition stays True (terminal)
            Check(
                at_s=1.5,
                bound=S15_AT_0,
                pending={"q5": INSUFFICIENT_CPU},
                events=((1, "q5", "FailedScheduling", INSUFFICIENT_CPU),),
                conditions=((0, "pg1", "Scheduled", None),),
            ),
            # once it fits, q5 binds alone (a one-pod cycle: already-scheduled members count)
            Check(bound={**S15_AT_0, "q5": (2, N)}, pending={}, conditions=((0, "pg1", "Scheduled", None),)),
        ),
    ),
    Scenario(
        "S15-permit",
        "permit",
        S15_EVENTS,
        (
            Check(at_s=1.5, bound=S15_AT_0, pending={"q5": CLASSIC_NO_VICTIMS}),
            # |assumed ∪ assigned| = 4 >= minCount: Permit allows q5 at once
            Check(bound={**S15_AT_0, "q5": (2, N)}, pending={}),
        ),
    ),
]

# ---- S37(f) a minCount decrease re-queues gated members (queueing hint, §4.5) ------------------
S37F_EVENTS = (node(), gang_pg1(0), *members("p1", "p2", at_s=1), patch(make_group("pg1", 2, priority=100), 5))
S37F_GATED = Check(at_s=3, bound={}, pending={"p1": WAITING_FOR_MIN_COUNT, "p2": WAITING_FOR_MIN_COUNT}, attempts={"p1": 0, "p2": 0})
S37F = [
    Scenario(
        "S37f-gang-min-count-decrease",
        "gang",
        S37F_EVENTS,
        (S37F_GATED, Check(bound={"p1": (5, N), "p2": (5, N)}, pending={}, conditions=((5, "pg1", "Scheduled", None),))),
    ),
    Scenario("S37f-permit-min-count-decrease", "permit", S37F_EVENTS, (S37F_GATED, Check(bound={"p1": (5, N), "p2": (5, N)}, pending={}))),
]

# ---- S39 Interleaved signatures still schedule and batch --------------------------------------
STATIC_NODES = tuple(create(make_node(f"static-node{i}", cpu=4, labels={"forpod": "1"})) for i in (1, 2, 3))


def s39_member(name: str, cpu: float, at_s: float = 0, **kw):
    return create(make_pod(name, cpu=cpu, priority=100, group="pg1", node_selector={"forpod": "1"}, **kw), at_s)


S39_EVENTS = (*STATIC_NODES, gang_pg1(0), s39_member("p1", 3), s39_member("p2", 4), s39_member("p3", 3))
S39 = [
    # §8.2: same-signature pods are processed consecutively (p1, p3, then p2); LeastAllocated ties
    # broken by node order
    Scenario(
        "S39-gang",
        "gang",
        S39_EVENTS,
        (
            Check(
                bound={"p1": (0, "static-node1"), "p3": (0, "static-node2"), "p2": (0, "static-node3")},
                pending={},
                conditions=((0, "pg1", "Scheduled", None),),
            ),
        ),
    ),
    # pod by pod in creation order
    Scenario("S39-permit", "permit", S39_EVENTS, (Check(bound={"p1": (0, "static-node1"), "p2": (0, "static-node2"), "p3": (0, "static-node3")}, pending={}),)),
    Scenario("S39-pod", "pod", S39_EVENTS, (Check(bound={"p1": (0, "static-node1"), "p2": (0, "static-node2"), "p3": (0, "static-node3")}, pending={}),)),
]

# ---- §F: v1.35 Permit barrier cases built from SEMANTICS §7 -----------------------------------
# Shared group deadline: p1 waits at 0 s (deadline 5 s); p2 fits only after `blocker` goes at 2 s
# and waits for the *remaining* 3 s; p3 never fits. At 5 s both are rejected, each with the timeout
# its Wait was given.
F_DEADLINE_EVENTS = (
    node(),
    gang_pg1(0),
    blocker(0, cpu=3),
    member("p1", 0, cpu=1),
    member("p2", 0, cpu=2),
    member("p3", 0, cpu=5),
    delete("Pod", "blocker", 2),
)
F = [
    Scenario(
        "F-permit-shared-deadline",
        "permit",
        F_DEADLINE_EVENTS,
        (
            Check(
                at_s=6,
                bound={"blocker": (0, N)},
                events=(
                    (0, "p1", "WaitingOnPermit", None),
                    (0, "p2", "FailedScheduling", CLASSIC_NO_VICTIMS),
                    (2, "p2", "WaitingOnPermit", None),
                    (5, "p1", "FailedScheduling", PERMIT_TIMEOUT_5S),
                    (5, "p2", "FailedScheduling", "rejected due to timeout after waiting 3s at plugin GangScheduling"),
                ),
            ),
        ),
    ),
]

ALL = [*S01, *S02, *S03, *S04, *S07, *S08, *S15, *S37F, *S39, *F]


@pytest.mark.parametrize("scenario", [s.param() for s in ALL])
def test_scenario(scenario: Scenario):
    trace = make_trace(*scenario.events, config=CONFIG)
    for check in scenario.checks:
        assert_check(replay_at(trace, scenario.policy, check.at_s), check)


def test_scenario_ids_are_unique():
    assert len({s.id for s in ALL}) == len(ALL)


# ---- checks that do not fit the table ----------------------------------------------------------
def test_S03_permit_waiting_pods_hold_their_cpu():
    """§7: pods waiting at Permit hold their node resources until the group deadline. A 1-CPU
    probe (priority 0) created at 3 s finds the node full under ``permit`` (blocker 2 + p1, p2
    held 2) and binds no earlier than the 7 s timeout; under ``gang`` nothing is held and it binds at
    once."""
    events_ = (*S03_EVENTS, create(make_pod("probe", cpu=1, priority=0, grace_s=0), 3))
    trace = make_trace(*events_, config=CONFIG)
    permit = run(trace, "permit", horizon_ms=6500)
    assert "probe" not in bound(permit)
    assert pending(permit)["probe"] == CLASSIC_NO_VICTIMS
    assert [e for e in events(permit) if e[1] == "probe"] == [(3, "probe", "FailedScheduling", CLASSIC_NO_VICTIMS)]
    gang = run(trace, "gang", horizon_ms=6500)
    assert bound(gang)["probe"] == (3, N)


def test_S03_gang_nothing_is_bound_before_the_blocker_goes():
    """S03 under ``gang``: the failing cycle reverts p1, p2's reservations — no pod of pg1 binds
    before 20 s, and the node's 2 free CPU stay usable by others (see the probe test above)."""
    log = run(make_trace(*S03_EVENTS, config=CONFIG), "gang")
    assert sorted(t for p, (t, _) in bound(log).items() if p != "blocker") == [20, 20, 20]
    assert [e for e in events(log, reasons=("WaitingOnPermit",))] == []


def test_S15_gang_wap_runs_for_the_late_member():
    """S15: the cycle for q5 ends Unschedulable ("no pods were schedulable"), so WAP runs: the
    lower-priority `low` (prio 10) is the only potential victim, the group algorithm on the cleaned
    node places q5 (S=3 already), `low` cannot be reprieved -> victim; grace 0 -> q5 binds at 1 s."""
    events_ = (node(), gang_pg1(0), *members(*P123), blocker(0, name="low", cpu=1, priority=10), member("q5", 1))
    log = run(make_trace(*events_, config=CONFIG), "gang")
    assert victims(log) == ["low"]
    preempted = [e for e in events(log, reasons=("Preempted",)) if e[1] == "low"]
    assert [e[0] for e in preempted] == [1] and preempted[0][3].startswith("Preempted by podgroup")  # §11.2 step 8
    assert [(p.ended_ms, p.end_reason) for p in log.pods if p.pod == "default/low"] == [(1000, "Preempted")]
    assert bound(log)["q5"] == (1, N)
    assert condition_events(log) == [(0, "pg1", "Scheduled", condition_events(log)[0][3])]


def test_S39_same_signature_pods_are_processed_consecutively():
    """S39 [asserted upstream: batching used]: p1 and p3 (3 CPU) share a signature and are
    processed back to back, before p2 (4 CPU) — visible as the order of the Scheduled events."""
    log = run(make_trace(*S39_EVENTS, config=CONFIG), "gang")
    assert [e[1] for e in events(log, reasons=("Scheduled",)) if e[1] != "pg1"] == ["p1", "p3", "p2"]


def test_S39_batching_never_changes_a_placement():
    """§10: opportunistic batching is a speed knob only."""
    on = run(make_trace(*S39_EVENTS, config=CONFIG.with_changes(opportunistic_batching=True)), "gang")
    off = run(make_trace(*S39_EVENTS, config=CONFIG.with_changes(opportunistic_batching=False)), "gang")
    assert bound(on) == bound(off)


def test_S39_batching_counter_increases():
    log = run(make_trace(*S39_EVENTS, config=CONFIG), "gang")
    assert any("batch" in k and v > 0 for k, v in log.counters.items()), log.counters


# S39 variant DynamicSignatureUpdate: tainted nodes; p1, p2 tolerate; p3 has a scheduling gate and no
# toleration -> the whole group waits; removing p3's gate and adding the toleration -> all three bind.
TAINT = (Taint("dedicated", "group1", "NoSchedule"),)
TOLERATE = (Toleration("dedicated", "Equal", "group1", "NoSchedule"),)
TAINTED_NODES = tuple(create(make_node(f"static-node{i}", cpu=4, labels={"forpod": "1"}, taints=TAINT)) for i in (1, 2, 3))
S39_DYNAMIC_EVENTS = (
    *TAINTED_NODES,
    gang_pg1(0),
    s39_member("p1", 3, tolerations=TOLERATE),
    s39_member("p2", 4, tolerations=TOLERATE),
    s39_member("p3", 3, gates=("g",)),
    patch(make_pod("p3", cpu=3, priority=100, group="pg1", node_selector={"forpod": "1"}, tolerations=TOLERATE), 3),
)


def test_S39_dynamic_signature_update_gang():
    trace = make_trace(*S39_DYNAMIC_EVENTS, config=CONFIG)
    before = run(trace, "gang", horizon_ms=2000)
    assert bound(before) == {}
    assert pending(before)["p3"] == "waiting for scheduling gates: [g]"
    assert {p.pod: p.scheduling_attempts for p in before.pods} == {"default/p1": 0, "default/p2": 0, "default/p3": 0}
    after = run(trace, "gang")
    placed = bound(after)
    assert sorted(placed) == ["p1", "p2", "p3"]
    assert {t for t, _ in placed.values()} == {3}
    assert len({n for _, n in placed.values()}) == 3  # each on its own node


def test_S39_dynamic_signature_update_regroups_the_patched_pod():
    log = run(make_trace(*S39_DYNAMIC_EVENTS, config=CONFIG), "gang")
    assert [e[1] for e in events(log, reasons=("Scheduled",)) if e[1] != "pg1"] == ["p1", "p3", "p2"]
    assert bound(log) == {"p1": (3, "static-node1"), "p3": (3, "static-node2"), "p2": (3, "static-node3")}


@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_S39_untolerating_pod_never_lands_on_a_tainted_node_after_a_toleration_patch(policy):
    events_ = (
        create(make_node("n1", cpu=4, taints=TAINT)),
        create(make_pod("x", cpu=1, gates=("g",))),
        patch(make_pod("x", cpu=1, tolerations=TOLERATE), 5),
        create(make_pod("intruder", cpu=1), 6),
    )
    log = run(make_trace(*events_, config=CONFIG), policy)
    assert bound(log) == {"x": (5, "n1")}
    assert pending(log)["intruder"].startswith("0/1 nodes are available: 1 node(s) had untolerated taint")


def test_S02_permit_replay_ends_when_the_gang_finishes():
    """S02 with durations and the default 300 s Permit timeout: the gang binds at 2 s and runs 10 s;
    nothing can change after 12 s, so every policy's replay (and its horizon) ends there."""
    from gangsim.report import build_report

    events_ = (
        create(make_node("node", cpu=4, gpus=4)),
        gang_pg1(0),
        *[create(make_pod(p, cpu=1, gpus=1, priority=100, group="pg1", duration_s=10), 1) for p in ("p1", "p2")],
        create(make_pod("p3", cpu=1, gpus=1, priority=100, group="pg1", duration_s=10), 2),
    )
    trace = make_trace(*events_)  # default config: Permit timeout 300 s
    horizons = {pol: build_report(run(trace, pol)).summary["horizon_s"] for pol in ("gang", "pod", "permit")}
    assert horizons == {"gang": 12.0, "pod": 12.0, "permit": 12.0}
