"""NodeUnschedulable: ``spec.unschedulable`` nodes reject pods that do not tolerate the
``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

import numpy as np

from gangsim.api.objects import Taint
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import ClusterEvent, Code, EnqueueExtensions, FilterPlugin
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_UNSCHEDULABLE
    NODE_STATIC = True

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_SCHEDULABLE)

    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        codes = np.zeros(len(rows), dtype=np.int8)
        if any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.spec.tolerations):
            return codes
        codes[self.snapshot.nodes.unschedulable[rows]] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def reason_counts(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> dict[str, int]:
        return {ERR_REASON_UNSCHEDULABLE: len(rows)}

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        return (ERR_REASON_UNSCHEDULABLE,)
