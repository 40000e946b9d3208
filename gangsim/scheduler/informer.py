"""The scheduler as the simulated world sees it: informer-style handlers for object changes,
the cycle loop, and what a replay reads at its end. ``gangsim.sim`` types against this Protocol
and never reaches into the scheduler's node table, queue or frameworks."""

from __future__ import annotations

from typing import Protocol

from gangsim.api.objects import CompositePodGroup, Node, Pod, PodDisruptionBudget, PodGroup
from gangsim.scheduler.framework.types import PodInfo


class Informer(Protocol):
    def has_profile(self, scheduler_name: str) -> bool:
        """Is there a scheduler profile for pods with this ``schedulerName``?"""
        ...

    def on_node_add(self, node: Node) -> None: ...

    def on_node_update(self, old: Node, new: Node) -> None: ...

    def on_node_delete(self, name: str) -> None:
        """After the node's pods were deleted (and its waiting pods rejected)."""

    def on_pod_add(self, pod: Pod, uid: int) -> PodInfo: ...

    def on_pod_assigned(self, pod: Pod, uid: int, node: str) -> PodInfo:
        """A pod bound without the scheduler (``spec.nodeName`` admitted by the kubelet)."""
        ...

    def on_pod_update(self, info: PodInfo, pod: Pod) -> None: ...

    def on_pod_delete(self, info: PodInfo) -> None: ...

    def reject_waiting_pod(self, info: PodInfo, message: str) -> None:
        """A pod waiting at Permit lost its node: unreserve it and requeue it."""

    def on_podgroup_add(self, pg: PodGroup) -> None: ...

    def on_podgroup_update(self, old: PodGroup | None, new: PodGroup) -> None: ...

    def on_podgroup_delete(self, key: str) -> None: ...

    def on_composite_pod_group_add(self, cpg: CompositePodGroup) -> None: ...

    def on_composite_pod_group_delete(self, key: str) -> None: ...

    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None: ...

    def on_pdb_delete(self, key: str) -> None: ...

    def run_cycles(self) -> None:
        """Drain the queue at the current instant (SCHEDULE phase)."""

    def is_settled(self) -> bool:
        """Would another round of retries change nothing?"""
        ...

    def counters(self) -> dict[str, int]:
        """Work counters for the event log (cycles, Filter rows evaluated and computed, batch hits)."""
        ...

    def check_invariants(self) -> None:
        """Raise if a node is over-committed."""
