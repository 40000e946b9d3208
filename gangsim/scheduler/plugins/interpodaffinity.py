"""InterPodAffinity: required pod affinity / anti-affinity (Filter) and preferred terms (Score).

Counts per (topologyKey, value) are computed at PreFilter from the assigned pods, as
``filtering.go`` does; checks run in upstream order: incoming affinity, incoming anti-affinity,
existing pods' anti-affinity. Work is only done when the pod or some assigned pod has terms.
"""

from __future__ import annotations

import numpy as np

from gangsim.api.objects import PodAffinityTerm, WeightedPodAffinityTerm
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import UNBOUNDED, CapacityPlugin, ClusterEvent, Code, EnqueueExtensions, PreFilterPlugin, ScorePlugin, Status, Unbounded
from gangsim.scheduler.framework.types import PluginArgs, PodInfo
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.helper import MAX_NODE_SCORE, LabelFilter

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

_STATE_KEY = "PreFilter" + names.INTER_POD_AFFINITY
_SKIP = Status(Code.SKIP, plugin=names.INTER_POD_AFFINITY)


def term_matches(term: PodAffinityTerm, owner_namespace: str, pod: PodInfo) -> bool:
    """``AffinityTerm.Matches``: namespace in scope and label selector matches (nil selects none)."""
    ns = pod.namespace
    in_scope = False
    if term.namespaces and ns in term.namespaces:
        in_scope = True
    elif term.namespace_selector is not None and term.namespace_selector.matches({NAMESPACE_NAME_LABEL: ns}):
        in_scope = True
    elif not term.namespaces and term.namespace_selector is None and ns == owner_namespace:
        in_scope = True
    if not in_scope:
        return False
    return term.label_selector is not None and term.label_selector.matches(pod.labels)


class _PreFilterState:
    __slots__ = ("affinity", "anti_affinity", "existing_anti_affinity", "required_affinity", "required_anti_affinity")

    def __init__(self) -> None:
        self.affinity: dict[tuple[str, str], int] = {}
        self.anti_affinity: dict[tuple[str, str], int] = {}
        self.existing_anti_affinity: dict[tuple[str, str], int] = {}
        self.required_affinity: tuple[PodAffinityTerm, ...] = ()
        self.required_anti_affinity: tuple[PodAffinityTerm, ...] = ()


def _bump(counts: dict[tuple[str, str], int], labels: dict[str, str], key: str) -> None:
    if key in labels:
        pair = (key, labels[key])
        counts[pair] = counts.get(pair, 0) + 1


class InterPodAffinity(LabelFilter, PreFilterPlugin, CapacityPlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.INTER_POD_AFFINITY
    NODE_STATIC = False
    SCORE_PER_ROW = False  # a row's score depends on pods on other rows of its topology domains
    SCORE_NODE_STATIC = False

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot
        self.hard_weight = args.profile.hard_pod_affinity_weight

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL, ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_DELETE)

    def needs_filter(self, pod: PodInfo) -> bool:
        aff = pod.spec.affinity
        own = aff is not None and bool(aff.pod_affinity_required or aff.pod_anti_affinity_required)
        return own or bool(self.snapshot.required_anti_affinity_pods)

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        """Count matching pods per (topologyKey, value); SKIP when there is nothing to check."""
        if not self.needs_filter(pod):
            return _SKIP
        snap = self.snapshot
        nodes = snap.nodes
        s = _PreFilterState()
        for existing in snap.required_anti_affinity_pods.values():
            labels = nodes.nodes[existing.node_row].labels
            for term in existing.spec.affinity.pod_anti_affinity_required:  # type: ignore[union-attr]
                if term_matches(term, existing.namespace, pod):
                    _bump(s.existing_anti_affinity, labels, term.topology_key)
        aff = pod.spec.affinity
        if aff is not None:
            s.required_affinity = aff.pod_affinity_required
            s.required_anti_affinity = aff.pod_anti_affinity_required
        if s.required_affinity or s.required_anti_affinity:
            for existing in snap.assigned.values():
                labels = nodes.nodes[existing.node_row].labels
                if s.required_affinity and all(term_matches(t, pod.namespace, existing) for t in s.required_affinity):
                    for t in s.required_affinity:
                        _bump(s.affinity, labels, t.topology_key)
                for t in s.required_anti_affinity:
                    if term_matches(t, pod.namespace, existing):
                        _bump(s.anti_affinity, labels, t.topology_key)
        if not s.existing_anti_affinity and not s.required_affinity and not s.required_anti_affinity:
            return _SKIP
        state.write(_STATE_KEY, s)
        return None

    def _state(self, state: CycleState, pod: PodInfo) -> _PreFilterState | None:
        """This cycle's PreFilter state (computed here if the runtime has not run PreFilter on
        ``state`` yet, e.g. for a reason rendered against a changed snapshot)."""
        s = state.read(_STATE_KEY)
        if s is None and self.pre_filter(state, pod) is None:
            s = state.read(_STATE_KEY)
        return s

    def _check(self, s: _PreFilterState, pod: PodInfo, labels: dict[str, str]) -> tuple[Code, str] | None:
        # incoming pod's required affinity
        if s.required_affinity:
            pods_exist = True
            for term in s.required_affinity:
                if term.topology_key not in labels:
                    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY
                if s.affinity.get((term.topology_key, labels[term.topology_key]), 0) <= 0:
                    pods_exist = False
            if not pods_exist:
                self_match = all(term_matches(t, pod.namespace, pod) for t in s.required_affinity)
                if not (not s.affinity and self_match):
                    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY
        if s.anti_affinity:
            for term in s.required_anti_affinity:
                v = labels.get(term.topology_key)
                if v is not None and s.anti_affinity.get((term.topology_key, v), 0) > 0:
                    return Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY
        if s.existing_anti_affinity:
            for k, v in labels.items():
                if s.existing_anti_affinity.get((k, v), 0) > 0:
                    return Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY
        return None

    def capacity(self, pod: PodInfo, rows: np.ndarray) -> Unbounded | None:
        """Unbounded when there is nothing to check; otherwise placements interact: unknown."""
        return None if self.needs_filter(pod) else UNBOUNDED

    # ---- Score -------------------------------------------------------------------------------
    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """Min-max over the scored nodes (all equal: every node gets 0)."""
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo <= 0:
            return np.zeros(len(raw), dtype=np.int64)
        return (float(MAX_NODE_SCORE) * ((raw - lo) / float(hi - lo))).astype(np.int64)

    def score(self, state: CycleState, pod: PodInfo, rows: np.ndarray) -> np.ndarray | None:
        snap = self.snapshot
        aff = pod.spec.affinity
        pref_aff: tuple[WeightedPodAffinityTerm, ...] = aff.pod_affinity_preferred if aff else ()
        pref_anti: tuple[WeightedPodAffinityTerm, ...] = aff.pod_anti_affinity_preferred if aff else ()
        has_constraints = bool(pref_aff or pref_anti)
        existing_pods = snap.assigned.values() if has_constraints else snap.affinity_pods.values()
        if not has_constraints and not snap.affinity_pods:
            return None
        nodes = snap.nodes
        topo: dict[str, dict[str, int]] = {}

        def add(term: PodAffinityTerm, owner_ns: str, target: PodInfo, labels: dict[str, str], weight: int) -> None:
            if term_matches(term, owner_ns, target) and term.topology_key in labels:
                d = topo.setdefault(term.topology_key, {})
                v = labels[term.topology_key]
                d[v] = d.get(v, 0) + weight

        for existing in existing_pods:
            labels = nodes.nodes[existing.node_row].labels
            if not labels:
                continue
            for w in pref_aff:
                add(w.term, pod.namespace, existing, labels, w.weight)
            for w in pref_anti:
                add(w.term, pod.namespace, existing, labels, -w.weight)
            eaff = existing.spec.affinity
            if eaff is None:
                continue
            if self.hard_weight > 0:
                for t in eaff.pod_affinity_required:
                    add(t, existing.namespace, pod, labels, self.hard_weight)
            for w in eaff.pod_affinity_preferred:
                add(w.term, existing.namespace, pod, labels, w.weight)
            for w in eaff.pod_anti_affinity_preferred:
                add(w.term, existing.namespace, pod, labels, -w.weight)
        if not topo:
            return None
        raw = np.zeros(len(rows), dtype=np.int64)
        for i, row in enumerate(rows.tolist()):
            labels = nodes.nodes[row].labels
            total = 0
            for key, values in topo.items():
                v = labels.get(key)
                if v is not None:
                    total += values.get(v, 0)
            raw[i] = total
        return raw
