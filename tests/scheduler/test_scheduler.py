"""The scheduler's informer side (``gangsim.scheduler.scheduler.Scheduler``), on a fake
``ClusterAPI`` (``sim.fakes``):

- queueing hints: a cluster event moves exactly the unschedulable entities whose rejecting
  plugins registered for it (SEMANTICS §4.5);
- PreEnqueue gating: one ``Gated`` event per pod and message change, upstream's messages;
- ``victim_priority``: the PodGroup's under ``gang``, the pod's own under ``pod`` / ``permit``;
- ``is_settled``: would another round of retries change nothing?
"""

import pytest

from builders import events_of, make_group, make_node, make_pod
from gangsim.api.objects import Affinity, PodAffinityTerm, Taint, Toleration
from gangsim.api.selectors import LabelSelector
from gangsim.scheduler.framework.interface import ClusterEvent
from gangsim.scheduler.framework.types import QueueLocation
from gangsim.scheduler.plugins import names as n
from fakes import make_scheduler

TAINT = (Taint("dedicated", "x", "NoSchedule"),)
TOLERATE = (Toleration("dedicated", "Exists"),)
AWAY_FROM_WEB = Affinity(pod_anti_affinity_required=(PodAffinityTerm(LabelSelector((("app", "web"),)), (), None, "kubernetes.io/hostname"),))


def n1(**kw):
    spec = {"cpu": 4, "taints": TAINT} | kw
    return make_node("n1", **spec)


# ---- queueing hints ------------------------------------------------------------------------------
def rejected_by_each_filter():
    """One tainted node n1 running ``web`` (app=web) and four pods, each rejected by one plugin."""
    s, _, _ = make_scheduler("pod")
    s.on_node_add(n1())
    web = s.on_pod_assigned(make_pod("web", cpu=1, labels={"app": "web"}, tolerations=TOLERATE), 1, "n1")
    pods = {
        "by-taint": make_pod("by-taint", cpu=1),
        "by-affinity": make_pod("by-affinity", cpu=1, tolerations=TOLERATE, node_selector={"zone": "a"}),
        "by-fit": make_pod("by-fit", cpu=8, tolerations=TOLERATE),
        "by-interpod": make_pod("by-interpod", cpu=1, tolerations=TOLERATE, affinity=AWAY_FROM_WEB),
    }
    infos = {name: s.on_pod_add(pod, uid) for uid, (name, pod) in enumerate(pods.items(), start=10)}
    s.run_cycles()
    return s, web, infos


def moved(s, infos) -> set[str]:
    return {name for name, info in infos.items() if s.entity_of(info).where is not QueueLocation.UNSCHEDULABLE}


def test_each_pod_is_rejected_by_its_own_plugin():
    s, _, infos = rejected_by_each_filter()
    assert {name: set(s.entity_of(i).unschedulable_plugins) for name, i in infos.items()} == {
        "by-taint": {n.TAINT_TOLERATION},
        "by-affinity": {n.NODE_AFFINITY},
        "by-fit": {n.NODE_RESOURCES_FIT},
        "by-interpod": {n.INTER_POD_AFFINITY},
    }


@pytest.mark.parametrize(
    ("event", "want"),
    [
        pytest.param(lambda s, web: s.on_node_add(make_node("n2", cpu=1)), {"by-taint", "by-affinity", "by-fit", "by-interpod"}, id="node-add-moves-every-filter-rejection"),
        pytest.param(lambda s, web: s.on_pod_delete(web), {"by-fit", "by-interpod"}, id="assigned-pod-delete"),
        pytest.param(lambda s, web: s.on_pod_assigned(make_pod("db", cpu=1, tolerations=TOLERATE), 99, "n1"), {"by-interpod"}, id="assigned-pod-add"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1(labels={"rack": "r1"})), {"by-affinity", "by-interpod"}, id="node-label-change"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1(taints=())), {"by-taint"}, id="node-taint-change"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1(cpu=16)), {"by-fit"}, id="node-allocatable-up"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1(cpu=2)), set(), id="node-allocatable-down"),
        pytest.param(lambda s, web: s.on_node_update(n1(unschedulable=True), n1()), set(), id="cordon-lifted-moves-only-node-unschedulable"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1()), set(), id="node-update-without-change"),
        pytest.param(lambda s, web: s.on_node_update(n1(), n1(labels={"rack": "r1"}, taints=())), {"by-taint", "by-affinity", "by-interpod"}, id="label-and-taint-change"),
    ],
)
def test_queueing_hints_move_exactly_the_registered_rejections(event, want):
    s, web, infos = rejected_by_each_filter()
    event(s, web)
    assert moved(s, infos) == want


def test_moved_entities_go_through_backoff():
    s, _, infos = rejected_by_each_filter()
    s.on_node_add(make_node("n2", cpu=1))
    assert {s.entity_of(i).where for i in infos.values()} == {QueueLocation.BACKOFF}


def test_hints_are_the_union_over_the_enabled_plugins():
    s, _, _ = make_scheduler("pod")
    assert (s.hints[ClusterEvent.NODE_TAINT], s.hints[ClusterEvent.ASSIGNED_POD_DELETE], ClusterEvent.POD_GROUP in s.hints) == (
        frozenset({n.TAINT_TOLERATION}),
        frozenset({n.NODE_RESOURCES_FIT, n.GPU_DEVICES, n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY}),
        False,
    )


@pytest.mark.parametrize("policy", ["permit", "gang"])
def test_gang_policies_register_for_pod_group_events(policy):
    s, _, _ = make_scheduler(policy)
    assert s.hints[ClusterEvent.POD_GROUP] == frozenset({n.GANG_SCHEDULING})


# ---- PreEnqueue gating ---------------------------------------------------------------------------
GATES_AB = "waiting for scheduling gates: [a b]"
GATES_B = "waiting for scheduling gates: [b]"
NO_GROUP = 'waiting for pods\'s pod group "pg" to appear in scheduling queue'
MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"


def test_scheduling_gates_one_gated_event_per_message_change():
    s, cluster, log = make_scheduler("pod")
    s.on_node_add(make_node("n1", cpu=4))
    info = s.on_pod_add(make_pod("p", cpu=1, gates=("a", "b")), 1)
    s.on_pod_update(info, make_pod("p", cpu=1, gates=("b",)))
    s.on_pod_update(info, make_pod("p", cpu=1, gates=("b",)))  # same gates: same message
    s.on_pod_update(info, make_pod("p", cpu=1))  # ungated
    s.run_cycles()
    assert (cluster.of("gated"), [e[1:] for e in events_of(log, "p")]) == (
        [("default/p", GATES_AB), ("default/p", GATES_B)],
        [("Gated", GATES_AB), ("Gated", GATES_B), ("Scheduled", "Successfully assigned default/p to n1")],
    )


def test_a_gated_pod_is_parked_as_gated():
    s, _, _ = make_scheduler("pod")
    info = s.on_pod_add(make_pod("p", cpu=1, gates=("a",)), 1)
    e = s.entity_of(info)
    assert (e.where, e.gated_message) == (QueueLocation.GATED, "waiting for scheduling gates: [a]")


def _gang_arrives(policy):
    """a arrives before its PodGroup; pg appears with minCount 3; b arrives; minCount drops to 2."""
    s, cluster, log = make_scheduler(policy)
    s.on_node_add(make_node("n1", cpu=4))
    s.on_pod_add(make_pod("a", cpu=1, group="pg"), 1)
    s.on_podgroup_add(make_group("pg", 3))
    s.on_pod_add(make_pod("b", cpu=1, group="pg"), 2)
    s.on_podgroup_update(make_group("pg", 3), make_group("pg", 2))
    s.run_cycles()
    return s, cluster, log


@pytest.mark.parametrize("policy", ["permit", "gang"])
def test_gang_members_are_told_once_per_message_change(policy):
    _, cluster, _ = _gang_arrives(policy)
    assert cluster.of("gated") == [("default/a", NO_GROUP), ("default/a", MIN_COUNT), ("default/b", MIN_COUNT)]


@pytest.mark.parametrize("policy", ["permit", "gang"])
def test_gated_events_match_what_the_pods_were_told(policy):
    _, _, log = _gang_arrives(policy)
    assert [e[2] for e in events_of(log, "a", "Gated")] + [e[2] for e in events_of(log, "b", "Gated")] == [NO_GROUP, MIN_COUNT, MIN_COUNT]


@pytest.mark.parametrize("policy", ["permit", "gang"])
def test_a_gang_released_from_its_gate_binds(policy):
    _, cluster, _ = _gang_arrives(policy)
    assert sorted(cluster.of("bind")) == [("default/a", "n1"), ("default/b", "n1")]


def test_under_pod_policy_the_group_is_ignored():
    s, cluster, _ = make_scheduler("pod")
    s.on_node_add(make_node("n1", cpu=4))
    s.on_pod_add(make_pod("a", cpu=1, group="pg"), 1)
    s.run_cycles()
    assert (cluster.of("gated"), cluster.of("bind")) == ([], [("default/a", "n1")])


# ---- victim priority -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("policy", "group", "pod", "want"),
    [
        pytest.param("gang", make_group("pg", 2, priority=50), make_pod("p", priority=5, group="pg"), 50, id="gang-group-member-takes-the-podgroups"),
        pytest.param("permit", make_group("pg", 2, priority=50), make_pod("p", priority=5, group="pg"), 5, id="permit-its-own"),
        pytest.param("pod", make_group("pg", 2, priority=50), make_pod("p", priority=5, group="pg"), 5, id="pod-its-own"),
        pytest.param("gang", make_group("pg", 2, priority=50), make_pod("p", priority=5), 5, id="gang-pod-without-group"),
        pytest.param("gang", None, make_pod("p", priority=5, group="pg"), 5, id="gang-podgroup-not-created-yet"),
        pytest.param("gang", make_group("pg", 2), make_pod("p", priority=5, group="pg"), 0, id="gang-podgroup-without-priority-is-0"),
        pytest.param("gang", make_group("pg", 2, priority=1), make_pod("p", priority=5, group="pg"), 1, id="gang-podgroup-lower-than-the-pod"),
    ],
)
def test_victim_priority(policy, group, pod, want):
    s, _, _ = make_scheduler(policy)
    if group is not None:
        s.on_podgroup_add(group)
    info = s.on_pod_add(pod, 1)
    assert s.victim_priority(info) == want


# ---- is_settled ----------------------------------------------------------------------------------
def _one_pod_too_big(s):
    s.on_node_add(make_node("n1", cpu=1))
    return s.on_pod_add(make_pod("p", cpu=2), 1)


def _settle_after_failure(s):
    _one_pod_too_big(s)
    s.run_cycles()


def _node_added_after_failure(s):
    _settle_after_failure(s)
    s.on_node_add(make_node("n2", cpu=4))


def _unhelpful_bind_after_failure(s):
    _settle_after_failure(s)
    s.on_pod_add(make_pod("tiny", cpu=0.1, priority=5), 2)  # binds on n1; p (priority 0) cannot preempt it
    s.run_cycles()


def _lower_priority_bind_after_failure(s):
    s.on_node_add(make_node("n1", cpu=1))
    s.on_pod_add(make_pod("p", cpu=2, priority=10), 1)
    s.run_cycles()
    s.on_pod_add(make_pod("tiny", cpu=0.1), 2)  # binds on n1: a victim p could now preempt
    s.run_cycles()


def _only_gated(s):
    s.on_node_add(make_node("n1", cpu=1))
    s.on_pod_add(make_pod("p", cpu=1, gates=("g",)), 1)


def _waiting_at_permit(s):
    s.on_node_add(make_node("n1", cpu=1))
    s.on_podgroup_add(make_group("pg", 2))
    s.on_pod_add(make_pod("a", cpu=1, group="pg"), 1)
    s.on_pod_add(make_pod("b", cpu=1, group="pg"), 2)
    s.run_cycles()


@pytest.mark.parametrize(
    ("policy", "setup", "want"),
    [
        pytest.param("pod", lambda s: None, True, id="empty"),
        pytest.param("pod", _one_pod_too_big, False, id="pod-in-activeq"),
        pytest.param("pod", _settle_after_failure, True, id="failed-and-nothing-changed"),
        pytest.param("pod", _node_added_after_failure, False, id="failed-then-a-node-was-added"),
        pytest.param("pod", _unhelpful_bind_after_failure, True, id="failed-then-a-higher-priority-bind"),
        pytest.param("pod", _lower_priority_bind_after_failure, False, id="failed-then-a-lower-priority-bind"),
        pytest.param("pod", _only_gated, True, id="only-gated"),
        pytest.param("permit", _waiting_at_permit, True, id="one-waiting-at-permit-one-unschedulable"),
    ],
)
def test_is_settled(policy, setup, want):
    s, _, _ = make_scheduler(policy)
    setup(s)
    assert s.is_settled() is want
