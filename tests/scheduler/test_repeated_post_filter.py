"""A single pod's failed attempt made cheaper (issue 16, Gavel-gang): its PostFilter answered by
the repeater kept from the last pod like it (``FastPath.repeated_post_filter``:
``RepeatedFailures.repeated_post_filter``), and a failure like its last one recorded in its
failure streak in O(1) (``FastPath.failure_streaks``: ``schedule_one.fail``). A/B tests on report
bytes with each switch off and on the reference path: congested generated traces of lone pods
and gangs under every policy, with one priority (every PostFilter a cluster of equals) and with
two (preemptions, nominations: no repeater), the Gavel traces' head; and guards that the
repeaters answer PostFilter calls and the streaks record lone pods' failures on a congested trace."""

from pathlib import Path

import pytest

from ab import SHARED, generated_trace, imported_trace, report_bytes
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.sim.replay import replay

GAVEL = SHARED / "microsoft-philly-partial" / "gavel-per-vc-traces-seed0"
OFF = {
    "no-repeated-post-filter": {"fast_path": FastPath(repeated_post_filter=False)},
    "no-failure-streaks": {"fast_path": FastPath(failure_streaks=False)},
    "no-batching": {"opportunistic_batching": False},
}


def _lone_pods(tmp_path: Path, seed: int, *, priorities: int, gangs: bool = True):
    """Mostly single-pod jobs of 1–8 GPUs (with some gangs of 2–8) arriving within two hours on
    12 eight-GPU nodes, replayed for five: the pending pods are moved and retried on every
    release. One priority, or 40 % high (1000) that preempt 60 % low. ``gangs`` False: only
    single pods."""
    classes = (("only", 0, 1.0),) if priorities == 1 else (("low", 0, 0.6), ("high", 1000, 0.4))
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 12, gpus=8),),
        jobs=120,
        hours=2,
        gang_sizes=((1, 0.8), (2, 0.1), (8, 0.1)) if gangs else ((1, 1.0),),
        gpus_per_pod=((1, 0.5), (2, 0.2), (4, 0.2), (8, 0.1)),
        priorities=classes,
        duration_median_s=1800,
        checkpoint_interval_s=None,
    )
    return generated_trace(tmp_path / f"lone-{seed}-{priorities}-{gangs}.jsonl", spec, horizon_ms=5 * 3_600_000)


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("priorities", [1, 2])
@pytest.mark.parametrize("seed", [1, 2])
def test_lone_pods_write_the_same_report_with_repeated_post_filters(policy, priorities, seed, tmp_path):
    trace = _lone_pods(tmp_path, seed, priorities=priorities)
    counters: dict = {}
    on = report_bytes(trace, policy, tmp_path / "on", counters=counters)
    if priorities == 1:
        assert counters["post_filters_repeated"] > 10  # (the guard: repeaters answer; runs of single-pod Jobs take most repeats)
    for switch, changes in OFF.items():
        assert on == report_bytes(trace, policy, tmp_path / switch, **changes), switch


@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_lone_pods_failing_again_are_recorded_in_their_streaks(policy, tmp_path):
    """Only single pods (each a run of one, joined when alike): their repeated failures are
    recorded in streaks, and the report is the one recorded pod by pod."""
    trace = _lone_pods(tmp_path, 4, priorities=1, gangs=False)
    counters: dict = {}
    on = report_bytes(trace, policy, tmp_path / "on", counters=counters)
    assert counters["failures_repeated"] > 20  # (joined runs take many)
    assert on == report_bytes(trace, policy, tmp_path / "off", **OFF["no-failure-streaks"])


def test_preemptions_are_not_repeated(tmp_path):
    """With lower-priority pods running, a high pod's PostFilter may find victims: no repeater
    answers it (``post_filter_repeater`` says None), and the victims are the reference path's."""
    trace = _lone_pods(tmp_path, 3, priorities=2)
    on = replay(trace, "gang")
    off = replay(trace, "gang", config=SchedulerConfig(opportunistic_batching=False))
    assert on.victims and list(on.victims) == list(off.victims)


def test_the_switch_needs_the_repeated_failures():
    fast = SchedulerConfig(fast_path=FastPath(repeated_failure=False)).effective_fast_path
    assert fast.repeated_post_filter  # (the switch reads the memo, which is absent without them)
    assert not SchedulerConfig(opportunistic_batching=False).effective_fast_path.repeated_post_filter


@pytest.mark.skipif(not GAVEL.is_dir(), reason="needs ../shared/traces-data/microsoft-philly-partial")
def test_the_gavel_head_writes_the_same_report_with_repeated_post_filters(tmp_path):
    """The Gavel/Philly per-VC traces (all 15 VCs) on 10 eight-GPU nodes, their first 11 days:
    ~15,000 lone pods of 1–8 GPUs, each retried on every release."""
    trace = imported_trace(tmp_path, "gavel", GAVEL, nodes=10, days=11)
    counters: dict = {}
    on = report_bytes(trace, "gang", tmp_path / "on", counters=counters)
    assert counters["post_filters_repeated"] > 20  # (the queue fills up later: 48 in these days, runs of single-pod Jobs taking the others)
    assert on == report_bytes(trace, "gang", tmp_path / "off", **OFF["no-repeated-post-filter"])
