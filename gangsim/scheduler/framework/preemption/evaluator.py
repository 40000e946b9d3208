"""``Evaluator.preempt``: the numbered steps every preemption follows (kube's
``framework/preemption/preemption.go``), with the strategy-specific hooks of one pod preempting
on a node (:class:`PodStrategy`, SEMANTICS §5) and one PodGroup preempting across the cluster
(:class:`PodGroupStrategy`, §11.2, whose group algorithm comes from the Handle).

A strategy computes a plan and never changes the cluster: the snapshot is only changed inside
dry runs that undo themselves. Actuating the chosen victims is DefaultPreemption's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import numpy as np

from gangsim.api.objects import PreemptionPolicy
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.preemption.units import (
    PDBTracker,
    UnitIndex,
    VictimUnit,
    pdb_budgets,
    reprieve,
    sort_by_importance,
    units_removed,
)
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis, PodGroupState, PodInfo, reason_histogram

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
ONGOING = "ongoing preemption on nominated nodes"
NO_GROUP_VICTIMS = "No preemption victims found for incoming preemptor"
# ``PodGroupEvaluator.Preempt`` (framework/preemption/podgrouppreemption.go, newest): the Success
# status once the victims are chosen, with len(victims.Pods)
FOUND_PLACEMENT = "found a placement for podgroup, preempting {} victims"
# Unschedulable in the newest ``PodGroupEvaluator.Preempt`` (was UnschedulableAndUnresolvable)
NO_GROUP_VICTIMS_STATUS = Status(Code.UNSCHEDULABLE, (NO_GROUP_VICTIMS,))  # (frozen: shared)
_INT32_OFFSET = 2**31
_UNSCHEDULABLE = int(Code.UNSCHEDULABLE)  # a plain int: numpy compares it without the enum's lookups

C = TypeVar("C")
R = TypeVar("R")


class Strategy(Protocol, Generic[C, R]):
    def eligible(self) -> R | None:
        """Step 1: the refusal (a result) when the preemptor may not preempt; None otherwise."""
        ...

    def find_candidates(self) -> list[C] | R:
        """Step 2: the candidates, or the failure when there are none."""
        ...

    def select(self, candidates: list[C]) -> R:
        """Step 3: the result for the best candidate."""
        ...


class Evaluator:
    """The template both strategies run through."""

    def preempt(self, strategy: Strategy[C, R]) -> R:
        # 1) Ensure the preemptor is eligible to preempt other pods.
        refusal = strategy.eligible()
        if refusal is not None:
            return refusal
        # 2) Find all preemption candidates.
        found = strategy.find_candidates()
        if not isinstance(found, list):
            return found
        # 3) Find the best candidate.
        return strategy.select(found)


# ---- one pod, one node (§5) --------------------------------------------------------------------
@dataclass(slots=True)
class Candidate:
    row: int
    units: list[VictimUnit]
    num_pdb_violations: int

    @property
    def victims(self) -> list[PodInfo]:
        return [p for u in self.units for p in u.pods]


@dataclass(slots=True)
class PodPreemption:
    nominated_row: int | None  # None: leave the nomination as it is; NO_NODE: clear it
    message: str = ""
    candidate: Candidate | None = None  # set on success


@dataclass(frozen=True, slots=True)
class CandidateLimits:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


class PodStrategy:
    """Classic DefaultPreemption for ``pod`` (§5): per-node dry runs from a (seeded) offset."""

    def __init__(
        self,
        handle: Handle,
        units: UnitIndex,
        limits: CandidateLimits,
        rng: np.random.Generator | None,
        pod: PodInfo,
        diagnosis: Diagnosis,
        equals_memo: list | None = None,
    ) -> None:
        """``equals_memo`` (fast path ``FastPath.repeated_failure``, owned by the caller): the
        last cluster-of-equals verdict, ``[diagnosis codes, nodes, potential nodes, message]``,
        reused while the diagnosis is the same object (``fastpath.repeat`` replays it), and its
        message while the node and potential-node counts are the same (a fresh pass after a release
        that helped no pod of the shape, issue 16: the message is a function of the two counts)."""
        self.equals_memo = equals_memo
        self.handle = handle
        self.units = units
        self.limits = limits
        self.rng = rng
        self.pod = pod
        self.diagnosis = diagnosis

    # §5 step 0
    def eligible(self) -> PodPreemption | None:
        pod, snap = self.pod, self.handle.snapshot
        if pod.preemption_policy is PreemptionPolicy.NEVER:
            return PodPreemption(None, NOT_ELIGIBLE_NEVER)
        row = pod.nominated_row
        if row != NO_NODE and snap.nodes.alive[row]:
            code = self.diagnosis.code_of(row)
            # rows absent from the diagnosis count as UnschedulableAndUnresolvable upstream
            if code is None or code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return None
            for q in snap.pods_on(row):
                if q.terminating and self.handle.victim_priority(q) < pod.priority:
                    return PodPreemption(None, NOT_ELIGIBLE_TERMINATING)
        return None

    def find_candidates(self) -> list[Candidate] | PodPreemption:
        """§5 steps 1–3: only nodes that failed with plain Unschedulable, in node-list order."""
        nodes = self.handle.snapshot.nodes
        num_all = nodes.num_nodes
        d = self.diagnosis
        snap = self.handle.snapshot
        prio = self.pod.priority
        if not snap.has_assigned_below(prio):
            n, message = self._among_equals()
            if n and self.rng is not None:
                self.rng.integers(n)
            return PodPreemption(NO_NODE, message)
        hosts = {p.node_row for p in snap.assigned_below(prio)}
        potential = [int(r) for r, c in zip(d.rows.tolist(), d.codes.tolist()) if c == Code.UNSCHEDULABLE]
        potential.sort(key=lambda r: int(nodes.position[r]))
        if not potential:
            return PodPreemption(NO_NODE, f"0/{num_all} nodes are available: {reason_histogram([], num_all, NOT_HELPFUL)}.")
        candidates, statuses = self._dry_run(potential, hosts)
        if not candidates:
            hist = reason_histogram([rs for _, rs in statuses.values()], num_all - len(statuses), NOT_HELPFUL)
            return PodPreemption(NO_NODE, f"0/{num_all} nodes are available: {hist}.")
        return candidates

    def _among_equals(self) -> tuple[int, str]:
        """No lower-priority pod anywhere (a cluster of equals): every potential node's dry run
        would say NO_VICTIMS, so only how many there are matters — the same message and the
        same range of the offset draw as _dry_run (returned: that range, and the message),
        without listing and sorting the nodes (HPC2N under pod: a third of the replay was this,
        on every failed attempt)."""
        d, num_all = self.diagnosis, self.handle.snapshot.nodes.num_nodes
        memo = self.equals_memo
        if memo is not None and memo[0] is d.codes and memo[1] == num_all:
            return memo[2], memo[3]  # fast path: the same diagnosis as last time
        n = int(np.count_nonzero(d.codes == _UNSCHEDULABLE))
        if memo is not None and memo[0] is not None and memo[1] == num_all and memo[2] == n:
            memo[0] = d.codes  # fast path: another diagnosis, the same count (the message is a function of the two)
            return n, memo[3]
        hist = reason_histogram([], num_all - n, NOT_HELPFUL, counts={NO_VICTIMS: n} if n else None)
        message = f"0/{num_all} nodes are available: {hist}."
        if memo is not None:
            memo[:] = [d.codes, num_all, n, message]
        return n, message

    def without_victims(self) -> tuple[PodPreemption, int] | None:
        """Fast path (``FastPath.pod_runs``): the outcome of ``Evaluator.preempt`` when it needs
        no dry run and finds no victims — the preemptor not eligible by its PreemptionPolicy,
        or no lower-priority pod anywhere (``_among_equals``) — with the range of the one offset
        draw it makes (0: none); None otherwise, and for a nominated preemptor."""
        if self.pod.nominated_row != NO_NODE:
            return None
        refusal = self.eligible()
        if refusal is not None:
            return refusal, 0
        if self.handle.snapshot.has_assigned_below(self.pod.priority):
            return None
        n, message = self._among_equals()
        return PodPreemption(NO_NODE, message), n

    def _num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.limits.min_candidate_nodes_percentage // 100
        n = max(n, self.limits.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def _dry_run(self, potential: list[int], hosts: set[int]) -> tuple[list[Candidate], dict[int, tuple[Code, tuple[str, ...]]]]:
        """§5 step 2: visit nodes from an offset; stop once enough candidates exist. Nodes not in
        ``hosts`` (hosting no lower-priority pod, from the priority index) offer no victims
        without a dry run."""
        n = len(potential)
        offset = int(self.rng.integers(n)) if self.rng is not None else 0
        wanted = self._num_candidates(n)
        pdbs: PDBTracker | None = None
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, tuple[Code, tuple[str, ...]]] = {}
        for i in range(n):
            row = potential[(offset + i) % n]
            if row not in hosts:
                statuses[row] = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
                continue
            if pdbs is None:
                pdbs = PDBTracker(pdb_budgets(self.handle))
            cand, status = self._select_victims_on_node(row, pdbs)
            if cand is not None:
                (non_violating if cand.num_pdb_violations == 0 else violating).append(cand)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
            else:
                statuses[row] = status
        return non_violating + violating, statuses

    def _select_victims_on_node(self, row: int, pdbs: PDBTracker) -> tuple[Candidate | None, tuple[Code, tuple[str, ...]]]:
        """§5 step 3: remove every lower-priority unit, check the fit, reprieve in order."""
        pod, handle = self.pod, self.handle
        units = self.units.on_row(pod.priority, row)
        if not units:
            return None, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
        snap = handle.snapshot
        with units_removed(snap, units) as homes:
            code, reasons = handle.filter_status_on(pod, row)
            if code != Code.SUCCESS:
                return None, (code, reasons)
            violating, non_violating = pdbs.split(sort_by_importance(units))
            victims, violations = reprieve(snap, violating, non_violating, homes, lambda: handle.fits_on(pod, row))
        if not victims:
            return None, (Code.ERROR, (f'expected at least one victim pod on node "{snap.nodes.names[row]}"',))
        if violating and non_violating:
            victims = sort_by_importance(victims)
        return Candidate(row, victims, violations), (Code.SUCCESS, ())

    def select(self, candidates: list[Candidate]) -> PodPreemption:
        """``pickOneNodeForPreemption``: six lexicographic criteria, ties to the first candidate."""
        best = candidates[0]
        if len(candidates) > 1:
            prio = self.handle.victim_priority

            def earliest_start_of_top(c: Candidate) -> int:
                pods = c.victims
                top = max(prio(p) for p in pods)
                return min(p.start_ms if p.start_ms is not None else (1 << 62) for p in pods if prio(p) == top)

            criteria = (
                lambda c: -c.num_pdb_violations,
                lambda c: -prio(c.victims[0]),
                lambda c: -sum(prio(p) + _INT32_OFFSET for p in c.victims),
                lambda c: -len(c.victims),
                earliest_start_of_top,
            )
            remaining = candidates
            for crit in criteria:
                scores = [crit(c) for c in remaining]
                top = max(scores)
                remaining = [c for c, s in zip(remaining, scores) if s == top]
                if len(remaining) == 1:
                    break
            best = remaining[0]
        return PodPreemption(best.row, "", best)


# ---- one PodGroup, the whole cluster (§11.2) -------------------------------------------------------
@dataclass(slots=True)
class GroupPreemption:
    status: Status  # SUCCESS (waiting on preemption) or a rejection
    victims: list[VictimUnit] = field(default_factory=list)
    nominations: dict[int, int] = field(default_factory=dict)  # preemptor pod uid -> row (NO_NODE clears)
    num_pdb_violations: int = 0
    placed: list[tuple[PodInfo, int]] = field(default_factory=list)


class PodGroupStrategy:
    """Workload-aware preemption (KEP-5710): one domain, the cluster. Every lower-priority unit
    is removed, the group algorithm places what it can, units are put back in importance order
    while every proposed placement still passes Filter; the rest are the victims.

    The preemptor is a PodGroup or the root of a CompositePodGroup tree (then ``pods`` are every
    queued pod of the tree and priority and policy the root's, ``GenericPodGroup``); the group
    algorithm is the profile's root algorithm, placement loop included, so a topology-constrained
    group's proposed pods, and with them its victims, lie in the placement it picks on the
    cleaned cluster (``PodGroupEvaluator.selectVictimsOnDomain``, podgrouppreemption.go)."""

    def __init__(self, handle: Handle, units: UnitIndex, group: PodGroupState, pods: list[PodInfo]) -> None:
        self.handle = handle
        self.units = units
        self.st = group
        self.pods = pods
        self.priority = group.group.priority if group.group else 0

    def eligible(self) -> GroupPreemption | None:
        group, pods, handle = self.st.group, self.pods, self.handle
        # 0) A group with topology constraints preempts like any other (newest upstream, where
        #    the code wins over SEMANTICS §8.8 item 7 and the issue text "groups with topology
        #    constraints never preempt": ``DefaultPreemption.PodGroupPostFilter`` in
        #    defaultpreemption/default_preemption.go no longer returns "not supported with
        #    topology constraints", kubernetes#140683 "Allow WAP when pod group uses TAS").
        #    The placement loop is inside ``run_pod_group_algorithm`` (kube's pgSchedulingFunc,
        #    ``RunRootSchedulingAlgorithm`` in ``podGroupCycle``, schedule_one_podgroup.go), so
        #    the proposed placement, and with it the victims, lie in one domain.
        #    The group's preemption policy, then ongoing preemption on nominated nodes.
        policy = group.policy.preemption_policy if group is not None and group.policy.preemption_policy is not None else None
        if policy is None:
            policy = pods[0].preemption_policy if pods else PreemptionPolicy.PREEMPT_LOWER_PRIORITY
        if policy is PreemptionPolicy.NEVER:
            return GroupPreemption(Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,)))
        if not handle.snapshot.has_assigned_below(self.priority):
            return None  # no terminating pod of lower priority anywhere (terminating pods stay assigned): nothing ongoing
        nodes = handle.snapshot.nodes
        for row in sorted({p.nominated_row for p in pods if p.nominated_row != NO_NODE}):
            if not nodes.alive[row]:
                continue
            if any(q.terminating and handle.victim_priority(q) < self.priority for q in handle.snapshot.pods_on(row)):
                return GroupPreemption(Status(Code.SUCCESS, (ONGOING,)), nominations={p.uid: p.nominated_row for p in pods})
        return None

    def without_victims(self) -> GroupPreemption | None:
        """``Evaluator.preempt``'s failure when it is known without a dry run on the cleaned
        cluster: the group is not eligible (a refusal), or no pod of lower priority is assigned
        anywhere; None otherwise (reads only)."""
        refusal = self.eligible()
        if refusal is not None:
            return refusal if refusal.status.code != Code.SUCCESS else None
        if self.handle.snapshot.has_assigned_below(self.priority):
            return None
        return GroupPreemption(NO_GROUP_VICTIMS_STATUS)

    def find_candidates(self) -> list[GroupPreemption] | GroupPreemption:
        handle, pods = self.handle, self.pods
        # 1) Potential victims: every unit of strictly lower priority, anywhere in the cluster
        #    (none at all, as in a cluster of one priority: known without listing them).
        units = self.units.below(self.priority) if handle.snapshot.has_assigned_below(self.priority) else []
        if not units:
            return GroupPreemption(NO_GROUP_VICTIMS_STATUS)
        snap = handle.snapshot
        budgets = pdb_budgets(handle)  # from the cluster as it is, before anything is removed
        with units_removed(snap, units) as homes:
            # 2)+3) On the cleaned cluster, run the group algorithm again (no PostFilter).
            result = handle.run_pod_group_algorithm(self.st, pods)
            if result.status is not None:
                return GroupPreemption(result.status)
            placed = result.placed
            # 4)+5) Importance order; PDB-violating units first.
            violating, non_violating = PDBTracker(budgets).split(sort_by_importance(units))
            # 6) In-place reprieve, re-filtering every proposed placement in order.
            victims, violations = reprieve(snap, violating, non_violating, homes, lambda: self._placements_still_fit(placed))
        # 7) Victims in importance order; nominations for the placed pods, cleared for the rest.
        nominations = {p.uid: NO_NODE for p in pods}
        for p, row in placed:
            nominations[p.uid] = row
        message = FOUND_PLACEMENT.format(sum(len(u.pods) for u in victims))
        return [GroupPreemption(Status(Code.SUCCESS, (message,)), sort_by_importance(victims), nominations, violations, placed)]

    def _placements_still_fit(self, placed: list[tuple[PodInfo, int]]) -> bool:
        """Filter every proposed (pod, node) in order, assuming the earlier ones (Reserve)."""
        snap = self.handle.snapshot
        assumed: list[PodInfo] = []
        try:
            for pod, row in placed:
                if not self.handle.fits_on(pod, row):
                    return False
                snap.assign(pod, row)
                assumed.append(pod)
            return True
        finally:
            for pod in reversed(assumed):
                snap.unassign(pod)

    def select(self, candidates: list[GroupPreemption]) -> GroupPreemption:
        return candidates[0]  # the cluster is one domain
