"""Victim units and their importance order, shared by both preemption strategies.

A unit is a single pod or, for a PodGroup with ``disruptionMode: all``, every scheduled pod of
the group (SEMANTICS §11.1). Importance (most important first, §5 step 3d): priority desc; with
GenericWorkload on, type rank PodGroup(2) > Pod(1) and more pods first; earlier start first
(unstarted = newest); lower UID first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gangsim.api.objects import PodDisruptionBudget
from gangsim.scheduler.framework.types import NO_NODE, PodInfo

POD_RANK = 1
PODGROUP_RANK = 2
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
def units_removed(snapshot, units: list[VictimUnit]) -> Iterator[dict[int, int]]:
    """Remove every pod of ``units`` from the snapshot (a dry run); yields uid -> home row.

    On exit every pod is back on its node and each node's pod order is as it was.
    """
    removed = [(p, p.node_row) for u in units for p in u.pods]
    saved_order = {r: dict(snapshot.nodes.pods[r]) for r in {r for _, r in removed}}
    for p, _ in removed:
        snapshot.unassign(p)
    try:
        yield {p.uid: r for p, r in removed}
    finally:
        for p, r in removed:
            if p.node_row == NO_NODE:
                snapshot.assign(p, r)
        for r, order in saved_order.items():
            snapshot.nodes.pods[r] = order


def reprieve(snapshot, violating: list[VictimUnit], non_violating: list[VictimUnit], homes: dict[int, int], still_fits: Callable[[], bool]) -> tuple[list[VictimUnit], int]:
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
                snapshot.unassign(p)
            victims.append(unit)
            if is_violating:
                violations += unit.violating
    return victims, violations
