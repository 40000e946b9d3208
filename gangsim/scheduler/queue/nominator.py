"""Nominated pods per node (``nominator``): pods that preemption promised a node to.

Other pods' Filter treats pods nominated to a node with priority >= theirs as present
(SEMANTICS §2.3, §6). Kept per row in nomination order.
"""

from __future__ import annotations

from gangsim.scheduler.framework.types import NO_NODE, PodInfo


class Nominator:
    def __init__(self) -> None:
        # row -> uid -> pod, each row's pods in nomination order; empty when nobody is nominated
        # (``if nominator.by_row``: the hot "any nomination?" check, with no call and no list)
        self.by_row: dict[int, dict[int, PodInfo]] = {}

    def rows(self) -> list[int]:
        return list(self.by_row)

    def pods_for_row(self, row: int) -> list[PodInfo]:
        bucket = self.by_row.get(row)
        return list(bucket.values()) if bucket else []

    def nominate(self, pod: PodInfo, row: int) -> bool:
        """Set (or with NO_NODE clear) the pod's nominated node; True if it changed."""
        if pod.nominated_row == row:
            return False
        self.clear(pod)
        if row != NO_NODE:
            self.by_row.setdefault(row, {})[pod.uid] = pod
            pod.nominated_row = row
        return True

    def clear(self, pod: PodInfo) -> bool:
        row = pod.nominated_row
        if row == NO_NODE:
            return False
        bucket = self.by_row.get(row)
        if bucket is not None:
            bucket.pop(pod.uid, None)
            if not bucket:
                del self.by_row[row]
        pod.nominated_row = NO_NODE
        return True

    def forget_row(self, row: int) -> list[PodInfo]:
        """The node is gone: drop every nomination to it."""
        pods = self.pods_for_row(row)
        for p in pods:
            self.clear(p)
        return pods
