"""The kubelets' own node accounting: what each node has, what its pods hold, which pods run
there. Independent of the scheduler's node table (the scheduler's view is its cache; this is
the nodes' own), it admits ``spec.nodeName`` pods and feeds the GPU timeline.

A pod holds its node's resources from its reservation at Permit or its bind until it ends;
pods are listed per node in that order. What a node's pods request is summed when a pod asks to
be admitted (rare: ``spec.nodeName`` pods), and the per-node index is built only when first
needed, so that binding and ending a pod stay two dict operations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from gangsim.api.objects import Node

GPU = "nvidia.com/gpu"


class Holder(Protocol):
    """A pod as a kubelet holds it: what it requests."""

    @property
    def requests(self) -> Mapping[str, int]: ...


class Kubelets:
    def __init__(self) -> None:
        self._allocatable: dict[str, Mapping[str, int]] = {}
        self._node_of: dict[int, str] = {}  # uid -> node of each pod holding resources
        self._pod_of: dict[int, Holder] = {}  # uid -> pod, in the order they came
        # node -> uid -> pod, built the first time a node's pods are asked for (admission, node
        # deletion) and kept up to date from then on: most replays never need it
        self._index: dict[str, dict[int, Holder]] | None = None
        self.gpus_total = 0

    def _by_node(self) -> dict[str, dict[int, Holder]]:
        if self._index is None:
            index: dict[str, dict[int, Holder]] = {name: {} for name in self._allocatable}
            for uid, pod in self._pod_of.items():
                index[self._node_of[uid]][uid] = pod
            self._index = index
        return self._index

    def add_node(self, node: Node) -> None:
        self._allocatable[node.name] = node.allocatable
        if self._index is not None:
            self._index[node.name] = {}
        self.gpus_total += node.allocatable.get(GPU, 0)

    def update_node(self, node: Node) -> None:
        self.gpus_total += node.allocatable.get(GPU, 0) - self._allocatable[node.name].get(GPU, 0)
        self._allocatable[node.name] = node.allocatable

    def remove_node(self, name: str) -> None:
        held = self._by_node().pop(name)
        self.gpus_total -= self._allocatable.pop(name).get(GPU, 0)
        for uid in held:
            del self._node_of[uid]  # its pods hold nothing any more (a node of that name may come back)
            del self._pod_of[uid]

    def pods_on(self, name: str) -> list[Holder]:
        return list(self._by_node()[name].values())

    def fits(self, name: str, requests: Mapping[str, int]) -> bool:
        """Admission: every resource of the node (one pod slot included) still covers its
        holders plus this pod."""
        alloc = self._allocatable[name]
        held = self._by_node()[name]
        requested: dict[str, int] = {"pods": len(held)}
        for pod in held.values():
            for r, amount in pod.requests.items():
                requested[r] = requested.get(r, 0) + amount
        for r in set(alloc) | set(requested) | set(requests) | {"pods"}:
            want = 1 if r == "pods" else requests.get(r, 0)
            if alloc.get(r, 0) - requested.get(r, 0) < want:
                return False
        return True

    def occupy(self, name: str, uid: int, pod: Holder) -> None:
        if uid in self._node_of:
            return
        self._node_of[uid] = name
        self._pod_of[uid] = pod
        if self._index is not None:
            self._index[name][uid] = pod

    def release(self, uid: int) -> None:
        name = self._node_of.pop(uid, None)
        if name is None:
            return
        del self._pod_of[uid]
        if self._index is not None:
            del self._index[name][uid]
