"""Data the framework and its plugins share (kube's ``framework/types.go`` and the staging
``k8s.io/kube-scheduler/framework`` types): resources as columns, pods and queue entities as the
scheduler sees them, PodGroup state, and the diagnosis of a failed cycle.

Everything that was a string before is an Enum here (queue location, cycle outcome, condition
status, pod phase): a typo is an AttributeError, not a new state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum, StrEnum
from operator import attrgetter, countOf
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from gangsim.scheduler.framework.interface import Status

from gangsim.api.config import Profile, SchedulerConfig
from gangsim.api.objects import CompositePodGroup, PodGroup, PodSpec, PolicyKind, PreemptionPolicy

NO_NODE = -1

# ---- resources (kube's ``fwk.Resource``: int64 amounts, here one column each) -----------------
CPU_COL = 0
MEMORY_COL = 1
PODS_COL = 2
BASE_RESOURCES = ("cpu", "memory", "pods")


class ResourceIndex:
    """Maps resource names to columns: cpu, memory, pods first, then the rest sorted by name."""

    def __init__(self, names: Iterable[str]) -> None:
        rest = sorted(set(names) - set(BASE_RESOURCES))
        self.names: tuple[str, ...] = BASE_RESOURCES + tuple(rest)
        self.col: dict[str, int] = {n: i for i, n in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)

    def vector(self, amounts: dict[str, int], *, pod: bool = False) -> np.ndarray:
        v = np.zeros(len(self.names), dtype=np.int64)
        for name, amount in amounts.items():
            v[self.col[name]] = amount
        if pod:
            v[PODS_COL] = 1
        return v


# ---- states ------------------------------------------------------------------------------------
class PodPhase(IntEnum):
    """Where the scheduler has a pod (its own view; the kubelet's is ``gangsim.sim.pods.PodState``)."""

    PENDING = 0  # not assigned to a node (queued, gated, in flight)
    WAITING = 1  # reserved on a node, waiting at Permit
    BOUND = 2
    ENDED = 3  # deleted or finished; kept only while someone still holds a reference


# (members the per-pod paths read, as module names: read through its class, an enum member costs
# ~100 ns on Python 3.11, EnumType's __getattr__ hook; a module name ~10 ns)
_WAITING, _BOUND = PodPhase.WAITING, PodPhase.BOUND
_GANG = PolicyKind.GANG
_PHASE = attrgetter("phase")
_NOMINATED_ROW = attrgetter("nominated_row")


def none_nominated(pods: Sequence[PodInfo]) -> bool:
    """No pod of ``pods`` is nominated (counted at C speed: a stuck gang of 256 pods asks on
    every attempt)."""
    return countOf(map(_NOMINATED_ROW, pods), NO_NODE) == len(pods)


class QueueLocation(Enum):
    """Which part of the scheduling queue holds an entity (SEMANTICS §4.1)."""

    NONE = "none"  # not in the queue
    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"
    GATED = "gated"  # held at PreEnqueue
    IN_FLIGHT = "inflight"  # popped, its cycle is running
    WAITING = "waiting"  # a pod waiting at Permit (in flight until allowed or rejected)


class CycleOutcome(StrEnum):
    """How a PodGroup scheduling cycle ended (§8.5); the values name the summary counters."""

    SCHEDULED = "scheduled"
    UNSCHEDULABLE = "unschedulable"
    WAITING_ON_PREEMPTION = "waiting_on_preemption"
    ERROR = "error"


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"


class Condition(NamedTuple):
    """``PodGroupInitiallyScheduled`` (§1.4)."""

    status: ConditionStatus
    reason: str  # "Scheduled" | "Unschedulable" | "SchedulerError"
    message: str = ""


# ---- pods and queue entities --------------------------------------------------------------------
@dataclass(slots=True, eq=False)
class PodInfo:
    uid: int
    namespace: str
    name: str
    spec: PodSpec
    demand: np.ndarray  # int64 per resource column, pods column = 1
    fit_cols: np.ndarray  # columns with a non-zero request (the pods column included)
    fit_amounts: np.ndarray
    created_ms: int
    group_key: str = ""  # "<ns>/<podGroupName>" when the pod names a PodGroup
    phase: PodPhase = PodPhase.PENDING
    node_row: int = NO_NODE
    nominated_row: int = NO_NODE
    start_ms: int | None = None  # bind time; victims' "start time"
    terminating: bool = False  # DisruptionTarget set by preemption, deletion pending
    signature: tuple = ()  # opportunistic-batching signature (KEP-5598); () = unsignable
    static_key: tuple = ()  # inputs of the node-static filters and scores
    devices: tuple[int, ...] = ()  # GPU ids held on ``devices_row`` (``api.devices``)
    devices_row: int = NO_NODE
    usage_delta: np.ndarray | None = None  # what it adds to its node's row (``cache.node_table``; set by ``PodInfos``)
    key: str = field(init=False, default="")  # "<namespace>/<name>", built once: read per attempt

    def __post_init__(self) -> None:
        self.key = f"{self.namespace}/{self.name}"

    @property
    def labels(self) -> dict[str, str]:
        return self.spec.labels

    @property
    def priority(self) -> int:
        return self.spec.priority

    @property
    def preemption_policy(self) -> PreemptionPolicy:
        return self.spec.preemption_policy

    def __repr__(self) -> str:
        return f"PodInfo({self.key}#{self.uid})"


@dataclass(slots=True, eq=False)
class QueuedEntity:
    """A queue item: one pod (``QueuedPodInfo``), or one PodGroup with its queued member pods
    (``QueuedPodGroupInfo``, SEMANTICS §4.1)."""

    key: str
    pods: list[PodInfo]
    group: PodGroup | None = None
    group_key: str = ""  # set for a PodGroup entity (even before the PodGroup object exists)
    timestamp_ms: int = 0
    initial_attempt_ms: int | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    unschedulable_plugins: frozenset[str] = frozenset()
    last_attempt_generation: int = -1
    gated_message: str = ""
    where: QueueLocation = QueueLocation.NONE
    seq: int = 0  # tie-break of equal (priority, timestamp): arrival order in the queue
    parked_ms: int = 0  # when it entered the unschedulable pool (the flush ages it)
    pre_enqueue_memo: object = None  # ``Scheduler.pre_enqueue``'s, for the pods it saw last time
    failures: object = None  # ClusterAPI.failures_recorded's token of its last failed attempt (FastPath.failure_streaks)

    @property
    def is_group(self) -> bool:
        return bool(self.group_key)

    @property
    def priority(self) -> int:
        if self.group is not None:
            return self.group.priority
        return self.pods[0].spec.priority

    @property
    def size(self) -> int:
        return max(1, len(self.pods))


@dataclass(slots=True, eq=False)
class PodRun(QueuedEntity):
    """Fast path (``FastPath.pod_runs``, the ``pod`` policy): single pods queued as one entity.

    A Job creates its pods one after the other with one spec, so on the reference path they are
    entities with the same priority and timestamp and consecutive ``seq``: nothing else can sort
    between them, the queue moves them together, and they are popped one after the other. A run
    is those entities as one, with the queue state each of them would have (``attempts``,
    ``timestamp_ms``, ``unschedulable_count`` …) kept once; ``seqs`` holds each pod's own
    ``seq`` (``seq`` is the first's). Whatever would treat one of them differently splits the
    run first (``SchedulingQueue.peel`` the first pod of a cycle that is not a repeated
    failure, ``SchedulingQueue.single`` a pod updated or activated). With
    ``FastPath.joined_runs`` a run may hold the pods of several Jobs: runs that failed alike,
    with no entity still queued between them in ``seq``, joined in the unschedulable pool
    (``SchedulingQueue._join``)."""

    seqs: list[int] = field(default_factory=list)
    popped_done: int | None = None  # popped from backoffQ: its backoff time there (None: from activeQ)

    @property
    def size(self) -> int:
        return 1  # each pod backs off as a single pod


@dataclass(slots=True, eq=False)
class PodGroupState:
    """What the scheduler knows about one PodGroup: its object, its member pods (unscheduled,
    assumed/waiting at Permit, bound) and its queue entity (kube's ``PodGroupState``)."""

    key: str
    group: PodGroup | CompositePodGroup | None = None  # a CompositePodGroup: see Hierarchies below
    members: dict[int, PodInfo] = field(default_factory=dict)
    entity: QueuedEntity | None = None  # gang policy: the group's queue entity
    condition: Condition | None = None
    attempts: int = 0
    failures: object = None  # ClusterAPI.failures_recorded's token of the last failed attempt
    order_memo: tuple | None = None  # ((pods, their specs), pod_order) of the last attempt
    repeat: object = None  # ``fastpath.attempts.Repeat``: the last attempt, while a retry may repeat it

    def scheduled_count(self) -> int:
        """Members assumed (waiting at Permit) or bound (counted at C speed: a stuck gang of 256
        pods asks on every attempt)."""
        phases = list(map(_PHASE, self.members.values()))
        return countOf(phases, _WAITING) + countOf(phases, _BOUND)

    def scheduled_members(self, count: int | None = None) -> list[PodInfo]:
        """The members ``scheduled_count`` counts, in member order (``count``: that count, when
        the caller has it)."""
        if not (self.scheduled_count() if count is None else count):
            return []
        return [p for p in self.members.values() if p.phase in (_WAITING, _BOUND)]

    @property
    def min_count(self) -> int:
        return self.group.policy.effective_min_count if self.group else 1

    @property
    def is_gang(self) -> bool:
        return self.group is not None and self.group.policy.kind is _GANG

    @property
    def initially_scheduled(self) -> bool:
        return self.condition is not None and self.condition.status is ConditionStatus.TRUE


# ---- results and diagnosis ------------------------------------------------------------------------
@dataclass(slots=True)
class GroupResult:
    """The PodGroup pass (§8.3): its final status (None = Success), the tentative placements in
    pod order and each failed pod's own FitError message."""

    status: "Status | None"
    placed: list[tuple[PodInfo, int]] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)  # uid -> the pod's own failure message
    evaluated: int = 0
    kept: bool = False  # the placements are still assumed (``default_pass(keep=True)`` succeeded)
    plan: object = None  # the ``fastpath.doomed.DoomedPass`` that decided the pass, if one did


@dataclass(slots=True)
class ScheduleResult:
    suggested_row: int
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(slots=True)
class Diagnosis:
    """Why a pod did not fit: codes of the evaluated rows that failed, the histogram of their
    reasons (what FitError prints) and a way to render one row's reasons on demand."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    histogram: dict[str, int] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def code_of(self, row: int) -> int | None:
        """The Filter code ``row`` failed with, None if it was not evaluated or passed."""
        hits = np.flatnonzero(self.rows == row)
        return int(self.codes[int(hits[0])]) if len(hits) else None


def reason_histogram(reasons: list[tuple[str, ...]], absent: int = 0, absent_reason: str = "", *, counts: dict[str, int] | None = None) -> str:
    """``"<n> <reason>"`` entries sorted as strings, joined by ", " (kube ``FitError``)."""
    counts = dict(counts) if counts else {}
    for rs in reasons:
        for r in rs:
            counts[r] = counts.get(r, 0) + 1
    if absent and absent_reason:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    return ", ".join(sorted(f"{n} {r}" for r, n in counts.items()))


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``FitError.Error()``: ``0/N nodes are available: <filter histogram>. <post-filter msg>``."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        hist = reason_histogram([], counts=diagnosis.histogram)
        if hist:
            msg += f" {hist}."
    if diagnosis.post_filter_msg:
        msg += f" {diagnosis.post_filter_msg}"
    return msg


# ---- what a plugin is built from ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Features:
    """Feature gates a policy turns on, handed to plugins as kube hands ``feature.Features``
    (never read from a global)."""

    gang_scheduling: bool = False  # PodGroups are tracked; GangScheduling gates their members (§4.4)
    workload_scheduling_cycle: bool = False  # PodGroup queue entities and the PodGroup cycle (§4.1, §8)
    workload_aware_preemption: bool = False  # KEP-5710 (§11)
    generic_workload: bool = False  # group-aware victim importance and PodGroup priority (§5 3d)


@dataclass(frozen=True, slots=True)
class PluginArgs:
    """Everything a plugin factory gets besides the Handle: its profile (the
    KubeSchedulerConfiguration profile: pluginConfig args, weights), the scheduler-wide settings
    and the policy's feature gates."""

    profile: Profile
    config: SchedulerConfig
    features: Features


# ---- PodGroup / CompositePodGroup trees (KEP-6012, SEMANTICS §9) ----------------------------------
# kube's ``workloadForest`` in the scheduling queue and GangScheduling's ``hierarchyTracker``. A
# CompositePodGroup's state is a ``PodGroupState`` whose ``group`` is the CompositePodGroup (its
# ``policy.min_count`` is ``minGroupCount``), so PlacementFeasible, the placement plugins and the
# condition code treat both levels alike. Children are listed by key (upstream keeps them in a set
# and visits them in map order; gangsim's order is the documented tie-break).
MAX_TREE_DEPTH = 4  # schedulingv1alpha3.WorkloadMaxTreeDepth: walks stop there (the loader checks trees)


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
        for _ in range(MAX_TREE_DEPTH):
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

    def members(self, st: PodGroupState) -> dict[int, PodInfo]:
        """Every member pod of the PodGroups under ``st``."""
        return {uid: p for leaf in self.leaves(st) for uid, p in leaf.members.items()}

    # ---- readiness (hierarchyTrackerImpl.isGroupReady) ----------------------------------------
    def ready(self, st: PodGroupState) -> bool:
        """A PodGroup is ready with at least minCount member pods (the tracker gives a ``basic``
        group minCount 1), a CompositePodGroup with at least minGroupCount ready children."""
        return self.ready_children(st) >= st.min_count if is_composite(st) else len(st.members) >= st.min_count

    def ready_children(self, st: PodGroupState) -> int:
        return sum(1 for c in self.children(st.key) if self.ready(c))
