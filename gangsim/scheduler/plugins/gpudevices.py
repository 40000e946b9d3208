"""GPUDevices (gangsim's own plugin): a node's GPUs one by one (``api.devices``).

Upstream kube-scheduler sees ``nvidia.com/gpu`` and every other extended resource as one number
per node (``NodeResourcesFit``: ``request <= allocatable - requested``); which physical GPU a pod
gets is decided by the kubelet's device plugin at admission, and a GPU-sharing resource such as
openb's ``alibaba.com/gpu-milli`` is summed over the node, so three 600-milli pods "fit" a 2-GPU
node. Sharing schedulers (Alibaba's gpushare scheduler extender, the FGD simulator's
``gpu-milli`` accounting) check each GPU. This plugin does that on top of NodeResourcesFit:

Filter: a whole-GPU request needs that many *entirely free* GPUs; a shared request (the node's
declared ``gangsim.dev/gpu-share`` resource without ``nvidia.com/gpu``) must fit in ONE GPU's free
share. A request no GPU of the node could ever hold (more GPUs than it has, a share above one GPU)
is UnschedulableAndUnresolvable. Pods that ask for no GPU pass. Without a declared share, a
whole-GPU request passes exactly when NodeResourcesFit's ``nvidia.com/gpu`` check does.

Score (off by default: the default profile has no weight for it, as upstream has no device-aware
score; enable it with a weight in a KubeSchedulerConfiguration): device-level packing, the FGD
paper's ``GpuPacking`` idea. Shared request: ``100 × (per − left) / per`` where ``left`` is the
free share the best-fitting GPU keeps (a request that fills a GPU exactly scores 100, one that
breaks a fresh GPU scores lowest). Whole request: ``100 × k / free whole GPUs`` (the node whose
free GPUs it uses up scores 100). Upstream's NodeResourcesFit ``MostAllocated`` on the share
resource packs by node totals and cannot tell a fragmented node from a full GPU.
"""

from __future__ import annotations

import numpy as np

from gangsim.api.devices import GPU
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import UNBOUNDED, CapacityPlugin, ClusterEvent, Code, EnqueueExtensions, ScorePlugin, Unbounded
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE

_MANY = np.iinfo(np.int64).max // 4  # "no device limit" in capacity()


class GPUDevices(CapacityPlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.GPU_DEVICES
    NODE_STATIC = False
    SCORE_PER_ROW = True
    SCORE_NODE_STATIC = False  # device occupancy changes with binds
    NORMALIZE_PER_ROW = True  # NormalizeScore keeps the raw score: a row's total is its own (fastpath.rotation)

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE_UP, ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NOMINATED_POD_DELETE)

    # ---- Filter ------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        codes = np.zeros(len(rows), dtype=np.int8)
        d = self.snapshot.nodes.devices
        if not d.any_share:
            return codes  # every device is a whole GPU: NodeResourcesFit's counter decides alone
        whole, shared = d.requests(rows, pod.demand)
        if whole:
            short = d.whole_free(rows) < whole
            codes[short] = Code.UNSCHEDULABLE
            codes[short & (d.count[rows] < whole)] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        elif shared.any():
            asks = shared > 0
            short = asks & (d.best_fit_left(rows, shared) < 0)
            codes[short] = Code.UNSCHEDULABLE
            codes[short & ((shared > d.per[rows]) | (d.count[rows] == 0))] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def filter_row(self, state: CycleState, pod: PodInfo, row: int) -> int:
        if not self.snapshot.nodes.devices.any_share:
            return 0  # (as ``filter``)
        return int(self.filter(state, pod, np.array([row], dtype=np.int64))[0])

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        d = self.snapshot.nodes.devices
        one = np.array([row], dtype=np.int64)
        whole, shared = d.requests(one, pod.demand)
        if whole:
            return (f"Insufficient whole {GPU}",)
        col = int(d.share_col[row])
        return (f"Insufficient {self.snapshot.nodes.resources.names[col]} on any one {GPU}",) if col >= 0 and shared[0] else ()

    def capacity(self, pod: PodInfo, rows: np.ndarray) -> np.ndarray | Unbounded:
        """Whole: free whole GPUs // k; shared: sum over GPUs of free share // request (a pod
        takes one GPU and lowers that GPU's count by exactly one, whichever GPU it takes).
        Unbounded when no node declares a share (NodeResourcesFit counts whole GPUs as it counts
        any resource) or the pod asks no share of any row."""
        d = self.snapshot.nodes.devices
        whole, shared = d.requests(rows, pod.demand)
        if whole and d.any_share:
            return d.whole_free(rows) // whole
        asks = shared > 0
        if not asks.any():
            return UNBOUNDED
        out = np.full(len(rows), _MANY, dtype=np.int64)
        free = np.maximum(d.free[rows[asks]], 0)
        out[asks] = (free // shared[asks, None]).sum(axis=1)
        return out

    # ---- Score -------------------------------------------------------------------------------
    @staticmethod
    def normalize(raw: np.ndarray) -> np.ndarray:
        return raw

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray | None:
        d = self.snapshot.nodes.devices
        whole, shared = d.requests(rows, pod.demand)
        if whole:
            free = d.whole_free(rows)
            return np.where(free >= whole, whole * MAX_NODE_SCORE // np.maximum(free, 1), 0)
        if not shared.any():
            return None  # no GPU asked: Skip
        per = d.per[rows]
        left = d.best_fit_left(rows, shared)
        return np.where((shared > 0) & (left >= 0), (per - left) * MAX_NODE_SCORE // per, 0)
