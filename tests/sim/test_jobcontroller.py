"""The Job controller: completions in waves (Indexed and NonIndexed), backoffLimit, activeDeadlineSeconds."""

from dataclasses import replace

import pytest
from builders import create, events_of, make_job, make_node, make_trace, run

from gangsim.eventlog import GangState

H = 3_600_000


def _rows(log):
    return [(r.pod.split("/")[1], r.attempt, r.created_ms, r.bound_ms, r.ended_ms, r.end_reason) for r in log.pods]


@pytest.mark.parametrize("indexed", [True, False], ids=["Indexed", "NonIndexed"])
@pytest.mark.parametrize("policy", ["pod", "permit", "gang"])
def test_completions_run_in_waves_of_parallelism(indexed, policy):
    # 5 completions, 2 at a time, 1 h each, room for 3 pods: waves at 0 h, 1 h, 2 h
    # (manageJob keeps min(parallelism, completions - succeeded) pods active)
    job = replace(make_job("w", 2, cpu=1, gpus=1, duration_s=3600), completions=5, indexed=indexed)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=3)), create(job)), policy)
    assert _rows(log) == [
        ("w-0", 0, 0, 0, H, "Completed"),
        ("w-1", 0, 0, 0, H, "Completed"),
        ("w-2", 0, H, H, 2 * H, "Completed"),
        ("w-3", 0, H, H, 2 * H, "Completed"),
        ("w-4", 0, 2 * H, 2 * H, 3 * H, "Completed"),
    ]
    assert log.info.horizon_ms == 3 * H
    assert log.gangs == []  # each pod of a wave Job is its own unit of work, not a gang


def test_completions_below_parallelism_create_only_completions_pods():
    job = replace(make_job("w", 3, cpu=1, gpus=1, duration_s=60), completions=1)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=3)), create(job)))
    assert [r[0] for r in _rows(log)] == ["w-0"]


def test_completions_equal_to_parallelism_is_one_gang():
    job = replace(make_job("g", 2, cpu=1, gpus=1, duration_s=60), completions=2, indexed=True)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=2)), create(job)))
    assert [(g.gang, g.pods, g.state) for g in log.gangs] == [("default/g", 2, GangState.COMPLETED)]


def test_backoff_limit_fails_the_job_after_limit_plus_one_failures():
    # room for 1 of 2 pods: the lone running pod times out (rendezvous 10 min) and fails; with
    # backoffLimit 1 the second failure fails the Job, which deletes its pods and stops
    job = replace(make_job("b", 2, cpu=1, gpus=1, duration_s=3600, rendezvous_s=600), backoff_limit=1)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=1)), create(job)))
    assert events_of(log, "b", "BackoffLimitExceeded") == [(1_200_000, "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
    ends = [(r.pod.split("/")[1], r.attempt, r.ended_ms, r.end_reason) for r in log.pods]
    assert ends == [
        ("b-0", 0, 600_000, "RendezvousTimeout"),  # failure 1: b-0 is recreated, b-1 gets the GPU
        ("b-1", 0, 1_200_000, "RendezvousTimeout"),  # failure 2 > backoffLimit 1: the Job fails
        ("b-0", 1, 1_200_000, "Deleted"),  # its pending pod is deleted
    ]
    assert [(g.gang, g.state) for g in log.gangs] == [("default/b", GangState.FAILED)]


def test_without_backoff_limit_pods_are_recreated_as_before():
    job = make_job("b", 2, cpu=1, gpus=1, duration_s=3600, rendezvous_s=600)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=1)), create(job), horizon_s=3000))
    assert events_of(log, "b", "BackoffLimitExceeded") == []
    assert max(r.attempt for r in log.pods) >= 2


def test_active_deadline_fails_the_job_and_deletes_its_pods():
    job = replace(make_job("d", 2, cpu=1, gpus=1, duration_s=7200), active_deadline_ms=H)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=2)), create(job)))
    assert events_of(log, "d", "DeadlineExceeded") == [(H, "DeadlineExceeded", "Job was active longer than specified deadline")]
    assert [(r.pod, r.ended_ms, r.end_reason) for r in log.pods] == [("default/d-0", H, "Deleted"), ("default/d-1", H, "Deleted")]
    assert [(g.gang, g.state, g.finished_ms) for g in log.gangs] == [("default/d", GangState.FAILED, None)]
    assert log.info.horizon_ms == H


def test_active_deadline_after_completion_changes_nothing():
    job = replace(make_job("d", 1, cpu=1, gpus=1, duration_s=60), active_deadline_ms=H)
    log = run(make_trace(create(make_node("n", cpu=8, gpus=2)), create(job)))
    assert events_of(log, "d", "DeadlineExceeded") == []
    assert log.info.horizon_ms == 60_000
