"""Per-cycle scratch space keyed per plugin (kube's ``CycleState``), and the plugins whose
PreFilter said Skip for this cycle."""

from __future__ import annotations

from typing import Any


class CycleState:
    __slots__ = ("_data", "skip_filter", "pre_filtered")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.pre_filtered = False  # PreFilter has run on this state

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value
