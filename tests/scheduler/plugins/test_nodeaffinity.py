"""NodeAffinity (``plugins/nodeaffinity``): Filter on ``nodeSelector`` and required node
affinity (``matchExpressions`` In/NotIn/Exists/DoesNotExist/Gt/Lt and ``matchFields`` on
``metadata.name``), UnschedulableAndUnresolvable with upstream's reason; Score sums the weights of
matching preferred terms, normalised to 0..100; the events it registers.

Ported: ``TestNodeAffinity`` (Filter; node_affinity_test.go), every case without scheduler
``addedAffinity``; ``TestNodeAffinityPriority`` (Score), every case without ``addedAffinity``.
Left out: the ``addedAffinity`` cases (``NodeAffinityArgs``: gangsim's profiles carry no such
args); the PreFilter result assertions (gangsim has no NodeAffinity PreFilter: matchFields are
matched in Filter, with the same verdict); ``Test_isSchedulableAfterNodeChange`` (per-object
queueing hints; gangsim registers events only).

An In/NotIn requirement with an invalid label value: the term's selector does not parse
(``labels.NewRequirement`` in ``nodeSelectorRequirementsAsSelector``, component-helpers
nodeaffinity) and matches no node, as upstream.
"""

import pytest

from gangsim.api.objects import Affinity, PreferredSchedulingTerm
from gangsim.api.selectors import NodeSelectorTerm, Requirement
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from gangsim.scheduler.plugins.nodeaffinity import ERR_REASON_POD
from scheduler.harness import harness, node, pod, pod_info, rows

OK, UU = Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NAME = "metadata.name"


def req(key, op, *values):
    return Requirement(key, op, tuple(values))


def required(*terms):
    """requiredDuringSchedulingIgnoredDuringExecution with these NodeSelectorTerms (ORed)."""
    return Affinity(node_required=tuple(terms))


def term(*exprs, fields=()):
    return NodeSelectorTerm(tuple(exprs), tuple(fields))


def test_reason_is_upstreams():
    assert ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"


CASES = [
    pytest.param({"foo": "bar"}, None, {}, "node1", UU, id='TestNodeAffinity/"missing labels"'),
    pytest.param({"foo": "bar"}, None, {"foo": "bar"}, "node1", OK, id='TestNodeAffinity/"same labels"'),
    pytest.param({"foo": "bar"}, None, {"foo": "bar", "baz": "blah"}, "node1", OK, id='TestNodeAffinity/"node labels are superset"'),
    pytest.param({"foo": "bar", "baz": "blah"}, None, {"foo": "bar"}, "node1", UU, id='TestNodeAffinity/"node labels are subset"'),
    pytest.param(None, required(term(req("foo", "In", "bar", "value2"))), {"foo": "bar"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with matchExpressions using In operator that matches the existing node"'),
    pytest.param(None, required(term(req("kernel-version", "Gt", "0204"))), {"kernel-version": "0206"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with matchExpressions using Gt operator that matches the existing node"'),
    pytest.param(None, required(term(req("mem-type", "NotIn", "DDR", "DDR2"))), {"mem-type": "DDR3"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with matchExpressions using NotIn operator that matches the existing node"'),
    pytest.param(None, required(term(req("GPU", "Exists"))), {"GPU": "NVIDIA-GRID-K1"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with matchExpressions using Exists operator that matches the existing node"'),
    pytest.param(None, required(term(req("foo", "In", "value1", "value2"))), {"foo": "bar"}, "node1", UU,
                 id='TestNodeAffinity/"Pod with affinity that don\'t match node\'s labels won\'t schedule onto the node"'),
    pytest.param(None, required(term()), {"foo": "bar"}, "node1", UU,
                 id='TestNodeAffinity/"Pod with empty MatchExpressions is not a valid value will match no objects and won\'t schedule onto the node"'),
    pytest.param(None, None, {"foo": "bar"}, "node1", OK, id='TestNodeAffinity/"Pod with no Affinity will schedule onto a node"'),
    pytest.param(None, Affinity(node_required=None), {"foo": "bar"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with Affinity but nil NodeSelector will schedule onto a node"'),
    pytest.param(None, required(term(req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))), {"GPU": "NVIDIA-GRID-K1"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with multiple matchExpressions ANDed that matches the existing node"'),
    pytest.param(None, required(term(req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER"))), {"GPU": "NVIDIA-GRID-K1"}, "node1", UU,
                 id='TestNodeAffinity/"Pod with multiple matchExpressions ANDed that doesn\'t match the existing node"'),
    pytest.param(None, required(term(req("foo", "In", "bar", "value2")), term(req("diffkey", "In", "wrong", "value2"))), {"foo": "bar"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with multiple NodeSelectorTerms ORed in affinity, matches the node\'s labels and will schedule onto the node"'),
    pytest.param({"foo": "bar"}, required(term(req("foo", "Exists"))), {"foo": "bar"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node"'),
    pytest.param({"foo": "bar"}, required(term(req("foo", "Exists"))), {"foo": "barrrrrr"}, "node1", UU,
                 id='TestNodeAffinity/"Pod with an Affinity matches node\'s labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won\'t schedule onto the node"'),
    pytest.param(None, required(term(req("foo", "NotIn", "invalid value: ___@#$%^"))), {"foo": "bar"}, "node1", UU,
                 id='TestNodeAffinity/"Pod with an invalid value in Affinity term won\'t be scheduled onto the node"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"),))), {}, "node1", OK,
                 id='TestNodeAffinity/"Pod with matchFields using In operator that matches the existing node"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"),))), {}, "node2", UU,
                 id='TestNodeAffinity/"Pod with matchFields using In operator that does not match the existing node"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"), req(NAME, "In", "node2"))), term(req("foo", "In", "bar"))), {"foo": "bar"}, "node2", OK,
                 id='TestNodeAffinity/"Pod with two terms: matchFields does not match, but matchExpressions matches"'),
    pytest.param(None, required(term(req("foo", "In", "bar"), fields=(req(NAME, "In", "node1"),))), {"foo": "bar"}, "node2", UU,
                 id='TestNodeAffinity/"Pod with one term: matchFields does not match, but matchExpressions matches"'),
    pytest.param(None, required(term(req("foo", "In", "bar"), fields=(req(NAME, "In", "node1"),))), {"foo": "bar"}, "node1", OK,
                 id='TestNodeAffinity/"Pod with one term: both matchFields and matchExpressions match"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"),)), term(req("foo", "In", "not-match-to-bar"))), {"foo": "bar"}, "node2", UU,
                 id='TestNodeAffinity/"Pod with two terms: both matchFields and matchExpressions do not match"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"),)), term(fields=(req(NAME, "In", "node2"),))), {}, "node2", OK,
                 id='TestNodeAffinity/"Pod with two terms of node.Name affinity"'),
    pytest.param(None, required(term(fields=(req(NAME, "In", "node1"), req(NAME, "In", "node2")))), {"foo": "bar"}, "node2", UU,
                 id='TestNodeAffinity/"Pod with two conflicting mach field requirements"'),
    pytest.param({"foo": "bar"}, None, {"foo": "bar", "baz": "blah"}, "node1", OK,
                 id='TestNodeAffinity/"Matches node selector correctly even if PreFilter is not called"'),
    pytest.param(None, required(term(req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))), {"GPU": "NVIDIA-GRID-K1"}, "node1", OK,
                 id='TestNodeAffinity/"Matches node affinity correctly even if PreFilter is not called"'),
]


@pytest.mark.parametrize(("node_selector", "affinity", "labels", "node_name", "want"), CASES)
def test_filter(node_selector, affinity, labels, node_name, want):
    sched, fw = harness([node(node_name, labels)])
    info = pod_info(sched, pod(node_selector=node_selector, affinity=affinity))
    plugin = fw.plugins["NodeAffinity"]
    r = rows(sched)
    assert plugin.filter(CycleState(), info, r).tolist() == [want]
    if want == UU:
        assert plugin.reasons(CycleState(), info, int(r[0])) == (ERR_REASON_POD,)
        assert plugin.reason_counts(CycleState(), info, r) == {ERR_REASON_POD: 1}


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = Affinity(node_preferred=(PreferredSchedulingTerm(2, term(req("foo", "In", "bar"))),))
AFFINITY2 = Affinity(
    node_preferred=(
        PreferredSchedulingTerm(2, term(req("foo", "In", "bar"))),
        PreferredSchedulingTerm(4, term(req("key", "In", "value"))),
        PreferredSchedulingTerm(5, term(req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1"))),
    )
)


@pytest.mark.parametrize(
    ("affinity", "nodes", "want_raw", "want"),
    [
        pytest.param(None, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None, [0, 0, 0],
                     id='TestNodeAffinityPriority/"all nodes are same priority as NodeAffinity is nil"'),
        pytest.param(AFFINITY1, [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], [0, 0, 0], [0, 0, 0],
                     id='TestNodeAffinityPriority/"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes\' priority is zero"'),
        pytest.param(AFFINITY1, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [2, 0, 0], [100, 0, 0],
                     id='TestNodeAffinityPriority/"only node1 matches the preferred scheduling requirements of pod"'),
        pytest.param(AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [2, 11, 4], [18, 100, 36],
                     id='TestNodeAffinityPriority/"all nodes matches the preferred scheduling requirements of pod but with different priorities "'),
        pytest.param(AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [2, 11, 4], [18, 100, 36],
                     id='TestNodeAffinityPriority/"calculate the priorities correctly even if PreScore is not called"'),
    ],
)
def test_score(affinity, nodes, want_raw, want):
    sched, fw = harness([node(name, labels) for name, labels in nodes])
    info = pod_info(sched, pod(affinity=affinity))
    plugin = fw.plugins["NodeAffinity"]
    raw = plugin.score(CycleState(), info, rows(sched))
    if want_raw is None:
        assert raw is None  # Skip: the plugin adds nothing (upstream: 0 for every node)
        return
    assert raw.tolist() == want_raw
    assert plugin.normalize(raw).tolist() == want


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["NodeAffinity"].events_to_register() == (ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL)
