"""The framework runtime of one profile: runs Filter over node rows, Score over feasible rows,
and picks the host (kube's ``framework/runtime/framework.go`` + ``schedule_one.go`` helpers).

Determinism: Filter runs over every live row at once (numpy), then keeps what the serial,
rotating search of ``findNodesThatPassFilters`` would keep: rows in ``next_start_index``
rotation, the first ``num_feasible_nodes_to_find`` feasible ones. Equal best scores go to the
node listed first in the trace (or a seeded random choice among them with ``--seed``).

Speed (opportunistic batching, KEP-5598, generalised): for a signable pod, the Filter code and
the raw score of every row depend only on that row and the pod's signature. They are kept per
signature and recomputed only for rows whose generation moved since, so consecutive pods of the
same shape cost O(changed rows). The same rotation, node count and normalisation run on top, so
a cached result is by construction the uncached one (a test replays with the cache off).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gangsim.api.config import Profile, SchedulerConfig
from gangsim.scheduler.cache.snapshot import Snapshot
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.interpodaffinity import InterPodAffinity
from gangsim.scheduler.plugins.nodeaffinity import NodeAffinity
from gangsim.scheduler.plugins.nodename import NodeName
from gangsim.scheduler.plugins.noderesources import BalancedAllocation, NodeResourcesFit
from gangsim.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from gangsim.scheduler.plugins.tainttoleration import TaintToleration

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SignatureEntry:
    """Per-row Filter codes and raw scores of one pod signature, as of node-table ``generation``."""

    __slots__ = ("generation", "static_generation", "rows", "codes", "plugin", "raw", "log_pos", "log_epoch", "n_failed")

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


@dataclass(slots=True)
class ScheduleResult:
    suggested_row: int
    evaluated_nodes: int
    feasible_nodes: int


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind`` (SEMANTICS §2.2)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def apply_filters(plugins: list, base: int, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> None:
    """Run ``plugins`` in order on the rows still passing; record the first failure of each row
    (code, and the failing plugin's index offset by ``base``), as RunFilterPlugins stops at it."""
    for j, p in enumerate(plugins):
        todo = np.flatnonzero(codes == 0)
        if len(todo) == 0:
            return
        c = p.filter(state, pod, rows[todo])
        failed = c != 0
        codes[todo[failed]] = c[failed]
        plugin[todo[failed]] = base + j


class Framework:
    def __init__(self, profile: Profile, config: SchedulerConfig, snapshot: Snapshot, rng: np.random.Generator | None) -> None:
        self.profile = profile
        self.config = config
        self.snapshot = snapshot
        self.rng = rng
        self.fit = NodeResourcesFit(snapshot, profile.scoring_strategy)
        self.inter_pod_affinity = InterPodAffinity(snapshot, profile.hard_pod_affinity_weight)
        taint = TaintToleration(snapshot)
        affinity = NodeAffinity(snapshot)
        all_filters = [NodeUnschedulable(snapshot), NodeName(snapshot), taint, affinity, self.fit, self.inter_pod_affinity]
        self.static_filters = [p for p in all_filters if p.STATIC and p.NAME not in profile.disabled_filters]
        self.dynamic_filters = [p for p in all_filters if not p.STATIC and p.NAME not in profile.disabled_filters]
        self.filter_names = [p.NAME for p in self.static_filters + self.dynamic_filters]
        candidates = {
            names.TAINT_TOLERATION: taint,
            names.NODE_AFFINITY: affinity,
            names.NODE_RESOURCES_FIT: self.fit,
            names.INTER_POD_AFFINITY: self.inter_pod_affinity,
            names.NODE_RESOURCES_BALANCED_ALLOCATION: BalancedAllocation(snapshot, profile.balanced_resources),
        }
        self.scorers = [(candidates[n], w) for n, w in profile.score_weights.items() if w > 0 and n in candidates]
        dynamic = {p.NAME for p in self.dynamic_filters}
        self._capacity_is_resource_fit = names.NODE_RESOURCES_FIT in dynamic and dynamic <= {names.NODE_RESOURCES_FIT, names.INTER_POD_AFFINITY}
        self.next_start_index = 0
        self._static_cache: dict[tuple, tuple[int, np.ndarray, np.ndarray]] = {}
        self._signatures: dict[tuple, SignatureEntry] = {}
        self.batching = config.opportunistic_batching
        # instrumentation, a non-timing guard against O(nodes × pods) paths: rows Filter looked
        # at as upstream would (evaluated) and rows the plugins actually computed (computed)
        self.filter_rows_evaluated = 0
        self.filter_rows_computed = 0
        self.batch_hits = 0  # pods served from their signature's cache (scheduler_batch_attempts_total)
        self.percentage = profile.percentage_of_nodes_to_score if profile.percentage_of_nodes_to_score is not None else config.percentage_of_nodes_to_score

    # ---- Filter ------------------------------------------------------------------------------
    def _static_codes(self, pod: PodInfo) -> tuple[np.ndarray, np.ndarray]:
        """Codes and first-failing-plugin index over *all* rows, cached per static signature."""
        nodes = self.snapshot.nodes
        key = pod.static_key
        hit = self._static_cache.get(key)
        if hit is not None and hit[0] == nodes.static_generation and len(hit[1]) >= len(nodes.names):
            return hit[1], hit[2]
        n = len(nodes.names)
        rows = np.arange(n, dtype=np.int64)
        codes = np.zeros(n, dtype=np.int8)
        plugin = np.full(n, -1, dtype=np.int8)
        apply_filters(self.static_filters, 0, CycleState(), pod, rows, codes, plugin)
        if len(self._static_cache) > 4096:
            self._static_cache.clear()
        self._static_cache[key] = (nodes.static_generation, codes, plugin)
        return codes, plugin

    def run_filters(self, state: CycleState, pod: PodInfo, rows: np.ndarray, *, nominated: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Codes and failing plugin index (into ``filter_names``) for ``rows``.

        With ``nominated``, rows hosting nominated pods of priority >= the pod's are checked
        both without and with those pods (``RunFilterPluginsWithNominatedPods``).
        """
        self.filter_rows_computed += len(rows)
        s_codes, s_plugin = self._static_codes(pod)
        codes = s_codes[rows]
        plugin = s_plugin[rows]
        base = len(self.static_filters)
        if len(rows) == 1:
            # the common refresh of a signature cache: one row changed by the last bind
            if codes[0] == 0:
                for j, p in enumerate(self.dynamic_filters):
                    c = p.filter(state, pod, rows)
                    if c[0] != 0:
                        codes[0] = c[0]
                        plugin[0] = base + j
                        break
        else:
            apply_filters(self.dynamic_filters, base, state, pod, rows, codes, plugin)
        if nominated and self.nominator is not None:
            self._filter_with_nominated(state, pod, rows, codes, plugin)
        return codes, plugin

    nominator = None  # set by the scheduler: an object with ``pods_for_row(row)``

    def _filter_with_nominated(self, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> None:
        nominated_rows = self.nominator.rows()
        if not nominated_rows:
            return
        position = {int(r): i for i, r in enumerate(rows.tolist())} if len(nominated_rows) * 8 > len(rows) else None
        base = len(self.static_filters)
        for row in nominated_rows:
            if position is not None:
                i = position.get(row)
                if i is None:
                    continue
            else:
                hits = np.flatnonzero(rows == row)
                if len(hits) == 0:
                    continue
                i = int(hits[0])
            if codes[i] != 0:
                continue
            extra = [(q, row) for q in self.nominator.pods_for_row(row) if q.uid != pod.uid and q.priority >= pod.priority and q.node_row == NO_NODE]
            if not extra:
                continue
            with self.snapshot.with_pods(extra):
                st = CycleState()
                one = np.array([row], dtype=np.int64)
                for j, p in enumerate(self.dynamic_filters):
                    c = p.filter(st, pod, one)
                    if c[0] != 0:
                        codes[i] = c[0]
                        plugin[i] = base + j
                        failed = state.read("failed_with_nominated")
                        if failed is None:
                            failed = set()
                            state.write("failed_with_nominated", failed)
                        failed.add(row)
                        break

    def filter_reasons(self, state: CycleState, pod: PodInfo, row: int, plugin_index: int) -> tuple[str, ...]:
        plugins = self.static_filters + self.dynamic_filters
        p = plugins[plugin_index]
        reasons = p.reasons(state, pod, row)
        if not reasons and self.nominator is not None:
            # failed only with nominated pods added: render the reason with them present
            extra = [(q, row) for q in self.nominator.pods_for_row(row) if q.uid != pod.uid and q.priority >= pod.priority and q.node_row == NO_NODE]
            with self.snapshot.with_pods(extra):
                reasons = p.reasons(CycleState(), pod, row)
        return reasons

    def diagnose(self, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> Diagnosis:
        """The FitError diagnosis of the evaluated ``rows``: reasons counted per plugin in bulk."""
        failed = np.flatnonzero(codes != 0)
        d = Diagnosis(rows=rows[failed].copy(), codes=codes[failed].copy())
        if len(failed) == 0:
            return d
        plugins = self.static_filters + self.dynamic_filters
        fplugin = plugin[failed]
        frows = rows[failed]
        with_nominated = state.read("failed_with_nominated") or set()
        hist = d.histogram
        for pi in sorted(set(fplugin.tolist())):
            p = plugins[pi]
            d.unschedulable_plugins.add(p.NAME)
            prow = frows[fplugin == pi]
            if with_nominated:
                special = np.array([r in with_nominated for r in prow.tolist()], dtype=bool)
                for r in prow[special].tolist():
                    for reason in self.filter_reasons(state, pod, r, pi):
                        hist[reason] = hist.get(reason, 0) + 1
                prow = prow[~special]
            if len(prow) == 0:
                continue
            bulk = getattr(p, "reason_counts", None)
            counts = bulk(state, pod, prow) if bulk is not None else None
            if counts is None:
                counts = {}
                for r in prow.tolist():
                    for reason in p.reasons(state, pod, r):
                        counts[reason] = counts.get(reason, 0) + 1
            for reason, n in counts.items():
                hist[reason] = hist.get(reason, 0) + n

        def row_status(row: int, code: Code, _state=state, _pod=pod) -> Status:
            i = int(np.flatnonzero(rows == row)[0])
            pi = int(plugin[i])
            return Status(code, self.filter_reasons(_state, _pod, row, pi), self.filter_names[pi])

        d.row_status = row_status
        return d

    def signature_entry(self, pod: PodInfo) -> SignatureEntry | None:
        """The per-signature cache for ``pod``, refreshed for the rows that changed; None when
        the pod is unsignable or pod affinity anywhere makes rows depend on each other."""
        if not self.batching or not pod.signature or self.snapshot.affinity_pods:
            return None
        nodes = self.snapshot.nodes
        n = len(nodes.names)
        entry = self._signatures.get(pod.signature)
        if entry is None:
            if len(self._signatures) > 4096:
                self._signatures.clear()
            entry = self._signatures[pod.signature] = SignatureEntry()
        if entry.static_generation != nodes.static_generation or entry.rows != n:
            changed = np.arange(n, dtype=np.int64)
            entry.codes = np.zeros(n, dtype=np.int8)
            entry.plugin = np.zeros(n, dtype=np.int8)
            entry.raw = [None if not p.PER_ROW else np.zeros(n, dtype=np.int64) for p, _ in self.scorers]
            entry.rows = n
            entry.static_generation = nodes.static_generation
        elif entry.generation == nodes.generation:
            self.batch_hits += 1
            return entry
        elif entry.log_epoch == nodes.touch_epoch and len(nodes.touched) - entry.log_pos <= 64:
            # rows touched since the last refresh, from the node table's change log
            changed = np.array(sorted(set(nodes.touched[entry.log_pos :])), dtype=np.int64)  # ≤ 64 ints: cheaper than np.unique
            self.batch_hits += 1
        else:
            changed = np.flatnonzero(nodes.row_generation[:n] > entry.generation)
            self.batch_hits += 1
        full = len(changed) == n
        if len(changed):
            codes, plugin = self.run_filters(CycleState(), pod, changed, nominated=False)
            if not full:
                entry.n_failed -= int(np.count_nonzero(entry.codes[changed]))
                entry.n_failed += int(np.count_nonzero(codes))
            entry.codes[changed] = codes
            entry.plugin[changed] = plugin
            if full:
                entry.n_failed = int(np.count_nonzero(entry.codes[nodes.order]))
            state = CycleState()
            for i, (p, _) in enumerate(self.scorers):
                if not p.PER_ROW:
                    continue
                raw = p.score(state, pod, changed)
                if raw is None:
                    entry.raw[i] = None  # Skip is a property of the signature, not of rows
                elif entry.raw[i] is not None:
                    entry.raw[i][changed] = raw  # type: ignore[index]
        entry.generation = nodes.generation
        entry.log_pos = len(nodes.touched)
        entry.log_epoch = nodes.touch_epoch
        return entry

    def find_nodes_that_fit(self, state: CycleState, pod: PodInfo) -> tuple[np.ndarray, Diagnosis]:
        """Feasible rows in evaluation order, and the diagnosis of the evaluated failures."""
        order = self.snapshot.nodes.order
        n = len(order)
        if n == 0:
            return np.zeros(0, dtype=np.int64), Diagnosis()
        # SEMANTICS §3 step 2: a nominated node is tried first and used if it passes
        nominated = pod.nominated_row
        if nominated != NO_NODE and self.snapshot.nodes.alive[nominated]:
            one = np.array([nominated], dtype=np.int64)
            codes, _ = self.run_filters(state, pod, one)
            if codes[0] == 0:
                return one, Diagnosis()
        to_find = num_feasible_nodes_to_find(self.percentage, n)
        start = self.next_start_index % n
        rotated = self.snapshot.nodes.order2[start : start + n]  # a view: order from ``start`` on, wrapped
        entry = self.signature_entry(pod)
        state.write("signature", entry)
        plugin: np.ndarray | None = None
        if entry is not None:
            if self.nominator is not None and self.nominator.rows():
                codes = entry.codes[rotated]
                plugin = entry.plugin[rotated]
                self._filter_with_nominated(state, pod, rotated, codes, plugin)
            else:
                # the search ends at the (to_find+1)-th feasible row, within to_find + 1 + n_failed
                window = min(n, to_find + 1 + entry.n_failed)
                rotated = rotated[:window]
                codes = entry.codes[rotated]
        else:
            codes, plugin = self.run_filters(state, pod, rotated)
        feasible_pos = np.flatnonzero(codes == 0)
        if len(feasible_pos) > to_find:
            # findNodesThatPassFilters stops at the (to_find+1)-th feasible node: it is neither
            # kept nor counted, the failures before it are (processedNodes)
            processed = int(feasible_pos[to_find])
            feasible_pos = feasible_pos[:to_find]
        else:
            processed = n
        self.next_start_index = (start + processed) % n
        self.filter_rows_evaluated += processed
        if len(feasible_pos):
            return rotated[feasible_pos], Diagnosis()  # the failures' reasons are never shown
        evaluated = rotated[:processed]
        codes = codes[:processed]
        if plugin is None:
            if not codes.any():
                return rotated[feasible_pos], Diagnosis()
            plugin = entry.plugin[evaluated]  # type: ignore[union-attr]
        d = self.diagnose(state, pod, evaluated, codes, plugin[:processed])
        return rotated[feasible_pos], d

    # ---- Score -------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        """Σ weight × NormalizeScore(raw) over ``rows`` (the feasible nodes)."""
        total = np.zeros(len(rows), dtype=np.int64)
        entry: SignatureEntry | None = state.read("signature")
        for i, (p, weight) in enumerate(self.scorers):
            if entry is not None and p.PER_ROW:
                cached = entry.raw[i]
                raw = None if cached is None else cached[rows]
            else:
                raw = p.score(state, pod, rows)
            if raw is not None:
                total += p.normalize(raw) * weight
        return total

    def select_host(self, rows: np.ndarray, scores: np.ndarray) -> int:
        best = scores.max()
        ties = rows[scores == best]
        if len(ties) == 1:
            return int(ties[0])
        if self.rng is not None:
            return int(ties[int(self.rng.integers(len(ties)))])
        return int(ties.min())  # earliest node in the trace's node order

    def schedule_pod(self, state: CycleState, pod: PodInfo) -> tuple[ScheduleResult | None, Diagnosis]:
        feasible, diagnosis = self.find_nodes_that_fit(state, pod)
        if len(feasible) == 0:
            return None, diagnosis
        if len(feasible) == 1:
            return ScheduleResult(int(feasible[0]), 1 + len(diagnosis.rows), 1), diagnosis
        scores = self.score(state, pod, feasible)
        return ScheduleResult(self.select_host(feasible, scores), len(feasible) + len(diagnosis.rows), len(feasible)), diagnosis

    # ---- whole-cluster capacity ----------------------------------------------------------------
    def capacity_below(self, pod: PodInfo, enough: int) -> int | None:
        """How many pods shaped like ``pod`` the live nodes can still take, when that is fewer
        than ``enough``, known without running Filter pod by pod, and when placing them one at a
        time would leave the rotating start index where it is (every search scans all nodes: no
        more feasible nodes than ``numFeasibleNodesToFind``). None otherwise.

        Exact because, with no pod affinity and no nominated pods in play, a node's feasibility
        is its signature's Filter code, and each pod placed on a feasible node lowers the number
        of such pods that node can still take by exactly one, whatever the order."""
        if not self._capacity_is_resource_fit or self.rng is not None or not len(pod.fit_cols):
            return None
        if pod.nominated_row != NO_NODE or (self.nominator is not None and self.nominator.rows()):
            return None
        entry = self.signature_entry(pod)  # refreshed here as the pass itself would refresh it
        if entry is None:
            return None
        order = self.snapshot.nodes.order
        if not len(order) or len(order) - entry.n_failed >= enough:
            return None  # (n_failed never undercounts: at least that many feasible nodes)
        rows = order[entry.codes[order] == 0]
        if len(rows) >= enough or len(rows) > num_feasible_nodes_to_find(self.percentage, len(order)):
            return None  # (every feasible node takes at least one pod)
        free = self.snapshot.nodes.free[rows][:, pod.fit_cols]
        capacity = int((free // pod.fit_amounts).min(axis=1).sum())  # fit_amounts > 0
        return capacity if capacity < enough else None

    def account_full_scans(self, pods: int) -> None:
        """What ``pods`` Filter passes over every node do to the search state (see above)."""
        if pods:
            n = len(self.snapshot.nodes.order)
            self.next_start_index %= n  # (start + n) % n
            self.filter_rows_evaluated += pods * n

    def fits_on(self, state: CycleState, pod: PodInfo, row: int) -> bool:
        """Filter (with nominated pods) on one row: preemption's re-checks."""
        codes, _ = self.run_filters(state, pod, np.array([row], dtype=np.int64))
        return codes[0] == 0

    def filter_status_on(self, state: CycleState, pod: PodInfo, row: int) -> tuple[Code, tuple[str, ...], str]:
        codes, plugin = self.run_filters(state, pod, np.array([row], dtype=np.int64))
        if codes[0] == 0:
            return Code.SUCCESS, (), ""
        pi = int(plugin[0])
        return Code(int(codes[0])), self.filter_reasons(state, pod, row, pi), self.filter_names[pi]
