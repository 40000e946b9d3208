"""Issue 16 (NASA memory): what an ended gang leaves behind. CPython never shrinks a dict, so a
per-pod dict of a gang, Job or PodGroup that emptied would keep its table for the rest of the
replay; such dicts are replaced when they empty, and the scheduling queue forgets an entity's
token once it is done. Checked on the state a replay leaves (not on timing)."""

import sys

import pytest
from builders import create, make_job, make_node, make_trace

from gangsim.sim.replay import Setup

EMPTY = sys.getsizeof({})


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
def test_ended_gangs_keep_no_per_pod_tables(policy):
    jobs = [create(make_job(f"j{i}", 48, cpu=1, duration_s=60), at_s=100 * i) for i in range(3)]
    trace = make_trace(create(make_node("n", cpu=64, memory_gi=64)), *jobs)
    setup = Setup(trace, policy)
    setup.engine.run(10_000_000)
    cluster, scheduler = setup.cluster, setup.scheduler
    assert [r.end_reason for r in setup.log.pods] == ["Completed"] * 144  # every gang ran and ended
    for g in cluster.jobs_model.gangs.values():
        assert (len(g.members), len(g.running)) == (0, 0)
        assert sys.getsizeof(g.members) == sys.getsizeof(g.running) == EMPTY
    for js in cluster.job_controller.jobs.values():
        assert sys.getsizeof(js.pods) == EMPTY
    for st in scheduler.group_states.values():
        assert not st.members and sys.getsizeof(st.members) == EMPTY
    assert scheduler.queue._tokens == {} and scheduler.queue.entities == {}
