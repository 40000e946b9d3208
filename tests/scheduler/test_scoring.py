"""Which node a pod lands on: Filter and Score plugins with upstream weights and formulas."""

import pytest

from builders import create, make_node, make_pod, make_trace, placements, run
from gangsim.api.config import MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO, Profile, SchedulerConfig, ScoringStrategy
from gangsim.api.objects import Affinity, PodAffinityTerm, PreferredSchedulingTerm, Taint, Toleration, WeightedPodAffinityTerm
from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement


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
