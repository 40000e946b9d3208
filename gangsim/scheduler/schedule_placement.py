"""The placement loop of the PodGroup cycle (KEP-5732, SEMANTICS §8.8), used when the
TopologyAwareWorkloadScheduling gate gives a profile a PlacementGenerate plugin (kube's
``podGroupSchedulingPlacementAlgorithm`` in ``algorithm_podgroup.go``).

1. PlacementGenerate plugins list the candidate placements (TopologyPlacementGenerator: one per
   domain of the group's topology key; without a constraint one placement, every node).
2. The nominated placement first (SEMANTICS §8.8 step 2; newest upstream:
   ``podGroupSchedulingPlacementAlgorithm`` and ``nominatedPlacement`` in
   ``pkg/scheduler/algorithm_podgroup.go``): the one placement holding any of the queued pods'
   nominated nodes (none when two do) is evaluated first and, if feasible with a pod placed,
   taken without evaluating the others. Feasible with no pod placed, it is not a candidate; if
   no other placement is feasible the fit error says ``nominated placement is feasible but no
   pending pod was scheduled``.
3. Each placement runs the default pass (§8.3) with Filter restricted to its nodes
   (``Framework.placement``); tentative placements are reverted after each.
4. None feasible: Unschedulable ``0/N placements are available, first placement status: …``
   with the first evaluated placement's per-pod results (``newPodGroupPlacementFitError``).
5. Several feasible: PlacementScore plugins (weighted, each normalised to 0..100) pick one;
   one feasible placement is taken without scoring (``findBestPodGroupPlacement``). Equal totals
   go to the first placement in the generator's order (upstream: a random number), or a seeded
   random choice with ``--seed``.

An Error of any placement ends the loop with that error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gangsim.scheduler.framework.interface import Code, Placement, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, GroupResult, PodGroupState, PodInfo

MSG_PLACEMENTS = "0/{} placements are available, first placement status: {}"
# upstream's loop has no result to report when the generator returns no placement (every node
# lacks the topology key); gangsim says so in the same form
NO_PLACEMENT = "no node has the topology key"
# podGroupSchedulingPlacementAlgorithm (algorithm_podgroup.go), when the nominated placement was
# feasible only through members scheduled before and no other placement is feasible
NOMINATED_NOTHING = "nominated placement is feasible but no pending pod was scheduled"

Pass = Callable[..., GroupResult]  # (fw, group, pods, *, messages) -> result: ``schedule_podgroup.default_pass``


def nominated_first(placements: list[Placement], pods: list[PodInfo]) -> tuple[list[Placement], bool]:
    """``nominatedPlacement``: the placements with the one holding a nominated node of ``pods``
    first (and True), or as they are (False) when no pod is nominated or nominated nodes lie in
    more than one placement (or in none)."""
    rows = {p.nominated_row for p in pods if p.nominated_row != NO_NODE}
    if not rows:
        return placements, False
    holding = [i for i, pl in enumerate(placements) if not rows.isdisjoint(pl.rows.tolist())]
    if len(holding) != 1:
        return placements, False
    i = holding[0]
    return [placements[i]] + placements[:i] + placements[i + 1 :], True


def generate_placements(fw: Framework, st: PodGroupState, pods: list[PodInfo]) -> tuple[list[Placement], Status | None]:
    """``RunPlacementGeneratePlugins`` on the parent placement: inside a CompositePodGroup's
    placement (``fw.placement`` set) a child's candidates keep only that placement's nodes."""
    placements: list[Placement] = []
    for plugin in fw.placement_generate_plugins:
        generated, status = plugin.generate_placements(st, pods)
        if status is not None:
            return [], status
        placements = generated
    parent = fw.placement
    if parent is not None:
        inside = [Placement(p.name, p.rows[np.isin(p.rows, parent.rows)]) for p in placements]
        placements = [p for p in inside if len(p.rows)]
    return placements, None


def run_placement_algorithm(fw: Framework, st: PodGroupState, pods: list[PodInfo], default_pass: Pass, *, nominated_fast_path: bool = True) -> GroupResult:
    """``nominated_fast_path`` False for a PodGroup inside a CompositePodGroup: upstream limits
    the nominated placement to standalone PodGroups (``podGroupSchedulingPlacementAlgorithm``)."""
    placements, status = generate_placements(fw, st, pods)
    if status is not None:
        return GroupResult(status)
    if not placements:
        return GroupResult(Status(Code.UNSCHEDULABLE, (MSG_PLACEMENTS.format(0, NO_PLACEMENT),)))
    ordered, nominated = nominated_first(placements, pods) if nominated_fast_path else (placements, False)
    first: GroupResult | None = None
    feasible: list[tuple[Placement, GroupResult]] = []
    saved = fw.placement
    try:
        for i, placement in enumerate(ordered):
            fw.placement = placement
            result = default_pass(fw, st, pods, messages=first is None)  # only the first infeasible one is reported
            if result.status is not None and result.status.code == Code.ERROR:
                return result
            if first is None:
                first = result
            fw.placement_evaluations[result.status is None] += 1
            if result.status is None and (result.placed or not (nominated and i == 0)):
                feasible.append((placement, result))
                if nominated and i == 0:
                    break  # the nominated placement is feasible: the others are not evaluated
    finally:
        fw.placement = saved
    fw.placements_generated += len(placements)
    if not feasible:
        assert first is not None
        s = first.status or Status(Code.UNSCHEDULABLE, (NOMINATED_NOTHING,))
        first.status = Status(Code.UNSCHEDULABLE, (MSG_PLACEMENTS.format(len(placements), s.message),), s.plugin)
        return first
    return feasible[best_placement(fw, st, feasible)][1]


def best_placement(fw: Framework, st: PodGroupState, feasible: list[tuple[Placement, GroupResult]]) -> int:
    """``findBestPlacement``: Σ weight × normalised score per placement; the index of the best."""
    if len(feasible) == 1:
        return 0
    totals = [0] * len(feasible)
    for plugin, weight in fw.placement_scorers:
        raw = [plugin.score_placement(st, placement, result.placed) for placement, result in feasible]
        for i, score in enumerate(plugin.normalize_placement_scores(raw)):
            totals[i] += score * weight
    top = max(totals)
    ties = [i for i, t in enumerate(totals) if t == top]
    if len(ties) > 1 and fw.rng is not None:
        return ties[int(fw.rng.integers(len(ties)))]
    return ties[0]
