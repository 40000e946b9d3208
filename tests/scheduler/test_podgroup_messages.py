"""What a PodGroup cycle tells users, pinned to the newest upstream code (kubernetes/kubernetes,
the CompositePodGroup-era ``pkg/scheduler``), each string with its source:

- ``Scheduler.validatePodGroup`` (schedule_one_podgroup.go): scheduler name, priority and
  preemption policy mismatches, the offending pod's value and name first, then the reference
  (the first queued pod, or the root PodGroup), names quoted as Go's ``%q`` does;
- ``submitPodGroupAlgorithmResult`` (schedule_one_podgroup.go): a pod that failed Filter on its own
  carries its own FitError, the others the group's status;
- ``applyPodGroupPostFilterResult`` + ``DefaultPreemption.PodGroupPostFilter``: the workload-aware
  preemption verdict appended to the group status as ``pod group preemption: <msg>``.
"""

from builders import make_group
from gangsim.api.config import Profile, SchedulerConfig
from scheduler.harness import harness, node, pod

CPU1 = [{"cpu": 1000}]


def run(pods, group, nodes=None, config=None):
    sched, _ = harness(nodes or [node("n1", allocatable={"cpu": 4000, "pods": 110})], policy="gang", config=config)
    sched.on_podgroup_add(group)
    for p in pods:
        sched.on_pod_add(p, sched.cluster.next_uid())
    sched.run_cycles()
    failed = {}
    for key, message in sched.cluster.of("scheduling_failed"):
        failed.setdefault(key, message)
    return failed


def test_priority_mismatch_names_the_pod_then_the_root_group():
    """validatePodGroup/validatePod: ``got %d (%q) and %d (%q)`` with podPriority, pod.Name,
    rootPriority, rootInfo.GetKey()."""
    failed = run([pod("a", containers=CPU1, priority=100, group="pg"), pod("b", containers=CPU1, priority=5, group="pg")], make_group("pg", 2, priority=100))
    want = "all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got 5 (\"b\") and 100 (\"default/pg\")"
    assert failed == {"default/a": want, "default/b": want}


def test_scheduler_name_mismatch_names_the_pod_then_the_first_queued_pod():
    """validatePod: ``got: %q (%q) and %q (%q)`` with pod.Spec.SchedulerName, pod.Name,
    schedulerName (the first queued pod's), firstPodName."""
    failed = run([pod("a", containers=CPU1, group="pg"), pod("b", containers=CPU1, group="pg", scheduler_name="batch")], make_group("pg", 2),
                 config=SchedulerConfig(profiles=(Profile(), Profile(scheduler_name="batch"))))
    want = 'all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "batch" ("b") and "default-scheduler" ("a")'
    assert set(failed.values()) == {want}


def test_a_pod_that_fails_filter_carries_its_own_fit_error():
    """Gang of 3 on one node with room for 2: a and b are placed tentatively, c fails Filter
    (its FitError), PlacementFeasible then says minCount cannot be met; a and b carry the group's
    status with workload-aware preemption's verdict appended (nothing to preempt)."""
    nodes = [node("n1", allocatable={"cpu": 2000, "pods": 110})]
    failed = run([pod(n, containers=CPU1, group="pg") for n in "abc"], make_group("pg", 3), nodes)
    group = "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
    assert failed == {"default/a": group, "default/b": group, "default/c": "0/1 nodes are available: 1 Insufficient cpu."}
