"""A stuck PodGroup sleeping through retries that repeat its last attempt
(``FastPath.bulk_retries``: ``gangsim.scheduler.queue.sleepers``, ``gangsim.scheduler.fastpath.bulk``):
A/B tests on report bytes against the switch off, the repeated attempts off and the reference path
(congested generated gang traces with several priorities, node failures and deletions, the RICC
log's head, the Gavel traces' head), a hypothesis property over random clusters with deletions, a
guard counting the attempts actually run against the attempts recorded, and the retry schedule's
closed form against the backoff step by step."""

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import create, delete, make_group, make_job, make_node, make_trace
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.scheduler import schedule_podgroup
from gangsim.scheduler.framework.types import QueuedEntity
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.scheduler.queue.sleepers import Sleeping, advance
from gangsim.sim.replay import replay
from ab import SHARED, generated_trace, imported_trace, report_bytes

RICC = SHARED / "pwa-ricc-2010" / "RICC-2010-2.swf.gz"
GAVEL = SHARED / "microsoft-philly-partial" / "gavel-per-vc-traces-seed0"
OFF = {
    "no-bulk-retries": {"fast_path": FastPath(bulk_retries=False)},
    "no-repeated-attempts": {"fast_path": FastPath(repeated_attempts=False)},
    "no-batching": {"opportunistic_batching": False},
}
WORK = ("attempts_repeated", "attempts_slept", "batch_hits", "filter_rows_computed", "failures_repeated", "events_aggregated", "post_filters_repeated")


def _congested(tmp_path: Path, seed: int, *, priorities=(("only", 0, 1.0),), node_failures: int = 0, jobs: int = 40, hours: float = 2):
    """Gangs of 2 to 32 pods arriving within ``hours`` on 24 eight-GPU nodes, replayed for five
    hours: most wait behind others, retried every backoff while the cluster is unchanged."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 16, gpus=8), PoolSpec("b", 8, gpus=8)),
        jobs=jobs,
        hours=hours,
        gang_sizes=((2, 0.2), (4, 0.2), (8, 0.3), (16, 0.15), (32, 0.15)),
        gpus_per_pod=((1, 0.3), (8, 0.7)),
        priorities=priorities,
        duration_median_s=1800,
        checkpoint_interval_s=None,
        node_failures=node_failures,
    )
    return generated_trace(tmp_path / f"congested-{seed}.jsonl", spec, horizon_ms=5 * 3_600_000)


def _report_bytes(trace, out: Path, **changes) -> dict[str, bytes]:
    return report_bytes(trace, "gang", out, **changes)


def _same_reports(trace, tmp_path: Path, switches=OFF) -> None:
    on = _report_bytes(trace, tmp_path / "on")
    for switch, changes in switches.items():
        assert on == _report_bytes(trace, tmp_path / switch, **changes), switch


TRACES = {
    "one-priority": {},
    "three-priorities-node-failures": {"priorities": (("low", 0, 0.5), ("mid", 500, 0.3), ("high", 1000, 0.2)), "node_failures": 4},
    "two-priorities-busy": {"priorities": (("low", 0, 0.7), ("high", 1000, 0.3)), "jobs": 80, "hours": 1},
}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("shape", sorted(TRACES))
def test_congested_gangs_write_the_same_report_with_bulk_retries(shape, seed, tmp_path):
    trace = _congested(tmp_path, seed, **TRACES[shape])
    log = replay(trace, "gang")
    assert log.counters.get("attempts_slept", 0) > 0  # the shortcut is taken
    _same_reports(trace, tmp_path)


def test_deleted_sleeping_gangs_write_the_same_report(tmp_path):
    """Jobs deleted while their gangs wait (a sleeper leaving the queue: ``done``) and a node
    deleted under them (a generation change in the API phase)."""
    events = [create(make_node(f"n{i}", cpu=8, gpus=8)) for i in range(4)]
    for g in range(8):
        name = f"g{g}"
        events.append(create(make_group(name, 3, priority=100 * (g % 2)), 10 * g))
        events.append(create(make_job(name, 3, cpu=4, gpus=4, priority=100 * (g % 2), group=name, duration_s=1800, grace_s=5), 10 * g))
    events += [delete("Job", "g5", 700, "default"), delete("Job", "g6", 1201, "default"), delete("Node", "n3", 2500)]
    trace = make_trace(*events, horizon_s=4 * 3600)
    assert replay(trace, "gang").counters.get("attempts_slept", 0) > 0
    _same_reports(trace, tmp_path)


@pytest.mark.skipif(not RICC.is_file(), reason="needs ../shared/traces-data/pwa-ricc-2010")
def test_the_ricc_head_writes_the_same_report_with_bulk_retries(tmp_path):
    """The first 800 jobs of the RICC log (gangs of up to 128 pods on 1,024 nodes), two days."""
    trace = imported_trace(tmp_path, "swf", RICC, limit=800, days=2)
    _same_reports(trace, tmp_path, {"no-bulk-retries": OFF["no-bulk-retries"]})


@pytest.mark.skipif(not GAVEL.is_dir(), reason="needs ../shared/traces-data/microsoft-philly-partial")
def test_the_gavel_head_writes_the_same_report_with_bulk_retries(tmp_path):
    """The Gavel/Philly per-VC traces (all 15 VCs) on 10 eight-GPU nodes, their first 11 days."""
    trace = imported_trace(tmp_path, "gavel", GAVEL, nodes=10, days=11)
    assert replay(trace, "gang").counters.get("attempts_slept", 0) > 1000
    _same_reports(trace, tmp_path, {"no-bulk-retries": OFF["no-bulk-retries"]})


def _log_facts(log) -> tuple:
    """Everything a report is built from, except wall-clock timings and the work counters."""
    counters = {k: v for k, v in log.counters.items() if k not in WORK}
    return (list(log.ev_t_ms), log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message, list(log.tl_t_ms), list(log.tl_gpus_allocated), list(log.tl_pending_pods), log.pods, log.gangs, log.victims, log.podgroup_attempts, counters, log.info)


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(st.integers(1, 8), min_size=1, max_size=5),
    gangs=st.lists(
        st.tuples(st.integers(1, 6), st.integers(1, 4), st.sampled_from((0, 100, 1000)), st.integers(0, 300), st.sampled_from((60, 600, 3600)), st.sampled_from((None, 400, 1500))),
        min_size=1,
        max_size=7,
    ),
    node_gone_s=st.sampled_from((None, 900, 2000)),
    horizon=st.sampled_from((None, 2 * 3600)),
)
def test_bulk_retries_record_what_every_retry_run_in_full_records(nodes, gangs, node_gone_s, horizon):
    """Random clusters and single-shape gangs (pods, cpu, priority, arrival, duration, deleted
    at): everything the replay records is the same with the sleepers and with every retry run
    (with and without a horizon: the retries after the last change are counted to its end)."""
    events = [create(make_node(f"n{i}", cpu=cpu, gpus=cpu)) for i, cpu in enumerate(nodes)]
    for g, (pods, cpu, priority, at_s, duration_s, deleted_s) in enumerate(gangs):
        name = f"g{g}"
        events.append(create(make_group(name, pods, priority=priority), at_s))
        events.append(create(make_job(name, pods, cpu=cpu, gpus=cpu, priority=priority, group=name, duration_s=duration_s, grace_s=5), at_s))
        if deleted_s is not None:
            events.append(delete("Job", name, at_s + deleted_s, "default"))
    if node_gone_s is not None:
        events.append(delete("Node", "n0", node_gone_s))
    events.sort(key=lambda ev: ev.at_ms)
    trace = make_trace(*events, horizon_s=horizon)
    on = replay(trace, "gang", check_invariants=True)
    off = replay(trace, "gang", check_invariants=True, config=trace.config.with_changes(fast_path=FastPath(bulk_retries=False)))
    assert _log_facts(on) == _log_facts(off)
    assert on.counters.get("attempts_slept", 0) + off.counters.get("attempts_repeated", 0) >= on.counters.get("attempts_repeated", 0)


def test_a_sleeping_gang_runs_few_of_the_attempts_it_records(tmp_path, monkeypatch):
    """The guard: on a congested trace almost every failed attempt repeats the last one, and a
    sleeping group's repeats are counted, not run. The attempts run (``schedule_podgroup`` called)
    plus the ones slept through are the attempts recorded, and the ones run are a small part."""
    run: Counter[str] = Counter()
    schedule = schedule_podgroup.schedule_podgroup

    def counted(h, e, st):
        run["attempts"] += 1
        return schedule(h, e, st)

    import gangsim.scheduler.scheduler as scheduler_module

    monkeypatch.setattr(scheduler_module, "schedule_podgroup", counted)
    log = replay(_congested(tmp_path, 1), "gang")
    recorded = sum(log.podgroup_attempts.values())
    slept = log.counters["attempts_slept"]
    assert recorded > 1000
    assert run["attempts"] + slept == recorded
    assert run["attempts"] <= 0.25 * recorded
    assert log.counters["scheduling_cycles"] >= recorded


@pytest.mark.parametrize("window_ms", [0, 1000])
@pytest.mark.parametrize("size", [1, 3, 64])
def test_the_retry_schedule_in_closed_form_is_the_backoff_step_by_step(size, window_ms):
    """``sleepers.advance`` (a loop while the backoff doubles, then the cap's period) counts the
    retries the queue's backoff gives one at a time: the same count, times and entity counters."""
    config = SchedulerConfig(backoff_window_ms=window_ms, pop_from_backoff=window_ms > 0)
    queue = SchedulingQueue(config, now=lambda: 0, is_stale=lambda e: False, wake_at=lambda t: None, pre_enqueue=lambda e: None, sort_key=lambda e: (e.seq,))

    def entity() -> QueuedEntity:
        return QueuedEntity(key="pg:x", pods=[object()] * size, group_key="x", timestamp_ms=1234, attempts=1, unschedulable_count=1)  # type: ignore[list-item]

    class Tally:
        def __init__(self) -> None:
            self.calls: list[tuple[int, int, int, int]] = []

        def retried(self, times: int, first_ms: int, last_ms: int, max_gap_ms: int) -> None:
            self.calls.append((times, first_ms, last_ms, max_gap_ms))

    e = entity()
    times, t, gaps = [], e.timestamp_ms, []
    while True:  # the reference: requeue at each retry, the next one at its backoff_done_ms
        due = queue.backoff_done_ms(e)
        if due >= 4 * 3_600_000:
            break
        gaps.append(due - t)
        times.append(due)
        t = e.timestamp_ms = due
        e.attempts += 1
        e.unschedulable_count += 1
    for limits in ([4 * 3_600_000], [5_000, 77_777, 600_001, 4 * 3_600_000]):
        slept, tally = entity(), Tally()
        s = Sleeping(slept, tally, queue.backoff_done_ms(slept), queue.backoff_duration(slept))
        for limit in limits:
            advance(s, limit, queue.backoff_duration, queue.backoff_done_ms)
        assert sum(c[0] for c in tally.calls) == len(times)
        assert (tally.calls[0][1], tally.calls[-1][2]) == (times[0], times[-1])
        assert (slept.attempts, slept.unschedulable_count, slept.timestamp_ms) == (e.attempts, e.unschedulable_count, e.timestamp_ms)
        assert s.due == queue.backoff_done_ms(e)
        if len(limits) == 1:
            assert tally.calls[0][3] == max(gaps[1:])  # the longest gap after the first


def test_the_switch_reaches_the_config():
    from gangsim.whatif.variants import parse_policy_spec

    assert SchedulerConfig().effective_fast_path.bulk_retries
    assert not SchedulerConfig(fast_path=FastPath(repeated_attempts=False)).effective_fast_path.bulk_retries
    assert not SchedulerConfig(fast_path=FastPath(failure_streaks=False)).effective_fast_path.bulk_retries
    assert not SchedulerConfig(opportunistic_batching=False).effective_fast_path.bulk_retries
    spec = parse_policy_spec("gang+no-bulk-retries")
    assert not spec.config(SchedulerConfig()).fast_path.bulk_retries
