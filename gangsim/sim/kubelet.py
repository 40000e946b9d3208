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

from gangsim.api.devices import GPU, give, pick, request_of, share_per_device, take
from gangsim.api.objects import Node


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
        # each node's GPUs (``api.devices``): free share per device, and the ids each pod holds
        self._share_of: dict[str, tuple[str, int]] = {}  # node -> (its share resource, units per GPU)
        self._free: dict[str, list[int]] = {}
        self._held: dict[int, tuple[int, ...]] = {}

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
        self._set_devices(node, ())

    def update_node(self, node: Node) -> None:
        self.gpus_total += node.allocatable.get(GPU, 0) - self._allocatable[node.name].get(GPU, 0)
        self._allocatable[node.name] = node.allocatable
        self._set_devices(node, [(uid, pod) for uid, pod in self._by_node()[node.name].items()])

    def _set_devices(self, node: Node, held: list[tuple[int, Holder]] | tuple) -> None:
        """A node's devices all free, then its pods' ids taken again (those that still exist)."""
        n = node.allocatable.get(GPU, 0)
        per = share_per_device(node.allocatable, node.gpu_share)
        self._share_of[node.name] = (node.gpu_share, per)  # (read at every bind and end)
        self._free[node.name] = [per] * n
        for uid, pod in held:
            ids = tuple(i for i in self._held.get(uid, ()) if i < n)
            self._held[uid] = ids
            self._devices_op(take, node.name, pod, ids)

    def _devices_op(self, op, name: str, pod: Holder, ids: tuple[int, ...]) -> None:  # noqa: ANN001
        share, per = self._share_of[name]
        whole, shared = request_of(pod.requests, share)
        op(self._free[name], ids, per, whole, shared)

    def devices_of(self, uid: int) -> tuple[int, ...]:
        return self._held.get(uid, ())

    def pick_devices(self, name: str, requests: Mapping[str, int]) -> tuple[int, ...] | None:
        """The GPUs the node's device plugin would give a pod (``api.devices.pick``), None if none fit."""
        share, per = self._share_of[name]
        whole, shared = request_of(requests, share)
        return pick(self._free[name], per, whole, shared)

    def remove_node(self, name: str) -> None:
        held = self._by_node().pop(name)
        self.gpus_total -= self._allocatable.pop(name).get(GPU, 0)
        del self._share_of[name], self._free[name]
        for uid in held:
            self._held.pop(uid, None)
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
        return self.pick_devices(name, requests) is not None

    def occupy(self, name: str, uid: int, pod: Holder, devices: tuple[int, ...] = ()) -> None:
        """``pod`` holds its resources on ``name`` and the GPUs ``devices`` (the scheduler's
        choice, as a GPU-sharing scheduler hands it to the device plugin)."""
        if uid in self._node_of:
            return
        self._node_of[uid] = name
        self._pod_of[uid] = pod
        if self._index is not None:
            self._index[name][uid] = pod
        if devices:
            self._held[uid] = devices
            self._devices_op(take, name, pod, devices)

    def release(self, uid: int) -> None:
        name = self._node_of.pop(uid, None)
        if name is None:
            return
        pod = self._pod_of.pop(uid)
        ids = self._held.pop(uid, ())
        if ids:
            self._devices_op(give, name, pod, ids)
        if self._index is not None:
            del self._index[name][uid]
