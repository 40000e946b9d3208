"""Status codes, ``Status`` and one Protocol per extension point.

Filter and Score work on arrays of node rows rather than one node at a time: the per-node kube
signature ``Filter(pod, nodeInfo) -> *Status`` becomes ``filter(state, pod, rows) -> int8[rows]``
holding the same codes, and ``reasons`` renders the message for one row only when a FitError or
preemption diagnosis needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from gangsim.scheduler.framework.cycle_state import CycleState
    from gangsim.scheduler.framework.types import PodInfo


class Code(IntEnum):
    """``fwk.Code``. The numeric order matters only for ``int8`` arrays; never compare codes by size."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
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

    @property
    def is_rejection(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @staticmethod
    def unschedulable(*reasons: str, plugin: str = "") -> "Status":
        return Status(Code.UNSCHEDULABLE, tuple(reasons), plugin)

    @staticmethod
    def unresolvable(*reasons: str, plugin: str = "") -> "Status":
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), plugin)

    @staticmethod
    def error(*reasons: str, plugin: str = "") -> "Status":
        return Status(Code.ERROR, tuple(reasons), plugin)

    @staticmethod
    def wait(*reasons: str, plugin: str = "") -> "Status":
        return Status(Code.WAIT, tuple(reasons), plugin)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


@runtime_checkable
class Plugin(Protocol):
    NAME: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: "PodInfo") -> Status | None:
        """None lets the pod into activeQ/backoffQ; a status parks it as gated."""


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> np.ndarray:
        """int8 Code per row: SUCCESS, UNSCHEDULABLE or UNSCHEDULABLE_AND_UNRESOLVABLE."""

    def reasons(self, state: "CycleState", pod: "PodInfo", row: int) -> tuple[str, ...]:
        """Why ``row`` failed; only called to build a FitError or a preemption diagnosis."""


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    PER_ROW: bool  # True: a row's raw score depends only on that row and the pod's signature

    def score(self, state: "CycleState", pod: "PodInfo", rows: np.ndarray) -> np.ndarray | None:
        """int64 raw score per row; None means Skip (the plugin adds nothing)."""

    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """NormalizeScore over the scored rows: raw → 0..100."""


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, pod: "PodInfo", node_row: int) -> tuple[Status | None, int]:
        """(status, timeout_ms): None = allow, WAIT = hold the reservation up to timeout_ms."""
