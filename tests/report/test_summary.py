from __future__ import annotations

import pytest

from gangsim.eventlog import GangState
from gangsim.report import build_report
from gangsim.report.summary import (
    build_summary,
    fmt_duration,
    fmt_number,
    gpu_ms,
    nearest_rank,
    summary_grid,
    summary_rows,
)

from .logs import SMALL_GPU, add_timeline, empty_log, gang, make_log, pod, small_log, victim, waits_log

KEYS = {
    None: ["trace", "policy", "horizon_s", "gpu", "gangs", "preemption", "pods", "scheduler"],
    "gpu": ["capacity_s", "busy_s", "stranded_s", "free_while_pending_s", "utilization"],
    "gangs": ["total", "started", "completed", "never_started", "wait_p50_s", "wait_p90_s", "wait_p99_s", "wait_max_s",
              "wait_censored_p50_s", "wait_censored_p90_s", "wait_censored_p99_s"],
    "preemption": ["victims", "victims_in_vain", "lost_gpu_s", "gangs_broken"],
    "pods": ["total", "bound", "pending_at_end", "restarts"],
    "scheduler": ["cycles", "podgroup_attempts_scheduled", "podgroup_attempts_unschedulable", "podgroup_attempts_waiting_on_preemption", "podgroup_attempts_error", "podgroup_preemption_attempts"],
}
NO_SCHEDULER = {"cycles": 0, "podgroup_attempts_scheduled": 0, "podgroup_attempts_unschedulable": 0, "podgroup_attempts_waiting_on_preemption": 0, "podgroup_attempts_error": 0, "podgroup_preemption_attempts": 0}


@pytest.mark.parametrize("make", [small_log, empty_log], ids=["small", "empty"])
def test_keys_in_declared_order(make):
    summary = build_summary(make())
    assert list(summary) == KEYS[None]
    for section in ("gpu", "gangs", "preemption", "pods", "scheduler"):
        assert list(summary[section]) == KEYS[section], section


def test_small_log_summary_by_hand():
    # GPU figures: see the segment table above SMALL_GPU in logs.py
    assert build_report(small_log()).summary == {
        "trace": "small",
        "policy": "gang",
        "horizon_s": 400.0,
        "gpu": {**SMALL_GPU, "utilization": 0.375},  # 2400 / 6400
        # waits: train-a 100 s, train-b 250 s → p50 = sorted[ceil(1.0)-1] = 100, p90 = sorted[ceil(1.8)-1] = 250
        "gangs": {"total": 2, "started": 2, "completed": 1, "never_started": 0,
                  "wait_p50_s": 100.0, "wait_p90_s": 250.0, "wait_p99_s": 250.0, "wait_max_s": 250.0,
                  "wait_censored_p50_s": 100.0, "wait_censored_p90_s": 250.0, "wait_censored_p99_s": 250.0},
        "preemption": {"victims": 1, "victims_in_vain": 0, "lost_gpu_s": 200.0, "gangs_broken": 1},
        # 5 distinct pods (train-b-0 twice), all bound once; train-b-0 attempt 1 pending; 1 restart
        "pods": {"total": 5, "bound": 5, "pending_at_end": 1, "restarts": 1},
        "scheduler": NO_SCHEDULER,
    }


def test_empty_log_summary():
    assert build_summary(empty_log()) == {
        "trace": "empty",
        "policy": "pod",
        "horizon_s": 0.0,
        "gpu": {"capacity_s": 0.0, "busy_s": 0.0, "stranded_s": 0.0, "free_while_pending_s": 0.0, "utilization": 0.0},
        "gangs": {"total": 0, "started": 0, "completed": 0, "never_started": 0,
                  "wait_p50_s": 0.0, "wait_p90_s": 0.0, "wait_p99_s": 0.0, "wait_max_s": 0.0,
                  "wait_censored_p50_s": 0.0, "wait_censored_p90_s": 0.0, "wait_censored_p99_s": 0.0},
        "preemption": {"victims": 0, "victims_in_vain": 0, "lost_gpu_s": 0.0, "gangs_broken": 0},
        "pods": {"total": 0, "bound": 0, "pending_at_end": 0, "restarts": 0},
        "scheduler": NO_SCHEDULER,
    }


def test_all_seconds_are_floats_and_counts_ints():
    summary = build_summary(small_log())
    for section in ("gpu", "gangs", "preemption", "pods", "scheduler"):
        for key, value in summary[section].items():
            want = float if key.endswith("_s") or key == "utilization" else int
            assert type(value) is want, f"{section}.{key}"
    assert type(summary["horizon_s"]) is float


# (rows, horizon_ms, want gpu·ms: capacity, busy, stranded, free_while_pending)
GPU_CASES = [
    pytest.param([], 10_000, (0, 0, 0, 0), id="no-samples"),
    pytest.param(
        [(0, 3, 1, 0, 1, 1), (1_001, 3, 3, 2, 0, 0)], 2_500,
        # [0,1001): 3·1001, 0, 1·1001, (3-1)·1001 ; [1001,2500): 3·1499, 2·1499, 1·1499, 0 (nothing pending)
        (3 * 1001 + 3 * 1499, 2 * 1499, 1001 + 1499, 2 * 1001),
        id="millisecond-segments",
    ),
    pytest.param(
        [(0, 8, 2, 2, 3, 0), (500, 8, 2, 2, 3, 2)], 1_000,
        # free GPUs and pending pods all along, but GPU pods pending only from 500 ms on
        (8000, 2000, 0, 6 * 500), id="free-counted-only-while-gpu-pods-pend",
    ),
    pytest.param(
        [(200, 4, 4, 0, 0, 0), (900, 4, 0, 0, 1, 1), (1_500, 4, 4, 4, 0, 0)], 1_000,
        # starts at the first sample (200 ms); the sample at 1500 is past the horizon and adds nothing
        (4 * 800, 0, 4 * 700, 4 * 100), id="first-sample-to-horizon",
    ),
]


@pytest.mark.parametrize(("rows", "horizon_ms", "want"), GPU_CASES)
def test_gpu_integrals_exact(rows, horizon_ms, want):
    log = add_timeline(make_log(horizon_ms=horizon_ms), rows)
    assert gpu_ms(log) == dict(zip(("capacity", "busy", "stranded", "free_while_pending"), want, strict=True))
    gpu = build_summary(log)["gpu"]
    assert [gpu["capacity_s"], gpu["busy_s"], gpu["stranded_s"], gpu["free_while_pending_s"]] == [w / 1000 for w in want]


def test_utilization_rounded_to_six_decimals():
    log = add_timeline(make_log(horizon_ms=3_000), [(0, 1, 1, 1, 0, 0), (1_000, 1, 0, 0, 0, 0)])
    assert build_summary(log)["gpu"]["utilization"] == 0.333333


def test_timeline_out_of_order_is_a_bug():
    log = make_log(horizon_ms=10)
    log.tl_t_ms.extend([5, 3])
    for col in (log.tl_gpus_total, log.tl_gpus_allocated, log.tl_gpus_busy, log.tl_pending_pods, log.tl_pending_gpu_pods):
        col.extend([0, 0])
    with pytest.raises(ValueError, match="time order"):
        gpu_ms(log)


@pytest.mark.parametrize(
    ("values", "p", "want"),
    [
        pytest.param([10, 20, 30, 40], 50, 20, id="p50-of-4"),
        pytest.param([10, 20, 30, 40], 90, 40, id="p90-of-4"),
        pytest.param([10, 20, 30, 40], 99, 40, id="p99-of-4"),
        pytest.param([10, 20, 30, 40], 25, 10, id="p25-exact-rank"),
        pytest.param([7], 50, 7, id="one"),
        pytest.param([], 50, 0, id="none"),
        pytest.param(list(range(1, 101)), 90, 90, id="1..100-p90"),
        pytest.param(list(range(1, 101)), 99, 99, id="1..100-p99"),
        pytest.param(list(range(1, 11)), 99, 10, id="1..10-p99"),
    ],
)
def test_nearest_rank(values, p, want):
    assert nearest_rank(values, p) == want


def test_gang_waits_nearest_rank_over_started_gangs_only():
    gangs = build_summary(waits_log([40, 10, 30, 20], never=3))["gangs"]
    assert gangs == {"total": 7, "started": 4, "completed": 0, "never_started": 3,
                     "wait_p50_s": 20.0, "wait_p90_s": 40.0, "wait_p99_s": 40.0, "wait_max_s": 40.0,
                     # every gang: the 3 never started (submitted at 2 s) wait until the 1000 s horizon
                     # → [10, 20, 30, 40, 998, 998, 998]; rank ceil(0.5·7)=4 → 40, ceil(0.9·7)=7 → 998
                     "wait_censored_p50_s": 40.0, "wait_censored_p90_s": 998.0, "wait_censored_p99_s": 998.0}


def test_censored_waits_equal_started_waits_when_every_gang_started():
    gangs = build_summary(waits_log([40, 10, 30, 20]))["gangs"]
    assert [gangs[f"wait_censored_p{p}_s"] for p in (50, 90, 99)] == [gangs[f"wait_p{p}_s"] for p in (50, 90, 99)]


def test_never_started_shown_beside_every_wait_percentile():
    summary = build_summary(waits_log([40, 10, 30, 20], never=3))
    rows = {key: value for key, _, value in summary_rows(summary)}
    assert rows["gangs.wait_p90_s"] == "40s (3 never)"
    assert rows["gangs.wait_censored_p90_s"] == "16m38s (3 never)"
    assert rows["gangs.never_started"] == "3"
    labels = [row[0] for row in summary_grid(summary).rows]
    assert "  wait_p90_s (started only)" in labels and "  wait_censored_p90_s" in labels and "gangs" in labels


def test_gang_waits_keep_milliseconds():
    log = make_log()
    log.gangs += [gang("ns/a", submitted_ms=1_000, started_ms=1_001), gang("ns/b", submitted_ms=0, started_ms=12_345),
                  gang("ns/c", state=GangState.COMPLETED, started_ms=5)]
    gangs = build_summary(log)["gangs"]
    assert (gangs["wait_p50_s"], gangs["wait_max_s"], gangs["completed"]) == (0.005, 12.345, 1)


def test_victims_none_in_vain_counted():
    log = make_log()
    log.victims += [
        victim("ns/a", in_vain=None, lost_gpu_ms=1_234),
        victim("ns/b", in_vain=True, lost_gpu_ms=1),
        victim("ns/c", in_vain=False, lost_gpu_ms=10_000),
    ]
    log.gangs += [gang("ns/g1", broken_by_preemption=2, broken=2), gang("ns/g2", broken=1), gang("ns/g3")]
    assert build_summary(log)["preemption"] == {
        "victims": 3, "victims_in_vain": 2, "lost_gpu_s": 11.235, "gangs_broken": 1}


def test_pod_counts():
    log = make_log()
    log.pods += [
        pod("ns/a", bound_ms=1, ended_ms=5),          # bound, ended
        pod("ns/a", attempt=1, created_ms=5),         # restart, pending at end
        pod("ns/a", attempt=2, created_ms=6),         # restart, pending at end (still only one distinct pod)
        pod("ns/b", ended_ms=9, end_reason="Deleted"),  # never bound, deleted: not pending
        pod("ns/c"),                                   # never bound, pending
    ]
    assert build_summary(log)["pods"] == {"total": 3, "bound": 1, "pending_at_end": 3, "restarts": 2}


@pytest.mark.parametrize(
    ("fn", "value", "want"),
    [
        (fmt_duration, 3600.0, "1h"),
        (fmt_duration, 3661.0, "1h1m1s"),
        (fmt_duration, 0.001, "0.001s"),
        (fmt_duration, 0.0, "0s"),
        (fmt_duration, 100000.0, "27h46m40s"),
        (fmt_number, 1234.5, "1,234.5"),
        (fmt_number, 0.0, "0"),
        (fmt_number, 2.0, "2"),
    ],
)
def test_formatting(fn, value, want):
    assert fn(value) == want


def test_summary_rows_cover_every_leaf_in_order():
    rows = summary_rows(build_summary(small_log()))
    assert [label for label, _, _ in rows] == ["trace", "policy", "horizon_s"] + [
        f"{section}.{key}" for section in ("gpu", "gangs", "preemption", "pods", "scheduler") for key in KEYS[section]
    ]
    # one unit per row: GPU-h from a GPU-hour on, else GPU-s; durations as 1h2m3s; % for ratios
    values = {key: (unit, value) for key, unit, value in rows}
    assert values["horizon_s"] == ("time", "6m40s")
    assert values["gpu.capacity_s"] == ("GPU-h", "1.78")
    assert values["gpu.utilization"] == ("%", "37.5")
    assert values["preemption.lost_gpu_s"] == ("GPU-s", "200")
    assert values["gangs.wait_p90_s"] == ("time", "4m10s")
    assert values["gangs.total"] == ("", "2")


