"""What the scheduler needs from the world around it. ``gangsim.sim`` implements these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gangsim.scheduler.framework.types import PodInfo


class ClusterAPI(Protocol):
    """The API-server side of the scheduler's actions (bind, status patches, deletions)."""

    @property
    def now(self) -> int: ...

    def call_at(self, t_ms: int, handler: Callable[[], None]) -> None:
        """Run ``handler`` at ``t_ms`` in the QUEUE phase (backoff and flush timers)."""

    def set_timer(self, t_ms: int, handler: Callable[[], None]) -> object:
        """Run ``handler`` at ``t_ms`` in the TIMEOUT phase (e.g. the Permit deadline); the
        returned handle has ``cancel()``."""

    def request_cycle(self) -> None:
        """Make sure the scheduler runs (SCHEDULE phase) at the current instant."""

    def bind(self, pod: PodInfo, row: int) -> None:
        """The pod is bound to the node; the kubelet starts it."""

    def reserved(self, pod: PodInfo, row: int) -> None:
        """The pod holds resources on ``row`` while it waits at Permit."""

    def unreserved(self, pod: PodInfo) -> None:
        """A Permit-waiting pod released its reservation."""

    def preempt(self, victims: list[tuple[PodInfo, int]], preemptor: str, preemptor_priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        """One preemption decision: set DisruptionTarget on each (victim, node row) and delete it
        (it keeps its resources for its termination grace period, then ends as Preempted)."""

    def scheduling_failed(self, pod: PodInfo, message: str) -> None:
        """A scheduling attempt of the pod failed with the FailedScheduling ``message``."""

    def attempted(self, pod: PodInfo) -> None:
        """A scheduling attempt of the pod started."""

    def gated(self, pod: PodInfo, message: str) -> None:
        """The pod is held at PreEnqueue with ``message``."""

    def group_attempted(self, key: str) -> None:
        """A PodGroup scheduling cycle started for group ``key``."""

    def attempt_started(self, ref: str) -> None:
        """A scheduling attempt of a pod (``ns/name``) or PodGroup started."""

    def attempt_finished(self, ref: str, *, bound: bool) -> None:
        """That attempt ended, with the pod (or some of the group) bound or not."""
