"""One Filter/Score pass for the next pods of a ``PodRun`` (``FastPath.run_passes``, issue 16,
SB-50k): where each of them goes when the reference path schedules them pod by pod.

A run's pods are popped one after the other, each a pass that starts where the previous one
stopped (``nextStartNodeIndex``) and finds the first ``numFeasibleNodesToFind`` feasible rows of
the rotation (the (to_find+1)-th is where the next search starts). With a current signature entry
and every score a row's own (``rotation.row_totals``: per-row raw scores whose NormalizeScore is
elementwise or one value everywhere, every other scorer Skips), the searches of ``m`` pods are
consecutive blocks of ``to_find`` feasible rows in one lap of the rotation: pod ``i`` looks at
block ``i`` only, and the binds of pods ``0..i-1`` changed rows of earlier blocks only (a bind
changes its own row). So one look at the first ``m × to_find + 1`` feasible rows gives every
pod's search: its block, its best total (``select_host``: highest total, then the least row, or
with ``--seed`` the run's RNG draw among the ties, drawn when that pod is placed, as the
reference path draws it), where the search state moves, and how many rows it evaluated.

The binds stay pod by pod (the same queue moves, events and records); between them
``RunPass.still_holds`` checks that the bind changed nothing but its own row and the run is still
the queue's next entity, and the pass stops there otherwise (the next pod gets its own pass).

What the reference path counts is counted alike (rows evaluated, the signature cache's hit per
pass); ``filter_rows_computed`` is work: the rows the pods took are refreshed when the next pass
asks, so the last pass's rows may never be.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from gangsim.scheduler.fastpath import rotation
from gangsim.scheduler.fastpath.signatures import SignatureCache
from gangsim.scheduler.framework.handle import Nominator
from gangsim.scheduler.framework.interface import Placement
from gangsim.scheduler.framework.types import NO_NODE, PodInfo

MIN_PODS = 2  # a pass for fewer pods is the ordinary one


class Runner(rotation.Runner, Protocol):
    nominator: Nominator
    rng: np.random.Generator | None
    signatures: SignatureCache | None
    placement: Placement | None
    reserve_plugins: list
    permit_plugins: list
    recorder: object
    next_start_index: int
    filter_rows_evaluated: int

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int: ...

    def select_host(self, rows: np.ndarray, scores: np.ndarray) -> int: ...


class RunPass:
    """The searches of the first ``size`` pods of a run, applied pod by pod with ``take``."""

    __slots__ = ("fw", "size", "n", "start", "stops", "rows", "totals", "picks", "touched", "epoch", "static", "taken")

    def __init__(self, fw: Runner, n: int, start: int, stops: list[int], rows: np.ndarray, totals: np.ndarray | None) -> None:
        self.fw = fw
        self.size = len(stops)
        self.n = n
        self.start = start  # the rotation's start; ``stops[i]``: where pod i's search stops, from it
        self.stops = stops
        self.rows = rows  # (size, to_find): each pod's block of feasible rows in search order
        self.totals = totals  # the same shape: their score totals (None: to_find == 1, no Score)
        self.picks: list[int] | None = None  # each pod's row when no pod draws (no RNG, or no ties)
        nodes = fw.snapshot.nodes
        self.touched = len(nodes.touched)
        self.epoch = nodes.touch_epoch
        self.static = (nodes.static_generation, len(nodes.names))
        self.taken: set[int] = set()
        if totals is None:
            self.picks = rows[:, 0].tolist()
        elif fw.rng is None:  # the least row among each block's best totals
            best = totals == totals.max(axis=1)[:, None]
            self.picks = np.where(best, rows, np.iinfo(np.int64).max).min(axis=1).tolist()

    def take(self, i: int) -> int:
        """Pod ``i``'s search as the pass would run it: the search state moves (start index, rows
        evaluated, the signature cache's hit), the RNG draws for ties; returns its row."""
        fw = self.fw
        before = self.stops[i - 1] if i else 0
        fw.next_start_index = (self.start + self.stops[i]) % self.n
        fw.filter_rows_evaluated += self.stops[i] - before
        if i:
            fw.signatures.hits += 1  # type: ignore[union-attr]  # its pass's refresh of the last bind's row counts one
        if self.picks is not None:
            row = self.picks[i]
        else:  # ``Framework.select_host`` with the run's RNG
            row = fw.select_host(self.rows[i], self.totals[i])  # type: ignore[index]
        self.taken.add(row)
        return row

    def still_holds(self, pod: PodInfo) -> bool:
        """After the binds so far: the next search is still the planned one for ``pod`` — only
        the bound rows changed in the node table, no pod is nominated, none carries pod
        (anti-)affinity."""
        fw = self.fw
        nodes = fw.snapshot.nodes
        if nodes.touch_epoch != self.epoch or (nodes.static_generation, len(nodes.names)) != self.static:
            return False
        if not self.taken.issuperset(nodes.touched[self.touched :]):
            return False
        return pod.nominated_row == NO_NODE and not fw.nominator.by_row and not fw.snapshot.affinity_pods


def plan(fw: Runner, pods: list[PodInfo]) -> RunPass | None:
    """The searches of the first pods of ``pods`` (a run: one spec, queued one after the other)
    in one look, or None when the pass is not one (then nothing is changed or counted)."""
    cache = fw.signatures
    if cache is None or fw.placement is not None or fw.recorder is not None or fw.nominator.by_row:
        return None
    if fw.reserve_plugins or fw.permit_plugins:  # the binds between the searches must be plain
        return None
    nodes = fw.snapshot.nodes
    n = len(nodes.order)
    to_find = fw.num_feasible_nodes_to_find(n) if n else 0
    most = 0  # pods whose searches fit in one lap, if every row were feasible; each not nominated
    while most < len(pods) and (most + 1) * to_find < n and pods[most].nominated_row == NO_NODE:
        most += 1
    if most < MIN_PODS:
        return None
    entry = cache.entry(pods[0])
    if entry is None:
        return None
    if n - entry.n_failed <= MIN_PODS * to_find:  # too few feasible rows anywhere for MIN_PODS searches (m below)
        cache.hits -= 1  # (as below: the pass that runs instead counts its own hit)
        return None
    start = fw.next_start_index % n
    rotated = nodes.order2[start : start + min(n, most * to_find + 1 + entry.n_failed)]
    feasible = np.flatnonzero(entry.codes[rotated] == 0)
    m = min(most, (len(feasible) - 1) // to_find)
    rows = rotated[feasible[: m * to_find]]
    totals = rotation.row_totals(fw, entry, pods[0], rows, {}) if m >= MIN_PODS and to_find > 1 else None
    if m < MIN_PODS or (to_find > 1 and totals is None):
        cache.hits -= 1  # the pass that runs instead asks again (the entry is current then) and counts its own hit
        return None
    stops = feasible[to_find : (m + 1) * to_find : to_find].tolist()
    return RunPass(fw, n, start, stops, rows.reshape(m, to_find), None if totals is None else totals.reshape(m, to_find))
