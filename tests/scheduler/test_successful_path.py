"""The successful per-pod path (issue 16, NASA / SB-50k / Gangs-10k): the signature cache's
one-row refresh on Python scalars (``FastPath.row_refresh``), a successful PodGroup pass that
keeps its placements for the binds (``FastPath.keep_placements``) and PreEnqueue asked once per
joining pod. A/B tests on report bytes with each switch off and on the reference path, a
hypothesis property over generated clusters, each plugin's one-row Filter and Score against its
array one, and guards (not timing) on the work per joining pod."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import shapes
from builders import SRC, create, delete, events_of, make_group, make_node, make_pod, make_spec, make_trace, patch, placements
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.api.objects import Affinity, Pod, PreferredSchedulingTerm, Taint, Toleration
from gangsim.api.selectors import NodeSelectorTerm, Requirement
from gangsim.eventlog import EventReason
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import RowFilterPlugin, RowScorePlugin
from gangsim.scheduler.scheduler import Scheduler
from gangsim.sim.replay import replay
from ab import arrival_events, SHARED, generated_trace, outcome as ab_outcome, report_bytes

ROOT = Path(__file__).resolve().parents[2]
NASA = SHARED / "pwa-nasa-ipsc-1993" / "NASA-iPSC-1993-3.1-cln.swf.gz"
OFF = {
    "no-row-refresh": {"fast_path": FastPath(row_refresh=False)},
    "no-keep-placements": {"fast_path": FastPath(keep_placements=False)},
    "no-counted-pass": {"fast_path": FastPath(counted_pass=False)},
    "no-gated-siblings": {"fast_path": FastPath(gated_siblings=False)},
    "no-gated-prefix": {"fast_path": FastPath(gated_prefix=False)},
    "no-sibling-activation": {"fast_path": FastPath(sibling_activation=False)},
    "no-permit-counts": {"fast_path": FastPath(permit_counts=False)},
    "no-renewed-failures": {"fast_path": FastPath(renewed_failures=False)},
    "no-counted-searches": {"fast_path": FastPath(counted_searches=False)},
    "no-batching": {"opportunistic_batching": False},
}


def _report_bytes(trace, policy: str, out: Path, **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, **changes)


def _busy_trace(tmp_path: Path, seed: int, *, whole_nodes: bool = False):
    """Mostly successful gangs of 1–16 pods on two pools with two priorities and node
    failures: binds change a few rows at a time, and some gangs wait, fail and are preempted.
    ``whole_nodes``: every pod takes a whole node (as an HPC log's), so each successful gang
    pass can be replayed from counts (``FastPath.counted_pass``)."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 20, gpus=8), PoolSpec("b", 12, gpus=8 if whole_nodes else 4)),
        jobs=60,
        hours=3,
        gang_sizes=((1, 0.3), (2, 0.2), (4, 0.3), (16, 0.2)),
        gpus_per_pod=((8, 1.0),) if whole_nodes else ((1, 0.4), (2, 0.3), (4, 0.3)),
        priorities=(("low", 0, 0.7), ("high", 1000, 0.3)),
        duration_median_s=1800,
        node_failures=2,
    )
    return generated_trace(tmp_path / f"busy-{seed}.jsonl", spec, horizon_ms=5 * 3_600_000)


@pytest.mark.parametrize("switch", sorted(OFF))
@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("seed", [3, 4])
def test_each_switch_off_writes_the_same_report_on_a_busy_trace(switch, policy, seed, tmp_path):
    trace = _busy_trace(tmp_path, seed)
    assert _report_bytes(trace, policy, tmp_path / "on") == _report_bytes(trace, policy, tmp_path / "off", **OFF[switch])


@pytest.mark.parametrize("switch", sorted(OFF))
@pytest.mark.parametrize("seed", [5, 6])
def test_whole_node_gangs_replayed_from_counts_write_the_same_report(switch, seed, tmp_path):
    trace = _busy_trace(tmp_path, seed, whole_nodes=True)
    log = replay(trace, "gang")
    assert log.counters["counted_passes"] >= 20  # the shortcut is exercised
    assert _report_bytes(trace, "gang", tmp_path / "on") == _report_bytes(trace, "gang", tmp_path / "off", **OFF[switch])


@pytest.mark.skipif(not NASA.exists(), reason="public traces not present")
@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
def test_the_nasa_log_writes_the_same_report_with_the_switches_off(policy, tmp_path):
    """The first 4 days of the NASA iPSC log (issue 16's NASA rows): whole-node gangs that
    almost all schedule at their first attempt."""
    trace = replace(load_trace([f"swf:{NASA}"]), horizon_ms=4 * 86_400_000)
    if policy == "gang":
        assert replay(trace, "gang").counters["counted_passes"] >= 100
    on = _report_bytes(trace, policy, tmp_path / "on")
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, policy, tmp_path / switch, **changes), switch


@pytest.mark.parametrize("policy", ["gang", "pod"])
@pytest.mark.parametrize("name", ["jobset-gpu.yaml", "lws-gpu.yaml", "volcano-job.yaml", "pytorchjob.yaml", "stuck-gang.yaml", "rack-local.yaml"])
def test_bundled_traces_write_the_same_report_with_the_switches_off(name, policy, tmp_path):
    trace = load_trace([ROOT / "traces" / name])
    on = _report_bytes(trace, policy, tmp_path / "on")
    for switch, changes in OFF.items():
        assert on == _report_bytes(trace, policy, tmp_path / switch, **changes), switch


def test_the_shortcuts_are_taken_on_the_gang_shape():
    """Gangs of 3 on 200 nodes: every pass succeeds and keeps its placements, and each pod's
    refresh covers only the rows the last gang's binds changed."""
    log = replay(shapes.gang_shape(200, 60, 3), "gang")
    assert sum(1 for p in log.pods if p.bound_ms is not None) == 180
    assert log.counters["filter_rows_computed"] <= 200 + 4 * 180


# ---- one row on scalars = the array path on that row ----------------------------------------

_taint = st.builds(Taint, key=st.sampled_from(["a", "b"]), value=st.sampled_from(["", "x"]), effect=st.sampled_from(["PreferNoSchedule", "NoSchedule"]))
_toleration = st.builds(Toleration, key=st.sampled_from(["a", "b", ""]), operator=st.sampled_from(["Equal", "Exists"]), value=st.sampled_from(["", "x"]),
                        effect=st.sampled_from(["", "PreferNoSchedule", "NoSchedule"]))
_nodes = st.lists(
    st.tuples(st.integers(1, 8), st.integers(1, 16), st.sampled_from([0, 4, 8]), st.lists(_taint, max_size=2), st.sampled_from(["x", "y", "z"])),
    min_size=1,
    max_size=12,
)
_pods = st.lists(
    st.tuples(st.sampled_from([0.1, 0.5, 1, 2, 3]), st.sampled_from([0, 1, 4]), st.sampled_from([0, 1, 2]), st.lists(_toleration, max_size=2),
              st.sampled_from([None, "x", "y"]), st.integers(0, 40), st.integers(5, 60)),
    min_size=1,
    max_size=30,
)


def _preferred(zone: str | None) -> Affinity | None:
    if zone is None:
        return None
    term = NodeSelectorTerm((Requirement("zone", "In", (zone,)),))
    return Affinity(node_preferred=(PreferredSchedulingTerm(7, term),))


def _generated_trace(nodes, pods):
    events = [create(make_node(f"n{i}", cpu=c, memory_gi=m, gpus=g, taints=tuple(t), labels={"zone": z})) for i, (c, m, g, t, z) in enumerate(nodes)]
    for i, (cpu, mem, gpus, tols, zone, at, dur) in enumerate(pods):
        pod = make_pod(f"p{i}", cpu=cpu, memory_gi=mem, gpus=gpus, tolerations=tuple(tols), affinity=_preferred(zone), duration_s=dur)
        events.append(create(pod, at_s=at))
    return make_trace(*events, horizon_s=200)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=_nodes, pods=_pods)
def test_the_one_row_refresh_places_every_pod_where_the_array_refresh_does(nodes, pods):
    """Generated clusters (taints, preferred node affinity, GPUs) and pods that come and go:
    the signature cache refreshed row by row on scalars, with arrays, and no cache at all
    (the reference path) place every pod on the same node at the same time."""
    trace = _generated_trace(nodes, pods)

    def outcome(**changes):
        log = replay(trace, "pod", config=trace.config.with_changes(**changes))
        return placements(log, bound_only=False), [(p.pod, p.bound_ms, p.ended_ms) for p in log.pods]

    on = outcome()
    assert on == outcome(fast_path=FastPath(row_refresh=False))
    assert on == outcome(opportunistic_batching=False)


def _scheduler_after(trace) -> Scheduler:
    """The scheduler of a replay of ``trace`` under ``pod`` (the nodes and pods as it left them)."""
    seen: list[Scheduler] = []
    original = Scheduler.__init__

    def spy(self, *a, **kw):
        original(self, *a, **kw)
        seen.append(self)

    Scheduler.__init__ = spy  # type: ignore[method-assign]
    try:
        replay(trace, "pod")
    finally:
        Scheduler.__init__ = original  # type: ignore[method-assign]
    return seen[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=_nodes, pods=_pods)
def test_each_plugin_answers_for_one_row_as_over_an_array(nodes, pods):
    sched = _scheduler_after(_generated_trace(nodes, pods))
    fw = sched.frameworks["default-scheduler"]
    rows = fw.snapshot.nodes.order
    for pod in sched.pods.values():
        for p in fw.filter_plugins:
            if isinstance(p, RowFilterPlugin):
                want = p.filter(CycleState(), pod, rows).tolist()
                assert [int(p.filter_row(CycleState(), pod, int(r))) for r in rows.tolist()] == want, p.NAME
        for p, _ in fw.scorers:
            if isinstance(p, RowScorePlugin):
                for r in rows.tolist():
                    raw = p.score(CycleState(), pod, np.array([r], dtype=np.int64))
                    assert p.score_row(CycleState(), pod, r) == (None if raw is None else int(raw[0])), p.NAME


# ---- PreEnqueue once per joining pod -----------------------------------------------------------


def test_pods_joining_a_gated_gang_are_each_told_once(monkeypatch):
    """A 64-pod gang whose pods arrive one by one: each is told it waits for the group once,
    and PreEnqueue looks at each joining pod, not at every sibling again (was quadratic)."""
    told: list[str] = []
    original = Scheduler._tell_gated

    def count(self, pod, message):
        told.append(pod.name)
        original(self, pod, message)

    monkeypatch.setattr(Scheduler, "_tell_gated", count)
    events = [create(make_node("n0", cpu=64, memory_gi=64)), create(make_group("g", 64))]
    events += [create(make_pod(f"p{i:02}", cpu=0.5, group="g", duration_s=60), at_s=1 + i) for i in range(64)]
    log = replay(make_trace(*events), "gang")
    assert len(told) <= 2 * 64
    assert sum(1 for p in log.pods if p.bound_ms == 64_000) == 64
    for i in range(64):  # each pod but the last waited for its group, and was told so once
        assert len(events_of(log, f"p{i:02}", EventReason.GATED)) == (1 if i < 63 else 0)


def _gang_arriving_pod_by_pod():
    """A 64-pod gang of one spec arriving one pod per second on a node that holds it all."""
    spec = make_spec(cpu=0.5, group="g", duration_s=60)
    events = [create(make_node("n0", cpu=64, memory_gi=64)), create(make_group("g", 64))]
    events += [create(Pod(namespace="default", name=f"p{i:02}", spec=spec, source=SRC), at_s=1 + i) for i in range(64)]
    return make_trace(*events)


def test_a_group_event_asks_preenqueue_once_per_spec_of_the_gated_members(monkeypatch):
    """``FastPath.gated_siblings``: under ``permit`` each pod is its own queue entity (and
    GangScheduling's PreEnqueue gates it until the group has its pods),
    and every pod joining its PodGroup re-asks PreEnqueue for each gated sibling (quadratic in a
    gang arriving pod by pod). Siblings sharing a spec get one answer per event, whether it
    gates them or lets them go: PreEnqueue runs once per pod when it is created, and about once
    more when the 64th pod opens the gate (not once per member), with the shortcut; about 64²/2
    times without it; the pods are told, gated and bound the same."""
    calls = {"on": 0, "off": 0}
    original = Scheduler.pre_enqueue
    which = ["on"]

    def count(self, e):
        calls[which[0]] += 1
        return original(self, e)

    monkeypatch.setattr(Scheduler, "pre_enqueue", count)
    trace = _gang_arriving_pod_by_pod()
    on = replay(trace, "permit")
    which[0] = "off"
    off = replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_siblings=False)))
    assert calls["on"] <= 64 + 2 < 64 * 63 // 2 <= calls["off"]
    assert [(p.pod, p.node, p.bound_ms) for p in on.pods] == [(p.pod, p.node, p.bound_ms) for p in off.pods]
    assert all(p.bound_ms == 64_000 for p in on.pods) and len(on.pods) == 64
    for i in range(63):  # each pod but the last waited for its group, and was told so once
        assert len(events_of(on, f"p{i:02}", EventReason.GATED)) == 1


def test_a_group_event_walks_only_the_members_that_joined_since_the_last(monkeypatch):
    """``FastPath.gated_prefix``: a 64-pod gang arriving pod by pod under ``permit`` (each pod its
    own entity, gated until the group has its pods). Each pod's group event walked every earlier
    member only to skip it; with the group's first members gated alike and nothing changed since
    the last event, it visits nobody when the newcomer is gated as the first members are (their
    answer is the newcomer's) and grows the remembered prefix by one. Pods are told, gated and
    bound the same with the shortcut off."""
    from gangsim.scheduler.fastpath import gated_members

    visits = {"on": 0, "off": 0}
    original = gated_members._visit
    which = ["on"]

    def count(*args):
        visits[which[0]] += 1
        return original(*args)

    monkeypatch.setattr(gated_members, "_visit", count)
    trace = _gang_arriving_pod_by_pod()
    on = replay(trace, "permit")
    which[0] = "off"
    off = replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_prefix=False)))
    # on: one visit at the first pod's event; the prefix then grows pod by pod with no visit
    # (each newcomer is the first member's like); the 64th pod's event moves every member once
    assert visits["on"] <= 64 + 1 < 64 * 63 // 2 <= visits["off"]
    assert [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in on.pods] == [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in off.pods]
    assert list(zip(on.ev_t_ms, on.ev_object, on.ev_reason, on.ev_message)) == list(zip(off.ev_t_ms, off.ev_object, off.ev_reason, off.ev_message))
    assert all(p.bound_ms == 64_000 for p in on.pods) and len(on.pods) == 64


def test_a_joining_pod_grows_the_prefix_without_a_walk(monkeypatch):
    """``fastpath.gated_members.grow_prefix``: while the 64 pods arrive one by one, each gated
    as the first ones are, the group event grows the remembered prefix before any walk is set
    up: ``move_members`` runs for the PodGroup's own event (no member yet), the first pod's (no
    prefix yet) and the 64th's (it opens the gate), for no event in between; with
    ``gated_prefix`` off, for every one of the 65 events."""
    from gangsim.scheduler import scheduler as scheduler_module

    calls = {"on": 0, "off": 0}
    original = scheduler_module.move_members
    which = ["on"]

    def count(*args, **kwargs):
        calls[which[0]] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(scheduler_module, "move_members", count)
    trace = _gang_arriving_pod_by_pod()
    on = replay(trace, "permit")
    which[0] = "off"
    off = replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_prefix=False)))
    assert calls == {"on": 3, "off": 65}
    assert [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in on.pods] == [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in off.pods]
    assert list(zip(on.ev_t_ms, on.ev_object, on.ev_reason, on.ev_message)) == list(zip(off.ev_t_ms, off.ev_object, off.ev_reason, off.ev_message))


def test_the_last_pod_lets_the_prefix_go_at_once(monkeypatch):
    """``fastpath.gated_members``: when the 64th pod arrives, asking the first member lets it go
    (the group has its pods) and the walk would let each of the other 62 gated members go in
    turn as its sibling; with the remembered prefix they go in one queue call, in order
    (``SchedulingQueue.move_passed`` of 62 entities); with ``gated_prefix`` off, one call each.
    The pods are popped, held at Permit and bound in the same order at the same times."""
    from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue

    calls: list[int] = []
    original = SchedulingQueue.move_passed
    monkeypatch.setattr(SchedulingQueue, "move_passed", lambda self, *es: (calls.append(len(es)), original(self, *es))[1])
    trace = _gang_arriving_pod_by_pod()
    on = replay(trace, "permit")
    assert calls == [62]
    calls.clear()
    off = replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_prefix=False)))
    assert calls == [1] * 62
    assert [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in on.pods] == [(p.pod, p.node, p.bound_ms, p.waiting_reason) for p in off.pods]
    assert list(zip(on.ev_t_ms, on.ev_object, on.ev_reason, on.ev_message)) == list(zip(off.ev_t_ms, off.ev_object, off.ev_reason, off.ev_message))
    assert sum(1 for p in on.pods if p.bound_ms is not None) == 64


@pytest.mark.parametrize("gap_s", [0, 1])
def test_a_sibling_deleted_or_ungated_between_two_arrivals_is_walked_again(gap_s):
    """The prefix a group event remembers no longer holds once a member left (deleted) or a
    gated sibling was let go (its scheduling gate lifted): the next event walks every member,
    and placements and events are those of the walk without the shortcut."""
    spec = make_spec(cpu=1, group="g", duration_s=30)
    gated = make_spec(cpu=1, group="g", gates=("wait",), duration_s=30)
    pods = [Pod(namespace="default", name=f"p{i}", spec=spec, source=SRC) for i in range(5)]
    odd = Pod(namespace="default", name="q", spec=gated, source=SRC)
    events = [create(make_node("n0", cpu=8, memory_gi=8)), create(make_group("g", 6))]
    events += [create(p, at_s=1 + gap_s * i) for i, p in enumerate(pods[:3])]
    events += [create(odd, at_s=5), patch(replace(odd, spec=replace(gated, scheduling_gates=())), at_s=6)]
    events += [delete("Pod", "p1", at_s=7), create(pods[3], at_s=8), create(pods[4], at_s=9), create(pods[1], at_s=10)]
    trace = make_trace(*events)
    on = replay(trace, "permit")
    off = replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_prefix=False)))
    assert [(p.pod, p.node, p.bound_ms, p.ended_ms) for p in on.pods] == [(p.pod, p.node, p.bound_ms, p.ended_ms) for p in off.pods]
    assert list(zip(on.ev_t_ms, on.ev_object, on.ev_reason, on.ev_message)) == list(zip(off.ev_t_ms, off.ev_object, off.ev_reason, off.ev_message))
    assert sum(1 for p in on.pods if p.bound_ms is not None) == 6


def test_siblings_let_go_together_keep_their_backoff(monkeypatch):
    """``FastPath.gated_siblings``: when a group event lets a gated member go (PreEnqueue passes:
    the group has its pods), a gated sibling of its spec is let go without asking PreEnqueue
    again, but still into backoffQ while its backoff lasts. p0 and p1 failed at Permit (timed
    out: their gang lost two pods), were gated by the next pod's arrival, and are let go at
    t=5 s, inside their 10 s backoff: each goes to backoffQ, so p4 (never attempted) is popped
    first and waits at Permit, whose sibling activation then brings p0 (sent to activeQ, p1
    would be popped before p4 and take its place); every pod is attempted, told and bound as
    when each member is asked."""
    let_go = []
    original = Scheduler._let_go
    monkeypatch.setattr(Scheduler, "_let_go", lambda self, *es: (let_go.extend(e.pods[0].key for e in es), original(self, *es))[1])
    spec = make_spec(cpu=1, group="g", duration_s=30)
    pods = [Pod(namespace="default", name=f"p{i}", spec=spec, source=SRC) for i in range(6)]
    config = SchedulerConfig(pod_initial_backoff_ms=10_000, pod_max_backoff_ms=10_000, permit_timeout_ms=2_000)
    events = [create(make_node("n0", cpu=2, memory_gi=8)), create(make_group("g", 4))]
    events += [create(p, at_s=1) for p in pods[:4]] + [delete("Pod", "p2", at_s=2), delete("Pod", "p3", at_s=2)]
    events += [create(pods[4], at_s=4), create(pods[5], at_s=5)]
    trace = make_trace(*events, config=config, horizon_s=16)

    def outcome(result):
        return [(p.pod, p.node, p.bound_ms, p.scheduling_attempts) for p in result.pods], list(zip(result.ev_t_ms, result.ev_object, result.ev_reason, result.ev_message))

    on = outcome(replay(trace, "permit"))
    assert "default/p1" in let_go
    assert [obj for t_ms, obj, reason, _ in on[1] if t_ms == 5_000 and reason == EventReason.WAITING_ON_PERMIT] == ["default/p4", "default/p0"]
    assert on == outcome(replay(trace, "permit", config=trace.config.with_changes(fast_path=FastPath(gated_siblings=False))))


_arrivals = st.lists(
    st.tuples(st.sampled_from(["create", "create", "create", "gated", "delete", "ungate"]), st.integers(0, 7), st.integers(0, 1)),
    min_size=1,
    max_size=24,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_arrivals, min_count=st.integers(2, 6))
def test_gated_prefix_tells_gates_and_binds_as_the_full_walk(ops, min_count):
    """Pods of two PodGroups arriving (several at an instant, two specs, some with a scheduling
    gate), deleted and let go in random order on a small node, under ``permit`` and ``pod``:
    with ``FastPath.gated_prefix`` every pod is told, gated, bound and ended as with the full
    walk, as with every member asked PreEnqueue (``gated_siblings`` off), and as on the
    reference path."""
    plain = {g: make_spec(cpu=1, group=g, duration_s=20) for g in ("g", "h")}
    gated = {g: make_spec(cpu=1, group=g, gates=("wait",), duration_s=20) for g in ("g", "h")}
    events = [create(make_node("n0", cpu=6, memory_gi=8)), create(make_group("g", min_count)), create(make_group("h", 2))]
    events += arrival_events(ops, plain, gated, at=lambda t, dt: 1 + t // 3 + dt)
    trace = make_trace(*events, horizon_s=200)

    def outcome(policy, **changes):
        return ab_outcome(trace, policy, **changes)

    for policy in ("permit", "pod"):
        on = outcome(policy)
        assert on == outcome(policy, fast_path=FastPath(gated_prefix=False))
        assert on == outcome(policy, fast_path=FastPath(gated_siblings=False))  # (siblings gated or let go alike)
        assert on == outcome(policy, opportunistic_batching=False)


def test_a_spec_update_asks_preenqueue_again_for_every_pod():
    """Three pods of a gang share one spec with a scheduling gate (as a Job's pods share their
    template's), so PreEnqueue asks the first of them for all three; the gate is lifted from one
    pod at a time: the remembered runs are dropped at each update (a spec changed), so the group
    goes on once the last gate is gone and not at the first."""
    spec = make_spec(cpu=1, group="g", gates=("wait",), duration_s=30)
    gated = [Pod(namespace="default", name=f"p{i}", spec=spec, source=SRC) for i in range(3)]
    events = [create(make_node("n0", cpu=8, memory_gi=8)), create(make_group("g", 3))] + [create(p, at_s=1) for p in gated]
    for i, p in enumerate(gated):
        events.append(patch(replace(p, spec=replace(spec, scheduling_gates=())), at_s=10 + 10 * i))
    log = replay(make_trace(*events), "gang")
    assert {p.pod: p.bound_ms for p in log.pods} == {"default/p0": 30_000, "default/p1": 30_000, "default/p2": 30_000}


def test_a_pod_admitted_by_node_name_between_the_binds_of_a_kept_pass(monkeypatch, tmp_path):
    """A bind can make the cluster create a pod with ``spec.nodeName`` (a JobSet's next Job
    starting once the earlier ones run): it is assigned between the group's binds, before the
    pods the kept pass has not bound yet, as when each is assumed just before its bind, so the
    node's pod order and GPU devices are the same with and without keeping."""
    from gangsim.sim.cluster import Cluster

    original = Cluster.bind
    made: list[str] = []

    def bind(self, info, node):
        original(self, info, node)
        if info.name == "g-0" and not made:  # the first bind of the gang: a pod lands on its node
            made.append(node)
            self.create_pod(make_pod("direct", gpus=1, cpu=1, node_name=node, duration_s=50))

    monkeypatch.setattr(Cluster, "bind", bind)
    events = [create(make_node(f"n{i}", cpu=16, gpus=4, memory_gi=64)) for i in range(2)]
    events += [create(make_group("g", 3)), create(make_pod("other", cpu=1, gpus=1, duration_s=30))]
    events += [create(make_pod(f"g-{i}", cpu=1, gpus=1, group="g", duration_s=40), at_s=1) for i in range(3)]
    trace = make_trace(*events, horizon_s=300)
    on = _report_bytes(trace, "gang", tmp_path / "on")
    assert made
    made.clear()
    assert on == _report_bytes(trace, "gang", tmp_path / "off", fast_path=FastPath(keep_placements=False))
