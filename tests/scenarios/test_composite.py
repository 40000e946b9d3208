"""CompositePodGroup hierarchies (KEP-6012, SEMANTICS §9) through whole replays under ``gang``
with the CompositePodGroup and TopologyAwareWorkloadScheduling gates (``gang+cpg``).

Upstream sources: GangScheduling's ``preEnqueueWithHierarchies`` / ``checkCPGHierarchyReadiness``
and ``hierarchyTrackerImpl`` (PreEnqueue of a tree), ``algorithm_podgroup.go``
(``compositePodGroupSchedulingPlacementAlgorithm``, ``compositePodGroupSchedulingDefaultAlgorithm``:
PlacementFeasible over children; ``successfulLeafResults``: a failing parent invalidates children
that succeeded on their own; ``RunRootSchedulingAlgorithm``: "no pods were schedulable"), the
placement scorers of ``findBestCompositePodGroupPlacement`` and the e2e expectation that an
unplaceable hierarchy's CompositePodGroup condition is ``False/Unschedulable``
(test/e2e/scheduling, ``verifyCompositePodGroupCondition``). The property: under ``gang+cpg`` a
gang root never has pods bound unless at least ``minGroupCount`` of its children are satisfied,
and a root with a topology key holds its whole tree in one domain.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim.api.objects import Affinity, PreferredSchedulingTerm, Taint, Toleration
from gangsim.api.selectors import NodeSelectorTerm, Requirement

from builders import NO_BACKOFF, create, delete, events_of, make_composite, make_group, make_node, make_pod, make_trace, placements, run

CPG = NO_BACKOFF.with_changes(topology_aware_workload_scheduling=True, composite_pod_group=True)
TAS = NO_BACKOFF.with_changes(topology_aware_workload_scheduling=True)
WAITING_FOR_TREE = 'waiting for composite pod group "{}" tree to meet quorum'
NO_VICTIMS = ", pod group preemption: No preemption victims found for incoming preemptor"


def rack_nodes(layout: dict[str, int], cpu: float = 4):
    return [create(make_node(f"{r}-{i}", cpu=cpu, memory_gi=8, labels={"rack": r})) for r, n in layout.items() for i in range(n)]


def leaf(name, size, parent, *, cpu=2.0, min_count=None, basic=False, topology=(), at_s=0, pods_at_s=None):
    group = create(make_group(name, min_count or size, basic=basic, parent=parent, topology=topology), at_s)
    at = at_s if pods_at_s is None else pods_at_s
    return [group] + [create(make_pod(f"{name}-{i}", cpu=cpu, group=name), at) for i in range(size)]


def rack_of(node: str) -> str:
    return node.rsplit("-", 1)[0]


def messages(log, name, reason):
    return {m for _, _, m in events_of(log, name, reason)}


def test_the_tree_lands_in_one_rack():
    """Root gang{minGroupCount: 2} with a rack key, two child gangs of 2 x 2 CPU: rack a (two
    4-CPU nodes) holds all four pods, rack b (one node) does not; without the gate each PodGroup
    is a root of its own and the second one spreads over both racks."""
    events = rack_nodes({"a": 2, "b": 1}) + [create(make_composite("root", 2, topology=("rack",)))]
    events += leaf("pa", 2, "root") + leaf("pb", 2, "root")
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert placements(log) == {"pa-0": "a-0", "pa-1": "a-1", "pb-0": "a-0", "pb-1": "a-1"}
    assert events_of(log, "root", "Scheduled") == [(0, "Scheduled", "")]
    log = run(make_trace(*events, config=TAS, horizon_s=30), "gang")
    assert {rack_of(n) for p, n in placements(log).items() if p.startswith("pb-")} == {"a", "b"}


def test_the_tree_waits_for_min_group_count_ready_children():
    """PreEnqueue (``checkCPGHierarchyReadiness``): pa's pods wait with the root's name until pb
    has minCount pods, then the whole tree is scheduled in one cycle."""
    events = rack_nodes({"a": 2}) + [create(make_composite("root", 2, topology=("rack",)))]
    events += leaf("pa", 2, "root") + leaf("pb", 2, "root", pods_at_s=5)
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert messages(log, "pa-0", "Gated") == {WAITING_FOR_TREE.format("root")}
    assert {t for t, _, _ in events_of(log, "pa-0", "Scheduled")} == {5000}
    assert len(placements(log)) == 4


def test_a_missing_parent_is_named_until_it_appears():
    """A PodGroup whose parent CompositePodGroup is not there yet: its pods wait naming the
    missing ancestor (``checkCPGHierarchyReadiness``'s fallback name) and run once it appears."""
    events = rack_nodes({"a": 2}) + leaf("pa", 2, "root") + [create(make_composite("root", 1), 3)]
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert messages(log, "pa-0", "Gated") == {WAITING_FOR_TREE.format("root")}
    assert {t for t, _, _ in events_of(log, "pa-0", "Scheduled")} == {3000}


def test_a_failing_parent_invalidates_a_child_that_succeeded():
    """pa fits rack a on its own, pb (8-CPU pods) fits nowhere: the gang root needs both, so pa
    is not bound either. pa and the root carry the root's placement fit error; pb its own; pb-0
    its FitError and pb-1, never evaluated, pb's status. Workload-aware preemption runs for the
    root and finds nothing: its message ends every group's status (``applyPodGroupPostFilterResult``)
    but not a pod's own FitError."""
    events = rack_nodes({"a": 2, "b": 1}) + [create(make_composite("root", 2, topology=("rack",)))]
    events += leaf("pa", 2, "root") + leaf("pb", 2, "root", cpu=8)
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert placements(log) == {}
    root_msg = "0/2 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining" + NO_VICTIMS
    pb_msg = "0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining" + NO_VICTIMS
    assert messages(log, "root", "Unschedulable") == {root_msg}
    assert messages(log, "pa", "Unschedulable") == {root_msg}
    assert messages(log, "pa-0", "FailedScheduling") == {root_msg}
    assert messages(log, "pb", "Unschedulable") == {pb_msg}
    # N is the placement's node count (rack a: 2), upstream's NumNodesInPlacement in schedulePod
    assert messages(log, "pb-0", "FailedScheduling") == {"0/2 nodes are available: 2 Insufficient cpu."}
    assert messages(log, "pb-1", "FailedScheduling") == {pb_msg}


def test_a_basic_root_binds_the_children_that_fit():
    """A basic root (minGroupCount 1): pa binds, pb stays pending with its own status. Both racks
    are feasible (pa alone); NodeResourcesFit's placement score prefers the fuller rack b."""
    events = rack_nodes({"a": 2, "b": 1}) + [create(make_composite("root", basic=True, topology=("rack",)))]
    events += leaf("pa", 2, "root") + leaf("pb", 2, "root", cpu=8)
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    assert placements(log) == {"pa-0": "b-0", "pa-1": "b-0"}
    assert events_of(log, "root", "Scheduled") == [(0, "Scheduled", "")]
    assert messages(log, "pb", "Unschedulable") == {"0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"}


def test_three_levels_with_a_rack_root_and_host_children():
    """root (rack) -> two replicas (hostname, gang of one PodGroup each) -> PodGroups of 2 x 2 CPU:
    each replica lands on one host, both hosts in one rack."""
    events = [create(make_node(f"{r}-{i}", cpu=4, memory_gi=8, labels={"rack": r, "host": f"{r}-{i}"})) for r, n in {"a": 1, "b": 2}.items() for i in range(n)]
    events += [create(make_composite("root", 2, topology=("rack",)))]
    for k in range(2):
        events += [create(make_composite(f"rep{k}", 1, topology=("host",), parent="root"))] + leaf(f"w{k}", 2, f"rep{k}")
    log = run(make_trace(*events, config=CPG, horizon_s=30), "gang")
    got = placements(log)
    assert {rack_of(n) for n in got.values()} == {"b"} and len(got) == 4
    assert got["w0-0"] == got["w0-1"] and got["w1-0"] == got["w1-1"] and got["w0-0"] != got["w1-0"]
    for name in ("root", "rep0", "rep1"):
        assert events_of(log, name, "Scheduled") == [(0, "Scheduled", "")]


def test_priority_comes_from_the_root():
    """``validatePodGroup`` over the hierarchy: a member pod whose priority differs from the root
    CompositePodGroup's is a SchedulerError naming the root."""
    events = rack_nodes({"a": 2}) + [create(make_composite("root", 1, priority=10))]
    events += [create(make_group("pa", 1, parent="root", priority=10)), create(make_pod("pa-0", cpu=1, group="pa", priority=5))]
    log = run(make_trace(*events, config=CPG, horizon_s=5), "gang")
    want = "all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got 5 (\"pa-0\") and 10 (\"default/root\")"
    assert messages(log, "pa", "SchedulerError") == {want}
    assert messages(log, "root", "SchedulerError") == {want}


def test_victims_carry_the_root_priority():
    """SEMANTICS §11.1 (``traverseHierarchyUp`` for ``getPodPriority``): a PodGroup of priority 50
    under a root of priority 10 is a victim of priority 10, so a standalone pod of priority 20
    preempts it (as a victim of the PodGroup's 50 it would be safe)."""
    events = rack_nodes({"a": 1}) + [create(make_composite("root", 1, priority=10))]
    events += [create(make_group("pa", 1, parent="root", priority=50)), create(make_pod("pa-0", cpu=4, group="pa", priority=10))]
    events += [create(make_pod("urgent", cpu=4, priority=20), 5)]
    got = run(make_trace(*events, config=CPG, horizon_s=60), "gang")
    assert [v.victim_pod for v in got.victims] == ["default/pa-0"]
    assert placements(got).get("urgent") == "a-0"


# ---- TestCPGTopologyAwareScheduling (test/integration/scheduler/podgroup/topologyawarescheduling) --
# Nodes of 2 CPU labelled rack and zone, pods of 1 CPU, every group priority 100 (the test's makers).
def _node(name, rack, zone):
    return create(make_node(name, cpu=2, memory_gi=8, labels={"rack": rack, "zone": zone}))


def _busy(name, node, cpu=1, group=""):
    return create(make_pod(name, cpu=cpu, node_name=node, group=group, priority=100))


def _pg(name, parent, topology="", min_count=2, basic=False):
    return create(make_group(name, min_count, parent=parent, topology=(topology,) if topology else (), basic=basic, priority=100))


def _p(name, group):
    return create(make_pod(name, cpu=1, group=group, priority=100))


UPSTREAM = [
    (
        "parent CPG has topology constraints, children do not; schedules on a single rack",
        [_node("node1-z1-r1", "rack-1", "zone-1"), _node("node2-z1-r1", "rack-1", "zone-1"), _node("node3-z1-r2", "rack-2", "zone-1"), _node("node4-z1-r2", "rack-2", "zone-1"),
         _busy("existing", "node4-z1-r2", cpu=2), create(make_composite("cpg-root", 2, topology=("rack",), priority=100)),
         _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        {"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"},
    ),
    (
        "parent CPG has topology constraints, children do not; preexisting pod belonging to the hierarchy determines the topology",
        [_node("node1-z1-r1", "rack-1", "zone-1"), _node("node2-z1-r1", "rack-1", "zone-1"), _node("node3-z1-r2", "rack-2", "zone-1"), _node("node4-z1-r2", "rack-2", "zone-1"),
         _busy("existing", "node4-z1-r2", group="pg1"), create(make_composite("cpg-root", 2, topology=("rack",), priority=100)),
         _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2")],
        {"p1", "p2", "p3"}, {"node3-z1-r2", "node4-z1-r2"},
    ),
    (
        "parent CPG has topology constraints, children do not; remains pending when no single rack can fit all children",
        [_node("node1-z1-r1", "rack-1", "zone-1"), _node("node2-z1-r2", "rack-2", "zone-1"), _busy("existing1", "node1-z1-r1"), _busy("existing2", "node2-z1-r2"),
         create(make_composite("cpg-root", 2, topology=("rack",), priority=100)), _pg("pg1", "cpg-root", basic=True), _pg("pg2", "cpg-root", basic=True),
         _p("p1", "pg1"), _p("p2", "pg2")],
        set(), set(),
    ),
    (
        "parent CPG and child PGs both have topology constraints (multi-level constraints: zone and rack)",
        [_node("node1-z1-r1", "rack-1", "zone-1"), _node("node2-z1-r2", "rack-2", "zone-1"), _node("node3-z2-r1", "rack-1", "zone-2"), _node("node4-z2-r1", "rack-1", "zone-2"),
         _busy("existing-z2", "node3-z2-r1"), create(make_composite("cpg-root", 2, topology=("zone",), priority=100)),
         _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        {"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r2"},
    ),
]


@pytest.mark.parametrize(("name", "events", "scheduled", "nodes"), UPSTREAM, ids=[u[0] for u in UPSTREAM])
def test_cpg_topology_aware_scheduling(name, events, scheduled, nodes):
    """Ported from ``TestCPGTopologyAwareScheduling``: which pods are scheduled, on which nodes."""
    got = {p: n for p, n in placements(run(make_trace(*events, config=CPG, horizon_s=30), "gang")).items() if p.startswith("p")}
    assert set(got) == scheduled
    assert set(got.values()) <= nodes
    if name.startswith("parent CPG and child PGs"):  # each PodGroup in one rack
        assert got["p1"] == got["p2"] and got["p3"] == got["p4"]


# ---- the property ------------------------------------------------------------------------------
def _satisfied(st_key, tree, bound, groups) -> bool:
    kind, min_count, children = groups[st_key]
    if kind == "pg":
        return bound.get(st_key, 0) >= min_count
    return sum(1 for c in children if _satisfied(c, tree, bound, groups)) >= min_count


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(  # trees: (min_group_count, [(pods, min_count, cpu)...])
        st.tuples(st.integers(1, 3), st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.sampled_from([1.0, 2.0, 3.0])), min_size=1, max_size=3)),
        min_size=1, max_size=4,
    ),
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
)
def test_a_gang_root_binds_only_a_quorum_inside_one_rack(trees, racks):
    events = rack_nodes({f"r{i}": n for i, n in enumerate(racks)})
    groups: dict[str, tuple[str, int, list[str]]] = {}
    for t, (mgc, kids) in enumerate(trees):
        root = f"t{t}"
        events.append(create(make_composite(root, min(mgc, len(kids)), topology=("rack",)), t))
        groups[root] = ("cpg", min(mgc, len(kids)), [])
        for k, (size, mc, cpu) in enumerate(kids):
            name = f"t{t}g{k}"
            groups[name] = ("pg", min(mc, size), [])
            groups[root][2].append(name)
            events += leaf(name, size, root, cpu=cpu, min_count=min(mc, size), at_s=t)
    log = run(make_trace(*events, config=CPG, horizon_s=60), "gang")  # pods run 1 h: nothing ends
    got = placements(log)
    for t in range(len(trees)):
        root = f"t{t}"
        bound: dict[str, int] = {}
        racks_used = set()
        for pod, node in got.items():
            if pod.startswith(root + "g"):
                bound[pod.rsplit("-", 1)[0]] = bound.get(pod.rsplit("-", 1)[0], 0) + 1
                racks_used.add(rack_of(node))
        if bound:
            assert _satisfied(root, None, bound, groups), (root, bound)
            assert len(racks_used) == 1, (root, racks_used)


# ---- TestCPGTopologyAwareScheduling, cases 5 and later ----------------------------------------
# Same makers as above (cpg_tas_test.go: makeNode 2 CPU, makePod 1 CPU, priority 100). A case is
# (upstream name, events, expectations); steps upstream runs one after another ("verify p1 is
# scheduled", then create p2) are seconds apart here. Expectations mirror the upstream steps:
# ``scheduled`` WaitForPodsScheduled, ``pending`` WaitForPodsUnschedulable (unbound, with
# these FailedScheduling messages), ``errors`` WaitForPodsSchedulingError (the pods' PodGroups get a
# SchedulerError event with that message), ``nodes`` VerifyAssignments, ``domains``
# VerifyAssignedInOneDomain; ``exact`` pins placements the cluster forces beyond upstream's checks.
def _cpg(name, parent="", topology="", min_group_count=2, basic=False, at_s=0):
    return create(make_composite(name, min_group_count, basic=basic, topology=(topology,) if topology else (), parent=parent or None, priority=100), at_s)


def _lnode(name, **labels):
    """makeNodeWithLabels."""
    return create(make_node(name, cpu=2, memory_gi=8, labels=labels))


def _tainted(name, rack, zone):
    """addTaint(makeNode(...), "taint"): NoSchedule, empty value."""
    return create(make_node(name, cpu=2, memory_gi=8, labels={"rack": rack, "zone": zone}, taints=(Taint("taint", "", "NoSchedule"),)))


def _tolerating(name, group):
    """addToleration(makePod(...), "taint")."""
    return create(make_pod(name, cpu=1, group=group, priority=100, tolerations=(Toleration("taint"),)))


def _preferring(name, group, node):
    """addPreferredNode: weight 100, matchFields metadata.name In [node]."""
    pref = PreferredSchedulingTerm(100, NodeSelectorTerm((), (Requirement("metadata.name", "In", (node,)),)))
    return create(make_pod(name, cpu=1, group=group, priority=100, affinity=Affinity(node_preferred=(pref,))))


def _at(event, at_s):
    return dataclasses.replace(event, at_ms=int(at_s * 1000))


def _racks(layout):
    """makeNode(name, rack, zone) for {name: (rack, zone)}."""
    return [_node(n, r, z) for n, (r, z) in layout.items()]


FOUR = {"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1"), "node3-z1-r2": ("rack-2", "zone-1"), "node4-z1-r2": ("rack-2", "zone-1")}
# FailedScheduling of a pod that failed Filter in a 2-node rack (N = the placement's nodes), and of
# the others: their gang's (or, never evaluated, its parent's) placement-loop status
FIT2 = "0/2 nodes are available: 2 Insufficient cpu."
PG_MIN2 = "0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"
PG_MIN2_WAP = PG_MIN2 + NO_VICTIMS  # the root failed: WAP ran for it and found nothing
CONFLICT = "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: zone-1, zone-2"

UPSTREAM_MORE = [
    pytest.param(
        [_tainted("node1-z1-r1", "rack-1", "zone-1"), *_racks({"node2-z1-r2": ("rack-2", "zone-1"), "node3-z1-r3": ("rack-3", "zone-1"), "node4-z2-r1": ("rack-1", "zone-2"), "node5-z2-r2": ("rack-2", "zone-2")}),
         _busy("existing-z2", "node5-z2-r2"), _busy("existing-z1-r2", "node2-z1-r2"), _busy("existing-z1-r3", "node3-z1-r3"),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root"),
         _tolerating("p1", "pg1"), _tolerating("p2", "pg1"), _preferring("p3", "pg2", "node4-z2-r1"), _preferring("p4", "pg2", "node4-z2-r1")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p1", "p2"}, "rack")],
             exact={"p1": "node1-z1-r1", "p2": "node1-z1-r1", "p3": "node2-z1-r2", "p4": "node3-z1-r3"}),
        id="parent CPG and only one child PG has topology constraints; the other child uses parent's topology",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z1-r2": ("rack-2", "zone-1"), "node4-z2-r1": ("rack-1", "zone-2"), "node5-z2-r1": ("rack-1", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"),
         _busy("existing-z1", "node1-z1-r1", group="pg1"), _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2")],
        dict(scheduled={"p1", "p2", "p3"}, nodes=[({"p1"}, {"node1-z1-r1"}), ({"p2", "p3"}, {"node2-z1-r2", "node3-z1-r2"})]),
        id="parent CPG and all child PGs have topology constraints, preexisting pod group pods constrain the available topology domains",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1"), "node3-z2-r1": ("rack-1", "zone-2"), "node4-z2-r1": ("rack-1", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _pg("pg1", "cpg-root", "rack"), _pg("pg2", "cpg-root", "rack"),
         _busy("existing-z1", "node1-z1-r1", group="pg1"), _busy("existing-z2", "node3-z2-r1", group="pg2"), _p("p1", "pg1"), _p("p2", "pg2")],
        # upstream's two domains come in its scheduled pods' order; gangsim's is by pod uid
        dict(errors={"p1": CONFLICT, "p2": CONFLICT}),
        id="parent CPG has topology constraints, preexisting pod group pods are in conflicting domains across pod groups, fails to schedule any pod",
    ),
    pytest.param(
        [_lnode("node1-z1-g1-r1", zone="zone-1", block="block-1", rack="rack-1"), _lnode("node2-z1-g1-r2", zone="zone-1", block="block-1", rack="rack-2"),
         _lnode("node3-z1-g2-r1", zone="zone-1", block="block-2", rack="rack-1"), _lnode("node4-z1-g2-r2", zone="zone-1", block="block-2", rack="rack-2"),
         _lnode("node5-z2-g1-r1", zone="zone-2", block="block-1", rack="rack-1"), _lnode("node6-z2-g1-r1", zone="zone-2", block="block-1", rack="rack-1"),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "block"), _cpg("cpg-sub2", "cpg-root", "block"),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub1", "rack"), _pg("pg3", "cpg-sub2", "rack"), _pg("pg4", "cpg-sub2", "rack"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)},
             domains=[({f"p{i}" for i in range(1, 9)}, "zone"), ({"p1", "p2", "p3", "p4"}, "block"), ({"p5", "p6", "p7", "p8"}, "block"),
                      ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack"), ({"p5", "p6"}, "rack"), ({"p7", "p8"}, "rack")],
             nodes=[({f"p{i}" for i in range(1, 9)}, {"node1-z1-g1-r1", "node2-z1-g1-r2", "node3-z1-g2-r1", "node4-z1-g2-r2"})]),
        id="3-level CPG hierarchy: all levels have topology constraints (root=zone, sub=block, leaf=rack)",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z2-r1": ("rack-1", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", basic=True), _cpg("cpg-sub2", "cpg-root", basic=True),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub2", "rack"), _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2")],
        dict(scheduled={"p1", "p2", "p3", "p4"}, domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack")],
             nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r2"})]),
        id="3-level CPG hierarchy: mid-level without topology constraints (root=zone, sub=none, leaf=rack)",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r2": ("rack-2", "zone-1"), "node3-z2-r3": ("rack-3", "zone-2"), "node4-z2-r4": ("rack-4", "zone-2"), "node5-z2-r5": ("rack-5", "zone-2")}),
         _cpg("cpg-root", basic=True), _cpg("cpg-sub1", "cpg-root", "zone"), _cpg("cpg-sub2", "cpg-root", "zone"),
         _pg("pg1", "cpg-sub1", "rack"), _pg("pg2", "cpg-sub1", "rack"), _pg("pg3", "cpg-sub2", "rack"), _pg("pg4", "cpg-sub2", "rack"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)},
             domains=[({"p1", "p2", "p3", "p4"}, "zone"), ({"p5", "p6", "p7", "p8"}, "zone"), ({"p1", "p2"}, "rack"), ({"p3", "p4"}, "rack"), ({"p5", "p6"}, "rack"), ({"p7", "p8"}, "rack")]),
        id="3-level CPG hierarchy: top level without topology constraint (root=none, sub=zone, leaf=rack)",
    ),
    pytest.param(
        [*_racks({**FOUR, "node5-z2-r3": ("rack-3", "zone-2"), "node6-z2-r3": ("rack-3", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "rack"), _cpg("cpg-sub2", "cpg-root", "rack"),
         _pg("pg1", "cpg-sub1"), _pg("pg2", "cpg-sub1"), _pg("pg3", "cpg-sub2"), _pg("pg4", "cpg-sub2"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)},
             domains=[({f"p{i}" for i in range(1, 9)}, "zone"), ({"p1", "p2", "p3", "p4"}, "rack"), ({"p5", "p6", "p7", "p8"}, "rack")],
             nodes=[({f"p{i}" for i in range(1, 9)}, set(FOUR))]),
        id="3-level CPG hierarchy: bottom level without topology constraint (root=zone, sub=rack, leaf=none)",
    ),
    pytest.param(
        [*_racks({**FOUR, "node5-z2-r1": ("rack-1", "zone-2"), "node6-z2-r1": ("rack-1", "zone-2"), "node7-z2-r2": ("rack-2", "zone-2"), "node8-z2-r2": ("rack-2", "zone-2")}),
         _cpg("cpg-root", topology="zone"), _cpg("cpg-sub1", "cpg-root", "rack"), _cpg("cpg-sub2", "cpg-root", "rack"),
         _pg("pg1", "cpg-sub1"), _pg("pg2", "cpg-sub1"), _pg("pg3", "cpg-sub2"), _pg("pg4", "cpg-sub2"),
         _busy("existing-pg1", "node5-z2-r1", group="pg1"),
         _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2"), _p("p4", "pg3"), _p("p5", "pg3"), _p("p6", "pg4"), _p("p7", "pg4")],
        dict(scheduled={f"p{i}" for i in range(1, 8)},
             nodes=[({f"p{i}" for i in range(1, 8)}, {"node5-z2-r1", "node6-z2-r1", "node7-z2-r2", "node8-z2-r2"}),
                    ({"p1", "p2", "p3"}, {"node5-z2-r1", "node6-z2-r1"}), ({"p4", "p5", "p6", "p7"}, {"node7-z2-r2", "node8-z2-r2"})]),
        id="3-level CPG hierarchy: preexisting pod in leaf PodGroup determines topology for intermediate and root CPGs",
    ),
    pytest.param(
        [*_racks(FOUR), _busy("existing", "node1-z1-r1"), _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root", min_count=1), _pg("pg2", "cpg-root"),
         _p("p1", "pg1"), _p("p2", "pg2"), _p("p3", "pg2")],
        dict(scheduled={"p1", "p2", "p3"}, nodes=[({"p1", "p2", "p3"}, {"node1-z1-r1", "node2-z1-r1"})]),
        id="CPG schedules on a single rack, choosing placement with highest allocation percentage (NodeResourcesFit placement scoring)",
    ),
    pytest.param(
        [*_racks(FOUR), _busy("existing", "node1-z1-r1"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"),
         _p("p1", "pg1"), _p("p2", "pg1"), _p("p3", "pg2"), _p("p4", "pg2"), _cpg("cpg-root", topology="rack", min_group_count=1, at_s=1)],
        dict(scheduled={"p1", "p2", "p3", "p4"}, nodes=[({"p1", "p2", "p3", "p4"}, {"node3-z1-r2", "node4-z1-r2"})]),
        id="CPG schedules on a single rack, choosing placement that accommodates more descendant pods (PodGroupPodsCount placement scoring)",
    ),
    pytest.param(
        [*_racks(FOUR), _busy("existing1", "node3-z1-r2", cpu=2), _busy("existing2", "node4-z1-r2", cpu=2),
         _cpg("cpg-root", topology="rack"), _pg("pg1", "cpg-root"), _pg("pg2", "cpg-root"), _pg("pg3", "cpg-root"),
         *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 7)]],
        dict(scheduled={"p1", "p2", "p3", "p4"}, pending={"p5": FIT2, "p6": PG_MIN2}, nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"})]),
        id="CPG with minGroupCount < total children schedules satisfying subset on a single rack",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1"), "node3-z1-r2": ("rack-2", "zone-1")}),
         _busy("existing", "node1-z1-r1", cpu=2), _cpg("cpg-root", topology="rack", basic=True), _pg("pg1", "cpg-root", basic=True), _pg("pg2", "cpg-root", basic=True),
         _at(_p("p1", "pg1"), 1), _at(_p("p2", "pg1"), 2), _at(_p("p3", "pg2"), 3), _at(_p("p4", "pg2"), 3), delete("Pod", "existing", 10)],
        dict(scheduled={"p1", "p2", "p3", "p4"}, nodes=[({"p1", "p2", "p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"})],
             pending_until={"p3": (FIT2, 10_000), "p4": (FIT2, 10_000)}, exact={"p1": "node2-z1-r1", "p2": "node2-z1-r1", "p3": "node1-z1-r1", "p4": "node1-z1-r1"}),
        id="basic CPG picks the higher-scoring rack and stays there instead of spilling to a rack that fits",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1"), "node3-z1-r2": ("rack-2", "zone-1"), "node4-z1-r2": ("rack-2", "zone-1"), "node5-z1-r2": ("rack-2", "zone-1")}),
         _cpg("cpg-root1", topology="rack"), _pg("pg1-1", "cpg-root1", min_count=1), _pg("pg1-2", "cpg-root1", min_count=1), _p("p1", "pg1-1"), _p("p2", "pg1-2"),
         _cpg("cpg-root2", topology="rack", at_s=2), _at(_pg("pg2-1", "cpg-root2", min_count=1), 2), _at(_pg("pg2-2", "cpg-root2", min_count=1), 2), _at(_p("p3", "pg2-1"), 2), _at(_p("p4", "pg2-2"), 2)],
        dict(scheduled={"p1", "p2", "p3", "p4"}, nodes=[({"p1", "p2"}, {"node1-z1-r1", "node2-z1-r1"}), ({"p3", "p4"}, {"node1-z1-r1", "node2-z1-r1"})]),
        id="two CPG hierarchies schedule consecutively on the same rack although another rack fits",
    ),
    pytest.param(
        [*_racks(FOUR), _cpg("cpg-root1", topology="rack"), _pg("pg1-1", "cpg-root1"), _pg("pg1-2", "cpg-root1"),
         *[_p(f"p1-{i}", f"pg1-{(i + 1) // 2}") for i in range(1, 5)],
         _cpg("cpg-root2", topology="rack", at_s=2), _at(_pg("pg2-1", "cpg-root2"), 2), _at(_pg("pg2-2", "cpg-root2"), 2),
         *[_at(_p(f"p2-{i}", f"pg2-{(i + 1) // 2}"), 2) for i in range(1, 5)]],
        dict(scheduled={f"p{k}-{i}" for k in (1, 2) for i in range(1, 5)},
             domains=[({f"p1-{i}" for i in range(1, 5)}, "rack"), ({f"p2-{i}" for i in range(1, 5)}, "rack")]),
        id="two CPG hierarchies schedule consecutively, each on a separate rack",
    ),
    pytest.param(
        [*_racks({"node1-z1-r1": ("rack-1", "zone-1"), "node2-z1-r1": ("rack-1", "zone-1")}), _cpg("cpg-root1", topology="rack"), _pg("pg1-1", "cpg-root1"), _pg("pg1-2", "cpg-root1"),
         *[_p(f"p1-{i}", f"pg1-{(i + 1) // 2}") for i in range(1, 5)],
         _cpg("cpg-root2", topology="rack", at_s=2), _at(_pg("pg2-1", "cpg-root2"), 2), _at(_pg("pg2-2", "cpg-root2"), 2),
         *[_at(_p(f"p2-{i}", f"pg2-{(i + 1) // 2}"), 2) for i in range(1, 5)]],
        dict(scheduled={f"p1-{i}" for i in range(1, 5)}, pending={"p2-1": FIT2, "p2-2": PG_MIN2_WAP, "p2-3": PG_MIN2_WAP, "p2-4": PG_MIN2_WAP}),
        id="two CPG hierarchies schedule consecutively, second remains pending when no additional rack is available",
    ),
    pytest.param(
        [*_racks({**FOUR, "node5-z2-r1": ("rack-1", "zone-2"), "node6-z2-r2": ("rack-2", "zone-2")}),
         _cpg("cpg-root", topology="zone", min_group_count=3), _cpg("cpg-sub1", "cpg-root", "rack"), _pg("pg1", "cpg-sub1"), _pg("pg2", "cpg-sub1"),
         _pg("pg3", "cpg-root", "rack"), _pg("pg4", "cpg-root"), *[_p(f"p{i}", f"pg{(i + 1) // 2}") for i in range(1, 9)]],
        dict(scheduled={f"p{i}" for i in range(1, 9)},
             domains=[({f"p{i}" for i in range(1, 9)}, "zone"), ({"p1", "p2", "p3", "p4"}, "rack"), ({"p5", "p6"}, "rack")],
             nodes=[({f"p{i}" for i in range(1, 9)}, set(FOUR))]),
        id="CPG hierarchy with mixed sub-CPG and direct child PGs and different topology constraints",
    ),
]


def check_placed(events, got, want) -> None:
    """VerifyAssignments (``nodes``: pods within these nodes), VerifyAssignedInOneDomain
    (``domains``: pods in one domain of the key) and ``exact`` placements."""
    labels = {e.name: e.obj.labels for e in events if e.kind == "Node"}
    for pods, nodes in want.get("nodes", []):
        assert {got[p] for p in pods} <= nodes, pods
    for pods, key in want.get("domains", []):
        assert len({labels[got[p]][key] for p in pods}) == 1, (pods, key)
    for pod, node in want.get("exact", {}).items():
        assert got[pod] == node, pod


@pytest.mark.parametrize(("events", "want"), UPSTREAM_MORE)
def test_cpg_topology_aware_scheduling_more(events, want):
    """Ported from ``TestCPGTopologyAwareScheduling`` (kubernetes/kubernetes
    test/integration/scheduler/podgroup/topology_aware_scheduling/cpg_tas_test.go), cases 5-20."""
    log = run(make_trace(*events, config=CPG, horizon_s=60), "gang")
    got = placements(log)
    ours = {p: n for p, n in got.items() if p.startswith("p")}
    assert set(ours) == want.get("scheduled", set())
    check_placed(events, got, want)
    for pod, msg in want.get("pending", {}).items():
        assert messages(log, pod, "FailedScheduling") == {msg}, pod
    for pod, (msg, t) in want.get("pending_until", {}).items():
        assert messages(log, pod, "FailedScheduling") == {msg}, pod
        assert [at for at, _, _ in events_of(log, pod, "Scheduled")] == [t], pod
    for pod, msg in want.get("errors", {}).items():
        group = next(e.obj.spec.scheduling_group for e in events if e.kind == "Pod" and e.name == pod)
        assert messages(log, group, "SchedulerError") == {msg}, pod
        assert pod not in got
