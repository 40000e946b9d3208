"""The kubelets' own node accounting: what each node has, what its pods hold, which pods run
there. Independent of the scheduler's node table (the scheduler's view is its cache; this is
the nodes' own), it admits ``spec.nodeName`` pods and feeds the GPU timeline.

A pod holds its node's resources from its reservation at Permit or its bind until it ends;
pods are listed per node in that order.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangsim.api.objects import Node

GPU = "nvidia.com/gpu"


class Kubelets:
    def __init__(self) -> None:
        self._allocatable: dict[str, Mapping[str, int]] = {}
        self._requested: dict[str, dict[str, int]] = {}
        self._pods: dict[str, dict[int, object]] = {}  # node -> uid -> its pod, in arrival order
        self._node_of: dict[int, tuple[str, Mapping[str, int]]] = {}
        self.gpus_total = 0

    def add_node(self, node: Node) -> None:
        self._allocatable[node.name] = node.allocatable
        self._requested[node.name] = {}
        self._pods[node.name] = {}
        self.gpus_total += node.allocatable.get(GPU, 0)

    def update_node(self, node: Node) -> None:
        self.gpus_total += node.allocatable.get(GPU, 0) - self._allocatable[node.name].get(GPU, 0)
        self._allocatable[node.name] = node.allocatable

    def remove_node(self, name: str) -> None:
        self.gpus_total -= self._allocatable.pop(name).get(GPU, 0)
        del self._requested[name]
        for uid in self._pods.pop(name):
            del self._node_of[uid]  # its pods hold nothing any more (a node of that name may come back)

    def pods_on(self, name: str) -> list[object]:
        return list(self._pods[name].values())

    def fits(self, name: str, requests: Mapping[str, int]) -> bool:
        """Admission: every resource of the node (one pod slot included) still covers its
        holders plus this pod."""
        alloc = self._allocatable[name]
        requested = self._requested[name]
        for r in set(alloc) | set(requested) | set(requests) | {"pods"}:
            want = 1 if r == "pods" else requests.get(r, 0)
            if alloc.get(r, 0) - requested.get(r, 0) < want:
                return False
        return True

    def occupy(self, name: str, uid: int, pod: object, requests: Mapping[str, int]) -> None:
        if uid in self._node_of:
            return
        requested = self._requested[name]
        for r, amount in requests.items():
            requested[r] = requested.get(r, 0) + amount
        requested["pods"] = requested.get("pods", 0) + 1
        self._pods[name][uid] = pod
        self._node_of[uid] = (name, requests)

    def release(self, uid: int) -> None:
        hit = self._node_of.pop(uid, None)
        if hit is None:
            return
        name, requests = hit
        requested = self._requested[name]
        for r, amount in requests.items():
            requested[r] -= amount
        requested["pods"] -= 1
        del self._pods[name][uid]
