"""What plugins and cycle code may use of the scheduler: the ``Handle`` (kube's
``framework.Handle``) and the read views it hands out, plus ``ClusterAPI``, the API-server side
that :mod:`gangsim.sim` implements (kube's ClientSet, in small).

Everything here is a Protocol: the concrete classes live in ``gangsim.scheduler.cache``,
``queue``, ``framework.runtime`` and ``scheduler``; plugins and cycle drivers type against these
views, so they never import the engine that runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from gangsim.api.objects import Node, PodDisruptionBudget

if TYPE_CHECKING:
    from gangsim.eventlog import EventLog
    from gangsim.scheduler.framework.types import Hierarchies
    from gangsim.scheduler.framework.interface import Code
    from gangsim.scheduler.framework.types import GroupResult, PodGroupState, PodInfo, ResourceIndex


class DeviceView(Protocol):
    """Each node's GPUs one by one (``cache.devices``; the rule is ``api.devices``)."""

    count: np.ndarray  # int64 [rows]: GPUs
    per: np.ndarray  # int64 [rows]: share units per GPU (1 without a declared share)
    share_col: np.ndarray  # int64 [rows]: column of the declared share resource, -1 none
    free: np.ndarray  # int64 [rows, devices]: each device's free share, -1 past the last
    any_share: bool  # some node declares a share (else whole GPUs only: the counter decides)

    def requests(self, rows: np.ndarray, demand: np.ndarray) -> tuple[int, np.ndarray]: ...

    def whole_free(self, rows: np.ndarray) -> np.ndarray: ...

    def best_fit_left(self, rows: np.ndarray, shared: np.ndarray) -> np.ndarray: ...


class NodeTableView(Protocol):
    """Node state as numpy columns, one row per node ever created (``cache.node_table``)."""

    resources: "ResourceIndex"
    allocatable: np.ndarray  # int64 [rows, resources]
    requested: np.ndarray
    free: np.ndarray  # allocatable - requested
    nonzero_requested: np.ndarray  # int64 [rows, 2]: cpu, memory with kube's non-zero defaults
    unschedulable: np.ndarray  # bool [rows]
    alive: np.ndarray  # bool [rows]
    position: np.ndarray  # row -> index in ``order`` (-1: gone)
    order: np.ndarray  # live rows in node-list order
    names: list[str]
    nodes: list[Node]
    row_of: dict[str, int]
    devices: DeviceView
    # change tracking for the fast path's caches
    order2: np.ndarray  # ``order`` twice: rotations are slices of it
    generation: int  # bumped on any change to any row
    static_generation: int  # bumped when labels, taints or flags change or nodes come and go
    row_generation: np.ndarray
    touched: list[int]  # rows in the order they changed (reset, with a new epoch, when long)
    touch_epoch: int

    @property
    def num_nodes(self) -> int: ...


class SnapshotView(Protocol):
    """The cluster as a cycle sees it (``cache.snapshot``). Dry runs (tentative placements,
    victims removed) go through ``assign``/``unassign`` and are always undone."""

    nodes: NodeTableView
    assigned: dict[int, "PodInfo"]
    affinity_pods: dict[int, "PodInfo"]  # assigned pods carrying any pod (anti-)affinity term
    required_anti_affinity_pods: dict[int, "PodInfo"]

    def assign(self, pod: "PodInfo", row: int) -> None: ...

    def unassign(self, pod: "PodInfo", *, keep_devices: bool = False) -> None: ...

    def pods_on(self, row: int) -> list["PodInfo"]: ...

    def assigned_below(self, priority: int) -> list["PodInfo"]: ...

    def has_assigned_below(self, priority: int) -> bool: ...

    def with_pods(self, placements: list[tuple["PodInfo", int]]) -> AbstractContextManager[None]: ...

    def pod_order_saved(self, rows: set[int]) -> AbstractContextManager[None]: ...


class Nominator(Protocol):
    @property
    def by_row(self) -> Mapping[int, Mapping[int, "PodInfo"]]:
        """Row -> uid -> pod; empty: nobody is nominated."""
        ...

    def rows(self) -> list[int]: ...

    def pods_for_row(self, row: int) -> list["PodInfo"]: ...

    def nominate(self, pod: "PodInfo", row: int) -> bool: ...

    def clear(self, pod: "PodInfo") -> bool: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


class ClusterAPI(Protocol):
    """The simulated world the scheduler acts on: time, the API server, the kubelets.
    ``gangsim.sim.cluster.Cluster`` implements it; tests can fake it."""

    @property
    def now(self) -> int: ...

    def clock(self) -> int:
        """``now`` as a callable, for the queue, which reads the time in every operation (the
        cluster may make it cheaper than the property)."""
        ...

    def call_at(self, t_ms: int, handler: Callable[[], None]) -> None:
        """Run ``handler`` at ``t_ms`` in the QUEUE phase (backoff and flush timers)."""

    def set_timer(self, t_ms: int, handler: Callable[[], None]) -> Timer:
        """Run ``handler`` at ``t_ms`` in the TIMEOUT phase (e.g. the Permit deadline)."""
        ...

    def request_cycle(self) -> None:
        """Make sure the scheduler runs (SCHEDULE phase) at the current instant."""

    def bind(self, pod: "PodInfo", node: str) -> None:
        """The pod is bound to ``node``; the kubelet starts it."""

    def reserved(self, pod: "PodInfo", node: str) -> None:
        """The pod holds resources on ``node`` while it waits at Permit."""

    def unreserved(self, pod: "PodInfo") -> None:
        """A Permit-waiting pod released its reservation."""

    def preempt(self, victims: list["Victim"], preemptor: str, preemptor_priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        """One preemption decision: DisruptionTarget on each victim and delete it (it keeps its
        resources for its termination grace period, then ends as Preempted)."""

    def attempted(self, pod: "PodInfo") -> None:
        """A scheduling attempt of the pod started."""

    def group_attempted(self, key: str, times: int = 1) -> None:
        """A PodGroup scheduling cycle started for group ``key`` (``times`` of them, one after
        the other, none of which a preemption waits on: ``FastPath.bulk_retries``)."""

    def attempt_finished(self, ref: str, *, bound: bool) -> None:
        """That attempt (pod ``ns/name`` or PodGroup key) ended, with something bound or not."""

    def scheduling_failed(self, pod: "PodInfo", message: str) -> None:
        """A scheduling attempt of the pod failed with the FailedScheduling ``message``."""

    def gated(self, pod: "PodInfo", message: str) -> None:
        """The pod is held at PreEnqueue with ``message``."""

    def failures_recorded(self, pods: tuple["PodInfo", ...], messages: tuple[str, ...], *, peelable: bool = False) -> object:
        """Each of ``pods`` was just attempted and failed with ``messages[i]`` (``attempted``, a
        FailedScheduling event, ``scheduling_failed``); returns a token for ``failed_again``.
        ``peelable``: the token stays good for the pods left after the first ones went one by
        one, each with an event of its own (``FastPath.streak_peel``)."""

    def failed_again(self, token: object, pods: tuple["PodInfo", ...], messages: tuple[str, ...], *, times: int = 1, at_ms: int | None = None, last_ms: int | None = None, max_gap_ms: int = 0, also: tuple[str, ...] = (), record: bool = True, renew: bool = False) -> bool:
        """Record an attempt in which each of ``pods`` failed again with its message at ``token``
        as those three calls per pod would, in O(1), when that is exact; False: nothing recorded.
        ``times`` such attempts, the first at ``at_ms`` (default now), the last at ``last_ms``,
        at most ``max_gap_ms`` apart after the first (``FastPath.bulk_retries``); ``also``:
        objects (a PodGroup's key) no preemption may wait on either; ``record=False``: only say
        whether it would record them. ``renew`` (``FastPath.renewed_failures``): also one attempt
        now with other ``messages``, when the events would aggregate them away."""


@dataclass(frozen=True, slots=True)
class Victim:
    pod: "PodInfo"
    node: str
    priority: int  # its priority as a victim (a group member's is its PodGroup's)


class WaitingPods(Protocol):
    """Pods reserved on a node and waiting at Permit (kube's ``waitingPodsMap``)."""

    def allow(self, pod: "PodInfo") -> None:
        """Every Permit plugin allowed it: bind now."""

    def reject(self, pod: "PodInfo", message: str, *, plugin: str, to_backoff: bool) -> None:
        """Unreserve and requeue it (``to_backoff``: through backoffQ; otherwise parked in the
        unschedulable pool until an event ``plugin`` registered for); ``plugin`` is recorded as
        its rejecting plugin."""

    def __contains__(self, pod: "PodInfo") -> bool: ...


class Handle(Protocol):
    """What a plugin or a cycle driver may use (kube's ``framework.Handle``)."""

    cluster: ClusterAPI  # the clock and the API server
    snapshot: SnapshotView
    nominator: Nominator
    waiting_pods: WaitingPods
    log: "EventLog"  # the event sink
    rng: np.random.Generator | None  # the run's one RNG (``--seed``); None: node-order tie-breaks
    hierarchy: "Hierarchies | None"  # PodGroup trees; None with the CompositePodGroup gate off

    def pod_group(self, key: str) -> "PodGroupState | None": ...

    def pdbs(self) -> Iterator[PodDisruptionBudget]: ...

    def victim_priority(self, pod: "PodInfo") -> int:
        """A pod's priority as a preemption victim (a group member's is its PodGroup's, §1.5)."""
        ...

    def bump(self, *, release: bool = True) -> None:
        """The cluster state changed (nominations, victims): queued entities may retry."""

    def activate(self, pods: list["PodInfo"]) -> None:
        """Move the queue entities of ``pods`` to activeQ now (kube's ``Handle.Activate``)."""

    def activation_epoch(self) -> int | None:
        """A number that changes whenever some pod's ``activate`` could start doing something
        again: after an ``activate`` that left the epoch unchanged, activating the same pods (or
        pods queued since) does nothing while it stays the same. None: not kept (the reference
        path, ``FastPath.sibling_activation`` off): activate every time."""

    def filter_status_on(self, pod: "PodInfo", row: int) -> tuple["Code", tuple[str, ...]]:
        """Filter (with nominated pods, kube's ``RunFilterPluginsWithNominatedPods``) on one row."""
        ...

    def fits_on(self, pod: "PodInfo", row: int) -> bool:
        """``filter_status_on(pod, row)`` is Success."""
        ...

    def run_pod_group_algorithm(self, group: "PodGroupState", pods: list["PodInfo"]) -> "GroupResult":
        """The PodGroup pass of §8.3 on the snapshot as it is (workload-aware preemption's dry run)."""
        ...
