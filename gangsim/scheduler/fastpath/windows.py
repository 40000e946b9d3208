"""A successful single-shape PodGroup pass on a big cluster, replayed on the windows its searches
reach (``FastPath.counted_windows``), without a Filter and Score pass per pod.

Each pod's search starts at the rotating start index, keeps the first numFeasibleNodesToFind (T)
feasible rows it meets and stops at the (T+1)-th, where the next search starts
(``Framework.find_nodes_that_fit``). So the k searches of a pass find, in rotation order from
the pass's start, the feasible rows [0, T), [T, 2T), … [(k-1)T, kT), each stopping at the next
one, as long as the (kT+1)-th feasible row comes before the rotation is round: no search then
evaluates a row an earlier search of the pass took. Such a row is the only one the pass changes,
so every row a search evaluates has the Filter code and raw scores the pass's first pod sees
(its signature entry: they depend only on the row and the signature), provided the scorers that
read other rows (``SCORE_PER_ROW`` False) skip for the pod, which for a signable pod does not
depend on the pass's own pods (no pod affinity, no spread constraints; checked on the first pod).

Search i takes what ``Framework.score`` and ``select_host`` pick over its window's rows: the
greatest Σ weight × NormalizeScore (normalised over that window alone, or one value everywhere:
``SignatureEntry.const``), the least row of equal totals, or with ``--seed`` the RNG's draw among
them in search order, one draw per window with ties, in pod order as the pods' passes draw. One gather over the
rotation's first kT + 1 + n_failed rows and the k windows' scores as one (k, T) array replace k
searches and the k - 1 signature refreshes of the rows the pass took between them; the search
state (start index, rows evaluated, cache hits) moves as the k searches move it.

``counted.layout`` tries this on clusters of ``counted.MAX_ROWS`` nodes or more, where a
``rotation.Layout`` over every feasible row would cost more than the pass.
"""

from __future__ import annotations

import numpy as np

from gangsim.scheduler.fastpath import doomed
from gangsim.scheduler.fastpath.signatures import SignatureEntry
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.types import PodInfo


class Windows:
    """The pass's searches as far as Filter goes: ``found`` the kT rows its k searches find, in
    order (search i's are ``found[iT:(i+1)T]``), ``stops[j]`` the rotation offset from ``start``
    of the ((j+1)T+1)-th feasible row (where search j stops and search j+1 starts)."""

    __slots__ = ("entry", "start", "num_nodes", "to_find", "found", "stops")

    def __init__(self, entry: SignatureEntry, start: int, num_nodes: int, to_find: int, found: np.ndarray, stops: list[int]) -> None:
        self.entry = entry
        self.start = start
        self.num_nodes = num_nodes
        self.to_find = to_find
        self.found = found
        self.stops = stops


def plan(fw: doomed.Runner, pods: list[PodInfo]) -> Windows | None:
    """The windows of a pass of ``pods`` (one signature, none nominated: the caller's check)
    over every node, when its searches end within one rotation and the scores are the rows' own
    as above; None otherwise (the pass runs pod by pod)."""
    if fw.placement is not None or fw.signatures is None or fw.nominator.by_row:
        return None
    pod = pods[0]
    entry = fw.signatures.entry(pod)  # refreshed here as the first pod's search refreshes it
    if entry is None:
        return None
    nodes = fw.snapshot.nodes
    n = len(nodes.order)
    to_find = fw.num_feasible_nodes_to_find(n)
    k = len(pods)
    span = k * to_find
    if span >= n:
        return None  # the searches cannot end within one rotation
    start = fw.next_start_index % n
    if not entry.n_failed:  # every live row passes Filter: the windows are the rotation's first rows
        found = nodes.order2[start : start + span]
        stops = list(range(to_find, span + 1, to_find))
    else:
        # the (span+1)-th feasible row lies within the first span + 1 + n_failed rows of the
        # rotation (``search.window``'s bound, n_failed never undercounting), if within the ring
        rotated = nodes.order2[start : start + min(n, span + 1 + entry.n_failed)]
        positions = np.flatnonzero(entry.codes[rotated] == 0)
        if len(positions) <= span:
            return None  # a search would come round to the rows the pass took: pod by pod
        found = rotated[positions[:span]]
        stops = positions[to_find : span + 1 : to_find].tolist()
    state = CycleState()
    for i, (p, _) in enumerate(fw.scorers):
        if not p.SCORE_PER_ROW and fw.raw_scorers[i](state, pod, found[:to_find]) is not None:
            return None  # a score that counts the pods on other rows: the pass's own pods move it
    return Windows(entry, start, n, to_find, found, stops)


def searches(fw: doomed.Runner, w: Windows, count: int) -> list[int]:
    """The rows the pass's first ``count`` searches take, in order; the search state moves as
    theirs would."""
    to_find = w.to_find
    rows = w.found[: count * to_find]
    total: np.ndarray | int = 0
    entry = w.entry
    for i, (p, weight) in enumerate(fw.scorers):
        if not p.SCORE_PER_ROW:
            continue  # Skip (``plan``)
        const = entry.const[i]
        if const is not None:
            continue  # one value on every row: it moves no search's choice
        cached = entry.raw[i]
        if cached is None:
            continue  # Skip
        raw = cached[rows]
        if getattr(p, "NORMALIZE_PER_ROW", False):
            part = p.normalize(raw)
        else:  # NormalizeScore over each search's rows alone
            part = np.concatenate([p.normalize(raw[j : j + to_find]) for j in range(0, len(rows), to_find)])
        total = total + (part if weight == 1 else part * weight)
    if isinstance(total, int):
        totals = np.zeros((count, to_find), dtype=np.int64)
    else:
        totals = total.reshape(count, to_find)
    found = rows.reshape(count, to_find)
    # the greatest total of each window; ``select_host`` itself where that may not be the first
    # greatest: with ``--seed`` a window with ties (its RNG draw, pod by pod), otherwise the
    # window that wraps round the end of the node order (a window's rows are in rotation order,
    # which is ascending row order, ``NodeTable.order``, unless it wraps: the least row of equal
    # totals is then not the first)
    took = found[np.arange(count), totals.argmax(axis=1)]
    if fw.rng is not None:
        again = np.flatnonzero((totals == totals.max(axis=1)[:, None]).sum(axis=1) > 1)
    else:
        again = np.flatnonzero(found[:, 0] > found[:, -1])
    for j in again.tolist():
        took[j] = fw.select_host(found[j], totals[j])
    processed = w.stops[count - 1]  # the rows the ``count`` searches evaluated, together
    fw.next_start_index = (w.start + processed) % w.num_nodes
    fw.filter_rows_evaluated += processed
    fw.signatures.hits += count - 1  # type: ignore[union-attr]  # (``plan``'s entry counted the first)
    return took.tolist()
