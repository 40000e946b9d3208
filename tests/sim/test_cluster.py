"""The simulated API server and controllers (``gangsim.sim.cluster.Cluster``), mostly against a
fake scheduler (``sim.fakes.FakeInformer``) with the scheduler's side of binding played by hand
(``cluster.bind`` / ``reserved``, as the real scheduler calls them):

- the Job controller: pods ``<job>-<index>``, recreated with ``attempt`` + 1 after a failure, not
  after the Job's deletion or its completion; bare pods are never recreated;
- ``spec.nodeName`` pods: the kubelet admits them (``Scheduled``) or ``Rejected`` them;
- node deletion: its pods end ``NodeFailed``, pods waiting at Permit on it are rejected;
- the dispatch table ignores kinds with no runtime effect (PriorityClass, Workload);
- the timeline's ``gpus_total`` follows node add / patch / delete;
- end to end (``Setup`` with the real scheduler): a Permit-waiting pod losing its node.
"""

import pytest

from builders import create, delete, events_of, make_group, make_job, make_node, make_pdb, make_pod, make_trace, patch, pod_rows
from gangsim.api.objects import PodGroupPolicy, PodGroupTemplate, PriorityClass, Workload
from gangsim.api.trace import Op, TraceEvent
from gangsim.scheduler.framework.handle import Victim
from gangsim.sim.pods import PodState
from gangsim.sim.engine import Phase
from gangsim.sim.replay import Setup
from fakes import make_cluster


def apply_all(engine, cluster, events, until_ms):
    for ev in events:
        engine.at(ev.at_ms, Phase.API, cluster.apply, ev)
    engine.run(until_ms)


def bind(cluster, name, node="n1"):
    cluster.bind(cluster.pods[f"default/{name}"].info, node)


def incarnations(log):
    return [(r.pod.split("/", 1)[1], r.attempt, str(r.end_reason)) for r in log.pods]


# ---- the Job controller --------------------------------------------------------------------------
def test_job_pods_are_named_job_dash_index():
    _, log, cluster, informer = make_cluster()
    cluster.apply(create(make_job("train", 3, cpu=1)))
    assert ([r.pod for r in log.pods], informer.calls) == (
        ["default/train-0", "default/train-1", "default/train-2"],
        [("pod_add", "default/train-0"), ("pod_add", "default/train-1"), ("pod_add", "default/train-2")],
    )


def _node_fails(engine, cluster, pod):
    cluster.apply(delete("Node", "n1", 0))


def _job_deleted(engine, cluster, pod):
    cluster.apply(delete("Job", "w", 0))


def _pod_deleted(engine, cluster, pod):
    cluster.apply(delete("Pod", pod, 0))


def _preempted(engine, cluster, pod):
    cluster.preempt([Victim(cluster.pods[f"default/{pod}"].info, "n1", 0)], "default/x", 10, "")
    engine.run(1)  # grace 0: the victim ends in the KUBELET phase of the same instant


def _completes(engine, cluster, pod):
    engine.run(20_000)  # 10 s of work


@pytest.mark.parametrize(
    ("of_job", "end", "want"),
    [
        pytest.param(True, _node_fails, [("w-0", 0, "NodeFailed"), ("w-0", 1, "")], id="job-pod-node-failed"),
        pytest.param(True, _preempted, [("w-0", 0, "Preempted"), ("w-0", 1, "")], id="job-pod-preempted"),
        pytest.param(True, _job_deleted, [("w-0", 0, "Deleted")], id="job-deleted"),
        pytest.param(True, _completes, [("w-0", 0, "Completed")], id="job-completed"),
        pytest.param(False, _node_fails, [("w", 0, "NodeFailed")], id="bare-pod-node-failed"),
        pytest.param(False, _preempted, [("w", 0, "Preempted")], id="bare-pod-preempted"),
        pytest.param(False, _pod_deleted, [("w", 0, "Deleted")], id="bare-pod-deleted"),
        pytest.param(False, _completes, [("w", 0, "Completed")], id="bare-pod-completed"),
    ],
)
def test_recreation(of_job, end, want):
    engine, log, cluster, _ = make_cluster()
    cluster.apply(create(make_node("n1", cpu=4)))
    spec = {"cpu": 1, "duration_s": 10, "grace_s": 0}
    cluster.apply(create(make_job("w", 1, **spec) if of_job else make_pod("w", **spec)))
    pod = "w-0" if of_job else "w"
    bind(cluster, pod)
    end(engine, cluster, pod)
    assert incarnations(log) == want


def test_a_recreated_pod_is_announced_with_its_attempt():
    _, log, cluster, _ = make_cluster()
    cluster.apply(create(make_node("n1", cpu=4)))
    cluster.apply(create(make_job("w", 1, cpu=1)))
    bind(cluster, "w-0")
    cluster.apply(delete("Node", "n1", 0))
    cluster.apply(create(make_node("n1", cpu=4)))
    bind(cluster, "w-0")
    cluster.apply(delete("Node", "n1", 0))
    assert [m for _, _, m in events_of(log, "w-0", "Recreated")] == ["attempt 1", "attempt 2"]


def test_a_pending_pod_of_a_deleted_job_is_not_recreated():
    _, log, cluster, informer = make_cluster()
    cluster.apply(create(make_job("w", 2, cpu=1)))
    cluster.apply(delete("Job", "w", 0))
    assert (incarnations(log), informer.calls[-2:]) == ([("w-0", 0, "Deleted"), ("w-1", 0, "Deleted")], [("pod_delete", "default/w-0"), ("pod_delete", "default/w-1")])


def test_scaling_a_job_down_deletes_its_highest_indices_for_good():
    _, log, cluster, _ = make_cluster()
    cluster.apply(create(make_job("w", 3, cpu=1)))
    cluster.apply(patch(make_job("w", 1, cpu=1), 0))
    assert incarnations(log) == [("w-0", 0, ""), ("w-1", 0, "Deleted"), ("w-2", 0, "Deleted")]


# ---- spec.nodeName: kubelet admission ------------------------------------------------------------
NO_ROOM = ("Rejected", "kubelet admission on n1: insufficient resources")


@pytest.mark.parametrize(
    ("node", "occupant", "pod", "want"),
    [
        pytest.param(make_node("n1", cpu=2), None, make_pod("p", cpu=2, node_name="n1"), ("Scheduled", "Assigned default/p to n1 by spec.nodeName"), id="fits"),
        pytest.param(make_node("n1", cpu=2), None, make_pod("p", cpu=3, node_name="n1"), NO_ROOM, id="insufficient-cpu"),
        pytest.param(make_node("n1", cpu=2), make_pod("o", cpu=1, node_name="n1"), make_pod("p", cpu=2, node_name="n1"), NO_ROOM, id="taken-by-another-pod"),
        pytest.param(make_node("n1", cpu=2, pods=1), make_pod("o", node_name="n1"), make_pod("p", node_name="n1"), NO_ROOM, id="no-pod-slot"),
        pytest.param(make_node("n1", cpu=2, gpus=1), None, make_pod("p", gpus=2, node_name="n1"), NO_ROOM, id="insufficient-gpus"),
        pytest.param(make_node("n1", cpu=2), None, make_pod("p", cpu=1, node_name="n9"), ("Rejected", "kubelet admission on n9: node not found"), id="node-not-found"),
    ],
)
def test_node_name_admission_event(node, occupant, pod, want):
    _, log, cluster, _ = make_cluster()
    cluster.apply(create(node))
    if occupant is not None:
        cluster.apply(create(occupant))
    cluster.apply(create(pod))
    assert events_of(log, "p")[0][1:] == want


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p", cpu=1, node_name="n1"), (0, "n1", None, "", ("pod_assigned", "default/p", "n1")), id="admitted-is-bound-without-the-scheduler"),
        pytest.param(make_pod("p", cpu=3, node_name="n1"), (None, "", 0, "Rejected", None), id="rejected-ends-and-never-reaches-the-scheduler"),
        pytest.param(make_pod("p", cpu=1, node_name="n9"), (None, "", 0, "Rejected", None), id="unknown-node-ends-too"),
    ],
)
def test_node_name_admission_outcome(pod, want):
    _, log, cluster, informer = make_cluster()
    cluster.apply(create(make_node("n1", cpu=2)))
    cluster.apply(create(pod))
    r = pod_rows(log, "p")[0]
    handed = [c for c in informer.calls if c[1] == "default/p"]
    assert (r.bound_ms, r.node, r.ended_ms, str(r.end_reason), handed[0] if handed else None) == want


def test_a_rejected_node_name_pod_is_not_recreated_by_its_job():
    _, log, cluster, _ = make_cluster()
    cluster.apply(create(make_node("n1", cpu=2)))
    cluster.apply(create(make_job("w", 1, cpu=4, node_name="n1")))
    assert incarnations(log) == [("w-0", 0, "Rejected")]


def test_a_rejection_is_one_event():
    _, log, cluster, _ = make_cluster()
    cluster.apply(create(make_node("n1", cpu=2)))
    cluster.apply(create(make_pod("p", cpu=3, node_name="n1")))
    assert [e[1:] for e in events_of(log, "p")] == [("Rejected", "kubelet admission on n1: insufficient resources")]


# ---- node deletion -------------------------------------------------------------------------------
def _node_with_running_and_waiting():
    _, log, cluster, informer = make_cluster()
    cluster.apply(create(make_node("n1", cpu=4, gpus=2)))
    cluster.apply(create(make_pod("running", cpu=1, gpus=1)))
    cluster.apply(create(make_pod("waiting", cpu=1, gpus=1)))
    bind(cluster, "running")
    cluster.reserved(cluster.pods["default/waiting"].info, "n1")
    cluster.apply(delete("Node", "n1", 0))
    return log, cluster, informer


def test_node_deletion_fails_its_running_pods():
    log, _, _ = _node_with_running_and_waiting()
    r = pod_rows(log, "running")[0]
    assert (str(r.end_reason), [e[1:] for e in events_of(log, "running")]) == ("NodeFailed", [("NodeFailed", "")])


def test_node_deletion_is_an_event_on_the_node():
    log, _, _ = _node_with_running_and_waiting()
    assert [e[1:] for e in events_of(log, "n1")] == [("NodeFailed", "node failed and was deleted")]


def test_node_deletion_rejects_pods_waiting_at_permit_instead_of_ending_them():
    log, cluster, informer = _node_with_running_and_waiting()
    sp = cluster.pods["default/waiting"]
    assert (("reject_waiting_pod", "default/waiting", "node deleted") in informer.calls, sp.state, pod_rows(log, "waiting")[0].end_reason) == (True, PodState.PENDING, "")


def test_node_deletion_handles_its_pods_in_arrival_order_then_tells_the_scheduler():
    _, _, informer = _node_with_running_and_waiting()
    assert informer.calls[-3:] == [("pod_delete", "default/running"), ("reject_waiting_pod", "default/waiting", "node deleted"), ("node_delete", "n1")]


def test_node_deletion_frees_the_gpus_of_its_pods():
    log, cluster, _ = _node_with_running_and_waiting()
    cluster.engine.run(1)  # the instant ends: the timeline samples the state it leaves
    assert (cluster.gpus_allocated, cluster.kubelets.gpus_total, log.tl_gpus_allocated[-1]) == (0, 0, 0)
    assert list(log.tl_t_ms) == [0]  # one sample for the instant, however many changes it saw


def test_deleting_an_unknown_node_changes_nothing():
    _, log, cluster, informer = make_cluster()
    cluster.apply(delete("Node", "n9", 0))
    assert (informer.calls, list(log.ev_reason)) == ([], [])


# ---- dispatch table ------------------------------------------------------------------------------
_PC = PriorityClass("high", 1000)
_WL = Workload("default", "wl", (PodGroupTemplate("t", PodGroupPolicy(min_count=2)),))


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(TraceEvent(0, Op.CREATE, "PriorityClass", "", "high", _PC, _PC.source), id="priorityclass-create"),
        pytest.param(TraceEvent(0, Op.PATCH, "PriorityClass", "", "high", _PC, _PC.source), id="priorityclass-patch"),
        pytest.param(TraceEvent(0, Op.DELETE, "PriorityClass", "", "high", None, _PC.source), id="priorityclass-delete"),
        pytest.param(TraceEvent(0, Op.CREATE, "Workload", "default", "wl", _WL, _WL.source), id="workload-create"),
        pytest.param(TraceEvent(0, Op.DELETE, "Workload", "default", "wl", None, _WL.source), id="workload-delete"),
    ],
)
def test_kinds_with_no_runtime_effect_are_ignored(event):
    _, log, cluster, informer = make_cluster()
    cluster.apply(event)
    assert (informer.calls, list(log.ev_reason), log.pods, list(log.tl_t_ms)) == ([], [], [], [])


@pytest.mark.parametrize(
    ("event", "want"),
    [
        pytest.param(create(make_node("n2", cpu=1)), ("node_add", "n2"), id="node-create"),
        pytest.param(patch(make_node("n1", cpu=8), 0), ("node_update", "n1"), id="node-patch"),
        pytest.param(delete("Node", "n1", 0), ("node_delete", "n1"), id="node-delete"),
        pytest.param(create(make_group("pg", 2)), ("podgroup_add", "default/pg"), id="podgroup-create"),
        pytest.param(patch(make_group("pg", 2), 0), ("podgroup_update", "default/pg"), id="podgroup-patch"),
        pytest.param(delete("PodGroup", "pg", 0), ("podgroup_delete", "default/pg"), id="podgroup-delete"),
        pytest.param(create(make_pdb("pdb", {"app": "x"}, min_available=1)), ("pdb_add", "default/pdb"), id="pdb-create"),
        pytest.param(patch(make_pdb("pdb", {"app": "x"}, min_available=2), 0), ("pdb_add", "default/pdb"), id="pdb-patch-is-the-pdb-as-it-is-now"),
        pytest.param(delete("PodDisruptionBudget", "pdb", 0), ("pdb_delete", "default/pdb"), id="pdb-delete"),
        pytest.param(patch(make_pod("p", cpu=1, labels={"a": "b"}), 0), ("pod_update", "default/p"), id="pod-patch"),
    ],
)
def test_kinds_with_runtime_effect_reach_the_scheduler(event, want):
    _, _, cluster, informer = make_cluster()
    cluster.apply(create(make_node("n1", cpu=4)))
    cluster.apply(create(make_pod("p", cpu=1)))
    cluster.apply(event)
    assert informer.calls[-1] == want


# ---- GPU timeline --------------------------------------------------------------------------------
def test_gpus_total_follows_node_add_patch_and_delete():
    engine, log, cluster, _ = make_cluster()
    apply_all(engine, cluster, [
        create(make_node("n1", cpu=4, gpus=8), 0),
        create(make_node("n2", cpu=4, gpus=4), 1),
        patch(make_node("n1", cpu=4, gpus=2), 2),
        delete("Node", "n2", 3),
        create(make_node("n3", cpu=4), 4),  # no GPUs: no change, no row
    ], 10_000)
    assert list(zip(log.tl_t_ms, log.tl_gpus_total)) == [(0, 8), (1000, 12), (2000, 6), (3000, 2)]


def test_gpus_allocated_follows_reserve_bind_and_end():
    _, _, cluster, _ = make_cluster()
    cluster.apply(create(make_node("n1", cpu=4, gpus=8)))
    cluster.apply(create(make_pod("a", cpu=1, gpus=2)))
    cluster.apply(create(make_pod("b", cpu=1, gpus=4)))
    seen = [cluster.gpus_allocated]
    cluster.reserved(cluster.pods["default/a"].info, "n1")
    seen.append(cluster.gpus_allocated)
    bind(cluster, "a")  # was reserved: not counted twice
    seen.append(cluster.gpus_allocated)
    bind(cluster, "b")
    seen.append(cluster.gpus_allocated)
    cluster.apply(delete("Pod", "a", 0))
    seen.append(cluster.gpus_allocated)
    assert seen == [0, 2, 2, 6, 4]


# ---- end to end (the real scheduler) -------------------------------------------------------------
def test_a_pod_waiting_at_permit_on_a_deleted_node_is_requeued_not_failed():
    # gang of 2 with room for one member on n1: it waits at Permit there until n1 goes at 10 s
    trace = make_trace(
        create(make_node("n1", cpu=1)),
        create(make_group("pg", 2)),
        create(make_pod("a", cpu=1, group="pg")),
        create(make_pod("b", cpu=1, group="pg")),
        delete("Node", "n1", 10),
    )
    setup = Setup(trace, "permit")
    setup.run_until(20_000)
    waiting = [p for p in ("a", "b") if events_of(setup.log, p, "WaitingOnPermit")]
    name = waiting[0]
    assert (
        len(waiting),
        [e[2] for e in events_of(setup.log, name, "FailedScheduling") if e[0] == 10_000],
        pod_rows(setup.log, name)[0].end_reason,
        setup.cluster.pods[f"default/{name}"].state,
    ) == (1, ["node deleted"], "", PodState.PENDING)
