"""GangScheduling: PreEnqueue quorum gate (§4.4), PlacementFeasible (§8.4) and the v1.35 Permit
barrier (§7). Messages exactly as upstream."""

from __future__ import annotations

from dataclasses import dataclass

from gangsim.scheduler.cache.podgroup_state import PodGroupState
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.plugins import names

NAME = names.GANG_SCHEDULING
WAITING_FOR_GROUP = 'waiting for pod\'s pod group "{}" to appear in scheduling queue'
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
CANNOT_BE_SATISFIED = "minCount ({}) cannot be satisfied: {} scheduled, {} remaining"
NOT_YET_SATISFIED = "minCount ({}) is not yet satisfied: {} scheduled, {} remaining"
NO_PODS_SCHEDULABLE = "no pods were schedulable"


def pre_enqueue(state: PodGroupState | None, group_name: str) -> Status | None:
    """The gate for one member pod: None lets it into the queue."""
    if state is None or state.group is None:
        return Status.unresolvable(WAITING_FOR_GROUP.format(group_name), plugin=NAME)
    if state.is_gang and state.all_pods_count < state.group.policy.min_count:
        return Status.unresolvable(WAITING_FOR_MIN_COUNT, plugin=NAME)
    return None


@dataclass(slots=True)
class Progress:
    remaining: int
    scheduled: int


def placement_feasible(min_count: int, progress: Progress) -> Status | None:
    """Unschedulable when minCount can no longer be reached, Wait while it is not yet reached."""
    if progress.remaining + progress.scheduled < min_count:
        return Status(Code.UNSCHEDULABLE, (CANNOT_BE_SATISFIED.format(min_count, progress.scheduled, progress.remaining),), NAME)
    if progress.scheduled < min_count:
        return Status(Code.WAIT, (NOT_YET_SATISFIED.format(min_count, progress.scheduled, progress.remaining),), NAME)
    return None


def go_duration(ms: int) -> str:
    """Go's ``time.Duration.String()`` for whole milliseconds (``5m0s``, ``1.5s``, ``300ms``)."""
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, milli = divmod(rem, 1000)
    sec = f"{s}.{milli:03d}".rstrip("0").rstrip(".") if milli else f"{s}"
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


def permit_timeout_message(wait_ms: int) -> str:
    return f"rejected due to timeout after waiting {go_duration(wait_ms)} at plugin {NAME}"
