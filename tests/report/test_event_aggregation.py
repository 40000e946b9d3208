"""The events table folds repeated failures as the Kubernetes event recorder does."""

from gangsim.eventlog import COMBINED_PREFIX, EventLog


def failures(log: EventLog, obj: str = "ns/p") -> list[tuple[int, str]]:
    return [(t // 60_000, m) for t, o, m in zip(log.ev_t_ms, log.ev_object, log.ev_message) if o == obj]


def test_a_failure_repeated_word_for_word_is_one_row():
    log = EventLog()
    for minute in range(5):
        log.event(minute * 60_000, "Pod", "ns/p", "", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.")
    assert failures(log) == [(0, "0/3 nodes are available: 3 Insufficient cpu.")]
    assert log.counters["events_aggregated"] == 4


def test_the_tenth_distinct_message_within_ten_minutes_becomes_one_combined_event():
    """client-go's EventAggregator: 10 distinct messages for one object and reason, each within
    10 minutes of the previous, are combined; later ones update that event (no new row) until
    the object has been quiet for more than 10 minutes."""
    log = EventLog()
    for minute in range(12):
        log.event(minute * 60_000, "Pod", "ns/p", "", "FailedScheduling", f"minCount (4) cannot be satisfied: {minute} scheduled")
    log.event(12 * 60_000, "Pod", "ns/other", "", "FailedScheduling", "another pod keeps its own count")
    log.event(30 * 60_000, "Pod", "ns/p", "", "FailedScheduling", "after a quiet spell")
    rows = failures(log)
    assert rows[:9] == [(m, f"minCount (4) cannot be satisfied: {m} scheduled") for m in range(9)]
    assert rows[9] == (9, COMBINED_PREFIX + "minCount (4) cannot be satisfied: 9 scheduled")
    assert rows[10:] == [(30, "after a quiet spell")]
    assert failures(log, "ns/other") == [(12, "another pod keeps its own count")]


def test_word_for_word_repeats_keep_the_similar_events_window_open():
    log = EventLog()
    for minute in range(9):
        log.event(minute * 60_000, "Pod", "ns/p", "", "FailedScheduling", f"m{minute}")
    for minute in range(9, 40):  # the same message every minute: never quiet for 10 minutes
        log.event(minute * 60_000, "Pod", "ns/p", "", "FailedScheduling", "m8")
    log.event(40 * 60_000, "Pod", "ns/p", "", "FailedScheduling", "m-new")
    assert failures(log)[-1] == (40, COMBINED_PREFIX + "m-new")


def test_being_scheduled_starts_a_fresh_count():
    log = EventLog()
    for minute in range(9):
        log.event(minute * 60_000, "Pod", "ns/p", "", "FailedScheduling", f"m{minute}")
    log.event(9 * 60_000, "Pod", "ns/p", "n1", "Scheduled", "bound")
    log.event(10 * 60_000, "Pod", "ns/p", "", "FailedScheduling", "m-after")
    assert failures(log)[-1] == (10, "m-after")
