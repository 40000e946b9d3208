"""A Job's pods queued as one entity under ``pod`` (``FastPath.pod_runs``, ``PodRun``): A/B tests
on report bytes against the switch off and the reference path on congested generated traces
(rigid jobs retried on every release, with and without preemption and node failures), hand-built
traces for each way a run is split (a pod updated, a pod deleted, a preemptor), a hypothesis
property over small clusters, the numpy property the PostFilter repeat relies on, and a guard
(not timing) on the work per failed pod attempt."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import SRC, create, delete, make_job, make_node, make_trace, patch
from gangsim.api.config import FastPath, Profile, SchedulerConfig
from gangsim.api.objects import Pod
from gangsim.explain import explain
from gangsim.load import load_trace
from gangsim.load.generate import PoolSpec
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import QueueLocation
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.sim.cluster import Cluster
from gangsim.sim.replay import replay
from ab import SHARED, report_bytes, rigid_jobs

HPC2N = SHARED / "pwa-hpc2n-2002-head" / "hpc2n.swf"
OFF = {
    "no-pod-runs": {"fast_path": FastPath(pod_runs=False)},
    "no-repeated-failure": {"fast_path": FastPath(repeated_failure=False)},  # runs then always split
    "no-failure-streaks": {"fast_path": FastPath(failure_streaks=False)},
    "no-batching": {"opportunistic_batching": False},
}


def _report_bytes(trace, out: Path, seed: int | None = None, policy: str = "pod", **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, seed=seed, **changes)


def _congested(tmp_path: Path, seed: int, *, priorities: int):
    """Rigid jobs of 1–16 pods (mostly whole 8-GPU nodes) on 12 nodes, two of which fail,
    replayed for 6 hours (``ab.rigid_jobs``). With two priorities the high ones preempt the low ones."""
    return rigid_jobs(
        tmp_path / f"congested-{seed}-{priorities}.jsonl", seed, (PoolSpec("a", 12, gpus=8),), priorities=priorities, horizon_h=6,
        jobs=40, gang_sizes=((1, 0.2), (4, 0.3), (8, 0.3), (16, 0.2)), gpus_per_pod=((8, 0.6), (4, 0.2), (2, 0.2)), node_failures=2,
    )  # fmt: skip


@pytest.mark.parametrize("priorities", [1, 2])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_congested_rigid_jobs_write_the_same_report(seed, priorities, tmp_path):
    trace = _congested(tmp_path, seed, priorities=priorities)
    log = replay(trace, "pod", seed=seed)
    assert log.counters["pod_run_attempts"] >= 1_000  # the shortcut is exercised
    if priorities == 2:
        assert log.victims  # and so is the way around it (preemption)
    on = _report_bytes(trace, tmp_path / "on", seed)
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, seed, **changes), switch


@pytest.mark.parametrize("policy", ["permit", "gang"])
def test_the_other_policies_queue_no_runs(policy, tmp_path):
    trace = _congested(tmp_path, 1, priorities=1)
    assert "pod_run_attempts" not in replay(trace, policy).counters


@pytest.mark.skipif(not HPC2N.is_file(), reason="needs ../shared/traces-data/pwa-hpc2n-2002-head")
def test_hpc2n_head_writes_the_same_report(tmp_path):
    """The first 4 days of issue 16's HPC2N-pod row (``--seed 7``)."""
    trace = replace(load_trace([f"swf:{HPC2N}"], horizon_ms=4 * 86_400_000), horizon_ms=4 * 86_400_000)
    on = _report_bytes(trace, tmp_path / "on", 7)
    assert on == _report_bytes(trace, tmp_path / "off", 7, **OFF["no-pod-runs"])
    assert on == _report_bytes(trace, tmp_path / "ref", 7, **OFF["no-batching"])


# ---- each way a run is split -----------------------------------------------------------------
def _two_nodes(*events, horizon_s: float = 4_000):
    nodes = [create(make_node(f"n{i}", cpu=8, memory_gi=64, gpus=8)) for i in range(2)]
    return make_trace(*nodes, *events, horizon_s=horizon_s)


def _relabelled(name: str, job, at_s: float):
    """A patch of pod ``name`` of ``job`` (its spec with one more label)."""
    spec = job.template
    slot = int(name.rsplit("-", 1)[1])
    return patch(Pod("default", name, replace(spec, labels={**spec.labels, "touched": "yes"}), job=job.name, index=slot, source=SRC), at_s)


def _split_traces():
    big = make_job("big", 6, gpus=8, duration_s=600)  # 6 whole nodes on 2: 4 wait, retried on every release
    small = make_job("small", 3, gpus=4, duration_s=300)
    never = make_job("never", 3, gpus=8, duration_s=200, priority=10, preemption_policy="Never")
    high = make_job("high", 3, gpus=8, duration_s=200, priority=100)
    # half of each node ends at 300 s, the other half at 300.5 s: big's run fails at 300 s (a
    # 2 s backoff), the second release moves it to backoffQ at 300.5 s, and without
    # pop-from-backoffQ it waits there, all six, till 302 s
    halves = [make_job("a", 2, gpus=4, duration_s=300), make_job("b", 2, gpus=4, duration_s=300.5)]
    no_preemption = SchedulerConfig(profiles=(Profile(preemption_enabled=False),))
    return {
        "a-waiting-pod-updated": _two_nodes(create(small), create(big, at_s=1), _relabelled("big-4", big, 5), _relabelled("big-2", big, 650)),
        "a-pod-updated-in-activeq": _two_nodes(create(small), create(big, at_s=1), _relabelled("big-3", big, 1)),
        "a-pod-updated-in-backoffq": make_trace(*(create(make_node(f"n{i}", cpu=8, memory_gi=64, gpus=8)) for i in range(2)), *(create(j) for j in halves),
                                                create(big, at_s=1), _relabelled("big-3", big, 301), config=SchedulerConfig(pop_from_backoff=False), horizon_s=4_000),
        "no-node-yet": make_trace(create(big), create(make_node("n0", cpu=8, memory_gi=64, gpus=8), at_s=100), horizon_s=2_000),
        "preemption-disabled": make_trace(*(create(make_node(f"n{i}", cpu=8, memory_gi=64, gpus=8)) for i in range(2)), create(small), create(big, at_s=1),
                                          config=no_preemption, horizon_s=4_000),
        "a-waiting-pod-deleted": _two_nodes(create(small), create(big, at_s=1), delete("Pod", "big-3", 5), delete("Pod", "big-5", 700)),
        "the-job-deleted": _two_nodes(create(big), create(small, at_s=1), delete("Job", "big", 900)),
        "preemption-never": _two_nodes(create(big), create(never, at_s=2)),
        "a-preemptor-run": _two_nodes(create(big), create(high, at_s=2), create(small, at_s=3)),
    }


@pytest.mark.parametrize("name", sorted(_split_traces()))
def test_a_split_run_writes_the_same_report(name, tmp_path):
    trace = _split_traces()[name]
    on = _report_bytes(trace, tmp_path / "on", 3)
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, tmp_path / switch, 3, **changes), switch


@pytest.mark.parametrize(
    ("name", "where", "size"),
    [
        ("a-waiting-pod-updated", QueueLocation.UNSCHEDULABLE, 6),  # all of big's pods wait behind small's
        ("a-pod-updated-in-activeq", QueueLocation.ACTIVE, 6),
        ("a-pod-updated-in-backoffq", QueueLocation.BACKOFF, 6),
    ],
)
def test_a_pod_updated_leaves_its_run(name, where, size, monkeypatch):
    """The relabelled pod is split from its run (``SchedulingQueue.single``) wherever the run
    waits, and the others go on failing together."""
    split = []
    single = SchedulingQueue.single

    def watch(self, e, pod):
        if e is not None and len(e.pods) > 1:
            split.append((e.where, len(e.pods)))
        return single(self, e, pod)

    monkeypatch.setattr(SchedulingQueue, "single", watch)
    log = replay(_split_traces()[name], "pod", seed=3)
    assert split[0] == (where, size)
    assert log.counters["pod_run_attempts"] > 0


def test_explain_sees_each_pod_of_a_run_attempted(tmp_path):
    """``gangsim explain`` records each pod's own pass: a run's pods are tried one by one there,
    and the explanation is the one without runs."""
    trace = _split_traces()["a-waiting-pod-updated"]
    on = explain(trace, "pod", "pod", "default/big-3", seed=3)
    assert on == explain(trace, "pod", "pod", "default/big-3", seed=3, config=trace.config.with_changes(fast_path=FastPath(pod_runs=False)))


# ---- a property over small clusters -----------------------------------------------------------
_jobs = st.lists(
    st.tuples(st.integers(1, 6), st.sampled_from([1, 2, 4, 8]), st.sampled_from([0, 0, 5]), st.sampled_from(["PreemptLowerPriority", "Never"]),
              st.integers(0, 600), st.integers(60, 900)),
    min_size=1,
    max_size=10,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.integers(1, 4), jobs=_jobs, updates=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 5), st.integers(1, 900)), max_size=3),
       seed=st.sampled_from([None, 1]))
def test_runs_record_what_the_pods_would_one_by_one(nodes, jobs, updates, seed):
    """Any mix of rigid jobs (sizes, GPUs, priorities, preemption policies, arrivals), pod
    updates and a seed or none: the replay's log is the reference path's."""
    events = [create(make_node(f"n{i}", cpu=16, memory_gi=64, gpus=8)) for i in range(nodes)]
    made = []
    for i, (size, gpus, prio, policy, at, dur) in enumerate(jobs):
        job = make_job(f"j{i}", size, gpus=gpus, priority=prio, preemption_policy=policy, duration_s=dur, rendezvous_s=300)
        made.append(job)
        events.append(create(job, at_s=at))
    for j, slot, at in updates:
        if j < len(made) and slot < made[j].parallelism:
            events.append(_relabelled(f"{made[j].name}-{slot}", made[j], at))
    trace = make_trace(*events, horizon_s=1_800)
    on = replay(trace, "pod", seed=seed)
    off = replay(trace, "pod", seed=seed, config=SchedulerConfig(fast_path=FastPath(pod_runs=False)))
    assert list(on.pods) == list(off.pods)
    assert (list(on.ev_t_ms), list(on.ev_object), on.ev_message) == (list(off.ev_t_ms), list(off.ev_object), off.ev_message)
    assert (on.gangs, on.victims) == (off.gangs, off.victims)
    # work counters, not in reports; the signature cache's too: FastPath.counted_searches replays
    # a run's successful passes (under ``pod`` only a run's), so its lookups differ
    work = {"pod_run_attempts", "failures_repeated", "batch_hits", "filter_rows_computed", "post_filters_repeated"}
    assert {k: v for k, v in on.counters.items() if k not in work} == {k: v for k, v in off.counters.items() if k not in work}


@pytest.mark.parametrize("n", [1, 2, 7, 240, 4_000_000_000])
def test_a_draw_of_many_offsets_moves_the_generator_as_many_draws(n):
    """``DefaultPreemption.post_filter_repeater`` draws a run's offsets at once: numpy's
    ``integers(n, size=k)`` must leave the generator where ``k`` single draws leave it."""
    one, many = np.random.default_rng(7), np.random.default_rng(7)
    for k in (1, 2, 3, 64, 255):
        singles = [int(one.integers(n)) for _ in range(k)]
        assert singles == many.integers(n, size=k).tolist()
        assert one.bit_generator.state == many.bit_generator.state


# ---- the guard ---------------------------------------------------------------------------------
def test_a_run_failing_again_does_no_per_pod_work(tmp_path, monkeypatch):
    """The guard: on the congested one-priority trace most failed pod attempts are recorded
    with their run's first, so the Filter passes, the PostFilter calls, the queue's requeues
    and the per-pod records (attempt counter, FailedScheduling event, waiting reason) number
    far fewer than the attempts. Recording them pod by pod again (one pass, PostFilter,
    requeue and record per attempt) fails this."""
    calls: Counter[str] = Counter()

    def counting(cls, name):
        original = getattr(cls, name)

        def wrapper(self, *args, **kw):
            calls[name] += 1
            return original(self, *args, **kw)

        monkeypatch.setattr(cls, name, wrapper)

    for cls, name in [(Framework, "schedule_pod"), (Framework, "run_post_filter"), (SchedulingQueue, "requeue_after_failure"),
                      (Cluster, "attempted"), (Cluster, "scheduling_failed")]:
        counting(cls, name)
    trace = _congested(tmp_path, 1, priorities=1)
    log = replay(trace, "pod", seed=1)
    attempts = log.counters["scheduling_cycles"]
    together = log.counters["pod_run_attempts"]
    assert attempts > 10_000 and together >= 0.8 * attempts
    for name in ("schedule_pod", "run_post_filter", "requeue_after_failure"):
        assert calls[name] <= 0.2 * attempts, name
    for name in ("attempted", "scheduling_failed"):  # per pod only when a run's message changed
        assert calls[name] <= 0.35 * attempts, name


# ---- the length of a run (MAX_RUN_PODS) --------------------------------------------------------
def _longest_run(monkeypatch) -> Counter:
    """The most pods any run held when a cycle popped it, over the test."""
    seen: Counter[str] = Counter()
    pop = SchedulingQueue.pop

    def watching(self):
        e = pop(self)
        if e is not None:
            seen["longest"] = max(seen["longest"], len(e.pods))
        return e

    monkeypatch.setattr(SchedulingQueue, "pop", watching)
    return seen


@pytest.mark.parametrize("cap", [2, 5])
@pytest.mark.parametrize("seed", [1, 2])
def test_runs_cut_short_write_the_same_report(cap, seed, tmp_path, monkeypatch):
    """A run is any grouping of adjacent alike entities, so where a long one is cut changes no
    outcome: with runs capped at 2 or 5 pods (Jobs of 4–16 pods then make several runs, and
    joins stop at the cap), the reports are the uncapped ones and the reference path's."""
    from gangsim.scheduler.queue import pod_runs

    trace = _congested(tmp_path, seed, priorities=2)
    uncapped = _report_bytes(trace, tmp_path / "uncapped", seed)
    longest = _longest_run(monkeypatch)
    monkeypatch.setattr(pod_runs, "MAX_RUN_PODS", cap)
    assert uncapped == _report_bytes(trace, tmp_path / "capped", seed)
    assert longest["longest"] == cap  # runs reached the cap and never passed it
    assert uncapped == _report_bytes(trace, tmp_path / "ref", seed, **OFF["no-batching"])


def test_a_burst_longer_than_the_cap_is_cut_into_runs(monkeypatch):
    """5,000 identical pods created at once (SchedulingBasic's shape) make runs of at most
    ``MAX_RUN_PODS``: deleting a run's head pod moves at most that many list entries."""
    from benchmarks import shapes
    from gangsim.scheduler.queue.pod_runs import MAX_RUN_PODS

    longest = _longest_run(monkeypatch)
    log = replay(shapes.scheduling_basic(nodes=500, pods=5000), "pod")
    assert MAX_RUN_PODS < 5000
    assert longest["longest"] == MAX_RUN_PODS
    assert sum(1 for r in range(len(log.pods)) if log.pods.node[r]) == 5000
