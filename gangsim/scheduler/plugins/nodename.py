"""NodeName: a pod with ``spec.nodeName`` fits only that node."""

from __future__ import annotations

import numpy as np

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import ClusterEvent, Code, EnqueueExtensions, FilterPlugin
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_NAME
    NODE_STATIC = True

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD,)

    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        codes = np.zeros(len(rows), dtype=np.int8)
        want = pod.spec.node_name
        if not want:
            return codes
        row = self.snapshot.nodes.row_of.get(want, -1)
        codes[rows != row] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def reason_counts(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> dict[str, int]:
        return {ERR_REASON: len(rows)}

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        return (ERR_REASON,)
