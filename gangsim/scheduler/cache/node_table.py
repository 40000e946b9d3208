"""Node state as arrays, the way kube's ``NodeInfo`` keeps int64 ``Resource`` sums.

One row per node ever created (rows are never reused, so a row number is a stable node id);
``order`` lists the live rows in creation order, which is the node-list order every tie-break
uses. Binding a pod touches one row. ``free = allocatable - requested`` is kept incrementally so
that NodeResourcesFit is a single vectorised comparison per pod.
"""

from __future__ import annotations

import numpy as np

from gangsim.api.objects import Node
from gangsim.scheduler.cache.devices import DeviceTable
from gangsim.scheduler.framework.types import ResourceIndex


def usage_delta(demand: np.ndarray, nonzero_cpu: int, nonzero_mem: int) -> np.ndarray:
    """What one pod adds to its row of ``NodeTable.usage`` (its requests, its cpu / memory with
    kube's non-zero defaults, minus its requests off ``free``): a bind is one vector addition."""
    return np.concatenate((demand, (nonzero_cpu, nonzero_mem), -demand)).astype(np.int64)


class NodeTable:
    def __init__(self, resources: ResourceIndex, capacity: int = 64) -> None:
        self.resources = resources
        r = len(resources)
        self.allocatable = np.zeros((capacity, r), dtype=np.int64)
        # per row: requested (r columns), cpu / memory with kube's non-zero defaults (2, for
        # NodeResourcesFit scoring), free (r); ``requested``, ``nonzero_requested`` and ``free``
        # are views of it, so that binding a pod is one addition (``usage_delta``)
        self.usage = np.zeros((capacity, 2 * r + 2), dtype=np.int64)
        self._views()
        self.unschedulable = np.zeros(capacity, dtype=bool)
        self.alive = np.zeros(capacity, dtype=bool)
        self.devices = DeviceTable(resources, capacity)  # each node's GPUs, one by one
        self.names: list[str] = []
        self.nodes: list[Node] = []
        self.row_of: dict[str, int] = {}
        # pods assigned to each row (bound, reserved at Permit, or terminating), by uid
        self.pods: list[dict[int, object]] = []
        self.order = np.zeros(0, dtype=np.int64)  # live rows in creation order
        self.order2 = np.zeros(0, dtype=np.int64)  # ``order`` twice: rotations are slices of it
        self.position = np.full(capacity, -1, dtype=np.int64)  # row -> index in ``order``
        # bumped when labels, taints or unschedulable of any node change, or nodes come and go:
        # static filter/score results cached per pod signature are valid while it is unchanged
        self.static_generation = 0
        # bumped on any change to any row (resources included)
        self.generation = 0
        # ``generation`` at the last change to a row that was live then: with no node added or
        # removed since ``g`` (``static_generation`` unchanged), a live row changed since ``g``
        # exactly when this is above ``g`` (the live rows are the same; no max over them)
        self.live_generation = 0
        self.row_generation = np.zeros(capacity, dtype=np.int64)
        # rows in the order they changed, so caches refresh only those; reset (new epoch) when long
        self.touched: list[int] = []
        self.touch_epoch = 0

    # ---- nodes -------------------------------------------------------------------------------
    def _views(self) -> None:
        r, u = len(self.resources), self.usage
        self.requested = u[:, :r]
        self.nonzero_requested = u[:, r : r + 2]
        self.free = u[:, r + 2 :]

    def _grow(self) -> None:
        cap = self.allocatable.shape[0] * 2
        for name in ("allocatable", "usage"):
            old = getattr(self, name)
            new = np.zeros((cap, old.shape[1]), dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)
        self._views()
        for name, fill in (("unschedulable", False), ("alive", False), ("position", -1), ("row_generation", 0)):
            old = getattr(self, name)
            new = np.full(cap, fill, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)
        self.devices.grow(cap)

    def add_node(self, node: Node) -> int:
        row = len(self.names)
        if row >= self.allocatable.shape[0]:
            self._grow()
        self.names.append(node.name)
        self.nodes.append(node)
        self.pods.append({})
        self.row_of[node.name] = row
        self.allocatable[row] = self.resources.vector(node.allocatable)
        self.free[row] = self.allocatable[row]
        self.unschedulable[row] = node.unschedulable
        self.devices.set_node(row, node)
        self.alive[row] = True
        self._rebuild_order()
        self._touch(row, static=True)
        return row

    def update_node(self, node: Node) -> int:
        row = self.row_of[node.name]
        self.nodes[row] = node
        self.allocatable[row] = self.resources.vector(node.allocatable)
        self.free[row] = self.allocatable[row] - self.requested[row]
        self.unschedulable[row] = node.unschedulable
        self.devices.set_node(row, node, self.pods[row].values())
        self._touch(row, static=True)
        return row

    def remove_node(self, name: str) -> int:
        row = self.row_of.pop(name)
        self.alive[row] = False
        self._rebuild_order()
        self._touch(row, static=True)
        return row

    def _rebuild_order(self) -> None:
        self.order = np.flatnonzero(self.alive[: len(self.names)]).astype(np.int64)
        self.order2 = np.concatenate((self.order, self.order))
        self.position[:] = -1
        self.position[self.order] = np.arange(len(self.order), dtype=np.int64)

    def _touch(self, row: int, *, static: bool = False) -> None:
        self.generation += 1
        self.row_generation[row] = self.generation
        if self.alive[row]:
            self.live_generation = self.generation
        if len(self.touched) >= 1 << 16:
            self.touched.clear()
            self.touch_epoch += 1
        self.touched.append(row)
        if static:
            self.static_generation += 1

    @property
    def num_nodes(self) -> int:
        return len(self.order)

    # ---- pods --------------------------------------------------------------------------------
    def assign(self, row: int, uid: int, pod: object, delta: np.ndarray) -> None:
        """Account a pod on a node (Reserve/assume, or bind); ``delta``: its ``usage_delta``."""
        # a view changed in place (``a[row] += v`` also writes the sum back: twice the time per bind)
        usage = self.usage[row]
        usage += delta
        self.pods[row][uid] = pod
        self._touch(row)

    def unassign(self, row: int, uid: int, delta: np.ndarray) -> None:
        usage = self.usage[row]  # (a view, as in ``assign``)
        usage -= delta
        del self.pods[row][uid]
        self._touch(row)

    def check_invariants(self) -> None:
        """No node over-committed (ignoring rows whose allocatable shrank under running pods)."""
        rows = self.order
        over = (self.free[rows] < 0).any(axis=1)
        if over.any():
            bad = [self.names[r] for r in rows[over]]
            raise AssertionError(f"over-committed nodes: {bad[:5]}")

