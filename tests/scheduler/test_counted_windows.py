"""``FastPath.counted_windows`` (issue 16, Gangs-10k): a successful single-shape PodGroup pass on a
cluster of 1,024 nodes or more replayed on the windows its searches reach (``fastpath.windows``)
instead of a Filter and Score pass per pod. A/B tests on report bytes (the switch off, the counted
pass off, the reference path) on clusters above and below 1,024 nodes with heterogeneous nodes,
several gang sizes and congestion; a hypothesis property against the per-pod path on small
clusters with the 1,024-node limit lowered; guards counting ``schedule_pod`` calls."""

from pathlib import Path
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import shapes
from builders import create, make_group, make_job, make_node, make_trace
from gangsim.api.config import FastPath, Profile, SchedulerConfig
from gangsim.api.objects import Affinity, PreferredSchedulingTerm, Taint, Toleration
from gangsim.api.selectors import NodeSelectorTerm, Requirement
from gangsim.scheduler.fastpath import counted
from gangsim.scheduler.framework.runtime import Framework
from gangsim.sim.replay import replay
from ab import report_bytes

OFF = {
    "no-counted-windows": {"fast_path": FastPath(counted_windows=False)},
    "no-counted-pass": {"fast_path": FastPath(counted_pass=False)},
    "no-batching": {"opportunistic_batching": False},
}
_SOFT = (Taint("soft", "x", "PreferNoSchedule"), Taint("slow", "y", "PreferNoSchedule"))
_TOLERATE = (Toleration("soft", "Equal", "x", "PreferNoSchedule"),)


def _report_bytes(trace, policy: str, out: Path, counters: dict | None = None, seed: int | None = None, **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, counters=counters, seed=seed, **changes)


def _preferred(zone: str) -> Affinity:
    """Zone ``zone`` preferred with weight 5, the next with 2: three raw scores (0, 2, 5), so
    NormalizeScore over one search's rows differs from over another's."""
    other = "abc"["abc".index(zone) - 2]
    terms = ((5, zone), (2, other))
    return Affinity(node_preferred=tuple(PreferredSchedulingTerm(w, NodeSelectorTerm((Requirement("zone", "In", (z,)),))) for w, z in terms))


def _gangs_trace(nodes: int, gangs: int, seed: int, sizes=(1, 2, 3), *, percentage: int | None = None, big: float = 0.0, horizon_s: int = 3_600):
    """``nodes`` nodes of three shapes (some of the first half with one or two PreferNoSchedule taints,
    three zones of consecutive nodes: a search's rows may lack either), then
    ``gangs`` Job + PodGroup gangs of ``sizes`` arriving a few at an instant over the horizon,
    running 10–40 minutes: small pods (several per node), some tolerating the taint or preferring
    a zone (scores that differ between rows and are normalised over a search's rows), and a
    share ``big`` of pods that take most of a node, so the cluster congests and searches wrap."""
    rnd = random.Random(seed)
    events = []
    for i in range(nodes):
        cpu, mem = rnd.choice([(4, 16), (8, 32), (16, 64)])
        taints = _SOFT[: rnd.choice([1, 2])] if rnd.random() < 0.3 and i < nodes // 2 else ()  # only in the first half
        events.append(create(make_node(f"n{i:05}", cpu=cpu, memory_gi=mem, taints=taints, labels={"zone": "abc"[3 * i // nodes]})))
    for g in range(gangs):
        size = rnd.choice(sizes)
        at = rnd.randrange(0, horizon_s // 2, 7)
        heavy = rnd.random() < big
        cpu = rnd.choice([3.5, 7, 15]) if heavy else rnd.choice([0.1, 0.25, 0.5])
        kind = rnd.random()
        extra = {"tolerations": _TOLERATE} if kind < 0.2 else {"affinity": _preferred(rnd.choice("abc"))} if kind < 0.4 else {}
        events.append(create(make_group(f"g{g}", size), at_s=at))
        events.append(create(make_job(f"g{g}", size, cpu=cpu, memory_gi=0.25, group=f"g{g}", duration_s=rnd.randrange(600, 2_400), **extra), at_s=at))
    config = SchedulerConfig(profiles=(Profile(percentage_of_nodes_to_score=percentage),)) if percentage is not None else SchedulerConfig()
    return make_trace(*events, config=config, horizon_s=horizon_s)


def _count_schedule_pod(monkeypatch) -> list[int]:
    calls = [0]
    original = Framework.schedule_pod

    def count(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Framework, "schedule_pod", count)
    return calls


# ---- A/B on report bytes ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, 3])
def test_whole_node_gangs_filling_a_big_cluster_write_the_same_report(seed, tmp_path):
    """1,100 nodes, 10 % scored (110 rows a search): 600 gangs of 2 whole-node GPU pods fill the
    nodes (failing rows in the searches; once fewer than 221 nodes are free the searches no
    longer fit and the pass runs pod by pod) until the last gangs fail (the doomed pass); with
    and without ``--seed`` (the RNG's tie draws)."""
    trace = shapes.gang_shape(nodes=1100, gangs=600, size=2, gpus_per_node=8, gpus_per_pod=8)
    on_counters: dict = {}
    on = _report_bytes(trace, "gang", tmp_path / "on", on_counters, seed, percentage_of_nodes_to_score=10)
    off_counters: dict = {}
    for switch, changes in OFF.items():
        counters: dict = {}
        assert on == _report_bytes(trace, "gang", tmp_path / switch, counters, seed, percentage_of_nodes_to_score=10, **changes), switch
        if switch == "no-counted-windows":
            off_counters = counters
    assert on_counters["counted_passes"] - off_counters["counted_passes"] >= 30  # the windows are exercised


@pytest.mark.parametrize(
    ("nodes", "gangs", "sizes", "percentage", "big", "replayed"),
    [
        (3_000, 120, (1, 2, 3), None, 0.0, 120),  # adaptive percentage: windows of 780 rows, every gang (≤ 3) replayed
        # windows of 150 rows; congested (thousands of doomed passes), gangs of 8 whose searches
        # reach full rows or wrap run pod by pod
        (1_500, 450, (1, 2, 4, 8), 10, 0.8, 250),
        (1_100, 250, (2, 3, 5), 5, 0.5, 150),  # the smallest window (100 rows), gangs up to 5
        (800, 100, (1, 2, 3), 20, 0.3, 0),  # below 1,024 nodes: the rotation layout as before, the switch changes nothing
    ],
)
def test_each_switch_off_writes_the_same_report(nodes, gangs, sizes, percentage, big, replayed, tmp_path):
    trace = _gangs_trace(nodes, gangs, seed=nodes, sizes=sizes, percentage=percentage, big=big)
    on_counters: dict = {}
    on = _report_bytes(trace, "gang", tmp_path / "on", on_counters)
    for switch, changes in OFF.items():
        counters: dict = {}
        assert on == _report_bytes(trace, "gang", tmp_path / switch, counters, **changes), switch
        if switch == "no-counted-windows":
            assert on_counters["counted_passes"] - counters["counted_passes"] >= replayed  # the windows are exercised


def test_the_windows_replay_the_gang_shape_as_pod_by_pod(tmp_path):
    """The Gangs-10k shape, smaller: gangs of 3 on 2,000 identical nodes (windows of 680 rows:
    gangs of 2 fit one rotation, gangs of 3 do not) and on 5,000 (gangs of 3 fit)."""
    for nodes, size in ((2_000, 2), (2_000, 3), (5_000, 3)):
        trace = shapes.gang_shape(nodes, 300, size)
        on = _report_bytes(trace, "gang", tmp_path / f"on-{nodes}-{size}")
        assert on == _report_bytes(trace, "gang", tmp_path / f"off-{nodes}-{size}", **OFF["no-counted-windows"])


# ---- a property against the per-pod path -----------------------------------------------------

_nodes = st.lists(st.tuples(st.sampled_from([(2, 8), (4, 16), (8, 32)]), st.booleans()), min_size=2, max_size=3)
_gangs = st.lists(
    st.tuples(st.integers(1, 4), st.integers(0, 30), st.sampled_from([0.1, 0.5, 1, 3]), st.integers(10, 80), st.sampled_from(["", "tolerate", "a", "b"])),
    min_size=1,
    max_size=40,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(shape=_nodes, repeat=st.integers(110, 160), gangs=_gangs, percentage=st.sampled_from([None, 5, 30]))
def test_the_windows_place_every_pod_where_the_per_pod_path_does(monkeypatch, shape, repeat, gangs, percentage):
    """Generated clusters of 220–480 nodes (the node shapes repeated; soft taints and three
    zones on runs of nodes, so one search's rows may have neither while another's do) with
    the 1,024-node limit lowered to 0, gangs of 1–4 arriving together, running and ending (a
    first gang of 2 small pods, whose pass on the empty cluster the windows replay): with
    ``counted_windows`` every pod lands on the node, at the time, the per-pod pass and the
    reference path put it, and the events are the same."""
    monkeypatch.setattr(counted, "MAX_ROWS", 0)
    events = []
    for r in range(repeat):
        for j, ((cpu, mem), tainted) in enumerate(shape):  # zones and taints on runs of consecutive nodes
            taints = _SOFT[: 1 + (r + j) % 2] if tainted and r < repeat // 3 else ()
            events.append(create(make_node(f"n{r:03}-{j}", cpu=cpu, memory_gi=mem, taints=taints, labels={"zone": "abc"[3 * r // repeat]})))
    for g, (size, at, cpu, duration, kind) in enumerate([(2, 0, 0.1, 60, ""), *gangs]):
        extra = {"tolerations": _TOLERATE} if kind == "tolerate" else {"affinity": _preferred(kind)} if kind else {}
        events.append(create(make_group(f"g{g}", size), at_s=at))
        events.append(create(make_job(f"g{g}", size, cpu=cpu, memory_gi=0.5, group=f"g{g}", duration_s=duration, **extra), at_s=at))
    config = SchedulerConfig(profiles=(Profile(percentage_of_nodes_to_score=percentage),)) if percentage is not None else SchedulerConfig()
    trace = make_trace(*events, config=config, horizon_s=300)

    def outcome(**changes):
        log = replay(trace, "gang", config=trace.config.with_changes(**changes))
        pods = [(p.pod, p.node, p.bound_ms, p.ended_ms) for p in log.pods]
        return pods, list(zip(log.ev_t_ms, log.ev_object, log.ev_reason, log.ev_message)), log.counters["counted_passes"]

    on = outcome()
    off = outcome(fast_path=FastPath(counted_windows=False))
    assert on[:2] == off[:2]
    assert on[2] > off[2]  # the windows replayed a pass at least
    assert on[:2] == outcome(opportunistic_batching=False)[:2]


# ---- guards: the work per successful gang ------------------------------------------------------


def test_a_successful_gang_on_a_big_cluster_runs_no_schedule_pod(monkeypatch):
    """Gangs of 3 on 5,000 nodes (windows of 500 rows): every pass is replayed, no pod runs its
    own Filter and Score; with the switch off each pod does."""
    calls = _count_schedule_pod(monkeypatch)
    trace = shapes.gang_shape(5_000, 40, 3)
    log = replay(trace, "gang")
    assert calls[0] == 0 and log.counters["counted_passes"] == 40
    assert sum(1 for p in log.pods if p.bound_ms is not None) == 120
    off = replay(trace, "gang", config=trace.config.with_changes(fast_path=FastPath(counted_windows=False)))
    assert calls[0] == 120 and off.counters["counted_passes"] == 0
    assert off.counters["filter_rows_evaluated"] == log.counters["filter_rows_evaluated"]  # the same searches


def test_a_pass_whose_searches_would_wrap_runs_pod_by_pod(monkeypatch):
    """Gangs of 3 on 2,000 nodes: three windows of 680 rows do not fit one rotation, so the
    searches would reach the rows the pass took: each pod runs its own pass."""
    calls = _count_schedule_pod(monkeypatch)
    log = replay(shapes.gang_shape(2_000, 20, 3), "gang")
    assert calls[0] == 60 and log.counters["counted_passes"] == 0


def test_each_search_normalises_its_scores_over_its_own_rows():
    """NormalizeScore runs over the rows one search finds, not over every search's of the pass.
    1,500 nodes (windows of 570 rows); a gang of two 3-CPU pods preferring zone a with weight 100
    and zone b with weight 1. The first search finds only zone-a nodes; the second finds 4-CPU
    zone-b nodes and 64-CPU zone-c nodes. Over its own rows the zone-b preference normalises to
    100, which outweighs the bigger nodes' free resources, so the second pod lands on the first
    zone-b node, as pod by pod; over both searches' rows it would be 1, and a zone-c node would win."""
    term = lambda w, z: PreferredSchedulingTerm(w, NodeSelectorTerm((Requirement("zone", "In", (z,)),)))  # noqa: E731
    events = [create(make_node(f"n{i:04}", cpu=16, memory_gi=256, labels={"zone": "a"})) for i in range(570)]
    events += [create(make_node(f"n{i:04}", cpu=4 if i % 2 == 0 else 64, memory_gi=256, labels={"zone": "b" if i % 2 == 0 else "c"})) for i in range(570, 1_500)]
    events += [create(make_group("g", 2)), create(make_job("g", 2, cpu=3, memory_gi=1, group="g", affinity=Affinity(node_preferred=(term(100, "a"), term(1, "b")))))]
    trace = make_trace(*events)
    on = replay(trace, "gang")
    assert on.counters["counted_passes"] == 1
    assert sorted(p.node for p in on.pods) == ["n0000", "n0570"]
    off = replay(trace, "gang", config=trace.config.with_changes(fast_path=FastPath(counted_windows=False)))
    assert [(p.pod, p.node) for p in on.pods] == [(p.pod, p.node) for p in off.pods]
