"""Scheduler-side views of pods and queue entities (kube's ``PodInfo``, ``QueuedPodInfo``,
``QueuedPodGroupInfo``), and the diagnosis of a failed cycle (``NodeToStatus``, ``FitError``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from gangsim.api.objects import PodGroup, PodSpec, PreemptionPolicy
from gangsim.scheduler.framework.interface import Code, Status

NO_NODE = -1


class PodPhase(IntEnum):
    PENDING = 0  # not assigned to a node (queued, gated, in flight)
    WAITING = 1  # reserved on a node, waiting at Permit
    BOUND = 2
    ENDED = 3  # deleted or finished; kept only while someone still holds a reference


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
    def gpus(self) -> int:
        return self.spec.gpus

    @property
    def preemption_policy(self) -> PreemptionPolicy:
        return self.spec.preemption_policy

    def __repr__(self) -> str:
        return f"PodInfo({self.key}#{self.uid})"


@dataclass(slots=True, eq=False)
class QueuedEntity:
    """A queue item: one pod, or one PodGroup with its queued member pods (SEMANTICS §4.1)."""

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
    gated_plugin: str = ""
    where: str = ""  # "active" | "backoff" | "unschedulable" | "gated" | "inflight" | ""
    seq: int = 0  # tie-break of equal (priority, timestamp): arrival order in the queue
    # set while the entity sits in unschedulable/gated so that the flush can age it
    parked_ms: int = 0

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


# ---- diagnosis ---------------------------------------------------------------------------------


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
    row_status: object = None  # callable(row) -> Status | None, set by the framework

    def status_of(self, row: int) -> Status | None:
        hits = np.flatnonzero(self.rows == row)
        if len(hits) == 0 or self.row_status is None:
            return None
        return self.row_status(row, Code(int(self.codes[int(hits[0])])))  # type: ignore[operator]


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
