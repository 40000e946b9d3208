"""``FastPath.run_passes`` (issue 16, SB-50k): the next pods of a ``PodRun`` placed from one look
at the signature cache instead of one Filter/Score pass each. A/B tests on report bytes (on, the
switch off, ``no-pod-runs`` and the reference path) on SchedulingBasic with and without a seed,
on congested generated traces (rigid jobs on two node sizes, two priorities with preemption,
node failures) and on the head of the RICC log; a hand-built trace where a bind moves a
higher-priority pod ahead of the run (the pass must stop there); a hypothesis property over
clusters of 201–330 nodes; and a guard (not timing) on the Filter/Score passes per pod."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import shapes
from builders import SRC, create, delete, make_job, make_node, make_spec, make_trace, placements
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.api.objects import Pod, TopologySpreadConstraint
from gangsim.api.selectors import LabelSelector
from gangsim.load import load_trace
from gangsim.scheduler.fastpath.signatures import SignatureCache
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.sim.replay import replay
from tests.golden.cases import SHARED
from ab import congested_rigid_jobs, report_bytes

RICC = SHARED / "pwa-ricc-2010" / "RICC-2010-2.swf.gz"
OFF = {
    "no-run-passes": {"fast_path": FastPath(run_passes=False)},
    "no-pod-runs": {"fast_path": FastPath(pod_runs=False)},
    "no-batching": {"opportunistic_batching": False},
}
# work counters, not in reports: the pods placed by a run's pass, and the rows computed (a pass
# refreshes the rows its pods took when the next pass asks, so the last pods' rows are never computed),
# and the signature cache's hits (with the switch off, ``counted_searches`` replays some of the
# run's passes, which ask the cache less often)
WORK = {"run_pass_pods", "filter_rows_computed", "batch_hits", "post_filters_repeated"}


def _report_bytes(trace, out: Path, seed: int | None = None, policy: str = "pod", **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, seed=seed, **changes)


def _same_reports(trace, tmp_path: Path, seed: int | None) -> None:
    on = _report_bytes(trace, tmp_path / "on", seed)
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, seed, **changes), switch


def _with(trace, **changes):
    return replace(trace, config=trace.config.with_changes(**changes))


@pytest.mark.parametrize("percentage", [0, 10])
@pytest.mark.parametrize("seed", [None, 3])
def test_scheduling_basic_writes_the_same_report(seed, percentage, tmp_path):
    """1,000 nodes, 3,000 identical pods at once: 2 (adaptive: 420 rows a search) or 9 (10 %:
    100 rows) pods a pass; with a seed each pod's tie among the empty nodes is the RNG's."""
    trace = _with(shapes.scheduling_basic(nodes=1000, pods=3000), percentage_of_nodes_to_score=percentage)
    assert replay(trace, "pod", seed=seed).counters["run_pass_pods"] >= 1_000
    _same_reports(trace, tmp_path, seed)


@pytest.mark.parametrize("priorities", [1, 2])
@pytest.mark.parametrize("seed", [1, 2])
def test_congested_rigid_jobs_write_the_same_report(seed, priorities, tmp_path):
    trace = congested_rigid_jobs(tmp_path, seed, priorities=priorities)
    log = replay(trace, "pod", seed=seed)
    assert log.counters["run_pass_pods"] >= 150  # the shortcut is exercised
    if priorities == 2:
        assert log.victims
    _same_reports(trace, tmp_path, seed)


@pytest.mark.skipif(not RICC.is_file(), reason="needs ../shared/traces-data/pwa-ricc-2010")
def test_ricc_head_writes_the_same_report(tmp_path):
    """The first day of issue 16's RICC-pod row (1,024 nodes, adaptive percentage)."""
    day = 86_400_000
    trace = replace(load_trace([f"swf:{RICC}"], horizon_ms=day), horizon_ms=day)
    assert replay(trace, "pod", seed=7).counters["run_pass_pods"] > 0
    on = _report_bytes(trace, tmp_path / "on", 7)
    assert on == _report_bytes(trace, tmp_path / "off", 7, **OFF["no-run-passes"])
    assert on == _report_bytes(trace, tmp_path / "ref", 7, **OFF["no-batching"])


def _web_pod(name: str, *, priority: int = 0, zone: str = "", spread: bool = False) -> Pod:
    """A web pod, pinned to ``zone`` or keeping zones a and b within one web pod of each other."""
    spec = make_spec(cpu=1, memory_gi=1, priority=priority, labels={"app": "web"}, node_selector={"zone": zone} if zone else None, preemption_policy="Never")
    if spread:
        spec = replace(spec, topology_spread=(TopologySpreadConstraint(1, "zone", "DoNotSchedule", LabelSelector((("app", "web"),))),))
    return Pod("default", name, spec, source=SRC)


def test_a_pod_moved_ahead_by_a_bind_stops_the_pass(tmp_path, monkeypatch):
    """web-0 runs in zone a (n0); web-1 (priority 100, never preempting) fits only n0 by resources (zone b's n1 is
    too small), where it would skew the zones by 2: it fails PodTopologySpread at 1 s and waits in
    the unschedulable pool. A run of 30 pods arrives at 20 s; its first bind (an assigned pod
    added) moves web-1 to activeQ ahead of the run, so the reference path tries web-1 before the
    run's second pod: the pass stops after one pod, and the run goes on after web-1's attempt
    (whose next move, at the run's next bind, is into backoffQ: one stop only)."""
    nodes = [make_node(f"n{i}", cpu=0.5 if i == 1 else 8, memory_gi=32, labels={"zone": "a"} if i == 0 else {"zone": "b"} if i == 1 else {}) for i in range(300)]
    trace = make_trace(*(create(n) for n in nodes), create(_web_pod("web-0", zone="a")), create(_web_pod("web-1", priority=100, spread=True), at_s=1),
                       create(make_job("run", 30, cpu=1, memory_gi=1), at_s=20), config=SchedulerConfig(percentage_of_nodes_to_score=5), horizon_s=60)
    stops = []
    original = SchedulingQueue.run_is_next

    def watch(self, run):
        nxt = original(self, run)
        if not nxt:
            stops.append(len(run.pods))
        return nxt

    monkeypatch.setattr(SchedulingQueue, "run_is_next", watch)
    log = replay(trace, "pod")
    assert stops == [30]  # after the run's first pod, all 30 still in it
    assert log.counters["run_pass_pods"] > 0
    web = [p for p in log.pods if p.pod == "default/web-1"][0]
    assert web.scheduling_attempts == 3  # at 1 s, ahead of the run's second pod at 20 s, after its backoff at 22 s
    monkeypatch.undo()
    _same_reports(trace, tmp_path, None)


# ---- a property over clusters of a few hundred nodes ---------------------------------------------
_jobs = st.lists(st.tuples(st.integers(2, 40), st.sampled_from([0.5, 1, 2, 4]), st.sampled_from([0, 0, 10]), st.integers(0, 300), st.integers(30, 900)),
                 min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(201, 330), sizes=st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=3), jobs=_jobs,
       percentage=st.sampled_from([5, 40]), seed=st.sampled_from([None, 1]), lost=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 300)), max_size=2))
def test_run_passes_place_every_pod_as_pod_by_pod(nodes, sizes, jobs, percentage, seed, lost):
    """Any mix of jobs (sizes, CPUs, priorities, arrivals, durations) on nodes of mixed sizes, some
    of which fail, 5 % or 40 % of the nodes scored (100–132 rows a search: 2 or 3 pods' searches
    in one lap), a seed or none: the replay's log and its counters (rows evaluated, signature
    cache hits, cycles) are those of the pods placed pass by pass."""
    events = [create(make_node(f"n{i}", cpu=sizes[i % len(sizes)], memory_gi=16)) for i in range(nodes)]
    for i, (size, cpu, prio, at, dur) in enumerate(jobs):
        events.append(create(make_job(f"j{i}", size, cpu=cpu, memory_gi=1, priority=prio, duration_s=dur), at_s=at))
    for row, at in lost:
        events.append(delete("Node", f"n{row}", at))
    trace = make_trace(*events, config=SchedulerConfig(percentage_of_nodes_to_score=percentage), horizon_s=1_200)
    on = replay(trace, "pod", seed=seed)
    off = replay(trace, "pod", seed=seed, config=trace.config.with_changes(**OFF["no-run-passes"]))
    assert placements(on, bound_only=False) == placements(off, bound_only=False)
    assert list(on.pods) == list(off.pods)
    assert (list(on.ev_t_ms), list(on.ev_object), on.ev_message) == (list(off.ev_t_ms), list(off.ev_object), off.ev_message)
    assert {k: v for k, v in on.counters.items() if k not in WORK} == {k: v for k, v in off.counters.items() if k not in WORK}


# ---- the guard ---------------------------------------------------------------------------------
def test_a_run_takes_one_pass_for_many_pods(monkeypatch):
    """The guard: SchedulingBasic on 1,000 nodes with 10 % scored (100 rows a search, so 9 pods'
    searches fit in one lap) places 2,000 pods with one look at the signature cache per 9 pods:
    Filter/Score passes (``schedule_pod``) and signature refreshes number about 2,000 / 9, not
    one per pod. Placing them pass by pass again fails this."""
    calls: Counter[str] = Counter()
    for cls, name in [(Framework, "schedule_pod"), (SignatureCache, "entry")]:
        original = getattr(cls, name)

        def wrapper(self, *args, _original=original, _name=name, **kw):
            calls[_name] += 1
            return _original(self, *args, **kw)

        monkeypatch.setattr(cls, name, wrapper)
    trace = _with(shapes.scheduling_basic(nodes=1000, pods=2000), percentage_of_nodes_to_score=10)
    log = replay(trace, "pod")
    assert log.counters["scheduling_cycles"] == 2000
    assert log.counters["run_pass_pods"] == 2000 - 2000 // 9 - 1  # every 9th pod starts a pass, plus the last pods' remainder pass
    assert calls["schedule_pod"] <= 2
    assert calls["entry"] <= 2000 // 9 + 3


def test_the_switch_needs_the_signature_cache():
    assert SchedulerConfig().effective_fast_path.run_passes
    assert not SchedulerConfig(fast_path=FastPath(run_passes=False)).effective_fast_path.run_passes
    assert not SchedulerConfig(fast_path=FastPath(signature_cache=False)).effective_fast_path.run_passes
    assert not SchedulerConfig(opportunistic_batching=False).effective_fast_path.run_passes
