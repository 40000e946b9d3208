"""The in-vain decision (``gangsim.sim.in_vain.InVainTracker``; INTERFACE: a victim is ``in_vain``
when its preemptor was not bound within the next scheduling attempt after the victim ended).
A decision is armed once all its victims are gone; the preemptor's next attempt decides it; a
preemptor that disappears, or a decision still open at the horizon, counts as in vain."""

import pytest

from gangsim.eventlog import VictimRecord
from gangsim.sim.in_vain import InVainTracker

P = "default/preemptor"


def victim(name: str) -> VictimRecord:
    return VictimRecord(t_ms=0, victim_pod=f"default/{name}", victim_attempt=0, victim_gang="", victim_priority=0, node="n1",
                        preemptor=P, preemptor_priority=10, gpus=1)


def play(steps, *, terminating=("v1",), instant=()) -> dict[str, bool | None]:
    """One decision of ``P`` evicting ``terminating`` (uids 1, 2, ...) and ``instant`` (gone at
    once, e.g. rejected at Permit); then ``steps``. Returns victim -> in_vain."""
    tracker = InVainTracker()
    recs = {name: victim(name) for name in (*terminating, *instant)}
    uids = {name: uid for uid, name in enumerate(terminating, start=1)}
    tracker.decided(P, list(recs.values()), [(uids[n], recs[n]) for n in terminating])
    for step in steps:
        op = step[0]
        if op == "ended":
            tracker.victim_ended(uids[step[1]], 1000)
        elif op == "start":
            tracker.attempt_started(P)
        elif op == "bound":
            tracker.attempt_finished(P, bound=True)
        elif op == "failed":
            tracker.attempt_finished(P, bound=False)
        elif op == "gone":
            tracker.preemptor_gone(P)
        elif op == "horizon":
            tracker.finish()
    return {name: rec.in_vain for name, rec in recs.items()}


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("ended", "v1"), ("start",), ("bound",)], {"v1": False}, id="bound-at-the-next-attempt-after-the-end"),
        pytest.param([("ended", "v1"), ("start",), ("failed",)], {"v1": True}, id="next-attempt-after-the-end-fails"),
        pytest.param([("ended", "v1"), ("start",), ("failed",), ("start",), ("bound",)], {"v1": True}, id="a-later-bind-is-too-late"),
        pytest.param([("start",), ("failed",)], {"v1": None}, id="attempt-before-the-end-does-not-count"),
        pytest.param([("start",), ("failed",), ("ended", "v1"), ("start",), ("bound",)], {"v1": False}, id="failed-before-the-end-then-bound"),
        pytest.param([("start",), ("ended", "v1"), ("failed",)], {"v1": None}, id="attempt-straddling-the-end-does-not-count"),
        pytest.param([("start",), ("ended", "v1"), ("failed",), ("start",), ("failed",)], {"v1": True}, id="straddling-then-a-failed-attempt"),
        pytest.param([("ended", "v1")], {"v1": None}, id="armed-but-not-yet-attempted"),
        pytest.param([("gone",)], {"v1": True}, id="preemptor-gone-before-the-end"),
        pytest.param([("ended", "v1"), ("gone",)], {"v1": True}, id="preemptor-gone-after-the-end"),
        pytest.param([("horizon",)], {"v1": True}, id="open-at-the-horizon"),
        pytest.param([("ended", "v1"), ("start",), ("horizon",)], {"v1": True}, id="attempt-open-at-the-horizon"),
        pytest.param([("ended", "v1"), ("start",), ("bound",), ("horizon",)], {"v1": False}, id="decided-before-the-horizon-stays"),
        pytest.param([("ended", "v1"), ("start",), ("failed",), ("gone",)], {"v1": True}, id="gone-after-deciding-changes-nothing"),
    ],
)
def test_one_victim(steps, want):
    assert play(steps) == want


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("ended", "v1"), ("start",), ("failed",)], {"v1": None, "v2": None}, id="armed-only-when-every-victim-ended"),
        pytest.param([("ended", "v1"), ("ended", "v2"), ("start",), ("failed",)], {"v1": True, "v2": True}, id="all-ended-then-failed"),
        pytest.param([("ended", "v2"), ("ended", "v1"), ("start",), ("bound",)], {"v1": False, "v2": False}, id="all-ended-then-bound"),
    ],
)
def test_two_victims(steps, want):
    assert play(steps, terminating=("v1", "v2")) == want


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("start",), ("failed",)], {"w": True}, id="failed-at-once"),
        pytest.param([("start",), ("bound",)], {"w": False}, id="bound-at-once"),
    ],
)
def test_a_decision_with_no_terminating_victims_is_armed_at_once(steps, want):
    assert play(steps, terminating=(), instant=("w",)) == want


def test_victim_end_time_is_recorded():
    tracker = InVainTracker()
    rec = victim("v1")
    tracker.decided(P, [rec], [(1, rec)])
    tracker.victim_ended(1, 4200)
    assert rec.ended_ms == 4200


def test_events_of_other_pods_do_not_decide():
    tracker = InVainTracker()
    rec = victim("v1")
    tracker.decided(P, [rec], [(1, rec)])
    tracker.victim_ended(99, 1000)  # not a victim
    tracker.victim_ended(1, 1000)
    tracker.attempt_started("default/other")
    tracker.attempt_finished("default/other", bound=False)
    tracker.preemptor_gone("default/other")
    assert rec.in_vain is None


def test_two_decisions_of_one_preemptor_are_decided_by_the_same_attempt_once_armed():
    tracker = InVainTracker()
    first, second = victim("a"), victim("b")
    tracker.decided(P, [first], [(1, first)])
    tracker.decided(P, [second], [(2, second)])
    tracker.victim_ended(1, 1000)
    tracker.attempt_started(P)
    tracker.attempt_finished(P, bound=False)
    assert (first.in_vain, second.in_vain) == (True, None)
