"""The scheduling queue in simulated time (SEMANTICS §4): backoff, pop-from-backoffQ, queueing
hints and the unschedulable flush; activeQ's order (the QueueSort plugin's ``sort_key``), the
``QueueLocation`` an entity is in after each operation, ``done``, ``activate``, ``move_entity``
and ``move_for_plugins`` on a queue alone."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import NO_BACKOFF, create, events_of, make_node, make_pod, make_trace, pod_rows, run
from gangsim.api.config import SchedulerConfig
from gangsim.scheduler.framework.interface import Status
from gangsim.scheduler.framework.types import QueuedEntity, QueueLocation
from gangsim.scheduler.plugins.queuesort import PrioritySort
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from fakes import pod_info


def queue(config=None, now=0, *, gated: set[str] | None = None, stale: bool = False):
    """A queue alone: a settable clock; ``gated`` holds the keys PreEnqueue rejects (mutable);
    ``stale``: every entity could end differently if retried."""
    clock = {"now": now}
    gate = gated if gated is not None else set()
    q = SchedulingQueue(
        config or SchedulerConfig(),
        now=lambda: clock["now"],
        is_stale=lambda e: stale,
        wake_at=lambda t: None,
        pre_enqueue=lambda e: Status.unresolvable(f"gated {e.key}") if e.key in gate else None,
        sort_key=PrioritySort(None, None).sort_key,  # type: ignore[arg-type]  # stateless
    )
    return q, clock


@pytest.mark.parametrize(("count", "want_ms"), [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 10_000), (9, 10_000)])
def test_backoff_doubles_from_1s_capped_at_10s(count, want_ms):
    q, _ = queue()
    e = QueuedEntity("p", pods=[], attempts=count, unschedulable_count=count)
    assert q.backoff_duration(e) == want_ms


def _upstream_backoff(initial_ms: int, max_ms: int, count: int) -> int:
    """pkg/scheduler/backend/queue/backoff_queue.go ``calculateBackoffDuration``: double from the
    initial duration, once per attempt after the first, stopping at the max."""
    duration = initial_ms
    for _ in range(1, count):
        if duration > max_ms - duration:
            return max_ms
        duration += duration
    return min(duration, max_ms)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60_000), st.integers(0, 10**7), st.integers(1, 200), st.sampled_from([1, 2, 16, 100]))
def test_backoff_is_upstreams_doubling(initial_ms, max_ms, count, size):
    q, _ = queue(SchedulerConfig(pod_initial_backoff_ms=initial_ms, pod_max_backoff_ms=max_ms))
    e = QueuedEntity("g", pods=[object()] * size, attempts=count, unschedulable_count=count)  # type: ignore[list-item]
    cap = int(max_ms * math.sqrt(size)) if size > 1 else max_ms
    assert q.backoff_duration(e) == _upstream_backoff(initial_ms, cap, count)


def test_group_backoff_cap_scales_with_sqrt_of_size():
    q, _ = queue()
    e = QueuedEntity("g", pods=[object()] * 16, attempts=9, unschedulable_count=9)  # type: ignore[list-item]
    assert q.backoff_duration(e) == 40_000  # 10 s x sqrt(16)


def test_backoff_ends_at_the_end_of_its_one_second_window():
    q, clock = queue()
    e = QueuedEntity("p", pods=[], attempts=1, unschedulable_count=1, timestamp_ms=2300)
    assert q.backoff_done_ms(e) == 4000  # 2.3 s + 1 s = 3.3 s, window [3 s, 4 s) still backs off
    e.timestamp_ms = 2000
    assert q.backoff_done_ms(e) == 4000  # expiry exactly at 3 s: the 3 s window is still backing off
    clock["now"] = 3999
    assert q.is_backing_off(e)
    clock["now"] = 4000
    assert not q.is_backing_off(e)


def test_no_backoff_when_configured_to_zero():
    q, _ = queue(SchedulerConfig(pod_initial_backoff_ms=0, pod_max_backoff_ms=0))
    e = QueuedEntity("p", pods=[], attempts=3, unschedulable_count=3, timestamp_ms=500)
    assert q.backoff_done_ms(e) == 500


def _retry_trace(config):
    return make_trace(
        create(make_node("n1", cpu=1)),
        create(make_pod("blocker", cpu=1, node_name="n1", duration_s=0.3)),
        create(make_pod("p", cpu=1)),
        config=config,
    )


def test_event_moves_pod_to_backoff_and_the_flush_releases_it():
    # p fails at 0 s; the blocker ends at 0.3 s (AssignedPod/Delete → NodeResourcesFit queues p)
    # but p backs off 1 s (without SchedulerPopFromBackoffQ there is no 1 s ordering window).
    log = run(_retry_trace(SchedulerConfig(pop_from_backoff=False)))
    assert pod_rows(log, "p")[0].bound_ms == 1000


def test_pop_from_backoff_when_active_queue_is_empty():
    log = run(_retry_trace(SchedulerConfig()))
    assert pod_rows(log, "p")[0].bound_ms == 300


def test_unschedulable_pod_waits_for_an_event_or_the_five_minute_flush():
    # No event ever helps p: it is retried by the leftover flush (> 5 min, on 30 s ticks), and
    # binds then because a node arrived without... a queueing-hint-free change: none here, so
    # it is simply attempted again at 330 s (parked at 0 s; 300 s is not > 5 min; next tick 330 s).
    t = make_trace(
        create(make_node("n1", cpu=1)),
        create(make_pod("p", cpu=2)),
        horizon_s=400,
    )
    log = run(t)
    assert pod_rows(log, "p")[0].scheduling_attempts == 2  # at 0 s and at 330 s
    # the same failure twice is one event, as the Kubernetes event recorder aggregates it
    assert [t for t, _, _ in events_of(log, "p", "FailedScheduling")] == [0]


def test_higher_priority_pods_are_popped_first_then_older():
    t = make_trace(
        create(make_node("n1", cpu=1)),
        create(make_pod("blocker", cpu=1, node_name="n1", duration_s=10, priority=100)),
        create(make_pod("old-low", cpu=1, priority=1)),
        create(make_pod("new-high", cpu=1, priority=5), at_s=5),
        create(make_pod("newer-low", cpu=1, priority=1), at_s=6),
    )
    log = run(t)
    assert pod_rows(log, "new-high")[0].bound_ms == 10_000
    assert pod_rows(log, "old-low")[0].bound_ms is None
    assert log.victims == []


def test_a_victim_can_die_in_vain():
    # old-low (prio 1) preempts the blocker at 0 s; while the blocker terminates (30 s grace),
    # new-high (prio 5) is nominated to the same node (the terminating pod still counts as a
    # potential victim) and takes it at 30 s: old-low's victim died in vain.
    t = make_trace(
        create(make_node("n1", cpu=1)),
        create(make_pod("blocker", cpu=1, node_name="n1", duration_s=100)),
        create(make_pod("old-low", cpu=1, priority=1)),
        create(make_pod("new-high", cpu=1, priority=5), at_s=5),
    )
    log = run(t)
    assert [(v.victim_pod, v.preemptor, v.ended_ms, v.in_vain) for v in log.victims] == [("default/blocker", "default/old-low", 30_000, True)]
    assert pod_rows(log, "new-high")[0].bound_ms == 30_000


# ---- a queue alone: order and locations ------------------------------------------------------------
def entity(key: str, priority: int = 0, timestamp_ms: int = 0) -> QueuedEntity:
    return QueuedEntity(key, pods=[pod_info(make_pod(key, priority=priority), 1)], timestamp_ms=timestamp_ms)


def drain(q) -> list[str]:
    out = []
    while (e := q.pop()) is not None:
        out.append(e.key)
    return out


@pytest.mark.parametrize(
    ("added", "want"),
    [
        pytest.param([("low", 1, 0), ("high", 5, 0)], ["high", "low"], id="higher-priority-first"),
        pytest.param([("late", 0, 9), ("early", 0, 3)], ["early", "late"], id="then-earlier-timestamp"),
        pytest.param([("first", 0, 3), ("second", 0, 3), ("third", 0, 3)], ["first", "second", "third"], id="then-arrival-order"),
        pytest.param([("old-low", 1, 0), ("new-high", 5, 50), ("mid", 1, 10)], ["new-high", "old-low", "mid"], id="priority-beats-age"),
    ],
)
def test_active_q_pops_in_the_queue_sort_order(added, want):
    q, _ = queue()
    for key, priority, ts in added:
        q.add(entity(key, priority, ts))
    assert drain(q) == want


def test_an_entity_keeps_its_arrival_order_when_it_comes_back():
    q, _ = queue()
    a, b = entity("a"), entity("b")
    q.add(a)
    q.add(b)
    q.pop()  # a, in flight
    q.add(a)  # back, behind nobody: b arrived later
    assert drain(q) == ["a", "b"]


A = QueueLocation


def _failed(q, e, *, plugins=frozenset({"NodeResourcesFit"}), to_backoff=False):
    q.add(e)
    q.pop()
    e.attempts += 1
    e.unschedulable_count += 1
    e.unschedulable_plugins = plugins
    q.requeue_after_failure(e, to_backoff=to_backoff)


@pytest.mark.parametrize(
    ("steps", "config", "stale", "want"),
    [
        pytest.param(lambda q, e: q.add(e), None, False, A.ACTIVE, id="added"),
        pytest.param(lambda q, e: (q.add(e), q.pop()), None, False, A.IN_FLIGHT, id="popped"),
        pytest.param(lambda q, e: _failed(q, e), None, False, A.UNSCHEDULABLE, id="rejected-by-a-plugin-is-parked"),
        pytest.param(lambda q, e: _failed(q, e, to_backoff=True), None, False, A.BACKOFF, id="to-backoff"),
        pytest.param(lambda q, e: _failed(q, e, plugins=frozenset()), None, False, A.BACKOFF, id="no-rejecting-plugin-backs-off"),
        pytest.param(lambda q, e: _failed(q, e, to_backoff=True), NO_BACKOFF, True, A.ACTIVE, id="no-backoff-and-stale-is-active"),
        pytest.param(lambda q, e: _failed(q, e, to_backoff=True), NO_BACKOFF, False, A.BACKOFF, id="no-backoff-nothing-changed-waits-in-backoff"),
        pytest.param(lambda q, e: (q.add(e), q.done(e)), None, False, A.NONE, id="done"),
        pytest.param(lambda q, e: (_failed(q, e), q.done(e)), None, False, A.NONE, id="done-while-parked"),
    ],
)
def test_queue_location(steps, config, stale, want):
    q, _ = queue(config, stale=stale)
    e = entity("p")
    steps(q, e)
    assert e.where is want


def test_a_gated_entity_is_parked_as_gated_with_its_message():
    q, _ = queue(gated={"p"})
    e = entity("p")
    q.add(e)
    assert (e.where, e.gated_message, q.pop()) == (A.GATED, "gated p", None)


def test_done_forgets_the_entity():
    q, _ = queue()
    e = entity("p")
    _failed(q, e)
    q.done(e)
    assert ("p" in q.entities, q.move_for_plugins(["NodeResourcesFit"]), drain(q)) == (False, 0, [])


def test_without_pop_from_backoff_a_backing_off_entity_waits_for_the_flush():
    q, clock = queue(SchedulerConfig(pop_from_backoff=False))
    e = entity("p")
    _failed(q, e, to_backoff=True)
    first = q.pop()
    clock["now"] = 2000
    q.flush_backoff()
    assert (first, q.pop()) == (None, e)


@pytest.mark.parametrize(
    ("operation", "start", "gate_lifted", "want"),
    [
        pytest.param("activate", "unschedulable", True, A.ACTIVE, id="activate-from-unschedulable"),
        pytest.param("activate", "backoff", True, A.ACTIVE, id="activate-from-backoff-without-waiting"),
        pytest.param("activate", "gated", True, A.ACTIVE, id="activate-from-gated-once-the-gate-lifts"),
        pytest.param("activate", "gated", False, A.GATED, id="activate-still-gated"),
        pytest.param("activate", "in-flight", True, A.IN_FLIGHT, id="activate-not-while-in-flight"),
        pytest.param("activate", "active", True, A.ACTIVE, id="activate-active-stays"),
        pytest.param("move_entity", "gated", True, A.ACTIVE, id="move-gated-re-runs-pre-enqueue"),
        pytest.param("move_entity", "gated", False, A.GATED, id="move-gated-still-gated"),
        pytest.param("move_entity", "unschedulable", True, A.BACKOFF, id="move-unschedulable-moves-on-through-backoff"),
        pytest.param("move_entity", "backoff", True, A.BACKOFF, id="move-backoff-stays"),
        pytest.param("move_entity", "in-flight", True, A.IN_FLIGHT, id="move-in-flight-stays"),
        pytest.param("move_entity", "active", True, A.ACTIVE, id="move-active-stays"),
    ],
)
def test_activate_and_move_entity(operation, start, gate_lifted, want):
    """``activate`` (kube's Activate: straight to activeQ) and ``move_entity`` (re-run PreEnqueue
    for a gated or unschedulable entity) from every location."""
    gated: set[str] = set()
    q, _ = queue(gated=gated)
    e = entity("p")
    _put(q, e, start, gated)
    if gate_lifted:
        gated.discard("p")
    getattr(q, operation)(e)
    assert e.where is want


def _put(q, e, where, gated):
    if where == "gated":
        gated.add(e.key)
        q.add(e)
    elif where == "active":
        q.add(e)
    elif where == "in-flight":
        q.add(e)
        q.pop()
    elif where == "unschedulable":
        _failed(q, e)
    elif where == "backoff":
        _failed(q, e, to_backoff=True)


def test_an_entity_is_popped_once_however_often_it_was_pushed():
    q, _ = queue()
    e = entity("p")
    _failed(q, e)
    q.activate(e)
    q.activate(e)
    q.move_entity(e)
    assert drain(q) == ["p"]


@pytest.mark.parametrize(
    ("plugins", "want_moved"),
    [
        pytest.param(["NodeResourcesFit"], ["fit", "fit-and-taint"], id="one-plugin"),
        pytest.param(["TaintToleration"], ["taint", "fit-and-taint"], id="another-plugin"),
        pytest.param(["NodeResourcesFit", "TaintToleration"], ["fit", "taint", "fit-and-taint"], id="both-each-entity-once"),
        pytest.param(["NodeAffinity"], [], id="no-rejection-by-it"),
        pytest.param([], [], id="no-plugins"),
    ],
)
def test_move_for_plugins_moves_exactly_the_entities_they_rejected(plugins, want_moved):
    q, _ = queue()
    es = {
        "fit": entity("fit"),
        "taint": entity("taint"),
        "fit-and-taint": entity("fit-and-taint"),
    }
    _failed(q, es["fit"], plugins=frozenset({"NodeResourcesFit"}))
    _failed(q, es["taint"], plugins=frozenset({"TaintToleration"}))
    _failed(q, es["fit-and-taint"], plugins=frozenset({"NodeResourcesFit", "TaintToleration"}))
    count = q.move_for_plugins(plugins)
    moved = [k for k, e in es.items() if e.where is not A.UNSCHEDULABLE]
    assert (count, moved) == (len(want_moved), want_moved)
