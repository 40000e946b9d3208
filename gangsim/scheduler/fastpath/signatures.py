"""KEP-5598 opportunistic batching, generalised: for a signable pod the Filter code and the raw
score of every row depend only on that row and the pod's signature
(``framework/runtime/batch.go``'s ``SignPlugin``). They are kept per signature and recomputed
only for rows whose generation moved since, so consecutive pods of one shape cost O(changed
rows). The runtime runs the same rotation, node count and normalisation on top, so a cached
result is by construction the uncached one.

Not used while any assigned pod carries pod (anti-)affinity: rows then depend on each other.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import SnapshotView
from gangsim.scheduler.framework.interface import ScorePlugin
from gangsim.scheduler.framework.types import PodInfo

MAX_ENTRIES = 4096
MAX_LOGGED = 64  # refresh from the node table's change log up to this many touched rows


class Runner(Protocol):
    """The runtime calls a refresh makes (``framework.runtime.Framework``)."""

    scorers: list[tuple[ScorePlugin, int]]
    raw_scorers: list  # per scorer: (state, pod, rows) -> raw scores or None (Skip)

    def run_filters(self, state: CycleState, pod: PodInfo, rows: np.ndarray, *, nominated: bool = True) -> tuple[np.ndarray, np.ndarray]: ...


class SignatureEntry:
    """Per-row Filter codes and raw scores of one pod signature, as of node-table ``generation``."""

    __slots__ = ("generation", "static_generation", "rows", "codes", "plugin", "raw", "log_pos", "log_epoch", "n_failed", "capacity")

    def __init__(self) -> None:
        self.n_failed = 0  # live rows whose Filter code is not Success
        self.log_pos = 0
        self.log_epoch = -1
        self.generation = -1
        self.static_generation = -1
        self.rows = 0
        self.codes = np.zeros(0, dtype=np.int8)
        self.plugin = np.zeros(0, dtype=np.int8)
        self.raw: list[np.ndarray | None] = []
        # ``doomed.capacity_below``'s counts for the node table's generation: (generation, rows, per row)
        self.capacity: tuple[int, np.ndarray, np.ndarray] | None = None


class SignatureCache:
    def __init__(self, snapshot: SnapshotView, runner: Runner) -> None:
        self.snapshot = snapshot
        self.runner = runner
        self._entries: dict[tuple, SignatureEntry] = {}
        self.hits = 0  # pods served from their signature's cache (scheduler_batch_attempts_total)

    def entry(self, pod: PodInfo) -> SignatureEntry | None:
        """The entry for ``pod``, refreshed for the rows that changed; None when the pod is
        unsignable or pod affinity anywhere makes rows depend on each other."""
        if not pod.signature or self.snapshot.affinity_pods:
            return None
        nodes = self.snapshot.nodes
        n = len(nodes.names)
        entry = self._entries.get(pod.signature)
        if entry is None:
            if len(self._entries) > MAX_ENTRIES:
                self._entries.clear()
            entry = self._entries[pod.signature] = SignatureEntry()
        scorers = self.runner.scorers
        raw_scorers = self.runner.raw_scorers
        if entry.static_generation != nodes.static_generation or entry.rows != n:
            changed = np.arange(n, dtype=np.int64)
            entry.codes = np.zeros(n, dtype=np.int8)
            entry.plugin = np.zeros(n, dtype=np.int8)
            entry.raw = [None if not p.SCORE_PER_ROW else np.zeros(n, dtype=np.int64) for p, _ in scorers]
            entry.rows = n
            entry.static_generation = nodes.static_generation
        elif entry.generation == nodes.generation:
            self.hits += 1
            return entry
        elif entry.log_epoch == nodes.touch_epoch and len(nodes.touched) - entry.log_pos <= MAX_LOGGED:
            # rows touched since the last refresh, from the node table's change log
            changed = np.array(sorted(set(nodes.touched[entry.log_pos :])), dtype=np.int64)  # few ints: cheaper than np.unique
            self.hits += 1
        else:
            changed = np.flatnonzero(nodes.row_generation[:n] > entry.generation)
            self.hits += 1
        full = len(changed) == n
        if len(changed):
            codes, plugin = self.runner.run_filters(CycleState(), pod, changed, nominated=False)
            if not full:
                entry.n_failed -= int(np.count_nonzero(entry.codes[changed]))
                entry.n_failed += int(np.count_nonzero(codes))
            entry.codes[changed] = codes
            entry.plugin[changed] = plugin
            if full:
                entry.n_failed = int(np.count_nonzero(entry.codes[nodes.order]))
            state = CycleState()
            for i, (p, _) in enumerate(scorers):
                if not p.SCORE_PER_ROW:
                    continue
                raw = raw_scorers[i](state, pod, changed)
                if raw is None:
                    entry.raw[i] = None  # Skip is a property of the signature, not of rows
                elif entry.raw[i] is not None:
                    entry.raw[i][changed] = raw  # type: ignore[index]
        entry.generation = nodes.generation
        entry.log_pos = len(nodes.touched)
        entry.log_epoch = nodes.touch_epoch
        return entry
