"""Workload-aware preemption for topology-constrained groups (KEP-5710 x KEP-5732): a PodGroup with
``schedulingConstraints.topology`` and a CompositePodGroup tree preempt inside one domain.

Newest upstream (where it disagrees with SEMANTICS §8.8 item 7, "groups with topology constraints
never preempt", the code wins): ``DefaultPreemption.PodGroupPostFilter``
(defaultpreemption/default_preemption.go) no longer refuses a group with topology constraints
(kubernetes#140683 "Allow WAP when pod group uses TAS"); ``podGroupCycle``
(schedule_one_podgroup.go) runs PodGroupPostFilter once for the root when its status is
Unschedulable, its dry run being the whole ``RunRootSchedulingAlgorithm`` (placements and their
scoring); ``PodGroupEvaluator.selectVictimsOnDomain`` (framework/preemption/podgrouppreemption.go)
removes every lower-priority unit, runs that dry run once, then reprieves units against the one
proposed placement. So the placement is chosen as if every lower-priority pod were gone (the
cpg_tas_test.go comment: "the scores are computed without low-priority pods") and only units in
the way of that placement are evicted. ``Preempt`` then reports "found a placement for podgroup,
preempting N victims".

The table ports every case of ``TestCPGTopologyAwareSchedulingWorkloadAwarePreemption``
(kubernetes/kubernetes test/integration/scheduler/podgroup/topology_aware_scheduling/cpg_tas_test.go)
with the makers of ``TestCPGTopologyAwareScheduling`` (2-CPU nodes, 1-CPU pods, priority 100)
and ``makeAssignedPodWithPriority`` pods of priority 10 (standalone, grace period 0 as
``makeAssignedPod``). Upstream's steps that wait for one result before the next create are
seconds apart here. Expectations: ``scheduled`` (WaitForPodsScheduled, and no other ``p*`` pod
bound), ``victims`` (WaitForPodsRemoved: exactly these were preempted), ``nodes``
(VerifyAssignments), ``domains`` (VerifyAssignedInOneDomain), ``exact`` (pods left where they
were), ``pending`` (WaitForPodsUnschedulable
with gangsim's message), ``root`` (the root's first Unschedulable condition message: the placement
loop's status and the preemption result appended, ``applyPodGroupPostFilterResult``).
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from builders import NO_BACKOFF, create, events_of, make_composite, make_group, make_node, make_pod, make_trace, placements, run

from .test_composite import CPG, FOUR, _at, _busy, _cpg, _lnode, _p, _pg, _preferring, _racks, _tainted, _tolerating, check_placed, messages

FOUND = ", pod group preemption: found a placement for podgroup, preempting {} victims"


def _low(name, node, cpu=2):
    """makeAssignedPodWithPriority(name, node, cpu, 10)."""
    return create(make_pod(name, cpu=cpu, node_name=node, priority=10, grace_s=0))


def _placements_failed(n, status):
    return f"0/{n} placements are available, first placement status: {status}"


MIN2_0_1 = "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"

WAP = [
    pytest.param(
        [*_racks(FOUR), _low("low1-z1-r1", "node1-z1-r1"), _low("low2-z1-r1", "node2-z1-r1"), _busy("existing", "node4-z1-r2", cpu=2),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, victims={"low1-z1-r1", "low2-z1-r1"}, nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"})],
             root=_placements_failed(2, MIN2_0_1) + FOUND.format(2)),
        id="parent CPG has topology constraints, children do not; schedules on a single rack after preempting lower priority pods",
    ),
    pytest.param(
        [*_racks(FOUR), _low("low1-z1-r1", "node1-z1-r1"), _low("low2-z1-r1", "node2-z1-r1"), _busy("existing", "node4-z1-r2", cpu=2),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2"),
         _at(_p("p5", "pg1"), 10)],
        # rack-2 has 2 CPU free, but the tree is pinned to rack-1 by its scheduled pods and
        # nothing of lower priority is left to preempt
        dict(scheduled={"p1", "p2", "p3", "p4"}, victims={"low1-z1-r1", "low2-z1-r1"}, nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"})],
             pending={"p5": "0/2 nodes are available: 2 Insufficient cpu."}),
        id="parent CPG has topology constraints, children do not; schedules on a single rack after preempting lower priority pods, then cannot schedule additional pods",
    ),
    pytest.param(
        [*_racks(FOUR), _busy("existing", "node4-z1-r2", group="pg1"), _low("low1-z1-r2", "node3-z1-r2"), _low("low2-z1-r2", "node4-z1-r2", cpu=1),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2")],
        dict(scheduled={"p1", "p2", "p3"}, victims={"low1-z1-r2", "low2-z1-r2"}, nodes=[({"p1", "p2", "p3"}, {"node3-z1-r2", "node4-z1-r2"})],
             root=_placements_failed(1, MIN2_0_1) + FOUND.format(2)),
        id="parent CPG has topology constraints, children do not; preexisting pod belonging to the hierarchy determines topology and lower priority pods are preempted",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1")}), _low("low1-z1-r1", "node1-z1-r1"), _busy("existing2", "node2-z1-r2", cpu=2),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root", basic=True), _pg("pg2", "cpg-root", basic=True), _p("p1", "pg1"), _p("p2", "pg2")],
        dict(scheduled={"p1", "p2"}, victims={"low1-z1-r1"}, nodes=[({"p1", "p2"}, {"node1-z1-r1"})]),
        id="parent CPG has topology constraints, children do not; schedules on a rack after preempting lower priority pods",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1"), "node3-z2-r2": ("rack-2", "zone-2"), "node4-z2-r2": ("rack-2", "zone-2"),
                  "node5-z2-r2": ("rack-2", "zone-2"), "node6-z2-r3": ("rack-3", "zone-2"), "node7-z2-r3": ("rack-3", "zone-2"), "node8-z2-r3": ("rack-3", "zone-2"),
                  "node9-z2-r4": ("rack-4", "zone-2")}),
         _busy("existing1", "node3-z2-r2", cpu=2), _busy("existing2", "node8-z2-r3"),
         _low("low1-z1-r1", "node1-z1-r1"), _low("low1-z2-r2", "node4-z2-r2"), _low("low1-z2-r3", "node6-z2-r3"), _low("low2-z2-r3", "node8-z2-r3", cpu=1),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root", min_count=1), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2")],
        # with every potential victim gone: rack-1 3/4, rack-2 5/6, rack-3 4/6, rack-4 infeasible
        dict(scheduled={"p1", "p2", "p3"}, victims={"low1-z2-r2"}, nodes=[({"p1", "p2", "p3"}, {"node3-z2-r2", "node4-z2-r2", "node5-z2-r2"})],
             exact={"low1-z1-r1": "node1-z1-r1", "low1-z2-r3": "node6-z2-r3", "low2-z2-r3": "node8-z2-r3"},  # not evicted
             root=_placements_failed(4, "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining") + FOUND.format(1)),
        id="parent CPG has topology constraints, children do not; preemption chooses the rack with the highest allocation percentage among several feasible racks",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z2-r1": ("rack-1", "zone-2"), "node4-z2-r1": ("rack-1", "zone-2")}),
         _low("low-z1-r1", "node1-z1-r1"), _low("low-z1-r2", "node2-z1-r2"), _busy("existing-z2", "node3-z2-r1"),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, victims={"low-z1-r1", "low-z1-r2"}, nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r2"})],
             domains=[({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack")]),
        id="parent CPG and child PGs both have topology constraints (multi-level constraints: zone and rack) with preemption",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z1-r3": ("rack-3", "zone-1"), "node4-z2-r1": ("rack-1", "zone-2"), "node5-z2-r1": ("rack-1", "zone-2")}),
         _low("low-z1-r3", "node3-z1-r3"), _low("low-z2-r1", "node4-z2-r1"),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2"),
         _at(_pg("pg3", "cpg-root", "rack"), 10), _at(_p("p5", "pg3"), 10), _at(_p("p6", "pg3"), 10),
         _at(_pg("pg4", "cpg-root", "rack"), 20), _at(_p("p7", "pg4"), 20), _at(_p("p8", "pg4"), 20)],
        # pg4: preemption could free zone-2's rack-1, but the tree is pinned to zone-1, where nothing is left to preempt
        dict(scheduled={f"p{i}" for i in range(1, 7)}, victims={"low-z1-r3"}, domains=[({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack"), ({"p5", "p6"}, "rack")],
             nodes=[({"p5", "p6"}, {"node3-z1-r3"})],
             # p7 failed Filter in pg4's first rack (one node); p8, never evaluated, carries pg4's
             # status: the root (its quorum met by pg1-pg3) placed nothing, Unschedulable "no pods
             # were schedulable", so WAP ran and its dry run, with low-z2-r1 gone, ended the same
             pending={"p7": "0/1 nodes are available: 1 Insufficient cpu.",
                      "p8": _placements_failed(3, MIN2_0_1) + ", pod group preemption: no pods were schedulable"}),
        id="parent CPG and child PGs both have topology constraints (multi-level constraints: zone and rack), preemption does not help for subsequent",
    ),
    pytest.param(
        [_tainted("node1-z1-r1", "rack-1", "zone-1"), *_racks({"node2-z1-r2": ("rack-2", "zone-1"), "node3-z1-r3": ("rack-3", "zone-1"), "node4-z2-r1": ("rack-1", "zone-2"), "node5-z2-r2": ("rack-2", "zone-2")}),
         _low("low-z1-r1", "node1-z1-r1"), _busy("existing-z2", "node5-z2-r2"), _busy("existing-z1-r2", "node2-z1-r2"), _busy("existing-z1-r3", "node3-z1-r3"),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root"),
         _tolerating("p1", "pg1"), _tolerating("p2", "pg1"), _preferring("p3", "pg2", "node4-z2-r1"), _preferring("p4", "pg2", "node4-z2-r1")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, victims={"low-z1-r1"}, domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p1", "p2"}, "rack")],
             nodes=[({"p1", "p2"}, {"node1-z1-r1"}), ({"p3", "p4"}, {"node2-z1-r2", "node3-z1-r3"})]),
        id="parent CPG and only one child PG has topology constraints; the other child uses parent's topology with preemption",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z1-r2": ("rack-2", "zone-1"), "node4-z2-r1": ("rack-1", "zone-2"), "node5-z2-r1": ("rack-1", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"),
         _busy("existing-z1", "node1-z1-r1", group="pg1"), _low("low-z1-r1", "node1-z1-r1", cpu=1), _low("low-z1-r2", "node2-z1-r2"),
         _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2")],
        dict(scheduled={"p1", "p2", "p3"}, victims={"low-z1-r1", "low-z1-r2"}, nodes=[({"p1"}, {"node1-z1-r1"}), ({"p2", "p3"}, {"node2-z1-r2", "node3-z1-r2"})]),
        id="parent CPG and all child PGs have topology constraints, preexisting pod group pods constrain available topology domains with preemption",
    ),
    pytest.param(
        [_lnode("node1-z1-g1-r1", zone="zone-1", block="block-1", rack="rack-1"), _lnode("node2-z1-g1-r2", zone="zone-1", block="block-1", rack="rack-2"),
         _lnode("node3-z1-g2-r1", zone="zone-1", block="block-2", rack="rack-1"), _lnode("node4-z1-g2-r2", zone="zone-1", block="block-2", rack="rack-2"),
         _lnode("node5-z2-g1-r1", zone="zone-2", block="block-1", rack="rack-1"), _lnode("node6-z2-g1-r1", zone="zone-2", block="block-1", rack="rack-1"),
         _low("low-z1-1", "node1-z1-g1-r1"), _low("low-z1-2", "node2-z1-g1-r2"), _low("low-z1-3", "node3-z1-g2-r1"), _low("low-z1-4", "node4-z1-g2-r2"),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "block"), _cpg("cpg-sub2", "cpg-root", "block"),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub1", "rack"), _pg("pg3", "cpg-sub2", "rack"), _pg("pg4", "cpg-sub2", "rack"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)}, victims={"low-z1-1", "low-z1-2", "low-z1-3", "low-z1-4"},
             domains=[({f"p{i}" for i in range(1, 9)}, "zone"), ({"p1", "p2", "p3", "p4"}, "block"), ({"p5", "p6", "p7", "p8"}, "block"),
                      ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack"), ({"p5", "p6"}, "rack"), ({"p7", "p8"}, "rack")]),
        id="3-level CPG hierarchy: all levels have topology constraints (root=zone, sub=block, leaf=rack) with preemption",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z2-r1": ("rack-1", "zone-2")}),
         _low("low-z1-r1", "node1-z1-r1"), _low("low-z1-r2", "node2-z1-r2"),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", basic=True), _cpg("cpg-sub2", "cpg-root", basic=True),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub2", "rack"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, victims={"low-z1-r1", "low-z1-r2"},
             domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack")]),
        id="3-level CPG hierarchy: mid-level without topology constraints (root=zone, sub=none, leaf=rack) with preemption",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z2-r3": ("rack-3", "zone-2"), "node4-z2-r4": ("rack-4", "zone-2")}),
         _low("low-z1-r1", "node1-z1-r1"), _low("low-z1-r2", "node2-z1-r2"), _low("low-z2-r3", "node3-z2-r3"), _low("low-z2-r4", "node4-z2-r4"),
         _cpg("cpg-root", basic=True), _cpg("cpg-sub1", "cpg-root", "zone"), _cpg("cpg-sub2", "cpg-root", "zone"),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub1", "rack"), _pg("pg3", "cpg-sub2", "rack"), _pg("pg4", "cpg-sub2", "rack"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)}, victims={"low-z1-r1", "low-z1-r2", "low-z2-r3", "low-z2-r4"},
             domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p5", "p6", "p7", "p8"}, "zone"), ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack"), ({"p5", "p6"}, "rack"), ({"p7", "p8"}, "rack")]),
        id="3-level CPG hierarchy: top level without topology constraint (root=none, sub=zone, leaf=rack) with preemption",
    ),
    pytest.param(
        [*_racks({**FOUR, "node5-z2-r3": ("rack-3", "zone-2"), "node6-z2-r3": ("rack-3", "zone-2")}),
         _low("low-z1-r1-1", "node1-z1-r1"), _low("low-z1-r1-2", "node2-z1-r1"), _low("low-z1-r2-1", "node3-z1-r2"), _low("low-z1-r2-2", "node4-z1-r2"),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "rack"), _cpg("cpg-sub2", "cpg-root", "rack"),
         _pg("pg1", "cpg-sub1"), _pg("pg2", "cpg-sub1"), _pg("pg3", "cpg-sub2"), _pg("pg4", "cpg-sub2"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)}, victims={"low-z1-r1-1", "low-z1-r1-2", "low-z1-r2-1", "low-z1-r2-2"},
             domains=[({f"p{i}" for i in range(1, 9)}, "zone"), ({"p1", "p2", "p3", "p4"}, "rack"), ({"p5", "p6", "p7", "p8"}, "rack")]),
        id="3-level CPG hierarchy: bottom level without topology constraint (root=zone, sub=rack, leaf=none) with preemption",
    ),
    pytest.param(
        [*_racks({**FOUR, "node5-z2-r1": ("rack-1", "zone-2"), "node6-z2-r1": ("rack-1", "zone-2"), "node7-z2-r2": ("rack-2", "zone-2"), "node8-z2-r2": ("rack-2", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "rack"), _cpg("cpg-sub2", "cpg-root", "rack"),
         _pg("pg1", "cpg-sub1"), _pg("pg2", "cpg-sub1"), _pg("pg3", "cpg-sub2"), _pg("pg4", "cpg-sub2"),
         _busy("existing-pg1", "node5-z2-r1", group="pg1"), _low("low-z2-r1", "node6-z2-r1"), _low("low-z2-r2", "node7-z2-r2"),
         _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2"), _p("p4", "pg3"), _p("p5", "pg3"), _p("p6", "pg4"), _p("p7", "pg4")],
        dict(scheduled={f"p{i}" for i in range(1, 8)}, victims={"low-z2-r1", "low-z2-r2"},
             nodes=[({f"p{i}" for i in range(1, 8)}, {"node5-z2-r1", "node6-z2-r1", "node7-z2-r2", "node8-z2-r2"}),
                    ({"p1", "p2", "p3"}, {"node5-z2-r1", "node6-z2-r1"}), ({"p4", "p5", "p6", "p7"}, {"node7-z2-r2", "node8-z2-r2"})]),
        id="3-level CPG hierarchy: preexisting pod in leaf PodGroup determines topology for intermediate and root CPGs with preemption",
    ),
]


def check(events, want, log) -> None:
    got = placements(log)
    assert {p for p in got if p.startswith("p")} == want["scheduled"]
    assert {v.victim_pod.split("/", 1)[1] for v in log.victims} == want["victims"]
    check_placed(events, got, want)
    for pod, msg in want.get("pending", {}).items():
        assert pod not in got, pod
        if msg is not None:
            assert messages(log, pod, "FailedScheduling") == {msg}, pod
    if "root" in want:
        assert events_of(log, "cpg-root", "Unschedulable")[0][2] == want["root"]


@pytest.mark.parametrize(("events", "want"), WAP)
def test_cpg_topology_aware_scheduling_workload_aware_preemption(events, want):
    """Ported from ``TestCPGTopologyAwareSchedulingWorkloadAwarePreemption`` (all 14 cases)."""
    check(events, want, run(make_trace(*events, config=CPG, horizon_s=60), "gang"))


# ---- a standalone PodGroup with a topology constraint --------------------------------------------
TAS = NO_BACKOFF.with_changes(topology_aware_workload_scheduling=True)


def test_a_rack_constrained_gang_preempts_in_the_fullest_rack_of_the_cleaned_cluster():
    """SEMANTICS §8.8's example with lower-priority pods in the way: with every potential victim
    removed rack2 scores 5/6 (rack1 3/4, rack3 4/6, rack4 cannot hold 3 pods), so the gang is
    nominated there and only rack2's victim is evicted; the others are reprieved. The group's
    condition carries the placement loop's status and ``Preempt``'s success message."""
    racks = {"rack1": 2, "rack2": 3, "rack3": 3, "rack4": 1}
    events = [create(make_node(f"{r}-{i}", cpu=2, memory_gi=8, labels={"rack": r})) for r, n in racks.items() for i in range(n)]
    events += [create(make_pod("used-2", cpu=2, node_name="rack2-0", priority=100)), create(make_pod("used-3", cpu=1, node_name="rack3-2", priority=100))]
    events += [_low("low-1", "rack1-0"), _low("low-2", "rack2-1"), _low("low-3", "rack3-0"), _low("low-3b", "rack3-2", cpu=1)]
    events += [create(make_group("pg", 3, topology=("rack",), priority=100), 1)] + [create(make_pod(f"pg-{i}", cpu=1, group="pg", priority=100), 1) for i in range(3)]
    log = run(make_trace(*events, config=TAS, horizon_s=60), "gang")
    assert [v.victim_pod for v in log.victims] == ["default/low-2"]
    got = placements(log)
    assert {got[f"pg-{i}"] for i in range(3)} <= {"rack2-1", "rack2-2"}
    assert {got[p] for p in ("low-1", "low-3", "low-3b")} == {"rack1-0", "rack3-0", "rack3-2"}
    first = events_of(log, "pg", "Unschedulable")[0][2]
    assert first == _placements_failed(4, "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining") + FOUND.format(1)


def test_a_running_gang_preempts_inside_its_rack_for_a_late_member():
    """A gang already running in rack a (its scheduled members pin the generator to that domain)
    gets a third pod: rack b is empty, but the only placement is rack a, so the late pod's cycle
    ends "no pods were schedulable" and WAP evicts the lower-priority pod on a-2 (the case
    kubernetes#140683's review asked for: preemption for a PodGroup with TAS already scheduled)."""
    events = [create(make_node(f"{r}-{i}", cpu=2, memory_gi=8, labels={"rack": r})) for r, n in {"a": 3, "b": 2}.items() for i in range(n)]
    events += [_low("low", "a-2"), create(make_group("pg", 2, topology=("rack",), priority=100))]
    events += [create(make_pod(f"pg-{i}", cpu=2, group="pg", priority=100)) for i in range(2)] + [create(make_pod("pg-2", cpu=2, group="pg", priority=100), 5)]
    log = run(make_trace(*events, config=TAS, horizon_s=60), "gang")
    assert [v.victim_pod for v in log.victims] == ["default/low"]
    assert placements(log) == {"low": "a-2", "pg-0": "a-0", "pg-1": "a-1", "pg-2": "a-2"}  # pg-2 where low ran
    assert messages(log, "pg-2", "FailedScheduling") == {"0/3 nodes are available: 3 Insufficient cpu."}


# ---- CompositePodGroup victims and preemptors ----------------------------------------------------
def test_a_tree_under_an_all_root_is_one_victim_across_racks():
    """A low-priority tree whose root has ``disruptionMode: all`` (``getHighestAllAncestor``) is one
    unit: all its scheduled pods, on any node (``searchCrossNodesVictimPods``), at the root's
    priority, ranked above PodGroups and pods (``victimRank``: 3). The rack-a gang cannot do
    without la-0's node, so lb-0 on rack b goes too; the CompositePodGroup gets DisruptionTarget."""
    events = [create(make_node(f"{r}-{i}", cpu=4, memory_gi=8, labels={"rack": r})) for r in "ab" for i in range(2)]
    events += [create(make_composite("low", 2, priority=10, mode="all")), create(make_group("la", 1, parent="low", priority=10)), create(make_group("lb", 1, parent="low", priority=10))]
    events += [create(make_pod("la-0", cpu=4, group="la", node_name="a-0", priority=10, grace_s=0)), create(make_pod("lb-0", cpu=4, group="lb", node_name="b-0", priority=10, grace_s=0))]
    events += [create(make_pod("solo", cpu=4, node_name="a-1", priority=10, grace_s=0))]
    events += [create(make_group("hi", 2, topology=("rack",), priority=100), 1)] + [create(make_pod(f"hi-{i}", cpu=4, group="hi", priority=100), 1) for i in range(2)]
    log = run(make_trace(*events, config=CPG, horizon_s=60), "gang")
    assert sorted(v.victim_pod for v in log.victims) == ["default/la-0", "default/lb-0", "default/solo"]
    assert {placements(log)[f"hi-{i}"] for i in range(2)} == {"a-0", "a-1"}
    assert [(k, m) for k, o, r, m in zip(log.ev_kind, log.ev_object, log.ev_reason, log.ev_message) if r == "PreemptionByScheduler"] == [
        ("CompositePodGroup", "DisruptionTarget: preempted by podgroup default/hi")
    ]


def test_a_tree_with_preemption_policy_never_does_not_preempt():
    """The tree preempts with its root's policy (``GenericPodGroup.GetPreemptionPolicy``)."""
    events = [*_racks(FOUR), _low("low1-z1-r1", "node1-z1-r1"), _low("low2-z1-r1", "node2-z1-r1"), _low("low3", "node3-z1-r2"), _low("low4", "node4-z1-r2")]
    # ``validatePodGroup``: every group and pod of the hierarchy has the root's policy
    events += [create(make_composite("cpg-root", 2, topology=("rack",), priority=100, preemption_policy="Never"))]
    events += [create(make_group(g, 2, parent="cpg-root", priority=100, preemption_policy="Never")) for g in ("pg1", "pg2")]
    events += [create(make_pod(p, cpu=1, group=g, priority=100, preemption_policy="Never")) for p, g in (("p1", "pg1"), ("p2", "pg1"), ("p3", "pg2"), ("p4", "pg2"))]
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert not log.victims and not [p for p in placements(log) if p.startswith("p")]
    want = _placements_failed(2, MIN2_0_1) + ", pod group preemption: not eligible due to preemptionPolicy=Never."
    assert messages(log, "cpg-root", "Unschedulable") == {want}
    assert messages(log, "p3", "FailedScheduling") == {want}  # never evaluated: its gang's, then the root's status


# ---- the property --------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    racks=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    lows=st.lists(st.tuples(st.integers(0, 11), st.integers(1, 2), st.integers(0, 2)), max_size=8),
    gangs=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 2), st.integers(0, 20), st.integers(0, 3)), min_size=1, max_size=6),
)
def test_preempting_gangs_stay_in_one_domain_and_preempt_only_lower_priorities(racks, lows, gangs):
    """gang+tas with preemption: the pods of a rack-constrained gang bound at the same time all
    run in one rack, and every victim has a lower priority than its preemptor."""
    nodes = [f"r{i}-{j}" for i, n in enumerate(racks) for j in range(n)]
    events = [create(make_node(n, cpu=2, memory_gi=8, labels={"rack": n.rsplit("-", 1)[0]})) for n in nodes]
    used: dict[str, int] = defaultdict(int)
    for k, (where, cpu, prio) in enumerate(lows):
        node = nodes[where % len(nodes)]
        if used[node] + cpu <= 2:
            used[node] += cpu
            events.append(create(make_pod(f"low{k}", cpu=cpu, node_name=node, priority=prio * 10, grace_s=0)))
    for g, (size, cpu, at, prio) in enumerate(gangs):
        events.append(create(make_group(f"g{g}", size, topology=("rack",), priority=prio * 10), at))
        events += [create(make_pod(f"g{g}-{i}", cpu=cpu, group=f"g{g}", priority=prio * 10, grace_s=0), at) for i in range(size)]
    log = run(make_trace(*events, config=TAS, horizon_s=120), "gang")
    assert all(v.victim_priority < v.preemptor_priority for v in log.victims)
    spans: dict[str, list[tuple[int, float, str]]] = defaultdict(list)
    for p in log.pods:
        if p.bound_ms is not None and p.node and p.gang:
            spans[p.gang].append((p.bound_ms, p.ended_ms if p.ended_ms is not None else float("inf"), p.node.rsplit("-", 1)[0]))
    for gang, s in spans.items():
        for a in s:
            for b in s:
                if a[0] < b[1] and b[0] < a[1]:  # bound at the same time
                    assert a[2] == b[2], (gang, s)


# no rack holds the tree's 2 CPU: with the low pods gone r1 (2 of 2 CPU) outscores r0 (2 of 4)
PREEMPTING = dict(racks=[2, 1], lows=[(0, 2), (1, 2), (2, 1)], trees=[(2, [(1, 1), (1, 1)])])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    racks=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    lows=st.lists(st.tuples(st.integers(0, 8), st.integers(1, 2)), max_size=8),
    trees=st.lists(st.tuples(st.integers(1, 2), st.lists(st.tuples(st.integers(1, 2), st.integers(1, 2)), min_size=1, max_size=3)), min_size=1, max_size=3),
)
@example(**PREEMPTING)
def test_preempting_trees_stay_in_one_rack_and_preempt_only_lower_priorities(racks, lows, trees):
    """gang+cpg with preemption: rack-rooted trees of priority 10 over standalone pods of priority
    0. A tree's pods bound at the same time share one rack, every victim is a priority-0 pod
    preempted for a tree root, and a tree never has fewer than minGroupCount satisfied children."""
    nodes = [f"r{i}-{j}" for i, n in enumerate(racks) for j in range(n)]
    events = [create(make_node(n, cpu=2, memory_gi=8, labels={"rack": n.rsplit("-", 1)[0]})) for n in nodes]
    used: dict[str, int] = defaultdict(int)
    for k, (where, cpu) in enumerate(lows):
        node = nodes[where % len(nodes)]
        if used[node] + cpu <= 2:
            used[node] += cpu
            events.append(create(make_pod(f"low{k}", cpu=cpu, node_name=node, grace_s=0)))
    quorum: dict[str, tuple[int, dict[str, int]]] = {}
    for t, (mgc, kids) in enumerate(trees):
        root = f"t{t}"
        events.append(create(make_composite(root, min(mgc, len(kids)), topology=("rack",), priority=10), t))
        quorum[root] = (min(mgc, len(kids)), {})
        for k, (size, cpu) in enumerate(kids):
            name = f"t{t}g{k}"
            quorum[root][1][name] = size
            events.append(create(make_group(name, size, parent=root, priority=10), t))
            events += [create(make_pod(f"{name}-{i}", cpu=cpu, group=name, priority=10, grace_s=0), t) for i in range(size)]
    log = run(make_trace(*events, config=CPG, horizon_s=60), "gang")
    if dict(racks=racks, lows=lows, trees=trees) == PREEMPTING:
        assert [v.victim_pod for v in log.victims] == ["default/low2"]
    assert all(v.victim_priority == 0 and v.preemptor_priority == 10 and v.preemptor.split("/", 1)[1] in quorum for v in log.victims)
    spans: dict[str, list[tuple[int, float, str]]] = defaultdict(list)
    bound: dict[str, int] = defaultdict(int)
    for p in log.pods:
        name = p.pod.split("/", 1)[1]
        if p.bound_ms is not None and p.node and name.startswith("t"):
            spans[name.split("g", 1)[0]].append((p.bound_ms, p.ended_ms if p.ended_ms is not None else float("inf"), p.node.rsplit("-", 1)[0]))
            bound[name.rsplit("-", 1)[0]] += 1
    for tree, s in spans.items():
        for a in s:
            for b in s:
                if a[0] < b[1] and b[0] < a[1]:
                    assert a[2] == b[2], (tree, s)
        need, sizes = quorum[tree]
        assert sum(1 for g, n in sizes.items() if bound[g] >= n) >= need, (tree, dict(bound))
