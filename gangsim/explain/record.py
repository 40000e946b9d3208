"""What ``gangsim explain`` records during its replay: every real scheduling attempt of the pods it
asks about (a ``Recorder`` on each Framework, ``gangsim.scheduler.framework.runtime``), with the
snapshot exactly as that attempt saw it (inside a PodGroup pass, the group's earlier pods are
tentatively placed).

Per attempt it keeps what the framework decided (the FitError, or the chosen node) and what the
decision does not show: each Filter plugin run on its own over every node (upstream's
RunFilterPlugins stops at a node's first failing plugin; here every plugin gives its verdict, so
"what each node lacked" is complete), the resource shortfall per node and the Score breakdown per
plugin for the chosen node. This is per-node work, done only for the pods asked about and only in
explain's replay; ``run`` never builds a recorder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import Diagnosis, PodInfo, ScheduleResult, fit_error_message

CLOSEST = 5  # nodes listed as closest to fitting


@dataclass(slots=True)
class NodeMiss:
    """One node that rejected the pod: the plugins that said no (their reasons) and the resources
    it lacked (name -> (requested, free))."""

    node: str
    plugins: dict[str, list[str]]
    lacking: dict[str, tuple[int, int]]


@dataclass(slots=True)
class PluginScore:
    plugin: str
    weight: int
    raw: int | None  # None: the plugin skipped this pod (PreScore Skip / nothing to score)
    normalized: int


@dataclass(slots=True)
class PodAttempt:
    cycle: int  # the scheduler's attempt this belongs to (a PodGroup pass counts once)
    t_ms: int
    pod: str
    num_nodes: int
    node: str = ""  # chosen node ("" when no node fits)
    feasible: int = 0
    fit_error: str = ""  # FitError.Error() without the PostFilter part
    histogram: dict[str, int] = field(default_factory=dict)  # reason -> nodes (first failing plugin)
    rejected_by: dict[str, int] = field(default_factory=dict)  # plugin -> nodes it rejects on its own
    closest: list[NodeMiss] = field(default_factory=list)
    scores: list[PluginScore] = field(default_factory=list)


class AttemptRecorder:
    """Implements ``runtime.Recorder`` for a set of pod keys."""

    def __init__(self, pods: set[str]) -> None:
        self.pods = pods
        self.attempts: list[PodAttempt] = []
        self.cycle = 0
        self._active = False

    @property
    def active(self) -> bool:
        return self._active

    @active.setter
    def active(self, value: bool) -> None:
        if value and not self._active:
            self.cycle += 1
        self._active = value

    def wants(self, pod: PodInfo) -> bool:
        return pod.key in self.pods

    def record(self, fw: Framework, state: CycleState, pod: PodInfo, feasible: np.ndarray, diagnosis: Diagnosis, result: ScheduleResult | None) -> None:
        nodes = fw.snapshot.nodes
        a = PodAttempt(self.cycle, fw.cluster.now, pod.key, nodes.num_nodes, feasible=len(feasible))
        rows = nodes.order
        fresh = CycleState()  # the plugins' own verdicts, outside the attempt's CycleState
        fw.run_pre_filter(fresh, pod)
        fails = np.zeros((len(fw.filter_plugins), len(rows)), dtype=bool)
        for j, p in enumerate(fw.filter_plugins):
            if p.NAME not in fresh.skip_filter and len(rows):
                fails[j] = p.filter(fresh, pod, rows) != 0
            a.rejected_by[p.NAME] = int(fails[j].sum())
        if result is None:
            a.fit_error = fit_error_message(nodes.num_nodes, diagnosis)
            a.histogram = dict(sorted(diagnosis.histogram.items()))
            a.closest = self._closest(fw, fresh, pod, rows, fails)
        else:
            a.node = nodes.names[result.suggested_row]
            a.scores = self._scores(fw, pod, feasible, result.suggested_row)
        self.attempts.append(a)

    @staticmethod
    def _closest(fw: Framework, state: CycleState, pod: PodInfo, rows: np.ndarray, fails: np.ndarray) -> list[NodeMiss]:
        """The nodes rejected by the fewest plugins, then by the smallest total shortfall in units
        of the pod's request, then in node order (a deterministic tie-break)."""
        nodes = fw.snapshot.nodes
        names = nodes.resources.names
        cols = np.flatnonzero(pod.demand > 0)
        free = nodes.free[rows][:, cols]
        short = np.clip(pod.demand[cols] - free, 0, None) / np.maximum(pod.demand[cols], 1)
        key = np.lexsort((np.arange(len(rows)), short.sum(axis=1), fails.sum(axis=0)))
        out: list[NodeMiss] = []
        for i in key[:CLOSEST].tolist():
            row = int(rows[i])
            plugins = {p.NAME: list(p.reasons(state, pod, row)) for j, p in enumerate(fw.filter_plugins) if fails[j, i]}
            lacking = {names[c]: (int(pod.demand[c]), int(nodes.free[row, c])) for c in cols.tolist() if pod.demand[c] > nodes.free[row, c]}
            out.append(NodeMiss(nodes.names[row], plugins, lacking))
        return out

    @staticmethod
    def _scores(fw: Framework, pod: PodInfo, feasible: np.ndarray, chosen: int) -> list[PluginScore]:
        """Each Score plugin's raw and normalized score for the chosen node among the feasible
        ones (what ``Framework.score`` sums), from a fresh CycleState."""
        state = CycleState()
        fw.run_pre_filter(state, pod)
        at = int(np.flatnonzero(feasible == chosen)[0])
        out: list[PluginScore] = []
        for i, (p, weight) in enumerate(fw.scorers):
            raw = fw.raw_scorers[i](state, pod, feasible)
            if raw is None:
                out.append(PluginScore(p.NAME, weight, None, 0))
                continue
            out.append(PluginScore(p.NAME, weight, int(raw[at]), int(p.normalize(raw)[at])))
        return out
