"""TaintToleration: NoSchedule/NoExecute taints must be tolerated (Filter); untolerated
PreferNoSchedule taints lower the score (reverse-normalised count)."""

from __future__ import annotations

import numpy as np

from gangsim.api.objects import first_untolerated_taint, tolerated
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import ClusterEvent, Code, EnqueueExtensions, FilterPlugin, ScorePlugin
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import default_normalize_score

# ``TaintToleration.Filter`` (tainttoleration/taint_toleration.go) since kubernetes#134740 (v1.35,
# cherry-picked to 1.34): taint keys and values are no longer put in the status
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


class TaintToleration(FilterPlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.TAINT_TOLERATION
    NODE_STATIC = True
    SCORE_PER_ROW = True  # a row's raw score depends only on that row and the pod
    SCORE_NODE_STATIC = True  # ... and on the node's taints only: a bind never changes it (FastPath.static_scores)

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT)

    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        nodes = self.snapshot.nodes
        tol = pod.spec.tolerations
        codes = np.zeros(len(rows), dtype=np.int8)
        for i, row in enumerate(rows.tolist()):
            taints = nodes.nodes[row].taints
            if taints and first_untolerated_taint(taints, tol) is not None:
                codes[i] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        taint = first_untolerated_taint(self.snapshot.nodes.nodes[row].taints, pod.spec.tolerations)
        return (ERR_REASON_UNTOLERATED,) if taint else ()

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        return default_normalize_score(raw, reverse=True)

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        """Raw score: the number of untolerated PreferNoSchedule taints."""
        nodes = self.snapshot.nodes.nodes
        prefer_tols = _prefer_tolerations(pod)
        return np.array([_untolerated_prefer(nodes[row].taints, prefer_tols) for row in rows.tolist()], dtype=np.int64)

    def score_row(self, state: CycleState, pod: PodInfo, row: int) -> int:
        return _untolerated_prefer(self.snapshot.nodes.nodes[row].taints, _prefer_tolerations(pod))


def _prefer_tolerations(pod: PodInfo) -> tuple:
    return tuple(t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule"))


def _untolerated_prefer(taints: tuple, prefer_tols: tuple) -> int:
    n = 0
    for taint in taints:
        if taint.effect == "PreferNoSchedule" and not tolerated(taint, prefer_tols):
            n += 1
    return n
