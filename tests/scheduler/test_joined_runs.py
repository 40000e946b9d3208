"""Runs of different Jobs joined in the unschedulable pool (``FastPath.joined_runs``), PreEnqueue
not asked again for pods that passed it (``FastPath.pre_enqueue_passed``) and a run's failure
streak kept while its first pods leave (``FastPath.streak_peel``), all under ``pod``:
A/B tests on report bytes against each switch off, ``no-pod-runs`` and the reference path on
congested traces of bursts of identical rigid jobs (several priorities, ``Never`` preemptors, a
node failure), hand-built traces for each way a joined run is split, HPC2N's first days, a
hypothesis property over small clusters, and a guard (not timing) on the queue pops and the
PreEnqueue calls per pod attempt."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import SRC, create, delete, make_job, make_node, make_trace, patch
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.api.objects import Pod
from gangsim.load import load_trace
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.sim.cluster import Cluster
from gangsim.sim.replay import replay
from ab import SHARED, report_bytes

HPC2N = SHARED / "pwa-hpc2n-2002-head" / "hpc2n.swf"
RICC = SHARED / "pwa-ricc-2010" / "RICC-2010-2.swf.gz"
OFF = {
    "no-joined-runs": {"fast_path": FastPath(joined_runs=False)},
    "no-pre-enqueue-passed": {"fast_path": FastPath(pre_enqueue_passed=False)},
    "no-streak-peel": {"fast_path": FastPath(streak_peel=False)},
    "no-pod-runs": {"fast_path": FastPath(pod_runs=False)},
    "no-batching": {"opportunistic_batching": False},
}


def _report_bytes(trace, out: Path, seed: int | None = None, **changes) -> dict[str, bytes]:
    return report_bytes(trace, "pod", out, seed=seed, **changes)


def _bursts(seed: int, *, priorities: int, nodes: int = 8, bursts: int = 12, hours: float = 8, node_failure: bool = True):
    """Bursts of 3–8 identical rigid jobs (1–4 pods of 2, 4 or 8 GPUs, one priority and
    preemption policy per burst) a few seconds apart, on ``nodes`` 8-GPU nodes: the jobs of a
    burst wait side by side, retried on every release, and are joined once they fail alike."""
    rng = np.random.default_rng(seed)
    events = [create(make_node(f"n{i}", cpu=32, memory_gi=128, gpus=8)) for i in range(nodes)]
    t = 0.0
    for b in range(bursts):
        size, gpus = int(rng.choice([1, 1, 2, 4])), int(rng.choice([8, 4, 2]))
        prio = int(rng.choice([0, 100, 1000][:priorities]))
        policy = "Never" if rng.random() < 0.15 else "PreemptLowerPriority"
        for k in range(int(rng.integers(3, 9))):
            t += float(rng.uniform(0, 20))
            job = make_job(f"b{b}-{k}", size, gpus=gpus, priority=prio, preemption_policy=policy, duration_s=float(rng.uniform(300, 3600)), rendezvous_s=600)
            events.append(create(job, at_s=t))
        t += float(rng.uniform(60, 900))
    if node_failure:
        events.append(delete("Node", "n0", at_s=hours * 1200))
    return make_trace(*events, horizon_s=hours * 3600)


@pytest.mark.parametrize("priorities", [1, 3])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_congested_bursts_write_the_same_report(seed, priorities, tmp_path, joins):
    trace = _bursts(seed, priorities=priorities)
    on = _report_bytes(trace, tmp_path / "on", seed)
    assert joins["joins"] >= 20  # the shortcut is exercised
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, seed, **changes), switch


def test_without_a_seed_too(tmp_path, joins):
    trace = _bursts(4, priorities=3)
    on = _report_bytes(trace, tmp_path / "on")
    assert joins["joins"] > 0
    assert on == _report_bytes(trace, tmp_path / "off", **OFF["no-joined-runs"])
    assert on == _report_bytes(trace, tmp_path / "ref", **OFF["no-batching"])


@pytest.mark.skipif(not HPC2N.is_file(), reason="needs ../shared/traces-data/pwa-hpc2n-2002-head")
def test_hpc2n_head_writes_the_same_report(tmp_path):
    """The first 4 days of issue 16's HPC2N-pod row (``--seed 7``; its waiting jobs rarely fail
    alike side by side, so few runs or none are joined: what is checked is that nothing else changes)."""
    trace = replace(load_trace([f"swf:{HPC2N}"], horizon_ms=4 * 86_400_000), horizon_ms=4 * 86_400_000)
    on = _report_bytes(trace, tmp_path / "on", 7)
    assert on == _report_bytes(trace, tmp_path / "off", 7, fast_path=FastPath(joined_runs=False, pre_enqueue_passed=False, streak_peel=False))
    assert on == _report_bytes(trace, tmp_path / "ref", 7, **OFF["no-batching"])


@pytest.mark.skipif(not RICC.is_file(), reason="needs ../shared/traces-data/pwa-ricc-2010")
def test_ricc_head_writes_the_same_report(tmp_path, joins):
    """The first 4 days of issue 16's RICC-pod row (no seed), where bursts of identical jobs
    wait side by side from day 3 on: hundreds of runs joined."""
    trace = replace(load_trace([f"swf:{RICC}"], horizon_ms=4 * 86_400_000), horizon_ms=4 * 86_400_000)
    on = _report_bytes(trace, tmp_path / "on")
    assert joins["joins"] >= 300
    assert on == _report_bytes(trace, tmp_path / "off", fast_path=FastPath(joined_runs=False, pre_enqueue_passed=False, streak_peel=False))


# ---- each way a joined run is split ----------------------------------------------------------
def _relabelled(name: str, job, at_s: float):
    spec = job.template
    slot = int(name.rsplit("-", 1)[1])
    return patch(Pod("default", name, replace(spec, labels={**spec.labels, "touched": "yes"}), job=job.name, index=slot, source=SRC), at_s)


def _waiting(*events, horizon_s: float = 3_000, config: SchedulerConfig | None = None):
    """Two 8-GPU nodes held by eight 2-GPU fillers ending 100 s apart (a release every 100 s that
    helps no waiting job until a whole node is free) and six identical 2-pod jobs of whole nodes
    created a second apart: retried together on every release, they are joined after their
    fifth failure (the backoff's cap)."""
    fillers = [create(make_job(f"f{i}", 1, gpus=2, duration_s=100 * (i + 1)), at_s=0) for i in range(8)]
    jobs = [make_job(f"w{i}", 2, gpus=8, duration_s=900) for i in range(6)]
    nodes = [create(make_node(f"n{i}", cpu=32, memory_gi=128, gpus=8)) for i in range(2)]
    return make_trace(*nodes, *fillers, *(create(j, at_s=1 + i) for i, j in enumerate(jobs)), *events, horizon_s=horizon_s, config=config), jobs


def _split_traces():
    _, jobs = _waiting()
    high = make_job("high", 1, gpus=8, duration_s=300, priority=100)
    never = make_job("never", 1, gpus=8, duration_s=300, priority=100, preemption_policy="Never")
    return {
        "nothing-else": _waiting()[0],
        "a-pod-updated": _waiting(_relabelled("w3-1", jobs[3], 350))[0],
        "a-pod-deleted": _waiting(delete("Pod", "w2-0", 350))[0],
        "a-middle-job-deleted": _waiting(delete("Job", "w2", 350))[0],
        "a-preemptor": _waiting(create(high, at_s=350))[0],
        "a-never-preemptor": _waiting(create(never, at_s=350))[0],
        "a-node-fails": _waiting(delete("Node", "n1", 350))[0],
        "no-pop-from-backoff": _waiting(config=SchedulerConfig(pop_from_backoff=False))[0],
        "a-job-between-started": _waiting(create(make_job("small", 1, gpus=2, duration_s=2_000), at_s=3.5))[0],
    }


@pytest.mark.parametrize("name", sorted(_split_traces()))
def test_a_joined_run_split_writes_the_same_report(name, tmp_path, joins):
    trace = _split_traces()[name]
    on = _report_bytes(trace, tmp_path / "on", 3)
    assert joins["joins"] >= 1
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, 3, **changes), switch


def test_jobs_waiting_alike_are_joined_once_their_backoff_is_capped(monkeypatch, joins):
    """The six waiting jobs become one run of twelve pods: each failed five times or more
    (older ones more), so every one backs off 10 s from now on."""
    got: list[int] = []
    join = SchedulingQueue._join

    def watch(self, e):
        join(self, e)
        got.append(len(self._entity_of[e.pods[0].uid].pods))

    monkeypatch.setattr(SchedulingQueue, "_join", watch)
    log = replay(_waiting()[0], "pod", seed=3)
    assert max(got) == 12 and joins["joins"] == 5
    assert log.counters["pod_run_attempts"] > 0


def test_runs_join_across_pods_that_left_between_them(monkeypatch):
    """A 2-GPU job created between w2 and w3 starts at the first release (100 s): its pod leaves
    the queue for good, so w2's run and w3's join though their seqs are not consecutive
    (``SchedulingQueue._queued_at_or_before``)."""
    bridged: list[tuple[int, int]] = []
    absorb = SchedulingQueue._absorb

    def watch(self, into, other):
        if into.seqs[-1] + 1 != other.seqs[0]:
            bridged.append((into.seqs[-1], other.seqs[0]))
        return absorb(self, into, other)

    monkeypatch.setattr(SchedulingQueue, "_absorb", watch)
    replay(_split_traces()["a-job-between-started"], "pod", seed=3)
    assert bridged and all(b - a == 2 for a, b in bridged)


# ---- a property over small clusters -----------------------------------------------------------
_bursts_strategy = st.lists(
    st.tuples(st.integers(1, 4), st.integers(1, 3), st.sampled_from([2, 4, 8]), st.sampled_from([0, 0, 5]), st.sampled_from(["PreemptLowerPriority", "Never"]),
              st.integers(0, 900), st.integers(60, 900)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(1, 3), bursts=_bursts_strategy, seed=st.sampled_from([None, 1]),
       events=st.lists(st.tuples(st.sampled_from(["update", "delete-pod", "delete-job"]), st.integers(0, 5), st.integers(0, 3), st.integers(1, 1_800)), max_size=3))
def test_joined_runs_record_what_the_pods_would_one_by_one(nodes, bursts, seed, events):
    """Any mix of bursts of identical rigid jobs (count, pods, GPUs, priority, preemption
    policy, arrival, duration), pod updates and deletions, Job deletions, and a seed or none:
    the replay's log is the one without joined runs and the reference path's."""
    trace_events = [create(make_node(f"n{i}", cpu=16, memory_gi=64, gpus=8)) for i in range(nodes)]
    made = []
    for b, (count, size, gpus, prio, policy, at, dur) in enumerate(bursts):
        for k in range(count):
            job = make_job(f"j{b}-{k}", size, gpus=gpus, priority=prio, preemption_policy=policy, duration_s=dur, rendezvous_s=300)
            made.append(job)
            trace_events.append(create(job, at_s=at + k))
    for kind, j, slot, at in events:
        if j >= len(made) or slot >= made[j].parallelism:
            continue
        name = f"{made[j].name}-{slot}"
        trace_events.append(_relabelled(name, made[j], at) if kind == "update" else delete("Pod", name, at) if kind == "delete-pod" else delete("Job", made[j].name, at))
    trace = make_trace(*trace_events, horizon_s=2_400)
    on = replay(trace, "pod", seed=seed)
    work = {"pod_run_attempts", "failures_repeated", "batch_hits", "filter_rows_computed", "post_filters_repeated"}  # work counters, not in reports (a joined run's pods may be replayed by counted_searches or run_pass, which ask the signature cache less)
    for changes in ({"fast_path": FastPath(joined_runs=False, pre_enqueue_passed=False, streak_peel=False)}, {"opportunistic_batching": False}):
        off = replay(trace, "pod", seed=seed, config=SchedulerConfig(**changes))
        assert list(on.pods) == list(off.pods)
        assert (list(on.ev_t_ms), list(on.ev_object), on.ev_message) == (list(off.ev_t_ms), list(off.ev_object), off.ev_message)
        assert (on.gangs, on.victims) == (off.gangs, off.victims)
        if "fast_path" in changes:
            assert {k: v for k, v in on.counters.items() if k not in work} == {k: v for k, v in off.counters.items() if k not in work}
        else:
            assert on.counters["scheduling_cycles"] == off.counters["scheduling_cycles"]


# ---- the guard ---------------------------------------------------------------------------------
def test_waiting_jobs_alike_are_popped_and_asked_as_one(monkeypatch, joins):
    """The guard: eighty identical one-pod jobs of whole nodes wait behind 2-GPU fillers that end
    one after the other (a release every 30 s, most of which help none of them). Each release moves all
    of them out of the unschedulable pool and retries each (upstream's NodeResourcesFit hint
    says Queue for any deleted assigned pod). Joined, they are one entity: the queue pops and
    the PreEnqueue calls number far fewer than the pod attempts, and so do the attempts recorded
    pod by pod after one of them bound and left the run. One pop per job again, PreEnqueue asked
    per job on every move, or the run's repeats recorded pod by pod after each bind fails this."""
    calls: Counter[str] = Counter()
    pop, ask, record = SchedulingQueue.pop, Framework.run_pre_enqueue, Cluster.attempted

    def counting_pop(self):
        e = pop(self)
        if e is not None:
            calls["pops"] += 1
        return e

    def counting_ask(self, pod):
        calls["pre_enqueue"] += 1
        return ask(self, pod)

    def counting_record(self, pod):
        calls["attempted"] += 1
        return record(self, pod)

    monkeypatch.setattr(SchedulingQueue, "pop", counting_pop)
    monkeypatch.setattr(Framework, "run_pre_enqueue", counting_ask)
    monkeypatch.setattr(Cluster, "attempted", counting_record)
    nodes = [create(make_node(f"n{i}", cpu=32, memory_gi=128, gpus=8)) for i in range(8)]
    fillers = [create(make_job(f"f{i}", 1, gpus=2, duration_s=30 * (i + 1)), at_s=0) for i in range(32)]
    jobs = [create(make_job(f"w{i}", 1, gpus=8, duration_s=3_000), at_s=1) for i in range(80)]
    log = replay(make_trace(*nodes, *fillers, *jobs, horizon_s=1_200), "pod")
    attempts = log.counters["scheduling_cycles"]
    assert attempts > 2_000 and joins["pods"] >= 70
    assert calls["pops"] <= 0.1 * attempts
    assert calls["pre_enqueue"] <= 0.1 * attempts
    assert calls["attempted"] <= 0.1 * attempts  # pod by pod only when a message changed (streak_peel)
