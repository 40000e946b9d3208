"""The job model: progress, stranded GPUs, rendezvous timeouts, checkpoints — GPU-seconds by hand."""

from builders import create, delete, events_of, make_job, make_node, make_pod, make_trace, pod_rows, run
from gangsim.report import build_report


def summary(log):
    return build_report(log).summary


def test_partial_gang_strands_gpus_until_the_other_job_finishes():
    # 4 GPUs. Job a (3 x 1 GPU, 100 s) is created first and runs; job b gets one pod, which holds
    # its GPU idle until a finishes; then b runs 100 s.
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_job("a", 3, cpu=1, gpus=1, duration_s=100)),
        create(make_job("b", 3, cpu=1, gpus=1, duration_s=100)),
    )
    log = run(t)
    s = summary(log)
    assert s["horizon_s"] == 200.0
    assert s["gpu"] == {
        "capacity_s": 800.0,
        "busy_s": 600.0,  # 3 GPUs x 100 s, twice
        "stranded_s": 100.0,  # b-0 from 0 to 100 s
        "free_while_pending_s": 0.0,  # while b-1, b-2 waited, no GPU was free
        "utilization": 0.75,
    }
    gangs = {g.gang: g for g in log.gangs}
    assert (gangs["default/a"].started_ms, gangs["default/a"].finished_ms) == (0, 100_000)
    assert (gangs["default/b"].submitted_ms, gangs["default/b"].started_ms, gangs["default/b"].finished_ms) == (0, 100_000, 200_000)
    assert s["gangs"]["wait_max_s"] == 100.0


def test_free_gpus_while_a_gpu_pod_is_pending_are_counted():
    # 4 GPUs, a 2-GPU pod runs 50 s; a 4-GPU pod waits for it: 2 GPUs sit free while it pends.
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_pod("small", cpu=1, gpus=2, duration_s=50)),
        create(make_pod("big", cpu=1, gpus=4, duration_s=10), at_s=10),
    )
    s = summary(run(t))
    assert s["horizon_s"] == 60.0
    assert s["gpu"]["capacity_s"] == 240.0
    assert s["gpu"]["busy_s"] == 100.0 + 40.0
    assert s["gpu"]["stranded_s"] == 0.0
    assert s["gpu"]["free_while_pending_s"] == 2 * 40.0  # from 10 s to 50 s


def test_rendezvous_timeout_fails_and_recreates_the_running_pods():
    # b's lone running pod waits 40 s for its siblings, then fails and its Job recreates it; the
    # freed GPU goes to the oldest pending sibling, which times out in turn 40 s later.
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_job("a", 3, cpu=1, gpus=1, duration_s=100)),
        create(make_job("b", 3, cpu=1, gpus=1, duration_s=100, rendezvous_s=40)),
    )
    log = run(t)
    rows = [(r.pod.split("/")[1], r.attempt, r.bound_ms, r.ended_ms, r.end_reason) for r in log.pods if "/b-" in r.pod]
    assert rows == [
        ("b-0", 0, 0, 40_000, "RendezvousTimeout"),
        ("b-1", 0, 40_000, 80_000, "RendezvousTimeout"),
        ("b-2", 0, 80_000, 200_000, "Completed"),
        ("b-0", 1, 100_000, 200_000, "Completed"),
        ("b-1", 1, 100_000, 200_000, "Completed"),
    ]
    s = summary(log)
    assert s["pods"]["restarts"] == 2
    assert s["gpu"]["stranded_s"] == 40.0 + 40.0 + 20.0
    b = {g.gang: g for g in log.gangs}["default/b"]
    assert (b.restarts, b.started_ms, b.finished_ms) == (2, 100_000, 200_000)
    assert [m for _, _, m in events_of(log, "b", "RendezvousTimeout")] == ["1 of 3 pods joined within 40s"] * 2


def test_preempted_gang_loses_work_since_its_last_checkpoint():
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_job("train", 2, cpu=1, gpus=2, duration_s=1000, checkpoint_s=100, priority=1, grace_s=0)),
        create(make_pod("urgent", cpu=1, gpus=4, priority=10, duration_s=50), at_s=250),
    )
    log = run(t)
    assert [(v.victim_pod, v.lost_gpu_ms, v.in_vain) for v in log.victims] == [
        ("default/train-0", 50 * 4 * 1000, False),  # 250 s done, 200 s kept: 50 s x 4 GPUs lost, once
        ("default/train-1", 0, False),
    ]
    train = {g.gang: g for g in log.gangs}["default/train"]
    assert (train.broken_by_preemption, train.preemptions, train.lost_gpu_ms) == (1, 2, 200_000)
    assert train.finished_ms == 300_000 + 800_000  # resumes at 300 s from the 200 s checkpoint
    s = summary(log)
    assert s["preemption"] == {"victims": 2, "victims_in_vain": 0, "lost_gpu_s": 200.0, "gangs_broken": 1}


def test_deleting_a_job_ends_its_pods():
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_job("j", 2, cpu=1, gpus=1)),
        delete("Job", "j", 30),
    )
    log = run(t)
    assert [(r.pod, r.ended_ms, r.end_reason) for r in log.pods] == [("default/j-0", 30_000, "Deleted"), ("default/j-1", 30_000, "Deleted")]
    assert summary(log)["gpu"]["busy_s"] == 60.0


def test_node_failure_fails_pods_and_the_job_recreates_them_elsewhere():
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=2)),
        create(make_node("n2", cpu=16, gpus=2)),
        create(make_job("j", 1, cpu=1, gpus=2, duration_s=100)),
        delete("Node", "n1", 10),
    )
    log = run(t)
    assert [(r.attempt, r.node, r.bound_ms, r.ended_ms, r.end_reason) for r in log.pods] == [
        (0, "n1", 0, 10_000, "NodeFailed"),
        (1, "n2", 10_000, 110_000, "Completed"),  # no checkpoint: all work lost
    ]


def test_pod_without_a_scheduler_profile_stays_pending_and_counts_for_no_gang():
    t = make_trace(
        create(make_node("n1", cpu=16, gpus=4)),
        create(make_pod("other", cpu=1, gpus=1, scheduler_name="volcano")),
        create(make_pod("mine", cpu=1, gpus=1, duration_s=10)),
    )
    log = run(t, "gang")
    other = pod_rows(log, "other")[0]
    assert (other.bound_ms, other.gang, other.scheduling_attempts) == (None, "", 0)
    assert summary(log)["pods"]["pending_at_end"] == 1
