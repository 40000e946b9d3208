"""NodeName (``plugins/nodename``): a pod with ``spec.nodeName`` passes Filter on that node only,
UnschedulableAndUnresolvable with upstream's reason elsewhere; the events it registers.

Ported: every case of upstream ``TestNodeName`` (node_name_test.go). Left out: the queueing-hint
tests (``Test_isSchedulableAfterNodeChange``): gangsim's hints are per event, not per object.
"""

import numpy as np
import pytest

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from gangsim.scheduler.plugins.nodename import ERR_REASON
from scheduler.harness import harness, node, pod, pod_info, rows

OK, UU = Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_reason_is_upstreams():
    assert ERR_REASON == "node(s) didn't match the requested node name"


@pytest.mark.parametrize(
    ("node_name", "pod_node_name", "want"),
    [
        pytest.param("foo", "", OK, id='TestNodeName/"no host specified"'),
        pytest.param("foo", "foo", OK, id='TestNodeName/"host matches"'),
        pytest.param("foo", "bar", UU, id='TestNodeName/"host doesn\'t match"'),
    ],
)
def test_filter(node_name, pod_node_name, want):
    sched, fw = harness([node(node_name)])
    info = pod_info(sched, pod(node_name=pod_node_name))
    plugin = fw.plugins["NodeName"]
    r = rows(sched)
    assert plugin.filter(CycleState(), info, r).tolist() == [want]
    if want != OK:
        assert plugin.reasons(CycleState(), info, int(r[0])) == (ERR_REASON,)
        assert plugin.reason_counts(CycleState(), info, r) == {ERR_REASON: 1}


def test_filter_over_many_rows_keeps_only_the_named_node():
    sched, fw = harness([node("a"), node("b"), node("c")])
    info = pod_info(sched, pod(node_name="b"))
    codes = fw.plugins["NodeName"].filter(CycleState(), info, rows(sched, "c", "b", "a"))
    assert codes.tolist() == [UU, OK, UU]
    assert codes.dtype == np.int8


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["NodeName"].events_to_register() == (ClusterEvent.NODE_ADD,)
