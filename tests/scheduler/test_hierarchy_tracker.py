"""``Hierarchies`` (gangsim's GangScheduling hierarchy tracker, SEMANTICS §9) against upstream's
hierarchy tracker tests (kubernetes/kubernetes
pkg/scheduler/framework/plugins/gangscheduling/hierarchy_tracker_test.go):

- ``TestHierarchyTracker_FindRootGroupReadiness``: the root reached from a group and whether it is
  ready (gangsim: ``Hierarchies.root`` and ``Hierarchies.ready``);
- ``TestHierarchyTracker_FindRootGroupReadiness_MissingObjects``: a missing object on the way up
  gives no root (gangsim: ``root`` returns no state, or a state without its object);
- ``TestHierarchyTracker`` (ReadyChildrenCount after each informer event), the cases gangsim's
  informer handlers can replay.

The groups arrive through the scheduler's informer handlers (``on_podgroup_add``,
``on_composite_pod_group_add``, ``on_pod_add``...) with the CompositePodGroup gate on, as
``NewHierarchyTracker(true)``. Left out (skipped below, with the reason): the gate-off case (gangsim
builds no tracker with the gate off), parent cycles (the loader rejects them: ``load/composite.py``,
"cycle detected in hierarchy"; also ``TestHierarchyTracker_FindRootGroupReadiness_Errors``), and
a pod re-created under another group (a pod never changes its group in gangsim). Not ported:
``TestHierarchyTracker``'s "Preserve active pods ..." and "Prune deleted PodGroup ..." (the tracker's internal placeholder
groups, which gangsim does not keep apart from its PodGroup states) and
``TestHierarchyTracker_AreSameHierarchy`` (queueing hints; gangsim moves a hierarchy's entities
itself, ``Scheduler._hierarchy_event``).
"""

from __future__ import annotations

import pytest

from builders import make_composite, make_group
from gangsim.api.config import SchedulerConfig
from scheduler.harness import harness, pod

CPG_ON = SchedulerConfig(composite_pod_group=True, topology_aware_workload_scheduling=True)
ROOT = make_composite("root-cpg", 2, "ns1")
MID = make_composite("mid-cpg", 2, "ns1", parent="root-cpg")
PG1, PG2 = make_group("pg1", 2, "ns1", parent="mid-cpg"), make_group("pg2", 2, "ns1", parent="mid-cpg")
PG3 = make_group("pg3", 1, "ns1", parent="root-cpg")
STANDALONE = make_group("standalone-pg", 2, "ns1")
BASIC_ROOT = make_composite("basic-root-cpg", namespace="ns1", basic=True)
BASIC_CHILD = make_group("basic-child-pg", namespace="ns1", basic=True, parent="basic-root-cpg")
BASIC_STANDALONE = make_group("basic-standalone-pg", namespace="ns1", basic=True)
PG4 = make_group("pg4", 2, "ns1", parent="basic-root-cpg")
DANGLING_CPG = make_composite("dangling-cpg", 1, "ns1", parent="non-existent-cpg")
DANGLING_PG = make_group("dangling-pg", 2, "ns1", parent="non-existent-cpg")
UNDER_DANGLING = make_group("pg-under-dangling-cpg", 1, "ns1", parent="dangling-cpg")


def members(*spec):
    """pods p1, p2, ... of the named groups, in order."""
    return [pod(f"p{i}", "ns1", group=g) for i, g in enumerate(spec, 1)]


def tracker(groups, pods=()):
    sched, _ = harness([], config=CPG_ON)
    for g in groups:
        if g.__class__.__name__ == "CompositePodGroup":
            sched.on_composite_pod_group_add(g)
        else:
            sched.on_podgroup_add(g)
    infos = {p.name: sched.on_pod_add(p, sched.cluster.next_uid()) for p in pods}
    assert sched.hierarchy is not None
    return sched, sched.hierarchy, infos


CYCLE = "the loader rejects parent cycles (load/composite.py, MSG_CYCLE 'cycle detected in hierarchy'): the scheduler never holds one"
GATE_OFF = "gangsim builds no hierarchy tracker with the CompositePodGroup gate off (Scheduler.hierarchy is None); PreEnqueue's gate-off cases in test_gangscheduling.py cover it"


@pytest.mark.parametrize(
    ("groups", "pods", "lookup", "root_name", "ready"),
    [
        pytest.param([STANDALONE], members("standalone-pg", "standalone-pg"), "ns1/standalone-pg", "standalone-pg", True, id="Standalone PodGroup returns itself when CPG enabled"),
        pytest.param([STANDALONE], members("standalone-pg"), "ns1/standalone-pg", "standalone-pg", False, id="Standalone PodGroup returns unready when below minCount"),
        pytest.param([ROOT, MID, PG1, PG2], members("pg1", "pg1", "pg2", "pg2"), "ns1/pg1", "root-cpg", False, id="Leaf PodGroup returns root CompositePodGroup when CPG enabled"),
        pytest.param([ROOT, MID, PG1, PG2, PG3], members("pg1", "pg1", "pg2", "pg2", "pg3"), "ns1/pg1", "root-cpg", True, id="Leaf PodGroup returns ready root CompositePodGroup when quorum met"),
        pytest.param([ROOT, MID, PG1, PG2], [], "ns1/mid-cpg", "root-cpg", False, id="Mid CompositePodGroup returns root CompositePodGroup when CPG enabled"),
        pytest.param([ROOT, MID, PG1, PG2], [], "ns1/root-cpg", "root-cpg", False, id="Root CompositePodGroup returns itself when CPG enabled"),
        pytest.param([BASIC_STANDALONE], [], "ns1/basic-standalone-pg", "basic-standalone-pg", False, id="Basic standalone PodGroup is unready with 0 pods"),
        pytest.param([BASIC_STANDALONE], members("basic-standalone-pg"), "ns1/basic-standalone-pg", "basic-standalone-pg", True, id="Basic standalone PodGroup is ready with 1 pod"),
        pytest.param([BASIC_ROOT, BASIC_CHILD], members("basic-child-pg"), "ns1/basic-child-pg", "basic-root-cpg", True, id="Basic root CompositePodGroup is ready with 1 ready child"),
        pytest.param([BASIC_ROOT, PG4], members("pg4"), "ns1/pg4", "basic-root-cpg", False, id="Basic root CompositePodGroup is not ready with 0 ready children"),
        pytest.param([ROOT, MID, PG1], members("pg1", "pg1"), "ns1/pg1", "pg1", True, id="Leaf PodGroup returns itself when CPG disabled", marks=pytest.mark.skip(reason=GATE_OFF)),
    ],
)
def test_find_root_group_readiness(groups, pods, lookup, root_name, ready):
    """``TestHierarchyTracker_FindRootGroupReadiness``."""
    _, tree, _ = tracker(groups, pods)
    root, name = tree.root(lookup)
    assert root is not None and root.group is not None
    assert (name, tree.ready(root)) == (root_name, ready)


@pytest.mark.parametrize(
    ("groups", "pods", "lookup"),
    [
        pytest.param([DANGLING_PG], [], "ns1/dangling-pg", id="PodGroup with dangling parent returns nil without error"),
        pytest.param([DANGLING_PG], members("dangling-pg", "dangling-pg"), "ns1/dangling-pg", id="Ready PodGroup with dangling parent placeholder returns nil without error"),
        pytest.param([DANGLING_CPG], [], "ns1/dangling-cpg", id="CompositePodGroup with dangling parent returns nil without error"),
        pytest.param([DANGLING_CPG, UNDER_DANGLING], [], "ns1/pg-under-dangling-cpg", id="PodGroup under CompositePodGroup with dangling parent returns nil without error"),
        pytest.param([], [], "ns1/missing-pg", id="Non-existent PodGroup key returns nil without error"),
        pytest.param([], [], "ns1/missing-cpg", id="Non-existent CompositePodGroup key returns nil without error"),
        pytest.param([], members("missing-pg"), "ns1/missing-pg", id="PodGroup placeholder without PodGroup object returns nil without error"),
        pytest.param([DANGLING_PG], members("dangling-pg", "dangling-pg"), "ns1/non-existent-cpg", id="CompositePodGroup placeholder without CompositePodGroup object returns nil without error"),
        pytest.param([], [], "ns1/cycle1", id="TestHierarchyTracker_FindRootGroupReadiness_Errors/CPG", marks=pytest.mark.skip(reason=CYCLE)),
        pytest.param([], [], "ns1/pg1", id="TestHierarchyTracker_FindRootGroupReadiness_Errors/PodGroup connects to cycle", marks=pytest.mark.skip(reason=CYCLE)),
    ],
)
def test_find_root_group_readiness_missing_objects(groups, pods, lookup):
    """``TestHierarchyTracker_FindRootGroupReadiness_MissingObjects``: no root (gangsim's
    ``root`` gives no state, or a placeholder state without its object)."""
    _, tree, _ = tracker(groups, pods)
    root, _ = tree.root(lookup)
    assert root is None or root.group is None




# ---- TestHierarchyTracker: ReadyChildrenCount after each event -----------------------------------
# steps: (event, object-or-pod-name[, group]) then the wanted ReadyChildrenCount of named
# CompositePodGroups ({} = not checked, as upstream's steps without wantReadyCounts)
ROOT1 = make_composite("root-cpg", 1, "ns1")
T_PG1, T_PG2 = make_group("pg1", 2, "ns1", parent="mid-cpg"), make_group("pg2", 1, "ns1", parent="mid-cpg")
ROOT_BASIC = make_composite("root-basic", namespace="ns1", basic=True)
CHILD_BASIC = make_group("child-basic", namespace="ns1", basic=True, parent="root-basic")
CPG1, CPG2 = make_composite("cpg1", 1, "ns1"), make_composite("cpg2", 1, "ns1")
REPARENTED, REPARENTED_UPDATED = make_group("pg-reparent", 1, "ns1", parent="cpg1"), make_group("pg-reparent", 1, "ns1", parent="cpg2")
RECREATE = "a pod never changes its PodGroup in gangsim (a re-created pod is a new pod), so the collapsed delete+recreate update cannot be replayed"

TRACKER = [
    pytest.param([(("cpg", ROOT1), {"root-cpg": 0}), (("cpg", MID), {"root-cpg": 0, "mid-cpg": 0}), (("pg", T_PG1), {"root-cpg": 0, "mid-cpg": 0}),
                  (("pg", T_PG2), {"root-cpg": 0, "mid-cpg": 0}), (("pod", "pod-1a", "pg1"), {"root-cpg": 0, "mid-cpg": 0}),
                  (("pod", "pod-1b", "pg1"), {"root-cpg": 0, "mid-cpg": 1}), (("pod", "pod-2a", "pg2"), {"root-cpg": 1, "mid-cpg": 2}),
                  (("delete", "pod-1b"), {"root-cpg": 0, "mid-cpg": 1})],
                 id="3-level hierarchy propagation (Root CPG -> Mid CPG -> PG1, PG2)"),
    pytest.param([(("pod", "pod-1a", "pg1"), {}), (("pod", "pod-1b", "pg1"), {}),
                  (("pg", make_group("pg1", 2, "ns1", parent="root-cpg")), {}),  # upstream counts the placeholder root here; gangsim has no root state yet
                  (("cpg", ROOT1), {"root-cpg": 1})],
                 id="Out of order arrival (Pod arrives before PG, PG arrives before CPG)"),
    pytest.param([(("cpg", CPG1), {"cpg1": 0}), (("cpg", CPG2), {"cpg1": 0, "cpg2": 0}), (("pg", REPARENTED), {"cpg1": 0, "cpg2": 0}),
                  (("pod", "pod-reparent", "pg-reparent"), {"cpg1": 1, "cpg2": 0}), (("update", REPARENTED, REPARENTED_UPDATED), {"cpg1": 0, "cpg2": 1}),
                  (("pgdelete", "pg-reparent"), {"cpg1": 0, "cpg2": 0})],
                 id="Re-parenting PodGroup moves readiness count across CPGs"),
    pytest.param([(("cpg", ROOT_BASIC), {"root-basic": 0}), (("pg", CHILD_BASIC), {"root-basic": 0}),
                  (("pod", "pod-basic-1", "child-basic"), {"root-basic": 1}), (("delete", "pod-basic-1"), {"root-basic": 0})],
                 id="Basic scheduling policy evaluates readiness on first pod"),
    pytest.param([], id="Collapsed pod delete and recreate moves the pod between groups", marks=pytest.mark.skip(reason=RECREATE)),
    pytest.param([], id="Parent cycle terminates readiness propagation", marks=pytest.mark.skip(reason=CYCLE)),
]


@pytest.mark.parametrize("steps", TRACKER)
def test_hierarchy_tracker(steps):
    """``TestHierarchyTracker``: the CompositePodGroups' ready-children counts after each event.
    (Its "Preserve active pods when PodGroup is deleted and re-created" and "Prune deleted
    PodGroup when all pods are removed" cases check the tracker's internal placeholders, which
    gangsim does not keep apart from its PodGroup states.)"""
    sched, tree, _ = tracker([])
    infos = {}
    for (event, *args), want in steps:
        if event == "cpg":
            sched.on_composite_pod_group_add(args[0])
        elif event == "pg":
            sched.on_podgroup_add(args[0])
        elif event == "update":
            sched.on_podgroup_update(args[0], args[1])
        elif event == "pgdelete":
            sched.on_podgroup_delete(f"ns1/{args[0]}")
        elif event == "pod":
            infos[args[0]] = sched.on_pod_add(pod(args[0], "ns1", group=args[1]), sched.cluster.next_uid())
        else:
            sched.on_pod_delete(infos.pop(args[0]))
        assert {k: tree.ready_children(tree.state(f"ns1/{k}")) for k in want} == want, (event, args)
