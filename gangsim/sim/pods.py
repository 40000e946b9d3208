"""A pod as the API server and its kubelet see it (the scheduler keeps its own ``PodInfo``), and
pods that failed together: the simulator's per-pod records, shared by the cluster and the API
server's handlers (``sim.cluster``, ``sim.apiserver``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gangsim.api.objects import Pod
from gangsim.eventlog import FailureStreak
from gangsim.scheduler.framework.types import PodInfo
from gangsim.sim.jobs import Gang


class PodState(Enum):
    """A pod as its kubelet and the API server see it (the scheduler keeps its own ``PodPhase``)."""

    PENDING = "pending"  # not on a node
    WAITING = "waiting"  # reserved on a node while its gang waits at Permit
    RUNNING = "running"  # bound
    TERMINATING = "terminating"  # a preemption victim in its grace period
    ENDED = "ended"


PENDING, WAITING, RUNNING, TERMINATING, ENDED = PodState


@dataclass(slots=True, eq=False)
class SimPod:
    uid: int
    pod: Pod
    key: str  # "namespace/name"
    row: int  # its row in ``EventLog.pods``
    gang: Gang
    info: PodInfo | None = None
    state: PodState = PENDING
    job_key: str = ""
    milli: int = 0  # GPU-milli it holds on its node (``api.devices.gpu_milli``), while it holds one
    gpus: int = 0  # whole GPUs it asks (``PodSpec.gpus``, read once: every bind and end reads it)

    @property
    def requests(self) -> dict[str, int]:
        return self.pod.spec.requests


@dataclass(slots=True, eq=False)
class FailureRun:
    """Pods that failed together, and the event log's streak of their repeats."""

    infos: tuple[PodInfo, ...]
    streak: FailureStreak
