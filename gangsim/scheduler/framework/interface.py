"""The plugin contracts: ``Code``, ``Status`` and one Protocol per extension point (kube's staging
``k8s.io/kube-scheduler/framework/interface.go``).

A plugin is a class with ``NAME`` that subclasses the Protocols of the extension points it
implements; :mod:`gangsim.scheduler.plugins.registry` maps the name to a factory
``(args, handle) -> plugin`` and the runtime (:mod:`gangsim.scheduler.framework.runtime`) builds
one list per extension point from a profile, checking each plugin with ``isinstance`` once.
Plugins import this package only — never the runtime, the scheduler or each other.

Filter and Score work on arrays of node rows rather than one node at a time: kube's per-node
``Filter(pod, nodeInfo) -> *Status`` becomes ``filter(state, pod, rows) -> int8[rows]`` holding
the same codes, and ``reasons`` renders one row's message only when a FitError or a preemption
diagnosis needs it. ``None`` stands for a Success status, so the happy path allocates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from gangsim.scheduler.framework.cycle_state import CycleState
    from gangsim.scheduler.framework.types import Diagnosis, PodGroupState, PodInfo, QueuedEntity

    RawScore = Callable[[CycleState, PodInfo, np.ndarray], np.ndarray | None]  # a Score with its PreScore (``with_pre_score``)


class Code(IntEnum):
    """``fwk.Code``. The numeric order matters only for ``int8`` arrays; never compare codes by size."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2  # preemption may help
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3  # preemption cannot help
    WAIT = 4  # Permit: hold the reservation
    SKIP = 5  # PreFilter/PreScore: the plugin has nothing to do for this pod
    PENDING = 6


@dataclass(frozen=True, slots=True)
class Status:
    """A non-success outcome. ``None`` stands for Success so the happy path allocates nothing."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @staticmethod
    def unresolvable(*reasons: str, plugin: str = "") -> "Status":
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), plugin)


class ClusterEvent(Enum):
    """Cluster events a plugin can register for (``EventsToRegister``); the queue moves an
    unschedulable entity back when an event one of its rejecting plugins registered for happens."""

    NODE_ADD = "Node/Add"
    NODE_ALLOCATABLE_UP = "Node/UpdateNodeAllocatable"  # allocatable grew
    NODE_SCHEDULABLE = "Node/UpdateNodeTaint(unschedulable=false)"  # cordon lifted
    NODE_TAINT = "Node/UpdateNodeTaint"
    NODE_LABEL = "Node/UpdateNodeLabel"
    ASSIGNED_POD_ADD = "AssignedPod/Add"
    ASSIGNED_POD_DELETE = "AssignedPod/Delete"
    NOMINATED_POD_DELETE = "NominatedPod/Delete"
    POD_GROUP = "PodGroup/Add|Update(minCount down), UnscheduledPod/Add of the group"  # group-scoped


@runtime_checkable
class Plugin(Protocol):
    NAME: ClassVar[str]


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """Cluster events after which an entity this plugin rejected may succeed (queueing hints)."""
        ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    # True: the answer reads the pod's spec only (not its PodGroup nor anything else that
    # changes), so it holds until the spec does (``FastPath.pre_enqueue_passed``, ``joined_runs``)
    PRE_ENQUEUE_SPEC_ONLY: ClassVar[bool]

    def pre_enqueue(self, pod: "PodInfo") -> Status | None:
        """None lets the pod into activeQ/backoffQ; a status parks it as gated (§4.4). Reads the
        pod's spec and its PodGroup only (pods sharing both get the same answer)."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, e: "QueuedEntity") -> tuple:
        """``Less`` as a heap key: ``a`` pops before ``b`` iff ``sort_key(a) < sort_key(b)``."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: "CycleState", pod: "PodInfo") -> Status | None:
        """Compute per-cycle state; a SKIP status means this plugin's Filter has nothing to check."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    # True: the result for a row depends only on the node's labels, taints and flags and on the
    # pod's spec, never on what runs there (the fast path caches it per static signature)
    NODE_STATIC: ClassVar[bool]

    def filter(self, state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> np.ndarray:
        """int8 Code per row: SUCCESS, UNSCHEDULABLE or UNSCHEDULABLE_AND_UNRESOLVABLE."""
        ...

    def reasons(self, state: "CycleState", pod: "PodInfo", row: int) -> tuple[str, ...]:
        """Why ``row`` failed; only called to build a FitError or a preemption diagnosis."""
        ...

    def reason_counts(self, state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> dict[str, int]:
        """The FitError histogram of failed ``rows``: how often each reason occurs."""
        counts: dict[str, int] = {}
        for r in rows.tolist():
            for reason in self.reasons(state, pod, r):
                counts[reason] = counts.get(reason, 0) + 1
        return counts


class Unbounded(Enum):
    """``CapacityPlugin.capacity``'s answer when the Filter limits no row for such pods."""

    UNBOUNDED = "unbounded"


UNBOUNDED = Unbounded.UNBOUNDED


@runtime_checkable
class CapacityPlugin(FilterPlugin, Protocol):
    def capacity(self, pod: "PodInfo", rows: np.ndarray) -> np.ndarray | Unbounded | None:
        """For each row that passes this Filter, how many more pods shaped like ``pod`` it would
        still pass, each placed pod lowering that by exactly one; ``UNBOUNDED`` when this Filter
        never stops such a pod on a row that passes it (no array of "as many as you like" to
        build and take the minimum with: most plugins answer that for most pods); None when it
        cannot say. Lets the fast path decide a doomed PodGroup pass from counts
        (``fastpath.doomed``)."""
        ...


@runtime_checkable
class RowFilterPlugin(FilterPlugin, Protocol):
    def filter_row(self, state: "CycleState", pod: "PodInfo", row: int) -> int:
        """``filter(state, pod, [row])[0]`` on Python scalars: the signature cache refreshes the
        row the last bind changed with it (``FastPath.row_refresh``), without one-element arrays."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: "CycleState", pod: "PodInfo") -> Status | None:
        """A SKIP status: this plugin's Score adds nothing for this pod (e.g. nothing requested)."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    # True: a row's raw score depends only on that row and the pod's signature (KEP-5598 SignPlugin)
    SCORE_PER_ROW: ClassVar[bool]
    # True (with SCORE_PER_ROW): ... and only on the node's static fields (name, labels, taints),
    # so a bind never changes it (``FastPath.static_scores`` keeps it until a static change)
    SCORE_NODE_STATIC: ClassVar[bool]

    def score(self, state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> np.ndarray | None:
        """int64 raw score per row; None means Skip (the plugin adds nothing)."""
        ...

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """NormalizeScore over the scored rows: raw → 0..100."""
        ...


def with_pre_score(score: "RawScore", pre_score: "Callable[[CycleState, PodInfo], Status | None] | None") -> "RawScore":
    """A plugin's raw score, None when its PreScore (if it has one) or its Score says Skip."""
    if pre_score is None:
        return score

    def raw(state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> np.ndarray | None:
        status = pre_score(state, pod)
        if status is not None and status.code is Code.SKIP:
            return None
        return score(state, pod, rows)

    return raw


@runtime_checkable
class RowScorePlugin(ScorePlugin, Protocol):
    def score_row(self, state: "CycleState", pod: "PodInfo", row: int) -> int | None:
        """``score(state, pod, [row])`` on Python scalars (its one value, or None for Skip, which
        must not depend on the row); PreScore is the caller's (``FastPath.row_refresh``)."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: "CycleState", pod: "PodInfo", diagnosis: "Diagnosis") -> "PostFilterResult":
        """A pod found no node: try to make room (DefaultPreemption, §5)."""
        ...


@dataclass(slots=True)
class PostFilterResult:
    nominated_row: int | None  # None: leave the nomination as it is; NO_NODE: clear it
    message: str = ""  # appended to the FitError ("preemption: 0/3 nodes are available: …")


@runtime_checkable
class RepeatablePostFilterPlugin(PostFilterPlugin, Protocol):
    def post_filter_repeater(self, state: "CycleState", pod: "PodInfo", diagnosis: "Diagnosis") -> Callable[[int], PostFilterResult] | None:
        """Fast path (``FastPath.pod_runs``): what ``post_filter`` would do for pods like ``pod``
        (same spec, none nominated) called one after the other with ``diagnosis`` on an
        unchanged cluster, when that needs no preemption: a function that does it for ``times``
        such calls at once (their effects, e.g. random draws) and returns their result; None
        (nothing done) when the plugin cannot say so."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: "CycleState", pod: "PodInfo", row: int) -> Status | None: ...

    def unreserve(self, state: "CycleState", pod: "PodInfo", row: int) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: "CycleState", pod: "PodInfo", row: int) -> tuple[Status | None, int]:
        """(None, 0): allow; (WAIT, timeout_ms): hold the reservation until a plugin allows the
        pod through ``Handle.waiting_pods`` or the timeout rejects it."""
        ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    def placement_feasible(self, group: "PodGroupState", scheduled: int, remaining: int) -> Status | None:
        """During the PodGroup pass (§8.4): UNSCHEDULABLE once the placement can no longer
        succeed (the pass stops), WAIT while it has not yet succeeded, None when it has."""
        ...


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    def pod_group_post_filter(self, group: "PodGroupState", pods: list["PodInfo"], status: Status) -> "PodGroupPostFilterResult":
        """A PodGroup cycle failed: try to make room for the group (workload-aware preemption)."""
        ...


@runtime_checkable
class RepeatablePodGroupPostFilterPlugin(PodGroupPostFilterPlugin, Protocol):
    def pod_group_post_filter_repeater(self, group: "PodGroupState", pods: list["PodInfo"], status: Status) -> Callable[[int], PodGroupPostFilterResult] | None:
        """Fast path (``FastPath.bulk_retries``): what ``pod_group_post_filter`` would do for
        ``group`` failed with ``status`` called again and again on an unchanged cluster, when it
        fails without acting (no victims, nothing nominated): a function that does the effects
        of ``times`` such calls at once (their counters) and returns their result; None (nothing
        done, nothing read-only changed) when the plugin cannot say so."""
        ...


@dataclass(slots=True)
class PodGroupPostFilterResult:
    status: Status  # SUCCESS: waiting on preemption; otherwise the rejection to append
    nominations: dict[int, int] | None = None  # preemptor pod uid -> row; None: clear them all
    placed: int = 0  # pods the preemption made room for (PartialSuccess compares it)


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    def generate_placements(self, group: "PodGroupState", pods: list["PodInfo"]) -> tuple[list["Placement"], Status | None]:
        """Candidate placements for the group (KEP-5732: one per topology domain), each the node
        rows the group may use, in a deterministic order; a status (Error) instead when the group
        cannot be placed at all. No such plugin in a profile: no placement algorithm."""
        ...


@dataclass(frozen=True, slots=True)
class Placement:
    """``fwk.Placement``: a name (the topology domain) and its node rows in node-list order."""

    name: str
    rows: np.ndarray


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    def score_placement(self, group: "PodGroupState", placement: Placement, placed: list[tuple["PodInfo", int]]) -> int:
        """Rank a feasible placement (KEP-5732) from the pods the pass placed in it."""
        ...

    def normalize_placement_scores(self, raw: list[int]) -> list[int]:
        """``NormalizePlacementScore`` over the feasible placements: raw → 0..100."""
        ...


# Every extension point, in the order a profile lists them (the runtime builds one list per entry).
EXTENSION_POINTS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "placementGenerate": PlacementGeneratePlugin,
    "placementFeasible": PlacementFeasiblePlugin,
    "placementScore": PlacementScorePlugin,
    "podGroupPostFilter": PodGroupPostFilterPlugin,
}
