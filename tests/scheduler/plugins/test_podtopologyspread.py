"""PodTopologySpread (``plugins/podtopologyspread``): PreFilter counts per domain, Filter codes
and upstream's reasons per node, Score and NormalizeScore, and Skip for pods without
constraints (what keeps placements of traces without constraints unchanged).

Ported from kubernetes/kubernetes ``pkg/scheduler/framework/plugins/podtopologyspread``:
``TestPreFilterState`` (filtering_test.go; the counts, as ``TpValueToMatchNum``),
``TestSingleConstraint`` and ``TestMultipleConstraints`` (filtering_test.go; every case, codes per
node), ``TestPodTopologySpreadScore`` (scoring_test.go; the hostname and zone cases with
candidate and failed nodes). Left out: cases with ``defaultConstraints`` / system defaulting
(they need Services, which gangsim does not model), the PreFilterExtensions AddPod/RemovePod
tests (gangsim recomputes the PreFilter state from the snapshot instead; the preemption scenario
at the end of this file pins the outcome), and queueing-hint tests. Upstream's pods live in
namespace ""; these use ``default``, which is the same thing.
"""

from dataclasses import replace

import pytest

from gangsim.api.objects import Affinity, Pod, Taint, TopologySpreadConstraint
from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import ClusterEvent, Code
from gangsim.scheduler.plugins.podtopologyspread import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH
from scheduler.harness import harness, node, pod, pod_info, rows

OK, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
HOST = "kubernetes.io/hostname"
FOO = LabelSelector((), (Requirement("foo", "Exists"),))
BAR = LabelSelector((), (Requirement("bar", "Exists"),))


def test_reasons_and_weight_are_upstreams():
    assert ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == "node(s) didn't match pod topology spread constraints (missing required label)"
    _, fw = harness()
    assert dict((p.NAME, w) for p, w in fw.scorers)["PodTopologySpread"] == 2  # default_plugins.go


def tsc(skew, key, action="DoNotSchedule", selector=FOO, **kw):
    return TopologySpreadConstraint(skew, key, action, selector, **kw)


def spread(p: Pod, *constraints) -> Pod:
    return replace(p, spec=replace(p.spec, topology_spread=tuple(constraints)))


def zn(name, zone=None, *, key="zone", taints=()):
    """st.MakeNode().Name(name).Label(zone).Label("node", name)."""
    labels = {"node": name}
    if zone is not None:
        labels[key] = zone
    return node(name, labels, taints=taints)


def on(name, node_name, labels=None, namespace="default"):
    return (pod(name, namespace, labels={"foo": ""} if labels is None else labels), node_name)


FOUR = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
P_2103 = [on("p-a1", "node-a"), on("p-a2", "node-a"), on("p-b1", "node-b"), on("p-y1", "node-y"), on("p-y2", "node-y"), on("p-y3", "node-y")]


def run_filter(nodes, existing, incoming, terminating=()):
    sched, fw = harness(nodes, existing)
    for q in sched.snapshot.assigned.values():
        if q.name in terminating:
            q.terminating = True
    info = pod_info(sched, incoming)
    plugin = fw.plugins["PodTopologySpread"]
    state = CycleState()
    status = plugin.pre_filter(state, info)
    rs = rows(sched)
    codes = plugin.filter(state, info, rs).tolist()
    reasons = [plugin.reasons(state, info, int(r)) for r in rs]
    return status, state, codes, reasons


# ---- TestPreFilterState ----------------------------------------------------------------------------
PREFILTER = [
    pytest.param(spread(pod(labels={"foo": ""}), tsc(5, "zone", selector=LabelSelector((("foo", "bar"),)))), FOUR, [], [{"zone1": 0, "zone2": 0}],
                 id='TestPreFilterState/"clean cluster with one spreadConstraint"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR, [on("p-a1", "node-a"), on("p-a2", "node-a"), on("p-b1", "node-b"), on("p-y1", "node-y"), on("p-y2", "node-y")],
                 [{"zone1": 3, "zone2": 2}], id='TestPreFilterState/"normal case with one spreadConstraint"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone", selector=None)), FOUR, [on("p-a1", "node-a"), on("p-y1", "node-y")],
                 [{"zone1": 0, "zone2": 0}], id='TestPreFilterState/"normal case with null label selector"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR + [zn("node-o", "zone3"), zn("node-p", "zone3")],
                 [on("p-a1", "node-a"), on("p-a2", "node-a"), on("p-b1", "node-b"), on("p-y1", "node-y"), on("p-y2", "node-y")],
                 [{"zone1": 3, "zone2": 2, "zone3": 0}], id='TestPreFilterState/"normal case with one spreadConstraint, on a 3-zone cluster"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR,
                 [on("p-a1", "node-a"), on("p-a2", "node-a", namespace="ns1"), on("p-b1", "node-b"), on("p-y1", "node-y", namespace="ns2"), on("p-y2", "node-y")],
                 [{"zone1": 2, "zone2": 1}], id='TestPreFilterState/"namespace mismatch doesn\'t count"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone"), tsc(1, "node")), FOUR, P_2103[:3] + [on(f"p-y{i}", "node-y") for i in range(1, 5)],
                 [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}], id='TestPreFilterState/"normal case with two spreadConstraints"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone", "ScheduleAnyway"), tsc(1, "zone"), tsc(1, "node", "ScheduleAnyway"), tsc(1, "node")),
                 [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")], P_2103[:3] + [on(f"p-y{i}", "node-y") for i in range(1, 5)],
                 [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}], id='TestPreFilterState/"soft spreadConstraints should be bypassed"'),
    pytest.param(spread(pod(labels={"foo": "", "bar": ""}), tsc(1, "zone"), tsc(1, "node", selector=BAR)), [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
                 [on("p-a", "node-a"), on("p-b", "node-b", {"bar": ""})], [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
                 id='TestPreFilterState/"different labelSelectors - simple version"'),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"), PREFILTER)
def test_pre_filter_state(incoming, nodes, existing, want):
    status, state, _, _ = run_filter(nodes, existing, incoming)
    assert status is None
    assert state.read("PreFilterPodTopologySpread").counts == want


def test_pre_filter_skips_a_pod_without_hard_constraints():
    status, _, codes, _ = run_filter(FOUR, P_2103, spread(pod(labels={"foo": ""}), tsc(1, "zone", "ScheduleAnyway")))
    assert status is not None and status.code is Code.SKIP
    status, _, _, _ = run_filter(FOUR, P_2103, pod(labels={"foo": ""}))
    assert status is not None and status.code is Code.SKIP


# ---- TestSingleConstraint / TestMultipleConstraints ------------------------------------------------
FILTER = [
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR, [], (), [OK, OK, OK, OK], id='TestSingleConstraint/"no existing pods"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone", selector=BAR)), FOUR, [], (), [OK, OK, OK, OK],
                 id='TestSingleConstraint/"no existing pods, incoming pod doesn\'t match itself"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR,
                 [on("p-a1", "node-a", namespace="ns1"), on("p-b1", "node-a", namespace="ns2"), on("p-x1", "node-x"), on("p-y1", "node-y")], (), [OK, OK, U, U],
                 id='TestSingleConstraint/"existing pods in a different namespace do not count"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), FOUR, P_2103, (), [OK, OK, OK, OK], id='TestSingleConstraint/"pods spread across zones as 3/3, all nodes fit"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone")), [zn("node-a", "zone1"), zn("node-b", "zone1", key="zon"), zn("node-x", "zone2"), zn("node-y", "zone2")],
                 [on("p-a1", "node-a"), on("p-b1", "node-b"), on("p-x1", "node-x"), on("p-y1", "node-y")], (), [OK, UU, U, U],
                 id="TestSingleConstraint/\"pods spread across zones as 1/2 due to absence of label 'zone' on node-b\""),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "rack")), [zn("node-a", "zone1"), zn("node-x", "zone2")], [], (), [UU, UU],
                 id="TestSingleConstraint/\"pod cannot be scheduled as all nodes don't have label 'rack'\""),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "node")), FOUR, P_2103, (), [U, U, OK, U], id='TestSingleConstraint/"pods spread across nodes as 2/1/0/3, only node-x fits"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(2, "node")), FOUR, P_2103, (), [U, OK, OK, U],
                 id='TestSingleConstraint/"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"'),
    pytest.param(spread(pod(labels={"bar": ""}), tsc(1, "node")), FOUR, P_2103, (), [U, OK, OK, U],
                 id='TestSingleConstraint/"pods spread across nodes as 2/1/0/3, but pod doesn\'t match itself"'),
    pytest.param(spread(pod(labels={"foo": ""}, affinity=Affinity(node_required=(NodeSelectorTerm((Requirement("node", "In", ("node-a", "node-y")),)),))), tsc(1, "node")),
                 FOUR, P_2103, (), [OK, OK, OK, U], id='TestSingleConstraint/"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "node")), [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
                 [on("p-a", "node-a"), on("p-b", "node-b")], ("p-a",), [OK, U], id='TestSingleConstraint/"terminating Pods should be excluded"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone"), tsc(1, "node")), FOUR, P_2103, (), [U, U, OK, U],
                 id='TestMultipleConstraints/"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"'),
    pytest.param(spread(pod(labels={"foo": ""}), tsc(1, "zone"), tsc(1, "node")), FOUR, P_2103 + [on("p-y4", "node-y")], (), [U, U, U, U],
                 id='TestMultipleConstraints/"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"'),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "terminating", "want"), FILTER)
def test_filter(incoming, nodes, existing, terminating, want):
    _, _, codes, reasons = run_filter(nodes, existing, incoming, terminating)
    assert codes == want
    expected = {OK: (), U: (ERR_REASON_CONSTRAINTS_NOT_MATCH,), UU: (ERR_REASON_NODE_LABEL_NOT_MATCH,)}
    assert reasons == [expected[c] for c in want]


def test_min_domains_treats_the_global_minimum_as_zero():
    """filtering.go minMatchNum: with fewer domains than minDomains the global minimum is 0, so a
    domain already holding maxSkew matching pods is full (KEP-3022's example)."""
    nodes = [zn("node-a", "zone1"), zn("node-x", "zone2")]
    existing = [on("p-a1", "node-a"), on("p-x1", "node-x")]
    incoming = spread(pod(labels={"foo": ""}), tsc(1, "zone", min_domains=3))
    assert run_filter(nodes, existing, incoming)[2] == [U, U]
    assert run_filter(nodes, existing, spread(pod(labels={"foo": ""}), tsc(1, "zone", min_domains=2)))[2] == [OK, OK]


def test_node_inclusion_policies():
    """common.go matchNodeInclusionPolicies: nodeTaintsPolicy Honor leaves a tainted node's domain
    out of the counts (zone2 below), Ignore (the default) keeps it; nodeAffinityPolicy Ignore
    counts nodes the pod's nodeSelector excludes."""
    taint = (Taint("dedicated", "x", "NoSchedule"),)
    nodes = [zn("node-a", "zone1"), zn("node-x", "zone2", taints=taint)]
    existing = [on("p-a1", "node-a")]
    honor = spread(pod(labels={"foo": ""}), tsc(1, "zone", node_taints_policy="Honor"))
    ignore = spread(pod(labels={"foo": ""}), tsc(1, "zone"))
    # Honor: only zone1 is a domain (min 1), so node-a passes: 1 + 1 - 1 <= 1
    assert run_filter(nodes, existing, honor)[2] == [OK, OK]
    # Ignore: zone2 counts with 0, node-a would make the skew 2
    assert run_filter(nodes, existing, ignore)[2] == [U, OK]
    sel = {"zone": "zone1"}
    only_a = lambda policy: spread(replace(pod(labels={"foo": ""}), spec=replace(pod(labels={"foo": ""}).spec, node_selector=sel)), tsc(1, "zone", node_affinity_policy=policy))  # noqa: E731
    assert run_filter(nodes, existing, only_a("Honor"))[2] == [OK, OK]
    assert run_filter(nodes, existing, only_a("Ignore"))[2] == [U, OK]


def test_match_label_keys_narrow_the_selector_to_the_pods_value():
    """common.go filterTopologySpreadConstraints: matchLabelKeys add ``key = pod's value``."""
    nodes = [zn("node-a", "zone1"), zn("node-x", "zone2")]
    existing = [on("old-1", "node-a", {"foo": "", "rev": "1"}), on("old-2", "node-a", {"foo": "", "rev": "1"})]
    incoming = pod(labels={"foo": "", "rev": "2"})
    assert run_filter(nodes, existing, spread(incoming, tsc(1, "zone")))[2] == [U, OK]
    assert run_filter(nodes, existing, spread(incoming, tsc(1, "zone", match_label_keys=("rev",))))[2] == [OK, OK]


# ---- TestPodTopologySpreadScore ----------------------------------------------------------------------
def hn(name, zone=None):
    labels = {HOST: name}
    if zone:
        labels["zone"] = zone
    return node(name, labels)


def run_score(nodes, failed, existing, incoming):
    sched, fw = harness(nodes + failed, existing)
    info = pod_info(sched, incoming)
    plugin = fw.plugins["PodTopologySpread"]
    state = CycleState()
    assert plugin.pre_score(state, info) is None
    raw = plugin.score(state, info, rows(sched, *[n.name for n in nodes]))
    return plugin.normalize(raw).tolist()


def pods_on(spec):
    """``{"node-a": 2, ...}`` → matching existing pods named p-<node suffix><i>."""
    return [on(f"p-{n[-1]}{i}", n) for n, k in spec.items() for i in range(1, k + 1)]


SCORE = [
    pytest.param([hn("node-a"), hn("node-b")], [], {}, tsc(1, HOST, "ScheduleAnyway"), [100, 100], id='TestPodTopologySpreadScore/"one constraint on node, no existing pods"'),
    pytest.param([hn("node-a")], [hn("node-b")], {"node-a": 2, "node-b": 1}, tsc(1, HOST, "ScheduleAnyway"), [100],
                 id='TestPodTopologySpreadScore/"one constraint on node, only one node is candidate"'),
    pytest.param([hn("node-a"), hn("node-b")], [], {"node-a": 1, "node-b": 1}, tsc(1, HOST, "ScheduleAnyway"), [100, 100],
                 id='TestPodTopologySpreadScore/"one constraint on node, all nodes have the same number of matching pods"'),
    pytest.param([hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], {"node-a": 2, "node-b": 1, "node-d": 3}, tsc(1, HOST, "ScheduleAnyway"), [20, 60, 100, 0],
                 id='TestPodTopologySpreadScore/"one constraint on node, all 4 nodes are candidates"'),
    pytest.param([hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], {"node-a": 2, "node-b": 1, "node-d": 3}, tsc(1, HOST, "ScheduleAnyway", selector=None), [100, 100, 100, 100],
                 id='TestPodTopologySpreadScore/"one constraint on node, null selector"'),
    pytest.param([hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], {"node-a": 2, "node-b": 1, "node-d": 3}, tsc(2, HOST, "ScheduleAnyway"), [33, 66, 100, 16],
                 id='TestPodTopologySpreadScore/"one constraint on node, all 4 nodes are candidates, maxSkew=2"'),
    pytest.param([hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")], [], {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}, tsc(3, HOST, "ScheduleAnyway"), [44, 66, 77, 100],
                 id='TestPodTopologySpreadScore/"one constraint on node, all 4 nodes are candidates, maxSkew=3"'),
    pytest.param([hn("node-a"), hn("node-b"), hn("node-x")], [hn("node-y")], {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}, tsc(1, HOST, "ScheduleAnyway"), [33, 83, 100],
                 id='TestPodTopologySpreadScore/"one constraint on node, 3 out of 4 nodes are candidates"'),
    pytest.param([hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x")], [hn("node-y")], {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3},
                 tsc(1, HOST, "ScheduleAnyway"), [16, 0, 100],
                 id='TestPodTopologySpreadScore/"one constraint on node, 3 out of 4 nodes are candidates, one node doesn\'t match topology key"'),
    pytest.param([hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")], [hn("node-y", "zone2")], {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3},
                 tsc(1, "zone", "ScheduleAnyway"), [75, 75, 100], id='TestPodTopologySpreadScore/"one constraint on zone, 3 out of 4 nodes are candidates"'),
]


@pytest.mark.parametrize(("nodes", "failed", "existing", "constraint", "want"), SCORE)
def test_score(nodes, failed, existing, constraint, want):
    assert run_score(nodes, failed, pods_on(existing), spread(pod(labels={"foo": ""}), constraint)) == want


def test_pre_score_skips_a_pod_without_soft_constraints():
    sched, fw = harness([hn("node-a")])
    plugin = fw.plugins["PodTopologySpread"]
    for incoming in (pod(labels={"foo": ""}), spread(pod(labels={"foo": ""}), tsc(1, "zone"))):
        status = plugin.pre_score(CycleState(), pod_info(sched, incoming))
        assert status is not None and status.code is Code.SKIP


def test_events_to_register():
    _, fw = harness()
    assert set(fw.plugins["PodTopologySpread"].events_to_register()) == {
        ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL}
