"""The PodGroup / CompositePodGroup forest (KEP-6012, SEMANTICS §9; kube's ``workloadForest`` in
the scheduling queue and GangScheduling's ``hierarchyTracker``).

A CompositePodGroup's state is a ``PodGroupState`` whose ``group`` is the CompositePodGroup (its
``policy.min_count`` is ``minGroupCount``), so PlacementFeasible, the placement plugins and the
condition code treat both levels alike. Children are listed by key (upstream keeps them in a set
and visits them in map order; gangsim's order is the documented tie-break).
"""

from __future__ import annotations

from gangsim.api.objects import CompositePodGroup, PodGroup
from gangsim.scheduler.framework.types import PodGroupState

MAX_DEPTH = 4  # schedulingv1alpha3.WorkloadMaxTreeDepth: walks stop there (the loader checks trees)


def is_composite(st: PodGroupState) -> bool:
    return isinstance(st.group, CompositePodGroup)


class Hierarchies:
    """Parent links of the groups the scheduler knows, the CompositePodGroups' states and the
    readiness rule of GangScheduling's PreEnqueue."""

    def __init__(self, groups: dict[str, PodGroupState]) -> None:
        self.groups = groups  # the scheduler's PodGroup states (shared)
        self.composites: dict[str, PodGroupState] = {}
        self._children: dict[str, set[str]] = {}  # parent CompositePodGroup key -> child keys
        self._parent: dict[str, str] = {}  # child key -> parent key

    # ---- links --------------------------------------------------------------------------------
    def link(self, key: str, group: PodGroup | CompositePodGroup | None) -> None:
        """(Re)record ``key``'s parent from its object (None: the object is gone)."""
        old = self._parent.pop(key, None)
        if old is not None:
            self._children.get(old, set()).discard(key)
        if group is not None and group.parent is not None:
            parent = f"{group.namespace}/{group.parent}"
            self._parent[key] = parent
            self._children.setdefault(parent, set()).add(key)

    def set_composite(self, cpg: CompositePodGroup) -> PodGroupState:
        st = self.composites.get(cpg.key)
        if st is None:
            st = self.composites[cpg.key] = PodGroupState(cpg.key)
        st.group = cpg
        self.link(cpg.key, cpg)
        return st

    def delete_composite(self, key: str) -> None:
        st = self.composites.pop(key, None)
        if st is not None:
            self.link(key, None)

    def state(self, key: str) -> PodGroupState | None:
        return self.composites.get(key) or self.groups.get(key)

    def parent_key(self, key: str) -> str | None:
        return self._parent.get(key)

    def children(self, key: str) -> list[PodGroupState]:
        """The known child groups of CompositePodGroup ``key``, by key."""
        out = [self.state(k) for k in sorted(self._children.get(key, ()))]
        return [s for s in out if s is not None and s.group is not None]

    def root(self, key: str) -> tuple[PodGroupState | None, str]:
        """The root of ``key``'s hierarchy and its name; (None, the missing ancestor's name) when
        an ancestor is not known (yet)."""
        st = self.state(key)
        for _ in range(MAX_DEPTH):
            parent = self.parent_key(key)
            if parent is None:
                return st, key.split("/", 1)[1]
            st = self.composites.get(parent)
            if st is None:
                return None, parent.split("/", 1)[1]
            key = parent
        return None, key.split("/", 1)[1]

    def leaves(self, st: PodGroupState) -> list[PodGroupState]:
        """The PodGroups under ``st`` (``st`` itself for a PodGroup), depth first by key."""
        if not is_composite(st):
            return [st]
        return [leaf for c in self.children(st.key) for leaf in self.leaves(c)]

    def members(self, st: PodGroupState) -> dict[int, object]:
        """Every member pod of the PodGroups under ``st``."""
        return {uid: p for leaf in self.leaves(st) for uid, p in leaf.members.items()}

    # ---- readiness (hierarchyTrackerImpl.isGroupReady) ----------------------------------------
    def ready(self, st: PodGroupState) -> bool:
        """A PodGroup is ready with at least minCount member pods (the tracker gives a ``basic``
        group minCount 1), a CompositePodGroup with at least minGroupCount ready children."""
        return self.ready_children(st) >= st.min_count if is_composite(st) else len(st.members) >= st.min_count

    def ready_children(self, st: PodGroupState) -> int:
        return sum(1 for c in self.children(st.key) if self.ready(c))


__all__ = ["Hierarchies", "is_composite"]
