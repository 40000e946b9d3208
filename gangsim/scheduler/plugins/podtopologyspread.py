"""PodTopologySpread: a pod's ``topologySpreadConstraints`` (kube's ``plugins/podtopologyspread``:
``common.go``, ``filtering.go``, ``scoring.go``, ``plugin.go``).

- PreFilter/Filter (``whenUnsatisfiable: DoNotSchedule``): matching pods counted per domain over
  every node that carries all the constraints' keys and passes the node inclusion policies
  (``nodeAffinityPolicy`` Honor by default, ``nodeTaintsPolicy`` Ignore); a node passes when
  ``matching pods in its domain + self-match − global minimum ≤ maxSkew``; the global minimum
  is 0 while fewer than ``minDomains`` domains exist. A node without a topology key is
  UnschedulableAndUnresolvable.
- PreScore/Score (``ScheduleAnyway``): per node Σ ``count × log(domains + 2) + maxSkew − 1``
  over the constraints, rounded; NormalizeScore ``100 × (max + min − s) / max``, nodes missing a
  key 0. Default weight 2.
- ``matchLabelKeys`` add ``key = <the pod's value>`` to the selector (keys the pod lacks are
  ignored); a nil ``labelSelector`` selects no pod. Terminating pods and pods of other
  namespaces are never counted.

Only the incoming pod's constraints count (unlike pod anti-affinity, an assigned pod's
constraints never reject another pod), so a pod without constraints is Skipped at PreFilter and
PreScore and contributes nothing: adding the plugin to the default profile changes no placement
of a trace without constraints. Cluster-level default constraints (``defaultConstraints``,
``defaultingType: System``) are not modelled: they select pods through the Services, ReplicaSets
and StatefulSets that match them, and gangsim has none.

PreFilter state is recomputed from the snapshot for each CycleState, which is what upstream's
PreFilterExtensions AddPod/RemovePod keep up to date incrementally: preemption's dry runs
(victims removed, then reprieved one at a time) see the counts with exactly the pods present.
"""

from __future__ import annotations

import math

import numpy as np

from gangsim.api.objects import DO_NOT_SCHEDULE, HONOR, SCHEDULE_ANYWAY, Node, TopologySpreadConstraint, first_untolerated_taint
from gangsim.api.selectors import LabelSelector, node_matches_pod
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import (
    UNBOUNDED,
    CapacityPlugin,
    ClusterEvent,
    Code,
    EnqueueExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
    Unbounded,
)
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE, LabelFilter

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
LABEL_HOSTNAME = "kubernetes.io/hostname"
INVALID_SCORE = -1  # scoring.go invalidScore: a node missing a topology key

_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
_SKIP = Status(Code.SKIP, plugin=names.POD_TOPOLOGY_SPREAD)


class Constraint:
    """``topologySpreadConstraint``: a constraint with its selector merged with matchLabelKeys."""

    __slots__ = ("max_skew", "key", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(self, c: TopologySpreadConstraint, pod_labels: dict[str, str]) -> None:
        self.max_skew = c.max_skew
        self.key = c.topology_key
        selector = c.label_selector
        extra = tuple((k, pod_labels[k]) for k in c.match_label_keys if k in pod_labels)
        if extra and selector is not None:
            selector = LabelSelector(extra + selector.match_labels, selector.match_expressions)
        self.selector = selector
        self.min_domains = c.min_domains
        self.honor_affinity = c.node_affinity_policy == HONOR
        self.honor_taints = c.node_taints_policy == HONOR

    def selects(self, labels: dict[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)

    def includes(self, pod: PodInfo, node: Node) -> bool:
        """``matchNodeInclusionPolicies``."""
        if self.honor_affinity and not node_matches_pod(pod.spec, node.labels, node.name):
            return False
        return not (self.honor_taints and first_untolerated_taint(node.taints, pod.spec.tolerations) is not None)


def constraints_of(pod: PodInfo, action: str) -> list[Constraint]:
    """``filterTopologySpreadConstraints``: the pod's constraints with ``action``."""
    return [Constraint(c, pod.labels) for c in pod.spec.topology_spread if c.when_unsatisfiable == action]


def has_all_keys(labels: dict[str, str], constraints: list[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    return all(c.key in labels for c in constraints)


def count_matching(pods: dict, c: Constraint, namespace: str) -> int:
    """``countPodsMatchSelector``: terminating pods and other namespaces do not count."""
    n = 0
    for q in pods.values():
        if not q.terminating and q.namespace == namespace and c.selects(q.labels):
            n += 1
    return n


class _PreFilterState:
    __slots__ = ("constraints", "counts")

    def __init__(self, constraints: list[Constraint]) -> None:
        self.constraints = constraints
        self.counts: list[dict[str, int]] = [{} for _ in constraints]  # TpValueToMatchNum

    def min_match(self, i: int) -> int:
        """``minMatchNum``: the global minimum, 0 while fewer than minDomains domains exist."""
        counts = self.counts[i]
        if len(counts) < self.constraints[i].min_domains:
            return 0
        return min(counts.values())


class PodTopologySpread(LabelFilter, PreFilterPlugin, CapacityPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.POD_TOPOLOGY_SPREAD
    NODE_STATIC = False
    SCORE_PER_ROW = False  # a row's score counts pods on the other nodes of its domain
    SCORE_NODE_STATIC = False

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """Pod All (an assigned pod added, relabelled or deleted) and Node Add|Delete|UpdateNodeLabel."""
        return (ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL)

    # ---- PreFilter, Filter ---------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        """``calPreFilterState``; Skip when the pod has no DoNotSchedule constraint."""
        constraints = constraints_of(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return _SKIP
        s = _PreFilterState(constraints)
        nodes = self.snapshot.nodes
        for row in nodes.order.tolist():
            node = nodes.nodes[row]
            if not has_all_keys(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.includes(pod, node):
                    continue
                value = node.labels[c.key]
                s.counts[i][value] = s.counts[i].get(value, 0) + count_matching(nodes.pods[row], c, pod.namespace)
        state.write(_STATE_KEY, s)
        return None

    def _state(self, state: CycleState, pod: PodInfo) -> _PreFilterState | None:
        s = state.read(_STATE_KEY)
        if s is None and self.pre_filter(state, pod) is None:
            s = state.read(_STATE_KEY)
        return s

    def _check(self, s: _PreFilterState, pod: PodInfo, labels: dict[str, str]) -> tuple[Code, str] | None:
        for i, c in enumerate(s.constraints):
            value = labels.get(c.key)
            if value is None:
                return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
            self_match = 1 if c.selects(pod.labels) else 0
            if s.counts[i].get(value, 0) + self_match - s.min_match(i) > c.max_skew:
                return Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH
        return None

    def capacity(self, pod: PodInfo, rows: np.ndarray) -> Unbounded | None:
        """Unbounded without DoNotSchedule constraints; otherwise placements interact: unknown."""
        if any(c.when_unsatisfiable == DO_NOT_SCHEDULE for c in pod.spec.topology_spread):
            return None
        return UNBOUNDED

    # ---- PreScore, Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo) -> Status | None:
        """Skip without ScheduleAnyway constraints (gangsim has no default constraints)."""
        if any(c.when_unsatisfiable == SCHEDULE_ANYWAY for c in pod.spec.topology_spread):
            return None
        return _SKIP

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray | None:
        """Raw scores of the feasible ``rows`` (``initPreScoreState``, ``PreScore``, ``Score``);
        ``INVALID_SCORE`` for a node missing a topology key."""
        constraints = constraints_of(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return None
        nodes = self.snapshot.nodes
        row_list = rows.tolist()
        ignored = [not has_all_keys(nodes.nodes[r].labels, constraints) for r in row_list]
        domains: list[dict[str, int]] = [{} for _ in constraints]
        for r, skip in zip(row_list, ignored):
            if skip:
                continue
            labels = nodes.nodes[r].labels
            for i, c in enumerate(constraints):
                if c.key != LABEL_HOSTNAME:
                    domains[i].setdefault(labels[c.key], 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(row_list) - sum(ignored) if c.key == LABEL_HOSTNAME else len(domains[i])
            weights.append(math.log(size + 2))  # topologyNormalizingWeight
        for row in nodes.order.tolist():  # counts over every node, for the feasible nodes' domains
            node = nodes.nodes[row]
            if not has_all_keys(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                value = node.labels[c.key]
                if c.key == LABEL_HOSTNAME or value not in domains[i] or not c.includes(pod, node):
                    continue
                domains[i][value] += count_matching(nodes.pods[row], c, pod.namespace)
        raw = np.full(len(row_list), INVALID_SCORE, dtype=np.int64)
        for j, r in enumerate(row_list):
            if ignored[j]:
                continue
            labels = nodes.nodes[r].labels
            total = 0.0
            for i, c in enumerate(constraints):
                if c.key == LABEL_HOSTNAME:
                    cnt = count_matching(nodes.pods[r], c, pod.namespace)
                else:
                    cnt = domains[i][labels[c.key]]
                total += cnt * weights[i] + (c.max_skew - 1)  # scoreForCount
            raw[j] = math.floor(total + 0.5)  # math.Round: half away from zero (total >= 0)
        return raw

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """``NormalizeScore``: ``100 × (max + min − s) / max`` over the valid nodes; invalid ones 0."""
        valid = raw != INVALID_SCORE
        out = np.zeros(len(raw), dtype=np.int64)
        if not valid.any():
            return out
        lo, hi = int(raw[valid].min()), int(raw[valid].max())
        if hi == 0:
            out[valid] = MAX_NODE_SCORE
            return out
        out[valid] = MAX_NODE_SCORE * (hi + lo - raw[valid]) // hi
        return out
