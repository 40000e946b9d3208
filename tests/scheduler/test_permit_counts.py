"""``FastPath.permit_counts`` (issue 16, NASA-permit): GangScheduling's Permit compares the
gang's assumed and bound members (``PodGroupState.scheduled_count``, a walk over every member)
with minCount at each member's Permit, quadratic per gang. When the node table changed exactly
once since the gang's previous Permit (the assume of the pod now at Permit) and the members are
the same dict, the count is the previous one plus that pod. Guards counting the walks, report
bytes A/B on a generated trace where it fires, and outcome A/B against the switch off and the
reference path on random arrivals, deletions and Permit timeouts (the busy generated traces,
the NASA head and the bundled traces are in ``test_successful_path.py``'s ``OFF``)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim.api.config import FastPath
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.scheduler.framework.types import PodGroupState
from ab import ARRIVAL_OPS, gang_at_once, two_gangs_on_one_node, generated_trace, outcome, report_bytes

OFF = FastPath(permit_counts=False)


@pytest.fixture
def walks(monkeypatch):
    """How many times ``PodGroupState.scheduled_count`` walked a group's members."""
    counted = {"n": 0}
    original = PodGroupState.scheduled_count

    def count(self):
        counted["n"] += 1
        return original(self)

    monkeypatch.setattr(PodGroupState, "scheduled_count", count)
    return counted


def test_a_gang_at_permit_walks_its_members_once_not_at_every_pod(walks):
    """64 pods of one gang created at one instant on a node that holds them all: each waits at
    Permit until the last, which releases them; with the shortcut the first Permit walks the
    members and the 63 others take the count from the one before."""
    trace = gang_at_once(64)
    on = outcome(trace, "permit")
    on_walks, walks["n"] = walks["n"], 0
    off = outcome(trace, "permit", fast_path=OFF)
    assert on_walks == 1 and walks["n"] == 64
    assert on == off == outcome(trace, "permit", opportunistic_batching=False)
    assert sum(1 for p in on[0] if p[2] == 1_000) == 64


@pytest.mark.parametrize("seed", [11, 12])
def test_a_busy_trace_takes_the_counts_and_writes_the_same_report(seed, walks, tmp_path):
    """Gangs of 1–16 pods on two pools with two priorities and node failures, under ``permit``:
    most Permits take the count from the gang's previous one; the report files are the same
    byte for byte with the switch off and on the reference path."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 20, gpus=8), PoolSpec("b", 12, gpus=4)),
        jobs=60,
        hours=3,
        gang_sizes=((1, 0.3), (2, 0.2), (4, 0.3), (16, 0.2)),
        gpus_per_pod=((1, 0.4), (2, 0.3), (4, 0.3)),
        priorities=(("low", 0, 0.7), ("high", 1000, 0.3)),
        duration_median_s=1800,
        node_failures=2,
    )
    trace = generated_trace(tmp_path / f"busy-{seed}.jsonl", spec, horizon_ms=5 * 3_600_000)
    on = report_bytes(trace, "permit", tmp_path / "on")
    on_walks, walks["n"] = walks["n"], 0
    assert on == report_bytes(trace, "permit", tmp_path / "off", fast_path=OFF)
    assert 0 < 2 * on_walks < walks["n"]  # the shortcut is taken (at least half the walks saved)
    assert on == report_bytes(trace, "permit", tmp_path / "reference", opportunistic_batching=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ARRIVAL_OPS, min_g=st.integers(2, 5), min_h=st.integers(2, 4), cpu=st.integers(3, 8))
def test_permit_counts_place_and_tell_as_the_reference(ops, min_g, min_h, cpu):
    """Pods of two gangs arriving (several at an instant, some with a scheduling gate), deleted
    and let go in random order on a node too small for both, so members wait at Permit, time
    out, are deleted while waiting and come again: with ``FastPath.permit_counts`` every pod is
    placed, told and ended as with it off and as on the reference path."""
    trace = two_gangs_on_one_node(ops, min_g, min_h, cpu)
    on = outcome(trace, "permit")
    assert on == outcome(trace, "permit", fast_path=OFF)
    assert on == outcome(trace, "permit", opportunistic_batching=False)
