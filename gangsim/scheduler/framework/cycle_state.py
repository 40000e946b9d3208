"""Per-cycle scratch space keyed per plugin (kube's ``CycleState``)."""

from __future__ import annotations

from typing import Any


class CycleState:
    __slots__ = ("_data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def clone(self) -> "CycleState":
        c = CycleState()
        c._data = dict(self._data)
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        return c
