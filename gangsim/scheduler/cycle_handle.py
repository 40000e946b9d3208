"""What the cycle drivers (``schedule_one``, ``schedule_podgroup``, ``binding``) may use of the
scheduler: a small Handle, as kube's ``schedule_one.go`` uses ``sched.*`` through the
framework's Handle and the queue. ``gangsim.scheduler.scheduler.Scheduler`` implements it; the
drivers never import the scheduler module, so the package has no import cycle."""

from __future__ import annotations

from typing import Protocol

from gangsim.api.config import SchedulerConfig
from gangsim.eventlog import EventLog
from gangsim.scheduler.framework.handle import ClusterAPI, Nominator, SnapshotView, WaitingPods
from gangsim.scheduler.framework.types import Hierarchies
from gangsim.scheduler.framework.interface import ClusterEvent
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import Features, PodGroupState, PodInfo, QueuedEntity
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue


class WaitingPodsHandle(WaitingPods, Protocol):
    def add(self, fw: Framework, pod: PodInfo, row: int, timeout_ms: int) -> None:
        """A pod Permit told to wait: park its queue entity and report the reservation."""


class SchedulerHandle(Protocol):
    cluster: ClusterAPI  # the clock and the binder
    log: EventLog  # the event sink
    snapshot: SnapshotView
    nominator: Nominator
    queue: SchedulingQueue
    waiting_pods: WaitingPodsHandle
    config: SchedulerConfig
    features: Features
    generation: int  # bumped on every cluster change (an attempt records the one it saw)
    cycles: int  # scheduling cycles so far (``scheduling_cycles``)
    hierarchy: Hierarchies | None  # PodGroup trees (CompositePodGroup gate), else None
    # a successful PodGroup pass's placements kept assumed and not bound yet (``FastPath.keep_placements``)
    kept_unbound: list[tuple[PodInfo, int]]

    def framework_for(self, scheduler_name: str) -> Framework | None: ...

    def pod_group(self, key: str) -> PodGroupState | None: ...

    def entity_of(self, pod: PodInfo) -> QueuedEntity | None: ...

    def bump(self, *, release: bool = True) -> None: ...

    def note_bind(self, pod: PodInfo) -> None:
        """A pod was bound: forget its queue entity, record the change, run the hints."""

    def move_for(self, event: ClusterEvent) -> None:
        """Queueing hints: move the unschedulable entities whose rejecting plugins registered for ``event``."""
