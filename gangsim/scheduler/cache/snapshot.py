"""The cluster as the plugins see it during a cycle.

The simulator is single-threaded and a cycle takes no simulated time, so the live cache *is* the
cycle's snapshot: the PodGroup cycle assumes pods tentatively and reverts them, and preemption dry
runs remove victims from a row and put them back (``without_pods``), exactly as kube clones a
NodeInfo. Every change, tentative or not, bumps the row's generation so that per-signature
caches recompute exactly the rows that changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gangsim.scheduler.cache.node_table import NodeTable
from gangsim.scheduler.framework.types import PodInfo


class Snapshot:
    def __init__(self, nodes: NodeTable) -> None:
        self.nodes = nodes
        # assigned pods that carry any pod (anti-)affinity term: InterPodAffinity needs them only
        self.affinity_pods: dict[int, PodInfo] = {}
        self.required_anti_affinity_pods: dict[int, PodInfo] = {}
        self.assigned: dict[int, PodInfo] = {}

    # ---- assignment (Reserve / bind / unreserve / delete) ----------------------------------------
    def assign(self, pod: PodInfo, row: int) -> None:
        t = self.nodes
        t.assign(row, pod.uid, pod, pod.demand, pod.spec.nonzero_milli_cpu, pod.spec.nonzero_memory)
        pod.node_row = row
        self.assigned[pod.uid] = pod
        aff = pod.spec.affinity
        if aff is not None and aff.has_pod_affinity:
            self.affinity_pods[pod.uid] = pod
            if aff.pod_anti_affinity_required:
                self.required_anti_affinity_pods[pod.uid] = pod

    def unassign(self, pod: PodInfo) -> None:
        row = pod.node_row
        t = self.nodes
        t.unassign(row, pod.uid, pod.demand, pod.spec.nonzero_milli_cpu, pod.spec.nonzero_memory)
        pod.node_row = -1
        self.assigned.pop(pod.uid, None)
        self.affinity_pods.pop(pod.uid, None)
        self.required_anti_affinity_pods.pop(pod.uid, None)

    @contextmanager
    def without_pods(self, pods: list[PodInfo]) -> Iterator[None]:
        """Temporarily remove ``pods`` (a preemption dry run); restored on exit."""
        rows = [p.node_row for p in pods]
        saved_order = {r: dict(self.nodes.pods[r]) for r in set(rows)}
        for p in pods:
            self.unassign(p)
        try:
            yield
        finally:
            for p, r in zip(pods, rows):
                self.assign(p, r)
            for r, order in saved_order.items():
                self.nodes.pods[r] = order  # keep the node's pod order as it was

    @contextmanager
    def with_pods(self, placements: list[tuple[PodInfo, int]]) -> Iterator[None]:
        """Temporarily add pods to rows (nominated pods in Filter, tentative placements)."""
        saved = [(p, p.node_row) for p, _ in placements]
        for p, row in placements:
            self.assign(p, row)
        try:
            yield
        finally:
            for p, old in saved:
                self.unassign(p)
                p.node_row = old

    def pods_on(self, row: int) -> list[PodInfo]:
        return list(self.nodes.pods[row].values())  # type: ignore[arg-type]
