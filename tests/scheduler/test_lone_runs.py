"""Runs of pods of no PodGroup under ``gang`` and ``permit`` (``FastPath.pod_runs`` and
``joined_runs`` beside PodGroups; issue 16's Gavel-gang row, whose single-pod Jobs are retried
on every release): A/B tests on report bytes against each switch off and the reference path on
congested mixes of single-pod Jobs and gangs (several priorities, ``Never`` preemptors,
disruptionMode Single and All, a node failure), the Gavel traces' head, a hypothesis property,
that a PodGroup's pods never form or join a run there, and a guard (not timing) on the queue
pops per pod attempt."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import create, delete, make_group, make_job, make_node, make_trace
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.scheduler.framework.types import PodRun
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.sim.replay import replay
from ab import SHARED, imported_trace, report_bytes

GAVEL = SHARED / "microsoft-philly-partial" / "gavel-per-vc-traces-seed0"
OFF = {
    "no-pod-runs": {"fast_path": FastPath(pod_runs=False)},
    "no-joined-runs": {"fast_path": FastPath(joined_runs=False)},
    "no-batching": {"opportunistic_batching": False},
}
REPORTED = ("scheduling_cycles", "podgroup_preemption_attempts")  # the counters reports show (the others count work)


def _mixed(seed: int, *, priorities: int, nodes: int = 6, jobs: int = 50, hours: float = 6):
    """Bursts of 1–5 identical single-pod Jobs (1–8 GPUs; no PodGroup) and gangs of 2–4 pods
    (a PodGroup each, disruptionMode Single or All), one priority and preemption policy per
    burst, arriving within ~1.5 hours on ``nodes`` 8-GPU nodes, one of which fails."""
    rng = np.random.default_rng(seed)
    events = [create(make_node(f"n{i}", cpu=32, memory_gi=128, gpus=8)) for i in range(nodes)]
    t = 0.0
    for j in range(jobs):
        t += float(rng.uniform(0, 200))
        prio = int(rng.choice([0, 100, 1000][:priorities]))
        policy = "Never" if rng.random() < 0.15 else "PreemptLowerPriority"
        duration = float(rng.uniform(300, 3600))
        if rng.random() < 0.7:
            gpus = int(rng.choice([1, 2, 4, 8]))
            for k in range(int(rng.integers(1, 6))):
                events.append(create(make_job(f"s{j}-{k}", 1, gpus=gpus, priority=prio, preemption_policy=policy, duration_s=duration), at_s=t + k))
        else:
            size, gpus, name = int(rng.choice([2, 3, 4])), int(rng.choice([2, 4, 8])), f"g{j}"
            events.append(create(make_group(name, size, priority=prio, mode=str(rng.choice(["single", "all"]))), at_s=t))
            events.append(create(make_job(name, size, gpus=gpus, priority=prio, preemption_policy=policy, group=name, duration_s=duration, rendezvous_s=600), at_s=t))
    events.append(delete("Node", "n0", at_s=hours * 1200))
    events.sort(key=lambda ev: ev.at_ms)
    return make_trace(*events, horizon_s=hours * 3600)


@pytest.mark.parametrize("priorities", [1, 3])
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("policy", ["gang", "permit"])
def test_congested_mixes_write_the_same_report(policy, seed, priorities, tmp_path, joins):
    trace = _mixed(seed, priorities=priorities)
    counters: dict = {}
    on = report_bytes(trace, policy, tmp_path / "on", seed=seed, counters=counters)
    assert joins["joins"] >= 5 and counters["pod_run_attempts"] > 0  # the shortcut is exercised
    for switch, changes in OFF.items():
        assert on == report_bytes(trace, policy, tmp_path / switch, seed=seed, **changes), switch


@pytest.mark.parametrize("policy", ["gang", "permit"])
def test_a_podgroups_pods_never_form_or_join_a_run(policy, monkeypatch):
    """Under gang scheduling GangScheduling gates, activates and moves a PodGroup's pods member
    by member: each is its own entity (``permit``) or a member of its group's (``gang``: never
    queued as a pod); the single-pod Jobs beside them form runs and join."""
    entities: list[tuple[str, object]] = []
    add_pod, absorb = SchedulingQueue.add_pod, SchedulingQueue._absorb

    def watch_add(self, pod):
        e = add_pod(self, pod)
        entities.append((pod.group_key, e))
        return e

    def watch_absorb(self, into, other):
        assert not any(p.group_key for p in (*into.pods, *other.pods))
        entities.append(("joined", into))
        return absorb(self, into, other)

    monkeypatch.setattr(SchedulingQueue, "add_pod", watch_add)
    monkeypatch.setattr(SchedulingQueue, "_absorb", watch_absorb)
    replay(_mixed(1, priorities=3), policy, seed=1)
    grouped = [e for key, e in entities if key and key != "joined"]
    lone = [e for key, e in entities if not key]
    assert all(not isinstance(e, PodRun) and len(e.pods) == 1 for e in grouped)
    assert bool(grouped) == (policy == "permit")
    assert lone and all(isinstance(e, PodRun) for e in lone)
    assert any(key == "joined" for key, _ in entities)


@pytest.mark.skipif(not GAVEL.is_dir(), reason="needs ../shared/traces-data/microsoft-philly-partial")
def test_the_gavel_head_writes_the_same_report(tmp_path, joins):
    """The Gavel/Philly per-VC traces (all 15 VCs) on 10 eight-GPU nodes, their first 11 days:
    single-pod Jobs of 1–8 GPUs beside a few gangs, each retried on every release."""
    trace = imported_trace(tmp_path, "gavel", GAVEL, nodes=10, days=11)
    on = report_bytes(trace, "gang", tmp_path / "on")
    assert joins["joins"] >= 5  # (11 in these days: the queue fills up later)
    assert on == report_bytes(trace, "gang", tmp_path / "off", **OFF["no-pod-runs"])


def _log_facts(log) -> tuple:
    """Everything a report is built from, except wall-clock timings and the work counters."""
    counters = {k: log.counters.get(k, 0) for k in REPORTED}
    return (list(log.ev_t_ms), log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message, list(log.tl_t_ms), list(log.tl_gpus_allocated), list(log.tl_pending_pods), list(log.pods), log.gangs, log.victims, log.podgroup_attempts, counters, log.info)


_jobs = st.lists(
    st.tuples(st.integers(0, 4), st.integers(1, 4), st.sampled_from([1, 2, 4, 8]), st.sampled_from([0, 0, 5]), st.sampled_from(["PreemptLowerPriority", "Never"]),
              st.integers(0, 900), st.integers(60, 900), st.sampled_from(["single", "all"])),
    min_size=1,
    max_size=7,
)  # fmt: skip


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(1, 3), jobs=_jobs, seed=st.sampled_from([None, 1]), policy=st.sampled_from(["gang", "permit"]), node_gone_s=st.sampled_from([None, 700]))
def test_lone_runs_record_what_the_pods_would_one_by_one(nodes, jobs, seed, policy, node_gone_s):
    """Any mix of bursts of identical single-pod Jobs (``gang`` 0: count, GPUs, priority,
    preemption policy, arrival, duration) and gangs (``gang`` > 0: that many pods), a node
    failure or none, a seed or none: the replay's log is the one without runs and the reference
    path's."""
    events = [create(make_node(f"n{i}", cpu=16, memory_gi=64, gpus=8)) for i in range(nodes)]
    for j, (gang, count, gpus, prio, preemption, at, duration, mode) in enumerate(jobs):
        if gang:
            events.append(create(make_group(f"g{j}", gang, priority=prio, mode=mode), at_s=at))
            events.append(create(make_job(f"g{j}", gang, gpus=gpus, priority=prio, preemption_policy=preemption, group=f"g{j}", duration_s=duration, rendezvous_s=300), at_s=at))
            continue
        for k in range(count):
            events.append(create(make_job(f"s{j}-{k}", 1, gpus=gpus, priority=prio, preemption_policy=preemption, duration_s=duration), at_s=at + k))
    if node_gone_s is not None:
        events.append(delete("Node", "n0", node_gone_s))
    events.sort(key=lambda ev: ev.at_ms)
    trace = make_trace(*events, horizon_s=2_400)
    on = _log_facts(replay(trace, policy, seed=seed, check_invariants=True))
    for changes in OFF.values():
        assert on == _log_facts(replay(trace, policy, seed=seed, check_invariants=True, config=SchedulerConfig(**changes)))


def test_waiting_single_pod_jobs_are_popped_as_one_under_gang(monkeypatch, joins):
    """The guard: eighty identical one-pod Jobs of whole nodes and a gang of two whole nodes wait
    behind 2-GPU fillers that end one after the other (a release every 30 s, most of which help
    none of them). Each release moves every waiting pod out of the unschedulable pool (the
    NodeResourcesFit hint says Queue for any deleted assigned pod). Joined, the single-pod Jobs
    are one entity: the queue pops number far fewer than the pod attempts. A pop per Job
    again (the pods of no PodGroup kept apart under ``gang``) fails this."""
    pops: Counter[str] = Counter()
    pop = SchedulingQueue.pop

    def counting_pop(self):
        e = pop(self)
        if e is not None:
            pops["pops"] += 1
        return e

    monkeypatch.setattr(SchedulingQueue, "pop", counting_pop)
    nodes = [create(make_node(f"n{i}", cpu=32, memory_gi=128, gpus=8)) for i in range(8)]
    fillers = [create(make_job(f"f{i}", 1, gpus=2, duration_s=30 * (i + 1)), at_s=0) for i in range(32)]
    jobs = [create(make_job(f"w{i}", 1, gpus=8, duration_s=3_000), at_s=1) for i in range(80)]
    gang = [create(make_group("g", 2), at_s=2), create(make_job("g", 2, gpus=8, group="g", duration_s=3_000), at_s=2)]
    log = replay(make_trace(*nodes, *fillers, *jobs, *gang, horizon_s=1_200), "gang")
    attempts = log.counters["scheduling_cycles"]
    assert attempts > 2_000 and joins["pods"] >= 70
    assert pops["pops"] <= 0.1 * attempts


def test_runs_beside_podgroups_can_be_switched_off():
    """``FastPath(pod_runs=False)`` and the reference path keep every pod its own entity."""
    trace = _mixed(2, priorities=1, jobs=20)
    for changes in (OFF["no-pod-runs"], OFF["no-batching"]):
        log = replay(trace, "gang", seed=2, config=SchedulerConfig(**changes))
        assert log.counters.get("pod_run_attempts", 0) == 0
