"""Fixtures the scheduler tests share."""

from collections import Counter

import pytest

from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue


@pytest.fixture
def joins(monkeypatch) -> Counter:
    """How many runs were joined (``SchedulingQueue._absorb`` calls) during the test, and how many
    pods joined a run (``pods``)."""
    seen: Counter[str] = Counter()
    absorb = SchedulingQueue._absorb

    def counting(self, into, other):
        seen["joins"] += 1
        seen["pods"] += len(other.pods)
        return absorb(self, into, other)

    monkeypatch.setattr(SchedulingQueue, "_absorb", counting)
    return seen
