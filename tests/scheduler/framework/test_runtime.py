"""The framework runtime (``gangsim/scheduler/framework/runtime.py``): the registry builds one
plugin list per extension point from each policy's plugin names (exact names per point for
``pod``, ``permit``, ``gang``), one instance per plugin shared by every point it is enabled at,
errors for unknown plugins and for a plugin enabled where its Protocol is missing, a user profile
disabling Filter plugins or DefaultPreemption and picking score plugins by weight, the union of the
plugins' registered events, the reference Filter path against the fast path (same codes, same
FitError message) on a small table of clusters, and ``numFeasibleNodesToFind``.

Ported: ``TestNumFeasibleNodesToFind`` (schedule_one_test.go), every case. The rest is gangsim's
own wiring (upstream's ``framework_test.go`` builds frameworks from a different config model).
"""

import numpy as np
import pytest

from gangsim.api.config import DEFAULT_SCORE_WEIGHTS, Profile, SchedulerConfig
from gangsim.api.objects import Affinity, PodAffinityTerm, Taint, Toleration
from gangsim.api.selectors import LabelSelector
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent
from gangsim.scheduler.framework.runtime import Framework, num_feasible_nodes_to_find
from gangsim.scheduler.framework.types import Features, PluginArgs, fit_error_message
from gangsim.scheduler.plugins.registry import REGISTRY
from gangsim.scheduler.profiles import DEFAULT_PLUGINS, POLICIES
from gangsim.scheduler.schedule_podgroup import run_algorithm
from scheduler.harness import harness, node, pod, pod_info, rows

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "GPUDevices", "PodTopologySpread", "InterPodAffinity"]
SCORERS = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1)]


def names(plugins):
    return [p.NAME for p in plugins]


def lists(fw):
    """Every extension point's plugin names (scores with their weights)."""
    return {
        "preEnqueue": names(fw.pre_enqueue_plugins),
        "queueSort": fw.queue_sort.NAME,
        "preFilter": names(fw.pre_filter_plugins),
        "filter": names(fw.filter_plugins),
        "postFilter": names(fw.post_filter_plugins),
        "score": [(p.NAME, w) for p, w in fw.scorers],
        "reserve": names(fw.reserve_plugins),
        "permit": names(fw.permit_plugins),
        "placementFeasible": names(fw.placement_feasible_plugins),
        "podGroupPostFilter": names(fw.pod_group_post_filter_plugins),
        "placementGenerate": names(fw.placement_generate_plugins),
        "placementScore": [(p.NAME, w) for p, w in fw.placement_scorers],
    }


NO_TAS = {"placementGenerate": [], "placementScore": []}
COMMON = {
    "queueSort": "PrioritySort",
    "preFilter": ["PodTopologySpread", "InterPodAffinity"],
    "filter": FILTERS,
    "postFilter": ["DefaultPreemption"],
    "score": SCORERS,
}


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        pytest.param("pod", {**COMMON, "preEnqueue": ["SchedulingGates"], "reserve": [], "permit": [], "placementFeasible": [], "podGroupPostFilter": [], **NO_TAS}, id="pod"),
        pytest.param("permit", {**COMMON, "preEnqueue": ["SchedulingGates", "GangScheduling"], "reserve": ["GangScheduling"], "permit": ["GangScheduling"],
                                "placementFeasible": [], "podGroupPostFilter": [], **NO_TAS}, id="permit"),
        pytest.param("gang", {**COMMON, "preEnqueue": ["SchedulingGates", "GangScheduling"], "reserve": [], "permit": [],
                              "placementFeasible": ["GangScheduling"], "podGroupPostFilter": ["DefaultPreemption"], **NO_TAS}, id="gang"),
    ],
)
def test_each_policy_builds_one_list_per_extension_point(policy, want):
    _, fw = harness([], policy=policy)
    assert lists(fw) == want


def test_the_tas_gate_adds_the_placement_plugins_to_gang_only():
    """TopologyAwareWorkloadScheduling (SEMANTICS §2.1): TopologyPlacementGenerator at
    placementGenerate, PodGroupPodsCount and NodeResourcesFit at placementScore (weight 1);
    without the PodGroup cycle (``pod``, ``permit``) the gate changes nothing."""
    tas = SchedulerConfig(topology_aware_workload_scheduling=True)
    _, fw = harness([], policy="gang", config=tas)
    got = lists(fw)
    assert got["placementGenerate"] == ["TopologyPlacementGenerator"]
    assert got["placementScore"] == [("PodGroupPodsCount", 1), ("NodeResourcesFit", 1)]
    for policy in ("pod", "permit"):
        _, fw = harness([], policy=policy, config=tas)
        assert {k: lists(fw)[k] for k in NO_TAS} == NO_TAS


@pytest.mark.parametrize(
    ("policy", "extra"),
    [
        pytest.param("pod", {}, id="pod"),
        pytest.param("permit", {"preEnqueue": ("GangScheduling",), "reserve": ("GangScheduling",), "permit": ("GangScheduling",)}, id="permit"),
        pytest.param("gang", {"preEnqueue": ("GangScheduling",), "placementFeasible": ("GangScheduling",), "podGroupPostFilter": ("DefaultPreemption",)}, id="gang"),
    ],
)
def test_policies_are_data(policy, extra):
    """``Policy.plugins``: the default profile's plugins (default_plugins.go) plus the policy's."""
    want = {point: tuple(ns) for point, ns in DEFAULT_PLUGINS.items()}
    for point, ns in extra.items():
        want[point] = want.get(point, ()) + ns
    assert POLICIES[policy].plugins(Profile()) == want


def test_features_per_policy():
    assert POLICIES["pod"].features == Features()
    assert POLICIES["permit"].features == Features(gang_scheduling=True)
    assert POLICIES["gang"].features == Features(gang_scheduling=True, workload_scheduling_cycle=True, workload_aware_preemption=True, generic_workload=True)


def test_pre_score_runs_before_its_plugins_score():
    """preScore (NodeResourcesBalancedAllocation): a best-effort pod's balance score is skipped;
    a plugin without PreScore (NodeResourcesFit) always scores."""
    sched, fw = harness([node("n1"), node("n2")])
    best_effort, requesting = pod_info(sched, pod(containers=[{}])), pod_info(sched, pod(containers=[{"cpu": 500}]))
    raw = {p.NAME: score for (p, _), score in zip(fw.scorers, fw.raw_scorers)}
    balanced, fit = raw["NodeResourcesBalancedAllocation"], raw["NodeResourcesFit"]
    assert balanced(CycleState(), best_effort, rows(sched)) is None
    assert balanced(CycleState(), requesting, rows(sched)) is not None
    assert fit(CycleState(), best_effort, rows(sched)) is not None


def test_a_plugin_is_one_instance_shared_by_its_extension_points():
    _, fw = harness([], policy="gang")
    ipa, gang, dp = fw.plugins["InterPodAffinity"], fw.plugins["GangScheduling"], fw.plugins["DefaultPreemption"]
    assert fw.pre_filter_plugins[1] is ipa and fw.filter_plugins[-1] is ipa and [p for p, _ in fw.scorers][4] is ipa
    pts = fw.plugins["PodTopologySpread"]
    assert fw.pre_filter_plugins[0] is pts and fw.filter_plugins[-2] is pts and [p for p, _ in fw.scorers][3] is pts
    assert fw.pre_enqueue_plugins[1] is gang and fw.placement_feasible_plugins[0] is gang
    assert fw.post_filter_plugins[0] is dp and fw.pod_group_post_filter_plugins[0] is dp
    _, permit = harness([], policy="permit")
    g = permit.plugins["GangScheduling"]
    assert permit.pre_enqueue_plugins[1] is g and permit.reserve_plugins[0] is g and permit.permit_plugins[0] is g
    assert sorted(fw.plugins) == sorted({*FILTERS, "PrioritySort", "SchedulingGates", "GangScheduling", "DefaultPreemption", "NodeResourcesBalancedAllocation"})


def build(plugins, weights=None):
    sched, _ = harness([])
    args = PluginArgs(Profile(), SchedulerConfig(), Features())
    return Framework(plugins, weights or {}, args, sched, REGISTRY, run_algorithm)


def test_an_unknown_plugin_name_raises_value_error():
    with pytest.raises(ValueError, match="plugin 'NodePorts' is not registered"):
        build({"queueSort": ("PrioritySort",), "filter": ("NodePorts",)})


@pytest.mark.parametrize(
    ("point", "plugin", "protocol"),
    [
        pytest.param("filter", "SchedulingGates", "FilterPlugin", id="gates-as-filter"),
        pytest.param("score", "NodeName", "ScorePlugin", id="nodename-as-score"),
        pytest.param("permit", "NodeResourcesFit", "PermitPlugin", id="fit-as-permit"),
        pytest.param("postFilter", "GangScheduling", "PostFilterPlugin", id="gang-as-postfilter"),
    ],
)
def test_a_plugin_enabled_where_its_protocol_is_missing_raises_type_error(point, plugin, protocol):
    with pytest.raises(TypeError, match=f"plugin {plugin} does not implement {protocol} \\(enabled at {point}\\)"):
        build({"queueSort": ("PrioritySort",), point: (plugin,)})


@pytest.mark.parametrize("sorts", [(), ("PrioritySort", "PrioritySort")], ids=["none", "two"])
def test_a_profile_needs_exactly_one_queue_sort(sorts):
    with pytest.raises(ValueError, match="exactly one queueSort plugin"):
        build({"queueSort": sorts, "filter": ("NodeName",)})


@pytest.mark.parametrize(
    ("profile", "want_filter", "want_pre_filter", "want_post_filter", "want_score"),
    [
        pytest.param(Profile(disabled_filters=frozenset({"TaintToleration"})), [f for f in FILTERS if f != "TaintToleration"], ["PodTopologySpread", "InterPodAffinity"],
                     ["DefaultPreemption"], SCORERS, id="a-disabled-filter-keeps-its-score"),
        pytest.param(Profile(disabled_filters=frozenset({"InterPodAffinity"})), FILTERS[:-1], ["PodTopologySpread"], ["DefaultPreemption"], SCORERS,
                     id="disabling-interpodaffinity-drops-its-prefilter"),
        pytest.param(Profile(preemption_enabled=False), FILTERS, ["PodTopologySpread", "InterPodAffinity"], [], SCORERS, id="preemption-disabled"),
        pytest.param(Profile(score_weights={"NodeResourcesFit": 5, "NodeAffinity": 0, "ImageLocality": 3, "TaintToleration": 1}), FILTERS, ["PodTopologySpread", "InterPodAffinity"],
                     ["DefaultPreemption"], [("NodeResourcesFit", 5), ("TaintToleration", 1)], id="weights-pick-and-order-the-scorers"),
    ],
)
def test_a_user_profile_on_top_of_the_policy(profile, want_filter, want_pre_filter, want_post_filter, want_score):
    _, fw = harness([], policy="gang", config=SchedulerConfig(profiles=(profile,)))
    got = lists(fw)
    assert (got["filter"], got["preFilter"], got["postFilter"], got["score"]) == (want_filter, want_pre_filter, want_post_filter, want_score)
    assert got["podGroupPostFilter"] == want_post_filter


def test_every_profile_gets_its_own_framework():
    config = SchedulerConfig(profiles=(Profile(), Profile(scheduler_name="packer", score_weights={"NodeResourcesFit": 1})))
    sched, fw = harness([], config=config)
    assert sorted(sched.frameworks) == ["default-scheduler", "packer"]
    assert [p.NAME for p, _ in sched.frameworks["packer"].scorers] == ["NodeResourcesFit"]
    assert sched.frameworks["packer"].plugins["NodeResourcesFit"] is not fw.plugins["NodeResourcesFit"]


def test_default_score_weights_are_upstreams():
    """default_plugins.go: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2, BalancedAllocation 1."""
    assert DEFAULT_SCORE_WEIGHTS == dict(SCORERS)


# ---- events ------------------------------------------------------------------------------------
EVENTS = {
    ClusterEvent.NODE_ADD: {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "GPUDevices", "PodTopologySpread", "InterPodAffinity"},
    ClusterEvent.NODE_ALLOCATABLE_UP: {"NodeResourcesFit", "GPUDevices"},
    ClusterEvent.NODE_SCHEDULABLE: {"NodeUnschedulable"},
    ClusterEvent.NODE_TAINT: {"TaintToleration"},
    ClusterEvent.NODE_LABEL: {"NodeAffinity", "PodTopologySpread", "InterPodAffinity"},
    ClusterEvent.ASSIGNED_POD_ADD: {"PodTopologySpread", "InterPodAffinity"},
    ClusterEvent.ASSIGNED_POD_DELETE: {"NodeResourcesFit", "GPUDevices", "PodTopologySpread", "InterPodAffinity"},
    ClusterEvent.NOMINATED_POD_DELETE: {"NodeResourcesFit", "GPUDevices"},
}


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        pytest.param("pod", EVENTS, id="pod"),
        pytest.param("permit", {**EVENTS, ClusterEvent.POD_GROUP: {"GangScheduling"}}, id="permit"),
        pytest.param("gang", {**EVENTS, ClusterEvent.POD_GROUP: {"GangScheduling"}}, id="gang"),
    ],
)
def test_events_to_register_is_the_union_of_the_plugins_events(policy, want):
    sched, fw = harness([], policy=policy)
    assert fw.events_to_register() == want
    assert sched.hints == {event: frozenset(ns) for event, ns in want.items()}


def test_a_disabled_plugin_registers_no_events():
    config = SchedulerConfig(profiles=(Profile(disabled_filters=frozenset({"NodeUnschedulable"})),))
    _, fw = harness([], config=config)
    assert ClusterEvent.NODE_SCHEDULABLE not in fw.events_to_register()


# ---- the reference path and the fast path agree --------------------------------------------------
def term(key, value, topology):
    return PodAffinityTerm(LabelSelector(((key, value),)), (), None, topology)


CPU = [{"cpu": 1000}]
CLUSTERS = [
    pytest.param(
        [node(f"n{i}", {"zone": "a" if i < 3 else "b"}, allocatable={"cpu": 1000 * (i + 1), "memory": 2**34, "pods": 2 + i % 2}) for i in range(6)],
        [(pod(f"e{i}", containers=CPU), f"n{i % 6}") for i in range(8)],
        [pod("small", containers=[{"cpu": 500}]), pod("small-again", containers=[{"cpu": 500}]), pod("big", containers=[{"cpu": 5000}]),
         pod("huge", containers=[{"cpu": 50_000}]), pod("zone-b", containers=CPU, node_selector={"zone": "b"}), pod("no-requests")],
        id="resources-and-pod-slots",
    ),
    pytest.param(
        [node("plain", {"gpu": "no"}), node("tainted", {"gpu": "yes"}, taints=(Taint("dedicated", "ml", "NoSchedule"),)),
         node("cordoned", {"gpu": "yes"}, unschedulable=True), node("soft", {"gpu": "yes"}, taints=(Taint("dedicated", "ml", "PreferNoSchedule"),))],
        [],
        [pod("any"), pod("gpu", node_selector={"gpu": "yes"}), pod("ml", node_selector={"gpu": "yes"}, tolerations=(Toleration("dedicated", "Equal", "ml", "NoSchedule"),)),
         pod("pinned", node_name="cordoned"), pod("nowhere", node_selector={"gpu": "maybe"}), pod("gpu-again", node_selector={"gpu": "yes"})],
        id="taints-selectors-cordons",
    ),
    pytest.param(
        [node(f"h{i}", {"zone": "z1" if i % 2 else "z2"}) for i in range(4)],
        [(pod("web-0", labels={"app": "web"}, affinity=Affinity(pod_anti_affinity_required=(term("app", "web", "zone"),))), "h1"),
         (pod("db-0", labels={"app": "db"}), "h2")],
        [pod("web-1", labels={"app": "web"}, affinity=Affinity(pod_anti_affinity_required=(term("app", "web", "zone"),))),
         pod("near-db", affinity=Affinity(pod_affinity_required=(term("app", "db", "zone"),))), pod("web-like", labels={"app": "web"}),
         pod("far-db", affinity=Affinity(pod_anti_affinity_required=(term("app", "db", "kubernetes.io/hostname"),))),
         pod("near-cache", affinity=Affinity(pod_affinity_required=(term("app", "cache", "zone"),)))],
        id="pod-affinity",
    ),
]


def run_pods(config, nodes, assigned, pods, nominate=None):
    sched, fw = harness(nodes, assigned, config=config)
    if nominate is not None:
        who, where = nominate
        sched.nominator.nominate(pod_info(sched, who), sched.nodes.row_of[where])
    out = []
    for p in pods:
        info = pod_info(sched, p)
        codes, _ = fw.run_filters(CycleState(), info, rows(sched))
        feasible, diagnosis = fw.find_nodes_that_fit(CycleState(), info)
        out.append((p.name, codes.tolist(), sorted(feasible.tolist()), fit_error_message(sched.nodes.num_nodes, diagnosis) if len(feasible) == 0 else ""))
    return out, fw


@pytest.mark.parametrize(("nodes", "assigned", "pods"), CLUSTERS)
def test_the_reference_path_and_the_fast_path_agree(nodes, assigned, pods):
    reference, ref_fw = run_pods(SchedulerConfig(opportunistic_batching=False), nodes, assigned, pods)
    fast, fast_fw = run_pods(SchedulerConfig(), nodes, assigned, pods)
    assert ref_fw.static_cache is None and ref_fw.signatures is None
    assert fast_fw.static_cache is not None and fast_fw.signatures is not None
    assert fast == reference
    assert any(message for *_, message in reference)  # the table does exercise FitErrors


def test_the_paths_agree_with_a_nominated_pod_in_the_way():
    nodes = [node(f"n{i}", allocatable={"cpu": 2000, "pods": 110}) for i in range(3)]
    pods = [pod("low", containers=[{"cpu": 1500}]), pod("high", containers=[{"cpu": 1500}], priority=100)]
    nominate = (pod("nominee", containers=[{"cpu": 1000}], priority=50), "n1")
    reference, _ = run_pods(SchedulerConfig(opportunistic_batching=False), nodes, [], pods, nominate)
    fast, _ = run_pods(SchedulerConfig(), nodes, [], pods, nominate)
    assert fast == reference
    assert reference[0][1] == [0, 2, 0] and reference[1][1] == [0, 0, 0]  # the nominee blocks only lower priorities


def test_fit_error_message_format():
    """``FitError.Error()``: sorted "<n> <reason>" entries, then the PostFilter message."""
    nodes = [node("a", allocatable={"cpu": 1000, "pods": 110}), node("b", allocatable={"cpu": 1000, "pods": 110}, taints=(Taint("k", "v", "NoSchedule"),))]
    sched, fw = harness(nodes)
    _, diagnosis = fw.find_nodes_that_fit(CycleState(), pod_info(sched, pod(containers=[{"cpu": 2000}])))
    assert fit_error_message(2, diagnosis) == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
    assert diagnosis.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}


# ---- numFeasibleNodesToFind ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("percentage", "num_all_nodes", "want"),
    [
        pytest.param(0, 10, 10, id='TestNumFeasibleNodesToFind/"not set percentageOfNodesToScore and nodes number not more than 50"'),
        pytest.param(40, 10, 10, id='TestNumFeasibleNodesToFind/"set percentageOfNodesToScore and nodes number not more than 50"'),
        pytest.param(0, 1000, 420, id='TestNumFeasibleNodesToFind/"not set percentageOfNodesToScore and nodes number more than 50"'),
        pytest.param(40, 1000, 400, id='TestNumFeasibleNodesToFind/"set percentageOfNodesToScore and nodes number more than 50"'),
        pytest.param(0, 6000, 300, id='TestNumFeasibleNodesToFind/"not set percentageOfNodesToScore and nodes number more than 50*125"'),
        pytest.param(40, 6000, 2400, id='TestNumFeasibleNodesToFind/"set percentageOfNodesToScore and nodes number more than 50*125"'),
    ],
)
def test_num_feasible_nodes_to_find(percentage, num_all_nodes, want):
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


@pytest.mark.parametrize(
    ("global_pct", "profile_pct", "want"),
    [
        pytest.param(0, None, 420, id="adaptive"),
        pytest.param(40, None, 400, id="global"),
        pytest.param(40, 70, 700, id="the-profile-overrides-the-global-setting"),
        pytest.param(0, 1, 100, id="never-fewer-than-100"),
    ],
)
def test_the_framework_reads_its_profiles_percentage_first(global_pct, profile_pct, want):
    config = SchedulerConfig(percentage_of_nodes_to_score=global_pct, profiles=(Profile(percentage_of_nodes_to_score=profile_pct),))
    _, fw = harness([], config=config)
    assert fw.num_feasible_nodes_to_find(1000) == want


def test_the_search_stops_at_the_wanted_number_and_rotates():
    """``findNodesThatPassFilters``: at most numFeasibleNodesToFind feasible rows, the next search
    starting after the last node processed."""
    nodes = [node(f"n{i:03d}") for i in range(120)]
    config = SchedulerConfig(percentage_of_nodes_to_score=10)  # 12 % -> the 100-node floor
    for cfg in (config, config.with_changes(opportunistic_batching=False)):
        sched, fw = harness(nodes, config=cfg)
        feasible, _ = fw.find_nodes_that_fit(CycleState(), pod_info(sched, pod()))
        assert feasible.tolist() == list(range(100)) and fw.next_start_index == 100
        feasible, _ = fw.find_nodes_that_fit(CycleState(), pod_info(sched, pod()))
        assert feasible.tolist() == list(range(100, 120)) + list(range(80)) and fw.next_start_index == 80
        assert isinstance(feasible, np.ndarray)
