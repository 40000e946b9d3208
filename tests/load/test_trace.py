"""Replaying events: patches, deletes, immutability, NodePools over time, configs."""

from __future__ import annotations

import pytest

from gangsim.api.objects import DisruptionMode, PodGroup
from gangsim.api.trace import Op
from gangsim.load import load_config, load_trace

from .kit import node_yaml, pod_yaml

TRACE = "---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: t}\nevents:\n"
PG = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec:
  workloadRef: {workloadName: w, templateName: worker}
  schedulingPolicy: {gang: {minCount: 4}}
  priority: 10
"""
POOL = """\
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 2
  template:
    metadata: {labels: {tier: a}}
    status: {capacity: {cpu: "8", nvidia.com/gpu: "8"}}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml}
spec:
  parallelism: 2
  template:
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
WORKLOAD = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ml}
spec:
  controllerRef: {kind: Job, name: j}
  podGroupTemplates: [{name: worker, schedulingPolicy: {gang: {minCount: 4}}}]
"""


def summary(trace):
    return [(e.at_ms, e.op.value, e.ref) for e in trace.events]


def test_patch_min_count(load):
    trace = load(PG + TRACE + "- at: 40m\n  patch: {kind: PodGroup, namespace: ml, name: pg, spec: {schedulingPolicy: {gang: {minCount: 2}}}}\n")
    assert summary(trace) == [(0, "create", "PodGroup ml/pg"), (2_400_000, "patch", "PodGroup ml/pg")]
    before, after = trace.events[0].obj, trace.events[1].obj
    assert isinstance(after, PodGroup)
    assert (before.policy.min_count, after.policy.min_count) == (4, 2)
    assert after.policy.priority == 10 and after.workload_ref == ("w", "worker")
    assert trace.events[1].source.line == 14


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(
            "spec:\n      disruptionMode: {all: {}}",
            't.yaml:19: PodGroup ml/pg: spec.disruptionMode: Invalid value: {"all":{}}: field is immutable',
            id="disruption-mode",
        ),
        pytest.param(
            "spec:\n      schedulingPolicy: {gang: null, basic: {}}",
            't.yaml:19: PodGroup ml/pg: spec.schedulingPolicy: Invalid value: {"basic":{}}: field is immutable',
            id="policy-kind",
        ),
        pytest.param(
            "spec:\n      priority: 11",
            "t.yaml:19: PodGroup ml/pg: spec.priority: Invalid value: 11: field is immutable",
            id="priority",
        ),
        pytest.param(
            "spec:\n      workloadRef: {templateName: other}",
            't.yaml:19: PodGroup ml/pg: spec.workloadRef: Invalid value: {"workloadName":"w","templateName":"other"}: field is immutable',
            id="workload-ref",
        ),
        pytest.param(
            "spec:\n      schedulingPolicy: {gang: {minCount: 0}}",
            "t.yaml:19: PodGroup ml/pg: spec.schedulingPolicy.gang.minCount: Required value",
            id="invalid-new-value",
        ),
        pytest.param(
            "metadata: {name: other}",
            "t.yaml:18: PodGroup ml/pg: metadata.name: Forbidden: a patch may change only metadata.labels and metadata.annotations",
            id="rename",
        ),
    ],
)
def test_pod_group_patch_errors(load_error, patch, message):
    text = PG + TRACE + f"- at: 1m\n  patch:\n    kind: PodGroup\n    namespace: ml\n    name: pg\n    {patch}\n"
    assert load_error(text) == message


def test_pod_gates_can_only_be_removed(load, load_error):
    pod = pod_yaml(spec="schedulingGates: [{name: a}, {name: b}]\ncontainers: [{name: c}]")
    trace = load(pod + TRACE + "- at: 1s\n  patch: {kind: Pod, name: p, metadata: {labels: {x: y}}, spec: {schedulingGates: [{name: b}]}}\n")
    assert trace.events[1].obj.spec.scheduling_gates == ("b",)
    assert trace.events[1].obj.spec.labels == {"x": "y"}
    added = TRACE + "- at: 1s\n  patch: {kind: Pod, name: p, spec: {schedulingGates: [{name: a}, {name: c}]}}\n"
    assert load_error(pod + added) == "t.yaml:14: Pod default/p: spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling gate 'c'"
    changed = TRACE + "- at: 1s\n  patch:\n    kind: Pod\n    name: p\n    spec:\n      nodeSelector: {a: b}\n"
    assert load_error(pod + changed) == 't.yaml:18: Pod default/p: spec.nodeSelector: Invalid value: {"a":"b"}: field is immutable'


def test_job_parallelism_mutable_template_not(load, load_error):
    trace = load(JOB + TRACE + "- at: 1h\n  patch: {kind: Job, namespace: ml, name: j, spec: {parallelism: 4}}\n")
    assert [e.obj.parallelism for e in trace.events] == [2, 4]
    bad = TRACE + "- at: 1h\n  patch: {kind: Job, namespace: ml, name: j, spec: {template: {spec: {schedulerName: x}}}}\n"
    assert load_error(JOB + bad) == 't.yaml:15: Job ml/j: spec.template.spec.schedulerName: Invalid value: "x": field is immutable'


def test_workload_templates_immutable(load_error):
    added = "spec: {podGroupTemplates: [{name: worker, schedulingPolicy: {gang: {minCount: 4}}}, {name: ps, schedulingPolicy: {basic: {}}}]}"
    text = WORKLOAD + TRACE + f"- at: 1m\n  patch: {{kind: Workload, namespace: ml, name: w, {added}}}\n"
    assert load_error(text) == 't.yaml:13: Workload ml/w: spec.podGroupTemplates: Invalid value: ["worker","ps"]: field is immutable'
    ref = "spec: {controllerRef: {name: other}}"
    text = WORKLOAD + TRACE + f"- at: 1m\n  patch: {{kind: Workload, namespace: ml, name: w, {ref}}}\n"
    assert load_error(text) == 't.yaml:13: Workload ml/w: spec.controllerRef: Invalid value: {"kind":"Job","name":"other"}: field is immutable'


def test_node_patch_keeps_pool_and_changes_taints(load):
    patch = "{kind: Node, name: gpu-1, metadata: {labels: {tier: b}}, spec: {taints: [{key: bad, effect: NoSchedule}]}}"
    trace = load(POOL + TRACE + f"- at: 5m\n  patch: {patch}\n")
    node = trace.events[-1].obj
    assert (trace.events[-1].op, node.name, node.pool) == (Op.PATCH, "gpu-1", "gpu")
    assert node.labels == {"tier": "b", "kubernetes.io/hostname": "gpu-1"}
    assert [t.key for t in node.taints] == ["bad"]
    assert node.allocatable["nvidia.com/gpu"] == 8


def test_node_pool_scale_and_delete(load):
    trace = load(
        POOL
        + TRACE
        + "- at: 1m\n  patch: {kind: NodePool, name: gpu, spec: {count: 4}}\n"
        + "- at: 2m\n  delete: {kind: Node, name: gpu-2}\n"
        + "- at: 3m\n  patch: {kind: NodePool, name: gpu, spec: {count: 1}}\n"
        + "- at: 4m\n  patch: {kind: NodePool, name: gpu, spec: {template: {metadata: {labels: {tier: c}}}}}\n"
        + "- at: 5m\n  delete: {kind: NodePool, name: gpu}\n"
    )
    assert summary(trace) == [
        (0, "create", "Node gpu-0"),
        (0, "create", "Node gpu-1"),
        (60_000, "create", "Node gpu-2"),
        (60_000, "create", "Node gpu-3"),
        (120_000, "delete", "Node gpu-2"),
        (180_000, "delete", "Node gpu-1"),
        (180_000, "delete", "Node gpu-3"),
        (240_000, "patch", "Node gpu-0"),
        (300_000, "delete", "Node gpu-0"),
    ]
    assert trace.events[7].obj.labels == {"tier": "c", "kubernetes.io/hostname": "gpu-0"}


def test_remove_at_after_manual_delete_is_skipped_with_warning(load):
    node = node_yaml("n").replace("metadata: {name: n}", "metadata: {name: n, annotations: {gangsim.dev/remove-at: 1h}}")
    trace = load(node + TRACE + "- at: 10m\n  delete: {kind: Node, name: n}\n")
    assert summary(trace) == [(0, "create", "Node n"), (600_000, "delete", "Node n")]
    assert trace.warnings == ["Node n: gangsim.dev/remove-at at 1h ignored: the object was already deleted"]


def test_events_sorted_by_time_then_order(load):
    pool = POOL.replace("metadata: {name: gpu}", "metadata: {name: gpu, annotations: {gangsim.dev/remove-at: 0s}}")
    trace = load(pool + "---\n" + node_yaml("n").replace("metadata: {name: n}", "metadata: {name: n, annotations: {gangsim.dev/remove-at: 1m}}") + TRACE
                 + "- at: 1m\n  create: {apiVersion: v1, kind: Node, metadata: {name: m}, status: {capacity: {cpu: 1}}}\n")
    assert summary(trace) == [
        (0, "create", "Node gpu-0"),
        (0, "create", "Node gpu-1"),
        (0, "delete", "Node gpu-0"),
        (0, "delete", "Node gpu-1"),
        (0, "create", "Node n"),
        (60_000, "delete", "Node n"),
        (60_000, "create", "Node m"),
    ]
    keys = [(e.at_ms, e.order) for e in trace.events]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_recreate_after_delete(load):
    trace = load(node_yaml("n") + TRACE + "- at: 1m\n  delete: {kind: Node, name: n}\n- at: 1m\n  create: " + "{apiVersion: v1, kind: Node, metadata: {name: n}, status: {capacity: {cpu: 2}}}\n")
    assert summary(trace) == [(0, "create", "Node n"), (60_000, "delete", "Node n"), (60_000, "create", "Node n")]


def test_delete_before_create_at_same_instant_is_an_error(load_error):
    # same instant: document order decides (INTERFACE rule 3), so the delete comes first
    text = TRACE.lstrip("-\n") + "- at: 1m\n  delete: {kind: Node, name: n}\n---\n" + node_yaml("n").replace("metadata: {name: n}", "metadata: {name: n, annotations: {gangsim.dev/arrival: 1m}}")
    assert load_error(text) == "t.yaml:6: Node n: not found: nothing to delete at 1m"


def test_patch_disruption_mode_unchanged_is_fine(load):
    trace = load(PG + TRACE + "- at: 1m\n  patch: {kind: PodGroup, namespace: ml, name: pg, spec: {disruptionMode: {single: {}}}}\n")
    assert trace.events[1].obj.policy.disruption_mode is DisruptionMode.SINGLE


def test_config_in_trace_and_from_file(write):
    write("t.yaml", node_yaml() + "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodMaxBackoffSeconds: 20\n")
    assert load_trace(["t.yaml"]).config.pod_max_backoff_ms == 20_000
    write("u.yaml", node_yaml())
    write("cfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 30\n")
    trace = load_trace(["u.yaml"], config_path="cfg.yaml")
    assert trace.config.percentage_of_nodes_to_score == 30
    assert trace.files == ("u.yaml",)
    assert load_config("cfg.yaml") == trace.config
