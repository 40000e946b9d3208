"""The discrete-event loop (``gangsim.sim.engine``): entries run by (time, phase, insertion), the
horizon is exclusive, ``stop`` is asked only between instants, timers are cancelled lazily and the
``productive`` count (the run is idle at 0) follows ``at``, ``timer``, cancel and fire; nothing may
be scheduled in the past."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gangsim.sim.engine import Engine, Phase


def recorder():
    ran: list = []
    return ran, ran.append


@pytest.mark.parametrize(
    ("entries", "want"),
    [
        pytest.param([(5, Phase.API, "late"), (1, Phase.SCHEDULE, "early")], ["early", "late"], id="time-first"),
        pytest.param(
            [(0, Phase.SCHEDULE, "schedule"), (0, Phase.QUEUE, "queue"), (0, Phase.TIMEOUT, "timeout"), (0, Phase.KUBELET, "kubelet"), (0, Phase.API, "api")],
            ["api", "kubelet", "timeout", "queue", "schedule"],
            id="phase-within-an-instant",
        ),
        pytest.param([(3, Phase.API, "a"), (3, Phase.API, "b"), (3, Phase.API, "c")], ["a", "b", "c"], id="insertion-within-a-phase"),
        pytest.param(
            [(2, Phase.QUEUE, "q2"), (1, Phase.QUEUE, "q1"), (2, Phase.API, "a2-first"), (2, Phase.API, "a2-second")],
            ["q1", "a2-first", "a2-second", "q2"],
            id="mixed",
        ),
    ],
)
def test_entries_run_by_time_then_phase_then_insertion(entries, want):
    engine = Engine()
    ran, record = recorder()
    for t, phase, label in entries:
        engine.at(t, phase, record, label)
    engine.run(100)
    assert ran == want


def test_an_entry_added_during_an_instant_for_that_instant_runs_in_it():
    engine = Engine()
    ran, record = recorder()
    engine.at(5, Phase.API, lambda _: engine.at(5, Phase.SCHEDULE, record, "scheduled at 5"))
    engine.at(6, Phase.API, record, "at 6")
    engine.run(100)
    assert ran == ["scheduled at 5", "at 6"]


@pytest.mark.parametrize(
    ("until", "want"),
    [
        pytest.param(10, ["t9"], id="entry-at-the-horizon-is-not-run"),
        pytest.param(11, ["t9", "t10"], id="one-ms-later-it-is"),
        pytest.param(9, [], id="nothing-before-it"),
    ],
)
def test_horizon_is_exclusive(until, want):
    engine = Engine()
    ran, record = recorder()
    engine.at(9, Phase.API, record, "t9")
    engine.at(10, Phase.API, record, "t10")
    engine.run(until)
    assert ran == want


def test_an_entry_left_at_the_horizon_runs_in_the_next_run():
    engine = Engine()
    ran, record = recorder()
    engine.at(10, Phase.API, record, "t10")
    engine.run(10)
    engine.run(20)
    assert (ran, engine.now) == (["t10"], 10)


def test_stop_is_asked_between_instants_only():
    engine = Engine()
    ran, record = recorder()
    asked: list[tuple[int, int]] = []  # (now, entries run so far) at each question

    def stop() -> bool:
        asked.append((engine.now, len(ran)))
        return False

    for t in (0, 0, 5, 5, 5, 9):
        engine.at(t, Phase.API, record, t)
    engine.run(100, stop=stop)
    # never inside an instant; the first instant (t = now = 0) is not preceded by a question
    assert asked == [(0, 2), (5, 5)]


def test_stop_ends_the_run_before_the_next_instant():
    engine = Engine()
    ran, record = recorder()
    for t in (0, 5, 5, 9):
        engine.at(t, Phase.API, record, t)
    engine.run(100, stop=lambda: engine.now >= 5)
    assert (ran, engine.now) == ([0, 5, 5], 5)


def test_a_cancelled_timer_does_not_fire():
    engine = Engine()
    ran, record = recorder()
    keep = engine.timer(3, Phase.TIMEOUT, record, "kept")
    gone = engine.timer(2, Phase.TIMEOUT, record, "cancelled")
    gone.cancel()
    engine.run(100)
    assert (ran, keep.cancelled) == (["kept"], True)


def _productive_after(steps) -> int:
    engine = Engine()
    timers = {}
    for step in steps:
        op = step[0]
        if op == "at":
            engine.at(step[1], Phase.API, lambda _: None, productive=step[2])
        elif op == "timer":
            timers[step[1]] = engine.timer(step[2], Phase.TIMEOUT, lambda _: None)
        elif op == "cancel":
            timers[step[1]].cancel()
        elif op == "run":
            engine.run(step[1])
    return engine.productive


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("at", 5, True)], 1, id="at-counts"),
        pytest.param([("at", 5, False)], 0, id="housekeeping-at-does-not-count"),
        pytest.param([("at", 5, True), ("run", 6)], 0, id="at-stops-counting-when-run"),
        pytest.param([("timer", "t", 5)], 1, id="timer-counts"),
        pytest.param([("timer", "t", 5), ("cancel", "t")], 0, id="cancelled-timer-stops-counting-at-once"),
        pytest.param([("timer", "t", 5), ("cancel", "t"), ("cancel", "t")], 0, id="cancelling-twice-counts-once"),
        pytest.param([("timer", "t", 5), ("cancel", "t"), ("run", 6)], 0, id="cancelled-entry-skipped-lazily"),
        pytest.param([("timer", "t", 5), ("run", 6)], 0, id="fired-timer-stops-counting"),
        pytest.param([("timer", "t", 5), ("run", 6), ("cancel", "t")], 0, id="cancel-after-firing-is-a-no-op"),
        pytest.param([("timer", "t", 5), ("timer", "u", 50), ("run", 6)], 1, id="only-the-fired-one-stops"),
    ],
)
def test_productive_accounting(steps, want):
    assert _productive_after(steps) == want


def test_cancelled_timer_leaves_its_entry_in_the_heap_until_its_time():
    engine = Engine()
    engine.timer(7, Phase.TIMEOUT, lambda _: None).cancel()
    assert (engine.peek(), engine.productive) == (7, 0)


@pytest.mark.parametrize(
    "schedule",
    [
        pytest.param(lambda e: e.at(4, Phase.API, lambda _: None), id="at"),
        pytest.param(lambda e: e.timer(4, Phase.TIMEOUT, lambda _: None), id="timer"),
    ],
)
def test_scheduling_in_the_past_raises(schedule):
    engine = Engine()
    engine.at(5, Phase.API, lambda _: None)
    engine.run(6)
    with pytest.raises(RuntimeError, match="in the past"):
        schedule(engine)


def test_scheduling_at_now_is_allowed():
    engine = Engine()
    ran, record = recorder()
    engine.at(5, Phase.API, lambda _: None)
    engine.run(6)
    engine.at(5, Phase.API, record, "now")
    engine.run(6)
    assert ran == ["now"]


entries = st.lists(st.tuples(st.integers(0, 20), st.sampled_from(list(Phase))), max_size=40)


@given(entries)
def test_any_set_of_at_calls_runs_in_sorted_time_phase_seq_order(items):
    engine = Engine()
    ran, record = recorder()
    for seq, (t, phase) in enumerate(items):
        engine.at(t, phase, record, (t, phase, seq))
    engine.run(21)
    assert ran == sorted((t, phase, seq) for seq, (t, phase) in enumerate(items))


@given(entries, st.integers(0, 21))
def test_a_run_stops_at_its_horizon_and_the_next_run_continues_in_order(items, cut):
    engine = Engine()
    ran, record = recorder()
    for seq, (t, phase) in enumerate(items):
        engine.at(t, phase, record, (t, phase, seq))
    engine.run(cut)
    first = list(ran)
    engine.run(21)
    want = sorted((t, phase, seq) for seq, (t, phase) in enumerate(items))
    assert (first, ran) == ([x for x in want if x[0] < cut], want)


# ---- feed: the trace's events beside the heap (issue 16) ----------------------------------------
fed_and_added = st.lists(st.tuples(st.booleans(), st.integers(0, 20), st.sampled_from(list(Phase))), max_size=40)


@given(fed_and_added, st.integers(0, 21), st.lists(st.tuples(st.integers(0, 20), st.sampled_from(list(Phase))), max_size=6))
def test_fed_entries_run_as_at_entries_would(items, cut, during):
    """``feed`` (in order or not) mixed with ``at``, a run cut at a horizon, entries added by
    handlers while running: the order, ``peek`` and ``productive`` are those of ``at`` alone."""

    def drive(use_feed: bool):
        engine = Engine()
        ran: list = []
        extra = iter(during)

        def record(label):
            ran.append((label, engine.peek(), engine.productive))
            nxt = next(extra, None)
            if nxt is not None and nxt[0] >= engine.now:  # a handler scheduling more (a pod ending later)
                engine.at(nxt[0], nxt[1], record, ("during", *nxt))

        for seq, (fed, t, phase) in enumerate(items):
            (engine.feed if fed and use_feed else engine.at)(t, phase, record, (t, phase, seq))
        engine.run(cut)
        first = (list(ran), engine.peek(), engine.productive)
        engine.run(22)
        return first, ran, engine.peek(), engine.productive

    assert drive(True) == drive(False)
