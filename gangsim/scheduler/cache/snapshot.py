"""The cluster as the plugins see it during a cycle.

The simulator is single-threaded and a cycle takes no simulated time, so the live cache *is* the
cycle's snapshot: the PodGroup cycle assumes pods tentatively and reverts them, and preemption dry
runs remove victims and put them back (``preemption.units.units_removed``), as kube clones a
NodeInfo. Every change, tentative or not, bumps the row's generation so that per-signature
caches recompute exactly the rows that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gangsim.scheduler.cache.node_table import NodeTable
from gangsim.scheduler.framework.types import NO_NODE, PodInfo


class Snapshot:
    """Implements ``framework.handle.SnapshotView``. ``victim_priority`` gives a pod's priority as
    a preemption victim (a group member's is its group's), which the priority index keys on."""

    def __init__(self, nodes: NodeTable, victim_priority: Callable[[PodInfo], int]) -> None:
        self.nodes = nodes
        # assigned pods that carry any pod (anti-)affinity term: InterPodAffinity needs them only
        self.affinity_pods: dict[int, PodInfo] = {}
        self.required_anti_affinity_pods: dict[int, PodInfo] = {}
        self.assigned: dict[int, PodInfo] = {}
        # assigned pods by their priority as preemption victims (a group member's is its group's):
        # workload-aware preemption looks only at the buckets below the preemptor's priority
        self.victim_priority = victim_priority
        self.by_victim_priority: dict[int, dict[int, PodInfo]] = {}
        self._indexed_at: dict[int, int] = {}

    def _index(self, pod: PodInfo) -> None:
        prio = self.victim_priority(pod)
        self._indexed_at[pod.uid] = prio
        self.by_victim_priority.setdefault(prio, {})[pod.uid] = pod

    def _unindex(self, pod: PodInfo) -> None:
        prio = self._indexed_at.pop(pod.uid, None)
        if prio is not None:
            bucket = self.by_victim_priority[prio]
            del bucket[pod.uid]
            if not bucket:
                del self.by_victim_priority[prio]

    def reindex(self, pods: Iterator[PodInfo] | list[PodInfo]) -> None:
        """The victim priority of these assigned pods changed (their PodGroup came or went)."""
        for pod in pods:
            if pod.uid in self._indexed_at:
                self._unindex(pod)
                self._index(pod)

    def has_assigned_below(self, priority: int) -> bool:
        """``assigned_below(priority)`` is not empty (without listing it)."""
        by_priority = self.by_victim_priority  # (empty buckets are deleted)
        return bool(by_priority) and min(by_priority) < priority

    def assigned_below(self, priority: int) -> list[PodInfo]:
        """Assigned pods whose victim priority is lower than ``priority``, by uid."""
        out: list[PodInfo] = []
        for prio, bucket in self.by_victim_priority.items():
            if prio < priority:
                out.extend(bucket.values())
        out.sort(key=lambda p: p.uid)
        return out

    # ---- assignment (Reserve / bind / unreserve / delete) ----------------------------------------
    def assign(self, pod: PodInfo, row: int) -> None:
        """Account ``pod`` on ``row`` and give it devices: the ones it kept when a dry run
        removed it (``unassign(keep_devices=True)``), else ``api.devices.pick``'s."""
        t = self.nodes
        kept = pod.devices if pod.devices and pod.devices_row == row else None
        pod.devices, pod.devices_row = t.devices.hold(row, pod.demand, kept), row
        t.assign(row, pod.uid, pod, pod.usage_delta)  # type: ignore[arg-type]  # (``PodInfos`` sets it)
        pod.node_row = row
        self.assigned[pod.uid] = pod
        self._index(pod)
        aff = pod.spec.affinity
        if aff is not None and aff.has_pod_affinity:
            self.affinity_pods[pod.uid] = pod
            if aff.pod_anti_affinity_required:
                self.required_anti_affinity_pods[pod.uid] = pod

    def unassign(self, pod: PodInfo, *, keep_devices: bool = False) -> None:
        """Take ``pod`` off its row; ``keep_devices``: a dry run that puts it back on the same
        devices (preemption's victim removal), else it forgets them."""
        row = pod.node_row
        t = self.nodes
        t.devices.give(row, pod.demand, pod.devices)
        if not keep_devices:
            pod.devices, pod.devices_row = (), NO_NODE
        t.unassign(row, pod.uid, pod.usage_delta)  # type: ignore[arg-type]
        pod.node_row = -1
        self.assigned.pop(pod.uid, None)
        self._unindex(pod)
        self.affinity_pods.pop(pod.uid, None)
        self.required_anti_affinity_pods.pop(pod.uid, None)

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

    @contextmanager
    def pod_order_saved(self, rows: set[int]) -> Iterator[None]:
        """On exit each of ``rows`` lists its pods in the order it had on entry (a dry run that
        removes and puts back pods must not reorder them: the order is every tie-break's)."""
        saved = {r: dict(self.nodes.pods[r]) for r in rows}
        try:
            yield
        finally:
            for r, order in saved.items():
                self.nodes.pods[r] = order

    def pods_on(self, row: int) -> list[PodInfo]:
        return list(self.nodes.pods[row].values())  # type: ignore[arg-type]
