"""PodGroupPodsCount (``framework/plugins/podgrouppodscount``, KEP-5732): a PlacementScore plugin
that favours placements holding more of the group's pods — members already scheduled plus the
pods the pass placed there — normalised by the largest count: ``100 × count / max``."""

from __future__ import annotations

from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import Placement, PlacementScorePlugin
from gangsim.scheduler.framework.types import PluginArgs, PodGroupState, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE


class PodGroupPodsCount(PlacementScorePlugin):
    NAME = names.POD_GROUP_PODS_COUNT

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        pass

    def score_placement(self, group: PodGroupState, placement: Placement, placed: list[tuple[PodInfo, int]]) -> int:
        return group.scheduled_count() + len(placed)

    def normalize_placement_scores(self, raw: list[int]) -> list[int]:
        """``MinScore + score × (MaxScore − MinScore) / maxCount``; a feasible placement always
        places a pod, so ``maxCount`` is never 0 here (upstream's error for it is unreachable)."""
        top = max(raw)
        return [s * MAX_NODE_SCORE // top for s in raw]
