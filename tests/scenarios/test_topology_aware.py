"""Topology-aware workload scheduling (KEP-5732, SEMANTICS §8.8) through whole replays under
``gang`` with the TopologyAwareWorkloadScheduling gate (``gang+tas``).

Cases follow ``pkg/scheduler/algorithm_podgroup_test.go`` (``TestPodGroupSchedulingPlacementAlgorithm``:
"filters out infeasible placements", the ``0/N placements are available, first placement
status: …`` fit error; ``TestPodGroupSchedulingPlacementAlgorithm_Scoring``: the best-scored
feasible placement wins), the generator's rules (``plugins/topologyaware``: one placement per
domain, scheduled members pin the domain, unlabelled nodes in none), PodGroupPodsCount
(``plugins/podgrouppodscount``: more pods wins) and SEMANTICS §8.8's NodeResourcesFit placement
example (rack2 at 5/6 beats rack1 at 3/4 and rack3 at 4/6). The property: under ``gang+tas``
every bound gang with a topology constraint lies inside one domain.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import NO_BACKOFF, create, events_of, make_group, make_node, make_pod, make_trace, placements, run

TAS = NO_BACKOFF.with_changes(topology_aware_workload_scheduling=True)
NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


def rack_nodes(layout: dict[str, int], cpu: float = 2, *, key: str = "rack"):
    """Nodes ``<rack>-<i>`` labelled ``key=<rack>``, racks in the given order."""
    return [create(make_node(f"{r}-{i}", cpu=cpu, memory_gi=8, labels={key: r})) for r, n in layout.items() for i in range(n)]


def gang(name, size, *, cpu=1.0, min_count=None, basic=False, topology=("rack",), at_s=0, priority=0):
    g = create(make_group(name, min_count or size, basic=basic, topology=topology, priority=priority), at_s)
    return [g] + [create(make_pod(f"{name}-{i}", cpu=cpu, group=name, priority=priority), at_s) for i in range(size)]


def rack_of(node: str) -> str:
    return node.rsplit("-", 1)[0]


def test_the_fullest_feasible_rack_wins():
    """SEMANTICS §8.8 item 5: 2-CPU nodes, 3 pods x 1 CPU; rack1 (2 empty nodes) would be 3/4
    full, rack2 (3 nodes, 2 CPU used) 5/6, rack3 (3 nodes, 1 CPU used) 4/6: rack2."""
    events = rack_nodes({"rack1": 2, "rack2": 3, "rack3": 3})
    events += [create(make_pod("used-2", cpu=2, node_name="rack2-0")), create(make_pod("used-3", cpu=1, node_name="rack3-0"))]
    events += gang("pg", 3, at_s=1)
    log = run(make_trace(*events, config=TAS, horizon_s=60), "gang")
    assert {rack_of(n) for p, n in placements(log).items() if p.startswith("pg-")} == {"rack2"}
    # without the gate the same gang spreads by LeastAllocated over the emptiest nodes
    log = run(make_trace(*events, config=NO_BACKOFF, horizon_s=60), "gang")
    assert len({rack_of(n) for p, n in placements(log).items() if p.startswith("pg-")}) > 1


def test_more_pods_wins_for_a_basic_group():
    """PodGroupPodsCount: a basic group of 3 (1 CPU each) where rack-a holds 2 and rack-b all 3:
    both placements are feasible (basic needs 1), rack-b places more pods."""
    events = rack_nodes({"a": 1, "b": 2})  # a: 2 CPU, b: 4 CPU
    events += gang("pg", 3, basic=True, at_s=1)
    log = run(make_trace(*events, config=TAS, horizon_s=60), "gang")
    assert sorted(rack_of(n) for p, n in placements(log).items() if p.startswith("pg-")) == ["b", "b", "b"]


def test_no_rack_fits_the_gang():
    """Two racks of two 2-CPU nodes; a gang of 3 x 2 CPU fits the cluster but no rack: every
    placement stops at minCount; the first placement's status is reported, and WAP (which runs for
    a topology-constrained group in the newest code) finds nothing to preempt."""
    events = rack_nodes({"a": 2, "b": 2}) + gang("pg", 3, cpu=2, at_s=1)
    log = run(make_trace(*events, config=TAS, horizon_s=30), "gang")
    assert not [p for p in placements(log) if p.startswith("pg-")]
    msgs = {m for _, reason, m in events_of(log, "pg", "Unschedulable")}
    assert msgs == {f"0/2 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {NO_VICTIMS}"}
    log = run(make_trace(*events, config=NO_BACKOFF, horizon_s=30), "gang")  # no gate: it spans racks
    assert len([p for p in placements(log) if p.startswith("pg-")]) == 3


def test_without_a_constraint_one_placement_of_every_node():
    """The generator's parent placement: a group without a topology key is placed as without the
    gate, and its fit error names the one placement."""
    events = rack_nodes({"a": 2, "b": 2}) + gang("pg", 3, cpu=2, topology=(), at_s=1)
    assert placements(run(make_trace(*events, config=TAS, horizon_s=30), "gang")) == placements(run(make_trace(*events, config=NO_BACKOFF, horizon_s=30), "gang"))
    events = rack_nodes({"a": 1}) + gang("pg", 3, cpu=2, topology=(), at_s=1)
    log = run(make_trace(*events, config=TAS, horizon_s=30), "gang")
    msgs = {m for _, _, m in events_of(log, "pg", "Unschedulable")}
    assert msgs == {"0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 1 scheduled, 1 remaining, pod group preemption: No preemption victims found for incoming preemptor"}


def test_scheduled_members_pin_the_domain():
    """A basic group's first pod lands in rack a; a later pod of the group must go to rack a too
    (only that placement is generated), so it waits although rack b is empty."""
    events = rack_nodes({"a": 1, "b": 1})
    events += [create(make_group("pg", basic=True, topology=("rack",))), create(make_pod("pg-0", cpu=1, group="pg"), 1)]
    events += [create(make_pod("filler", cpu=1, node_name="a-0"), 2)]
    events += [create(make_pod("pg-1", cpu=1, group="pg"), 3)]
    log = run(make_trace(*events, config=TAS, horizon_s=30), "gang")
    got = placements(log)
    assert got["pg-0"] == "a-0" and "pg-1" not in got


def test_unlabelled_nodes_are_in_no_placement():
    events = [create(make_node("bare", cpu=8, memory_gi=8))] + rack_nodes({"a": 1}) + gang("pg", 2, at_s=1)
    assert {n for p, n in placements(run(make_trace(*events, config=TAS, horizon_s=30), "gang")).items() if p.startswith("pg-")} == {"a-0"}
    events = [create(make_node("bare", cpu=8, memory_gi=8))] + gang("pg", 2, at_s=1)
    log = run(make_trace(*events, config=TAS, horizon_s=30), "gang")
    assert {m.split(",")[0] for _, _, m in events_of(log, "pg", "Unschedulable")} == {"0/0 placements are available"}


@settings(max_examples=20, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    racks=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    gangs=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 20), st.integers(0, 2)), min_size=1, max_size=6),
    cpu=st.integers(1, 4),
)
def test_every_bound_gang_lies_in_one_domain(racks, gangs, cpu):
    """gang+tas: whatever the racks and arrivals, the pods of a gang with a topology constraint
    that are bound at any time all run in one rack."""
    events = rack_nodes({f"r{i}": n for i, n in enumerate(racks)}, cpu=cpu)
    for j, (size, at, prio) in enumerate(gangs):
        events += gang(f"g{j}", size, at_s=at, priority=prio * 10)
    events.append(create(make_node("unlabelled", cpu=8, memory_gi=8), at_s=5))
    log = run(make_trace(*events, config=TAS, horizon_s=120), "gang")
    where: dict[str, set[str]] = defaultdict(set)
    for p in log.pods:
        if p.bound_ms is not None and p.node:
            where[p.pod.split("/", 1)[1].rsplit("-", 1)[0]].add(p.node)
    for g, nodes in where.items():
        assert "unlabelled" not in nodes
        assert len({rack_of(n) for n in nodes}) == 1, (g, nodes)


def test_gate_off_drops_the_constraint_and_groups_preempt_in_either_case():
    """With the gate on a group with a topology constraint preempts inside one rack (newest
    ``DefaultPreemption.PodGroupPostFilter`` no longer refuses it, kubernetes#140683); with it off
    the API server drops ``schedulingConstraints`` (dropDisabledFields) and the same group
    preempts without a domain: here the same two victims either way."""
    events = rack_nodes({"a": 2})
    events += [create(make_pod(f"low-{i}", cpu=2, node_name=f"a-{i}")) for i in range(2)]
    events += gang("pg", 2, cpu=2, at_s=1, priority=100)
    on = run(make_trace(*events, config=TAS, horizon_s=60), "gang")
    assert sorted(v.victim_pod for v in on.victims) == ["default/low-0", "default/low-1"]
    assert {rack_of(n) for p, n in placements(on).items() if p.startswith("pg-")} == {"a"}
    off = run(make_trace(*events, config=NO_BACKOFF, horizon_s=60), "gang")
    assert sorted(v.victim_pod for v in off.victims) == ["default/low-0", "default/low-1"]
