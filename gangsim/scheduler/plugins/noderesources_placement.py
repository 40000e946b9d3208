"""NodeResourcesFit's PlacementScore (SEMANTICS §8.8 item 5): how full a placement is once the
group's pods are in it — per scored resource of the profile's ``scoringStrategy``,
``Σ requested × 100 / Σ allocatable`` over the placement's nodes (MostAllocated: fuller wins),
weighted as the strategy weights resources. Extended resources no pod of the group requests are
left out, as the node score bypasses them. Already 0..100: normalising keeps the raw scores.

SEMANTICS' worked example (2-CPU nodes, 3 one-CPU pods): rack1 (2 empty nodes) 3/4 = 75,
rack2 (3 nodes, 2 CPU used) 5/6 = 83, rack3 (3 nodes, 1 CPU used) 4/6 = 66 → rack2.

Upstream (checked 2026-12-03 against the newest stored kubernetes/kubernetes files): the score
exists as its own PlacementScore plugin, ``PlacementBinPacking``
(``pkg/scheduler/framework/plugins/noderesources/placement_bin_packing.go``,
``PlacementBinPacking.ScorePlacement``; an older revision is ``placement_score.go``): the
proposed assignments' requests plus every placement node's allocated resources, over the
placement nodes' allocatable, scored by the ``scoringStrategy`` of its own
``PlacementBinPackingArgs`` (LeastAllocated, MostAllocated or RequestedToCapacityRatio;
``placement_bin_packing_test.go``: MostAllocated cpu 3/10 and memory 2/10 → 25; a scalar resource
counts only when a pod of the group requests it). gangsim computes the MostAllocated form with
the profile's NodeResourcesFit resources and weights, under NodeResourcesFit's name, as
SEMANTICS §8.8 item 5 says. What the stored snapshots do not show: the defaults of
``PlacementBinPackingArgs`` and whether (and with which weight) the plugin is in the default
profile under the gate (``default_plugins.go`` / ``names.go`` are stored only in older
revisions), so gangsim keeps SEMANTICS' behaviour and name.
"""

from __future__ import annotations

from gangsim.api.quantity import is_extended_resource
from gangsim.scheduler.framework.interface import Placement
from gangsim.scheduler.framework.types import PodGroupState, PodInfo
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE


class FitPlacementScore:
    """Mixed into NodeResourcesFit (which has ``snapshot`` and ``strategy``)."""

    def score_placement(self, group: PodGroupState, placement: Placement, placed: list[tuple[PodInfo, int]]) -> int:
        t = self.snapshot.nodes  # type: ignore[attr-defined]
        col_of = t.resources.col
        total = weights = 0
        for name, weight in self.strategy.resources:  # type: ignore[attr-defined]
            col = col_of.get(name, -1)
            if col < 0:
                continue
            demand = sum(int(p.demand[col]) for p, _ in placed)
            if demand == 0 and is_extended_resource(name):
                continue
            alloc = int(t.allocatable[placement.rows, col].sum())
            if alloc == 0:
                continue
            requested = int(t.requested[placement.rows, col].sum()) + demand
            total += min(requested, alloc) * MAX_NODE_SCORE // alloc * weight
            weights += weight
        return total // weights if weights else 0

    def normalize_placement_scores(self, raw: list[int]) -> list[int]:
        return raw
