"""Broken inputs: each gives exactly one line naming file:line, the object and the field."""

from __future__ import annotations

import pytest

from gangsim.errors import InputError
from gangsim.load import load_trace

from .kit import node_yaml, pod_yaml

QUANTITY_RE = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train-3
  namespace: ml
spec:
  containers:
  - name: c
    resources:
      requests:
        nvidia.com/gpu: {gpu}
"""
PG = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: pg, namespace: ml}}\nspec:\n{spec}\n"
CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TRACE = "apiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: t}\nevents:\n"


CASES = [
    # --- quantities and resources
    pytest.param(
        GPU_POD.format(gpu='"two"'),
        f't.yaml:11: Pod ml/train-3: spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "two": quantities must match the regular expression {QUANTITY_RE}',
        id="bad-quantity",
    ),
    pytest.param(
        GPU_POD.format(gpu="-1"),
        "t.yaml:11: Pod ml/train-3: spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: -1: must be greater than or equal to 0",
        id="negative-quantity",
    ),
    pytest.param(
        GPU_POD.format(gpu='"0.5"'),
        't.yaml:11: Pod ml/train-3: spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "0.5": must be an integer',
        id="fractional-gpu",
    ),
    pytest.param(
        pod_yaml(spec="containers:\n- resources: {limits: {gpu: 1}}"),
        't.yaml:7: Pod default/p: spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
        id="unqualified-resource-name",
    ),
    pytest.param(
        pod_yaml(spec="containers:\n- resources:\n    requests: {cpu: 2}\n    limits: {cpu: 1}"),
        "t.yaml:8: Pod default/p: spec.containers[0].resources.requests[cpu]: Invalid value: 2: must be less than or equal to cpu limit of 1",
        id="request-above-limit",
    ),
    # --- documents
    pytest.param(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
        't.yaml:2: Deployment x: kind: Unsupported value: "Deployment": supported values: "Node", "NodePool", "PriorityClass", '
        '"PodDisruptionBudget", "Workload", "PodGroup", "CompositePodGroup", "Pod", "Job", "KubeSchedulerConfiguration", "Trace"',
        id="unknown-kind",
    ),
    pytest.param(
        "apiVersion: batch/v2\nkind: Job\nmetadata: {name: x}\n",
        't.yaml:1: Job default/x: apiVersion: Unsupported value: "batch/v2": supported values: "batch/v1"',
        id="wrong-api-version",
    ),
    pytest.param("apiVersion: v1\nmetadata: {name: x}\n", "t.yaml:1: kind: Required value: every document needs apiVersion and kind", id="missing-kind"),
    pytest.param(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: ml\nspec: {}\n",
        "t.yaml:4: Pod: metadata.name: Required value: name or generateName is required",
        id="missing-name",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Node\nmetadata: {generateName: n-}\nstatus: {allocatable: {cpu: 1}}\n",
        "t.yaml:3: Node: metadata.generateName: Forbidden: gangsim generates names only for Job and Pod: set metadata.name",
        id="generate-name-node",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: P_}\nspec: {containers: [{name: c}]}\n",
        "t.yaml:3: Pod: metadata.generateName: Invalid value: \"P_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        id="generate-name-invalid",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n   bad: [\n",
        "t.yaml:5: invalid YAML: mapping values are not allowed in this context",
        id="yaml-syntax",
    ),
    pytest.param("apiVersion: v1\nkind: Pod\nkind: Node\n", 't.yaml:3: invalid YAML: duplicate key "kind"', id="yaml-duplicate-key"),
    # --- pod spec
    pytest.param(
        pod_yaml(spec="nodeSelecter: {a: b}\ncontainers: [{name: c}]"),
        't.yaml:6: Pod default/p: spec.nodeSelecter: Unsupported field: unknown field "nodeSelecter"; did you mean "nodeSelector"?',
        id="unknown-spec-field",
    ),
    # topologySpreadConstraints: validateTopologySpreadConstraints (pkg/apis/core/validation/validation.go)
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"),
        "t.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        id="topology-spread-max-skew",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone}"),
        't.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "": supported values: "DoNotSchedule", "ScheduleAnyway"',
        id="topology-spread-action",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}"),
        "t.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
        id="topology-spread-key",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}"),
        "t.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        id="topology-spread-min-domains",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [rev]}"),
        "t.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        id="topology-spread-match-label-keys",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntopologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Sometimes}"),
        't.yaml:8: Pod default/p: spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Sometimes": supported values: "Honor", "Ignore"',
        id="topology-spread-taints-policy",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\nvolumes:\n- name: data\n  persistentVolumeClaim: {claimName: x}"),
        "t.yaml:9: Pod default/p: spec.volumes[0].persistentVolumeClaim: Unsupported field: gangsim does not model persistent volumes",
        id="pvc-unsupported",
    ),
    pytest.param(
        pod_yaml(spec="workloadRef: {name: w, podGroup: g}\ncontainers: [{name: c}]"),
        "t.yaml:6: Pod default/p: spec.workloadRef: Unsupported field: spec.workloadRef was removed in v1.36: use spec.schedulingGroup.podGroupName",
        id="tombstoned-workload-ref",
    ),
    pytest.param(
        pod_yaml(annotations="{gangsim.dev/duration: soon}"),
        't.yaml:5: Pod default/p: metadata.annotations[gangsim.dev/duration]: Invalid value: "soon": durations must be like 90s, 5m, 1h30m or a number of seconds',
        id="bad-duration-annotation",
    ),
    pytest.param(
        pod_yaml(annotations="{gangsim.dev/durration: 1h}"),
        "t.yaml:5: Pod default/p: metadata.annotations[gangsim.dev/durration]: Unsupported field: unknown gangsim annotation "
        '(did you mean "gangsim.dev/duration"?)',
        id="unknown-gangsim-annotation",
    ),
    pytest.param(
        node_yaml().replace("metadata: {name: n1}", "metadata: {name: n1, annotations: {gangsim.dev/duration: 1h}}"),
        "t.yaml:3: Node n1: metadata.annotations[gangsim.dev/duration]: Forbidden: gangsim.dev/duration is not read on Node (only on Job, Pod and the workload kinds (JobSet, LeaderWorkerSet, …))",
        id="annotation-on-wrong-kind",
    ),
    pytest.param(
        pod_yaml(spec="priorityClassName: nope\ncontainers: [{name: c}]"),
        't.yaml:6: Pod default/p: spec.priorityClassName: Invalid value: "nope": no PriorityClass with name nope was found',
        id="unknown-priority-class",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\ntolerations:\n- key: a\n  operator: Exists\n  value: b"),
        "t.yaml:9: Pod default/p: spec.tolerations[0].operator: Invalid value: \"Exists\": value must be empty when `operator` is 'Exists'",
        id="toleration-exists-with-value",
    ),
    pytest.param(
        pod_yaml(spec="containers: [{name: c}]\naffinity:\n  podAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n    - labelSelector: {matchLabels: {a: b}}"),
        "t.yaml:10: Pod default/p: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
        id="affinity-without-topology-key",
    ),
    # --- nodes
    pytest.param(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  conditions: []\n",
        "t.yaml:5: Node n1: status.allocatable: Required value: a node needs a size: set status.allocatable (or status.capacity)",
        id="node-without-size",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n  - {key: a, value: b, effect: NoScheduel}\nstatus: {capacity: {cpu: 1}}\n",
        't.yaml:6: Node n1: spec.taints[0].effect: Unsupported value: "NoScheduel": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        id="taint-bad-effect",
    ),
    # --- PodGroup and Workload (SEMANTICS §1.2, §1.3)
    pytest.param(
        PG.format(spec="  schedulingPolicy:\n    gang:\n      minCount: 0"),
        "t.yaml:7: PodGroup ml/pg: spec.schedulingPolicy.gang.minCount: Required value",
        id="min-count-zero",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {gang: {minCount: -2}}"),
        "t.yaml:5: PodGroup ml/pg: spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than zero",
        id="min-count-negative",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {}"),
        't.yaml:5: PodGroup ml/pg: spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`',
        id="policy-neither",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {basic: {}, gang: {minCount: 2}}"),
        't.yaml:5: PodGroup ml/pg: spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, but multiple fields are set',
        id="policy-both",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {gang: {minCount: 2}}\n  disruptionMode: {}"),
        't.yaml:6: PodGroup ml/pg: spec.disruptionMode: Invalid value: "": must specify one of: `single`, `all`',
        id="disruption-mode-neither",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {basic: {}}\n  disruptionMode:\n    all: {}"),
        "t.yaml:7: PodGroup ml/pg: spec.disruptionMode.all: Invalid value: {}: the disruptionMode `all` is not supported with the Basic scheduling policy",
        id="basic-with-all",
    ),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {gang: {minCount: 2}}\n  schedulingConstraints:\n    topology: [{key: a}, {key: b}]"),
        "t.yaml:7: PodGroup ml/pg: spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item",
        id="two-topology-constraints",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n  podGroupTemplates:\n"
        + "".join(f"  - {{name: t{i}, schedulingPolicy: {{basic: {{}}}}}}\n" for i in range(9)),
        "t.yaml:5: Workload default/w: spec.podGroupTemplates: Too many: 9: must have at most 8 items",
        id="nine-templates",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n  podGroupTemplates: []\n",
        "t.yaml:5: Workload default/w: spec.podGroupTemplates: Required value: must have at least one item",
        id="zero-templates",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n  podGroupTemplates:\n"
        "  - {name: a, schedulingPolicy: {basic: {}}}\n  - {name: a, schedulingPolicy: {basic: {}}}\n",
        't.yaml:7: Workload default/w: spec.podGroupTemplates[1].name: Duplicate value: "a": must be unique',
        id="duplicate-template",
    ),
    # --- priorities, PDBs
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n",
        "t.yaml:11: PriorityClass b: globalDefault: Invalid value: true: PriorityClass a (t.yaml:1) is already marked as default. Only one default can exist",
        id="two-global-defaults",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 2000000000\n",
        "t.yaml:4: PriorityClass huge: value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        id="user-priority-too-high",
    ),
    pytest.param(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  minAvailable: 1\n  maxUnavailable: 10%\n",
        't.yaml:6: PodDisruptionBudget default/b: spec: Invalid value: {"minAvailable":1,"maxUnavailable":"10%"}: minAvailable and maxUnavailable cannot be both set',
        id="pdb-both",
    ),
    # --- trace events
    pytest.param(
        node_yaml() + "---\n" + node_yaml(),
        't.yaml:6: Node n1: metadata.name: Duplicate value: "n1": already exists (created at t.yaml:1)',
        id="duplicate-object",
    ),
    pytest.param(TRACE + "- at: 1h\n  delete: {kind: Node, name: gpu-7}\n", "t.yaml:6: Node gpu-7: not found: nothing to delete at 1h", id="delete-missing"),
    pytest.param(
        TRACE + "- at: 1m\n  patch: {kind: PodGroup, namespace: ml, name: pg-0, spec: {}}\n",
        "t.yaml:6: PodGroup ml/pg-0: not found: nothing to patch at 1m",
        id="patch-missing",
    ),
    pytest.param(
        TRACE + "- at: 1m\n  delete: {kind: Node, name: a}\n  patch: {kind: Node, name: a}\n",
        't.yaml:6: Trace t: events[0]: Invalid value: "{`patch`, `delete`}": exactly one of `create`, `patch`, `delete` is required, but multiple fields are set',
        id="event-with-two-ops",
    ),
    pytest.param(
        TRACE + "- at: 5m\n  create:\n    apiVersion: v1\n    kind: Node\n    metadata:\n      name: n\n"
        "      annotations: {gangsim.dev/arrival: 10m}\n    status: {capacity: {cpu: 1}}\n",
        't.yaml:11: Node n: metadata.annotations[gangsim.dev/arrival]: Invalid value: "10m": disagrees with the event\'s `at` (5m)',
        id="at-and-arrival-disagree",
    ),
    pytest.param(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n    gangsim.dev/arrival: 10m\n    gangsim.dev/remove-at: 5m\nstatus: {capacity: {cpu: 1}}\n",
        't.yaml:7: Node n: metadata.annotations[gangsim.dev/remove-at]: Invalid value: "5m": must not be before the arrival (10m)',
        id="remove-before-arrival",
    ),
    # --- KubeSchedulerConfiguration
    pytest.param(
        CONFIG + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Mostallocated\n",
        't.yaml:8: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Mostallocated": '
        'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        id="bad-scoring-strategy",
    ),
    pytest.param(
        CONFIG + "percentageOfNodeToScore: 50\n",
        't.yaml:3: KubeSchedulerConfiguration: percentageOfNodeToScore: Unsupported field: unknown field "percentageOfNodeToScore"; did you mean "percentageOfNodesToScore"?',
        id="config-unknown-field",
    ),
    pytest.param(
        CONFIG + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
        "t.yaml:4: KubeSchedulerConfiguration: podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
        id="config-backoff-order",
    ),
]


@pytest.mark.parametrize(("text", "message"), CASES)
def test_broken_input(load_error, text, message):
    assert load_error(text) == message


def test_enough_distinct_cases():
    assert len({p.id for p in CASES}) >= 20


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param("t.jsonl", '{"at": 1, "delete": {"kind": "Node", "name": "a"}}\n\n{"at": 2, "create": {\n', "t.jsonl:3: invalid JSON: unexpected end of data", id="jsonl-syntax-line"),
        pytest.param(
            "t.jsonl",
            '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "status": {"capacity": {"cpu": "1"}}}\n'
            '{"at": "later", "delete": {"kind": "Node", "name": "a"}}\n',
            't.jsonl:2: at: Invalid value: "later": durations must be like 90s, 5m, 1h30m or a number of seconds',
            id="jsonl-bad-event-line",
        ),
        pytest.param(
            "t.jsonl",
            '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "status": {"capacity": {"cpu": "1"}}}\n'
            '{"at": 3, "create": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"resources": {"requests": {"cpu": "x"}}}]}}}\n',
            f't.jsonl:2: Pod default/p: spec.containers[0].resources.requests[cpu]: Invalid value: "x": quantities must match the regular expression {QUANTITY_RE}',
            id="jsonl-object-error-line",
        ),
        pytest.param("t.json", '{"apiVersion": "v1",\n "kind": "Node",,}\n', "t.json:2: invalid JSON: unexpected character, expected a string key", id="json-syntax"),
        pytest.param(
            "t.json",
            '[\n {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "status": {"capacity": {"cpu": "1"}}},\n'
            ' {"apiVersion": "v1", "kind": "Node",\n  "metadata": {"name": "b"}, "status": {}}\n]\n',
            "t.json:3: Node b: status.allocatable: Required value: a node needs a size: set status.allocatable (or status.capacity)",
            id="json-list-item-line",
        ),
    ],
)
def test_broken_json(load_error, name, text, message):
    assert load_error(text, name) == message


def test_missing_path(write):
    with pytest.raises(InputError) as info:
        load_trace(["nope.yaml"])
    assert str(info.value) == "nope.yaml: no such file or directory"


def test_two_configs(write):
    write("cfg.yaml", CONFIG)
    write("t.yaml", CONFIG)
    with pytest.raises(InputError) as info:
        load_trace(["t.yaml"], config_path="cfg.yaml")
    assert str(info.value) == (
        "cfg.yaml:1: KubeSchedulerConfiguration: a second KubeSchedulerConfiguration (the first is at t.yaml:1): give only one, in the trace or with --config"
    )
