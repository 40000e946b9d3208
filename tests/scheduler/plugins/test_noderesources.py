"""NodeResourcesFit and NodeResourcesBalancedAllocation (``plugins/noderesources``): Filter codes
and upstream's reasons per node row (``Insufficient <resource>``, ``Too many pods``; a request
larger than the node's allocatable is UnschedulableAndUnresolvable), the scoring strategies'
raw scores, BalancedAllocation's PreScore skip and scores, the capacity count the fast path reads,
and the events NodeResourcesFit registers. The end-to-end placement tests at the bottom moved
here from ``tests/scheduler/test_scoring.py`` (which node a pod lands on, through a replay).

Ported from fit_test.go: ``TestEnoughRequests`` (every case without pod-level resources, DRA or
``ignoredResources``), ``TestNotEnoughRequests``, ``TestStorageRequests``,
``TestRestartableInitContainers`` (the cases with SidecarContainers on), ``TestFitScore`` (every
non-DRA case); from balanced_allocation_test.go: ``TestNodeResourcesBalancedAllocation``
(every non-DRA case). Init containers, sidecars and pod overhead are folded into the pod's
request by the loader's rule before the plugin sees them (``scheduler.harness.pod``).
Left out: the ``kubernetes.io/something`` resource cases (the loader rejects non-standard
``kubernetes.io/`` names in containers), ``ignoredResources``/``ignoredResourceGroups`` (no such
args in gangsim profiles), pod-level resources, DRA-backed extended resources, the
SidecarContainers-gate-off cases (the gate is always on in gangsim),
``TestPreFilterDisabled`` (gangsim's Filter needs no PreFilter state) and the queueing-hint tests.
Upstream nodes are in milli-cpu and bytes; so are these (``st.MakePod().Req({"cpu": "3000"})`` is
3000 cores = 3 000 000 millicores).
"""

import pytest

from builders import create, make_node, make_pod, make_trace, placements, run
from gangsim.api.config import LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO, Profile, SchedulerConfig, ScoringStrategy
from gangsim.api.objects import Affinity, PodAffinityTerm, PreferredSchedulingTerm, Taint, Toleration, WeightedPodAffinityTerm
from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from scheduler.harness import harness, node, pod, pod_info, rows

OK, U, UU, SKIP = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SKIP
AAA, BBB, HP, ES = "example.com/aaa", "example.com/bbb", "hugepages-2Mi", "ephemeral-storage"


def res(cpu=0, mem=0, **other):
    """One container's requests (framework.Resource{MilliCPU, Memory, ...}); zeros dropped."""
    out = {"cpu": cpu, "memory": mem}
    out.update({{"aaa": AAA, "bbb": BBB, "hp": HP, "storage": ES}[k]: v for k, v in other.items()})
    return {k: v for k, v in out.items() if v}


def allocatable(cpu, mem, pods, aaa, storage, hp):
    """``makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA)``."""
    return {"cpu": cpu, "memory": mem, "pods": pods, AAA: aaa, ES: storage, HP: hp}


def insufficient(*names):
    return tuple(f"Insufficient {n}" for n in names)


def fit_filter(node_alloc, used, containers, init=(), overhead=None):
    """Filter code and reasons of one pod on one node that already runs one pod using ``used``."""
    sched, fw = harness([node("node1", allocatable=node_alloc)], [(pod("existing", containers=[used]), "node1")])
    info = pod_info(sched, pod("p", containers=containers, init=list(init), overhead=overhead))
    plugin = fw.plugins["NodeResourcesFit"]
    r = rows(sched)
    code = int(plugin.filter(CycleState(), info, r)[0])
    return code, plugin.reasons(CycleState(), info, int(r[0]))


# ---- Filter --------------------------------------------------------------------------------------
NODE = allocatable(10, 20, 32, 5, 20, 5)


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "used", "want", "reasons"),
    [
        pytest.param([], (), None, res(10, 20), OK, (), id='TestEnoughRequests/"no resources requested always fits"'),
        pytest.param([res(1, 1)], (), None, res(10, 20), U, insufficient("cpu", "memory"), id='TestEnoughRequests/"too many resources fails"'),
        pytest.param([res(1, 1)], [res(3, 1)], None, res(8, 19), U, insufficient("cpu"),
                     id='TestEnoughRequests/"too many resources fails due to init container cpu"'),
        pytest.param([res(1, 1)], [res(3, 1), res(2, 1)], None, res(8, 19), U, insufficient("cpu"),
                     id='TestEnoughRequests/"too many resources fails due to highest init container cpu"'),
        pytest.param([res(1, 1)], [res(1, 3)], None, res(9, 19), U, insufficient("memory"),
                     id='TestEnoughRequests/"too many resources fails due to init container memory"'),
        pytest.param([res(1, 1)], [res(1, 3), res(1, 2)], None, res(9, 19), U, insufficient("memory"),
                     id='TestEnoughRequests/"too many resources fails due to highest init container memory"'),
        pytest.param([res(1, 1)], [res(1, 1)], None, res(9, 19), OK, (),
                     id='TestEnoughRequests/"init container fits because it\'s the max, not sum, of containers and init containers"'),
        pytest.param([res(1, 1)], [res(1, 1), res(1, 1)], None, res(9, 19), OK, (),
                     id='TestEnoughRequests/"multiple init containers fit because it\'s the max, not sum, of containers and init containers"'),
        pytest.param([res(1, 1)], (), None, res(5, 5), OK, (), id='TestEnoughRequests/"both resources fit"'),
        pytest.param([res(2, 1)], (), None, res(9, 5), U, insufficient("cpu"), id='TestEnoughRequests/"one resource memory fits"'),
        pytest.param([res(1, 2)], (), None, res(5, 19), U, insufficient("memory"), id='TestEnoughRequests/"one resource cpu fits"'),
        pytest.param([res(5, 1)], (), None, res(5, 19), OK, (), id='TestEnoughRequests/"equal edge case"'),
        pytest.param([res(4, 1)], [res(5, 1)], None, res(5, 19), OK, (), id='TestEnoughRequests/"equal edge case for init container"'),
        pytest.param([res(aaa=1)], (), None, res(), OK, (), id='TestEnoughRequests/"extended resource fits"'),
        pytest.param([res()], [res(aaa=1)], None, res(), OK, (), id='TestEnoughRequests/"extended resource fits for init container"'),
        pytest.param([res(1, 1, aaa=10)], (), None, res(), UU, insufficient(AAA), id='TestEnoughRequests/"extended resource capacity enforced"'),
        pytest.param([res()], [res(1, 1, aaa=10)], None, res(), UU, insufficient(AAA),
                     id='TestEnoughRequests/"extended resource capacity enforced for init container"'),
        pytest.param([res(1, 1, aaa=1)], (), None, res(aaa=5), U, insufficient(AAA), id='TestEnoughRequests/"extended resource allocatable enforced"'),
        pytest.param([res()], [res(1, 1, aaa=1)], None, res(aaa=5), U, insufficient(AAA),
                     id='TestEnoughRequests/"extended resource allocatable enforced for init container"'),
        pytest.param([res(1, 1, aaa=3), res(1, 1, aaa=3)], (), None, res(aaa=2), UU, insufficient(AAA),
                     id='TestEnoughRequests/"extended resource allocatable enforced for multiple containers"'),
        pytest.param([res()], [res(1, 1, aaa=3), res(1, 1, aaa=3)], None, res(aaa=2), OK, (),
                     id='TestEnoughRequests/"extended resource allocatable admits multiple init containers"'),
        pytest.param([res()], [res(1, 1, aaa=6), res(1, 1, aaa=3)], None, res(aaa=2), UU, insufficient(AAA),
                     id='TestEnoughRequests/"extended resource allocatable enforced for multiple init containers"'),
        pytest.param([res(1, 1, bbb=1)], (), None, res(), UU, insufficient(BBB), id='TestEnoughRequests/"extended resource allocatable enforced for unknown resource"'),
        pytest.param([res()], [res(1, 1, bbb=1)], None, res(), UU, insufficient(BBB),
                     id='TestEnoughRequests/"extended resource allocatable enforced for unknown resource for init container"'),
        pytest.param([res(1, 1, hp=10)], (), None, res(), UU, insufficient(HP), id='TestEnoughRequests/"hugepages resource capacity enforced"'),
        pytest.param([res()], [res(1, 1, hp=10)], None, res(), UU, insufficient(HP), id='TestEnoughRequests/"hugepages resource capacity enforced for init container"'),
        pytest.param([res(1, 1, hp=3), res(1, 1, hp=3)], (), None, res(hp=2), UU, insufficient(HP),
                     id='TestEnoughRequests/"hugepages resource allocatable enforced for multiple containers"'),
        pytest.param([res(1, 1)], (), {"cpu": 3, "memory": 13}, res(5, 5), OK, (), id='TestEnoughRequests/"resources + pod overhead fits"'),
        pytest.param([res(1, 1)], (), {"cpu": 1, "memory": 15}, res(5, 5), U, insufficient("memory"),
                     id='TestEnoughRequests/"requests + overhead does not fit for memory"'),
        pytest.param([res(1, 1, aaa=0)], (), None, res(aaa=6), OK, (),
                     id='TestEnoughRequests/"skip checking extended resource request with quantity zero via resource groups"'),
    ],
)
def test_enough_requests(containers, init, overhead, used, want, reasons):
    assert fit_filter(NODE, used, containers, init, overhead) == (want, reasons)


@pytest.mark.parametrize(
    ("containers", "init", "used"),
    [
        pytest.param([], (), res(10, 20), id='TestNotEnoughRequests/"even without specified resources, predicate fails when there\'s no space for additional pod"'),
        pytest.param([res(1, 1)], (), res(5, 5), id='TestNotEnoughRequests/"even if both resources fit, predicate fails when there\'s no space for additional pod"'),
        pytest.param([res(5, 1)], (), res(5, 19), id='TestNotEnoughRequests/"even for equal edge case, predicate fails when there\'s no space for additional pod"'),
        pytest.param([res(5, 1)], [res(5, 1)], res(5, 19),
                     id='TestNotEnoughRequests/"even for equal edge case, predicate fails when there\'s no space for additional pod due to init container"'),
    ],
)
def test_not_enough_requests(containers, init, used):
    assert fit_filter(allocatable(10, 20, 1, 0, 0, 0), used, containers, init) == (U, ("Too many pods",))


@pytest.mark.parametrize(
    ("containers", "used", "want", "reasons"),
    [
        pytest.param([res(1, 1)], res(2, 10), OK, (), id='TestStorageRequests/"empty storage requested, and pod fits"'),
        pytest.param([res(storage=25)], res(2, 2), UU, insufficient(ES), id='TestStorageRequests/"storage ephemeral local storage request exceeds allocatable"'),
        pytest.param([res(storage=5)], res(2, 2, storage=10), OK, (), id='TestStorageRequests/"ephemeral local storage is sufficient"'),
        pytest.param([res(storage=10)], res(2, 2), OK, (), id='TestStorageRequests/"pod fits"'),
    ],
)
def test_storage_requests(containers, used, want, reasons):
    assert fit_filter(NODE, used, containers) == (want, reasons)


@pytest.mark.parametrize(
    ("sidecar", "want", "reasons"),
    [
        pytest.param({"cpu": 1}, OK, (), id='TestRestartableInitContainers/"allow pod if the total requested resources do not exceed the node\'s allocatable resources"'),
        pytest.param({"cpu": 2}, UU, insufficient("cpu"), id='TestRestartableInitContainers/"not allow pod if the total requested resources do exceed the node\'s allocatable resources"'),
    ],
)
def test_restartable_init_containers(sidecar, want, reasons):
    """A sidecar's request adds to the app containers' (SidecarContainers is always on in gangsim)."""
    sched, fw = harness([node("node1", allocatable=allocatable(2, 0, 1, 0, 0, 0))])
    info = pod_info(sched, pod(containers=[{"cpu": 1}], sidecars=[sidecar]))
    plugin = fw.plugins["NodeResourcesFit"]
    r = rows(sched)
    assert (int(plugin.filter(CycleState(), info, r)[0]), plugin.reasons(CycleState(), info, int(r[0]))) == (want, reasons)


def test_reason_counts_histogram_counts_each_missing_resource_per_row():
    """The FitError histogram: one count per row and missing resource (``Too many pods`` too)."""
    full = allocatable(10, 20, 1, 0, 0, 0)
    sched, fw = harness(
        [node("n1", allocatable=NODE), node("n2", allocatable=NODE), node("n3", allocatable=full)],
        [(pod("e1", containers=[res(10, 20)]), "n1"), (pod("e2", containers=[res(10, 0)]), "n2"), (pod("e3"), "n3")],
    )
    info = pod_info(sched, pod(containers=[res(1, 1)]))
    counts = fw.plugins["NodeResourcesFit"].reason_counts(CycleState(), info, rows(sched))
    assert counts == {"Insufficient cpu": 2, "Insufficient memory": 1, "Too many pods": 1}  # n3: only the pod slot


def test_vectorised_and_row_by_row_filters_agree():
    """Above ``SMALL`` rows the Filter runs vectorised; the codes are the row-by-row ones."""
    nodes = [node(f"n{i}", allocatable=allocatable(10, 20, 2 + i % 2, i % 3, 20, 5)) for i in range(12)]
    used = [(pod(f"e{i}", containers=[res(i % 11, 2 * i % 21)]), f"n{i}") for i in range(12)]
    sched, fw = harness(nodes, used)
    plugin = fw.plugins["NodeResourcesFit"]
    for containers in ([res(1, 1)], [res(3, 5, aaa=1)], [res(11)], [res(aaa=3)], []):
        info = pod_info(sched, pod(containers=containers))
        r = rows(sched)
        whole = plugin.filter(CycleState(), info, r).tolist()
        one_by_one = [int(plugin.filter(CycleState(), info, r[i : i + 1])[0]) for i in range(len(r))]
        assert whole == one_by_one


def test_capacity_counts_more_pods_of_the_same_shape():
    """gangsim's ``CapacityPlugin``: how many more such pods each row still takes (its scarcest
    resource, the pod slot included) — what the fast path decides a doomed PodGroup pass from."""
    sched, fw = harness(
        [node("n1", allocatable=allocatable(10, 20, 32, 0, 0, 0)), node("n2", allocatable=allocatable(10, 20, 3, 0, 0, 0))],
        [(pod("e", containers=[res(4, 0)]), "n1")],
    )
    info = pod_info(sched, pod(containers=[res(2, 5)]))
    assert fw.plugins["NodeResourcesFit"].capacity(info, rows(sched)).tolist() == [3, 3]  # n1: cpu 6//2; n2: 3 pod slots


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["NodeResourcesFit"].events_to_register() == (
        ClusterEvent.NODE_ADD,
        ClusterEvent.NODE_ALLOCATABLE_UP,
        ClusterEvent.ASSIGNED_POD_DELETE,
        ClusterEvent.NOMINATED_POD_DELETE,
    )


# ---- NodeResourcesFit scoring strategies -------------------------------------------------------
CORES = 1000  # st.MakePod().Req({"cpu": "1000"}) is 1000 cores
CPU_MEM = (("cpu", 1), ("memory", 1))


def fit_profile(kind, shape=()):
    return SchedulerConfig(profiles=(Profile(scoring_strategy=ScoringStrategy(kind, CPU_MEM, shape)),))


def fit_scores(config, nodes, existing, requested):
    sched, fw = harness([node(n, allocatable={"cpu": c * CORES, "memory": m, "pods": 110}) for n, c, m in nodes],
                        [(pod(f"e{i}", containers=cs, sidecars=sc), n) for i, (n, cs, sc) in enumerate(existing)], config=config)
    info = pod_info(sched, pod(containers=[requested]))
    plugin = fw.plugins["NodeResourcesFit"]
    raw = plugin.score(CycleState(), info, rows(sched))
    return plugin.normalize(raw).tolist()


TWO_NODES = [("node1", 4000, 10000), ("node2", 6000, 10000)]
EXISTING = [("node1", [{"cpu": 2000 * CORES, "memory": 4000}], ()), ("node2", [{"cpu": 1000 * CORES, "memory": 2000}], ())]
SMALL_REQ = {"cpu": 1000 * CORES, "memory": 2000}
BIG_REQ = {"cpu": 3000 * CORES, "memory": 5000}
SIDECAR_NODES = [("node1", 4000, 10000), ("node2", 4000, 10000)]
SIDECAR_EXISTING = [("node1", [SMALL_REQ], [SMALL_REQ]), ("node2", [SMALL_REQ], ())]
SPREAD, PACK = ((0, 10), (100, 0)), ((0, 0), (100, 10))


@pytest.mark.parametrize(
    ("config", "nodes", "existing", "requested", "want"),
    [
        pytest.param(fit_profile(REQUESTED_TO_CAPACITY_RATIO, SPREAD), TWO_NODES, EXISTING, BIG_REQ, [10, 32],
                     id='TestFitScore/"test case for ScoringStrategy RequestedToCapacityRatio case1"'),
        pytest.param(fit_profile(REQUESTED_TO_CAPACITY_RATIO, PACK), TWO_NODES, EXISTING, BIG_REQ, [95, 68],
                     id='TestFitScore/"test case for ScoringStrategy RequestedToCapacityRatio case2"'),
        pytest.param(fit_profile(MOST_ALLOCATED), TWO_NODES, EXISTING, SMALL_REQ, [67, 36], id='TestFitScore/"test case for ScoringStrategy MostAllocated"'),
        pytest.param(fit_profile(LEAST_ALLOCATED), TWO_NODES, EXISTING, SMALL_REQ, [32, 63], id='TestFitScore/"test case for ScoringStrategy LeastAllocated"'),
        pytest.param(fit_profile(REQUESTED_TO_CAPACITY_RATIO, SPREAD), TWO_NODES, EXISTING, BIG_REQ, [10, 32],
                     id='TestFitScore/"test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called"'),
        pytest.param(fit_profile(MOST_ALLOCATED), TWO_NODES, EXISTING, SMALL_REQ, [67, 36],
                     id='TestFitScore/"test case for ScoringStrategy MostAllocated if PreScore is not called"'),
        pytest.param(fit_profile(LEAST_ALLOCATED), TWO_NODES, EXISTING, SMALL_REQ, [32, 63],
                     id='TestFitScore/"test case for ScoringStrategy LeastAllocated if PreScore is not called"'),
        pytest.param(fit_profile(MOST_ALLOCATED), SIDECAR_NODES, SIDECAR_EXISTING, SMALL_REQ, [67, 45],
                     id='TestFitScore/"test case for ScoringStrategy MostAllocated with sidecar container"'),
        pytest.param(fit_profile(LEAST_ALLOCATED), SIDECAR_NODES, SIDECAR_EXISTING, SMALL_REQ, [32, 55],
                     id='TestFitScore/"test case for ScoringStrategy LeastAllocated with sidecar container"'),
    ],
)
def test_fit_score(config, nodes, existing, requested, want):
    assert fit_scores(config, nodes, existing, requested) == want


def test_vectorised_and_row_by_row_scores_agree():
    """Above ``SMALL`` rows the strategies run vectorised; the scores are the row-by-row ones."""
    nodes = [(f"n{i}", 2000 + 500 * i, 8000 + 1000 * i) for i in range(12)]
    existing = [(f"n{i}", [{"cpu": (100 * i) * CORES, "memory": 300 * i}], ()) for i in range(12)]
    for config in (fit_profile(LEAST_ALLOCATED), fit_profile(MOST_ALLOCATED), fit_profile(REQUESTED_TO_CAPACITY_RATIO, SPREAD),
                   fit_profile(REQUESTED_TO_CAPACITY_RATIO, ((0, 0), (50, 7), (100, 10)))):
        sched, fw = harness([node(n, allocatable={"cpu": c * CORES, "memory": m, "pods": 110}) for n, c, m in nodes],
                            [(pod(f"e{i}", containers=cs), n) for i, (n, cs, _) in enumerate(existing)], config=config)
        plugin = fw.plugins["NodeResourcesFit"]
        info = pod_info(sched, pod(containers=[SMALL_REQ]))
        r = rows(sched)
        whole = plugin.score(CycleState(), info, r).tolist()
        one_by_one = [int(plugin.score(CycleState(), info, r[i : i + 1])[0]) for i in range(len(r))]
        assert whole == one_by_one


# ---- NodeResourcesBalancedAllocation ------------------------------------------------------------
CPU_AND_MEMORY = [{"cpu": 1000, "memory": 2000}, {"cpu": 2000, "memory": 3000}]
CPU_AND_MEMORY_AND_GPU = [{"cpu": 1000, "memory": 2000}, {"cpu": 2000, "memory": 3000, "nvidia.com/gpu": 3}]
CPU_ONLY = [{"cpu": 1000, "memory": 0}, {"cpu": 2000, "memory": 0}]
WITH_GPU = (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1))


def make_ba_node(name, milli_cpu, memory, gpus=0):
    """balanced_allocation_test's ``makeNode(name, milliCPU, memory, extendedResource)``."""
    alloc = {"cpu": milli_cpu, "memory": memory, "pods": 110}
    if gpus:
        alloc["nvidia.com/gpu"] = gpus
    return node(name, allocatable=alloc)


@pytest.mark.parametrize(
    ("containers", "nodes", "existing", "resources", "want"),
    [
        pytest.param(None, [("node1", 4000, 10000, 0), ("node2", 4000, 10000, 0)], [], (), SKIP,
                     id='TestNodeResourcesBalancedAllocation/"nothing scheduled, nothing requested, skip in PreScore"'),
        pytest.param(CPU_AND_MEMORY, [("node1", 4000, 10000, 0), ("node2", 6000, 10000, 0)], [], (), [87, 100],
                     id='TestNodeResourcesBalancedAllocation/"nothing scheduled, resources requested, differently sized nodes"'),
        pytest.param(CPU_AND_MEMORY, [("node1", 10000, 20000, 0), ("node2", 10000, 20000, 0)], [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")], (), [82, 95],
                     id='TestNodeResourcesBalancedAllocation/"resources requested, pods scheduled with resources"'),
        pytest.param(CPU_AND_MEMORY, [("node1", 10000, 20000, 0), ("node2", 10000, 50000, 0)], [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")], (), [82, 80],
                     id='TestNodeResourcesBalancedAllocation/"resources requested, pods scheduled with resources, differently sized nodes"'),
        pytest.param(CPU_ONLY, [("node1", 6000, 10000, 0), ("node2", 6000, 10000, 0)], [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")], (), [50, 75],
                     id='TestNodeResourcesBalancedAllocation/"requested resources at node capacity"'),
        pytest.param([{"memory": 0, "nvidia.com/gpu": 1}], [("node1", 3500, 40000, 8), ("node2", 3500, 40000, 8)],
                     [(CPU_AND_MEMORY, "node2"), (CPU_AND_MEMORY_AND_GPU, "node1")], WITH_GPU, [70, 65],
                     id='TestNodeResourcesBalancedAllocation/"include scalar resource on a node for balanced resource allocation"'),
        pytest.param(CPU_AND_MEMORY, [("node1", 3500, 40000, 8), ("node2", 3500, 40000, 0)], [], WITH_GPU, [63, 63],
                     id='TestNodeResourcesBalancedAllocation/"node without the scalar resource should skip the scalar resource"'),
        pytest.param(CPU_AND_MEMORY, [("node1", 10000, 20000, 0), ("node2", 10000, 20000, 0)], [(CPU_ONLY, "node1"), (CPU_AND_MEMORY, "node2")], (), [82, 95],
                     id='TestNodeResourcesBalancedAllocation/"resources requested, pods scheduled with resources if PreScore not called"'),
    ],
)
def test_balanced_allocation(containers, nodes, existing, resources, want):
    config = SchedulerConfig(profiles=(Profile(balanced_resources=resources),)) if resources else None
    sched, fw = harness([make_ba_node(*n) for n in nodes], [(pod(f"e{i}", containers=cs), n) for i, (cs, n) in enumerate(existing)], config=config)
    info = pod_info(sched, pod(containers=[] if containers is None else containers))
    plugin = fw.plugins["NodeResourcesBalancedAllocation"]
    status = plugin.pre_score(CycleState(), info)
    if want is SKIP:
        assert status is not None and status.code == Code.SKIP
        return
    assert status is None
    raw = plugin.score(CycleState(), info, rows(sched))
    assert plugin.normalize(raw).tolist() == want


def test_balanced_allocation_vectorised_and_row_by_row_agree():
    nodes = [make_ba_node(f"n{i}", 3000 + 400 * i, 9000 + 2000 * i, 8 if i % 2 else 0) for i in range(12)]
    existing = [(pod(f"e{i}", containers=[{"cpu": 200 * i, "memory": 700 * i}]), f"n{i}") for i in range(12)]
    config = SchedulerConfig(profiles=(Profile(balanced_resources=WITH_GPU),))
    sched, fw = harness(nodes, existing, config=config)
    plugin = fw.plugins["NodeResourcesBalancedAllocation"]
    for containers in (CPU_AND_MEMORY, CPU_ONLY, [{"cpu": 500, "nvidia.com/gpu": 1}]):
        info = pod_info(sched, pod(containers=containers))
        r = rows(sched)
        whole = plugin.score(CycleState(), info, r).tolist()
        assert whole == [int(plugin.score(CycleState(), info, r[i : i + 1])[0]) for i in range(len(r))]


# ---- end to end: which node a pod lands on (moved from tests/scheduler/test_scoring.py) ---------

def config(strategy: ScoringStrategy) -> SchedulerConfig:
    return SchedulerConfig(profiles=(Profile(scoring_strategy=strategy),))


def filler(name, node, **kw):
    return make_pod(name, node_name=node, **kw)


@pytest.mark.parametrize(
    ("cfg", "want"),
    [
        pytest.param(None, "n2", id="least-allocated-prefers-the-emptier-node"),
        pytest.param(config(ScoringStrategy(MOST_ALLOCATED)), "n1", id="most-allocated-packs"),
        pytest.param(
            config(ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, (("cpu", 1),), ((0, 10), (100, 0)))),
            "n2",
            id="requested-to-capacity-ratio-spread-shape",
        ),
        pytest.param(
            config(ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, (("cpu", 1),), ((0, 0), (100, 10)))),
            "n1",
            id="requested-to-capacity-ratio-pack-shape",
        ),
    ],
)
def test_resource_scoring_strategies(cfg, want):
    t = make_trace(
        create(make_node("n1", cpu=8, memory_gi=32)),
        create(make_node("n2", cpu=8, memory_gi=32)),
        create(filler("used", "n1", cpu=4, memory_gi=16)),
        create(make_pod("p", cpu=1, memory_gi=4), at_s=1),
        config=cfg,
    )
    assert placements(run(t))["p"] == want


def test_balanced_allocation_breaks_a_least_allocated_tie():
    # n1 holds cpu-heavy work, n2 memory-heavy work of the same LeastAllocated weight; the pod is
    # memory-heavy, so n1 (where it balances the node) wins on BalancedAllocation.
    t = make_trace(
        create(make_node("n1", cpu=10, memory_gi=10)),
        create(make_node("n2", cpu=10, memory_gi=10)),
        create(filler("cpu-heavy", "n1", cpu=6, memory_gi=2)),
        create(filler("mem-heavy", "n2", cpu=2, memory_gi=6)),
        create(make_pod("p", cpu=1, memory_gi=3), at_s=1),
    )
    assert placements(run(t))["p"] == "n1"


def test_prefer_no_schedule_taint_is_avoided_and_tolerated():
    taint = (Taint("dedicated", "ml", "PreferNoSchedule"),)
    t = make_trace(
        create(make_node("n1", cpu=8, taints=taint)),
        create(make_node("n2", cpu=8)),
        create(filler("used", "n2", cpu=3)),  # LeastAllocated alone would pick n1
        create(make_pod("avoids", cpu=1), at_s=1),
        create(make_pod("tolerates", cpu=1, tolerations=(Toleration("dedicated", "Equal", "ml", "PreferNoSchedule"),)), at_s=2),
    )
    got = placements(run(t))
    assert got["avoids"] == "n2"
    assert got["tolerates"] == "n1"


def test_no_schedule_taint_filters():
    t = make_trace(
        create(make_node("n1", cpu=8, taints=(Taint("gpu", "true", "NoSchedule"),))),
        create(make_node("n2", cpu=2)),
        create(filler("used", "n2", cpu=1)),
        create(make_pod("p", cpu=1), at_s=1),
    )
    assert placements(run(t))["p"] == "n2"


def test_node_affinity_preferred_term_weight_wins():
    pref = Affinity(node_preferred=(PreferredSchedulingTerm(50, NodeSelectorTerm((Requirement("zone", "In", ("b",)),))),))
    t = make_trace(
        create(make_node("n1", cpu=8, labels={"zone": "a"})),
        create(make_node("n2", cpu=8, labels={"zone": "b"})),
        create(filler("used", "n2", cpu=4)),
        create(make_pod("p", cpu=1, affinity=pref), at_s=1),
    )
    assert placements(run(t))["p"] == "n2"


def test_node_selector_and_required_affinity_filter():
    req = Affinity(node_required=(NodeSelectorTerm((Requirement("gpu", "In", ("a100", "h100")),)),))
    t = make_trace(
        create(make_node("n1", cpu=8, labels={"gpu": "t4"})),
        create(make_node("n2", cpu=8, labels={"gpu": "h100"})),
        create(make_node("n3", cpu=8, labels={"gpu": "a100", "pool": "x"})),
        create(make_pod("sel", cpu=1, node_selector={"pool": "x"}), at_s=1),
        create(make_pod("aff", cpu=1, affinity=req), at_s=2),
    )
    got = placements(run(t))
    assert got["sel"] == "n3"
    assert got["aff"] == "n2"  # n2 and n3 tie on LeastAllocated after "sel" took 1 cpu of n3? no: n2 is emptier


def test_pod_anti_affinity_spreads_replicas():
    anti = Affinity(pod_anti_affinity_required=(PodAffinityTerm(LabelSelector((("app", "web"),)), (), None, "kubernetes.io/hostname"),))
    t = make_trace(
        create(make_node("n1", cpu=8)),
        create(make_node("n2", cpu=8)),
        create(make_node("n3", cpu=8)),
        *[create(make_pod(f"web-{i}", cpu=1, labels={"app": "web"}, affinity=anti), at_s=i) for i in range(4)],
    )
    log = run(t)
    got = placements(log)
    assert sorted(got[f"web-{i}"] for i in range(3)) == ["n1", "n2", "n3"]
    assert "web-3" not in got  # no node left without a web replica
    failed = [p for p in log.pods if p.pod.endswith("web-3")][0]
    assert "3 node(s) didn't match pod anti-affinity rules" in failed.waiting_reason


def test_pod_affinity_required_follows_and_first_pod_may_self_match():
    aff = Affinity(pod_affinity_required=(PodAffinityTerm(LabelSelector((("app", "db"),)), (), None, "zone"),))
    t = make_trace(
        create(make_node("n1", cpu=8, labels={"zone": "a"})),
        create(make_node("n2", cpu=8, labels={"zone": "b"})),
        create(filler("noise", "n1", cpu=6)),
        create(make_pod("db-0", cpu=1, labels={"app": "db"}, affinity=aff), at_s=1),  # no db yet: self-match
        create(make_pod("db-1", cpu=1, labels={"app": "db"}, affinity=aff), at_s=2),
    )
    got = placements(run(t))
    assert got["db-0"] == "n2"  # least allocated
    assert got["db-1"] == "n2"  # same zone as db-0


def test_inter_pod_affinity_preferred_scores():
    pref = Affinity(pod_affinity_preferred=(WeightedPodAffinityTerm(100, PodAffinityTerm(LabelSelector((("app", "cache"),)), (), None, "kubernetes.io/hostname")),))
    t = make_trace(
        create(make_node("n1", cpu=8)),
        create(make_node("n2", cpu=8)),
        create(filler("cache", "n1", cpu=3, labels={"app": "cache"})),
        create(make_pod("p", cpu=1, affinity=pref), at_s=1),
    )
    assert placements(run(t))["p"] == "n1"


def test_equal_scores_go_to_the_first_node_in_trace_order():
    t = make_trace(
        create(make_node("b-node", cpu=8)),
        create(make_node("a-node", cpu=8)),
        create(make_pod("p", cpu=1)),
    )
    assert placements(run(t))["p"] == "b-node"


def test_seeded_tie_break_is_reproducible():
    nodes = [create(make_node(f"n{i}", cpu=8)) for i in range(8)]
    pods = [create(make_pod(f"p{i}", cpu=8), at_s=i) for i in range(4)]
    a = placements(run(make_trace(*nodes, *pods), seed=7))
    b = placements(run(make_trace(*nodes, *pods), seed=7))
    assert a == b
    assert len(set(a.values())) == 4


def test_extended_resource_filters_like_cpu():
    t = make_trace(
        create(make_node("cpu-only", cpu=64)),
        create(make_node("gpu", cpu=8, gpus=4)),
        create(make_pod("train", cpu=1, gpus=4)),
        create(make_pod("too-big", cpu=1, gpus=8), at_s=1),
    )
    log = run(t)
    assert placements(log) == {"train": "gpu"}
    too_big = [p for p in log.pods if p.pod.endswith("too-big")][0]
    assert too_big.waiting_reason.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    assert "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling." in too_big.waiting_reason


def test_unschedulable_node_and_node_name():
    t = make_trace(
        create(make_node("cordoned", cpu=8, unschedulable=True)),
        create(make_node("n2", cpu=2)),
        create(make_pod("p", cpu=1)),
        create(make_pod("pinned", cpu=1, node_name="cordoned"), at_s=1),
    )
    got = placements(run(t))
    assert got["p"] == "n2"
    assert got["pinned"] == "cordoned"  # spec.nodeName bypasses the scheduler
