"""NodeUnschedulable (``plugins/nodeunschedulable``): ``spec.unschedulable`` nodes reject pods
that do not tolerate ``node.kubernetes.io/unschedulable:NoSchedule``; the events it registers.

Ported: every case of upstream ``TestNodeUnschedulable`` (node_unschedulable_test.go). Left out:
``TestIsSchedulableAfterNodeChange`` (per-object queueing hints; gangsim registers events only).
"""

import pytest

from gangsim.api.objects import Toleration
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from gangsim.scheduler.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE
from scheduler.harness import harness, node, pod, pod_info, rows

OK, UU = Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
TOLERATES = (Toleration(key="node.kubernetes.io/unschedulable", effect="NoSchedule"),)  # operator "" = Equal, value ""


def test_reason_is_upstreams():
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "want"),
    [
        pytest.param(True, (), UU, id='TestNodeUnschedulable/"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"'),
        pytest.param(False, (), OK, id='TestNodeUnschedulable/"Schedule pod to normal node"'),
        pytest.param(True, TOLERATES, OK, id='TestNodeUnschedulable/"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"'),
    ],
)
def test_filter(unschedulable, tolerations, want):
    sched, fw = harness([node("n1", unschedulable=unschedulable)])
    info = pod_info(sched, pod(tolerations=tolerations))
    plugin = fw.plugins["NodeUnschedulable"]
    r = rows(sched)
    assert plugin.filter(CycleState(), info, r).tolist() == [want]
    if want != OK:
        assert plugin.reasons(CycleState(), info, int(r[0])) == (ERR_REASON_UNSCHEDULABLE,)
        assert plugin.reason_counts(CycleState(), info, r) == {ERR_REASON_UNSCHEDULABLE: 1}


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["NodeUnschedulable"].events_to_register() == (ClusterEvent.NODE_ADD, ClusterEvent.NODE_SCHEDULABLE)
