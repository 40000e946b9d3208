"""The framework runtime of one profile (kube's ``framework/runtime/framework.go`` and the
``schedule_one.go`` helpers): builds one plugin list per extension point from the profile's
plugin names and a registry, runs each extension point, and is the ``Handle`` its plugins get.
It never names a plugin: what a plugin does comes from the Protocols it implements.

Reference path (every ``FastPath`` switch off): Filter runs the filter plugins in order over the
rows of the rotation; Score sums weight × NormalizeScore(raw) over the feasible rows.

Determinism: Filter runs over the rows at once (numpy), then keeps what the serial, rotating
search of ``findNodesThatPassFilters`` would keep: rows in ``next_start_index`` rotation, the
first ``num_feasible_nodes_to_find`` feasible ones. Equal best scores go to the node listed
first in the trace (or a seeded random choice among them with ``--seed``).

Speed: the shortcuts of :mod:`gangsim.scheduler.fastpath` plug in where marked, each behind its
own switch; with them on the same rows are kept, so the result is the reference one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import numpy as np

from gangsim.api.objects import PodDisruptionBudget
from gangsim.eventlog import EventLog
from gangsim.scheduler.fastpath import search
from gangsim.scheduler.fastpath.counted_searches import CountedSearches
from gangsim.scheduler.fastpath.repeat import RepeatedFailures
from gangsim.scheduler.fastpath.signatures import SignatureCache, row_raw_scorer
from gangsim.scheduler.fastpath.static_cache import StaticFilterCache
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import ClusterAPI, Handle, Nominator, SnapshotView, WaitingPods
from gangsim.scheduler.framework.interface import (  # fmt: skip
    EXTENSION_POINTS, CapacityPlugin, ClusterEvent, Code, EnqueueExtensions, FilterPlugin, Placement, PlacementGeneratePlugin, PlacementScorePlugin,
    PermitPlugin, PlacementFeasiblePlugin, Plugin, PodGroupPostFilterPlugin, PodGroupPostFilterResult, PostFilterPlugin, PostFilterResult,
    PreEnqueuePlugin, PreFilterPlugin, QueueSortPlugin, ReservePlugin, RowFilterPlugin, RowScorePlugin, ScorePlugin, Status, with_pre_score,
)
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis, GroupResult, Hierarchies, PluginArgs, PodGroupState, PodInfo, ScheduleResult

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
_FAILED_WITH_NOMINATED = "failed_with_nominated"
_SIGNATURE = "signature"
# the diagnosis of every search ``counted_searches`` replays: a placed pod's is never read
_PLACED = Diagnosis()


class Services(Protocol):
    """What the runtime borrows from the scheduler to be a Handle: the state every profile
    shares (``gangsim.scheduler.scheduler.Scheduler`` provides it)."""

    cluster: ClusterAPI
    snapshot: SnapshotView
    nominator: Nominator
    waiting_pods: WaitingPods
    log: EventLog
    rng: np.random.Generator | None
    hierarchy: Hierarchies | None

    def pod_group(self, key: str) -> PodGroupState | None: ...

    def pdbs(self) -> Iterator[PodDisruptionBudget]: ...

    def victim_priority(self, pod: PodInfo) -> int: ...

    def bump(self, *, release: bool = True) -> None: ...

    def activate(self, pods: list[PodInfo]) -> None: ...

    def activation_epoch(self) -> int | None: ...


RawScore = Callable[[CycleState, PodInfo, np.ndarray], "np.ndarray | None"]


class Recorder(Protocol):
    """What ``gangsim explain`` hangs on a Framework to see each real scheduling attempt of the pods
    it asks about (``wants``), with the snapshot as that attempt saw it. The scheduler sets
    ``active`` around real attempts only (never preemption's dry runs). None by default: a replay
    without explain does no per-node work for it."""

    active: bool

    def wants(self, pod: PodInfo) -> bool: ...

    def record(self, fw: "Framework", state: CycleState, pod: PodInfo, feasible: np.ndarray, diagnosis: Diagnosis, result: ScheduleResult | None) -> None: ...


GroupAlgorithm = Callable[["Framework", PodGroupState, list[PodInfo]], GroupResult]
Factory = Callable[[PluginArgs, Handle], Plugin]


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


class Framework(Handle):
    """One profile. ``plugins`` names the plugins per extension point (``EXTENSION_POINTS``
    keys); ``weights`` the score weights; ``group_algorithm`` is the PodGroup pass that
    workload-aware preemption re-runs (``Handle.run_pod_group_algorithm``)."""

    def __init__(
        self,
        plugins: Mapping[str, tuple[str, ...]],
        weights: Mapping[str, int],
        args: PluginArgs,
        services: Services,
        registry: Mapping[str, Factory],
        group_algorithm: GroupAlgorithm,
        placement_weights: Mapping[str, int] | None = None,
    ) -> None:
        self.args = args
        self.profile = args.profile
        self._group_algorithm = group_algorithm
        # the Handle's shared parts
        self.cluster: ClusterAPI = services.cluster
        self.snapshot: SnapshotView = services.snapshot
        self.nominator: Nominator = services.nominator
        self.waiting_pods: WaitingPods = services.waiting_pods
        self.log: EventLog = services.log
        self.rng = services.rng
        self.hierarchy = services.hierarchy
        self.pod_group = services.pod_group  # type: ignore[method-assign]  # the shared state's, bound
        self.pdbs = services.pdbs  # type: ignore[method-assign]
        self.victim_priority = services.victim_priority  # type: ignore[method-assign]
        self.bump = services.bump  # type: ignore[method-assign]
        self.activate = services.activate  # type: ignore[method-assign]
        self.activation_epoch = services.activation_epoch  # type: ignore[method-assign]
        # one instance per plugin name, shared by every extension point it is enabled at
        instances: dict[str, Plugin] = {}
        lists: dict[str, list] = {}
        for point, names in plugins.items():
            protocol = EXTENSION_POINTS[point]
            for name in names:
                if name not in registry:
                    raise ValueError(f"plugin {name!r} is not registered")
                plugin = instances.get(name)
                if plugin is None:
                    plugin = instances[name] = registry[name](args, self)
                if not isinstance(plugin, protocol):
                    raise TypeError(f"plugin {name} does not implement {protocol.__name__} (enabled at {point})")
                lists.setdefault(point, []).append(plugin)
        self.plugins = instances
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = lists.get("preEnqueue", [])
        self._pre_enqueues = [p.pre_enqueue for p in self.pre_enqueue_plugins]
        self.pre_enqueue_spec_only = all(p.PRE_ENQUEUE_SPEC_ONLY for p in self.pre_enqueue_plugins)
        sorts: list[QueueSortPlugin] = lists.get("queueSort", [])
        if len(sorts) != 1:
            raise ValueError(f"a profile needs exactly one queueSort plugin, got {len(sorts)}")
        self.queue_sort = sorts[0]
        self.pre_filter_plugins: list[PreFilterPlugin] = lists.get("preFilter", [])
        self._pre_filters = [(p.NAME, p.pre_filter) for p in self.pre_filter_plugins]
        self.filter_plugins: list[FilterPlugin] = lists.get("filter", [])
        # the leading node-static filters: what the static cache may keep per static signature
        self.n_static = next((i for i, p in enumerate(self.filter_plugins) if not p.NODE_STATIC), len(self.filter_plugins))
        self.dynamic_filters = self.filter_plugins[self.n_static :]
        # PreFilter runs once per CycleState, just before the first Filter plugin that has one
        # (PreFilter reads only the pod and the snapshot, which a CycleState never outlives)
        with_pre = {p.NAME for p in self.pre_filter_plugins}
        self._pre_filter_at = next((j for j, p in enumerate(self.filter_plugins) if p.NAME in with_pre), len(self.filter_plugins))
        # the fast path may count capacity when every dynamic filter can (checked once, here:
        # isinstance against a Protocol is slow)
        self.counts_capacity = bool(self.dynamic_filters) and all(isinstance(p, CapacityPlugin) for p in self.dynamic_filters)
        self.post_filter_plugins: list[PostFilterPlugin] = lists.get("postFilter", [])
        pre_scores = {p.NAME: p.pre_score for p in lists.get("preScore", [])}
        self.scorers: list[tuple[ScorePlugin, int]] = [(p, weights.get(p.NAME, 1)) for p in lists.get("score", [])]
        # each scorer's raw score with its PreScore in front (built once: the hot path calls these)
        self.raw_scorers: list[RawScore] = [with_pre_score(p.score, pre_scores.get(p.NAME)) for p, _ in self.scorers]
        # the same on Python scalars where a scorer has a one-row score (``FastPath.row_refresh``)
        self.row_raw_scorers = [row_raw_scorer(p.score_row, pre_scores.get(p.NAME)) if isinstance(p, RowScorePlugin) else None for p, _ in self.scorers]
        self.reserve_plugins: list[ReservePlugin] = lists.get("reserve", [])
        self.permit_plugins: list[PermitPlugin] = lists.get("permit", [])
        self.placement_feasible_plugins: list[PlacementFeasiblePlugin] = lists.get("placementFeasible", [])
        self.pod_group_post_filter_plugins: list[PodGroupPostFilterPlugin] = lists.get("podGroupPostFilter", [])
        self.placement_generate_plugins: list[PlacementGeneratePlugin] = lists.get("placementGenerate", [])
        self.placement_scorers: list[tuple[PlacementScorePlugin, int]] = [(p, (placement_weights or {}).get(p.NAME, 1)) for p in lists.get("placementScore", [])]
        # the placement the PodGroup pass is evaluating (KEP-5732): Filter sees only its rows,
        # as upstream's snapshot lists only the placement's nodes; None: every node
        self.placement: Placement | None = None
        self.placements_generated = 0  # scheduler_generated_placements_total
        self.placement_evaluations = [0, 0]  # scheduler_placement_evaluations_total: [infeasible, feasible]
        self.next_start_index = 0
        self.percentage = self.profile.percentage_of_nodes_to_score if self.profile.percentage_of_nodes_to_score is not None else args.config.percentage_of_nodes_to_score
        # instrumentation, a non-timing guard against O(nodes × pods) paths: rows Filter looked
        # at as upstream would (evaluated) and rows the plugins actually computed (computed)
        self.filter_rows_evaluated = 0
        self.filter_rows_computed = 0
        self.doomed_passes = 0  # PodGroup passes the fast path decided from counts
        self.counted_passes = 0  # successful ones it replayed from counts (``fastpath.counted``)
        self.doomed_fit_error: tuple[tuple, str] | None = None  # fast path: the last doomed pass's FitError, by its key
        self.doomed_plans: dict[tuple, tuple] = {}  # fast path: doomed.plan's, by search and group shape
        self.recorder: Recorder | None = None  # gangsim explain's (off in every other command)
        # the fast path (gangsim.scheduler.fastpath), each part behind its switch
        fast = args.config.effective_fast_path
        self.fast_path = fast
        self.static_cache = StaticFilterCache(self.snapshot.nodes, self._static_codes) if fast.static_filter_cache and self.n_static else None
        # the signature cache refreshes a few changed rows on Python scalars when every dynamic
        # filter answers for one row (``filter_row``)
        self.row_refresh = fast.row_refresh and fast.signature_cache and all(isinstance(p, RowFilterPlugin) for p in self.dynamic_filters)
        self.static_scorers = [fast.static_scores and p.SCORE_PER_ROW and p.SCORE_NODE_STATIC for p, _ in self.scorers]  # kept until a static change
        self.signatures = SignatureCache(self.snapshot, self) if fast.signature_cache else None
        self.repeated_failures = RepeatedFailures(self) if fast.repeated_failure else None
        self.counted_searches = CountedSearches(self) if fast.counted_searches and fast.doomed_pass else None

    # ---- Handle: pod_group, pdbs, victim_priority, bump, activate and activation_epoch are the Services' (bound above)
    def run_pod_group_algorithm(self, group: PodGroupState, pods: list[PodInfo]) -> GroupResult:
        return self._group_algorithm(self, group, pods)

    def events_to_register(self) -> dict[ClusterEvent, set[str]]:
        """Which plugins' queueing hints say Queue for each cluster event."""
        out: dict[ClusterEvent, set[str]] = {}
        for p in self.plugins.values():
            if isinstance(p, EnqueueExtensions):
                for event in p.events_to_register():
                    out.setdefault(event, set()).add(p.NAME)
        return out

    # ---- PreEnqueue, QueueSort -------------------------------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for pre_enqueue in self._pre_enqueues:
            status = pre_enqueue(pod)
            if status is not None:
                return status
        return None

    # ---- PreFilter, Filter -------------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> None:
        """Once per CycleState (``_apply`` calls it before the first Filter plugin that has a
        PreFilter): each PreFilter plugin computes its state; a SKIP status means the plugin's
        Filter passes every row in this cycle (``CycleState.skip_filter``)."""
        if state.pre_filtered:
            return
        state.pre_filtered = True
        for name, pre_filter in self._pre_filters:
            status = pre_filter(state, pod)
            if status is not None and status.code is Code.SKIP:
                state.skip_filter.add(name)

    def _apply(self, first: int, last: int, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> None:
        """Run filter plugins ``first..last-1`` on the rows still passing; record the first
        failure of each row (code and plugin index), as RunFilterPlugins stops at it."""
        if len(rows) == 1:  # the common case: a cache refresh, a preemption re-check
            if not codes[0]:
                code, j = self._first_failure(first, last, state, pod, rows)
                if code:
                    codes[0] = code
                    plugin[0] = j
            return
        plugins = self.filter_plugins
        pre_at = self._pre_filter_at
        for j in range(first, last):
            if j >= pre_at and not state.pre_filtered:
                self.run_pre_filter(state, pod)
            p = plugins[j]
            if p.NAME in state.skip_filter:
                continue
            todo = np.flatnonzero(codes == 0)
            if len(todo) == 0:
                return
            c = p.filter(state, pod, rows[todo])
            failed = c != 0
            codes[todo[failed]] = c[failed]
            plugin[todo[failed]] = j

    def _first_failure(self, first: int, last: int, state: CycleState, pod: PodInfo, one: np.ndarray | None, row: int = -1) -> tuple[int, int]:
        """``_apply`` for one row (``one`` holds it; or ``row``, through each plugin's
        ``filter_row``), without arrays: (code, plugin index) of the first plugin that rejects
        it, (0, -1) when all pass. The same loop as ``_apply``'s, kept apart on purpose:
        preemption re-checks run it hundreds of thousands of times, and a shared per-plugin
        helper costs a call per plugin per check."""
        plugins = self.filter_plugins
        pre_at = self._pre_filter_at
        for j in range(first, last):
            if j >= pre_at and not state.pre_filtered:
                self.run_pre_filter(state, pod)
            p = plugins[j]
            if p.NAME in state.skip_filter:
                continue
            c = p.filter(state, pod, one)[0] if one is not None else p.filter_row(state, pod, row)  # type: ignore[attr-defined]
            if c:
                return int(c), j
        return 0, -1

    def filter_row(self, state: CycleState, pod: PodInfo, row: int) -> tuple[int, int]:
        """``run_filters(state, pod, [row], nominated=False)`` on Python scalars (``row_refresh``:
        every dynamic filter is a ``RowFilterPlugin``): (code, plugin index), (0, -1) if all pass."""
        self.filter_rows_computed += 1
        if self.static_cache is not None:  # fast path: static codes per static signature
            s_codes, s_plugin = self.static_cache.codes(pod)
            code, j = int(s_codes[row]), int(s_plugin[row])
        else:
            code, j = self._first_failure(0, self.n_static, state, pod, np.array([row], dtype=np.int64))
        return (code, j) if code else self._first_failure(self.n_static, len(self.filter_plugins), state, pod, None, row)

    def _static_codes(self, pod: PodInfo, rows: np.ndarray, state: CycleState | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Codes and failing plugin index of the leading node-static filters over ``rows``."""
        codes = np.zeros(len(rows), dtype=np.int8)
        plugin = np.full(len(rows), -1, dtype=np.int8)
        self._apply(0, self.n_static, state or CycleState(), pod, rows, codes, plugin)
        return codes, plugin

    def run_filters(self, state: CycleState, pod: PodInfo, rows: np.ndarray, *, nominated: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Codes and failing plugin index (into ``filter_plugins``) for ``rows``.

        With ``nominated``, rows hosting nominated pods of priority >= the pod's are checked
        both without and with those pods (``RunFilterPluginsWithNominatedPods``).
        """
        self.filter_rows_computed += len(rows)
        if self.static_cache is not None:  # fast path: static codes per static signature
            s_codes, s_plugin = self.static_cache.codes(pod)
            codes, plugin = s_codes[rows], s_plugin[rows]
        else:
            codes, plugin = self._static_codes(pod, rows, state)
        self._apply(self.n_static, len(self.filter_plugins), state, pod, rows, codes, plugin)
        if nominated:
            self._filter_with_nominated(state, pod, rows, codes, plugin)
        return codes, plugin

    def _nominated_extra(self, pod: PodInfo, row: int) -> list[tuple[PodInfo, int]]:
        return [(q, row) for q in self.nominator.pods_for_row(row) if q.uid != pod.uid and q.priority >= pod.priority and q.node_row == NO_NODE]

    def _filter_with_nominated(self, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> None:
        nominated_rows = self.nominator.rows()
        if not nominated_rows:
            return
        position = {int(r): i for i, r in enumerate(rows.tolist())} if len(nominated_rows) * 8 > len(rows) else None
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
            extra = self._nominated_extra(pod, row)
            if not extra:
                continue
            with self.snapshot.with_pods(extra):
                code, j = self._first_failure(self.n_static, len(self.filter_plugins), CycleState(), pod, rows[i : i + 1])
                if code:
                    codes[i] = code
                    plugin[i] = j
                    failed = state.read(_FAILED_WITH_NOMINATED)
                    if failed is None:
                        failed = set()
                        state.write(_FAILED_WITH_NOMINATED, failed)
                    failed.add(row)

    def filter_reasons(self, state: CycleState, pod: PodInfo, row: int, plugin_index: int) -> tuple[str, ...]:
        p = self.filter_plugins[plugin_index]
        reasons = p.reasons(state, pod, row)
        if not reasons:
            # failed only with nominated pods added: render the reason with them present
            with self.snapshot.with_pods(self._nominated_extra(pod, row)):
                reasons = p.reasons(CycleState(), pod, row)
        return reasons

    def diagnose(self, state: CycleState, pod: PodInfo, rows: np.ndarray, codes: np.ndarray, plugin: np.ndarray) -> Diagnosis:
        """The FitError diagnosis of the evaluated ``rows``: reasons counted per plugin in bulk."""
        failed = np.flatnonzero(codes != 0)
        d = Diagnosis(rows=rows[failed].copy(), codes=codes[failed].copy())
        if len(failed) == 0:
            return d
        fplugin = plugin[failed]
        frows = rows[failed]
        with_nominated = state.read(_FAILED_WITH_NOMINATED) or set()
        hist = d.histogram
        for pi in sorted(set(fplugin.tolist())):
            p = self.filter_plugins[pi]
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
            for reason, n in p.reason_counts(state, pod, prow).items():
                hist[reason] = hist.get(reason, 0) + n
        return d

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int:
        return num_feasible_nodes_to_find(self.percentage, num_all_nodes)

    def find_nodes_that_fit(self, state: CycleState, pod: PodInfo) -> tuple[np.ndarray, Diagnosis]:
        """Feasible rows in evaluation order, and the diagnosis of the evaluated failures."""
        nodes = self.snapshot.nodes
        placement = self.placement
        order = nodes.order if placement is None else placement.rows
        n = len(order)
        if n == 0:
            return np.zeros(0, dtype=np.int64), Diagnosis()
        # SEMANTICS §3 step 2: a nominated node is tried first and used if it passes
        nominated = pod.nominated_row
        if nominated != NO_NODE and nodes.alive[nominated] and (placement is None or nominated in placement.rows):
            one = np.array([nominated], dtype=np.int64)
            codes, _ = self.run_filters(state, pod, one)
            if codes[0] == 0:
                return one, Diagnosis()
        to_find = self.num_feasible_nodes_to_find(n)
        start = self.next_start_index % n
        if placement is None:
            rotated = nodes.order2[start : start + n]  # a view: order from ``start`` on, wrapped
        else:  # a placement: its rows from ``start`` on, wrapped
            rotated = np.concatenate((order[start:], order[:start]))
        entry = self.signatures.entry(pod) if self.signatures is not None and (placement is None or self.fast_path.placement_passes) else None
        state.write(_SIGNATURE, entry)
        plugin: np.ndarray | None = None
        if entry is None:  # the reference path
            codes, plugin = self.run_filters(state, pod, rotated)
        elif self.nominator.by_row:  # fast path: signature codes, nominated rows re-checked
            codes = entry.codes[rotated]
            plugin = entry.plugin[rotated]
            self._filter_with_nominated(state, pod, rotated, codes, plugin)
        else:  # fast path: signature codes over the search window
            if self.fast_path.windowed_search:
                rotated = rotated[: search.window(entry, to_find, n)]
            codes = entry.codes[rotated]
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
        return rotated[feasible_pos], self.diagnose(state, pod, evaluated, codes, plugin[:processed])

    def account_full_scans(self, pods: int) -> None:
        """What ``pods`` Filter passes over every node (of the placement) do to the search state (the doomed pass)."""
        if pods:
            n = len(self.snapshot.nodes.order if self.placement is None else self.placement.rows)
            self.next_start_index %= n  # (start + n) % n
            self.filter_rows_evaluated += pods * n

    def _filter_one(self, state: CycleState, pod: PodInfo, row: int) -> tuple[int, int]:
        """``run_filters`` (with nominated pods) for one row, on scalars: (code, plugin index)."""
        self.filter_rows_computed += 1
        one = np.array([row], dtype=np.int64)
        if self.static_cache is not None:
            s_codes, s_plugin = self.static_cache.codes(pod)
            code, j = int(s_codes[row]), int(s_plugin[row])
        else:
            code, j = self._first_failure(0, self.n_static, state, pod, one)
        if not code:
            code, j = self._first_failure(self.n_static, len(self.filter_plugins), state, pod, one)
        if not code and row in self.nominator.by_row:
            codes, plugin = np.zeros(1, dtype=np.int8), np.full(1, -1, dtype=np.int8)
            self._filter_with_nominated(state, pod, one, codes, plugin)
            code, j = int(codes[0]), int(plugin[0])
        return code, j

    def filter_status_on(self, pod: PodInfo, row: int) -> tuple[Code, tuple[str, ...]]:
        """Filter with nominated pods on one row (preemption's checks)."""
        state = CycleState()
        code, j = self._filter_one(state, pod, row)
        if not code:
            return Code.SUCCESS, ()
        return Code(code), self.filter_reasons(state, pod, row, j)

    def fits_on(self, pod: PodInfo, row: int) -> bool:
        return not self._filter_one(CycleState(), pod, row)[0]

    # ---- PostFilter ------------------------------------------------------------------------------------
    def run_post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult | None:
        """The first PostFilter plugin that nominates a node wins; None without any plugin."""
        result = None
        for p in self.post_filter_plugins:
            result = p.post_filter(state, pod, diagnosis)
            if result.nominated_row not in (None, NO_NODE):
                break
        return result

    # ---- PreScore, Score ---------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray:
        """Σ weight × NormalizeScore(raw) over ``rows`` (the feasible nodes)."""
        total = np.zeros(len(rows), dtype=np.int64)
        entry = state.read(_SIGNATURE)
        for i, (p, weight) in enumerate(self.scorers):
            if entry is not None and p.SCORE_PER_ROW:  # fast path: raw scores per signature
                if (const := entry.const[i]) is not None:  # fast path: one NormalizeScore on every row (``FastPath.static_scores``)
                    total += const * weight
                    continue
                cached = entry.raw[i]
                raw = None if cached is None else cached[rows]
            else:
                raw = self.raw_scorers[i](state, pod, rows)
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

    def schedule_pod(self, state: CycleState, pod: PodInfo, generation: int | None = None, upcoming: Callable[[], list[PodInfo]] | None = None) -> tuple[ScheduleResult | None, Diagnosis]:
        """``generation``: the scheduler's, for a pod-by-pod cycle (the fast path may replay a
        pass that failed on this same cluster state, ``fastpath.repeat``); ``upcoming``: ``pod``
        and the pods of its shape likely next (``fastpath.counted_searches`` may replay the pass)."""
        memo = self.repeated_failures if generation is not None else None
        if memo is not None:
            repeated = memo.replay(pod, generation)  # type: ignore[arg-type]
            if repeated is not None:
                return None, repeated
        counted = self.counted_searches if upcoming is not None and self.recorder is None else None
        if counted is not None and (row := counted.take(pod, upcoming)) is not None:  # type: ignore[arg-type]
            return ScheduleResult(row, 0, 1), _PLACED
        evaluated, start = self.filter_rows_evaluated, self.next_start_index
        feasible, diagnosis = self.find_nodes_that_fit(state, pod)
        if len(feasible) == 0:
            result = None
            if memo is not None and start == self.next_start_index:
                memo.store(pod, generation, diagnosis, self.filter_rows_evaluated - evaluated)  # type: ignore[arg-type]
        elif len(feasible) == 1:
            result = ScheduleResult(int(feasible[0]), 1 + len(diagnosis.rows), 1)
        else:
            scores = self.score(state, pod, feasible)
            result = ScheduleResult(self.select_host(feasible, scores), len(feasible) + len(diagnosis.rows), len(feasible))
        rec = self.recorder
        if rec is not None and rec.active and rec.wants(pod):
            rec.record(self, state, pod, feasible, diagnosis, result)
        return result, diagnosis

    # ---- Reserve, Permit ---------------------------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: PodInfo, row: int) -> Status | None:
        for p in self.reserve_plugins:
            status = p.reserve(state, pod, row)
            if status is not None:
                return status
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, row: int) -> None:
        for p in reversed(self.reserve_plugins):
            p.unreserve(state, pod, row)

    def run_permit(self, state: CycleState, pod: PodInfo, row: int) -> tuple[Status | None, int]:
        """(None, 0) allows; a rejection stops at once; WAIT keeps the longest timeout asked."""
        wait: Status | None = None
        timeout = 0
        for p in self.permit_plugins:
            status, ms = p.permit(state, pod, row)
            if status is None:
                continue
            if status.code != Code.WAIT:
                return status, 0
            wait = status
            timeout = max(timeout, ms)
        return wait, timeout

    # ---- the PodGroup cycle -------------------------------------------------------------------------
    def run_placement_feasible(self, group: PodGroupState, scheduled: int, remaining: int) -> Status | None:
        """The first non-success verdict (UNSCHEDULABLE stops the pass, WAIT lets it go on)."""
        for p in self.placement_feasible_plugins:
            status = p.placement_feasible(group, scheduled, remaining)
            if status is not None:
                return status
        return None

    def run_pod_group_post_filter(self, group: PodGroupState, pods: list[PodInfo], status: Status, **kwargs: object) -> list[PodGroupPostFilterResult]:
        """Each plugin in order until one succeeds; the results of those that ran."""
        results: list[PodGroupPostFilterResult] = []
        for p in self.pod_group_post_filter_plugins:
            r = p.pod_group_post_filter(group, pods, status, **kwargs)  # type: ignore[call-arg]
            if r is None:
                continue
            results.append(r)
            if r.status.code == Code.SUCCESS:
                break
        return results
