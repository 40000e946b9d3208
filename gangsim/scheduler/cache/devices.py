"""Each node's GPUs as devices, one row per node (``api.devices`` is the rule; this is its
vectorised form for the node table).

``free[row, i]`` is device ``i``'s free share (``per[row]`` units when entirely free; -1 past the
node's last device); ``share_col[row]`` is the resource column of the node's declared share
(-1: none, ``per`` = 1). Binding, reserving and every tentative placement go through
``take``/``give`` with the node table's ``assign``/``unassign``, so the row's generation moves
with its devices and the fast path's per-signature caches stay exact.

``shares[row]`` is the row's ``free[row, :count[row]]`` as a list and ``units[row]`` its ``per``
as an int: a bind picks and takes its devices from them with no numpy scalar read (binds and ends
are hot), and each device it changes is written to ``free`` too, which Filter, Score and capacity
read over many rows.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from gangsim.api.devices import GPU, pick, share_per_device
from gangsim.api.objects import Node
from gangsim.scheduler.framework.types import ResourceIndex


class DeviceTable:
    def __init__(self, resources: ResourceIndex, capacity: int) -> None:
        self.gpu_col = resources.col.get(GPU, -1)
        self._col = resources.col
        self.count = np.zeros(capacity, dtype=np.int64)
        self.per = np.ones(capacity, dtype=np.int64)
        self.share_col = np.full(capacity, -1, dtype=np.int64)
        self.free = np.full((capacity, 1), -1, dtype=np.int64)
        self.any_share = False  # some node declares a share: shared requests are checked per device
        self.shares: list[list[int]] = [[] for _ in range(capacity)]
        self.units: list[int] = [1] * capacity

    def grow(self, capacity: int) -> None:
        for name, fill in (("count", 0), ("per", 1), ("share_col", -1)):
            old = getattr(self, name)
            new = np.full(capacity, fill, dtype=np.int64)
            new[: len(old)] = old
            setattr(self, name, new)
        free = np.full((capacity, self.free.shape[1]), -1, dtype=np.int64)
        free[: self.free.shape[0]] = self.free
        self.free = free
        self.shares.extend([] for _ in range(capacity - len(self.shares)))
        self.units.extend([1] * (capacity - len(self.units)))

    def set_node(self, row: int, node: Node, pods: Iterable[object] = ()) -> None:
        """(Re)build a row from the node and the pods it holds (an update keeps their devices)."""
        n = int(node.allocatable.get(GPU, 0))
        if n > self.free.shape[1]:
            wider = np.full((self.free.shape[0], n), -1, dtype=np.int64)
            wider[:, : self.free.shape[1]] = self.free
            self.free = wider
        share = node.gpu_share if n and node.gpu_share in self._col else ""
        per = share_per_device(node.allocatable, share)
        self.count[row] = n
        self.per[row] = per
        self.share_col[row] = self._col[share] if share else -1
        self.any_share = self.any_share or bool(share)
        self.free[row] = -1
        self.free[row, :n] = per
        self.shares[row] = [per] * n
        self.units[row] = per
        for pod in pods:
            ids = tuple(i for i in getattr(pod, "devices", ()) if i < n)
            if ids:
                self.take(row, pod.demand, ids)  # type: ignore[attr-defined]

    # ---- one row ---------------------------------------------------------------------------------
    def request(self, row: int, demand: np.ndarray) -> tuple[int, int]:
        """(whole GPUs, shared units) ``demand`` asks of this row's devices."""
        whole = demand.item(self.gpu_col) if self.gpu_col >= 0 else 0
        if whole or not self.any_share:  # (no node declares a share: every ``share_col`` is -1)
            return whole, 0
        col = int(self.share_col[row])
        return 0, int(demand[col]) if col >= 0 else 0

    def hold(self, row: int, demand: np.ndarray, devices: tuple[int, ...] | None) -> tuple[int, ...]:
        """``api.devices.take`` of ``devices`` on the row, or when None of the ones
        ``api.devices.pick`` picks (none when none fit: an over-committed row, ``update_node``);
        returns the ids taken. (Picking and taking ask ``request`` once: a bind does both.)"""
        whole, shared = self.request(row, demand)
        if devices is None:
            if not whole and not shared:
                return ()
            devices = pick(self.shares[row], self.units[row], whole, shared) or ()
        if devices:
            self._add(row, whole, shared, devices, -1)
        return devices

    def take(self, row: int, demand: np.ndarray, ids: tuple[int, ...]) -> None:
        """``api.devices.take`` on the row."""
        if ids:
            self._add(row, *self.request(row, demand), ids, -1)

    def give(self, row: int, demand: np.ndarray, ids: tuple[int, ...]) -> None:
        """``api.devices.give`` on the row; ids past a shrunk node's last GPU are gone."""
        if ids:
            self._add(row, *self.request(row, demand), ids, 1)

    def _add(self, row: int, whole: int, shared: int, ids: tuple[int, ...], sign: int) -> None:
        amount = sign * (self.units[row] if whole else shared)
        shares, free = self.shares[row], self.free
        n = len(shares)
        for i in ids:
            if i < n:
                shares[i] = left = shares[i] + amount
                free[row, i] = left

    # ---- many rows (Filter, Score, capacity) --------------------------------------------------------
    def requests(self, rows: np.ndarray, demand: np.ndarray) -> tuple[int, np.ndarray]:
        """Whole GPUs (one number) and shared units per row that ``demand`` asks."""
        whole = int(demand[self.gpu_col]) if self.gpu_col >= 0 else 0
        if whole or not self.any_share:
            return whole, np.zeros(len(rows), dtype=np.int64)
        cols = self.share_col[rows]
        return 0, np.where(cols >= 0, demand[np.maximum(cols, 0)], 0)

    def whole_free(self, rows: np.ndarray) -> np.ndarray:
        return (self.free[rows] == self.per[rows, None]).sum(axis=1)

    def best_fit_left(self, rows: np.ndarray, shared: np.ndarray) -> np.ndarray:
        """Per row, the free share left on the device a shared request would take (-1: none fits)."""
        free = self.free[rows]
        left = np.where(free >= shared[:, None], free - shared[:, None], np.iinfo(np.int64).max)
        best = left.min(axis=1) if free.shape[1] else np.full(len(rows), np.iinfo(np.int64).max)
        return np.where(best == np.iinfo(np.int64).max, -1, best)
