"""``FastPath.sibling_activation`` (issue 16, NASA-permit): GangScheduling's Permit activates the
gang's pending pods each time a member starts waiting (quadratic per gang). A walk that left the
queue's activation epoch unchanged (nothing entered backoffQ, the unschedulable pool or the gated
set, no run of several pods queued) is not repeated while the epoch stays: activating the same
siblings again would do nothing. A guard counting the pods handed to ``Handle.activate``, and
outcome A/B tests against the switch off and the reference path (the busy generated traces, the
NASA head and the bundled traces are in ``test_successful_path.py``'s ``OFF``)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import SRC, create, make_group, make_node, make_spec, make_trace
from gangsim.api.config import FastPath
from gangsim.api.objects import Pod
from gangsim.scheduler.scheduler import Scheduler
from ab import ARRIVAL_OPS, gang_at_once, two_gangs_on_one_node, outcome as ab_outcome

OFF = FastPath(sibling_activation=False)


def _outcome(trace, policy: str = "permit", **changes):
    return ab_outcome(trace, policy, **changes)


def test_a_gang_activates_its_siblings_once_not_at_every_permit(monkeypatch):
    """64 pods waiting at Permit one after the other: without the shortcut each hands its pending
    siblings to ``Handle.activate`` (63 + 62 + … pods), with it the first walk only; the pods are
    told, bound and ended the same."""
    handed = {"n": 0}
    original = Scheduler.activate

    def count(self, pods):
        handed["n"] += len(pods)
        return original(self, pods)

    monkeypatch.setattr(Scheduler, "activate", count)
    trace = gang_at_once(64)
    on = _outcome(trace)
    on_handed, handed["n"] = handed["n"], 0
    off = _outcome(trace, fast_path=OFF)
    assert on_handed <= 2 * 64 < 63 * 62 // 2 <= handed["n"]
    assert on == off
    assert sum(1 for p in on[0] if p[2] == 1_000) == 64


def test_a_sibling_that_failed_since_the_last_walk_is_activated_again():
    """Two gangs on a node that fits one at a time, the second with a Permit timeout to run
    into: pods rejected at Permit go back to the queue (the epoch moves), and the next member
    waiting at Permit activates them as on the reference path."""
    small = make_spec(cpu=1, group="g", duration_s=20)
    other = make_spec(cpu=1, group="h", duration_s=20)
    events = [create(make_node("n0", cpu=4, memory_gi=8)), create(make_group("g", 3)), create(make_group("h", 3))]
    events += [create(Pod(namespace="default", name=f"g{i}", spec=small, source=SRC), at_s=1) for i in range(3)]
    events += [create(Pod(namespace="default", name=f"h{i}", spec=other, source=SRC), at_s=2) for i in range(3)]
    trace = make_trace(*events, horizon_s=900)
    on = _outcome(trace)
    assert on == _outcome(trace, fast_path=OFF) == _outcome(trace, opportunistic_batching=False)
    assert {p[0] for p in on[0] if p[2] is not None} == {f"default/{g}{i}" for g in "gh" for i in range(3)}
    assert [p[5] for p in on[0]] == [1, 1, 1, 1, 2, 2]  # h1 and h2 failed Filter after h0's walk, then were tried again


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ARRIVAL_OPS, min_g=st.integers(2, 5), min_h=st.integers(2, 4), cpu=st.integers(3, 8))
def test_sibling_activation_places_and_tells_as_the_reference(ops, min_g, min_h, cpu):
    """Pods of two gangs arriving (several at an instant, some with a scheduling gate), deleted
    and let go in random order on a node too small for both, so members wait at Permit, time
    out, fail Filter and are activated again: with ``FastPath.sibling_activation`` every pod is
    placed, told and ended as with it off and as on the reference path."""
    trace = two_gangs_on_one_node(ops, min_g, min_h, cpu)
    on = _outcome(trace)
    assert on == _outcome(trace, fast_path=OFF)
    assert on == _outcome(trace, opportunistic_batching=False)
