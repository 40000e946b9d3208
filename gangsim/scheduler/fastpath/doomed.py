"""A PodGroup pass that cannot reach minCount, decided from counts instead of pod by pod.

When every queued pod of the group has one signature, no pod is nominated and the cluster can
say how many more such pods it takes (each dynamic Filter plugin a ``CapacityPlugin``), the
failed pass is fixed: the first ``capacity`` pods in pod order find a node, the next fails
Filter and its twins are pruned. A failed pass reverts its tentative placements and shows only
PlacementFeasible's counts, so it can be replayed on counts alone; a successful one must run for
real (its placements depend on Score). Congested traces spend most cycles on such failures: a
32-node gang retried every minute while 10 nodes are free.

Under KEP-5732 the same holds per placement (``FastPath.placement_passes``): the search runs over
the placement's rows only, so the counts and the scans are the placement's; a gang constrained to
one of 40 blocks is decided block by block from counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter, countOf
from typing import Protocol, TypeVar

import numpy as np

from gangsim.scheduler.fastpath import rotation
from gangsim.scheduler.fastpath.signatures import SignatureCache, SignatureEntry
from gangsim.scheduler.framework.handle import Nominator, SnapshotView
from gangsim.scheduler.framework.interface import UNBOUNDED, FilterPlugin, Placement
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, none_nominated


MAX_PLANS = 4096
T = TypeVar("T")
_SIGNATURE = attrgetter("signature")


class Runner(rotation.Runner, Protocol):
    snapshot: SnapshotView
    nominator: Nominator
    rng: np.random.Generator | None
    signatures: SignatureCache | None
    dynamic_filters: list[FilterPlugin]
    counts_capacity: bool  # every dynamic filter is a CapacityPlugin
    placement: Placement | None  # the KEP-5732 placement being evaluated (None: every node)
    doomed_plans: dict[tuple, tuple[int, object]]  # ``kept``'s, with the generation they hold at
    next_start_index: int
    filter_rows_evaluated: int

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int: ...

    def select_host(self, rows: np.ndarray, scores: np.ndarray) -> int: ...

    def account_full_scans(self, pods: int) -> None: ...


@dataclass(frozen=True, slots=True)
class DoomedPass:
    evaluated: int  # pods the pass looks at before PlacementFeasible stops it
    placed: int  # of which found a node
    scans: int  # Filter passes over every node it makes (the search state moves by these)
    fill: tuple[tuple[int, int], ...] = ()  # (row, pods) the placed pods end up on, when some pod fails
    # the searches stop early (more feasible rows than numFeasibleNodesToFind): the feasible
    # rows' positions in the search order and their ``rotation.row_keys``; None: every search scans all
    ranked: rotation.Layout | None = None


def search_rows(fw: Runner) -> np.ndarray:
    """The rows a pod's search runs over: the placement's (KEP-5732), else every live node."""
    return fw.snapshot.nodes.order if fw.placement is None else fw.placement.rows


def feasible(fw: Runner, pods: list[PodInfo], cap: int, *, fewer_than: int | None = None) -> tuple[SignatureEntry, np.ndarray, np.ndarray, np.ndarray] | None:
    """The group's signature entry, and the feasible search rows (their positions in the search
    order, the rows, and how many pods shaped like ``pods[0]`` each can still take, at most
    ``cap``), known without running Filter pod by pod; None when that is not known, or when
    there are ``fewer_than`` feasible rows or more.

    Exact because, with no pod affinity and no nominated pods in play, a node's feasibility is
    its signature's Filter code, and each pod placed on a feasible node lowers the number of such
    pods that node can still take by exactly one (``CapacityPlugin``), whatever the order."""
    pod = pods[0]
    if fw.rng is not None or fw.signatures is None:
        return None  # seeded host choices would draw from the RNG during the real pass
    if pod.nominated_row != NO_NODE or fw.nominator.by_row:
        return None
    if not fw.counts_capacity:
        return None
    entry = fw.signatures.entry(pod)  # refreshed here as the pass itself would refresh it
    if entry is None:
        return None
    order = search_rows(fw)
    if not len(order) or (fewer_than is not None and fw.placement is None and len(order) - entry.n_failed >= fewer_than):
        return None  # (n_failed counts every live row and never undercounts: at least that many feasible nodes)
    positions = np.flatnonzero(entry.codes[order] == 0)
    rows = order[positions]
    if fewer_than is not None and len(rows) >= fewer_than:
        return None
    per_row = np.full(len(rows), cap, dtype=np.int64)
    for p in fw.dynamic_filters:
        c = p.capacity(pod, rows)  # type: ignore[attr-defined]
        if c is None:
            return None
        if c is not UNBOUNDED:
            np.minimum(per_row, c, out=per_row)
    return entry, positions, rows, per_row


def capacity_below(fw: Runner, pods: list[PodInfo], enough: int) -> tuple[np.ndarray, np.ndarray, rotation.Layout | None] | None:
    """The feasible rows and how many pods each can still take (``feasible``), when their sum
    is fewer than ``enough`` and the rotating start index placing them one at a time leaves
    behind is known: every search scans all nodes (no more feasible nodes than
    ``numFeasibleNodesToFind``; third item None), or the searches stop early and ``rotation``
    can replay them (third item: the rows' ``rotation.Layout``). None otherwise."""
    found = feasible(fw, pods, enough, fewer_than=enough)  # (every feasible node takes at least one pod)
    if found is None:
        return None
    entry, positions, rows, per_row = found
    if int(per_row.sum()) >= enough:
        return None
    if len(rows) <= fw.num_feasible_nodes_to_find(len(search_rows(fw))):
        return rows, per_row, None
    keys = rotation.row_keys(fw, entry, pods, rows, per_row)
    return None if keys is None else (rows, per_row, rotation.Layout(positions.tolist(), keys))


def account(fw: Runner, plan: DoomedPass) -> None:
    """What the pass's searches do to the search state: ``plan.scans`` searches from the
    rotating start index (over the placement's rows under KEP-5732)."""
    if plan.ranked is None or not plan.scans:
        fw.account_full_scans(plan.scans)
        return
    searches(fw, plan.ranked, plan.scans)


def searches(fw: Runner, layout: rotation.Layout, count: int) -> list[int]:
    """``count`` searches replayed on ``layout`` (``rotation.replay``): the search state moves as
    theirs would; the rows they took, in order."""
    order = search_rows(fw)
    n = len(order)
    start, evaluated, took = rotation.replay(n, fw.num_feasible_nodes_to_find(n), fw.next_start_index % n, layout, count)
    fw.next_start_index = start
    fw.filter_rows_evaluated += evaluated
    return order[list(took)].tolist()


def plan(fw: Runner, pods: list[PodInfo], min_count: int, scheduled0: int) -> DoomedPass | None:
    """The counts of the pass, if its outcome is fixed by capacity; the caller checks with
    PlacementFeasible that those counts fail, and only then takes the shortcut.

    A plan depends on the search rows' state and on the group's shape and counts only, so it is
    kept (``fw.doomed_plans``) while no search row changed since (tentative placements that are
    taken back, as ``row_keys`` and ``put_back`` make, change nothing): a stuck gang retried on
    an unchanged cluster, or on 40 full blocks, reuses its plans."""
    signature = pods[0].signature
    # (each pod has the signature and no nomination: counted at C speed)
    if not signature or countOf(map(_SIGNATURE, pods), signature) != len(pods) or not none_nominated(pods):
        return None
    if enough_rows(fw, pods[0], min_count - scheduled0):
        return None  # what ``_plan`` would find (``feasible``'s ``fewer_than``), without the plan's key and lookup
    return kept(fw, pods, ("doomed", min_count, scheduled0), lambda: _plan(fw, pods, min_count, scheduled0))


def enough_rows(fw: Runner, pod: PodInfo, enough: int) -> bool:
    """Without a placement, when ``kept`` and ``feasible`` would look at the counts: the pod's
    signature entry (refreshed as ``feasible`` and the pass itself refresh it) says at least
    ``enough`` live rows pass Filter, so the pass is not doomed (each takes at least one pod):
    a successful gang's pass skips the plan's key, lookup and store."""
    if fw.placement is not None or fw.rng is not None or fw.signatures is None or fw.nominator.by_row or fw.snapshot.affinity_pods or not fw.counts_capacity:
        return False
    entry = fw.signatures.entry(pod)
    return entry is not None and len(fw.snapshot.nodes.order) - entry.n_failed >= enough


def search_key(fw: Runner) -> tuple[str, bytes] | None:
    """What identifies the search rows in kept plans: the placement's name and rows (inside a
    CompositePodGroup a child's placement of one name is trimmed to its parent's placement, so the
    name alone does not say which rows), or None for every live node."""
    placement = fw.placement
    return None if placement is None else (placement.name, placement.rows.tobytes())


def kept(fw: Runner, pods: list[PodInfo], what: tuple, compute: Callable[[], T]) -> T | None:
    """``compute()``, a function of the search rows' state and the single-shape group ``pods``,
    or its value from the last call with the same ``what`` if no search row changed since."""
    if fw.rng is not None or fw.signatures is None or fw.nominator.by_row or fw.snapshot.affinity_pods:
        return None  # (checked again by ``feasible``; these are not part of the rows' state)
    nodes = fw.snapshot.nodes
    order = search_rows(fw)
    key = (search_key(fw), nodes.static_generation, pods[0].signature, len(pods), *what)
    hit = fw.doomed_plans.get(key)
    # (a row's generation is never above the table's: an unchanged table needs no look at the
    # rows; over every live row, the key's ``static_generation`` says no node came or went since
    # the plan was kept, so ``live_generation`` says whether one of them changed)
    if hit is not None and len(order) and (nodes.generation <= hit[0] or (nodes.live_generation if fw.placement is None else int(nodes.row_generation[order].max())) <= hit[0]):
        return hit[1]
    found = compute()
    if len(fw.doomed_plans) > MAX_PLANS:
        fw.doomed_plans.clear()
    fw.doomed_plans[key] = (nodes.generation, found)  # after ``row_keys``' tentative pods, all taken back
    return found


@contextmanager
def put_back(fw: Runner) -> Iterator[None]:
    """Around changes to search rows that are all taken back inside (``doomed_fit_error``'s
    tentative fill): the plans of this search that held before hold after."""
    nodes = fw.snapshot.nodes
    order = search_rows(fw)
    before = int(nodes.row_generation[order].max()) if len(order) else 0
    yield
    name = search_key(fw)
    for key, (stamp, kept) in fw.doomed_plans.items():
        if key[0] == name and stamp >= before:
            fw.doomed_plans[key] = (nodes.generation, kept)


def _plan(fw: Runner, pods: list[PodInfo], min_count: int, scheduled0: int) -> DoomedPass | None:
    # the pass reaches minCount exactly when the cluster takes minCount - scheduled0 more pods
    found = capacity_below(fw, pods, min_count - scheduled0)
    if found is None:
        return None
    rows, per_row, ranked = found
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
    return DoomedPass(evaluated, placed, min(evaluated, capacity + 1), fill, ranked)
