"""PrioritySort: activeQ pops higher priority first, then the earlier timestamp (SEMANTICS §4.2);
gangsim breaks the remaining tie by arrival order in the queue (upstream's heap is not stable)."""

from __future__ import annotations

from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import QueueSortPlugin
from gangsim.scheduler.framework.types import PluginArgs, QueuedEntity
from gangsim.scheduler.plugins import names


class PrioritySort(QueueSortPlugin):
    NAME = names.PRIORITY_SORT

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        pass  # stateless

    def sort_key(self, e: QueuedEntity) -> tuple:
        return (-e.priority, e.timestamp_ms, e.seq)
