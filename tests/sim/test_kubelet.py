"""The kubelets' own node accounting (``gangsim.sim.kubelet.Kubelets``): admission of a pod against
what the node's holders already take (one pod slot included), occupy/release bookkeeping, the
pods of a node in arrival order, the GPU total through node add/update/remove, and releases that
arrive after their node is gone."""

import pytest

from builders import GI, make_node
from gangsim.sim.kubelet import GPU, Kubelets


class Held(str):
    """A pod as the kubelets hold it: compares as its name, carries what it requests."""

    requests: dict[str, int]


def held(name: str, requests: dict[str, int]) -> Held:
    h = Held(name)
    h.requests = dict(requests)
    return h


def kubelets(*nodes):
    k = Kubelets()
    for node in nodes:
        k.add_node(node)
    return k


CPU2 = {"cpu": 2000}


@pytest.mark.parametrize(
    ("node", "holders", "shrink_to", "requests", "want"),
    [
        pytest.param(make_node("n", cpu=4), [CPU2], None, CPU2, True, id="fits"),
        pytest.param(make_node("n", cpu=4), [CPU2, {"cpu": 1000}], None, CPU2, False, id="insufficient-cpu"),
        pytest.param(make_node("n", cpu=4, gpus=8), [{GPU: 6}], None, {GPU: 2}, True, id="gpus-exactly-fill"),
        pytest.param(make_node("n", cpu=4, gpus=8), [{GPU: 6}], None, {GPU: 3}, False, id="insufficient-gpus"),
        pytest.param(make_node("n", cpu=4), [], None, {GPU: 1}, False, id="resource-the-node-lacks"),
        pytest.param(make_node("n", cpu=4, memory_gi=1), [], None, {"memory": 2 * GI}, False, id="insufficient-memory"),
        pytest.param(make_node("n", cpu=4, pods=2), [{}, {}], None, {}, False, id="no-pod-slot"),
        pytest.param(make_node("n", cpu=4, pods=2), [{}], None, {}, True, id="last-pod-slot"),
        pytest.param(make_node("n", cpu=4), [{"cpu": 3000}], make_node("n", cpu=2), {}, False, id="allocatable-shrank-below-what-runs"),
        pytest.param(make_node("n", cpu=4), [{"cpu": 1000}], make_node("n", cpu=2), {"cpu": 1000}, True, id="allocatable-shrank-but-still-room"),
    ],
)
def test_admission(node, holders, shrink_to, requests, want):
    k = kubelets(node)
    for uid, req in enumerate(holders):
        k.occupy("n", uid, held(f"holder-{uid}", req))
    if shrink_to is not None:
        k.update_node(shrink_to)
    assert k.fits("n", requests) is want


def test_release_gives_the_resources_back():
    k = kubelets(make_node("n", cpu=2, pods=1))
    k.occupy("n", 1, held("a", CPU2))
    k.release(1)
    assert (k.fits("n", CPU2), k.pods_on("n")) == (True, [])


def test_occupying_twice_counts_once():
    k = kubelets(make_node("n", cpu=4))
    k.occupy("n", 1, held("a", CPU2))
    k.occupy("n", 1, held("a", CPU2))
    assert (k.fits("n", CPU2), k.pods_on("n")) == (True, ["a"])


def test_releasing_an_unknown_pod_is_a_no_op():
    k = kubelets(make_node("n", cpu=2))
    k.occupy("n", 1, held("a", CPU2))
    k.release(99)
    k.release(1)
    k.release(1)  # twice: the second is unknown
    assert k.fits("n", CPU2)


def test_pods_are_listed_per_node_in_arrival_order():
    k = kubelets(make_node("n1", cpu=8), make_node("n2", cpu=8))
    for uid, (node, pod) in enumerate([("n1", "c"), ("n2", "x"), ("n1", "a"), ("n1", "b")]):
        k.occupy(node, uid, held(pod, {"cpu": 100}))
    k.release(2)  # "a" leaves
    k.occupy("n1", 7, held("a-again", {"cpu": 100}))
    assert (k.pods_on("n1"), k.pods_on("n2")) == (["c", "b", "a-again"], ["x"])


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("add", make_node("n1", gpus=8))], 8, id="add"),
        pytest.param([("add", make_node("n1", gpus=8)), ("add", make_node("n2", gpus=4))], 12, id="add-two"),
        pytest.param([("add", make_node("n1", cpu=4))], 0, id="cpu-only-node"),
        pytest.param([("add", make_node("n1", gpus=8)), ("update", make_node("n1", gpus=2))], 2, id="update-shrinks"),
        pytest.param([("add", make_node("n1", gpus=2)), ("update", make_node("n1", gpus=8))], 8, id="update-grows"),
        pytest.param([("add", make_node("n1", gpus=8)), ("update", make_node("n1", cpu=4))], 0, id="update-drops-the-gpus"),
        pytest.param([("add", make_node("n1", gpus=8)), ("add", make_node("n2", gpus=4)), ("remove", "n1")], 4, id="remove"),
        pytest.param([("add", make_node("n1", gpus=8)), ("remove", "n1"), ("add", make_node("n1", gpus=2))], 2, id="remove-then-add-again"),
    ],
)
def test_gpus_total(steps, want):
    k = Kubelets()
    for op, arg in steps:
        {"add": k.add_node, "update": k.update_node, "remove": k.remove_node}[op](arg)
    assert k.gpus_total == want


def test_gpus_total_does_not_depend_on_what_runs():
    k = kubelets(make_node("n1", gpus=8))
    k.occupy("n1", 1, held("a", {GPU: 8}))
    assert k.gpus_total == 8


def test_release_after_the_node_is_gone_is_a_no_op():
    k = kubelets(make_node("n1", cpu=2), make_node("n2", cpu=2))
    k.occupy("n1", 1, held("a", CPU2))
    k.occupy("n2", 2, held("b", CPU2))
    k.remove_node("n1")
    k.release(1)
    assert (k.pods_on("n2"), k.fits("n2", CPU2)) == (["b"], False)


def test_release_after_the_node_is_gone_does_not_touch_a_new_node_of_that_name():
    k = kubelets(make_node("n1", cpu=2))
    k.occupy("n1", 1, held("old", CPU2))
    k.remove_node("n1")
    k.add_node(make_node("n1", cpu=2))
    k.occupy("n1", 2, held("new", CPU2))
    k.release(1)
    assert (k.pods_on("n1"), k.fits("n1", {"cpu": 1})) == (["new"], False)
