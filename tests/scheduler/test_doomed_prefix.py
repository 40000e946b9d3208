"""``FastPath.doomed_prefix``: a gang of several pod shapes that needs every pod, whose first shape
in pod order does not fit on its own, is decided from that shape's counts (the pass pod by pod
stops at its first failing pod, before any pod of another shape is searched). A/B against the
pass pod by pod (the switch off, and the doomed pass off), a table case with its messages, and a
guard (not timing) that the shortcut searches no pod."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ab import WORK_COUNTERS, log_facts
from builders import NO_BACKOFF, create, make_group, make_job, make_node, make_trace, run
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.scheduler.framework.runtime import Framework
from gangsim.sim.replay import replay

# a decided pass is kept for the group's next attempts to repeat (``fastpath.attempts``): they
# count their repeats in work counters too
WORK = (*WORK_COUNTERS, "attempts_")


def _facts(log) -> tuple:
    return log_facts(log, WORK)


def _two_shapes(fast_path: FastPath = FastPath()):
    """3 eight-GPU nodes, two taken by a running gang; gang "second" needs 2 whole-node pods
    (Job second-a, created first) and 2 one-GPU pods (Job second-b): one whole-node pod fits,
    the next fails, and PlacementFeasible stops the pass there."""
    return make_trace(
        *(create(make_node(f"n{i}", cpu=8, gpus=8, memory_gi=64)) for i in range(3)),
        create(make_group("first", 2)),
        create(make_job("first", 2, cpu=1, gpus=8, group="first", duration_s=3600)),
        create(make_group("second", 4), at_s=10),
        create(make_job("second-a", 2, cpu=1, gpus=8, group="second", duration_s=600), at_s=10),
        create(make_job("second-b", 2, cpu=1, gpus=1, group="second", duration_s=600), at_s=11),
        horizon_s=60,
        config=SchedulerConfig(fast_path=fast_path),
    )


def test_a_gang_doomed_on_its_first_shape_is_decided_without_a_search(monkeypatch):
    searched: list[str] = []
    schedule_pod = Framework.schedule_pod

    def counting(self, state, pod, *a, **kw):
        searched.append(pod.name)
        return schedule_pod(self, state, pod, *a, **kw)

    monkeypatch.setattr(Framework, "schedule_pod", counting)
    on = run(_two_shapes(), "gang")
    on_searches = [p for p in searched if p.startswith("second")]
    searched.clear()
    off = run(_two_shapes(FastPath(doomed_prefix=False)), "gang")
    off_searches = [p for p in searched if p.startswith("second")]
    assert _facts(on) == _facts(off)
    # the pass pod by pod: second-a-0 placed, second-a-1 fails, stop (second-b never searched)
    assert off_searches[:2] == ["second-a-0", "second-a-1"] and not any(p.startswith("second-b") for p in off_searches)
    assert on_searches == [] and on.counters["doomed_passes"] > off.counters.get("doomed_passes", 0)
    group = {m for k, o, m in zip(on.ev_kind, on.ev_object, on.ev_message) if k == "PodGroup" and o == "default/second"}
    assert group == {"minCount (4) cannot be satisfied: 1 scheduled, 2 remaining, pod group preemption: No preemption victims found for incoming preemptor"}
    failed = {o: m for k, o, r, m in zip(on.ev_kind, on.ev_object, on.ev_reason, on.ev_message) if k == "Pod" and r == "FailedScheduling"}
    assert failed["default/second-a-1"] == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    assert failed["default/second-a-0"] == failed["default/second-b-0"] == failed["default/second-b-1"] == next(iter(group))
    assert sorted(p.pod for p in on.pods if p.bound_ms is not None) == ["default/first-0", "default/first-1"]


@settings(max_examples=50, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(st.integers(1, 8), min_size=1, max_size=6),
    gangs=st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.sampled_from((0, 100)), st.integers(0, 30), st.integers(0, 2)),
        min_size=1,
        max_size=4,
    ),
)
def test_two_shape_gangs_record_what_the_pass_pod_by_pod_records(nodes, gangs):
    """Random clusters and gangs of two Jobs of different shapes in one PodGroup (pods and cpu
    of each, priority, arrival, minCount up to 2 below the pods): the replay with the shortcut
    records exactly what it records with the switch off and with the doomed pass off (every
    pass pod by pod)."""
    events = [create(make_node(f"n{i}", cpu=cpu, gpus=cpu)) for i, cpu in enumerate(nodes)]
    for g, (pods_a, cpu_a, pods_b, cpu_b, priority, at_s, slack) in enumerate(gangs):
        name = f"g{g}"
        events.append(create(make_group(name, max(1, pods_a + pods_b - slack), priority=priority), at_s))  # (slack: minCount below the pods)
        events.append(create(make_job(f"{name}-a", pods_a, cpu=cpu_a, gpus=cpu_a, priority=priority, group=name, duration_s=60, grace_s=5), at_s))
        events.append(create(make_job(f"{name}-b", pods_b, cpu=cpu_b + 4, gpus=cpu_b, priority=priority, group=name, duration_s=60, grace_s=5), at_s))
    trace = make_trace(*events, config=NO_BACKOFF, horizon_s=600)
    on = _facts(replay(trace, "gang", check_invariants=True))
    assert on == _facts(replay(trace, "gang", config=NO_BACKOFF.with_changes(fast_path=FastPath(doomed_prefix=False))))
    assert on == _facts(replay(trace, "gang", config=NO_BACKOFF.with_changes(fast_path=FastPath(doomed_pass=False))))
