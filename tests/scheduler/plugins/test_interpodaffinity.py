"""InterPodAffinity (``plugins/interpodaffinity``): PreFilter (Skip when neither the pod nor an
assigned pod has required terms), Filter codes and upstream's reasons per node row (incoming
affinity → UnschedulableAndUnresolvable, incoming or existing anti-affinity → Unschedulable),
preferred-term and symmetry scoring with min-max normalisation, and the events it registers.

Ported: ``TestRequiredAffinitySingleNode`` and ``TestRequiredAffinityMultipleNodes``
(filtering_test.go), ``TestPreferredAffinity`` and
``TestPreferredAffinityWithHardPodAffinitySymmetricWeight`` (scoring_test.go), every case gangsim
models. Left out: cases whose verdict rests on namespace labels (``namespaceSelector`` on
``team: team1``): gangsim has no Namespace objects, so a namespace selector sees only
``kubernetes.io/metadata.name`` (ported where neither the list nor the selector matches either way);
the invalid-label-value cases (a PreFilter/PreScore parse error upstream: gangsim's loader does not
validate selector values, and the plugin has no error path); ``IgnorePreferredTermsOfExistingPods``
(no such arg in gangsim profiles); the PreFilter-extension AddPod/RemovePod and queueing-hint tests.
Upstream's pods default to namespace ""; these use ``default`` throughout, which is the same thing.
"""

import pytest

from gangsim.api.config import Profile, SchedulerConfig
from gangsim.api.objects import Affinity, PodAffinityTerm, WeightedPodAffinityTerm
from gangsim.api.selectors import LabelSelector, Requirement
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.interface import UNBOUNDED, ClusterEvent, Code
from gangsim.scheduler.plugins.interpodaffinity import ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY
from scheduler.harness import harness, node, pod, pod_info, rows

OK, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
AFF, ANTI, EXISTING = ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY
SKIP = "skip"  # PreFilter says Skip


def test_reasons_are_upstreams():
    assert AFF == "node(s) didn't match pod affinity rules"
    assert ANTI == "node(s) didn't match pod anti-affinity rules"
    assert EXISTING == "node(s) didn't satisfy existing pods anti-affinity rules"


def r(key, op, *values):
    return Requirement(key, op, tuple(values))


def t(*exprs, topology="", namespaces=(), namespace_selector=None):
    """A PodAffinityTerm whose labelSelector ANDs ``exprs``."""
    return PodAffinityTerm(LabelSelector((), tuple(exprs)), tuple(namespaces), namespace_selector, topology)


def aff(*terms, anti=()):
    """Required pod affinity ``terms`` and anti-affinity ``anti``."""
    return Affinity(pod_affinity_required=tuple(terms), pod_anti_affinity_required=tuple(anti))


def filter_codes(nodes, existing, incoming):
    sched, fw = harness(nodes, existing)
    info = pod_info(sched, incoming)
    plugin = fw.plugins["InterPodAffinity"]
    state = CycleState()
    status = plugin.pre_filter(state, info)
    rs = rows(sched)
    codes = plugin.filter(state, info, rs).tolist()
    reasons = [plugin.reasons(state, info, int(row)) for row in rs]
    return (SKIP if status is not None and status.code == Code.SKIP else None), codes, reasons


# ---- TestRequiredAffinitySingleNode ---------------------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
EXISTING_POD = (pod("existing", labels=POD_LABEL), "node1")


def existing(labels, affinity=None, namespace="default", name="existing"):
    return (pod(name, namespace, labels=labels, affinity=affinity), "node1")


SINGLE = [
    pytest.param(pod(), [], SKIP, OK, None,
                 id='TestRequiredAffinitySingleNode/"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "In", "securityscan", "value2"), topology="region"))), [EXISTING_POD], None, OK, None,
                 id='TestRequiredAffinitySingleNode/"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "NotIn", "securityscan3", "value3"), topology="region"))), [EXISTING_POD], None, OK, None,
                 id='TestRequiredAffinitySingleNode/"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "In", "securityscan", "value2"), namespaces=("DiffNameSpace",)))),
                 [existing(POD_LABEL, namespace="ns")], None, UU, AFF,
                 id='TestRequiredAffinitySingleNode/"Does not satisfy the PodAffinity with labelSelector because of diff Namespace"'),
    pytest.param(pod(labels=POD_LABEL, affinity=aff(t(r("service", "In", "antivirusscan", "value2")))), [EXISTING_POD], None, UU, AFF,
                 id='TestRequiredAffinitySingleNode/"Doesn\'t satisfy the PodAffinity because of unmatching labelSelector with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "Exists"), r("wrongkey", "DoesNotExist"), topology="region"),
                                                     t(r("service", "In", "securityscan"), r("service", "NotIn", "WrongValue"), topology="region"))),
                 [EXISTING_POD], None, OK, None,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution "'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "Exists"), r("wrongkey", "DoesNotExist"), topology="region"),
                                                     t(r("service", "In", "securityscan2"), r("service", "NotIn", "WrongValue"), topology="region"))),
                 [EXISTING_POD], None, UU, AFF,
                 id='TestRequiredAffinitySingleNode/"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don\'t match."'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "In", "securityscan", "value2"), topology="region"),
                                                     anti=(t(r("service", "In", "antivirusscan", "value2"), topology="node"),))),
                 [EXISTING_POD], None, OK, None,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAffinity and PodAntiAffinity with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "In", "securityscan", "value2"), topology="region"),
                                                     anti=(t(r("service", "In", "antivirusscan", "value2"), topology="node"),))),
                 [existing(POD_LABEL, aff(anti=(t(r("service", "In", "antivirusscan", "value2"), topology="node"),)))], None, OK, None,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(t(r("service", "In", "securityscan", "value2"), topology="region"),
                                                     anti=(t(r("service", "In", "securityscan", "value2"), topology="zone"),))),
                 [EXISTING_POD], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAffinity but doesn\'t satisfy the PodAntiAffinity with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL, affinity=aff(t(r("service", "In", "securityscan", "value2"), topology="region"),
                                                    anti=(t(r("service", "In", "antivirusscan", "value2"), topology="node"),))),
                 [existing(POD_LABEL, aff(anti=(t(r("service", "In", "securityscan", "value2"), topology="zone"),)))], None, U, EXISTING,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAffinity and PodAntiAffinity but doesn\'t satisfy PodAntiAffinity symmetry with the existing pod"'),
    # the existing pod runs on node2, which is not in the snapshot: only the pod itself could match
    pytest.param(pod(labels=POD_LABEL, affinity=aff(t(r("service", "NotIn", "securityscan", "value2"), topology="region"))), [], None, UU, AFF,
                 id='TestRequiredAffinitySingleNode/"pod matches its own Label in PodAffinity and that matches the existing pod Labels"'),
    pytest.param(pod(labels=POD_LABEL), [existing(POD_LABEL, aff(anti=(t(r("service", "In", "securityscan", "value2"), topology="zone"),)))], None, U, EXISTING,
                 id='TestRequiredAffinitySingleNode/"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn\'t satisfy PodAntiAffinity symmetry with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL), [existing(POD_LABEL, aff(anti=(t(r("service", "NotIn", "securityscan", "value2"), topology="zone"),)))], SKIP, OK, None,
                 id='TestRequiredAffinitySingleNode/"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod"'),
    pytest.param(pod(labels=POD_LABEL, affinity=aff(anti=(t(r("service", "Exists"), topology="region"), t(r("security", "Exists"), topology="region")))),
                 [existing(POD_LABEL2, aff(anti=(t(r("security", "Exists"), topology="zone"),)))], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"satisfies the PodAntiAffinity with existing pod but doesn\'t satisfy PodAntiAffinity symmetry with incoming pod"'),
    pytest.param(pod(labels=POD_LABEL, affinity=aff(anti=(t(r("service", "Exists"), topology="zone"), t(r("security", "Exists"), topology="zone")))),
                 [existing(POD_LABEL2, aff(anti=(t(r("security", "Exists"), topology="zone"),)))], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms"'),
    pytest.param(pod(labels=POD_LABEL2, affinity=aff(anti=(t(r("security", "Exists"), topology="zone"),))),
                 [existing(POD_LABEL, aff(anti=(t(r("service", "Exists"), topology="zone"), t(r("security", "Exists"), topology="zone"))))], None, U, EXISTING,
                 id='TestRequiredAffinitySingleNode/"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms"'),
    pytest.param(pod(labels={"abc": "", "xyz": ""}, affinity=aff(anti=(t(r("abc", "Exists"), topology="zone"), t(r("def", "Exists"), topology="zone")))),
                 [existing({"def": "", "xyz": ""}, aff(anti=(t(r("abc", "Exists"), topology="zone"), t(r("def", "Exists"), topology="zone"))))], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms"'),
    pytest.param(pod(labels={"def": "", "xyz": ""}, affinity=aff(anti=(t(r("abc", "Exists"), topology="zone"), t(r("def", "Exists"), topology="zone")))),
                 [existing({"abc": "", "xyz": ""}, aff(anti=(t(r("abc", "Exists"), topology="zone"), t(r("def", "Exists"), topology="zone"))))], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms"'),
    pytest.param(pod("p", "subteam1.team1", labels=POD_LABEL2,
                     affinity=aff(anti=(t(r("service", "In", "securityscan", "value2"), topology="zone", namespace_selector=LabelSelector()),))),
                 [existing(POD_LABEL, namespace="subteam2.team1")], None, U, ANTI,
                 id='TestRequiredAffinitySingleNode/"anti-affinity with matching all NamespaceSelector"'),
]


@pytest.mark.parametrize(("incoming", "existing_pods", "pre_filter", "want", "reason"), SINGLE)
def test_required_affinity_single_node(incoming, existing_pods, pre_filter, want, reason):
    got_pre_filter, codes, reasons = filter_codes([NODE1], existing_pods, incoming)
    assert got_pre_filter == pre_filter
    assert codes == [want]
    assert reasons == [(reason,) if reason else ()]


# ---- TestRequiredAffinityMultipleNodes -------------------------------------------------------------
CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}
AB_DIFFERENT_ZONES = [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})]


@pytest.mark.parametrize(
    ("incoming", "existing_pods", "nodes", "pre_filter", "want"),
    [
        pytest.param(pod(affinity=aff(t(r("foo", "In", "bar"), topology="region"))), [(pod("p1", labels={"foo": "bar"}), "node1")],
                     [node("node1", CHINA), node("node2", CHINA_AZ1), node("node3", INDIA)], None, [(OK, None), (OK, None), (UU, AFF)],
                     id='TestRequiredAffinityMultipleNodes/"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules"'),
        pytest.param(pod(labels={"foo": "bar", "service": "securityscan"},
                         affinity=aff(t(r("foo", "In", "bar"), topology="zone"), t(r("service", "In", "securityscan"), topology="zone"))),
                     [(pod("p1", labels={"foo": "bar"}), "nodeA")],
                     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})], None, [(OK, None), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there\'s no existing pod that matches the rule anywhere."'),
        pytest.param(pod(labels={"foo": "bar", "service": "securityscan"},
                         affinity=aff(t(r("foo", "In", "bar"), topology="zone"), t(r("service", "In", "securityscan"), topology="zone"))),
                     [(pod("p1", labels={"foo": "bar"}), "nodeA")],
                     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})], None, [(UU, AFF), (UU, AFF)],
                     id='TestRequiredAffinityMultipleNodes/"The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys"'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "In", "abc"), topology="region"),))), [(pod("e", labels={"foo": "abc"}), "nodeA")],
                     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})], None, [(U, ANTI), (U, ANTI)],
                     id='TestRequiredAffinityMultipleNodes/"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB."'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "In", "abc"), topology="region"), t(r("service", "In", "securityscan"), topology="zone")))),
                     [(pod("e", labels={"foo": "abc", "service": "securityscan"}), "nodeA")],
                     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})], None,
                     [(U, ANTI), (U, ANTI)],
                     id='TestRequiredAffinityMultipleNodes/"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod."'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "In", "abc"), topology="region"),))), [(pod("e", labels={"foo": "abc"}), "nodeA")],
                     [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)], None, [(U, ANTI), (U, ANTI), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC"'),
        pytest.param(pod("p", "NS1", labels={"foo": "123"}, affinity=aff(anti=(t(r("foo", "In", "bar"), topology="region"),))),
                     [(pod("e1", "NS1", labels={"foo": "bar"}), "nodeA"), (pod("e2", "NS2", affinity=aff(anti=(t(r("foo", "In", "123"), topology="region"),))), "nodeC")],
                     [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)], None, [(U, ANTI), (U, ANTI), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)"'),
        pytest.param(pod(labels={"foo": ""}), [(pod("e", affinity=aff(anti=(t(r("foo", "Exists"), topology="invalid-node-label"),))), "nodeA")],
                     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})], SKIP,
                     [(OK, None), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test existing pod\'s anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked"'),
        pytest.param(pod(node_name="nodeA", affinity=aff(anti=(t(r("foo", "Exists"), topology="invalid-node-label"),))), [(pod("e", labels={"foo": ""}), "nodeA")],
                     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})], None,
                     [(OK, None), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s anti-affinity: even if labelSelector matches, we still check if topologyKey matches"'),
        pytest.param(pod(labels={"foo": "", "bar": ""}),
                     [(pod("e1", affinity=aff(anti=(t(r("foo", "Exists"), topology="zone"),))), "nodeA"), (pod("e2", affinity=aff(anti=(t(r("bar", "Exists"), topology="region"),))), "nodeA")],
                     AB_DIFFERENT_ZONES, None, [(U, EXISTING), (U, EXISTING)],
                     id='TestRequiredAffinityMultipleNodes/"Test existing pod\'s anti-affinity: incoming pod wouldn\'t considered as a fit as it violates each existingPod\'s terms on all nodes"'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "Exists"), topology="zone"), t(r("bar", "Exists"), topology="region")))),
                     [(pod("e1", labels={"foo": ""}), "nodeA"), (pod("e2", labels={"bar": ""}), "nodeB")], AB_DIFFERENT_ZONES, None, [(U, ANTI), (U, ANTI)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s anti-affinity: incoming pod wouldn\'t considered as a fit as it at least violates one anti-affinity rule of existingPod"'),
        pytest.param(pod(labels={"foo": "", "bar": ""}),
                     [(pod("e", affinity=aff(anti=(t(r("foo", "Exists"), topology="invalid-node-label"), t(r("bar", "Exists"), topology="zone")))), "nodeA")],
                     AB_DIFFERENT_ZONES, None, [(U, EXISTING), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test existing pod\'s anti-affinity: only when labelSelector and topologyKey both match, it\'s counted as a single term match - case when one term has invalid topologyKey"'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "Exists"), topology="invalid-node-label"), t(r("bar", "Exists"), topology="zone")))),
                     [(pod("podA", labels={"foo": "", "bar": ""}), "nodeA")], AB_DIFFERENT_ZONES, None, [(U, ANTI), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s anti-affinity: only when labelSelector and topologyKey both match, it\'s counted as a single term match - case when one term has invalid topologyKey"'),
        pytest.param(pod(labels={"foo": "", "bar": ""}),
                     [(pod("e", affinity=aff(anti=(t(r("foo", "Exists"), topology="region"), t(r("bar", "Exists"), topology="zone")))), "nodeA")],
                     AB_DIFFERENT_ZONES, None, [(U, EXISTING), (U, EXISTING)],
                     id='TestRequiredAffinityMultipleNodes/"Test existing pod\'s anti-affinity: only when labelSelector and topologyKey both match, it\'s counted as a single term match - case when all terms have valid topologyKey"'),
        pytest.param(pod(affinity=aff(anti=(t(r("foo", "Exists"), topology="region"), t(r("bar", "Exists"), topology="zone")))),
                     [(pod("e", labels={"foo": "", "bar": ""}), "nodeA")], AB_DIFFERENT_ZONES, None, [(U, ANTI), (U, ANTI)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s anti-affinity: only when labelSelector and topologyKey both match, it\'s counted as a single term match - case when all terms have valid topologyKey"'),
        pytest.param(pod(labels={"foo": "", "bar": ""}),
                     [(pod("e1", affinity=aff(anti=(t(r("foo", "Exists"), topology="zone"), t(r("labelA", "Exists"), topology="zone")))), "nodeA"),
                      (pod("e2", affinity=aff(anti=(t(r("bar", "Exists"), topology="zone"), t(r("labelB", "Exists"), topology="zone")))), "nodeB")],
                     [*AB_DIFFERENT_ZONES, node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})], None, [(U, EXISTING), (U, EXISTING), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test existing pod\'s anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC"'),
        pytest.param(pod(affinity=aff(t(r("foo", "Exists"), topology="region"), t(r("bar", "Exists"), topology="zone"))),
                     [(pod("pod1", labels={"foo": "", "bar": ""}), "nodeA")],
                     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})], None,
                     [(OK, None), (OK, None)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match"'),
        pytest.param(pod(affinity=aff(t(r("foo", "Exists"), topology="region"), t(r("bar", "Exists"), topology="zone"))),
                     [(pod("pod1", labels={"foo": ""}), "nodeA"), (pod("pod2", labels={"bar": ""}), "nodeB")], AB_DIFFERENT_ZONES, None, [(UU, AFF), (UU, AFF)],
                     id='TestRequiredAffinityMultipleNodes/"Test incoming pod\'s affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod"'),
    ],
)
def test_required_affinity_multiple_nodes(incoming, existing_pods, nodes, pre_filter, want):
    got_pre_filter, codes, reasons = filter_codes(nodes, existing_pods, incoming)
    assert got_pre_filter == pre_filter
    assert list(zip(codes, [rs[0] if rs else None for rs in reasons])) == want


def test_capacity_is_unknown_when_placements_interact():
    """gangsim's ``CapacityPlugin``: unbounded when nothing is checked, None (unknown) otherwise."""
    sched, fw = harness([NODE1], [EXISTING_POD])
    plugin = fw.plugins["InterPodAffinity"]
    assert plugin.capacity(pod_info(sched, pod()), rows(sched)) is UNBOUNDED
    with_terms = pod(affinity=aff(anti=(t(r("service", "Exists"), topology="zone"),)))
    assert plugin.capacity(pod_info(sched, with_terms), rows(sched)) is None


# ---- TestPreferredAffinity ---------------------------------------------------------------------
S1, S2 = {"security": "S1"}, {"security": "S2"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}


def w(weight, *exprs, topology):
    return WeightedPodAffinityTerm(weight, t(*exprs, topology=topology))


STAY_WITH_S1_IN_REGION = Affinity(pod_affinity_preferred=(w(5, r("security", "In", "S1"), topology="region"),))
STAY_WITH_S2_IN_REGION = Affinity(pod_affinity_preferred=(w(6, r("security", "In", "S2"), topology="region"),))
AFFINITY3 = Affinity(pod_affinity_preferred=(w(8, r("security", "NotIn", "S1"), r("security", "In", "S2"), topology="region"),
                                             w(2, r("security", "Exists"), r("wrongkey", "DoesNotExist"), topology="region")))
HARD_AFFINITY = aff(t(r("security", "In", "S1", "value2"), topology="region"), t(r("security", "Exists"), r("wrongkey", "DoesNotExist"), topology="region"))
AWAY_FROM_S1_IN_AZ = Affinity(pod_anti_affinity_preferred=(w(5, r("security", "In", "S1"), topology="az"),))
AWAY_FROM_S2_IN_AZ = Affinity(pod_anti_affinity_preferred=(w(5, r("security", "In", "S2"), topology="az"),))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = Affinity(pod_affinity_preferred=(w(8, r("security", "In", "S1"), topology="region"),),
                                                     pod_anti_affinity_preferred=(w(5, r("security", "In", "S2"), topology="az"),))


def e(node_name, labels=None, affinity=None):
    """An existing pod (``{Spec: {NodeName, Affinity}, ObjectMeta: {Labels}}``)."""
    return node_name, labels, affinity


def scores(nodes, existing_pods, incoming, profile=None):
    config = SchedulerConfig(profiles=(profile,)) if profile is not None else None
    sched, fw = harness([node(n, labels) for n, labels in nodes],
                        [(pod(f"e{i}", labels=labels, affinity=a), n) for i, (n, labels, a) in enumerate(existing_pods)], config=config)
    plugin = fw.plugins["InterPodAffinity"]
    raw = plugin.score(CycleState(), pod_info(sched, incoming), rows(sched))
    return None if raw is None else plugin.normalize(raw).tolist()


THREE = [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]


@pytest.mark.parametrize(
    ("incoming", "existing_pods", "nodes", "want"),
    [
        pytest.param(pod(labels=S1), [], THREE, None, id='TestPreferredAffinity/"all nodes are same priority as Affinity is nil"'),
        pytest.param(pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION), [e("node1", S1), e("node2", S2), e("node3", S1)], THREE, [100, 0, 0],
                     id='TestPreferredAffinity/"Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn\'t match either pods in nodes or in topology key"'),
        pytest.param(pod(affinity=STAY_WITH_S1_IN_REGION), [e("node1", S1)], [("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)], [100, 100, 0],
                     id='TestPreferredAffinity/"All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score"'),
        pytest.param(pod(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
                     [e("node1", S2), e("node1", S2), e("node2", S2), e("node3", S2), e("node4", S2), e("node5", S2)],
                     [("node1", CHINA), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA), ("node5", INDIA)], [100, 0, 100, 100, 0],
                     id='TestPreferredAffinity/"Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score"'),
        pytest.param(pod(labels=S1, affinity=AFFINITY3), [e("node1", S1), e("node2", S2), e("node3", S1)], THREE, [20, 100, 0],
                     id='TestPreferredAffinity/"Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures "'),
        pytest.param(pod(labels=S2), [e("node1", S1, STAY_WITH_S1_IN_REGION), e("node2", S2, STAY_WITH_S2_IN_REGION)], THREE, [0, 100, 0],
                     id='TestPreferredAffinity/"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry"'),
        pytest.param(pod(labels=S1), [e("node1", S1, HARD_AFFINITY), e("node2", S2, HARD_AFFINITY)], THREE, [100, 100, 0],
                     id='TestPreferredAffinity/"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry"'),
        pytest.param(pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [e("node1", S1), e("node2", S2)], [("node1", AZ1), ("node2", CHINA)], [0, 100],
                     id='TestPreferredAffinity/"Anti Affinity: pod that does not match existing pods in node will get high score "'),
        pytest.param(pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [e("node1", S1), e("node2", S1)], [("node1", AZ1), ("node2", CHINA)], [0, 100],
                     id='TestPreferredAffinity/"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others "'),
        pytest.param(pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [e("node1", S1), e("node1", S1), e("node2", S2)], [("node1", AZ1), ("node2", INDIA)], [0, 100],
                     id='TestPreferredAffinity/"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score"'),
        pytest.param(pod(labels=S2), [e("node1", S1, AWAY_FROM_S2_IN_AZ), e("node2", S2, AWAY_FROM_S1_IN_AZ)], [("node1", AZ1), ("node2", AZ2)], [0, 100],
                     id='TestPreferredAffinity/"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score"'),
        pytest.param(pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), [e("node1", S1), e("node2", S1)], [("node1", CHINA), ("node2", AZ1)], [100, 0],
                     id='TestPreferredAffinity/"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity"'),
        pytest.param(pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                     [e("node1", S1), e("node1", S1), e("node2", S1), e("node3", S1), e("node3", S1), e("node4", S1), e("node5", S1)],
                     [("node1", CHINA_AZ1), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA), ("node5", INDIA)], [100, 0, 100, 100, 0],
                     id='TestPreferredAffinity/"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels"'),
        pytest.param(pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                     [e("node1", S1), e("node2", S2), e("node3", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), e("node4", None, AWAY_FROM_S1_IN_AZ)],
                     [("node1", CHINA), ("node2", AZ1), ("node3", INDIA), ("node4", AZ2)], [100, 0, 100, 0],
                     id='TestPreferredAffinity/"Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry"'),
        pytest.param(pod(labels=S1), [e("node1", S1), e("node2", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)], [("node1", CHINA), ("node2", CHINA)], [0, 0],
                     id='TestPreferredAffinity/"Avoid panic when partial nodes in a topology don\'t have pods with affinity"'),
        pytest.param(pod(labels=S2), [e("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), e("node2", S2, STAY_WITH_S2_IN_REGION)],
                     [("node1", CHINA), ("node2", INDIA)], [0, 100],
                     id='TestPreferredAffinity/"Do not ignore preferred terms of existing pods"'),
        pytest.param(pod(labels=S2), [], [], None, id='TestPreferredAffinity/"No nodes to score"'),
    ],
)
def test_preferred_affinity(incoming, existing_pods, nodes, want):
    assert scores(nodes, existing_pods, incoming) == want


SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = aff(t(r("service", "In", "S1"), namespaces=("default", "subteam2.team2"), topology="region",
                          namespace_selector=LabelSelector((), (r("team", "In", "team1"),))))


@pytest.mark.parametrize(
    ("namespace", "weight", "want"),
    [
        pytest.param("default", 1, [100, 100, 0], id='TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"with default weight"'),
        pytest.param("default", 0, None, id='TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"with zero weight"'),
        pytest.param("subteam1.team2", 1, None, id='TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"with no matching namespace"'),
        pytest.param("subteam2.team2", 1, [100, 100, 0], id='TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"with matching Namespaces"'),
    ],
)
def test_hard_pod_affinity_symmetric_weight(namespace, weight, want):
    existing_pods = [e("node1", None, HARD_POD_AFFINITY), e("node2", None, HARD_POD_AFFINITY)]
    got = scores(THREE, existing_pods, pod("p", namespace, labels=SERVICE_S1), Profile(hard_pod_affinity_weight=weight))
    assert got == want


def test_events_to_register():
    _, fw = harness([])
    assert fw.plugins["InterPodAffinity"].events_to_register() == (
        ClusterEvent.NODE_ADD,
        ClusterEvent.NODE_LABEL,
        ClusterEvent.ASSIGNED_POD_ADD,
        ClusterEvent.ASSIGNED_POD_DELETE,
    )
