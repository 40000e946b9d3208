"""Hand-built EventLogs for the report tests (builders after kube's ``testing/wrappers.go``).

``small_log()`` is the workhorse: 2 gangs, 5 pods (6 incarnations), 1 victim, 4 timeline samples,
a 400 s horizon. Its timeline numbers are chosen for hand arithmetic (see ``SMALL_GPU``), and every
expected summary value in the tests is worked out in the comments there.
"""

from __future__ import annotations

from gangsim.eventlog import (
    EndReason,
    EventLog,
    EventReason,
    GangRecord,
    GangState,
    PodRecord,
    RunInfo,
    VictimRecord,
)


def make_log(trace: str = "t", policy: str = "gang", horizon_ms: int = 0, **info: object) -> EventLog:
    return EventLog(info=RunInfo(trace=trace, policy=policy, horizon_ms=horizon_ms, **info))  # type: ignore[arg-type]


def gang(name: str, *, submitted_ms: int = 0, started_ms: int | None = None, **kw: object) -> GangRecord:
    fields: dict[str, object] = {"kind": "Job", "pods": 1, "min_count": 1, "gpus": 1, "priority": 0}
    fields.update(kw)
    return GangRecord(gang=name, submitted_ms=submitted_ms, started_ms=started_ms, **fields)  # type: ignore[arg-type]


def pod(name: str, *, attempt: int = 0, created_ms: int = 0, **kw: object) -> PodRecord:
    fields: dict[str, object] = {"gang": "", "namespace": name.split("/")[0], "gpus": 1, "priority": 0}
    fields.update(kw)
    return PodRecord(pod=name, attempt=attempt, created_ms=created_ms, **fields)  # type: ignore[arg-type]


def victim(pod_name: str, *, t_ms: int = 0, preemptor: str = "ns/p", **kw: object) -> VictimRecord:
    fields: dict[str, object] = {
        "victim_attempt": 0,
        "victim_gang": "",
        "victim_priority": 0,
        "node": "n1",
        "preemptor_priority": 100,
        "gpus": 1,
    }
    fields.update(kw)
    return VictimRecord(t_ms=t_ms, victim_pod=pod_name, preemptor=preemptor, **fields)  # type: ignore[arg-type]


def add_timeline(log: EventLog, rows: list[tuple[int, int, int, int, int, int]]) -> EventLog:
    """Rows of ``(t_ms, total, allocated, busy, pending, pending_gpu)``."""
    for row in rows:
        log.timeline(*row)
    return log


# What small_log's timeline integrates to (GPU·ms), segment by segment, horizon 400 s:
#   [0, 100 s)   total 16, alloc  0, busy  0, pending_gpu 1:  cap 1600 busy    0 strand   0 free 1600
#   [100, 250 s) total 16, alloc 12, busy  8, pending_gpu 1:  cap 2400 busy 1200 strand 600 free  600
#   [250, 300 s) total 16, alloc 16, busy 16, pending_gpu 0:  cap  800 busy  800 strand   0 free    0
#   [300, 400 s) total 16, alloc  8, busy  4, pending_gpu 0:  cap 1600 busy  400 strand 400 free    0
#                (8 GPUs free, 2 pods pending, but none of them wants a GPU: not counted)
SMALL_GPU = {"capacity_s": 6400.0, "busy_s": 2400.0, "stranded_s": 1000.0, "free_while_pending_s": 2200.0}


def small_log() -> EventLog:
    log = make_log(trace="small", policy="gang", horizon_ms=400_000, seed=7, stopped_by="horizon")
    # train-b is recorded first: the gangs table must sort by (submitted_s, gang), not log order
    log.gangs += [
        gang(
            "ml/train-b",
            kind="PodGroup",
            pods=2,
            min_count=2,
            gpus=8,
            priority=10,
            submitted_ms=0,
            started_ms=250_000,
            restarts=1,
            preemptions=1,
            state=GangState.STALLED,
            schedule_attempts=4,
            broken=1,
            broken_by_preemption=1,
            lost_gpu_ms=400_000,
        ),
        gang(
            "ml/train-a",
            pods=2,
            min_count=2,
            gpus=8,
            priority=100,
            submitted_ms=0,
            started_ms=100_000,
            finished_ms=300_000,
            state=GangState.COMPLETED,
            schedule_attempts=1,
        ),
    ]
    failed = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    log.pods += [
        pod("ml/train-b-0", attempt=1, gang="ml/train-b", gpus=4, priority=10, created_ms=330_000,
            scheduling_attempts=1, waiting_reason=failed),
        pod("ml/train-a-0", gang="ml/train-a", gpus=4, priority=100, bound_ms=100_000, node="n1",
            ended_ms=300_000, end_reason=EndReason.COMPLETED, scheduling_attempts=2),
        pod("ml/train-a-1", gang="ml/train-a", gpus=4, priority=100, bound_ms=100_000, node="n2",
            ended_ms=300_000, end_reason=EndReason.COMPLETED, scheduling_attempts=2),
        pod("ml/train-b-0", gang="ml/train-b", gpus=4, priority=10, bound_ms=100_000, node="n3",
            ended_ms=330_000, end_reason=EndReason.PREEMPTED, scheduling_attempts=1),
        pod("ml/train-b-1", gang="ml/train-b", gpus=4, priority=10, bound_ms=250_000, node="n4",
            scheduling_attempts=3),
        pod("ml/urgent", gpus=4, priority=1000, created_ms=300_000, bound_ms=330_000, node="n3",
            scheduling_attempts=2),
    ]
    log.victims.append(
        victim("ml/train-b-0", t_ms=300_000, preemptor="ml/urgent", victim_gang="ml/train-b",
               victim_priority=10, node="n3", preemptor_priority=1000, gpus=4, lost_gpu_ms=200_000,
               in_vain=False, ended_ms=330_000)
    )
    add_timeline(log, [
        (0, 16, 0, 0, 4, 4),
        (100_000, 16, 12, 8, 1, 1),
        (250_000, 16, 16, 16, 0, 0),
        (300_000, 16, 8, 4, 2, 0),
    ])
    log.event(0, "Pod", "ml/train-a-0", "", EventReason.CREATED)
    log.event(100_000, "Pod", "ml/train-a-0", "n1", EventReason.SCHEDULED, "Successfully assigned ml/train-a-0 to n1")
    log.event(100_000, "PodGroup", "ml/train-b", "", EventReason.UNSCHEDULABLE, failed)
    log.event(250_000, "PodGroup", "ml/train-b", "", EventReason.SCHEDULED)
    log.event(300_000, "Pod", "ml/train-b-0", "n3", EventReason.PREEMPTED, "Preempted by ml/urgent on node n3")
    log.event(330_000, "Pod", "ml/urgent", "n3", EventReason.SCHEDULED, "Successfully assigned ml/urgent to n3")
    return log


def empty_log() -> EventLog:
    """No nodes, no gangs, no pods: a trace that only holds a PriorityClass."""
    return make_log(trace="empty", policy="pod", horizon_ms=0, stopped_by="idle")


def waits_log(waits_s: list[int], never: int = 0) -> EventLog:
    """One started gang per wait (submitted at 1 s), plus ``never`` gangs that never started."""
    log = make_log(horizon_ms=1_000_000)
    for i, wait in enumerate(waits_s):
        log.gangs.append(gang(f"ns/g{i}", submitted_ms=1_000, started_ms=1_000 + wait * 1000, state=GangState.RUNNING))
    for i in range(never):
        log.gangs.append(gang(f"ns/never{i}", submitted_ms=2_000))
    return log
