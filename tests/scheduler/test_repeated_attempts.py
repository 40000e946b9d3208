"""A PodGroup attempt that repeats the group's last one on an unchanged scheduler generation
(``FastPath.repeated_attempts``, ``gangsim.scheduler.fastpath.attempts``): A/B tests on report
bytes against the switch off and the reference path on congested generated gang traces (with
``attempts.CHECK`` on, so a state change that slipped past the generation fails), a hypothesis
property over random clusters, and a guard (not timing) that a repeated attempt does no per-pod
work."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import NO_BACKOFF, create, make_group, make_job, make_node, make_trace
from gangsim.api.config import FastPath
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.scheduler import schedule_podgroup
from gangsim.scheduler.fastpath import attempts, doomed
from gangsim.sim.replay import replay
from ab import SHARED, generated_trace, report_bytes

ROOT = Path(__file__).resolve().parents[2]
RICC = SHARED / "pwa-ricc-2010" / "RICC-2010-2.swf.gz"
GANG = 32
OFF = {
    "no-repeated-attempts": {"fast_path": FastPath(repeated_attempts=False)},
    "no-failure-streaks": {"fast_path": FastPath(failure_streaks=False)},
    "no-batching": {"opportunistic_batching": False},
}


@pytest.fixture(autouse=True)
def check_reuses(monkeypatch):
    """Every reuse recomputes what the attempt read and compares it with what the kept one read."""
    monkeypatch.setattr(attempts, "CHECK", True)


def _congested(tmp_path: Path, seed: int, *, priorities=(("only", 0, 1.0),), node_failures: int = 0, gpus=((8, 1.0),)):
    """Gangs of 4 to ``GANG`` pods arriving within two hours on 24 eight-GPU nodes, replayed for
    five: most wait behind others and are retried every backoff while the cluster is unchanged."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 16, gpus=8), PoolSpec("b", 8, gpus=8)),
        jobs=40,
        hours=2,
        gang_sizes=((4, 0.3), (8, 0.3), (16, 0.2), (GANG, 0.2)),
        gpus_per_pod=gpus,
        priorities=priorities,
        duration_median_s=3600,
        checkpoint_interval_s=None,
        node_failures=node_failures,
    )
    return generated_trace(tmp_path / f"congested-{seed}.jsonl", spec, horizon_ms=5 * 3_600_000)


def _report_bytes(trace, out: Path, **changes) -> dict[str, bytes]:
    return report_bytes(trace, "gang", out, **changes)


TRACES = {
    "one-priority": {},
    "one-priority-fractional-gpus": {"gpus": ((1, 0.3), (2, 0.3), (8, 0.4))},
    "two-priorities-node-failures": {"priorities": (("low", 0, 0.6), ("high", 1000, 0.4)), "node_failures": 3},
}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("shape", sorted(TRACES))
def test_congested_gangs_write_the_same_report_with_attempts_repeated(shape, seed, tmp_path):
    trace = _congested(tmp_path, seed, **TRACES[shape])
    log = replay(trace, "gang")
    assert log.counters["attempts_repeated"] >= 0.5 * log.podgroup_attempts["unschedulable"]  # the shortcut is taken
    on = _report_bytes(trace, tmp_path / "on")
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, **changes), switch


@pytest.mark.parametrize("name", ["stuck-gang.yaml", "deadlock.yaml", "mixed-day.yaml", "victims-in-vain.yaml", "jobset-gpu.yaml"])
def test_bundled_traces_write_the_same_report_with_attempts_repeated(name, tmp_path):
    trace = load_trace([ROOT / "traces" / name])
    on = _report_bytes(trace, tmp_path / "on")
    assert on == _report_bytes(trace, tmp_path / "off", **OFF["no-repeated-attempts"])


@pytest.mark.skipif(not RICC.is_file(), reason="needs ../shared/traces-data/pwa-ricc-2010")
def test_the_ricc_head_writes_the_same_report_with_attempts_repeated(tmp_path):
    """The first 600 jobs of the RICC log (gangs of up to 128 pods on 1,024 nodes)."""
    from gangsim.load.importers import ImportOptions, records
    from gangsim.load.importers import write_jsonl as write_imported

    path = tmp_path / "ricc.jsonl"
    with path.open("wb") as out:
        write_imported(records("swf", [str(RICC)], ImportOptions(limit=600)), out)
    trace = replace(load_trace([path]), horizon_ms=2 * 86_400_000)
    on = _report_bytes(trace, tmp_path / "on")
    assert on == _report_bytes(trace, tmp_path / "off", **OFF["no-repeated-attempts"])


def _log_facts(log) -> tuple:
    """Everything a report is built from, except wall-clock timings and the work counters (a
    repeated attempt skips the Filter runs behind a FitError another group's attempt evicted from
    ``doomed_fit_error``'s one-entry cache: fewer rows computed and signature-cache hits)."""
    counters = {k: v for k, v in log.counters.items() if k not in ("attempts_repeated", "attempts_slept", "batch_hits", "filter_rows_computed", "post_filters_repeated")}
    return (list(log.ev_t_ms), log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message, list(log.tl_t_ms), list(log.tl_gpus_allocated), list(log.tl_pending_pods), log.pods, log.gangs, log.victims, log.podgroup_attempts, counters)


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(st.integers(1, 8), min_size=1, max_size=6),
    gangs=st.lists(
        st.tuples(st.integers(1, 8), st.integers(1, 4), st.sampled_from((0, 100)), st.integers(0, 120), st.sampled_from(("single", "all")), st.sampled_from((60, 600, 3600))),
        min_size=1,
        max_size=6,
    ),
)
def test_repeated_attempts_record_what_every_attempt_run_in_full_records(nodes, gangs):
    """Random clusters and single-shape gangs (pods, cpu, priority, arrival, disruption mode,
    duration), with the upstream backoff: everything the replay records (pods, events, attempt
    outcomes, counters) is the same with the last attempt repeated and with every attempt run."""
    events = [create(make_node(f"n{i}", cpu=cpu, gpus=cpu)) for i, cpu in enumerate(nodes)]
    for g, (pods, cpu, priority, at_s, mode, duration_s) in enumerate(gangs):
        name = f"g{g}"
        events.append(create(make_group(name, pods, priority=priority, mode=mode), at_s))
        events.append(create(make_job(name, pods, cpu=cpu, gpus=cpu, priority=priority, group=name, duration_s=duration_s, grace_s=5), at_s))
    trace = make_trace(*events, horizon_s=3 * 3600)
    on = _log_facts(replay(trace, "gang", check_invariants=True))
    off = _log_facts(replay(trace, "gang", check_invariants=True, config=trace.config.with_changes(fast_path=FastPath(repeated_attempts=False))))
    assert on == off
    no_backoff = make_trace(*events, config=NO_BACKOFF, horizon_s=3 * 3600)
    assert _log_facts(replay(no_backoff, "gang")) == _log_facts(replay(no_backoff, "gang", config=NO_BACKOFF.with_changes(fast_path=FastPath(repeated_attempts=False))))


def test_a_repeated_attempt_does_no_per_pod_work(tmp_path, monkeypatch):
    """The guard: on a congested trace most failed attempts repeat the last one, and the
    functions that walk the group's pods (``validate``, ``pending_pods``, the doomed plan's shape
    check, the per-pod message tuple of ``finish``) run only for the attempts that do not. Any
    of them back on the retry path makes its count about the number of attempts and fails this."""
    calls: Counter[str] = Counter()

    def counting(module, name):
        fn = getattr(module, name)

        def counted(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    counting(schedule_podgroup, "validate")
    counting(schedule_podgroup, "pending_pods")
    counting(doomed, "plan")
    finish = schedule_podgroup.finish

    def counted_finish(*args, tuples=None, **kwargs):
        if tuples is None:
            calls["finish_builds_tuples"] += 1
        return finish(*args, tuples=tuples, **kwargs)

    monkeypatch.setattr(schedule_podgroup, "finish", counted_finish)
    log = replay(_congested(tmp_path, 1), "gang")
    failed = log.podgroup_attempts["unschedulable"]
    repeated = log.counters["attempts_repeated"]
    assert failed > 500 and repeated >= 0.8 * failed
    fresh = sum(log.podgroup_attempts.values()) - repeated
    assert 0 < calls["validate"] <= fresh
    assert 0 < calls["plan"] <= fresh
    assert 0 < calls["finish_builds_tuples"] <= fresh
    assert 0 < calls["pending_pods"] <= 2 * fresh  # begin_attempt's and finish's
    # and the Filter work stays per state change (the doomed pass's kept plans and FitErrors)
    assert log.counters["filter_rows_computed"] < failed


def test_a_change_the_generation_missed_is_caught(tmp_path, monkeypatch):
    """``CHECK`` is live: a member's phase changed behind the scheduler's back (no bump) is
    reported on the group's next reuse (each retry a reuse: the group does not sleep through
    them, ``FastPath.bulk_retries``)."""
    trace = _congested(tmp_path, 1)
    trace = replace(trace, config=trace.config.with_changes(fast_path=FastPath(bulk_retries=False)))
    keep, done = attempts.keep, []

    def tamper(st, r):
        keep(st, r)
        if not done:
            done.append(r)
            r.pods[0].nominated_row = 0  # not through the nominator: no generation bump

    monkeypatch.setattr(attempts, "keep", tamper)
    with pytest.raises(AssertionError, match="without a generation bump"):
        replay(trace, "gang")


def test_the_switch_reaches_the_config():
    from gangsim.api.config import SchedulerConfig
    from gangsim.whatif.variants import parse_policy_spec

    assert SchedulerConfig().effective_fast_path.repeated_attempts
    assert not SchedulerConfig(opportunistic_batching=False).effective_fast_path.repeated_attempts
    spec = parse_policy_spec("gang+no-repeated-attempts")
    assert not spec.config(SchedulerConfig()).fast_path.repeated_attempts
