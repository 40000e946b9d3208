"""DefaultPreemption (``plugins/defaultpreemption``) through the ``Framework``: PostFilter picks
victims and a node to nominate, evicts them through the cluster, or explains why not with
upstream's ``preemption: ...`` message; under ``gang`` a PodGroup member is refused (workload-aware
preemption preempts for its group instead); PodGroupPostFilter basics.

Ported: ``TestPostFilter`` (default_preemption_test.go), every case without extenders or the
error-injecting test plugin; the filtered-node statuses are handed to PostFilter as upstream does
(a hand-made ``Diagnosis``). Upstream's ``st.MakeNode().Capacity(...)`` gives nodes 32 pod slots
unless the capacity says otherwise. Not repeated here: the evaluator's own scenarios (victim
choice, the six node-pick criteria, PDBs, workload-aware victim selection) live in
``tests/scheduler/framework/preemption/``. PodGroupPostFilter has no upstream unit test for these
basics; its cases follow KEP-5710's outcomes and upstream's messages.

Pinned to upstream (default_preemption.go): ``PostFilter`` refuses pod-by-pod preemption for any
pod with ``spec.schedulingGroup`` when GenericWorkload is on, whether or not the PodGroup exists;
``PodGroupPostFilter`` returns the evaluator's message as ``"pod group preemption: " + msg``.
"""

import numpy as np
import pytest

from builders import make_group
from gangsim.api.config import Profile, SchedulerConfig
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis
from scheduler.harness import harness, node, pod, pod_info

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
LOW, MID, HIGH = 0, 100, 1000
ONE_POD = {"pods": 1}
NODE_RES = {"cpu": 200, "memory": 400, "pods": 32}
LARGE = [{"cpu": 300, "memory": 300}]


def statuses(sched, codes):
    """``filteredNodesStatuses``: node name -> code (nodes left out count as unresolvable)."""
    r = [sched.nodes.row_of[n] for n in codes]
    return Diagnosis(rows=np.array(r, dtype=np.int64), codes=np.array(list(codes.values()), dtype=np.int8))


@pytest.mark.parametrize(
    ("preemptor", "existing", "nodes", "filtered", "want_node", "want_message", "want_victims"),
    [
        pytest.param(pod("p", priority=HIGH), [(pod("p1"), "node1")], [("node1", ONE_POD)], {"node1": U}, "node1", "", [("default/p1", "node1")],
                     id='TestPostFilter/"pod with higher priority can be made schedulable"'),
        pytest.param(pod("p"), [(pod("p1"), "node1")], [("node1", ONE_POD)], {"node1": U}, None,
                     "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", None,
                     id='TestPostFilter/"pod with tied priority is still unschedulable"'),
        pytest.param(pod("p", priority=HIGH), [(pod("p1"), "node1")], [("node1", ONE_POD)], {"node1": UU}, None,
                     "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", None,
                     id='TestPostFilter/"preemption should respect filteredNodesStatuses"'),
        pytest.param(pod("p", priority=MID), [(pod("p1", priority=HIGH), "node1"), (pod("p2", priority=LOW), "node2")], [("node1", ONE_POD), ("node2", ONE_POD)],
                     {"node1": U, "node2": U}, "node2", "", [("default/p2", "node2")],
                     id='TestPostFilter/"pod can be made schedulable on one node"'),
        pytest.param(pod("p", priority=HIGH, containers=LARGE), [(pod("p1"), "node1"), (pod("p2"), "node2")], [("node1", NODE_RES), ("node2", NODE_RES)],
                     {"node1": U, "node2": U}, None, "preemption: 0/2 nodes are available: 2 Insufficient cpu.", None,
                     id='TestPostFilter/"no candidate nodes found, no enough resource after removing low priority pods"'),
        pytest.param(pod("p", priority=HIGH, containers=LARGE),
                     [(pod("p1", priority=HIGH), "node1"), (pod("p2"), "node2"), (pod("p3", priority=HIGH), "node3")],
                     [("node1", ONE_POD), ("node2", NODE_RES), ("node3", ONE_POD)], {"node1": U, "node2": U, "node3": U}, None,
                     "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.", None,
                     id='TestPostFilter/"no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource"'),
        pytest.param(pod("p", priority=HIGH, containers=LARGE), [(pod("p1"), "node1"), (pod("p2"), "node2")],
                     [("node1", NODE_RES), ("node2", NODE_RES), ("node3", NODE_RES), ("node4", NODE_RES)], {"node1": U, "node2": U, "node4": UU}, None,
                     "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.", None,
                     id='TestPostFilter/"no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don\'t have enough CPU resource"'),
    ],
)
@pytest.mark.parametrize("policy", ["pod", "gang"])
def test_post_filter(policy, preemptor, existing, nodes, filtered, want_node, want_message, want_victims):
    sched, fw = harness([node(n, allocatable=a) for n, a in nodes], existing, policy=policy)
    info = pod_info(sched, preemptor)
    result = fw.run_post_filter(CycleState(), info, statuses(sched, filtered))
    assert result.nominated_row == (sched.nodes.row_of[want_node] if want_node else NO_NODE)
    assert result.message == want_message
    preempted = sched.cluster.of("preempt")
    if want_victims is None:
        assert preempted == []
    else:
        assert preempted == [(tuple(want_victims), "default/p", info.priority, "default-scheduler: preempting to accommodate a higher priority pod", "pod")]
        victim = sched.snapshot.pods_on(sched.nodes.row_of[want_node])[0]
        assert victim.terminating  # it keeps its resources through its grace period


def test_post_filter_with_the_framework_diagnosis():
    """The FitError diagnosis the Framework itself builds feeds PostFilter (no hand-made statuses)."""
    sched, fw = harness([node("node1", allocatable=ONE_POD)], [(pod("p1"), "node1")], policy="pod")
    info = pod_info(sched, pod("p", priority=HIGH))
    state = CycleState()
    feasible, diagnosis = fw.find_nodes_that_fit(state, info)
    assert len(feasible) == 0 and diagnosis.histogram == {"Too many pods": 1}
    result = fw.run_post_filter(state, info, diagnosis)
    assert result.nominated_row == sched.nodes.row_of["node1"]


def test_preemption_policy_never():
    sched, fw = harness([node("node1", allocatable=ONE_POD)], [(pod("p1"), "node1")], policy="pod")
    info = pod_info(sched, pod("p", priority=HIGH, preemption_policy="Never"))
    result = fw.run_post_filter(CycleState(), info, statuses(sched, {"node1": U}))
    assert (result.nominated_row, result.message) == (None, "preemption: not eligible due to preemptionPolicy=Never.")


def test_lower_priority_nominations_to_the_chosen_node_are_cleared():
    sched, fw = harness([node("node1", allocatable=ONE_POD)], [(pod("p1"), "node1")], policy="pod")
    nominated = pod_info(sched, pod("earlier", priority=MID))
    sched.nominator.nominate(nominated, sched.nodes.row_of["node1"])
    info = pod_info(sched, pod("p", priority=HIGH))
    fw.run_post_filter(CycleState(), info, statuses(sched, {"node1": U}))
    assert sched.nominator.pods_for_row(sched.nodes.row_of["node1"]) == []


# ---- workload-aware preemption (gang) -------------------------------------------------------------
WAP_REFUSAL = "preemption: not eligible due to workload aware preemption enabled"


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        pytest.param("gang", (None, WAP_REFUSAL), id="gang-refuses-a-podgroup-member"),
        pytest.param("permit", ("node1", ""), id="permit-preempts-for-the-member-as-a-pod"),
    ],
)
def test_a_podgroup_member_preempts_only_as_its_group(policy, want):
    sched, fw = harness([node("node1", allocatable=ONE_POD)], [(pod("p1"), "node1")], policy=policy)
    sched.on_podgroup_add(make_group("pg", 1, priority=HIGH))
    info = pod_info(sched, pod("p", priority=HIGH, group="pg"))
    result = fw.run_post_filter(CycleState(), info, statuses(sched, {"node1": U}))
    want_row = sched.nodes.row_of[want[0]] if want[0] else None
    assert (result.nominated_row, result.message) == (want_row, want[1])
    assert bool(sched.cluster.of("preempt")) is (want[0] is not None)


def test_a_pod_naming_a_missing_podgroup_is_refused_too():
    sched, fw = harness([node("node1", allocatable=ONE_POD)], [(pod("p1"), "node1")], policy="gang")
    info = pod_info(sched, pod("p", priority=HIGH, group="not-there"))
    result = fw.run_post_filter(CycleState(), info, statuses(sched, {"node1": U}))
    assert (result.nominated_row, result.message) == (None, WAP_REFUSAL)


def group_setup(*, residents_priority=10, topology=(), preemption_policy=None):
    """Group pre (minCount 2, priority 100, two 1-cpu pods) facing node1 (2 cpu) full of two
    1-cpu residents."""
    residents = [(pod(f"low-{i}", containers=[{"cpu": 1000}], priority=residents_priority), "node1") for i in range(2)]
    tas = SchedulerConfig(topology_aware_workload_scheduling=True) if topology else None  # the gate keeps the constraint
    sched, fw = harness([node("node1", allocatable={"cpu": 2000, "pods": 110})], residents, policy="gang", config=tas)
    sched.on_podgroup_add(make_group("pre", 2, priority=100, topology=topology, preemption_policy=preemption_policy))
    for c in "ab":
        sched.on_pod_add(pod(f"pre-{c}", containers=[{"cpu": 1000}], priority=100, group="pre"), sched.cluster.next_uid())
    st = sched.group_states["default/pre"]
    return sched, fw, st, sorted(st.entity.pods, key=lambda p: p.name)


def test_pod_group_post_filter_evicts_for_the_whole_group():
    sched, fw, st, pods = group_setup()
    (result,) = fw.run_pod_group_post_filter(st, pods, Status(Code.UNSCHEDULABLE, ("no fit",)))
    row = sched.nodes.row_of["node1"]
    assert result.status.code == Code.SUCCESS
    assert result.nominations == {p.uid: row for p in pods} and result.placed == 2
    assert sched.cluster.of("preempt") == [
        ((("default/low-0", "node1"), ("default/low-1", "node1")), "default/pre", 100, "default-scheduler: preempting to accommodate a higher priority podgroup", "podgroup")
    ]


@pytest.mark.parametrize(
    ("kwargs", "want"),
    [
        # ``PodGroupEvaluator.Preempt`` (podgrouppreemption.go, newest): Unschedulable
        pytest.param({"residents_priority": 100}, Status(U, ("pod group preemption: No preemption victims found for incoming preemptor",)), id="no-lower-priority-victims"),
        # a topology key no node carries: WAP runs (newest code) and returns the placement loop's
        # status on the cleaned cluster (``selectVictimsOnDomain``: "If the scheduling failed
        # after removing all potential victims, return the status")
        pytest.param({"topology": ("zone",)}, Status(U, ("pod group preemption: 0/0 placements are available, first placement status: no node has the topology key",)), id="topology-key-on-no-node"),
        pytest.param({"preemption_policy": "Never"}, Status(U, ("pod group preemption: not eligible due to preemptionPolicy=Never.",)), id="preemption-policy-never"),
    ],
)
def test_pod_group_post_filter_refusals(kwargs, want):
    sched, fw, st, pods = group_setup(**kwargs)
    (result,) = fw.run_pod_group_post_filter(st, pods, Status(Code.UNSCHEDULABLE, ("no fit",)))
    assert result.status == want and result.nominations is None
    assert sched.cluster.of("preempt") == []


def test_disabling_preemption_removes_both_extension_points():
    _, fw = harness([], policy="gang", config=SchedulerConfig(profiles=(Profile(preemption_enabled=False),)))
    assert fw.post_filter_plugins == [] and fw.pod_group_post_filter_plugins == []
    assert "DefaultPreemption" not in fw.plugins
