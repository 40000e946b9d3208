"""KEP-5598 opportunistic batching, generalised: for a signable pod the Filter code and the raw
score of every row depend only on that row and the pod's signature
(``framework/runtime/batch.go``'s ``SignPlugin``). They are kept per signature and recomputed
only for rows whose generation moved since, so consecutive pods of one shape cost O(changed
rows). The runtime runs the same rotation, node count and normalisation on top, so a cached
result is by construction the uncached one.

Not used while any assigned pod carries pod (anti-)affinity: rows then depend on each other.

``FastPath.static_scores``: a scorer whose raw score reads only the node's static fields
(``SCORE_NODE_STATIC``: taints, labels, name) keeps the raw scores of the full refresh until the
node table's ``static_generation`` moves (which makes the next refresh a full one), so the
refreshes of rows a bind changed skip it. When its raw score is one value on every live row,
NormalizeScore over any of them is one value too (``SignatureEntry.const``: checked on one row
and on all of them), which ``Framework.score`` adds without a per-row array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import SnapshotView
from gangsim.scheduler.framework.interface import Code, ScorePlugin, Status
from gangsim.scheduler.framework.types import PodInfo

MAX_ENTRIES = 4096
MAX_LOGGED = 64  # refresh from the node table's change log up to this many touched rows
MAX_SCALAR = 16  # refresh up to this many changed rows on Python scalars (``Runner.row_refresh``; a run pass's 9 rows: 0.12 s less on SB-50k than numpy)


class Runner(Protocol):
    """The runtime calls a refresh makes (``framework.runtime.Framework``)."""

    scorers: list[tuple[ScorePlugin, int]]
    raw_scorers: list  # per scorer: (state, pod, rows) -> raw scores or None (Skip)
    row_raw_scorers: list  # per scorer: the same over a list of rows on Python scalars, or None
    row_refresh: bool  # ``FastPath.row_refresh`` and ``filter_row`` can run
    static_scorers: list[bool]  # per scorer: its raw score is kept until a static change (``FastPath.static_scores``)

    def run_filters(self, state: CycleState, pod: PodInfo, rows: np.ndarray, *, nominated: bool = True) -> tuple[np.ndarray, np.ndarray]: ...

    def filter_row(self, state: CycleState, pod: PodInfo, row: int) -> tuple[int, int]: ...


RowRawScore = Callable[[CycleState, PodInfo, list[int]], "list[int] | None"]


def row_raw_scorer(score_row: Callable[[CycleState, PodInfo, int], "int | None"], pre_score: Callable[[CycleState, PodInfo], Status | None] | None) -> RowRawScore:
    """A ``RowScorePlugin``'s raw scores of a list of rows on Python scalars, None when its
    PreScore (if it has one) or its Score says Skip (the runtime's raw score, row by row)."""

    def raw(state: CycleState, pod: PodInfo, rows: list[int]) -> list[int] | None:
        if pre_score is not None:
            status = pre_score(state, pod)
            if status is not None and status.code is Code.SKIP:
                return None
        out = [score_row(state, pod, r) for r in rows]
        return None if not out or out[0] is None else out  # type: ignore[return-value]

    return raw


class SignatureEntry:
    """Per-row Filter codes and raw scores of one pod signature, as of node-table ``generation``."""

    __slots__ = ("generation", "static_generation", "rows", "codes", "plugin", "raw", "const", "log_pos", "log_epoch", "n_failed")

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
        # per scorer: its NormalizeScore on every live row, when that is one value (a static
        # scorer whose raw score is one value everywhere, ``FastPath.static_scores``); else None
        self.const: list[int | None] = []


class SignatureCache:
    def __init__(self, snapshot: SnapshotView, runner: Runner) -> None:
        self.snapshot = snapshot
        self.runner = runner
        self._entries: dict[tuple, SignatureEntry] = {}
        self.hits = 0  # pods served from their signature's cache (scheduler_batch_attempts_total)

    def hit(self, pod: PodInfo) -> bool:
        """What ``entry`` counts when ``pod``'s entry is current (a hit, nothing refreshed);
        False, counting nothing, when it is not."""
        entry = self._entries.get(pod.signature)
        nodes = self.snapshot.nodes
        if entry is None or entry.generation != nodes.generation or entry.static_generation != nodes.static_generation or entry.rows != len(nodes.names):
            return False
        self.hits += 1
        return True

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
        static = entry.static_generation != nodes.static_generation or entry.rows != n
        if static:
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
            rows = sorted(set(nodes.touched[entry.log_pos :]))  # few ints: cheaper than np.unique
            self.hits += 1
            if self.runner.row_refresh and len(rows) <= MAX_SCALAR:  # fast path: the same, on scalars
                self._refresh_rows(entry, pod, rows, full=len(rows) == n)
                return self._stamp(entry)
            changed = np.array(rows, dtype=np.int64)
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
            kept = self.runner.static_scorers
            for i, (p, _) in enumerate(scorers):
                if not p.SCORE_PER_ROW or (kept[i] and not static):  # fast path: unchanged since the full refresh
                    continue
                raw = raw_scorers[i](state, pod, changed)
                if raw is None:
                    entry.raw[i] = None  # Skip is a property of the signature, not of rows
                elif entry.raw[i] is not None:
                    entry.raw[i][changed] = raw  # type: ignore[index]
        if static:
            entry.const = [self._const(p, entry.raw[i]) if kept_i else None for i, ((p, _), kept_i) in enumerate(zip(scorers, self.runner.static_scorers))]
        return self._stamp(entry)

    def _const(self, p: ScorePlugin, raw: np.ndarray | None) -> int | None:
        """NormalizeScore of ``raw`` on the live rows when it is one value, the same on one row as
        on all of them (so on any rows a search finds); None otherwise, or on Skip."""
        if raw is None:
            return None
        live = raw[self.snapshot.nodes.order]
        if not len(live) or bool((live != live[0]).any()):
            return None
        one = p.normalize(live[:1])
        every = p.normalize(live)
        value = int(one[0])
        return value if bool((every == value).all()) else None

    def _stamp(self, entry: SignatureEntry) -> SignatureEntry:
        """The entry is current for the node table as it is."""
        nodes = self.snapshot.nodes
        entry.generation = nodes.generation
        entry.log_pos = len(nodes.touched)
        entry.log_epoch = nodes.touch_epoch
        return entry

    def _refresh_rows(self, entry: SignatureEntry, pod: PodInfo, rows: list[int], *, full: bool) -> None:
        """``entry``'s refresh of a few ``rows`` (the array refresh above, row by row on Python
        scalars): a bind changes one row, and numpy's cost per call dominates on one-element
        arrays. Scorers without a one-row score run on an array of ``rows``."""
        runner = self.runner
        codes, plugin = entry.codes, entry.plugin
        state = CycleState()
        for row in rows:
            code, j = runner.filter_row(state, pod, row)
            if not full:
                entry.n_failed += (1 if code else 0) - (1 if codes[row] else 0)
            codes[row] = code
            plugin[row] = j
        if full:
            entry.n_failed = int(np.count_nonzero(codes[self.snapshot.nodes.order]))
        state = CycleState()
        kept = runner.static_scorers
        for i, (p, _) in enumerate(runner.scorers):
            if not p.SCORE_PER_ROW or kept[i]:  # fast path: unchanged since the full refresh
                continue
            row_raw = runner.row_raw_scorers[i]
            raw = runner.raw_scorers[i](state, pod, np.array(rows, dtype=np.int64)) if row_raw is None else row_raw(state, pod, rows)
            target = entry.raw[i]
            if raw is None:
                entry.raw[i] = None  # Skip is a property of the signature, not of rows
            elif target is not None:
                for row, value in zip(rows, raw):
                    target[row] = value
