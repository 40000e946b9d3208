"""PrioritySort (``plugins/queuesort``): activeQ pops the higher priority first, then the earlier
timestamp; gangsim breaks the remaining tie by arrival order in the queue (``seq``).

Ported: every case of upstream ``TestLess`` (priority_sort_test.go), as ``sort_key(p1) <
sort_key(p2)`` for ``Less(p1, p2)``. Added: the PodGroup entity's priority is its PodGroup's,
and the ``seq`` tie-break (gangsim's, upstream's heap is not stable).
"""

import pytest

from builders import make_group
from gangsim.scheduler.framework.types import QueuedEntity
from scheduler.harness import harness, pod, pod_info

LOW, HIGH = 10, 100
T1, T2 = 1_000, 2_000  # t2 = t1 + 1s


def entity(sched, priority, timestamp_ms=0, seq=0):
    return QueuedEntity(key=f"{priority}/{timestamp_ms}/{seq}", pods=[pod_info(sched, pod(priority=priority))], timestamp_ms=timestamp_ms, seq=seq)


@pytest.mark.parametrize(
    ("p1", "p2", "less"),
    [
        pytest.param((LOW, 0), (HIGH, 0), False, id='TestLess/"p1.priority less than p2.priority"'),
        pytest.param((HIGH, 0), (LOW, 0), True, id='TestLess/"p1.priority greater than p2.priority"'),
        pytest.param((HIGH, T1), (HIGH, T2), True, id='TestLess/"equal priority. p1 is added to schedulingQ earlier than p2"'),
        pytest.param((HIGH, T2), (HIGH, T1), False, id='TestLess/"equal priority. p2 is added to schedulingQ earlier than p1"'),
    ],
)
def test_less(p1, p2, less):
    sched, fw = harness([])
    key = fw.queue_sort.sort_key
    assert (key(entity(sched, *p1)) < key(entity(sched, *p2))) is less


def test_equal_priority_and_timestamp_pop_in_arrival_order():
    sched, fw = harness([])
    key = fw.queue_sort.sort_key
    assert key(entity(sched, HIGH, T1, seq=1)) < key(entity(sched, HIGH, T1, seq=2))


def test_a_podgroup_entity_sorts_by_its_podgroup_priority():
    sched, fw = harness([])
    key = fw.queue_sort.sort_key
    member = pod_info(sched, pod(priority=0, group="g"))
    group = QueuedEntity(key="pg:default/g", pods=[member], group=make_group("g", 1, priority=HIGH), group_key="default/g", timestamp_ms=T2)
    assert key(group) < key(entity(sched, LOW, T1))
