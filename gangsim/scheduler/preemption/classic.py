"""Classic DefaultPreemption for one pod (SEMANTICS §5), step by step.

``Evaluator.preempt`` returns a ``PreemptionResult``: the node to nominate (or NO_NODE to clear,
or None to leave the nomination alone) and the status message ("preemption: ..." is added by
the caller as the PostFilter plugin does). Victims are actuated through the ``Preemptor`` hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gangsim.api.objects import PreemptionPolicy
from gangsim.scheduler.cache.snapshot import Snapshot
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis, PodInfo, reason_histogram
from gangsim.scheduler.preemption.units import PDBTracker, VictimUnit, reprieve, sort_by_importance, units_removed

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
_INT32_OFFSET = 2**31


@dataclass(slots=True)
class Candidate:
    row: int
    units: list[VictimUnit]
    num_pdb_violations: int

    @property
    def victims(self) -> list[PodInfo]:
        return [p for u in self.units for p in u.pods]


@dataclass(slots=True)
class PreemptionResult:
    nominated_row: int | None  # None: leave the nomination as it is; NO_NODE: clear it
    message: str = ""
    success: bool = False
    candidate: Candidate | None = None
    dry_run_statuses: dict[int, tuple[Code, tuple[str, ...]]] = field(default_factory=dict)


class Evaluator:
    """The classic per-node algorithm. ``units_on_row`` yields the victim units a node offers
    (single pods for ``pod``/``permit``; whole ``all`` groups too for ``gang``, §11.3)."""

    def __init__(
        self,
        framework: Framework,
        snapshot: Snapshot,
        *,
        units_on_row: Callable[[PodInfo, int], list[VictimUnit]],
        pdbs: Callable[[], list],
        rng: np.random.Generator | None,
        min_candidate_nodes_percentage: int = 10,
        min_candidate_nodes_absolute: int = 100,
    ) -> None:
        self.fw = framework
        self.snapshot = snapshot
        self.units_on_row = units_on_row
        self.pdbs = pdbs
        self.rng = rng
        self.min_pct = min_candidate_nodes_percentage
        self.min_abs = min_candidate_nodes_absolute

    # §5 step 0
    def eligible(self, pod: PodInfo, diagnosis: Diagnosis) -> str:
        if pod.preemption_policy is PreemptionPolicy.NEVER:
            return NOT_ELIGIBLE_NEVER
        row = pod.nominated_row
        if row != NO_NODE and self.snapshot.nodes.alive[row]:
            status = diagnosis.status_of(row)
            # rows absent from the diagnosis count as UnschedulableAndUnresolvable upstream
            if status is None or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return ""
            for q in self.snapshot.pods_on(row):
                if q.terminating and self.victim_priority(q) < pod.priority:
                    return NOT_ELIGIBLE_TERMINATING
        return ""

    victim_priority: Callable[[PodInfo], int] = staticmethod(lambda q: q.priority)  # type: ignore[assignment]

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_pct // 100
        n = max(n, self.min_abs)
        return min(n, num_nodes)

    def preempt(self, pod: PodInfo, diagnosis: Diagnosis) -> PreemptionResult:
        # 1) Ensure the preemptor is eligible to preempt other pods.
        reason = self.eligible(pod, diagnosis)
        if reason:
            return PreemptionResult(None, reason)
        num_all = self.snapshot.nodes.num_nodes
        # 2) Find all preemption candidates: only nodes that failed with plain Unschedulable.
        potential = [int(r) for r, c in zip(diagnosis.rows.tolist(), diagnosis.codes.tolist()) if c == Code.UNSCHEDULABLE]
        potential.sort(key=lambda r: int(self.snapshot.nodes.position[r]))  # node-list order
        if not potential:
            msg = f"0/{num_all} nodes are available: {reason_histogram([], num_all, NOT_HELPFUL)}."
            return PreemptionResult(NO_NODE, msg)
        candidates, statuses = self.dry_run(pod, potential)
        if not candidates:
            hist = reason_histogram([rs for _, rs in statuses.values()], num_all - len(statuses), NOT_HELPFUL)
            return PreemptionResult(NO_NODE, f"0/{num_all} nodes are available: {hist}.", dry_run_statuses=statuses)
        # 3) Find the best candidate.
        best = self.pick_one(candidates)
        return PreemptionResult(best.row, "", True, best)

    def dry_run(self, pod: PodInfo, potential: list[int]) -> tuple[list[Candidate], dict[int, tuple[Code, tuple[str, ...]]]]:
        """§5 step 2: visit nodes from an offset; stop once enough candidates exist."""
        n = len(potential)
        offset = int(self.rng.integers(n)) if self.rng is not None else 0
        wanted = self.num_candidates(n)
        # nodes hosting no lower-priority pod offer no victims: known from the priority index
        # without a dry run (on a cluster of equals that is every node)
        hosts = {p.node_row for p in self.snapshot.assigned_below(pod.priority)}
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
                pdbs = PDBTracker(self.pdbs())
            cand, status = self.select_victims_on_node(pod, row, pdbs)
            if cand is not None:
                (non_violating if cand.num_pdb_violations == 0 else violating).append(cand)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
            else:
                statuses[row] = status
        return non_violating + violating, statuses

    def select_victims_on_node(self, pod: PodInfo, row: int, pdbs: PDBTracker) -> tuple[Candidate | None, tuple[Code, tuple[str, ...]]]:
        """§5 step 3: remove every lower-priority unit, check the fit, reprieve in order."""
        units = self.units_on_row(pod, row)
        if not units:
            return None, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
        snap = self.snapshot
        with units_removed(snap, units) as homes:
            code, reasons, _ = self.fw.filter_status_on(CycleState(), pod, row)
            if code != Code.SUCCESS:
                return None, (code, reasons)
            violating, non_violating = pdbs.split(sort_by_importance(units))
            victims, violations = reprieve(snap, violating, non_violating, homes, lambda: self.fw.fits_on(CycleState(), pod, row))
        if not victims:
            return None, (Code.ERROR, (f'expected at least one victim pod on node "{snap.nodes.names[row]}"',))
        if violating and non_violating:
            victims = sort_by_importance(victims)
        return Candidate(row, victims, violations), (Code.SUCCESS, ())

    def pick_one(self, candidates: list[Candidate]) -> Candidate:
        """``pickOneNodeForPreemption``: six lexicographic criteria, ties to the first candidate."""
        if len(candidates) == 1:
            return candidates[0]
        prio = self.victim_priority

        def earliest_start_of_top(c: Candidate) -> int:
            pods = c.victims
            top = max(prio(p) for p in pods)
            starts = [p.start_ms if p.start_ms is not None else (1 << 62) for p in pods if prio(p) == top]
            return min(starts)

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
            best = max(scores)
            remaining = [c for c, s in zip(remaining, scores) if s == best]
            if len(remaining) == 1:
                return remaining[0]
        return remaining[0]
