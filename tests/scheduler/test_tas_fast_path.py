"""The KEP-5732 placement loop's fast path (``FastPath.placement_passes``: the signature cache,
the doomed pass and the replayed passes of ``fastpath.counted`` / ``fastpath.rotation`` over each
placement's rows) changes no placement: A/B tests on report bytes with the switch off and with
every shortcut off (the reference path), on the bundled rack trace, a congested generated
topology trace (also with workload-aware preemption of block-constrained gangs), a small B3-TAS
and generated topology clusters; and a non-timing guard."""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fast_path import report_bytes

from ab import log_facts
from benchmarks import shapes
from builders import NO_BACKOFF, create, make_group, make_job, make_node, make_trace
from gangsim.api.config import FastPath
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec, generate, write_jsonl
from gangsim.scheduler.fastpath import rotation
from gangsim.sim.replay import replay
from scenarios.test_tas_preemption import CPG, WAP

ROOT = Path(__file__).resolve().parents[2]
OFF = {"fast_path": FastPath(placement_passes=False)}
REFERENCE = {"opportunistic_batching": False}


def tas(trace):
    return replace(trace, config=trace.config.with_changes(topology_aware_workload_scheduling=True))


def assert_same_reports(trace, tmp_path):
    on = report_bytes(trace, "gang", tmp_path, "on")
    assert on == report_bytes(trace, "gang", tmp_path, "off", **OFF)
    assert on == report_bytes(trace, "gang", tmp_path, "reference", **REFERENCE)


def test_rack_local_under_tas_writes_the_reference_report(tmp_path):
    assert_same_reports(tas(load_trace([ROOT / "traces" / "rack-local.yaml"])), tmp_path)


def test_composite_trees_under_the_fast_path_write_the_reference_report(tmp_path):
    """CompositePodGroup children run the placement loop inside their parent's placement: a child
    placement carries its rack's name but only the parent's rows, and a child may have no pod."""
    trace = load_trace([ROOT / "traces" / "disaggregated-serving.yaml"])
    trace = replace(trace, config=trace.config.with_changes(topology_aware_workload_scheduling=True, composite_pod_group=True))
    assert_same_reports(trace, tmp_path)


def _congested_topology_trace(tmp_path: Path, seed: int, nodes_per_block: int) -> Path:
    """Gangs up to 160 pods constrained to one block of a GPU pool, two priorities, node
    failures: most placements are infeasible, some pass with every pod placed."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 2 * nodes_per_block, gpus=8, topology=(("block", nodes_per_block),)),),
        jobs=12,
        hours=2,
        gang_sizes=((1, 0.2), (16, 0.2), (64, 0.2), (110, 0.2), (160, 0.2)),
        gpus_per_pod=((2, 0.3), (4, 0.4), (8, 0.3)),
        priorities=(("low", 0, 0.6), ("high", 1000, 0.4)),
        duration_median_s=3600,
        node_failures=3,
        gang_topology_key="block",
    )
    path = tmp_path / f"congested-tas-{seed}.jsonl"
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    return path


@pytest.mark.parametrize("nodes_per_block", [8, 120])  # searches that scan every row / that stop early
def test_a_congested_topology_trace_writes_the_reference_report(nodes_per_block, tmp_path):
    trace = tas(load_trace([_congested_topology_trace(tmp_path, 1, nodes_per_block)]))
    trace = replace(trace, horizon_ms=4 * 3_600_000)
    assert replay(trace, "gang").counters["doomed_passes"] > 0  # the fast path is exercised
    assert_same_reports(trace, tmp_path)


@pytest.mark.parametrize(("seed", "nodes_per_block"), [(5, 8), (2, 120)])
def test_topology_constrained_preemption_writes_the_reference_report(seed, nodes_per_block, tmp_path):
    """Workload-aware preemption for block-constrained gangs (newest upstream preempts inside a
    placement): the dry runs go through the same placement loop and its fast paths (doomed
    passes, replayed passes, kept plans) on a cluster with victims removed; the reports are the
    reference path's, with the placement fast path off and with every shortcut off."""
    trace = tas(load_trace([_congested_topology_trace(tmp_path, seed, nodes_per_block)]))
    trace = replace(trace, horizon_ms=4 * 3_600_000)
    log = replay(trace, "gang")
    assert log.victims and all(v.victim_priority < v.preemptor_priority for v in log.victims)  # preemption is exercised
    assert log.counters["doomed_passes"] > 0
    assert_same_reports(trace, tmp_path)


@pytest.mark.parametrize(("events", "want"), WAP)
def test_composite_tree_preemption_writes_the_reference_report(events, want, tmp_path):
    """The ported ``TestCPGTopologyAwareSchedulingWorkloadAwarePreemption`` cases: a tree's
    workload-aware preemption re-runs the tree algorithm (children's placement loops inside their
    parent's placement) on a cluster with victims removed; same report bytes either way."""
    assert_same_reports(make_trace(*events, config=CPG, horizon_s=60), tmp_path)


def test_a_small_b3_tas_writes_the_reference_report_and_skips_the_pod_by_pod_passes(tmp_path):
    """B3-TAS's shape on 4 blocks of 125 nodes, 12 gangs of 128 four-GPU pods: each block takes
    one gang; later gangs find every block full. With the fast path, placements are decided
    without Filter pod by pod (Filter rows computed: the signature refreshes only)."""
    trace = shapes.gang_shape(500, 12, 128, gpus_per_node=8, gpus_per_pod=4, blocks=4)
    assert_same_reports(trace, tmp_path)
    fast = replay(trace, "gang")
    slow = replay(trace, "gang", config=trace.config.with_changes(**OFF))
    assert sum(1 for p in fast.pods if p.bound_ms is not None) == 4 * 128
    assert fast.counters["doomed_passes"] >= 8 * 4  # every placement of every stuck gang
    assert fast.counters["filter_rows_evaluated"] == slow.counters["filter_rows_evaluated"]  # the same searches, replayed
    assert fast.counters["filter_rows_computed"] * 20 < slow.counters["filter_rows_computed"]


@settings(max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(st.integers(96, 130), min_size=1, max_size=3),
    gangs=st.lists(
        st.tuples(st.integers(1, 170), st.sampled_from((1, 2, 4, 8)), st.integers(0, 30), st.booleans()),
        min_size=1,
        max_size=5,
    ),
)
def test_placement_passes_match_the_pod_by_pod_passes(blocks, gangs):
    """Generated topology clusters (blocks of 96-130 eight-GPU nodes: searches stop early above
    100) and single-shape gangs constrained to a block (pods, GPUs per pod, arrival, gang or
    basic): the replay with the placement fast path records what the pod-by-pod passes record."""
    events = [create(make_node(f"b{b}-{i}", cpu=96, gpus=8, memory_gi=512, labels={"block": f"b{b}"})) for b, n in enumerate(blocks) for i in range(n)]
    for g, (pods, gpus, at_s, basic) in enumerate(gangs):
        name = f"g{g}"
        events.append(create(make_group(name, pods, basic=basic, topology=("block",)), at_s))
        events.append(create(make_job(name, pods, cpu=1, gpus=gpus, group=name, duration_s=120), at_s))
    trace = make_trace(*events, config=NO_BACKOFF.with_changes(topology_aware_workload_scheduling=True), horizon_s=600)
    fast = log_facts(replay(trace, "gang", check_invariants=True))
    assert fast == log_facts(replay(trace, "gang", check_invariants=True, config=trace.config.with_changes(**OFF)))


def test_replay_takes_the_best_row_each_search_finds():
    """A ring of 6 rows, searches that stop after 2 feasible rows: feasible rows at positions
    0, 2, 3, 5 with keys (best first) 3, 0, 2, 1; each takes one pod. Search 1 from 0 finds 0, 2
    (stops at 3, 3 rows evaluated) and takes 2; search 2 from 3 finds 3, 5 (stops at 0, 3 rows)
    and takes 5; then two rows are left, so searches scan the ring: 3 then 0."""
    keys = [((3, 0),), ((0, 2),), ((2, 3),), ((1, 5),)]
    layout = rotation.Layout([0, 2, 3, 5], keys)
    assert rotation.replay(6, 2, 0, layout, 4) == (0, 3 + 3 + 6 + 6, (2, 5, 3, 0))
    # a row that takes two pods is ranked by its second key after the first
    layout = rotation.Layout([1, 4], [((0, 1), (5, 1)), ((1, 4),)])
    assert rotation.replay(6, 6, 3, layout, 3) == (3, 18, (1, 4, 1))


def _replay_scanning(n, to_find, start, layout, searches):
    """``rotation.replay`` as its docstring says it, every search scanning the rows it finds (the
    shape ``replay`` had before it took the searches over the whole ring from a heap)."""
    live = list(layout.positions)
    taken = dict.fromkeys(live, 0)
    key_of = dict(zip(live, layout.keys))
    evaluated, took = 0, []
    for _ in range(searches):
        k = len(live)
        if k > to_find:
            i = live.index(next((p for p in live if p >= start), live[0]))
            found = [live[(i + d) % k] for d in range(to_find)]
            stop = live[(i + to_find) % k]
            evaluated += (stop - start) % n
            start = stop
        else:
            found = list(live)
            evaluated += n
        if found:
            best = min(found, key=lambda p: key_of[p][taken[p]])
            took.append(best)
            taken[best] += 1
            if taken[best] == len(key_of[best]):
                live.remove(best)
    return start, evaluated, tuple(took)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 12),
    data=st.data(),
    to_find=st.integers(1, 6),
    searches=st.integers(0, 30),
)
def test_replay_is_the_scan_of_every_search(n, data, to_find, searches):
    """Property: ``replay`` (its searches over the whole ring taken from a heap) gives what
    scanning each search's rows gives. Keys name their position (``rotation.sort_key`` packs the
    row), so no two positions share one; equal totals are the ties (broken by the position)."""
    positions = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=0, max_size=n)))
    keys = [tuple(rotation.sort_key(data.draw(st.integers(-3, 3)) if data.draw(st.booleans()) else 0, p) for _ in range(data.draw(st.integers(1, 3)))) for p in positions]
    start = data.draw(st.integers(0, n - 1))
    layout = rotation.Layout(positions, keys, kept=False)
    assert rotation.replay(n, to_find, start, layout, searches) == _replay_scanning(n, to_find, start, layout, searches)


def test_the_variant_switches_the_placement_passes_off_and_nothing_else():
    from gangsim.whatif.variants import parse_policy_spec

    config = parse_policy_spec("gang+tas+no-placement-passes").config(NO_BACKOFF)
    assert config is not None and config.topology_aware_workload_scheduling
    assert config.effective_fast_path == FastPath(placement_passes=False)
    # every shortcut off turns this one off too; so does the signature cache it reads
    assert not NO_BACKOFF.with_changes(opportunistic_batching=False).effective_fast_path.placement_passes
    assert not NO_BACKOFF.with_changes(fast_path=FastPath(signature_cache=False)).effective_fast_path.placement_passes
