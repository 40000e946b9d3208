"""A PodGroup pass that cannot reach minCount, decided from counts instead of pod by pod.

When every queued pod of the group has one signature, no pod is nominated and the cluster can
say how many more such pods it takes (each dynamic Filter plugin a ``CapacityPlugin``), the
failed pass is fixed: the first ``capacity`` pods in pod order find a node, the next fails
Filter and its twins are pruned. A failed pass reverts its tentative placements and shows only
PlacementFeasible's counts, so it can be replayed on counts alone; a successful one must run for
real (its placements depend on Score). Congested traces spend most cycles on such failures: a
32-node gang retried every minute while 10 nodes are free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gangsim.api.config import FastPath
from gangsim.scheduler.fastpath.signatures import SignatureCache
from gangsim.scheduler.framework.handle import Nominator, SnapshotView
from gangsim.scheduler.framework.interface import FilterPlugin
from gangsim.scheduler.framework.types import NO_NODE, PodInfo


CAPACITY_CAP = 1 << 40  # pods one node can take, at most (a sum over 2^20 rows stays in int64)


class Runner(Protocol):
    snapshot: SnapshotView
    nominator: Nominator
    rng: np.random.Generator | None
    signatures: SignatureCache | None
    dynamic_filters: list[FilterPlugin]
    counts_capacity: bool  # every dynamic filter is a CapacityPlugin
    fast_path: FastPath

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int: ...


@dataclass(frozen=True, slots=True)
class DoomedPass:
    evaluated: int  # pods the pass looks at before PlacementFeasible stops it
    placed: int  # of which found a node
    scans: int  # Filter passes over every node it makes (the search state moves by these)
    fill: tuple[tuple[int, int], ...] = ()  # (row, pods) the placed pods end up on, when some pod fails


def capacity_below(fw: Runner, pod: PodInfo, enough: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The feasible rows and how many pods shaped like ``pod`` each can still take, when their
    sum is fewer than ``enough``, known without running Filter pod by pod, and when placing them one at a time
    would leave the rotating start index where it is (every search scans all nodes: no more
    feasible nodes than ``numFeasibleNodesToFind``). None otherwise.

    Exact because, with no pod affinity and no nominated pods in play, a node's feasibility is
    its signature's Filter code, and each pod placed on a feasible node lowers the number of such
    pods that node can still take by exactly one (``CapacityPlugin``), whatever the order.

    With ``FastPath.repeat_failures`` the counts are kept on the signature's entry for the node
    table's generation (any change to any node bumps it): the groups of one shape that retry
    after a release, one after another, all fail on the same table."""
    if fw.rng is not None or fw.signatures is None:
        return None  # seeded host choices would draw from the RNG during the real pass
    if pod.nominated_row != NO_NODE or fw.nominator.rows():
        return None
    if not fw.counts_capacity:
        return None
    entry = fw.signatures.entry(pod)  # refreshed here as the pass itself would refresh it
    if entry is None:
        return None
    order = fw.snapshot.nodes.order
    if not len(order) or len(order) - entry.n_failed >= enough:
        return None  # (n_failed never undercounts: at least that many feasible nodes)
    generation = fw.snapshot.nodes.generation
    memo = entry.capacity if fw.fast_path.repeat_failures else None
    if memo is not None and memo[0] == generation:
        rows, per_row = memo[1], memo[2]
    else:
        rows = order[entry.codes[order] == 0]
        per_row = None
    if len(rows) >= enough or len(rows) > fw.num_feasible_nodes_to_find(len(order)):
        return None  # (every feasible node takes at least one pod)
    if per_row is None:
        # capped by ``CAPACITY_CAP`` rather than ``enough``: the counts are returned only when
        # their sum is below ``enough``, where the two caps do not differ
        per_row = np.full(len(rows), CAPACITY_CAP, dtype=np.int64)
        for p in fw.dynamic_filters:
            c = p.capacity(pod, rows)  # type: ignore[attr-defined]
            if c is None:
                return None
            np.minimum(per_row, c, out=per_row)
        entry.capacity = (generation, rows, per_row)
    return (rows, per_row) if int(per_row.sum()) < enough else None


def plan(fw: Runner, pods: list[PodInfo], min_count: int, scheduled0: int) -> DoomedPass | None:
    """The counts of the pass, if its outcome is fixed by capacity; the caller checks with
    PlacementFeasible that those counts fail, and only then takes the shortcut."""
    signature = pods[0].signature
    if not signature or any(p.signature != signature or p.nominated_row != NO_NODE for p in pods):
        return None
    # the pass reaches minCount exactly when the cluster takes minCount - scheduled0 more pods
    found = capacity_below(fw, pods[0], min_count - scheduled0)
    if found is None:
        return None
    rows, per_row = found
    capacity = int(per_row.sum())
    # Pod i < capacity is placed; from pod ``capacity`` on every pod fails, and PlacementFeasible
    # stops the pass after pod i once scheduled + remaining < minCount, i.e. at
    # i = max(capacity, scheduled0 + capacity + len(pods) - minCount), if that is a pod.
    total = len(pods)
    stop_after = max(capacity, scheduled0 + capacity + total - min_count)
    evaluated = stop_after + 1 if stop_after < total else total
    placed = min(capacity, evaluated)
    # the ones that fit and the first that does not scan every node; its twins are pruned
    # every feasible row takes exactly its capacity before the first failure, whatever Score
    # picks: the snapshot the failing pod sees is known, and so is its FitError
    fill = tuple((int(r), int(c)) for r, c in zip(rows.tolist(), per_row.tolist()) if c) if evaluated > placed else ()
    return DoomedPass(evaluated, placed, min(evaluated, capacity + 1), fill)
