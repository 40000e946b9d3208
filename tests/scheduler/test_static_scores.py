"""``FastPath.static_scores`` (issue 16, SB-50k): a scorer whose raw score reads only the node's
static fields (TaintToleration, NodeAffinity: ``SCORE_NODE_STATIC``) is not scored again when a
bind changes a row, and when its raw score is one value on every live node its NormalizeScore is
added as that one value. A/B tests on report bytes (on, the switch off, the reference path), a
hypothesis property over generated clusters whose taints and labels change during the replay,
and guards (not timing) that the shortcut is taken."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import shapes
from builders import create, make_group, make_node, make_pod, make_trace, patch, placements
from fakes import FakeClusterAPI
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.api.objects import Affinity, PreferredSchedulingTerm, Taint, Toleration
from gangsim.api.selectors import NodeSelectorTerm, Requirement
from gangsim.eventlog import EventLog
from gangsim.scheduler.framework.types import ResourceIndex
from gangsim.scheduler.plugins.tainttoleration import TaintToleration
from gangsim.scheduler.profiles import POLICIES
from gangsim.scheduler.scheduler import Scheduler
from gangsim.sim.replay import replay
from ab import report_bytes

OFF = {
    "no-static-scores": {"fast_path": FastPath(static_scores=False)},
    "no-batching": {"opportunistic_batching": False},
}
SOFT = Taint("soft", "", "PreferNoSchedule")


def _preferred(zone: str | None) -> Affinity | None:
    if zone is None:
        return None
    return Affinity(node_preferred=(PreferredSchedulingTerm(5, NodeSelectorTerm((Requirement("zone", "In", (zone,)),))),))


def _changing_cluster(tainted_at_start: bool):
    """12 nodes, some with a PreferNoSchedule taint (or none until a node update adds one), pods
    with and without a toleration and a preferred zone, and gangs; nodes are tainted, relabelled
    and untainted while pods come and go, so the static scores change mid-replay."""
    nodes = [make_node(f"n{i}", cpu=8, memory_gi=32, labels={"zone": "ab"[i % 2]}, taints=(SOFT,) if tainted_at_start and i % 3 == 0 else ()) for i in range(12)]
    events = [create(n) for n in nodes]
    tol = (Toleration(key="soft", operator="Exists", effect="PreferNoSchedule"),)
    for i in range(60):
        pod = make_pod(f"p{i}", cpu=1 + i % 3, memory_gi=2, tolerations=tol if i % 4 == 0 else (), affinity=_preferred("ab"[i % 2] if i % 5 == 0 else None), duration_s=30 + i % 7 * 10)
        events.append(create(pod, at_s=i * 3))
    for g in range(6):
        events.append(create(make_group(f"g{g}", 3), at_s=40 + g * 20))
        for k in range(3):
            events.append(create(make_pod(f"g{g}-{k}", cpu=2, memory_gi=4, group=f"g{g}", duration_s=60), at_s=40 + g * 20))
    events.append(patch(make_node("n1", cpu=8, memory_gi=32, labels={"zone": "a"}, taints=(SOFT,)), at_s=50))
    events.append(patch(make_node("n4", cpu=8, memory_gi=32, labels={"zone": "b"}, taints=(SOFT, Taint("other", "x", "PreferNoSchedule"))), at_s=90))
    events.append(patch(make_node("n1", cpu=8, memory_gi=32, labels={"zone": "b"}), at_s=130))
    return make_trace(*events, horizon_s=400)


def _report_bytes(trace, policy: str, out: Path, **changes) -> dict[str, bytes]:
    return report_bytes(trace, policy, out, **changes)


@pytest.mark.parametrize("switch", sorted(OFF))
@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("tainted_at_start", [True, False], ids=["tainted", "untainted"])
def test_static_scores_off_writes_the_same_report(switch, policy, tainted_at_start, tmp_path):
    trace = _changing_cluster(tainted_at_start)
    assert _report_bytes(trace, policy, tmp_path / "on") == _report_bytes(trace, policy, tmp_path / "off", **OFF[switch])


_nodes = st.lists(st.tuples(st.integers(1, 8), st.sampled_from([(), (SOFT,)]), st.sampled_from(["x", "y"])), min_size=1, max_size=10)
_pods = st.lists(st.tuples(st.sampled_from([0.5, 1, 2, 3]), st.booleans(), st.sampled_from([None, "x", "y"]), st.integers(0, 40), st.integers(5, 60)), min_size=1, max_size=30)
_updates = st.lists(st.tuples(st.integers(0, 9), st.sampled_from([(), (SOFT,)]), st.sampled_from(["x", "y"]), st.integers(0, 60)), max_size=4)


@settings(max_examples=50, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=_nodes, pods=_pods, updates=_updates)
def test_kept_static_scores_place_every_pod_as_the_reference(nodes, pods, updates):
    """Generated clusters whose nodes gain and lose a PreferNoSchedule taint and change zone
    while pods with and without a toleration and a preferred zone come and go: every pod lands
    on the same node at the same time with the static scores kept, rescored, and on the
    reference path."""
    events = [create(make_node(f"n{i}", cpu=c, memory_gi=16, taints=t, labels={"zone": z})) for i, (c, t, z) in enumerate(nodes)]
    tol = (Toleration(key="soft", operator="Exists", effect="PreferNoSchedule"),)
    for i, (cpu, tolerates, zone, at, dur) in enumerate(pods):
        events.append(create(make_pod(f"p{i}", cpu=cpu, memory_gi=1, tolerations=tol if tolerates else (), affinity=_preferred(zone), duration_s=dur), at_s=at))
    for i, (row, taints, zone, at) in enumerate(updates):
        if row < len(nodes):
            events.append(patch(make_node(f"n{row}", cpu=nodes[row][0], memory_gi=16, taints=taints, labels={"zone": zone}), at_s=at + i * 0.001))
    trace = make_trace(*events, horizon_s=200)

    def outcome(**changes):
        log = replay(trace, "pod", config=trace.config.with_changes(**changes))
        return placements(log, bound_only=False), [(p.pod, p.bound_ms, p.ended_ms) for p in log.pods]

    on = outcome()
    assert on == outcome(fast_path=FastPath(static_scores=False))
    assert on == outcome(opportunistic_batching=False)


def test_the_switch_reaches_the_framework():
    def framework(**changes):
        sched = Scheduler(SchedulerConfig().with_changes(**changes), POLICIES["pod"], ResourceIndex(()), cluster=FakeClusterAPI(), log=EventLog())
        return sched.frameworks["default-scheduler"]

    names = [p.NAME for p, _ in framework().scorers]
    on = dict(zip(names, framework().static_scorers))
    assert on["TaintToleration"] and on["NodeAffinity"] and not on["NodeResourcesFit"] and not on["PodTopologySpread"]
    assert not any(framework(**OFF["no-static-scores"]).static_scorers)
    assert not any(framework(**OFF["no-batching"]).static_scorers)
    assert not any(framework(fast_path=FastPath(signature_cache=False)).static_scorers)  # it lives in the signature cache


def test_binds_do_not_rescore_static_scores(monkeypatch):
    """SchedulingBasic on 200 nodes, 1,000 pods: TaintToleration scores each node once (the first
    pod's full refresh) instead of once more for each row a bind changed; the report is the same."""
    calls = {"rows": 0}
    score_row = TaintToleration.score_row

    def counted(self, state, pod, row):
        calls["rows"] += 1
        return score_row(self, state, pod, row)

    monkeypatch.setattr(TaintToleration, "score_row", counted)
    trace = shapes.scheduling_basic(200, 1000)
    on = replay(trace, "pod")
    assert calls["rows"] == 0
    calls["rows"] = 0
    off = replay(trace, "pod", config=trace.config.with_changes(**OFF["no-static-scores"]))
    assert calls["rows"] >= 999  # a row refresh after every bind
    assert placements(on) == placements(off) and len(placements(on)) == 1000
