"""Properties of ``--policy gang`` on random small clusters and random gangs (SEMANTICS §8, §14.4).

1. No node is ever over-committed (the replay's own invariant check, ``check_invariants=True``,
   plus an independent sweep over the pod rows).
2. A gang is never partially bound below minCount in one cycle: at the first instant any pod of a
   PodGroup binds, at least minCount of its pods bind at that instant.
3. Every pod is accounted for: bound at some point, or still pending at the end with a reason, or
   ended with an end_reason.

Deterministic (``derandomize``) and without an example database, so runs are repeatable and
write nothing outside the test tree.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import NO_BACKOFF, create, make_group, make_node, make_pod, make_trace, run


@dataclass(frozen=True)
class GangSpec:
    name: str
    min_count: int
    priority: int
    group_at_s: int
    pods: tuple[tuple[int, int], ...]  # (cpu, arrival s) per pod
    duration_s: int


@st.composite
def gang_specs(draw, index: int) -> GangSpec:
    n = draw(st.integers(1, 6))
    pods = tuple((draw(st.integers(1, 4)), draw(st.integers(0, 20))) for _ in range(n))
    return GangSpec(
        name=f"g{index}",
        min_count=draw(st.integers(1, n)),
        priority=draw(st.sampled_from((0, 100))),
        group_at_s=draw(st.integers(0, 20)),
        pods=pods,
        duration_s=draw(st.integers(10, 100)),
    )


@st.composite
def worlds(draw) -> tuple[tuple[int, ...], tuple[GangSpec, ...]]:
    nodes = tuple(draw(st.lists(st.integers(1, 8), min_size=1, max_size=6)))
    k = draw(st.integers(1, 5))
    gangs = tuple(draw(gang_specs(i)) for i in range(k))
    return nodes, gangs


def build(nodes: tuple[int, ...], gangs: tuple[GangSpec, ...]):
    events = [create(make_node(f"n{i}", cpu=cpu)) for i, cpu in enumerate(nodes)]
    for g in gangs:
        events.append(create(make_group(g.name, g.min_count, priority=g.priority), g.group_at_s))
        for j, (cpu, at_s) in enumerate(g.pods):
            events.append(create(make_pod(f"{g.name}-{j}", cpu=cpu, priority=g.priority, group=g.name, duration_s=g.duration_s), at_s))
    return make_trace(*events, config=NO_BACKOFF)


def check_no_overcommit(log, nodes, cpu_of):
    """Sweep [bound, ended) intervals per node: Σ cpu never exceeds the node's."""
    changes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for p in log.pods:
        if p.bound_ms is None:
            continue
        end = p.ended_ms if p.ended_ms is not None else 2**62
        if end <= p.bound_ms:
            continue
        changes[p.node].append((p.bound_ms, cpu_of[p.pod]))
        changes[p.node].append((end, -cpu_of[p.pod]))
    for node_name, deltas in changes.items():
        capacity = nodes[int(node_name[1:])]
        used = 0
        for t, d in sorted(deltas, key=lambda x: (x[0], x[1])):  # frees before binds at one instant
            used += d
            assert used <= capacity, f"{node_name} over-committed at {t} ms: {used} > {capacity}"


def check_min_count_at_first_bind(log, gangs):
    for g in gangs:
        rows = [p for p in log.pods if p.pod.startswith(f"default/{g.name}-")]
        times = [p.bound_ms for p in rows if p.bound_ms is not None]
        if not times:
            continue
        first = min(times)
        together = sum(1 for t in times if t == first)
        assert together >= g.min_count, f"{g.name}: {together} pods bound at {first} ms, minCount {g.min_count}"


def check_every_pod_accounted_for(log, gangs):
    want = {f"default/{g.name}-{j}" for g in gangs for j in range(len(g.pods))}
    assert {p.pod for p in log.pods} == want
    for p in log.pods:
        assert p.bound_ms is not None or (p.ended_ms is None and p.waiting_reason) or p.end_reason, p


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_gang_policy_properties(world):
    nodes, gangs = world
    log = run(build(nodes, gangs), "gang")  # check_invariants=True: the node table checks itself
    cpu_of = {f"default/{g.name}-{j}": cpu for g in gangs for j, (cpu, _) in enumerate(g.pods)}
    check_no_overcommit(log, nodes, cpu_of)
    check_min_count_at_first_bind(log, gangs)
    check_every_pod_accounted_for(log, gangs)


def test_properties_catch_a_partial_bind():
    """The minCount check itself: a pod-by-pod replay of a 3-pod gang on a 2-CPU node breaks it."""
    gangs = (GangSpec("g0", 3, 0, 0, ((1, 0), (1, 0), (1, 0)), 10),)
    log = run(build((2,), gangs), "pod")
    try:
        check_min_count_at_first_bind(log, gangs)
    except AssertionError:
        return
    raise AssertionError("a partial bind went unnoticed")
