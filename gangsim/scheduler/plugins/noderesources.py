"""NodeResourcesFit (Filter + Score strategies) and NodeResourcesBalancedAllocation.

Filter: ``request + requested <= allocatable`` for every resource the pod asks for and one pod
slot; a request larger than the node's whole allocatable is UnschedulableAndUnresolvable
(preemption cannot help). Scores use kube's integer formulas; NodeResourcesFit scoring uses the
non-zero cpu/memory defaults, BalancedAllocation the real requests.
"""

from __future__ import annotations

import math

import numpy as np

from gangsim.api.config import LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO, ScoringStrategy
from gangsim.api.quantity import is_extended_resource
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import CapacityPlugin, ClusterEvent, Code, EnqueueExtensions, PreScorePlugin, ScorePlugin, Status
from gangsim.scheduler.framework.types import CPU_COL, MEMORY_COL, PODS_COL, PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE
from gangsim.scheduler.plugins.noderesources_placement import FitPlacementScore

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
# Below this many rows the same formulas run on Python ints: numpy's per-call overhead dominates
# when only the row changed by the last bind has to be recomputed.
SMALL = 8


class NodeResourcesFit(FitPlacementScore, CapacityPlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.NODE_RESOURCES_FIT
    NODE_STATIC = False
    SCORE_PER_ROW = True
    SCORE_NODE_STATIC = False  # requested resources change with binds
    NORMALIZE_PER_ROW = True  # NormalizeScore keeps the raw score: a row's total is its own (fastpath.rotation)

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot
        strategy: ScoringStrategy = args.profile.scoring_strategy
        self.strategy = strategy
        index = self.snapshot.nodes.resources
        self._score_cols = [(index.col.get(name, -1), name, weight) for name, weight in strategy.resources]
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            self._shape = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in strategy.shape]

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE_UP, ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NOMINATED_POD_DELETE)

    # ---- Filter ------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        if len(rows) <= SMALL:
            return self._filter_small(state, pod, rows)
        t = self.snapshot.nodes
        free = t.free[rows][:, pod.fit_cols]
        short = free < pod.fit_amounts
        codes = np.zeros(len(rows), dtype=np.int8)
        failing = short.any(axis=1)
        if not failing.any():
            return codes
        codes[failing] = Code.UNSCHEDULABLE
        # larger than the node itself: preemption cannot help (InsufficientResource.Unresolvable)
        alloc = t.allocatable[rows][:, pod.fit_cols]
        too_big = (alloc < pod.fit_amounts) & (pod.fit_cols != PODS_COL)
        unresolvable = (short & too_big).any(axis=1)
        codes[unresolvable] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return codes

    def _filter_small(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        return np.array([self.filter_row(state, pod, row) for row in rows.tolist()], dtype=np.int8)

    def filter_row(self, state: CycleState, pod: PodInfo, row: int) -> int:
        """The same test for one row, on Python ints."""
        t = self.snapshot.nodes
        free = t.free[row].tolist()
        code = 0
        for c, a in zip(pod.fit_cols.tolist(), pod.fit_amounts.tolist()):
            if free[c] < a:
                if c != PODS_COL and int(t.allocatable[row, c]) < a:
                    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                code = Code.UNSCHEDULABLE
        return code

    def capacity(self, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        """How many more pods shaped like ``pod`` fit on each row (its scarcest resource)."""
        free = self.snapshot.nodes.free[rows][:, pod.fit_cols]
        return (free // pod.fit_amounts).min(axis=1)  # fit_amounts > 0: the pods column is one of them

    def reason_counts(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> dict[str, int]:
        """How many of ``rows`` lack each resource (each row counts once per missing resource)."""
        t = self.snapshot.nodes
        names_ = t.resources.names
        counts: dict[str, int] = {}
        for c, a in zip(pod.fit_cols.tolist(), pod.fit_amounts.tolist()):
            n = int(np.count_nonzero(t.free[rows, c] < a))
            if n:
                counts["Too many pods" if c == PODS_COL else f"Insufficient {names_[c]}"] = n
        return counts

    def reasons(self, state: CycleState, pod: PodInfo, row: int) -> tuple[str, ...]:
        t = self.snapshot.nodes
        names_ = t.resources.names
        free = t.free[row]
        out: list[str] = []
        if free[PODS_COL] < 1:
            out.append("Too many pods")
        rank = {"cpu": 0, "memory": 1, "ephemeral-storage": 2}
        ordered = sorted((int(c) for c in pod.fit_cols if c != PODS_COL), key=lambda c: (rank.get(names_[c], 3), names_[c]))
        for c, amount in ((c, int(pod.demand[c])) for c in ordered):
            if amount > free[c]:
                out.append(f"Insufficient {names_[c]}")
        return tuple(out)

    # ---- Score -------------------------------------------------------------------------------
    @staticmethod
    def normalize(raw: np.ndarray) -> np.ndarray:
        return raw

    def _requested_and_alloc(self, pod: PodInfo, rows: np.ndarray, col: int, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``calculateResourceAllocatableRequest`` with non-zero requests for cpu/memory."""
        t = self.snapshot.nodes
        if col < 0:
            return None
        if col == CPU_COL:
            return t.allocatable[rows, col], t.nonzero_requested[rows, 0] + pod.spec.nonzero_milli_cpu
        if col == MEMORY_COL:
            return t.allocatable[rows, col], t.nonzero_requested[rows, 1] + pod.spec.nonzero_memory
        req = int(pod.demand[col])
        if req == 0 and is_extended_resource(name):
            return None  # extended resource the pod does not request: bypassed
        return t.allocatable[rows, col], t.requested[rows, col] + req

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        if len(rows) <= SMALL:
            return np.array([self.score_row(state, pod, r) for r in rows.tolist()], dtype=np.int64)
        n = len(rows)
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        kind = self.strategy.type
        for col, name, weight in self._score_cols:
            pair = self._requested_and_alloc(pod, rows, col, name)
            if pair is None:
                continue
            alloc, req = pair
            valid = alloc != 0
            safe_alloc = np.where(valid, alloc, 1)
            if kind == LEAST_ALLOCATED:
                s = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe_alloc)
            elif kind == MOST_ALLOCATED:
                s = np.minimum(req, alloc) * MAX_NODE_SCORE // safe_alloc
            else:
                util = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe_alloc)
                s = self._broken_linear(util)
                valid = valid & (s > 0)  # RequestedToCapacityRatio counts only positive scores
            node_score += np.where(valid, s * weight, 0)
            weight_sum += np.where(valid, weight, 0)
        if kind == REQUESTED_TO_CAPACITY_RATIO:
            out = np.zeros(n, dtype=np.int64)
            nz = weight_sum > 0
            # math.Round: half away from zero on a non-negative ratio
            out[nz] = np.floor(node_score[nz] / weight_sum[nz] + 0.5).astype(np.int64)
            return out
        return np.where(weight_sum > 0, node_score // np.where(weight_sum > 0, weight_sum, 1), 0)

    def score_row(self, state: CycleState, pod: PodInfo, row: int) -> int:
        """The same formulas for one row, on Python ints."""
        t = self.snapshot.nodes
        kind = self.strategy.type
        node_score = weight_sum = 0
        for col, name, weight in self._score_cols:
            if col < 0:
                continue
            alloc = int(t.allocatable[row, col])
            if col == CPU_COL:
                req = int(t.nonzero_requested[row, 0]) + pod.spec.nonzero_milli_cpu
            elif col == MEMORY_COL:
                req = int(t.nonzero_requested[row, 1]) + pod.spec.nonzero_memory
            else:
                pr = int(pod.demand[col])
                if pr == 0 and is_extended_resource(name):
                    continue
                req = int(t.requested[row, col]) + pr
            if alloc == 0:
                continue
            if kind == LEAST_ALLOCATED:
                sc = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
            elif kind == MOST_ALLOCATED:
                sc = min(req, alloc) * MAX_NODE_SCORE // alloc
            else:
                util = MAX_UTILIZATION if req > alloc else req * MAX_UTILIZATION // alloc
                sc = self._broken_linear_one(util)
                if sc <= 0:
                    continue
            node_score += sc * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        if kind == REQUESTED_TO_CAPACITY_RATIO:
            return math.floor(node_score / weight_sum + 0.5)
        return node_score // weight_sum

    def _broken_linear_one(self, p: int) -> int:
        shape = self._shape
        for i, (u, sc) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return sc
                u0, s0 = shape[i - 1]
                return s0 + (sc - s0) * (p - u0) // (u - u0)
        return shape[-1][1]

    def _broken_linear(self, p: np.ndarray) -> np.ndarray:
        shape = self._shape
        out = np.full(len(p), shape[-1][1], dtype=np.int64)
        done = np.zeros(len(p), dtype=bool)
        for i, (u, s) in enumerate(shape):
            hit = (~done) & (p <= u)
            if i == 0:
                out[hit] = s
            else:
                u0, s0 = shape[i - 1]
                out[hit] = s0 + (s - s0) * (p[hit] - u0) // (u - u0)
            done |= hit
        return out


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
    SCORE_PER_ROW = True
    SCORE_NODE_STATIC = False  # requested resources change with binds
    NORMALIZE_PER_ROW = True  # NormalizeScore keeps the raw score: a row's total is its own (fastpath.rotation)

    @staticmethod
    def normalize(raw: np.ndarray) -> np.ndarray:
        return raw

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot
        index = self.snapshot.nodes.resources
        self._cols = [(index.col.get(name, -1), name) for name, _ in args.profile.balanced_resources]
        self._present = [c for c, _ in self._cols if c >= 0]
        self._skip = Status(Code.SKIP, plugin=self.NAME)

    def pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        """Skip for best-effort pods: they request none of the balanced resources."""
        demand = pod.demand
        for c in self._present:
            if demand[c]:
                return None
        return self._skip

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray | None:
        t = self.snapshot.nodes
        pod_reqs = [int(pod.demand[c]) if c >= 0 else 0 for c, _ in self._cols]
        if len(rows) <= SMALL:
            return np.array([self._score_row(pod_reqs, r) for r in rows.tolist()], dtype=np.int64)
        fractions: list[np.ndarray] = []
        present: list[np.ndarray] = []
        for (col, name), req in zip(self._cols, pod_reqs):
            if col < 0 or (req == 0 and is_extended_resource(name)):
                continue
            alloc = t.allocatable[rows, col]
            requested = t.requested[rows, col] + req
            ok = alloc != 0
            f = np.where(ok, requested / np.where(ok, alloc, 1), 0.0)
            fractions.append(np.minimum(f, 1.0))
            present.append(ok)
        n = len(rows)
        if not fractions:
            return np.full(n, MAX_NODE_SCORE, dtype=np.int64)
        fr = np.vstack(fractions)  # (resources, rows)
        pr = np.vstack(present)
        count = pr.sum(axis=0)
        std = np.zeros(n, dtype=np.float64)
        two = count == 2
        if two.any():
            # |f0 - f1| / 2 over the two present resources, in kube's order
            idx = np.argsort(~pr[:, two], axis=0, kind="stable")[:2]
            cols = np.flatnonzero(two)
            f0 = fr[idx[0], cols]
            f1 = fr[idx[1], cols]
            std[two] = np.abs((f0 - f1) / 2)
        many = count > 2
        if many.any():
            for j in np.flatnonzero(many).tolist():
                vals = fr[pr[:, j], j]
                total = 0.0
                for v in vals.tolist():
                    total += v
                mean = total / len(vals)
                acc = 0.0
                for v in vals.tolist():
                    acc = acc + (v - mean) * (v - mean)
                std[j] = math.sqrt(acc / len(vals))
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

    def score_row(self, state: CycleState, pod: PodInfo, row: int) -> int:
        return self._score_row([int(pod.demand[c]) if c >= 0 else 0 for c, _ in self._cols], row)

    def _score_row(self, pod_reqs: list[int], row: int) -> int:
        """``balancedResourceScorer`` for one row, on Python floats (IEEE doubles, as numpy)."""
        t = self.snapshot.nodes
        fractions: list[float] = []
        for (col, name), req in zip(self._cols, pod_reqs):
            if col < 0 or (req == 0 and is_extended_resource(name)):
                continue
            alloc = int(t.allocatable[row, col])
            if alloc == 0:
                continue
            f = float(int(t.requested[row, col]) + req) / float(alloc)
            fractions.append(min(f, 1.0))
        if len(fractions) == 2:
            std = abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            total = 0.0
            for v in fractions:
                total += v
            mean = total / len(fractions)
            acc = 0.0
            for v in fractions:
                acc = acc + (v - mean) * (v - mean)
            std = math.sqrt(acc / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * float(MAX_NODE_SCORE))
