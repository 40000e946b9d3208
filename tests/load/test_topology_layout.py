"""Topology in traces: a NodePool's ``spec.topology`` labels its nodes by domain (every N
consecutive nodes one domain per level), ``gangsim generate --topology/--gang-topology`` writes
it, and the TopologyAwareWorkloadScheduling gate is a GangScheduling arg of a
KubeSchedulerConfiguration (``traces/configs/tas.yaml``)."""

from __future__ import annotations

import pytest
import yaml

from gangsim.api.objects import Node
from gangsim.errors import InputError
from tests.cli_kit import invoke

POOL = """
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 6
  topology:
  - {key: example.com/block, nodes: 4}
  - {key: rack, nodes: 2}
  template:
    metadata: {labels: {tier: a}}
    status: {allocatable: {cpu: "8", nvidia.com/gpu: "8"}}
"""


def test_pool_nodes_get_one_label_per_level(load):
    nodes = [e.obj for e in load(POOL).events if isinstance(e.obj, Node)]
    assert [(n.name, n.labels["example.com/block"], n.labels["rack"], n.labels["tier"]) for n in nodes] == [
        ("gpu-0", "block-0", "rack-0", "a"), ("gpu-1", "block-0", "rack-0", "a"), ("gpu-2", "block-0", "rack-1", "a"),
        ("gpu-3", "block-0", "rack-1", "a"), ("gpu-4", "block-1", "rack-2", "a"), ("gpu-5", "block-1", "rack-2", "a"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("level", "message"),
    [
        ("{key: rack}", "t.yaml:7: NodePool gpu: spec.topology[0].nodes: Required value"),
        ("{key: tier, nodes: 2}", 't.yaml:7: NodePool gpu: spec.topology[0].key: Duplicate value: "tier": must not repeat a label of the template or another level'),
        ("{key: rack, nodes: 2, size: 3}", 't.yaml:7: NodePool gpu: spec.topology[0].size: Unsupported field: unknown field "size"'),
    ],
)
def test_bad_levels(load, level, message):
    text = POOL.replace("  - {key: example.com/block, nodes: 4}\n  - {key: rack, nodes: 2}\n", f"  - {level}\n")
    with pytest.raises(InputError) as exc:
        load(text)
    assert str(exc.value) == message


def test_generate_lays_out_racks_and_constrains_gangs():
    res = invoke("generate", "--pool", "gpu=8x8", "--topology", "block=4,rack=2", "--gang-topology", "rack", "--jobs", "4", "--seed", "1", "--gang-sizes", "4:1")
    assert res.exit_code == 0, res.stderr
    docs = list(yaml.safe_load_all(res.stdout))
    pool = next(d for d in docs if d["kind"] == "NodePool")
    assert pool["spec"]["topology"] == [{"key": "block", "nodes": 4}, {"key": "rack", "nodes": 2}]
    groups = [d for d in docs if d["kind"] == "PodGroup"]
    assert groups and all(g["spec"]["schedulingConstraints"] == {"topology": [{"key": "rack"}]} for g in groups)
    bad = invoke("generate", "--topology", "rack=0")
    assert bad.exit_code == 2 and "--topology: Invalid value: 'rack=0'" in bad.stderr


def test_the_gate_from_a_config_file(load, write):
    from gangsim.load import load_config

    write("tas.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: GangScheduling\n    args: {topologyAwareWorkloadScheduling: true}\n")
    assert load_config("tas.yaml").topology_aware_workload_scheduling is True
    assert load_config("tas.yaml").with_changes().partial_success is False
