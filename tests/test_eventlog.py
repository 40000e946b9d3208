"""The event log (``gangsim.eventlog.EventLog``): the events table's columns, the timeline's rows
(a row only when the GPU state changes; a later sample at the same instant replaces it), the
counters, and that every reason the simulator and scheduler record is an ``EventReason``
(statically at every ``.event(...)`` call, and in replays under every policy). Folding of
repeated failures is tested in ``tests/report/test_event_aggregation.py``."""

import ast
from pathlib import Path

import pytest

from gangsim.eventlog import EndReason, EventLog, EventReason
from gangsim.load import load_trace
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[1]


def rows(log: EventLog) -> list[tuple]:
    return list(zip(log.ev_t_ms, log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message))


def timeline(log: EventLog) -> list[tuple]:
    return list(zip(log.tl_t_ms, log.tl_gpus_total, log.tl_gpus_allocated, log.tl_gpus_busy, log.tl_pending_pods, log.tl_pending_gpu_pods))


# ---- events --------------------------------------------------------------------------------------
def test_an_event_is_one_value_in_each_column():
    log = EventLog()
    log.event(1500, "Pod", "ns/p", "n1", EventReason.PREEMPTED, "Preempted by pod ns/q on node n1")
    log.event(2000, "Node", "n1", "n1", EventReason.NODE_UPDATED)
    assert rows(log) == [
        (1500, "Pod", "ns/p", "n1", "Preempted", "Preempted by pod ns/q on node n1"),
        (2000, "Node", "n1", "n1", "NodeUpdated", ""),
    ]


@pytest.mark.parametrize(
    "reason",
    [pytest.param(r, id=r.value) for r in (EventReason.PREEMPTED, EventReason.NODE_UPDATED, EventReason.RECREATED, EventReason.SCHEDULED)],
)
def test_reasons_outside_the_aggregated_ones_are_recorded_every_time(reason):
    log = EventLog()
    for t in (0, 1000):
        log.event(t, "Pod", "ns/p", "", reason, "same words")
    assert (len(log.ev_t_ms), log.counters) == (2, {})


# ---- timeline ------------------------------------------------------------------------------------
S1 = (8, 2, 2, 1, 1)  # total, allocated, busy, pending, pending_gpu
S2 = (8, 4, 4, 0, 0)
S3 = (8, 6, 4, 0, 0)


@pytest.mark.parametrize(
    ("samples", "want"),
    [
        pytest.param([(0, S1)], [(0, *S1)], id="first-sample-is-a-row"),
        pytest.param([(0, S1), (5, S1)], [(0, *S1)], id="unchanged-state-later-adds-no-row"),
        pytest.param([(0, S1), (5, S2)], [(0, *S1), (5, *S2)], id="changed-state-later-adds-a-row"),
        pytest.param([(0, S1), (5, S2), (5, S3)], [(0, *S1), (5, *S3)], id="same-instant-replaces-the-row"),
        pytest.param([(0, S1), (5, S2), (5, S1)], [(0, *S1)], id="same-instant-back-to-the-previous-state-drops-the-row"),
        pytest.param([(0, S1), (0, S2)], [(0, *S2)], id="first-instant-replaced"),
        pytest.param([(0, S1), (5, S2), (5, S1), (9, S2)], [(0, *S1), (9, *S2)], id="dropped-row-then-a-later-change"),
        pytest.param([(0, (8, 2, 2, 1, 1)), (5, (8, 2, 2, 1, 0))], [(0, 8, 2, 2, 1, 1), (5, 8, 2, 2, 1, 0)], id="any-column-counts-as-a-change"),
    ],
)
def test_timeline(samples, want):
    log = EventLog()
    for t, state in samples:
        log.timeline(t, *state)
    assert timeline(log) == want


# ---- counters ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("calls", "want"),
    [
        pytest.param([("a",)], {"a": 1}, id="one"),
        pytest.param([("a",), ("a",)], {"a": 2}, id="adds-up"),
        pytest.param([("a", 5), ("a",)], {"a": 6}, id="by-n"),
        pytest.param([("a",), ("b", 3)], {"a": 1, "b": 3}, id="separate-names"),
        pytest.param([("a", 0)], {"a": 0}, id="zero-still-names-it"),
    ],
)
def test_count(calls, want):
    log = EventLog()
    for call in calls:
        log.count(*call)
    assert log.counters == want


# ---- every reason is an EventReason --------------------------------------------------------------
def test_every_end_reason_is_also_an_event_reason():
    """``Cluster.end_pod`` records a pod's end reason as the reason of its event."""
    assert {r.value for r in EndReason} <= {r.value for r in EventReason}


def test_podgroup_condition_reasons_are_event_reasons():
    """``set_condition`` records a PodGroup condition's reason as the reason of its event."""
    src = (ROOT / "gangsim/scheduler/schedule_podgroup.py").read_text()
    reasons = {
        node.args[1].value
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Condition" and isinstance(node.args[1], ast.Constant)
    }
    assert reasons and reasons <= {r.value for r in EventReason}


def _reason_args() -> list[tuple[str, ast.expr]]:
    out = []
    for path in sorted((ROOT / "gangsim").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "event" and len(node.args) >= 5:
                out.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.args[4]))
    return out


def test_every_event_call_names_an_event_reason():
    """Literal reasons must be EventReason values and ``EventReason.X`` must exist; a reason passed
    in a variable is covered by the two tests above and by the replays below."""
    members = set(EventReason.__members__)
    values = {r.value for r in EventReason}
    args = _reason_args()
    bad = []
    for where, arg in args:
        if isinstance(arg, ast.Constant) and arg.value not in values:
            bad.append(where)
        elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "EventReason" and arg.attr not in members:
            bad.append(where)
    assert (len(args) > 20, bad) == (True, [])


@pytest.mark.parametrize("policy", ["pod", "permit", "gang"])
@pytest.mark.parametrize("trace", ["tests/golden/traces/features.yaml", "traces/victims-in-vain.yaml"])
def test_every_reason_recorded_in_a_replay_is_an_event_reason(trace, policy):
    log = replay(load_trace([ROOT / trace]), policy)
    values = {r.value for r in EventReason}
    assert sorted({str(r) for r in log.ev_reason} - values) == []
