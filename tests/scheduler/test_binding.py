"""Reserve → Permit → Bind and the pods waiting at Permit (``gangsim.scheduler.binding``), on a
real ``Scheduler`` under ``--policy permit`` acting on a fake ``ClusterAPI`` (``sim.fakes``):

- Permit Wait parks the pod's entity (``QueueLocation.WAITING``) and reports the reservation;
- ``WaitingPodsMap.allow`` binds with upstream's ``Scheduled`` message;
- ``reject`` unreserves, logs FailedScheduling and requeues (backoffQ, or parked with its plugin);
- ``forget`` drops a deleted waiting pod (its plugins unreserve it);
- a pod with no gang binds at once.
"""

import pytest

from builders import events_of, make_group, make_node, make_pod
from gangsim.scheduler.framework.types import CPU_COL, PodPhase, QueueLocation
from gangsim.scheduler.plugins.gangscheduling import NAME as GANG_SCHEDULING
from fakes import make_scheduler


def gang_with_one_waiting():
    """Gang pg (minCount 2) with room for one member on n1: a waits at Permit, b is unschedulable."""
    s, cluster, log = make_scheduler("permit")
    s.on_node_add(make_node("n1", cpu=1))
    s.on_podgroup_add(make_group("pg", 2))
    a = s.on_pod_add(make_pod("a", cpu=1, group="pg"), 1)
    b = s.on_pod_add(make_pod("b", cpu=1, group="pg"), 2)
    s.run_cycles()
    return s, cluster, log, a, b


# ---- Reserve → Permit Wait -----------------------------------------------------------------------
def test_permit_wait_parks_the_entity_as_waiting():
    s, _, _, a, _ = gang_with_one_waiting()
    assert (s.entity_of(a).where, a in s.waiting_pods, a.phase) == (QueueLocation.WAITING, True, PodPhase.WAITING)


def test_permit_wait_reports_the_reservation_with_the_node():
    _, cluster, _, _, _ = gang_with_one_waiting()
    assert (cluster.of("reserved"), cluster.of("bind")) == ([("default/a", "n1")], [])


def test_the_sibling_finding_no_room_is_parked_by_node_resources_fit():
    s, _, _, _, b = gang_with_one_waiting()
    assert (s.entity_of(b).where, s.entity_of(b).unschedulable_plugins) == (QueueLocation.UNSCHEDULABLE, frozenset({"NodeResourcesFit"}))


def test_a_waiting_pod_starts_the_groups_permit_deadline():
    _, cluster, _, _, _ = gang_with_one_waiting()
    assert [(t.t_ms, t.cancelled) for t in cluster.timers] == [(300_000, False)]


# ---- allow ---------------------------------------------------------------------------------------
def test_allow_binds_with_upstreams_message():
    s, cluster, log, a, _ = gang_with_one_waiting()
    s.waiting_pods.allow(a)
    assert (cluster.of("bind"), [e[1:] for e in events_of(log, "a", "Scheduled")]) == (
        [("default/a", "n1")],
        [("Scheduled", "Successfully assigned default/a to n1")],
    )


def test_allow_takes_the_pod_out_of_the_queue():
    s, _, _, a, _ = gang_with_one_waiting()
    e = s.entity_of(a)
    s.waiting_pods.allow(a)
    assert (a in s.waiting_pods, a.phase, s.entity_of(a), e.key in s.queue.entities) == (False, PodPhase.BOUND, None, False)


def test_allow_of_a_pod_not_waiting_does_nothing():
    s, cluster, _, _, b = gang_with_one_waiting()
    s.waiting_pods.allow(b)
    assert cluster.of("bind") == []


def test_the_member_completing_the_gang_allows_the_waiting_one():
    s, cluster, _, _, _ = gang_with_one_waiting()
    s.on_node_add(make_node("n2", cpu=1))  # NodeAdd: b is retried (after its backoff)
    cluster.now = 2000
    s.queue.flush_backoff()
    s.run_cycles()
    assert (sorted(cluster.of("bind")), [t.cancelled for t in cluster.timers]) == ([("default/a", "n1"), ("default/b", "n2")], [True])


# ---- reject --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("to_backoff", "plugin", "want_where", "want_plugins"),
    [
        pytest.param(True, GANG_SCHEDULING, QueueLocation.BACKOFF, frozenset({GANG_SCHEDULING}), id="to-backoff"),
        pytest.param(False, GANG_SCHEDULING, QueueLocation.UNSCHEDULABLE, frozenset({GANG_SCHEDULING}), id="parked-with-its-plugin"),
        pytest.param(False, "", QueueLocation.BACKOFF, frozenset(), id="no-plugin-cannot-be-parked"),
    ],
)
def test_reject_requeues(to_backoff, plugin, want_where, want_plugins):
    s, _, _, a, _ = gang_with_one_waiting()
    s.waiting_pods.reject(a, "rejected for a test", plugin=plugin, to_backoff=to_backoff)
    e = s.entity_of(a)
    assert (e.where, e.unschedulable_plugins) == (want_where, want_plugins)


def test_reject_unreserves_and_logs_the_message():
    s, cluster, log, a, _ = gang_with_one_waiting()
    s.waiting_pods.reject(a, "rejected for a test", plugin=GANG_SCHEDULING, to_backoff=False)
    assert (
        cluster.of("unreserved"),
        cluster.of("scheduling_failed")[-1],
        [e[1:] for e in events_of(log, "a", "FailedScheduling")],
        (a in s.waiting_pods, a.phase),
    ) == (
        [("default/a",)],
        ("default/a", "rejected for a test"),
        [("FailedScheduling", "rejected for a test")],
        (False, PodPhase.PENDING),
    )


def test_reject_frees_the_node_for_the_unschedulable_sibling():
    """Unreserve frees the node: AssignedPod/Delete moves b (NodeResourcesFit) out of the pool."""
    s, _, _, a, b = gang_with_one_waiting()
    s.waiting_pods.reject(a, "rejected for a test", plugin=GANG_SCHEDULING, to_backoff=True)
    assert s.entity_of(b).where is QueueLocation.BACKOFF


def test_reject_drops_the_permit_deadline_when_nobody_waits():
    s, cluster, _, a, _ = gang_with_one_waiting()
    s.waiting_pods.reject(a, "rejected for a test", plugin=GANG_SCHEDULING, to_backoff=True)
    assert [t.cancelled for t in cluster.timers] == [True]


def test_the_permit_deadline_rejects_the_waiting_pod_with_upstreams_message():
    s, cluster, log, a, _ = gang_with_one_waiting()
    cluster.now = 300_000
    cluster.timers[0].handler()
    assert ([e[2] for e in events_of(log, "a", "FailedScheduling")], s.entity_of(a).where) == (
        ["rejected due to timeout after waiting 5m0s at plugin GangScheduling"],
        QueueLocation.UNSCHEDULABLE,
    )


def test_reject_of_a_pod_not_waiting_does_nothing():
    s, cluster, log, _, b = gang_with_one_waiting()
    before = (list(cluster.calls), len(log.ev_t_ms))
    s.waiting_pods.reject(b, "not waiting", plugin=GANG_SCHEDULING, to_backoff=True)
    assert (list(cluster.calls), len(log.ev_t_ms)) == before


# ---- forget --------------------------------------------------------------------------------------
def test_forget_on_a_deleted_waiting_pod():
    s, cluster, _, a, _ = gang_with_one_waiting()
    key = s.entity_of(a).key
    s.on_pod_delete(a)
    assert (a in s.waiting_pods, key in s.queue.entities, [t.cancelled for t in cluster.timers], cluster.of("bind")) == (False, False, [True], [])


def test_a_deleted_waiting_pod_frees_its_node():
    s, _, _, a, _ = gang_with_one_waiting()
    row = s.nodes.row_of["n1"]
    held = int(s.nodes.requested[row, CPU_COL])
    s.on_pod_delete(a)
    assert (held, int(s.nodes.requested[row, CPU_COL])) == (1000, 0)


def test_a_deleted_waiting_pod_leaves_its_sibling_short_of_min_count_gated():
    s, _, _, a, b = gang_with_one_waiting()
    s.on_pod_delete(a)
    assert (s.entity_of(b).where, s.entity_of(b).gated_message) == (QueueLocation.GATED, "waiting for minCount pods from a gang to appear in scheduling queue")


def test_forget_of_a_pod_not_waiting_does_nothing():
    s, cluster, _, a, b = gang_with_one_waiting()
    s.waiting_pods.forget(b)
    assert (a in s.waiting_pods, [t.cancelled for t in cluster.timers]) == (True, [False])


# ---- no gang -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("solo", cpu=1), id="no-group"),
        pytest.param(make_pod("solo", cpu=1, group="basic"), id="basic-group"),
    ],
)
def test_a_pod_without_a_gang_binds_at_once_under_permit(pod):
    s, cluster, _ = make_scheduler("permit")
    s.on_node_add(make_node("n1", cpu=1))
    s.on_podgroup_add(make_group("basic", basic=True))
    s.on_pod_add(pod, 1)
    s.run_cycles()
    assert (cluster.of("reserved"), cluster.of("bind"), cluster.timers) == ([], [("default/solo", "n1")], [])
