"""GangScheduling (``plugins/gangscheduling``): PreEnqueue (PodGroup missing, minCount pods not
there yet), PlacementFeasible (minCount cannot / not yet / is satisfied, with the numbers), the
v1.35 Permit barrier of ``--policy permit`` (a component test through ``Scheduler.run_cycles`` on
the fake cluster: Wait with the group-shared deadline, quorum allows every waiting pod, the timeout
rejects them, the unreserve of the last waiting pod cancels the timer), ``go_duration`` against
Go's ``time.Duration.String()`` and the events the plugin registers.

Ported: ``TestPreEnqueue`` (every case, in its "CPG enabled: false" and "CPG enabled: true"
variants) and ``TestPlacementFeasible`` (every case, for a PodGroup and a CompositePodGroup) from
gangscheduling_test.go;
``TestGangSchedulingFlow`` (the v1.35 Workload-era test: its Permit cases, re-expressed with
PodGroups); Go's ``TestDurationString`` (time_test.go), the cases in whole milliseconds.
Left out: the queueing-hint tests
(``Test_isSchedulableAfter*``: gangsim registers one group-scoped event and moves the group's
entities itself, ``Scheduler._group_event``); nanosecond/microsecond durations (gangsim's clock is
in milliseconds).

Messages: the PreEnqueue message for a missing PodGroup is upstream's ``pods's pod group`` (sic),
as every stored version of ``preEnqueueHierarchiesDisabled`` / ``preEnqueueWithHierarchies``
(gangscheduling.go, the newest with ``checkCPGHierarchyReadiness`` included) and TestPreEnqueue
say. The Permit Wait status is the PodGroup-API
barrier's (``GangScheduling.Permit``: ``waiting for minCount pods from a gang to be scheduled``).
gangsim's own decision, tested as such: one deadline per group, created at the first Wait and
reused by later ones (upstream gives each waiting pod 5 minutes from its own Wait).
"""

import pytest

from builders import make_composite, make_group
from gangsim.api.config import SchedulerConfig
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code, Status
from gangsim.scheduler.framework.types import PodGroupState, PodPhase
from gangsim.scheduler.plugins.gangscheduling import CANNOT_BE_SATISFIED, NOT_YET_SATISFIED, go_duration, permit_timeout_message
from scheduler.harness import harness, node, pod

GANG = "GangScheduling"
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
MIN_COUNT_MSG = "waiting for minCount pods from a gang to appear in scheduling queue"


def gang_harness(policy, groups=(), pods=(), nodes=(), config=None):
    """A scheduler with ``groups`` then ``pods`` added (pods as unscheduled pods); pod infos by name."""
    sched, fw = harness(nodes, policy=policy, config=config)
    for g in groups:
        sched.on_podgroup_add(g)
    infos = {p.name: sched.on_pod_add(p, sched.cluster.next_uid()) for p in pods}
    return sched, fw, infos


# ---- PreEnqueue ----------------------------------------------------------------------------------
PG1, PG2, PG3 = make_group("pg1", 3, "ns1"), make_group("pg2", 4, "ns1"), make_group("pg3", namespace="ns1", basic=True)


def member(name, group):
    return pod(name, "ns1", group=group)


P1, P2, P3, P4, P5 = member("p1", "pg1"), member("p2", "pg1"), member("p3", "pg1"), member("p4", "pg2"), member("p5", "pg2")
PRE_ENQUEUE = [
    pytest.param([PG1, PG2, PG3], [], pod("non-gang", "ns1"), None, id='TestPreEnqueue/"non-gang pod succeeds immediately"'),
    pytest.param([PG1, PG2, PG3], [], member("basic-pod", "pg3"), None, id='TestPreEnqueue/"basic policy pod succeeds immediately"'),
    pytest.param([], [P2, P3, P4, P5], P1, Status(UU, ('waiting for pods\'s pod group "pg1" to appear in scheduling queue',), GANG),
                 id='TestPreEnqueue/"gang pod fails PreEnqueue when pod group is not yet created (CPG enabled: false)"'),
    pytest.param([PG1, PG2], [P2, P4, P5], P1, Status(UU, (MIN_COUNT_MSG,), GANG), id='TestPreEnqueue/"gang pod fails PreEnqueue when quorum is not met"'),
    pytest.param([PG1, PG2], [P2, P3, P4, P5], P1, None, id='TestPreEnqueue/"gang pod passes PreEnqueue"'),
    pytest.param([make_group("pg-basic-1", 2, "ns1"), make_group("pg-basic-2", 2, "ns1")], [member("p1_1", "pg-basic-1"), member("p1_2", "pg-basic-1")],
                 member("p2_1", "pg-basic-2"), Status(UU, (MIN_COUNT_MSG,), GANG),
                 id='TestPreEnqueue/"CPG Basic With Gang Stage 1: pg1 ready, root ready, pg2 not ready (CPG enabled: false)"'),
    # the CompositePodGroup parents are ignored with CPG disabled: plain groups of minCount 1 (pg4-cpg basic)
    pytest.param([make_group(f"pg{i}-cpg", 1, "ns1") for i in (1, 2, 3, 5, 6, 7)] + [make_group("pg4-cpg", namespace="ns1", basic=True)], [],
                 member("p1-cpg", "pg1-cpg"), None, id='TestPreEnqueue/"CPG Hierarchical Stage 1: No pods, ready, as CPGs are ignored (CPG enabled: false)"'),
    pytest.param([make_group(f"pg{i}-cpg", 1, "ns1") for i in (1, 2, 3, 5, 6, 7)] + [make_group("pg4-cpg", namespace="ns1", basic=True)],
                 [member("p1-cpg", "pg1-cpg"), member("p2-cpg", "pg2-cpg")], member("p6-cpg", "pg6-cpg"), None,
                 id='TestPreEnqueue/"CPG Hierarchical Stage 2: Add p6, already ready (CPG enabled: false)"'),
    pytest.param([make_group(f"pg{i}-cpg", 1, "ns1") for i in (1, 2, 3, 5, 6, 7)] + [make_group("pg4-cpg", namespace="ns1", basic=True)],
                 [member("p1-cpg", "pg1-cpg"), member("p2-cpg", "pg2-cpg"), member("p6-cpg", "pg6-cpg")], member("p4-cpg", "pg4-cpg"), None,
                 id='TestPreEnqueue/"CPG Hierarchical Stage 3: Add p4, already ready (CPG enabled: false)"'),
]


def pre_enqueue(policy, groups, initial, target):
    sched, fw, infos = gang_harness(policy, groups, [*initial, target])
    return fw.plugins[GANG].pre_enqueue(infos[target.name])


@pytest.mark.parametrize("policy", ["permit", "gang"])
@pytest.mark.parametrize(("groups", "initial", "target", "want"), PRE_ENQUEUE)
def test_pre_enqueue_code(policy, groups, initial, target, want):
    got = pre_enqueue(policy, groups, initial, target)
    assert (got.code, got.plugin) == (want.code, want.plugin) if want else got is None


@pytest.mark.parametrize(
    ("groups", "initial", "target", "want"),
    [
        p
        for p in PRE_ENQUEUE
        if p.values[3] is not None
    ],
)
def test_pre_enqueue_message(groups, initial, target, want):
    assert pre_enqueue("gang", groups, initial, target).message == want.message


def test_pre_enqueue_message_for_a_missing_podgroup_is_the_newest_upstream_text():
    """``preEnqueueHierarchiesDisabled`` (gangscheduling.go, the newest stored version):
    ``fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", ...)``."""
    got = pre_enqueue("gang", [], [P2, P3], P1)
    assert got.message == 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'


# ---- PreEnqueue with the CompositePodGroup gate (preEnqueueWithHierarchies) ----------------------
# TestPreEnqueue's "(CPG enabled: true)" variants: the feature gates CompositePodGroup and
# TopologyAwareWorkloadScheduling on (``gang`` policy with both switches). The tree: cpg-root
# {minGroupCount 2} -> cpg-sub1 {2} (pg1-cpg, pg2-cpg, pg3-cpg), cpg-sub2 {basic} (pg4-cpg basic,
# pg5-cpg), cpg-sub3 {2} (pg6-cpg, pg7-cpg); every gang PodGroup minCount 1.
CPG_ON = SchedulerConfig(composite_pod_group=True, topology_aware_workload_scheduling=True)
TREE_GROUPS = [make_group(f"pg{i}-cpg", 1, "ns1", parent={1: "cpg-sub1", 2: "cpg-sub1", 3: "cpg-sub1", 5: "cpg-sub2", 6: "cpg-sub3", 7: "cpg-sub3"}[i])
               for i in (1, 2, 3, 5, 6, 7)] + [make_group("pg4-cpg", namespace="ns1", basic=True, parent="cpg-sub2")]
TREE_COMPOSITES = [make_composite("cpg-root", 2, "ns1"), make_composite("cpg-sub1", 2, "ns1", parent="cpg-root"),
                   make_composite("cpg-sub2", namespace="ns1", basic=True, parent="cpg-root"), make_composite("cpg-sub3", 2, "ns1", parent="cpg-root")]
ROOT_WAITING = Status(UU, ('waiting for composite pod group "cpg-root" tree to meet quorum',), GANG)
PRE_ENQUEUE_CPG = [
    pytest.param([PG1, PG2, PG3], [], [], pod("non-gang", "ns1"), None, id='TestPreEnqueue/"non-gang pod succeeds immediately (CPG enabled: true)"'),
    pytest.param([PG1, PG2, PG3], [], [], member("basic-pod", "pg3"), None, id='TestPreEnqueue/"basic policy pod succeeds immediately (CPG enabled: true)"'),
    pytest.param([], [], [P2, P3, P4, P5], P1, Status(UU, ("failed to build hierarchy snapshot: pod group object not found in state for podgroup/ns1/pg1",), GANG),
                 id='TestPreEnqueue/"gang pod fails PreEnqueue when pod group is not yet created (CPG enabled: true)"'),
    pytest.param([PG1, PG2], [], [P2, P4, P5], P1, Status(UU, (MIN_COUNT_MSG,), GANG), id='TestPreEnqueue/"gang pod fails PreEnqueue when quorum is not met (CPG enabled: true)"'),
    pytest.param([PG1, PG2], [], [P2, P3, P4, P5], P1, None, id='TestPreEnqueue/"gang pod passes PreEnqueue (CPG enabled: true)"'),
    pytest.param(TREE_GROUPS, TREE_COMPOSITES, [], member("p1-cpg", "pg1-cpg"), ROOT_WAITING,
                 id='TestPreEnqueue/"CPG Hierarchical Stage 1: No pods, tree not ready (CPG enabled: true)"'),
    pytest.param(TREE_GROUPS, TREE_COMPOSITES, [member("p1-cpg", "pg1-cpg"), member("p2-cpg", "pg2-cpg")], member("p6-cpg", "pg6-cpg"), ROOT_WAITING,
                 id='TestPreEnqueue/"CPG Hierarchical Stage 2: Add p6, cpg-sub1 ready but root not ready (CPG enabled: true)"'),
    pytest.param(TREE_GROUPS, TREE_COMPOSITES, [member("p1-cpg", "pg1-cpg"), member("p2-cpg", "pg2-cpg"), member("p6-cpg", "pg6-cpg")], member("p4-cpg", "pg4-cpg"), None,
                 id='TestPreEnqueue/"CPG Hierarchical Stage 3: Add p4, root becomes ready (CPG enabled: true)"'),
    pytest.param([make_group("pg-basic-1", 2, "ns1", parent="cpg-basic-root"), make_group("pg-basic-2", 2, "ns1", parent="cpg-basic-root")],
                 [make_composite("cpg-basic-root", namespace="ns1", basic=True)], [member("p1_1", "pg-basic-1"), member("p1_2", "pg-basic-1")],
                 member("p2_1", "pg-basic-2"), None, id='TestPreEnqueue/"CPG Basic With Gang Stage 1: pg1 ready, root ready (CPG enabled: true)"'),
]


@pytest.mark.parametrize(("groups", "composites", "initial", "target", "want"), PRE_ENQUEUE_CPG)
def test_pre_enqueue_with_hierarchies(groups, composites, initial, target, want):
    """gangscheduling_test.go ``TestPreEnqueue``, CPG-enabled cases: code, plugin and message."""
    sched, fw = harness([], config=CPG_ON)
    for g in groups:
        sched.on_podgroup_add(g)
    for c in composites:
        sched.on_composite_pod_group_add(c)
    infos = {p.name: sched.on_pod_add(p, sched.cluster.next_uid()) for p in [*initial, target]}
    assert fw.plugins[GANG].pre_enqueue(infos[target.name]) == want


# ---- PlacementFeasible ---------------------------------------------------------------------------
S, F = Code.SUCCESS, Code.UNSCHEDULABLE  # a pod's own outcome in the pass
WAIT, OK, NO = Code.WAIT, None, Code.UNSCHEDULABLE  # PlacementFeasible's verdict after it


@pytest.mark.parametrize(
    ("min_count", "children", "pod_outcomes", "initial_scheduled", "want"),
    [
        pytest.param(2, 2, [S, S], 0, [WAIT, OK], id='TestPlacementFeasible/"All pods succeed, minCount met at end"'),
        pytest.param(3, 3, [F], 0, [NO], id='TestPlacementFeasible/"First pod fails, minCount not satisfiable"'),
        pytest.param(2, 2, [S, F], 0, [WAIT, NO], id='TestPlacementFeasible/"Second pod fails, minCount not satisfiable"'),
        pytest.param(0, 1, [F], 0, [NO], id='TestPlacementFeasible/"Non-gang pod group with 0 scheduled pods fails"'),
        pytest.param(0, 1, [S], 0, [OK], id='TestPlacementFeasible/"Non-gang pod group with succeeds once 1 pod is scheduled"'),
        pytest.param(0, 1, [F], 1, [OK], id='TestPlacementFeasible/"Non-gang pod group with 1 initially scheduled pod succeeds"'),
        pytest.param(2, 3, [S, S, S], 0, [WAIT, OK, OK], id='TestPlacementFeasible/"More than minCount pods, all succeed"'),
        pytest.param(2, 3, [F, S, S], 0, [WAIT, WAIT, OK], id='TestPlacementFeasible/"More than minCount pods, first fails"'),
        pytest.param(2, 3, [F, F], 0, [WAIT, NO], id='TestPlacementFeasible/"More than minCount pods, minCount not satisfiable"'),
        pytest.param(3, 2, [S, S], 1, [WAIT, OK], id='TestPlacementFeasible/"1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met"'),
        pytest.param(2, 1, [F], 2, [OK], id='TestPlacementFeasible/"minCount already met by scheduled pods"'),
        pytest.param(3, 2, [F], 1, [NO], id='TestPlacementFeasible/"1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining"'),
        pytest.param(4, 2, [S], 1, [NO], id='TestPlacementFeasible/"1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining"'),
    ],
)
@pytest.mark.parametrize("is_cpg", [False, True], ids=["isCPG: false", "isCPG: true"])
def test_placement_feasible(min_count, children, pod_outcomes, initial_scheduled, want, is_cpg):
    """Upstream runs every case for a PodGroup and for a CompositePodGroup (``getMinCount``:
    minGroupCount, 1 for a basic one); ``children`` are then child groups."""
    _, fw = harness([])
    make = make_composite if is_cpg else make_group
    group = make("test-pg", min_count) if min_count > 0 else make("test-pg", basic=True)
    st = PodGroupState("default/test-pg", group=group)
    scheduled, got = initial_scheduled, []
    for i, outcome in enumerate(pod_outcomes):
        scheduled += outcome == S
        status = fw.plugins[GANG].placement_feasible(st, scheduled, children - (i + 1))
        got.append(None if status is None else status.code)
    assert got == want


@pytest.mark.parametrize(
    ("min_count", "scheduled", "remaining", "want"),
    [
        pytest.param(3, 0, 1, Status(Code.UNSCHEDULABLE, ("minCount (3) cannot be satisfied: 0 scheduled, 1 remaining",), GANG), id="cannot-be-satisfied"),
        pytest.param(3, 1, 2, Status(Code.WAIT, ("minCount (3) is not yet satisfied: 1 scheduled, 2 remaining",), GANG), id="not-yet-satisfied"),
        pytest.param(3, 3, 0, None, id="satisfied"),
        pytest.param(3, 4, 0, None, id="more-than-satisfied"),
    ],
)
def test_placement_feasible_messages(min_count, scheduled, remaining, want):
    _, fw = harness([])
    st = PodGroupState("default/g", group=make_group("g", min_count))
    assert fw.plugins[GANG].placement_feasible(st, scheduled, remaining) == want


def test_placement_feasible_kept_verdicts_follow_the_counts(monkeypatch):
    """The plugin keeps each non-success verdict by (minCount, scheduled, remaining): asked again,
    with other groups' minCounts in between and past a clear of the kept ones, each answer is the
    one the templates give for those counts."""
    import gangsim.scheduler.plugins.gangscheduling as gs

    monkeypatch.setattr(gs, "MAX_VERDICTS", 5)  # (clears the kept verdicts often)
    _, fw = harness([])
    plugin = fw.plugins[GANG]
    for _ in range(2):
        for min_count in (1, 2, 3, 5):
            st = PodGroupState("default/g", group=make_group("g", min_count))
            for scheduled in range(0, 6):
                for remaining in range(0, 6):
                    got = plugin.placement_feasible(st, scheduled, remaining)
                    if remaining + scheduled < min_count:
                        want = Status(Code.UNSCHEDULABLE, (CANNOT_BE_SATISFIED.format(min_count, scheduled, remaining),), GANG)
                    elif scheduled < min_count:
                        want = Status(Code.WAIT, (NOT_YET_SATISFIED.format(min_count, scheduled, remaining),), GANG)
                    else:
                        want = None
                    assert got == want, (min_count, scheduled, remaining)


def test_placement_feasible_message_templates_are_upstreams():
    assert CANNOT_BE_SATISFIED == "minCount ({}) cannot be satisfied: {} scheduled, {} remaining"
    assert NOT_YET_SATISFIED == "minCount ({}) is not yet satisfied: {} scheduled, {} remaining"


# ---- Permit, the plugin alone (TestGangSchedulingFlow) ----------------------------------------------
def permit_flow(target, waiting, monkeypatch):
    """Reserve (assume) and Permit each of ``waiting``, then ``target``; the activated pods."""
    groups = [make_group("pg1", 3, "ns1"), make_group("pg2", 4, "ns1"), make_group("pg3", namespace="ns1", basic=True)]
    everyone = [P1, P2, P3, P4, P5, member("basic-pod", "pg3"), pod("non-gang", "ns1")]
    sched, fw, infos = gang_harness("permit", groups, everyone)
    activated: list[str] = []
    monkeypatch.setattr(fw, "activate", lambda pods: activated.extend(p.name for p in pods))  # the Handle the plugin got
    monkeypatch.setattr(fw, "activation_epoch", lambda: None)  # upstream's Permit activates every time (no FastPath.sibling_activation)
    plugin = fw.plugins[GANG]
    for name in waiting:
        infos[name].phase = PodPhase.WAITING  # what the framework does at Reserve
        status, _ = plugin.permit(CycleState(), infos[name], 0)
        assert status is not None and status.code == Code.WAIT
    infos[target].phase = PodPhase.WAITING
    activated.clear()
    return plugin.permit(CycleState(), infos[target], 0), sorted(activated)


@pytest.mark.parametrize(
    ("target", "waiting", "want_code", "want_timeout_ms", "want_activated"),
    [
        pytest.param("non-gang", [], None, 0, [], id='TestGangSchedulingFlow/"non-gang pod succeeds immediately"'),
        pytest.param("basic-pod", [], None, 0, [], id='TestGangSchedulingFlow/"basic policy pod succeeds immediately"'),
        pytest.param("p1", ["p2", "p4", "p5"], Code.WAIT, 300_000, ["p3"], id='TestGangSchedulingFlow/"gang pod passes PreEnqueue, but waits at Permit"'),
    ],
)
def test_permit(target, waiting, want_code, want_timeout_ms, want_activated, monkeypatch):
    (status, timeout_ms), activated = permit_flow(target, waiting, monkeypatch)
    assert (None if status is None else status.code, timeout_ms, activated) == (want_code, want_timeout_ms, want_activated)


def test_permit_wait_message(monkeypatch):
    """TestGangSchedulingFlow/"gang pod passes PreEnqueue, but waits at Permit": the status, as
    ``GangScheduling.Permit`` (gangscheduling.go, PodGroup API) returns it."""
    (status, _), _ = permit_flow("p1", ["p2", "p4", "p5"], monkeypatch)
    assert status == Status(Code.WAIT, ("waiting for minCount pods from a gang to be scheduled",), GANG)


# ---- the Permit barrier, through the scheduler (policy permit) -----------------------------------
def barrier(n1_cpu=2, timeout_ms=None):
    """Group pg (minCount 3): g-0 and g-1 fit n1 (while it has room), g-2 wants a node labelled
    pool=b that does not exist yet. All three arrive at t=0 and one cycle loop runs."""
    config = SchedulerConfig(permit_timeout_ms=timeout_ms) if timeout_ms else None
    pods = [pod("g-0", containers=[{"cpu": 1000}], group="pg"), pod("g-1", containers=[{"cpu": 1000}], group="pg"),
            pod("g-2", containers=[{"cpu": 1000}], group="pg", node_selector={"pool": "b"})]
    sched, fw, infos = gang_harness("permit", [make_group("pg", 3)], pods, [node("n1", allocatable={"cpu": n1_cpu * 1000, "pods": 110})], config)
    sched.run_cycles()
    return sched, infos


def test_waiting_pods_hold_their_node_until_the_group_shared_deadline():
    sched, infos = barrier()
    cluster = sched.cluster
    assert cluster.of("reserved") == [("default/g-0", "n1"), ("default/g-1", "n1")]
    assert cluster.of("bind") == []
    assert [p for p, _ in cluster.of("scheduling_failed")] == ["default/g-2"]
    assert [t.t_ms for t in cluster.live_timers()] == [300_000]  # one deadline for the group
    assert {n: infos[n].phase for n in infos} == {"g-0": PodPhase.WAITING, "g-1": PodPhase.WAITING, "g-2": PodPhase.PENDING}
    assert infos["g-0"] in sched.waiting_pods and infos["g-1"] in sched.waiting_pods


def test_quorum_allows_every_waiting_pod():
    """TestGangSchedulingFlow/"final gang pod arrives at Permit and allows all waiting pods from a
    gang": the third member's Permit binds the two waiting ones, then itself; the deadline goes."""
    sched, infos = barrier()
    (timer,) = sched.cluster.live_timers()
    sched.cluster.now = 10_000
    sched.on_node_add(node("n2", {"pool": "b"}, allocatable={"cpu": 2000, "pods": 110}))
    sched.run_cycles()
    assert sched.cluster.of("bind") == [("default/g-0", "n1"), ("default/g-1", "n1"), ("default/g-2", "n2")]
    assert timer.cancelled and sched.cluster.live_timers() == []
    assert all(i.phase is PodPhase.BOUND for i in infos.values())


def test_the_timeout_rejects_every_waiting_pod():
    sched, infos = barrier()
    (timer,) = sched.cluster.live_timers()
    sched.cluster.now = timer.t_ms
    timer.fire()
    msg = "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
    assert sched.cluster.of("scheduling_failed")[1:] == [("default/g-0", msg), ("default/g-1", msg)]
    assert sched.cluster.of("unreserved") == [("default/g-0",), ("default/g-1",)]
    assert infos["g-0"].phase is PodPhase.PENDING and infos["g-0"] not in sched.waiting_pods
    assert sched.cluster.of("bind") == []


def test_a_later_wait_shares_the_deadline_of_the_first():
    """gangsim's reading of the per-group timeout: g-1, reserved a minute after g-0, waits the
    four minutes left, and no second timer is set; each rejection names its own wait."""
    sched, infos = barrier(n1_cpu=1)  # only g-0 fits at t=0
    assert sched.cluster.of("reserved") == [("default/g-0", "n1")]
    sched.cluster.now = 60_000
    sched.on_node_add(node("n2", {"pool": "a"}, allocatable={"cpu": 1000, "pods": 110}))  # room for g-1 only
    sched.run_cycles()
    assert sched.cluster.of("reserved") == [("default/g-0", "n1"), ("default/g-1", "n2")]
    assert len(sched.cluster.timers) == 1
    (timer,) = sched.cluster.live_timers()
    sched.cluster.now = timer.t_ms
    timer.fire()
    rejected = [c for c in sched.cluster.of("scheduling_failed") if c[1].startswith("rejected")]
    assert rejected == [
        ("default/g-0", "rejected due to timeout after waiting 5m0s at plugin GangScheduling"),
        ("default/g-1", "rejected due to timeout after waiting 4m0s at plugin GangScheduling"),
    ]


def test_the_timeout_follows_the_configured_permit_timeout():
    sched, _ = barrier(timeout_ms=90_000)
    (timer,) = sched.cluster.live_timers()
    assert timer.t_ms == 90_000
    sched.cluster.now = timer.t_ms
    timer.fire()
    assert sched.cluster.of("scheduling_failed")[-1] == ("default/g-1", "rejected due to timeout after waiting 1m30s at plugin GangScheduling")


def test_unreserving_the_last_waiting_pod_cancels_the_timer():
    sched, infos = barrier()
    (timer,) = sched.cluster.live_timers()
    sched.reject_waiting_pod(infos["g-0"], "node gone")
    assert not timer.cancelled  # g-1 still waits
    sched.reject_waiting_pod(infos["g-1"], "node gone")
    assert timer.cancelled and sched.cluster.live_timers() == []


def test_a_stale_timer_firing_after_the_quorum_does_nothing():
    sched, _ = barrier()
    (timer,) = sched.cluster.live_timers()
    sched.cluster.now = 10_000
    sched.on_node_add(node("n2", {"pool": "b"}, allocatable={"cpu": 2000, "pods": 110}))
    sched.run_cycles()
    timer.cancelled = False  # as if the engine still delivered it
    sched.cluster.now = timer.t_ms
    timer.fire()
    assert not [c for c in sched.cluster.of("scheduling_failed") if c[1].startswith("rejected")]


# ---- go_duration -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ms", "want"),
    [
        pytest.param(0, "0s", id='TestDurationString/"0s"'),
        pytest.param(3_300, "3.3s", id='TestDurationString/"3.3s"'),
        pytest.param(4 * 60_000 + 5_000, "4m5s", id='TestDurationString/"4m5s"'),
        pytest.param(4 * 60_000 + 5_001, "4m5.001s", id='TestDurationString/"4m5.001s"'),
        pytest.param(5 * 3_600_000 + 6 * 60_000 + 7_001, "5h6m7.001s", id='TestDurationString/"5h6m7.001s"'),
        pytest.param(1, "1ms", id="time.Millisecond"),
        pytest.param(999, "999ms", id="just-under-a-second"),
        pytest.param(1_500, "1.5s", id="one-and-a-half-seconds"),
        pytest.param(300_000, "5m0s", id="the-default-permit-timeout"),
        pytest.param(3_600_000, "1h0m0s", id="time.Hour"),
    ],
)
def test_go_duration(ms, want):
    assert go_duration(ms) == want


def test_permit_timeout_message():
    assert permit_timeout_message(300_000) == "rejected due to timeout after waiting 5m0s at plugin GangScheduling"


def test_events_to_register():
    _, fw = harness([], policy="permit")
    assert fw.plugins[GANG].events_to_register() == (ClusterEvent.POD_GROUP,)
