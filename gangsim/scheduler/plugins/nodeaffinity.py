"""NodeAffinity: ``nodeSelector`` and required node affinity (Filter), preferred terms (Score)."""

from __future__ import annotations

import numpy as np

from gangsim.api.selectors import node_matches_pod
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import ClusterEvent, Code, EnqueueExtensions, FilterPlugin, ScorePlugin
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import default_normalize_score

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"


class NodeAffinity(FilterPlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.NODE_AFFINITY
    NODE_STATIC = True
    SCORE_PER_ROW = True
    SCORE_NODE_STATIC = True  # the raw score reads the node's name and labels only (FastPath.static_scores)

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL)

    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        spec = pod.spec
        codes = np.zeros(len(rows), dtype=np.int8)
        if not spec.node_selector and (spec.affinity is None or spec.affinity.node_required is None):
            return codes  # PreFilter: Skip
        nodes = self.snapshot.nodes
        for i, row in enumerate(rows.tolist()):
            node = nodes.nodes[row]
            if not node_matches_pod(spec, node.labels, node.name):
                codes[i] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def reason_counts(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> dict[str, int]:
        return {ERR_REASON_POD: len(rows)}

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        return (ERR_REASON_POD,)

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return default_normalize_score(raw, reverse=False)

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray | None:
        """Raw score: the summed weights of the preferred terms the node matches."""
        aff = pod.spec.affinity
        if aff is None or not aff.node_preferred:
            return None
        return np.array([self.score_row(state, pod, row) for row in rows.tolist()], dtype=np.int64)

    def score_row(self, state: CycleState, pod: PodInfo, row: int) -> int | None:
        aff = pod.spec.affinity
        if aff is None or not aff.node_preferred:
            return None
        node = self.snapshot.nodes.nodes[row]
        return sum(p.weight for p in aff.node_preferred if p.term.matches(node.labels, node.name))
