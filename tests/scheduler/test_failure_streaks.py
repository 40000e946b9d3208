"""A failed PodGroup attempt that repeats the group's last failure is recorded once per group
(``FastPath.failure_streaks``, the event log's ``FailureStreak``): A/B tests on report bytes
against the per-pod path on congested gang traces, the streak's settling rules one by one, and a
guard (not timing) that repeated attempts do no per-pod work."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from gangsim.api.config import FastPath
from gangsim.eventlog import COMBINED_PREFIX, SIMILAR_EVENTS_INTERVAL_MS, EventLog, EventReason, PodRecord
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.report import build_report, write_report
from gangsim.sim.cluster import Cluster
from gangsim.sim.replay import replay
from ab import SHARED, generated_trace

RICC = SHARED / "pwa-ricc-2010" / "RICC-2010-2.swf.gz"
MAX_GANG = 16


def _stuck_gangs(tmp_path: Path, seed: int = 1):
    """One priority, 2- to 16-pod whole-node gangs arriving within an hour on 16 nodes, replayed
    for 3 hours: most gangs wait behind others and are retried on every release."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 16, gpus=8),),
        jobs=24,
        hours=1,
        gang_sizes=((2, 0.2), (8, 0.3), (12, 0.3), (MAX_GANG, 0.2)),
        gpus_per_pod=((8, 1.0),),
        priorities=(("only", 0, 1.0),),
        duration_median_s=1800,
        checkpoint_interval_s=None,
    )
    return generated_trace(tmp_path / f"stuck-{seed}.jsonl", spec, horizon_ms=3 * 3_600_000)


def _report_bytes(trace, policy: str, out: Path, fast_path: FastPath | None = None, **changes) -> dict[str, bytes]:
    config = trace.config.with_changes(**changes)
    if fast_path is not None:
        config = config.with_changes(fast_path=fast_path)
    write_report(build_report(replay(trace, policy, config=config)), out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


@pytest.mark.parametrize("seed", [1, 2])
def test_stuck_gangs_report_the_same_bytes_recorded_once_per_group(seed, tmp_path):
    trace = _stuck_gangs(tmp_path, seed)
    on = _report_bytes(trace, "gang", tmp_path / "on")
    assert on == _report_bytes(trace, "gang", tmp_path / "off", FastPath(failure_streaks=False))
    assert on == _report_bytes(trace, "gang", tmp_path / "not-renewed", FastPath(renewed_failures=False))
    assert on == _report_bytes(trace, "gang", tmp_path / "ref", opportunistic_batching=False)


def _churning_gangs(tmp_path: Path, seed: int):
    """300 jobs in an hour on 32 eight-GPU nodes: mostly one-node jobs of about 5 minutes and
    some 24-node gangs. A waiting gang's FitError counts change with every release, ten times
    in ten minutes, so client-go combines its pods' messages and later new ones are aggregated
    away (``FastPath.renewed_failures``)."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 32, gpus=8),),
        jobs=300,
        hours=1,
        gang_sizes=((1, 0.7), (2, 0.15), (24, 0.15)),
        gpus_per_pod=((8, 1.0),),
        priorities=(("only", 0, 1.0),),
        duration_median_s=300,
        duration_sigma=0.8,
        checkpoint_interval_s=None,
    )
    return generated_trace(tmp_path / f"churn-{seed}.jsonl", spec, horizon_ms=2 * 3_600_000)


@pytest.mark.parametrize("seed", [1, 2])
def test_churning_gangs_record_new_messages_in_the_streak_with_the_same_bytes(seed, tmp_path):
    trace = _churning_gangs(tmp_path, seed)
    log = replay(trace, "gang")
    assert log.counters["failures_renewed"] > 1_000
    on = _report_bytes(trace, "gang", tmp_path / "on")
    assert on == _report_bytes(trace, "gang", tmp_path / "not-renewed", FastPath(renewed_failures=False))
    if seed == 1:
        assert on == _report_bytes(trace, "gang", tmp_path / "ref", opportunistic_batching=False)


def _count_per_pod_records(monkeypatch) -> Counter[str]:
    """Counts of the per-pod records of failed attempts from now on: ``Cluster.attempted``,
    ``Cluster.scheduling_failed`` and FailedScheduling events."""
    calls: Counter[str] = Counter()
    attempted, failed, event = Cluster.attempted, Cluster.scheduling_failed, EventLog.event

    def count_attempted(self, info):
        calls["attempted"] += 1
        attempted(self, info)

    def count_failed(self, info, message):
        calls["scheduling_failed"] += 1
        failed(self, info, message)

    def count_event(self, t_ms, kind, obj, node, reason, message="", **kw):
        if reason == EventReason.FAILED_SCHEDULING:
            calls["failed_scheduling_events"] += 1
        event(self, t_ms, kind, obj, node, reason, message, **kw)

    monkeypatch.setattr(Cluster, "attempted", count_attempted)
    monkeypatch.setattr(Cluster, "scheduling_failed", count_failed)
    monkeypatch.setattr(EventLog, "event", count_event)
    return calls


def test_a_renewed_failure_does_no_per_pod_work(tmp_path, monkeypatch):
    """The guard for ``renewed_failures``: each attempt recorded with new messages in the streak
    takes at least a 2-pod gang's per-pod records (attempt counter, event, waiting reason) off
    what the same replay does without it."""
    trace = _churning_gangs(tmp_path, 1)
    calls = _count_per_pod_records(monkeypatch)
    renewed = replay(trace, "gang").counters["failures_renewed"]
    on = Counter(calls)
    calls.clear()
    replay(trace, "gang", config=trace.config.with_changes(fast_path=FastPath(renewed_failures=False)))
    for name in ("attempted", "scheduling_failed", "failed_scheduling_events"):
        assert calls[name] - on[name] >= 2 * renewed > 0, name


@pytest.mark.skipif(not RICC.is_file(), reason="needs ../shared/traces-data/pwa-ricc-2010")
def test_ricc_head_reports_the_same_bytes_recorded_once_per_group(tmp_path):
    """The first 600 jobs of the RICC log (about a day and a half, 1,024 eight-core nodes, gangs
    of up to 128 pods), as ``gangsim import swf --limit 600`` writes them."""
    from gangsim.load.importers import ImportOptions, records
    from gangsim.load.importers import write_jsonl as write_imported

    path = tmp_path / "ricc.jsonl"
    with path.open("wb") as out:
        write_imported(records("swf", [str(RICC)], ImportOptions(limit=600)), out)
    trace = replace(load_trace([path]), horizon_ms=2 * 86_400_000)
    log = replay(trace, "gang")
    assert log.counters["failures_repeated"] > 0
    on = _report_bytes(trace, "gang", tmp_path / "on")
    assert on == _report_bytes(trace, "gang", tmp_path / "off", FastPath(failure_streaks=False))
    assert on == _report_bytes(trace, "gang", tmp_path / "not-renewed", FastPath(renewed_failures=False))


def test_a_repeated_group_failure_does_no_per_pod_work(tmp_path, monkeypatch):
    """The guard: on the stuck-gang trace nearly every failed attempt repeats the last one, and
    the per-pod records (attempt counter, FailedScheduling event, waiting reason) are touched only
    by the attempts that did not: at most ``MAX_GANG`` pods each. Recording a repeat pod by pod
    again would touch ~11 pods per failed attempt here, and fails this."""
    calls = _count_per_pod_records(monkeypatch)
    log = replay(_stuck_gangs(tmp_path), "gang")
    attempts = sum(log.podgroup_attempts.values())
    failed_attempts = log.podgroup_attempts["unschedulable"]
    repeated = log.counters["failures_repeated"]
    assert failed_attempts > 1_000 and repeated >= 0.9 * failed_attempts
    not_repeated = attempts - repeated
    for name in ("attempted", "scheduling_failed", "failed_scheduling_events"):
        assert 0 < calls[name] <= not_repeated * MAX_GANG, name
    # the Filter work actually done stays per state change too (the doomed pass and its cached
    # FitError): well under one node row per failed attempt
    assert log.counters["filter_rows_computed"] < failed_attempts


# ---- the streak's rules, on the event log alone -----------------------------------------------
def _log_with_failures(messages: list[tuple[int, str]], *, streak_from: int | None, renew: bool = False) -> tuple[EventLog, PodRecord]:
    """One pod failing at each (time, message); from index ``streak_from`` on, repeats of the
    message before go through a streak instead of ``event``, and with ``renew`` other messages
    too where ``fail_anew`` takes them (``FastPath.renewed_failures``)."""
    log = EventLog()
    row = log.pods.add(PodRecord("ns/p", 0, "ns/g", "ns", 8, 0, 0))
    streak = None
    for i, (t, message) in enumerate(messages):
        if streak_from is not None and i >= streak_from and streak is not None and streak.live:
            if streak.messages == (message,):
                log.fail_again(streak, t)
                continue
            if renew and log.fail_anew(streak, t, (message,)):
                continue
        log.pods.scheduling_attempts[row] += 1
        log.pods.waiting_reason[row] = message  # (``Cluster.scheduling_failed``)
        log.event(t, "Pod", "ns/p", "", EventReason.FAILED_SCHEDULING, message)
        if streak_from is not None and i + 1 >= streak_from:
            streak = log.open_streak(t, "Pod", EventReason.FAILED_SCHEDULING, ("ns/p",), (message,), (row,))
    log.settle_all()
    return log, log.pods[row]


STEP = SIMILAR_EVENTS_INTERVAL_MS // 3


@pytest.mark.parametrize(
    "failures",
    [
        pytest.param([(i * STEP, "a") for i in range(8)], id="repeats-within-the-window"),
        pytest.param([(0, "x"), (1, "y"), (2, "a"), (STEP, "a"), (STEP + SIMILAR_EVENTS_INTERVAL_MS + 1, "a"), *[(SIMILAR_EVENTS_INTERVAL_MS * 2 + i, m) for i, m in enumerate("bcdefghijk")]], id="a-gap-restarts-the-similar-messages"),
        pytest.param([*[(i, m) for i, m in enumerate("abcdefghij")], (20, "j"), (30, "j"), (40, "k"), (50, "k"), (60, "l")], id="repeats-after-combining"),
        pytest.param([(0, "a"), (10, "a"), (20, "b"), (30, "b"), (40, "a")], id="a-new-message-settles"),
    ],
)
def test_a_streak_records_what_event_by_event_records(failures):
    """Every message pattern the similar-events aggregation distinguishes (repeats, a gap past
    its interval, repeats after ten distinct messages were combined, a change of message):
    counting repeats in a streak leaves the events, the attempt count and the aggregation state
    as calling ``event`` for each."""
    ref, ref_record = _log_with_failures(failures, streak_from=None)
    fast, fast_record = _log_with_failures(failures, streak_from=1)
    if len(failures) > 10:  # the patterns that reach client-go's combining
        assert any(m.startswith(COMBINED_PREFIX) for m in ref.ev_message)
    assert fast.counters.pop("failures_repeated", 0) > 0
    assert (list(fast.ev_t_ms), fast.ev_message, fast.counters, fast._similar) == (list(ref.ev_t_ms), ref.ev_message, ref.counters, ref._similar)
    assert fast_record == ref_record


COMBINING = [(i, m) for i, m in enumerate("abcdefghij")]  # ten distinct messages: combined at 9
EDGE = 9 + SIMILAR_EVENTS_INTERVAL_MS


@pytest.mark.parametrize(
    ("failures", "renewed"),
    [
        pytest.param([*COMBINING, (20, "k"), (30, "l"), (40, "l"), (50, "m"), (60, "k")], 4, id="new-messages-after-combining"),
        pytest.param([*COMBINING, (EDGE, "x"), (EDGE + SIMILAR_EVENTS_INTERVAL_MS + 1, "y"), (EDGE + SIMILAR_EVENTS_INTERVAL_MS + 2, "z")], 1, id="a-gap-of-the-interval-and-one-past-it"),
        pytest.param([*COMBINING, (20, "k"), (21 + SIMILAR_EVENTS_INTERVAL_MS, "k"), (30 + SIMILAR_EVENTS_INTERVAL_MS, "z"), (40 + SIMILAR_EVENTS_INTERVAL_MS, "k")], 1, id="a-repeat-past-the-interval-reopens-the-window"),
        pytest.param([(0, "a"), (10, "b"), (20, "c"), (30, "b")], 0, id="never-combined"),
        pytest.param([*COMBINING, *[(10 + 7 * i, m) for i, m in enumerate("kkllmnnnop")]], 6, id="repeats-and-changes-interleaved"),
    ],
)
def test_a_renewed_streak_records_what_event_by_event_records(failures, renewed):
    """``fail_anew`` (``FastPath.renewed_failures``): new messages recorded in the streak leave
    the events, the attempt count, the waiting reason, the last failure and the similar-events
    window as calling ``event`` for each, on every pattern around the window's combining and
    its interval; and it takes a new message exactly when the window was combined and open."""
    ref, ref_record = _log_with_failures(failures, streak_from=None)
    fast, fast_record = _log_with_failures(failures, streak_from=1, renew=True)
    assert fast.counters.pop("failures_renewed", 0) == renewed
    fast.counters.pop("failures_repeated", 0)
    ref_state = (list(ref.ev_t_ms), ref.ev_message, ref.counters, ref._similar, ref._last_failure)
    assert (list(fast.ev_t_ms), fast.ev_message, fast.counters, fast._similar, fast._last_failure) == ref_state
    assert fast_record == ref_record


def test_a_streak_with_one_window_not_combined_is_not_renewed():
    log = EventLog()
    rows = tuple(log.pods.add(PodRecord(f"ns/p{i}", 0, "ns/g", "ns", 8, 0, 0)) for i in range(2))
    for t, m in COMBINING:  # p0's window combines; p1 fails once
        log.event(t, "Pod", "ns/p0", "", EventReason.FAILED_SCHEDULING, m)
    log.event(9, "Pod", "ns/p1", "", EventReason.FAILED_SCHEDULING, "j")
    streak = log.open_streak(9, "Pod", EventReason.FAILED_SCHEDULING, ("ns/p0", "ns/p1"), ("j", "j"), rows)
    assert not log.fail_anew(streak, 20, ("k", "k"))
    assert streak.live and streak.repeats == 0 and streak.messages == ("j", "j")
    assert log._last_failure[("Pod", "ns/p1")][1] == "j" and "failures_renewed" not in log.counters


def test_a_scheduled_event_settles_the_streak_first():
    log = EventLog()
    row = log.pods.add(PodRecord("ns/p", 0, "ns/g", "ns", 8, 0, 0, scheduling_attempts=1))
    log.event(0, "Pod", "ns/p", "", EventReason.FAILED_SCHEDULING, "full")
    streak = log.open_streak(0, "Pod", EventReason.FAILED_SCHEDULING, ("ns/p",), ("full",), (row,))
    log.fail_again(streak, 10)
    log.fail_again(streak, 20)
    log.event(30, "Pod", "ns/p", "n1", EventReason.SCHEDULED, "bound")
    assert not streak.live and log.pods.scheduling_attempts[row] == 3
    assert ("Pod", "ns/p", EventReason.FAILED_SCHEDULING) not in log._similar
