"""A single-shape PodGroup pass replayed on row positions: where its searches leave the
rotating start index and which row each pod takes.

``findNodesThatPassFilters`` stops at the (numFeasibleNodesToFind+1)-th feasible row and the next
search starts there, so with more feasible rows than that the start index a pass leaves behind
depends on which row each pod took. That is known without running Filter and Score pod by pod
when every row's total score is its own whatever other rows a search finds (every scorer's raw
score is the row's own, and its NormalizeScore is elementwise or sees one value everywhere): a
row's Filter code and total change only when it takes a pod, so with each row's total known for
0, 1, … of the group's pods on it, up to its capacity (``row_keys``; rows that take more than one
are scored again with tentative pods, taken back), each pod takes the best row (total desc, then
row: ``select_host``) among the rows its search finds (``replay``).

A stuck gang meets the same situation on an unchanged cluster again and again (a gang of 128
retried on 40 full blocks), so replays are kept by their inputs (a pure function: one table for
every framework).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from contextlib import ExitStack
from heapq import heapify, heappop, heapreplace
from itertools import count
from typing import Protocol, TypeVar

import numpy as np

from gangsim.scheduler.fastpath.signatures import SignatureEntry
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import SnapshotView
from gangsim.scheduler.framework.interface import ScorePlugin
from gangsim.scheduler.framework.types import PodInfo

T = TypeVar("T", int, np.ndarray)
MAX_ENTRIES = 4096
_numbers = count()
ROW_SPAN = 1 << 32  # rows are below it: ``sort_key`` packs (-total, row) into one int
MAX_RESCORED = 512  # pods a pass's rows take beyond their first: each costs a tentative placement
_replays: dict[tuple, tuple[int, int, tuple[int, ...]]] = {}  # inputs -> replay's result; pure, so shared
_layouts: dict[tuple, int] = {}  # (positions, keys) -> a number that names them in ``_replays``' keys


class Layout:
    """The feasible rows of a pass as ``replay`` needs them: positions in the search order
    (ascending), ``row_keys`` (no two positions share a key: ``sort_key`` includes the row), and
    ``ident``, the same number for the same contents (None: ``kept=False``, a layout unlikely to
    come again, whose replay is not kept)."""

    __slots__ = ("positions", "keys", "ident", "single")

    def __init__(self, positions: list[int], keys: list[tuple[int, ...]], *, kept: bool = True) -> None:
        self.positions = positions
        self.keys = keys
        self.single = max(map(len, keys), default=0) <= 1  # every row takes one pod (whole-node pods)
        self.ident: int | None = None
        if not kept:
            return
        content = (tuple(positions), tuple(keys))
        ident = _layouts.get(content)
        if ident is None:
            if len(_layouts) > MAX_ENTRIES:
                _layouts.clear()  # numbers are never reused: old replays just stop matching
            ident = _layouts[content] = next(_numbers)
        self.ident = ident


class Runner(Protocol):
    snapshot: SnapshotView
    scorers: list[tuple[ScorePlugin, int]]
    raw_scorers: list  # per scorer: (state, pod, rows) -> raw scores or None (Skip)


def row_totals(fw: Runner, entry: SignatureEntry | None, pod: PodInfo, rows: np.ndarray, constant: dict[int, int]) -> np.ndarray | None:
    """``Σ weight × NormalizeScore(raw)`` of ``rows`` as it is the same over any subset of rows a
    search may find, from the signature's cached raw scores (``entry``) or the plugins'; None
    when a scorer normalises over the found rows and does not see one value everywhere
    (``constant``: that value per scorer, fixed by the first call)."""
    total = np.zeros(len(rows), dtype=np.int64)
    for i, (p, weight) in enumerate(fw.scorers):
        if not p.SCORE_PER_ROW:
            if fw.raw_scorers[i](CycleState(), pod, rows) is not None:
                return None  # a live score that counts pods on other rows: the pass moves it
            continue
        if entry is not None:
            cached = entry.raw[i]
            value = entry.const[i] if entry.const else None
            if cached is not None and value is not None and len(rows):  # fast path (``FastPath.static_scores``): one raw value on every live row
                constant.setdefault(i, int(cached[rows[0]]))
                total += value * weight  # its one NormalizeScore, as ``Framework.score`` adds it
                continue
            raw = None if cached is None else cached[rows]
        else:
            raw = fw.raw_scorers[i](CycleState(), pod, rows)
        if raw is None:
            continue  # Skip: a property of the signature
        if not getattr(p, "NORMALIZE_PER_ROW", False):
            c = constant.setdefault(i, int(raw[0]))
            if bool((raw != c).any()):
                return None  # normalised over the found rows: a row's total depends on the others
        total += p.normalize(raw) * weight
    return total


def sort_key(total: T, row: T) -> T:
    """``select_host``'s order (total descending, then row) as one int: ``(-total, row)`` packed,
    compared at C speed by ``min`` and ``sorted``; elementwise over int64 arrays alike."""
    return -total * ROW_SPAN + row


def row_keys(fw: Runner, entry: SignatureEntry, pods: list[PodInfo], rows: np.ndarray, per_row: np.ndarray) -> list[tuple[int, ...]] | None:
    """Per feasible row, its ``sort_key`` with 0, 1, … of the pass's pods on it, up to its
    capacity; None when a total is not the row's own. A row that takes more than one pod is
    scored again with the pods on it, tentatively placed and taken off."""
    need = int((per_row - 1).sum())
    if need > MAX_RESCORED or need >= len(pods):
        return None
    constant: dict[int, int] = {}
    first = row_totals(fw, entry, pods[0], rows, constant)
    if first is None:
        return None
    most = int(per_row.max()) if len(per_row) else 1
    packed = sort_key(first, rows).tolist()
    if most <= 1:  # fast path: every row takes one pod, nothing to score again
        return [(key,) for key in packed]
    keys = [[key] for key in packed]
    spare = iter(pods[:need])  # the rows' k-th pod, placed round by round; the last pod is scored
    with ExitStack() as placed:
        for k in range(1, most):
            again = np.flatnonzero(per_row > k)
            placed.enter_context(fw.snapshot.with_pods([(next(spare), int(rows[i])) for i in again.tolist()]))
            totals = row_totals(fw, None, pods[-1], rows[again], constant)
            if totals is None:
                return None
            for i, t in zip(again.tolist(), totals.tolist()):
                keys[i].append(sort_key(int(t), int(rows[i])))
    return [tuple(k) for k in keys]


def replay(n: int, to_find: int, start: int, layout: Layout, searches: int) -> tuple[int, int, tuple[int, ...]]:
    """The start index after ``searches`` searches over a ring of ``n`` rows, the rows they
    evaluated and the positions they took (one per search that found a row), when the rows at
    ``layout.positions`` are the feasible ones, each search takes the row with the least key it
    finds (``layout.keys[i][j]``: row i's with j pods on it) and a row is full after
    ``len(keys[i])`` pods; a search that finds none scans the whole ring."""
    key = (n, to_find, start, searches, layout.ident)
    hit = _replays.get(key) if layout.ident is not None else None
    if hit is not None:
        return hit
    evaluated = 0
    took: list[int] = []
    for start, rows, pos in steps(n, to_find, start, layout, searches):
        evaluated += rows
        if pos >= 0:
            took.append(pos)
    if layout.ident is None:
        return start, evaluated, tuple(took)
    if len(_replays) > MAX_ENTRIES:
        _replays.clear()
    _replays[key] = (start, evaluated, tuple(took))
    return _replays[key]


def steps(n: int, to_find: int, start: int, layout: Layout, searches: int) -> Iterator[tuple[int, int, int]]:
    """``replay``'s searches one by one: per search, the start index it leaves, the rows it
    evaluated and the position it took (-1: none)."""
    live = list(layout.positions)
    now = [k[0] for k in layout.keys]  # each live position's key, in ``live``'s order
    at = dict(zip(now, live))  # key -> its position (keys name their row: no two rows share one)
    taken = dict.fromkeys(live, 0)
    key_of = dict(zip(live, layout.keys))
    done = 0
    while done < searches and len(live) > to_find:  # each stops at the (to_find+1)-th feasible row; the next starts there
        done += 1
        k = len(live)
        i = bisect_left(live, start)
        j = i + to_find
        found = now[i:j] if j < k else now[i:] + now[: j - k]
        stop = live[j] if j < k else live[j - k]
        evaluated = (stop - start) % n
        start = stop
        best = -1
        if found:
            best = at[min(found)]
            taken[best] += 1
            b = bisect_left(live, best)
            if taken[best] == len(key_of[best]):
                del live[b], now[b]
            else:
                now[b] = key = key_of[best][taken[best]]
                at[key] = best
        yield start, evaluated, best
    # the rest scan every row (rows only leave ``live``) and start where they started: each takes
    # the least key of all live rows, from a heap instead of a scan per pod
    if layout.single:  # fast path: each pops its row, so they take the live rows in key order
        ranked = sorted(now)
        for key in ranked[: searches - done]:
            yield start, n, at[key]
        for _ in range(searches - done - len(ranked)):
            yield start, n, -1
        return
    heap = list(zip(now, live))
    heapify(heap)
    for _ in range(searches - done):
        best = -1
        if heap:
            best = heap[0][1]
            taken[best] += 1
            if taken[best] == len(key_of[best]):
                heappop(heap)
            else:
                heapreplace(heap, (key_of[best][taken[best]], best))
        yield start, n, best
