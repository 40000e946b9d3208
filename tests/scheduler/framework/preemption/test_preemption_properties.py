"""Properties of workload-aware preemption under ``gang`` (hypothesis): random clusters full of
low-priority pods and groups (``single`` and ``all``), high-priority gangs arriving together."""

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import create, make_group, make_node, make_pod, make_trace, run


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(1, 5))
    caps = [draw(st.integers(1, 6)) for _ in range(n_nodes)]
    events = [create(make_node(f"n{i}", cpu=c)) for i, c in enumerate(caps)]
    free = list(caps)
    low_prios = [1, 5, 10]
    # low-priority residents: bare pods and groups, bound through spec.nodeName
    for g in range(draw(st.integers(0, 3))):
        mode = draw(st.sampled_from(["single", "all"]))
        prio = draw(st.sampled_from(low_prios))
        members = draw(st.integers(1, 4))
        events.append(create(make_group(f"low{g}", 1, priority=prio, mode=mode)))
        for m in range(members):
            fits = [i for i, f in enumerate(free) if f >= 1]
            if not fits:
                break
            i = draw(st.sampled_from(fits))
            free[i] -= 1
            events.append(create(make_pod(f"low{g}-{m}", cpu=1, priority=prio, group=f"low{g}", node_name=f"n{i}", grace_s=0)))
    for b in range(draw(st.integers(0, 4))):
        fits = [i for i, f in enumerate(free) if f >= 1]
        if not fits:
            break
        i = draw(st.sampled_from(fits))
        free[i] -= 1
        events.append(create(make_pod(f"bare{b}", cpu=1, priority=draw(st.sampled_from(low_prios)), node_name=f"n{i}", grace_s=0)))
    # high-priority gangs (equal priority), all arriving at 10 s
    for h in range(draw(st.integers(1, 3))):
        pods = draw(st.integers(1, 5))
        min_count = draw(st.integers(1, pods))
        mode = draw(st.sampled_from(["single", "all"]))
        events.append(create(make_group(f"hi{h}", min_count, priority=100, mode=mode), at_s=10))
        cpu = draw(st.integers(1, 2))
        events += [create(make_pod(f"hi{h}-{k}", cpu=cpu, priority=100, group=f"hi{h}", duration_s=50), at_s=10) for k in range(pods)]
    return make_trace(*events, horizon_s=200)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_workload_aware_preemption_properties(trace):
    log = run(trace, "gang")
    groups = {e.obj.key: e.obj for e in trace.events if e.kind == "PodGroup"}
    # 1) nobody is a victim of a preemptor with a priority not strictly higher
    for v in log.victims:
        assert v.victim_priority < v.preemptor_priority, v
    # 2) an `all` group is evicted whole or not at all, in one decision
    by_decision = defaultdict(set)
    for v in log.victims:
        by_decision[(v.t_ms, v.preemptor, v.victim_gang)].add(v.victim_pod)
    for (t, _preemptor, gang), pods in by_decision.items():
        if gang and groups[gang].policy.disruption_mode == "all":
            running = {
                p.pod
                for p in log.pods
                if p.gang == gang and p.bound_ms is not None and p.bound_ms <= t
                and (p.ended_ms is None or p.ended_ms > t or (p.ended_ms == t and p.end_reason == "Preempted"))
            }
            assert pods == running, (gang, pods, running)
    # 3) a group that preempted got placed at the decision instant (nothing else changes in these
    #    traces, victims have no grace period): never below minCount, never in vain
    started = {g.gang: g.started_ms for g in log.gangs}
    for v in log.victims:
        if v.preemptor in groups:
            assert started[v.preemptor] == v.t_ms, (v.preemptor, v.t_ms, started[v.preemptor])
            bound = [p for p in log.pods if p.gang == v.preemptor and p.bound_ms == v.t_ms]
            assert len(bound) >= groups[v.preemptor].policy.min_count
        assert v.in_vain is False
