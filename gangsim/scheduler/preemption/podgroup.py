"""Workload-aware preemption (KEP-5710): the PodGroupPostFilter of DefaultPreemption, run once
per failed PodGroup cycle (SEMANTICS §11.2), step by step.

The whole cluster is one domain. Every lower-priority unit (a pod, or a whole ``disruptionMode:
all`` group) is removed, the group algorithm places as many queued pods as it can, then units
are put back in importance order (PDB-violating ones first) as long as every proposed placement
still passes Filter. The rest are the victims.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gangsim.api.objects import DisruptionMode, PreemptionPolicy
from gangsim.scheduler.cache.podgroup_state import PodGroupState
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, PodPhase
from gangsim.scheduler.preemption.units import PDBTracker, VictimUnit, reprieve, sort_by_importance, units_removed

if TYPE_CHECKING:
    from gangsim.scheduler.scheduler import Scheduler

TOPOLOGY_REFUSAL = "pod group preemption: not supported with topology constraints"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ONGOING = "ongoing preemption on nominated nodes"
NO_VICTIMS = "No preemption victims found for incoming preemptor"


@dataclass(slots=True)
class PodGroupPreemption:
    status: Status  # SUCCESS (waiting on preemption) or a rejection
    victims: list[VictimUnit] = field(default_factory=list)
    nominations: dict[int, int] = field(default_factory=dict)  # preemptor pod uid -> row (NO_NODE clears)
    num_pdb_violations: int = 0
    placed: list[tuple[PodInfo, int]] = field(default_factory=list)


def preempt_podgroup(sched: "Scheduler", fw: Framework, st: PodGroupState, pods: list[PodInfo]) -> PodGroupPreemption:
    group = st.group
    priority = group.priority if group else 0
    # 0) Groups with topology constraints never preempt.
    if group is not None and group.policy.topology_keys:
        return PodGroupPreemption(Status(Code.UNSCHEDULABLE, (TOPOLOGY_REFUSAL,)))
    #    Eligibility: the group's preemption policy, then ongoing preemption on nominated nodes.
    policy = group.policy.preemption_policy if group is not None and group.policy.preemption_policy is not None else None
    if policy is None:
        policy = pods[0].preemption_policy if pods else PreemptionPolicy.PREEMPT_LOWER_PRIORITY
    if policy is PreemptionPolicy.NEVER:
        return PodGroupPreemption(Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,)))
    nominated_rows = {p.nominated_row for p in pods if p.nominated_row != NO_NODE}
    for row in sorted(nominated_rows):
        if not sched.nodes.alive[row]:
            continue
        if any(q.terminating and sched.victim_priority(q) < priority for q in sched.snapshot.pods_on(row)):
            keep = {p.uid: p.nominated_row for p in pods}
            return PodGroupPreemption(Status(Code.SUCCESS, (ONGOING,)), nominations=keep)
    # 1) Potential victims: every unit of strictly lower priority, anywhere in the cluster.
    units = sched.victim_units(priority)
    if not units:
        return PodGroupPreemption(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,)))
    snap = sched.snapshot
    budgets = sched.pdb_budgets()  # from the cluster as it is, before anything is removed
    with units_removed(snap, units) as homes:
        # 2)+3) On the cleaned cluster, run the group algorithm again (no PostFilter).
        from gangsim.scheduler.schedule_podgroup import run_algorithm

        result = run_algorithm(sched, fw, st, pods, scheduled0=st.scheduled_count())
        if result.status is not None:
            return PodGroupPreemption(result.status)
        placed = result.placed
        # 4)+5) Importance order; PDB-violating units first.
        violating, non_violating = PDBTracker(budgets).split(sort_by_importance(units))
        # 6) In-place reprieve, re-filtering every proposed placement in order.
        victims, violations = reprieve(snap, violating, non_violating, homes, lambda: placements_still_fit(fw, snap, placed))
    # 7) Victims in importance order; nominations for the placed preemptor pods, cleared for the rest.
    victims = sort_by_importance(victims)
    nominations = {p.uid: NO_NODE for p in pods}
    for p, row in placed:
        nominations[p.uid] = row
    return PodGroupPreemption(Status(Code.SUCCESS, ()), victims, nominations, violations, placed)


def placements_still_fit(fw: Framework, snap, placed: list[tuple[PodInfo, int]]) -> bool:
    """Filter every proposed (pod, node) in order, assuming the earlier ones (Reserve)."""
    assumed: list[PodInfo] = []
    try:
        for pod, row in placed:
            if not fw.fits_on(CycleState(), pod, row):
                return False
            snap.assign(pod, row)
            assumed.append(pod)
        return True
    finally:
        for pod in reversed(assumed):
            snap.unassign(pod)


def unit_for(sched: "Scheduler", pod: PodInfo, seen: set[int]) -> VictimUnit | None:
    """The victim unit ``pod`` belongs to (None if already part of a unit in ``seen``)."""
    if pod.uid in seen:
        return None
    st = sched.group_states.get(pod.group_key) if pod.group_key and sched.policy.generic_workload else None
    group = st.group if st is not None else None
    if group is None:
        seen.add(pod.uid)
        return VictimUnit([pod], pod.priority).finish(sched.policy.generic_workload)
    from gangsim.scheduler.preemption.units import PODGROUP_RANK

    if group.policy.disruption_mode is DisruptionMode.ALL:
        members = [m for m in st.members.values() if m.phase in (PodPhase.BOUND, PodPhase.WAITING) and m.node_row != NO_NODE]
        if pod not in members:
            members.append(pod)
        members.sort(key=lambda m: m.uid)
        for m in members:
            seen.add(m.uid)
        return VictimUnit(members, group.priority, PODGROUP_RANK, st.key).finish(True)
    seen.add(pod.uid)
    return VictimUnit([pod], group.priority, PODGROUP_RANK, st.key).finish(True)
