from __future__ import annotations

import polars as pl
import pytest

from gangsim.eventlog import EventReason, GangState
from gangsim.report import TABLE_NAMES, build_report
from gangsim.report.tables import (
    EVENTS_SCHEMA,
    GANGS_SCHEMA,
    PODS_SCHEMA,
    REASON_ENUM,
    TIMELINE_SCHEMA,
    VICTIMS_SCHEMA,
    build_tables,
    events_table,
    gang_grid,
    gangs_that_paid,
    gangs_table,
    slowest_gangs,
    top_preemptors,
    victims_table,
)

from .logs import add_timeline, empty_log, gang, make_log, pod, small_log, victim, waits_log

S, I, F, B = pl.String, pl.Int64, pl.Float64, pl.Boolean

WANT_COLUMNS = {
    "gangs": [
        ("gang", S), ("kind", S), ("policy", S), ("pods", I), ("min_count", I), ("gpus", I),
        ("priority", I), ("submitted_s", F), ("started_s", F), ("finished_s", F), ("wait_s", F),
        ("restarts", I), ("preemptions", I), ("state", S), ("schedule_attempts", I), ("broken", I),
        ("broken_by_preemption", I), ("lost_gpu_s", F), ("waiting_reason", S), ("topology_key", S), ("domain", S), ("domains", I),
    ],
    "pods": [
        ("pod", S), ("attempt", I), ("gang", S), ("namespace", S), ("node", S), ("gpus", I),
        ("priority", I), ("created_s", F), ("bound_s", F), ("ended_s", F), ("end_reason", S),
        ("scheduling_attempts", I), ("waiting_reason", S), ("milli_cpu", I), ("memory_bytes", I),
        ("devices", S), ("gpu_milli", I),
    ],
    "victims": [
        ("t_s", F), ("victim_pod", S), ("victim_attempt", I), ("victim_gang", S),
        ("victim_priority", I), ("node", S), ("preemptor", S), ("preemptor_priority", I), ("gpus", I),
        ("lost_gpu_s", F), ("in_vain", B), ("ended_s", F),
    ],
    "timeline": [
        ("t_s", F), ("gpus_total", I), ("gpus_allocated", I), ("gpus_busy", I), ("gpus_stranded", I),
        ("pending_pods", I), ("pending_gpu_pods", I),
    ],
    "events": [("t_s", F), ("kind", S), ("object", S), ("node", S), ("reason", REASON_ENUM), ("message", S)],
}


@pytest.mark.parametrize("make", [small_log, empty_log], ids=["small", "empty"])
@pytest.mark.parametrize("name", TABLE_NAMES)
def test_columns_and_dtypes(make, name):
    frame = build_tables(make())[name]
    assert list(frame.schema.items()) == WANT_COLUMNS[name]


def test_schemas_are_the_declared_ones():
    declared = {"gangs": GANGS_SCHEMA, "pods": PODS_SCHEMA, "victims": VICTIMS_SCHEMA,
                "timeline": TIMELINE_SCHEMA, "events": EVENTS_SCHEMA}
    assert {k: list(v.items()) for k, v in declared.items()} == WANT_COLUMNS


def test_tables_in_order_and_row_counts():
    tables = build_report(small_log()).tables
    assert list(tables) == ["gangs", "pods", "victims", "timeline", "events"]
    assert {k: v.height for k, v in tables.items()} == {"gangs": 2, "pods": 6, "victims": 1, "timeline": 4, "events": 6}
    assert all(v.height == 0 for v in build_report(empty_log()).tables.values())


def test_gangs_rows_sorted_by_submission_then_name():
    gangs = gangs_table(small_log())
    assert gangs.to_dicts() == [
        {"gang": "ml/train-a", "kind": "Job", "policy": "gang", "pods": 2, "min_count": 2, "gpus": 8,
         "priority": 100, "submitted_s": 0.0, "started_s": 100.0, "finished_s": 300.0, "wait_s": 100.0,
         "restarts": 0, "preemptions": 0, "state": "Completed", "schedule_attempts": 1, "broken": 0,
         "broken_by_preemption": 0, "lost_gpu_s": 0.0, "waiting_reason": "", "topology_key": "", "domain": "", "domains": None},
        {"gang": "ml/train-b", "kind": "PodGroup", "policy": "gang", "pods": 2, "min_count": 2, "gpus": 8,
         "priority": 10, "submitted_s": 0.0, "started_s": 250.0, "finished_s": None, "wait_s": 250.0,
         "restarts": 1, "preemptions": 1, "state": "Stalled", "schedule_attempts": 4, "broken": 1,
         "broken_by_preemption": 1, "lost_gpu_s": 400.0, "waiting_reason": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", "topology_key": "", "domain": "", "domains": None},
    ]


def test_gang_wait_is_computed_on_milliseconds():
    log = make_log()
    log.gangs += [gang("ns/late", submitted_ms=100_001, started_ms=100_301), gang("ns/early", submitted_ms=5)]
    gangs = gangs_table(log)
    assert gangs["gang"].to_list() == ["ns/early", "ns/late"]
    assert gangs["wait_s"].to_list() == [None, 0.3]  # 100.301 - 100.001 in floats is 0.30000000000001
    assert gangs["started_s"].to_list() == [None, 100.301]
    assert gangs["state"].to_list() == ["Pending", "Pending"]


def test_pods_rows_one_per_incarnation_sorted():
    pods = build_tables(small_log())["pods"]
    assert pods.select("pod", "attempt", "created_s", "bound_s", "ended_s", "node", "end_reason").rows() == [
        ("ml/train-a-0", 0, 0.0, 100.0, 300.0, "n1", "Completed"),
        ("ml/train-a-1", 0, 0.0, 100.0, 300.0, "n2", "Completed"),
        ("ml/train-b-0", 0, 0.0, 100.0, 330.0, "n3", "Preempted"),
        ("ml/train-b-1", 0, 0.0, 250.0, None, "n4", ""),
        ("ml/urgent", 0, 300.0, 330.0, None, "n3", ""),
        ("ml/train-b-0", 1, 330.0, None, None, "", ""),
    ]
    last = pods.row(5, named=True)
    assert last["waiting_reason"] == "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    assert last["gang"] == "ml/train-b" and last["namespace"] == "ml"
    assert pods.row(4, named=True)["gang"] == ""


def test_pods_same_creation_time_sorted_by_pod_then_attempt():
    log = make_log()
    log.pods += [pod("ns/b", attempt=1, created_ms=7), pod("ns/b", created_ms=7), pod("ns/a", created_ms=7)]
    assert build_tables(log)["pods"].select("pod", "attempt").rows() == [("ns/a", 0), ("ns/b", 0), ("ns/b", 1)]


def test_victims_in_vain_none_is_true_and_rows_sorted():
    log = make_log()
    log.victims += [
        victim("ns/v3", t_ms=2_000, preemptor="ns/p1", in_vain=False, lost_gpu_ms=1_500, ended_ms=32_000),
        victim("ns/v2", t_ms=1_000, preemptor="ns/p2", in_vain=None),
        victim("ns/v1", t_ms=1_000, preemptor="ns/p2", in_vain=True),
        victim("ns/v0", t_ms=1_000, preemptor="ns/p1", in_vain=None),
    ]
    frame = victims_table(log)
    assert frame.select("t_s", "preemptor", "victim_pod", "in_vain", "lost_gpu_s", "ended_s").rows() == [
        (1.0, "ns/p1", "ns/v0", True, 0.0, None),
        (1.0, "ns/p2", "ns/v1", True, 0.0, None),
        (1.0, "ns/p2", "ns/v2", True, 0.0, None),
        (2.0, "ns/p1", "ns/v3", False, 1.5, 32.0),
    ]
    assert frame["in_vain"].null_count() == 0


def test_timeline_keeps_log_order_and_derives_stranded():
    timeline = build_tables(small_log())["timeline"]
    assert timeline.rows() == [
        (0.0, 16, 0, 0, 0, 4, 4),
        (100.0, 16, 12, 8, 4, 1, 1),
        (250.0, 16, 16, 16, 0, 0, 0),
        (300.0, 16, 8, 4, 4, 2, 0),
    ]


def test_timeline_milliseconds_to_seconds():
    log = add_timeline(make_log(), [(1, 2, 1, 1, 0, 0), (1_234_567, 2, 2, 1, 0, 0)])
    assert build_tables(log)["timeline"]["t_s"].to_list() == [0.001, 1234.567]


def test_events_keep_log_order_and_reason_is_enum():
    events = events_table(small_log())
    assert events.schema["reason"] == pl.Enum([r.value for r in EventReason])
    assert events.select("t_s", "kind", "object", "node", "reason").rows() == [
        (0.0, "Pod", "ml/train-a-0", "", "Created"),
        (100.0, "Pod", "ml/train-a-0", "n1", "Scheduled"),
        (100.0, "PodGroup", "ml/train-b", "", "Unschedulable"),
        (250.0, "PodGroup", "ml/train-b", "", "Scheduled"),
        (300.0, "Pod", "ml/train-b-0", "n3", "Preempted"),
        (330.0, "Pod", "ml/urgent", "n3", "Scheduled"),
    ]
    assert events["message"][0] == ""


def test_events_reason_typo_fails():
    log = make_log()
    log.event(0, "Pod", "ns/p", "", "Sheduled")
    with pytest.raises(ValueError, match="'Sheduled'"):
        events_table(log)


def test_slowest_gangs_never_started_first_then_by_wait():
    log = waits_log([10, 40, 20, 40], never=2)
    view = slowest_gangs(gangs_table(log), top=10)
    assert view["gang"].to_list() == ["ns/never0", "ns/never1", "ns/g1", "ns/g3", "ns/g2", "ns/g0"]
    assert slowest_gangs(gangs_table(log), top=3)["gang"].to_list() == ["ns/never0", "ns/never1", "ns/g1"]
    grid = gang_grid(gangs_table(log), top=3)
    assert [row[4] for row in grid.rows] == ["never", "never", "40s"]
    assert grid.rows[0][-2] == GangState.PENDING


def test_preemption_views():
    log = make_log()
    log.victims += [
        victim("ns/a", preemptor="ns/big", victim_gang="ns/ga", lost_gpu_ms=100, in_vain=None),
        victim("ns/b", preemptor="ns/big", victim_gang="ns/gb", lost_gpu_ms=200, in_vain=False),
        victim("ns/c", preemptor="ns/small", victim_gang="ns/gb", lost_gpu_ms=300, in_vain=True),
        victim("ns/d", preemptor="ns/tiny", victim_gang="", lost_gpu_ms=0, in_vain=False),
    ]
    victims = victims_table(log)
    assert top_preemptors(victims, 10).rows() == [
        ("ns/big", 2, 1, 0.3),
        ("ns/small", 1, 1, 0.3),
        ("ns/tiny", 1, 0, 0.0),
    ]
    assert gangs_that_paid(victims, 10).rows() == [("ns/gb", 2, 0.5), ("ns/ga", 1, 0.1), ("", 1, 0.0)]
    assert gangs_that_paid(victims, 1).height == 1


def test_exported_members():
    import gangsim.report as report

    assert sorted(report.__all__) == sorted(
        ["Report", "TABLE_NAMES", "build_report", "render_json", "render_markdown", "render_terminal", "write_report"]
    )
    assert all(hasattr(report, name) for name in report.__all__)
    assert report.TABLE_NAMES == ("gangs", "pods", "victims", "timeline", "events")


def test_waiting_reason_prefers_a_pods_own_fit_error_then_the_earliest():
    """report/waiting.py: only Pending/Stalled gangs; among pending pods, a FitError wins over a
    group status even when created later; otherwise the earliest-created pending pod's reason."""
    from gangsim.report.waiting import short_reason, waiting_reasons

    log = make_log()
    group = "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
    fit = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: not eligible due to workload aware preemption enabled"
    log.gangs += [gang("ns/a"), gang("ns/b"), gang("ns/c", started_ms=5, state=GangState.RUNNING)]
    log.pods += [
        pod("ns/a-0", gang="ns/a", created_ms=0, waiting_reason=group),
        pod("ns/a-1", gang="ns/a", created_ms=9, waiting_reason=fit),
        pod("ns/b-1", gang="ns/b", created_ms=3, waiting_reason="waiting for minCount pods from a gang to appear in scheduling queue"),
        pod("ns/b-0", gang="ns/b", created_ms=3, waiting_reason=group),
        pod("ns/c-0", gang="ns/c", created_ms=0, waiting_reason=fit),
    ]
    assert waiting_reasons(log) == {"ns/a": fit, "ns/b": group}
    assert short_reason(fit) == "0/3: 3 Insufficient nvidia.com/gpu"
    assert short_reason(group) == "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
