"""Node-static Filter results per static signature.

Filters declaring ``NODE_STATIC`` depend only on node labels, taints and flags and on the pod's
spec, so their codes over every row can be kept per ``PodInfo.static_key`` while the node
table's ``static_generation`` (bumped when such node facts change or nodes come and go) holds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gangsim.scheduler.framework.handle import NodeTableView
from gangsim.scheduler.framework.types import PodInfo

Compute = Callable[[PodInfo, np.ndarray], tuple[np.ndarray, np.ndarray]]
MAX_ENTRIES = 4096


class StaticFilterCache:
    def __init__(self, nodes: NodeTableView, compute: Compute) -> None:
        self.nodes = nodes
        self.compute = compute  # (pod, rows) -> codes, failing plugin index of the static filters
        self._entries: dict[tuple, tuple[int, np.ndarray, np.ndarray]] = {}

    def codes(self, pod: PodInfo) -> tuple[np.ndarray, np.ndarray]:
        """Codes and first-failing-plugin index over *all* rows."""
        nodes = self.nodes
        hit = self._entries.get(pod.static_key)
        if hit is not None and hit[0] == nodes.static_generation and len(hit[1]) >= len(nodes.names):
            return hit[1], hit[2]
        codes, plugin = self.compute(pod, np.arange(len(nodes.names), dtype=np.int64))
        if len(self._entries) > MAX_ENTRIES:
            self._entries.clear()
        self._entries[pod.static_key] = (nodes.static_generation, codes, plugin)
        return codes, plugin
