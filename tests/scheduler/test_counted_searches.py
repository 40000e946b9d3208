"""``FastPath.counted_searches`` (issue 16, NASA under ``permit`` and ``pod``): pod-by-pod cycles of
one shape where every pod finds a node get the rows the counted pass's searches take, each step
checked against the node table. A guard counting Filter passes (not timing), A/B tests on report
bytes with the switch off and on the reference path (whole-node gangs on a busy generated
cluster with priorities, preemption and node failures; the NASA head and the mixed busy traces
are in ``test_successful_path.py``'s ``OFF``), and a hypothesis property over generated traces."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import SRC, create, make_group, make_node, make_spec, make_trace
from gangsim.api.config import FastPath
from gangsim.api.objects import Pod
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.scheduler.fastpath.counted_searches import CountedSearches
from gangsim.scheduler.framework.runtime import Framework
from gangsim.sim.replay import replay
from ab import generated_trace, outcome as ab_outcome, report_bytes

OFF = FastPath(counted_searches=False)


def _whole_node_trace(directory: Path, seed: int, *, jobs: int = 60, nodes: int = 24, failures: int = 2):
    """Gangs of 1–16 pods that each take a whole 8-GPU node, two priorities, node failures."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", nodes, gpus=8), PoolSpec("b", 8, gpus=8)),
        jobs=jobs,
        hours=3,
        gang_sizes=((1, 0.3), (2, 0.2), (4, 0.3), (16, 0.2)),
        gpus_per_pod=((8, 1.0),),
        priorities=(("low", 0, 0.7), ("high", 1000, 0.3)),
        duration_median_s=1800,
        node_failures=failures,
    )
    return generated_trace(directory / f"whole-{seed}-{jobs}-{nodes}-{failures}.jsonl", spec, horizon_ms=5 * 3_600_000)


def _report_bytes(trace, policy: str, out: Path, **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, **changes)


def _gangs_one_after_another(gangs: int, size: int, nodes: int):
    """``gangs`` gangs of ``size`` whole-node pods (8 GPUs), one every 10 minutes, each running 5
    minutes, on ``nodes`` 8-GPU nodes: every pod fits at its first attempt."""
    events = [create(make_node(f"n{i}", cpu=64, gpus=8, memory_gi=64)) for i in range(nodes)]
    for g in range(gangs):
        spec = make_spec(cpu=1, gpus=8, group=f"g{g}", duration_s=300)
        events.append(create(make_group(f"g{g}", size), at_s=600 * g))
        events += [create(Pod(namespace="default", name=f"g{g}-{i}", spec=spec, source=SRC), at_s=600 * g) for i in range(size)]
    return make_trace(*events)


@pytest.mark.parametrize("policy", ["permit", "pod"])
def test_a_gang_of_whole_node_pods_takes_its_rows_without_a_filter_pass_per_pod(policy, monkeypatch):
    """4 gangs of 8 whole-node pods on 20 nodes: each gang's pods get the rows replayed from a
    layout read when its first pod comes, no Filter pass at all; without the switch each pod gets
    its pass, and lands on the same node at the same time."""
    passes = {"n": 0}
    replayed = {"n": 0}
    find, take = Framework.find_nodes_that_fit, CountedSearches.take

    def count_pass(self, state, pod):
        passes["n"] += 1
        return find(self, state, pod)

    def count_take(self, pod, upcoming):
        row = take(self, pod, upcoming)
        replayed["n"] += row is not None
        return row

    monkeypatch.setattr(Framework, "find_nodes_that_fit", count_pass)
    monkeypatch.setattr(CountedSearches, "take", count_take)
    trace = _gangs_one_after_another(4, 8, 20)
    on = replay(trace, policy)
    assert (passes["n"], replayed["n"]) == (0, 32)
    passes["n"] = replayed["n"] = 0
    off = replay(trace, policy, config=trace.config.with_changes(fast_path=OFF))
    assert (passes["n"], replayed["n"]) == (32, 0)
    assert [(p.pod, p.node, p.bound_ms) for p in on.pods] == [(p.pod, p.node, p.bound_ms) for p in off.pods]
    assert sum(1 for p in on.pods if p.bound_ms is not None) == 32


@pytest.mark.parametrize("policy", ["permit", "pod", "gang"])
@pytest.mark.parametrize("seed", [5, 6, 7])
def test_whole_node_gangs_write_the_same_report_with_the_switch_off_and_on_the_reference_path(policy, seed, tmp_path):
    trace = _whole_node_trace(tmp_path, seed)
    on = _report_bytes(trace, policy, tmp_path / "on")
    assert on == _report_bytes(trace, policy, tmp_path / "off", fast_path=OFF)
    assert on == _report_bytes(trace, policy, tmp_path / "ref", opportunistic_batching=False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 100_000), jobs=st.integers(5, 40), nodes=st.integers(2, 12), failures=st.integers(0, 2))
def test_counted_searches_place_and_tell_as_the_reference(seed, jobs, nodes, failures, tmp_path_factory):
    """Generated whole-node traces, crowded or not: under ``permit`` and ``pod`` every pod is
    placed, told and ended as with the switch off and as on the reference path."""
    trace = _whole_node_trace(tmp_path_factory.mktemp("g"), seed, jobs=jobs, nodes=nodes, failures=failures)

    def outcome(policy, **changes):
        return ab_outcome(trace, policy, **changes)

    for policy in ("permit", "pod"):
        on = outcome(policy)
        assert on == outcome(policy, fast_path=OFF)
        assert on == outcome(policy, opportunistic_batching=False)
