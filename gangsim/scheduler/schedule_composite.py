"""The CompositePodGroup cycle (KEP-6012, SEMANTICS §9; kube's ``RunRootSchedulingAlgorithm`` and
``podGroupSchedulingRecursiveAlgorithm`` in ``algorithm_podgroup.go``).

A hierarchy is one cycle: popping any of its PodGroups pulls the others' queued pods into it
(``PopSpecificPod``), one snapshot serves the whole tree.

- A PodGroup runs the placement loop (``schedule_placement``) inside its parent's placement,
  without the nominated-placement fast path (upstream keeps that to standalone PodGroups); the
  winner's pods are assumed in the snapshot so its siblings see them.
- A CompositePodGroup always runs the placement loop (``compositePodGroupSchedulingAlgorithm``:
  a hierarchy requires TopologyAwareWorkloadScheduling): per candidate placement
  (TopologyPlacementGenerator on its own topology key, within its parent's placement) the
  children in turn (``compositePodGroupSchedulingDefaultAlgorithm``) with PlacementFeasible
  counting children: Remaining = children not yet evaluated, Scheduled = children that
  succeeded in this pass (upstream starts it at 0), minCount = ``minGroupCount`` (1 for
  ``basic``). Each placement's tentative pods are reverted; PlacementScore plugins pick among
  the feasible ones over the pods of the subtree's successful leaves; the winner is assumed.
  No feasible placement: ``0/N placements are available, first placement status: …`` with the
  first placement's subtree results.
- A failing CompositePodGroup invalidates children that succeeded on their own: only PodGroups
  whose every ancestor succeeded bind (``successfulLeafResults``). A root success with no pod
  newly placed is Unschedulable ``no pods were schedulable``.

Then each PodGroup's pods go through the outcome paths of ``schedule_podgroup.finish`` (the root
outcome decides bind or requeue); pods that failed Filter keep their own FitError, the others get
their PodGroup's failure, else the nearest failing ancestor's (gangsim's reading of upstream's
"pod results are reconstructed … using the generic parent error"). CompositePodGroups get
CompositePodGroupInitiallyScheduled with the same reasons.

Workload-aware preemption for a tree (``podGroupCycle`` in schedule_one_podgroup.go): when the
root's status is Unschedulable, PodGroupPostFilter runs once with the root as the preemptor (its
priority and preemption policy, every queued pod of the tree) and the whole recursive algorithm
(``run_root``) as the dry run; the victims are reprieved against the one proposed placement, so
they lie in the winning domain. Its message is appended to every group's status
(``applyPodGroupPostFilterResult``); on success every PodGroup of the tree waits on preemption
and each queued pod gets the nomination the plan gave it (cleared when it placed none).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gangsim.scheduler.binding import bind
from gangsim.scheduler.cycle_handle import SchedulerHandle
from gangsim.scheduler.framework.types import Hierarchies, is_composite
from gangsim.scheduler.framework.interface import Code, Placement, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import CycleOutcome, GroupResult, PodGroupState, PodInfo, QueuedEntity
from gangsim.scheduler.schedule_placement import MSG_PLACEMENTS, NO_PLACEMENT, best_placement, generate_placements, run_placement_algorithm
from gangsim.scheduler.schedule_podgroup import NO_PODS_SCHEDULABLE, begin_attempt, default_pass, finish, run_algorithm, set_condition, validate, wait_as_unschedulable

COMPOSITE = "CompositePodGroup"


@dataclass(slots=True)
class Outcome:
    """One group's result in the cycle (``PodGroupScheduledResult``): its status (None =
    Success), whether it newly placed a pod, and a PodGroup's pass."""

    status: Status | None
    any_scheduled: bool = False
    result: GroupResult | None = None


class TreePass:
    """One run of the recursive algorithm over a hierarchy on the cycle's snapshot."""

    def __init__(self, fw: Framework, tree: Hierarchies, pods: dict[str, list[PodInfo]]) -> None:
        self.fw = fw
        self.tree = tree
        self.pods = pods  # PodGroup key -> its queued pods
        self.assumed: list[PodInfo] = []  # pods assumed in the snapshot, in order

    def revert_to(self, mark: int) -> None:
        snapshot = self.fw.snapshot
        while len(self.assumed) > mark:
            snapshot.unassign(self.assumed.pop())

    def assume(self, placed: list[tuple[PodInfo, int]]) -> None:
        for pod, row in placed:
            self.fw.snapshot.assign(pod, row)
            self.assumed.append(pod)

    def group(self, st: PodGroupState, results: dict[str, Outcome]) -> Outcome:
        """``podGroupSchedulingRecursiveAlgorithm``."""
        if is_composite(st):
            return self.composite(st, results)
        result = run_placement_algorithm(self.fw, st, self.pods.get(st.key, []), default_pass, nominated_fast_path=False)
        if result.status is None:
            self.assume(result.placed)  # assumeSubtreeWithRevert: its siblings see it
        out = results[st.key] = Outcome(result.status, bool(result.placed) and result.status is None, result)
        return out

    def composite(self, st: PodGroupState, results: dict[str, Outcome]) -> Outcome:
        """``compositePodGroupSchedulingPlacementAlgorithm``."""
        fw = self.fw
        placements, status = generate_placements(fw, st, [])
        if status is not None:
            out = results[st.key] = Outcome(status)
            return out
        first: dict[str, Outcome] | None = None
        feasible: list[tuple[Placement, dict[str, Outcome]]] = []
        saved = fw.placement
        try:
            for placement in placements:
                fw.placement = placement
                mark = len(self.assumed)
                sub: dict[str, Outcome] = {}
                out = self.children(st, sub)
                self.revert_to(mark)
                if out.status is not None and out.status.code == Code.ERROR:
                    results.update(sub)
                    return out
                if first is None:
                    first = sub
                fw.placement_evaluations[out.status is None] += 1
                if out.status is None:
                    feasible.append((placement, sub))
        finally:
            fw.placement = saved
        fw.placements_generated += len(placements)
        if not feasible:
            if first is None:
                out = results[st.key] = Outcome(Status(Code.UNSCHEDULABLE, (MSG_PLACEMENTS.format(0, NO_PLACEMENT),)))
                return out
            out = first[st.key]
            s = out.status
            assert s is not None
            out.status = Status(Code.UNSCHEDULABLE, (MSG_PLACEMENTS.format(len(placements), s.message),), s.plugin)
            results.update(first)
            return out
        scored = [(pl, GroupResult(None, placed=[x for leaf in self.valid_leaves(st, sub) for x in leaf.placed])) for pl, sub in feasible]
        _, best = feasible[best_placement(fw, st, scored)]
        for leaf in self.valid_leaves(st, best):
            self.assume(leaf.placed)
        results.update(best)
        return best[st.key]

    def children(self, st: PodGroupState, results: dict[str, Outcome]) -> Outcome:
        """``compositePodGroupSchedulingDefaultAlgorithm``: PlacementFeasible over children."""
        fw = self.fw
        kids = self.tree.children(st.key)
        remaining, scheduled = len(kids), 0
        status = fw.run_placement_feasible(st, scheduled, remaining)
        if status is not None and status.code == Code.UNSCHEDULABLE:
            out = results[st.key] = Outcome(status)
            return out
        mark = len(self.assumed)
        anyone = False
        for child in kids:
            c = self.group(child, results)
            if c.status is not None and c.status.code == Code.ERROR:
                self.revert_to(mark)
                out = results[st.key] = Outcome(Status(Code.ERROR, (f"composite pod group evaluation failed due to child error: {c.status.message}",), c.status.plugin))
                return out
            anyone = anyone or c.any_scheduled
            remaining -= 1
            if c.status is None:
                scheduled += 1
            status = fw.run_placement_feasible(st, scheduled, remaining)
            if status is not None and status.code == Code.UNSCHEDULABLE:
                break
        final = wait_as_unschedulable(status)
        if final is not None:
            self.revert_to(mark)
            anyone = False
        out = results[st.key] = Outcome(final, anyone)
        return out

    def valid_leaves(self, st: PodGroupState, results: dict[str, Outcome]) -> list[GroupResult]:
        """``successfulLeafResults``: PodGroups whose every ancestor (from ``st``) succeeded."""
        out = results.get(st.key)
        if out is None or out.status is not None:
            return []
        if not is_composite(st):
            return [out.result] if out.result is not None and out.result.placed else []
        return [r for c in self.tree.children(st.key) for r in self.valid_leaves(c, results)]


def run_tree(fw: Framework, tree: Hierarchies, root: PodGroupState, pods: dict[str, list[PodInfo]]) -> dict[str, Outcome]:
    """``RunRootSchedulingAlgorithm`` for a CompositePodGroup root; every tentative assumption is
    reverted before it returns."""
    run = TreePass(fw, tree, pods)
    results: dict[str, Outcome] = {}
    try:
        out = run.group(root, results)
        if out.status is None and not out.any_scheduled:
            out.status = Status(Code.UNSCHEDULABLE, (NO_PODS_SCHEDULABLE,))
    finally:
        run.revert_to(0)
    return results


def run_root(fw: Framework, st: PodGroupState, pods: list[PodInfo]) -> GroupResult:
    """``RunRootSchedulingAlgorithm`` as one result (the profile's group algorithm, which
    workload-aware preemption re-runs): a PodGroup's pass, or for a CompositePodGroup root the
    tree's, its status the root's and its placements those of the PodGroups whose every
    ancestor succeeded, in tree order (upstream gathers them from a map)."""
    tree = fw.hierarchy
    if tree is None or not is_composite(st):
        return run_algorithm(fw, st, pods)
    by_leaf: dict[str, list[PodInfo]] = {}
    for p in pods:
        by_leaf.setdefault(p.group_key, []).append(p)
    results = run_tree(fw, tree, st, by_leaf)
    leaves = TreePass(fw, tree, by_leaf).valid_leaves(st, results)
    out = GroupResult(results[st.key].status, placed=[x for leaf in leaves for x in leaf.placed])
    for r in results.values():
        if r.result is not None:
            out.failed.update(r.result.failed)
    return out


def blame(tree: Hierarchies, root: PodGroupState, results: dict[str, Outcome]) -> dict[str, Status | None]:
    """Each group's effective status: its own failure, else the nearest failing ancestor's
    (None: it and every ancestor succeeded). A group never evaluated (its parent stopped early)
    inherits its parent's failure."""
    out: dict[str, Status | None] = {}

    def walk(st: PodGroupState, inherited: Status | None) -> None:
        own = results.get(st.key)
        status = own.status if own is not None and own.status is not None else inherited
        out[st.key] = status
        for c in tree.children(st.key) if is_composite(st) else ():
            walk(c, status)

    walk(root, None)
    return out


def schedule_composite(h: SchedulerHandle, e: QueuedEntity, root: PodGroupState) -> None:
    tree = h.hierarchy
    assert tree is not None
    leaves = tree.leaves(root)
    entities: list[tuple[PodGroupState, QueuedEntity]] = []
    for leaf in leaves:
        le = e if leaf.entity is e or leaf.key == e.group_key else leaf.entity
        if le is None:
            continue
        if le is not e:
            h.queue.take(le)
        entities.append((leaf, le))
    pods: dict[str, list[PodInfo]] = {}
    for leaf, le in entities:
        pods[leaf.key] = begin_attempt(h, le, leaf)
    entities = [(leaf, le) for leaf, le in entities if pods[leaf.key]]
    if not entities:
        return
    started = time.perf_counter()
    for st in [root, *_composites_under(tree, root)]:
        st.members = tree.members(st)  # the generator pins a tree to its scheduled pods' domain
    every = [p for leaf, _ in entities for p in pods[leaf.key]]
    message = validate(h, root, every)
    if message:
        status = Status(Code.ERROR, (message,))
        for leaf, le in entities:
            finish(h, le, leaf, pods[leaf.key], CycleOutcome.ERROR, status, started)
        _set_composite_conditions(h, tree, root, {st.key: status for st in [root, *_composites_under(tree, root)]})
        return
    fw = h.framework_for(every[0].spec.scheduler_name)
    assert fw is not None  # validate checked the profile
    results = run_tree(fw, tree, root, pods)
    effective = blame(tree, root, results)
    bound = effective[root.key] is None
    waiting, nominations = _preempt(fw, root, every, effective)
    for leaf, le in entities:
        out = results.get(leaf.key)
        result = out.result if out is not None else None
        status = effective[leaf.key]
        if bound and status is None and result is not None:
            for pod, row in result.placed:  # §8.5 path 1 for every PodGroup whose path succeeded
                h.snapshot.assign(pod, row)
                le.pods.remove(pod)
                bind(h, None, pod, row)
            finish(h, le, leaf, pods[leaf.key], CycleOutcome.SCHEDULED, None, started, result=result)
            continue
        if status is None:  # the root failed although this branch succeeded
            status = effective[root.key]
        assert status is not None
        if waiting:
            outcome = CycleOutcome.WAITING_ON_PREEMPTION
        else:
            outcome = CycleOutcome.ERROR if status.code == Code.ERROR else CycleOutcome.UNSCHEDULABLE
        finish(h, le, leaf, pods[leaf.key], outcome, Status(Code.ERROR if outcome is CycleOutcome.ERROR else Code.UNSCHEDULABLE, status.reasons, status.plugin), started, result=result, nominations=nominations)
    _set_composite_conditions(h, tree, root, effective)


def _preempt(fw: Framework, root: PodGroupState, pods: list[PodInfo], effective: dict[str, Status | None]) -> tuple[bool, dict[int, int] | None]:
    """PodGroupPostFilter for a tree whose root is Unschedulable (``podGroupCycle``); its
    messages appended to every group's status in ``effective`` (``applyPodGroupPostFilterResult``).
    Returns whether the tree waits on preemption, and the nominations then."""
    status = effective[root.key]
    if status is None or status.code != Code.UNSCHEDULABLE:
        return False, None
    extra: tuple[str, ...] = ()
    waiting, nominations = False, None
    for r in fw.run_pod_group_post_filter(root, pods, status):
        extra += tuple(x for x in r.status.reasons if x)
        if r.status.code == Code.SUCCESS:
            waiting, nominations = True, r.nominations
    if extra:
        for key, s in effective.items():
            if s is not None:
                effective[key] = Status(s.code, s.reasons + extra, s.plugin)
    return waiting, nominations


def _composites_under(tree: Hierarchies, st: PodGroupState) -> list[PodGroupState]:
    out: list[PodGroupState] = []
    for c in tree.children(st.key):
        if is_composite(c):
            out.append(c)
            out.extend(_composites_under(tree, c))
    return out


def _set_composite_conditions(h: SchedulerHandle, tree: Hierarchies, root: PodGroupState, effective: dict[str, Status | None]) -> None:
    """CompositePodGroupInitiallyScheduled of every CompositePodGroup of the tree."""
    failed = effective.get(root.key)
    for st in [root, *_composites_under(tree, root)]:
        status = effective.get(st.key, failed)
        if status is None and failed is not None:
            status = failed
        if status is None:
            set_condition(h, st, CycleOutcome.SCHEDULED, "", kind=COMPOSITE)
        elif status.code == Code.ERROR:
            set_condition(h, st, CycleOutcome.ERROR, status.message, kind=COMPOSITE)
        else:
            set_condition(h, st, CycleOutcome.UNSCHEDULABLE, status.message, kind=COMPOSITE)


__all__ = ["run_root", "run_tree", "schedule_composite"]
