"""Victim units, their importance order, PDB accounting and the reprieve, shared by both
preemption strategies.

A unit is a single pod or, when the pod's PodGroup or one of its CompositePodGroup ancestors has
``disruptionMode: all``, every scheduled pod under the highest such ancestor (SEMANTICS §11.1;
``getHighestAllAncestor`` and ``searchCrossNodesVictimPods`` in
pkg/scheduler/framework/preemption). Its priority is the pod's victim priority (the root's in a
tree, ``getPodPriority``). Importance (most important first, §5 step 3d; ``MoreImportantVictim``):
priority desc; with GenericWorkload on, type rank CompositePodGroup(3) > PodGroup(2) > Pod(1)
(``victimRank``) and more pods first; earlier start first (unstarted = newest); lower UID first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gangsim.api.objects import DisruptionMode, PodDisruptionBudget
from gangsim.scheduler.framework.handle import Handle, SnapshotView
from gangsim.scheduler.framework.types import NO_NODE, PodGroupState, PodInfo, PodPhase, is_composite

POD_RANK = 1
PODGROUP_RANK = 2
COMPOSITE_RANK = 3
_NEVER_STARTED = 1 << 62


@dataclass(slots=True, eq=False)
class VictimUnit:
    pods: list[PodInfo]
    priority: int
    rank: int = POD_RANK
    group_key: str = ""
    violating: int = 0  # number of its pods that violate a PDB
    sort_key: tuple = field(default=())

    def finish(self, workload_aware: bool) -> "VictimUnit":
        start = min((p.start_ms if p.start_ms is not None else _NEVER_STARTED) for p in self.pods)
        uid = min(p.uid for p in self.pods)
        if workload_aware:
            self.sort_key = (-self.priority, -self.rank, -len(self.pods), start, uid)
        else:
            self.sort_key = (-self.priority, start, uid)
        return self


def sort_by_importance(units: list[VictimUnit]) -> list[VictimUnit]:
    return sorted(units, key=lambda u: u.sort_key)


class UnitIndex:
    """Builds victim units from the cluster (§5 step 3a, §11.1, §11.3). With GenericWorkload on, a
    PodGroup member's unit is its group's: the pod alone (``single``), or every scheduled member
    wherever it runs (``all``); each pod belongs to one unit per call (``seen``)."""

    def __init__(self, handle: Handle, generic_workload: bool) -> None:
        self.handle = handle
        self.generic_workload = generic_workload

    def unit_for(self, pod: PodInfo, seen: set[int]) -> VictimUnit | None:
        """The victim unit ``pod`` belongs to (None if already part of a unit in ``seen``)."""
        if pod.uid in seen:
            return None
        st = self.handle.pod_group(pod.group_key) if pod.group_key and self.generic_workload else None
        if st is None or st.group is None:
            seen.add(pod.uid)
            return VictimUnit([pod], pod.priority).finish(self.generic_workload)
        priority = self.handle.victim_priority(pod)
        top = self.highest_all(st)
        if top is None:
            seen.add(pod.uid)
            return VictimUnit([pod], priority, PODGROUP_RANK, st.key).finish(True)
        tree = self.handle.hierarchy
        leaves = tree.leaves(top) if tree is not None else [top]
        members = [m for leaf in leaves for m in leaf.members.values() if m.phase in (PodPhase.BOUND, PodPhase.WAITING) and m.node_row != NO_NODE]
        if pod not in members:
            members.append(pod)
        members.sort(key=lambda m: m.uid)
        for m in members:
            seen.add(m.uid)
        return VictimUnit(members, priority, COMPOSITE_RANK if is_composite(top) else PODGROUP_RANK, top.key).finish(True)

    def highest_all(self, st: PodGroupState) -> PodGroupState | None:
        """``getHighestAllAncestor``: the highest of ``st`` and its CompositePodGroup ancestors
        with ``disruptionMode: all`` (None: none has it)."""
        top = st if st.group is not None and st.group.policy.disruption_mode is DisruptionMode.ALL else None
        tree = self.handle.hierarchy
        key = st.key
        while tree is not None:
            parent = tree.parent_key(key)
            up = tree.composites.get(parent) if parent is not None else None
            if up is None or up.group is None:
                break
            if up.group.policy.disruption_mode is DisruptionMode.ALL:
                top = up
            key = parent  # type: ignore[assignment]
        return top

    def on_row(self, preemptor_priority: int, row: int) -> list[VictimUnit]:
        """Units on the node with priority lower than the preemptor's (§5 step 3a, §11.3)."""
        units = []
        seen: set[int] = set()
        for q in self.handle.snapshot.pods_on(row):
            if self.handle.victim_priority(q) >= preemptor_priority:
                continue
            unit = self.unit_for(q, seen)
            if unit is not None:
                units.append(unit)
        return units

    def below(self, priority: int) -> list[VictimUnit]:
        """Every unit in the cluster with priority lower than ``priority`` (§11.2 step 1)."""
        units = []
        seen: set[int] = set()
        for q in self.handle.snapshot.assigned_below(priority):
            unit = self.unit_for(q, seen)
            if unit is not None:
                units.append(unit)
        return units


class PDBTracker:
    """``filterPodsWithPDBViolation``: walk victims in importance order, spending budgets."""

    def __init__(self, pdbs: list[tuple[PodDisruptionBudget, int]]) -> None:
        self.allowed = {pdb.key: allowed for pdb, allowed in pdbs}
        self.pdbs = [pdb for pdb, _ in pdbs]

    def split(self, units: list[VictimUnit]) -> tuple[list[VictimUnit], list[VictimUnit]]:
        allowed = dict(self.allowed)
        violating: list[VictimUnit] = []
        non_violating: list[VictimUnit] = []
        for u in units:
            count = 0
            for pod in u.pods:
                if not pod.labels:
                    continue
                hit = False
                for pdb in self.pdbs:
                    if pdb.namespace != pod.namespace or pdb.selector is None or pdb.selector.empty:
                        continue
                    if not pdb.selector.matches(pod.labels):
                        continue
                    allowed[pdb.key] -= 1
                    if allowed[pdb.key] < 0:
                        hit = True
                if hit:
                    count += 1
            u.violating = count
            (violating if count else non_violating).append(u)
        return violating, non_violating


@contextmanager
def units_removed(snapshot: SnapshotView, units: list[VictimUnit]) -> Iterator[dict[int, int]]:
    """Remove every pod of ``units`` from the snapshot (a dry run); yields uid -> home row.

    On exit every pod is back on its node and each node's pod order is as it was.
    """
    removed = [(p, p.node_row) for u in units for p in u.pods]
    with snapshot.pod_order_saved({r for _, r in removed}):
        for p, _ in removed:
            snapshot.unassign(p, keep_devices=True)
        try:
            yield {p.uid: r for p, r in removed}
        finally:
            for p, r in removed:
                if p.node_row == NO_NODE:
                    snapshot.assign(p, r)


def reprieve(snapshot: SnapshotView, violating: list[VictimUnit], non_violating: list[VictimUnit], homes: dict[int, int], still_fits: Callable[[], bool]) -> tuple[list[VictimUnit], int]:
    """Put units back one at a time, PDB-violating ones first, each list in importance order; a
    unit the preemptor cannot do without is removed again and becomes a victim (§5 3f, §11.2 6).

    Returns the victims and the number of their pods that violate a PDB.
    """
    victims: list[VictimUnit] = []
    violations = 0
    for bucket, is_violating in ((violating, True), (non_violating, False)):
        for unit in bucket:
            for p in unit.pods:
                snapshot.assign(p, homes[p.uid])
            if still_fits():
                continue
            for p in unit.pods:
                snapshot.unassign(p, keep_devices=True)
            victims.append(unit)
            if is_violating:
                violations += unit.violating
    return victims, violations


def pdb_budgets(handle: Handle) -> list[tuple[PodDisruptionBudget, int]]:
    """Allowed disruptions per PDB (by key) from the matching running pods (INTERFACE rule 8)."""
    out = []
    for pdb in handle.pdbs():
        healthy = 0
        if pdb.selector is not None and not pdb.selector.empty:
            for q in handle.snapshot.assigned.values():
                if q.phase is PodPhase.BOUND and not q.terminating and q.namespace == pdb.namespace and pdb.selector.matches(q.labels):
                    healthy += 1
        out.append((pdb, allowed_disruptions(pdb, healthy)))
    return out


def allowed_disruptions(pdb: PodDisruptionBudget, healthy: int) -> int:
    """The disruption controller's ``disruptionsAllowed`` with expected = healthy pods."""
    expected = healthy

    def scaled(v: int | str) -> int:
        if isinstance(v, str):
            pct = int(v.rstrip("%"))
            return -((-pct * expected) // 100)  # round up, as GetScaledValueFromIntOrPercent(roundUp=true)
        return v

    if pdb.min_available is not None:
        desired = scaled(pdb.min_available)
    elif pdb.max_unavailable is not None:
        desired = expected - scaled(pdb.max_unavailable)
    else:
        desired = expected
    return max(0, healthy - max(desired, 0))
