"""TaintToleration (``plugins/tainttoleration``): Filter rejects nodes with an untolerated
NoSchedule/NoExecute taint (UnschedulableAndUnresolvable); Score counts untolerated
PreferNoSchedule taints, normalised in reverse; the events it registers.

Ported: ``TestTaintTolerationFilter`` and ``TestTaintTolerationScore`` (taint_toleration_test.go),
every case with Equal/Exists tolerations. Left out: the Gt/Lt toleration cases
(``TaintTolerationComparisonOperators``, alpha) and ``TestTaintTolerationFilterWithFeatureGate``:
gangsim's tolerations have Equal and Exists only; the queueing-hint tests (gangsim registers
events, not per-object hints).

The Filter reason is pinned to ``TaintToleration.Filter`` (tainttoleration/taint_toleration.go)
as changed by kubernetes#134740 (v1.35, cherry-picked to 1.34): ``node(s) had untolerated
taint(s)``, no taint key or value.
"""

import pytest

from gangsim.api.objects import Taint, Toleration
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from scheduler.harness import harness, node, pod, pod_info, rows

OK, UU = Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UPSTREAM_REASON = "node(s) had untolerated taint(s)"


def T(key, value, effect):  # noqa: N802 - reads like upstream's v1.Taint{...}
    return Taint(key, value, effect)


def tol(key, value="", effect="", operator="Equal"):
    return Toleration(key=key, operator=operator, value=value, effect=effect)


FILTER_CASES = [
    pytest.param((), (T("dedicated", "user1", "NoSchedule"),), UU,
                 id='TestTaintTolerationFilter/"A pod having no tolerations can\'t be scheduled onto a node with nonempty taints"'),
    pytest.param((tol("dedicated", "user1", "NoSchedule"),), (T("dedicated", "user1", "NoSchedule"),), OK,
                 id='TestTaintTolerationFilter/"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"'),
    pytest.param((tol("dedicated", "user2", "NoSchedule"),), (T("dedicated", "user1", "NoSchedule"),), UU,
                 id='TestTaintTolerationFilter/"A pod which can\'t be scheduled on a dedicated node assigned to user2 with effect NoSchedule"'),
    pytest.param((tol("foo", effect="NoSchedule", operator="Exists"),), (T("foo", "bar", "NoSchedule"),), OK,
                 id='TestTaintTolerationFilter/"A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node"'),
    pytest.param((tol("dedicated", "user2", "NoSchedule"), tol("foo", effect="NoSchedule", operator="Exists")),
                 (T("dedicated", "user2", "NoSchedule"), T("foo", "bar", "NoSchedule")), OK,
                 id='TestTaintTolerationFilter/"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node"'),
    pytest.param((tol("foo", "bar", "PreferNoSchedule"),), (T("foo", "bar", "NoSchedule"),), UU,
                 id='TestTaintTolerationFilter/"A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn\'t match, can\'t be scheduled onto the node"'),
    pytest.param((tol("foo", "bar"),), (T("foo", "bar", "NoSchedule"),), OK,
                 id='TestTaintTolerationFilter/"The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node"'),
    pytest.param((tol("dedicated", "user2", "NoSchedule"),), (T("dedicated", "user1", "PreferNoSchedule"),), OK,
                 id='TestTaintTolerationFilter/"The pod has a toleration that key and value don\'t match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"'),
    pytest.param((), (T("dedicated", "user1", "PreferNoSchedule"),), OK,
                 id='TestTaintTolerationFilter/"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"'),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"), FILTER_CASES)
def test_filter_code(tolerations, taints, want):
    sched, fw = harness([node("nodeA", taints=taints)])
    info = pod_info(sched, pod("pod1", tolerations=tolerations))
    assert fw.plugins["TaintToleration"].filter(CycleState(), info, rows(sched)).tolist() == [want]


@pytest.mark.parametrize(
    ("tolerations", "taints"),
    [pytest.param(p.values[0], p.values[1], id=p.id) for p in FILTER_CASES if p.values[2] == UU],
)
def test_filter_reason(tolerations, taints):
    """``TaintToleration.Filter`` (taint_toleration.go, kubernetes#134740): the generic reason."""
    sched, fw = harness([node("nodeA", taints=taints)])
    info = pod_info(sched, pod("pod1", tolerations=tolerations))
    assert fw.plugins["TaintToleration"].reasons(CycleState(), info, int(rows(sched)[0])) == (UPSTREAM_REASON,)


PNS = "PreferNoSchedule"


@pytest.mark.parametrize(
    ("tolerations", "nodes", "want"),
    [
        pytest.param((tol("foo", "bar", PNS),), [("nodeA", (T("foo", "bar", PNS),)), ("nodeB", (T("foo", "blah", PNS),))], [100, 0],
                     id='TestTaintTolerationScore/"node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"'),
        pytest.param((tol("cpu-type", "arm64", PNS), tol("disk-type", "ssd", PNS)),
                     [("nodeA", ()), ("nodeB", (T("cpu-type", "arm64", PNS),)), ("nodeC", (T("cpu-type", "arm64", PNS), T("disk-type", "ssd", PNS)))], [100, 100, 100],
                     id='TestTaintTolerationScore/"the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has"'),
        pytest.param((tol("foo", "bar", PNS),),
                     [("nodeA", ()), ("nodeB", (T("cpu-type", "arm64", PNS),)), ("nodeC", (T("cpu-type", "arm64", PNS), T("disk-type", "ssd", PNS)))], [100, 50, 0],
                     id='TestTaintTolerationScore/"the more intolerable taints a node has, the lower score it gets."'),
        pytest.param((tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")),
                     [("nodeA", ()), ("nodeB", (T("cpu-type", "arm64", "NoSchedule"),)), ("nodeC", (T("cpu-type", "arm64", PNS), T("disk-type", "ssd", PNS)))], [100, 100, 0],
                     id='TestTaintTolerationScore/"only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function"'),
        pytest.param((), [("nodeA", ()), ("nodeB", (T("cpu-type", "arm64", PNS),))], [100, 0],
                     id='TestTaintTolerationScore/"Default behaviour No taints and tolerations, lands on node with no taints"'),
    ],
)
def test_score(tolerations, nodes, want):
    sched, fw = harness([node(name, taints=taints) for name, taints in nodes])
    info = pod_info(sched, pod("pod1", tolerations=tolerations))
    plugin = fw.plugins["TaintToleration"]
    raw = plugin.score(CycleState(), info, rows(sched))
    assert plugin.normalize(raw).tolist() == want


def test_raw_score_is_the_count_of_untolerated_prefer_no_schedule_taints():
    sched, fw = harness([node("a"), node("b", taints=(T("x", "1", PNS),)), node("c", taints=(T("x", "1", PNS), T("y", "2", PNS), T("z", "3", "NoSchedule")))])
    raw = fw.plugins["TaintToleration"].score(CycleState(), pod_info(sched, pod()), rows(sched))
    assert raw.tolist() == [0, 1, 2]


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["TaintToleration"].events_to_register() == (ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT)
