"""Decoding objects: resources, nodes, pools, priorities, PodGroups/Workloads, Jobs, PDBs."""

from __future__ import annotations

import pytest

from gangsim.api.objects import (
    DEFAULT_MEMORY_REQUEST,
    DisruptionMode,
    Job,
    Node,
    PodAffinityTerm,
    PodGroup,
    PolicyKind,
    PreemptionPolicy,
    Taint,
    Toleration,
    Workload,
)
from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement
from gangsim.api.trace import Op

from .kit import node_yaml, pod_yaml

Gi = 2**30
Mi = 2**20


def only(trace, kind):
    return [e.obj for e in trace.events if e.kind == kind and e.op is Op.CREATE]


# --- resources ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "requests", "nonzero_cpu", "nonzero_memory"),
    [
        pytest.param(
            "containers: [{name: c, resources: {requests: {cpu: 500m, memory: 8Gi}}}]",
            {"cpu": 500, "memory": 8 * Gi}, 500, 8 * Gi, id="millicores-and-Gi",
        ),
        pytest.param(
            "containers: [{name: c, resources: {requests: {memory: 1Ti, ephemeral-storage: 1e3}}}]",
            {"memory": 2**40, "ephemeral-storage": 1000}, 100, 2**40, id="Ti-and-exponent",
        ),
        pytest.param(
            "containers: [{name: c, resources: {requests: {cpu: '0.1', memory: 1.5Gi}}}]",
            {"cpu": 100, "memory": 3 * Gi // 2}, 100, 3 * Gi // 2, id="decimal-fractions",
        ),
        pytest.param(
            "containers: [{name: c, resources: {limits: {cpu: 2, nvidia.com/gpu: 8}}}]",
            {"cpu": 2000, "nvidia.com/gpu": 8}, 2000, DEFAULT_MEMORY_REQUEST, id="limits-only-default-requests",
        ),
        pytest.param(
            "containers: [{name: c, resources: {requests: {cpu: 1}, limits: {cpu: 2, memory: 1Gi}}}]",
            {"cpu": 1000, "memory": Gi}, 1000, Gi, id="request-wins-over-limit",
        ),
        pytest.param("containers: [{name: c}]", {}, 100, DEFAULT_MEMORY_REQUEST, id="no-requests-nonzero-defaults"),
        pytest.param(
            "containers: [{name: c, resources: {requests: {cpu: 0, memory: 0}}}]",
            {}, 0, 0, id="explicit-zero-stays-zero",
        ),
        pytest.param(
            """
            containers:
            - {name: a, resources: {requests: {cpu: 1, nvidia.com/gpu: 2}}}
            - {name: b, resources: {requests: {cpu: 500m, nvidia.com/gpu: 2}}}
            """,
            {"cpu": 1500, "nvidia.com/gpu": 4}, 1500, 2 * DEFAULT_MEMORY_REQUEST, id="containers-add-up",
        ),
        pytest.param(
            """
            initContainers: [{name: i, resources: {requests: {cpu: 4, memory: 1Gi}}}]
            containers: [{name: c, resources: {requests: {cpu: 1, memory: 2Gi}}}]
            """,
            {"cpu": 4000, "memory": 2 * Gi}, 4000, 2 * Gi, id="init-container-max",
        ),
        pytest.param(
            """
            initContainers:
            - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 1}}}
            - {name: setup, resources: {requests: {cpu: 1500m}}}
            containers: [{name: c, resources: {requests: {cpu: 1}}}]
            """,
            {"cpu": 2500}, 2500, 2 * DEFAULT_MEMORY_REQUEST, id="sidecar-added-to-app-and-init",
        ),
        pytest.param(
            """
            initContainers: [{name: i, resources: {requests: {cpu: 1}}}]
            containers: [{name: c}]
            """,
            {"cpu": 1000}, 1000, DEFAULT_MEMORY_REQUEST, id="nonzero-uses-init-max",
        ),
        pytest.param(
            """
            overhead: {cpu: 250m, memory: 120Mi}
            containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]
            """,
            {"cpu": 1250, "memory": Gi + 120 * Mi}, 1250, Gi + 120 * Mi, id="overhead-added",
        ),
        pytest.param(
            "containers: [{name: c, resources: {requests: {hugepages-2Mi: 1Gi, example.com/fpga: 1}}}]",
            {"hugepages-2Mi": Gi, "example.com/fpga": 1}, 100, DEFAULT_MEMORY_REQUEST, id="hugepages-and-extended",
        ),
    ],
)  # fmt: skip
def test_pod_requests(load, spec, requests, nonzero_cpu, nonzero_memory):
    (pod,) = only(load(pod_yaml(spec=spec)), "Pod")
    assert pod.spec.requests == requests
    assert (pod.spec.nonzero_milli_cpu, pod.spec.nonzero_memory) == (nonzero_cpu, nonzero_memory)


def test_pod_spec_fields(load):
    trace = load(
        pod_yaml(
            "w-0",
            namespace="ml",
            annotations="{gangsim.dev/duration: 1h30m, gangsim.dev/checkpoint-interval: 600, gangsim.dev/rendezvous-timeout: 5m}",
            spec="""
            nodeSelector: {gpu: a100}
            schedulerName: my-scheduler
            nodeName: n1
            schedulingGroup: {podGroupName: pg-0}
            schedulingGates: [{name: example.com/wait}]
            terminationGracePeriodSeconds: 5
            tolerations:
            - {key: gpu, operator: Exists, effect: NoSchedule}
            - {key: zone, value: a}
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: rank, operator: Gt, values: ["3"]}]
                    matchFields: [{key: metadata.name, operator: In, values: [n1]}]
                preferredDuringSchedulingIgnoredDuringExecution:
                - {weight: 10, preference: {matchExpressions: [{key: zone, operator: In, values: [a, b]}]}}
              podAntiAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                - {labelSelector: {matchLabels: {app: x}}, topologyKey: kubernetes.io/hostname}
            containers: [{name: c, image: x, env: [{name: A, value: b}], volumeMounts: []}]
            volumes: [{name: cfg, configMap: {name: x}}]
            restartPolicy: Never
            """,
        )
    )
    (pod,) = only(trace, "Pod")
    s = pod.spec
    assert pod.key == "ml/w-0"
    assert (s.duration_ms, s.checkpoint_interval_ms, s.rendezvous_timeout_ms) == (5_400_000, 600_000, 300_000)
    assert s.node_selector == {"gpu": "a100"}
    assert (s.scheduler_name, s.node_name, s.scheduling_group) == ("my-scheduler", "n1", "pg-0")
    assert s.scheduling_gates == ("example.com/wait",)
    assert s.termination_grace_ms == 5000
    assert s.tolerations == (Toleration("gpu", "Exists", "", "NoSchedule"), Toleration("zone", "Equal", "a", ""))
    assert s.affinity.node_required == (
        NodeSelectorTerm((Requirement("rank", "Gt", ("3",)),), (Requirement("metadata.name", "In", ("n1",)),)),
    )
    assert s.affinity.node_preferred[0].weight == 10
    assert s.affinity.pod_anti_affinity_required == (
        PodAffinityTerm(LabelSelector((("app", "x"),)), (), None, "kubernetes.io/hostname"),
    )
    assert s.affinity.has_pod_affinity


# --- nodes and pools ----------------------------------------------------------------------------


def test_node_allocatable_capacity_and_defaults(load):
    trace = load(
        """
        apiVersion: v1
        kind: Node
        metadata: {name: a, labels: {gpu: a100}}
        spec:
          taints: [{key: gpu, value: "true", effect: NoSchedule}]
          unschedulable: true
          providerID: aws:///x
        status:
          capacity: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "250"}
          allocatable: {cpu: 95500m, memory: 900Gi, nvidia.com/gpu: "8"}
          conditions: [{type: Ready, status: "True"}]
        ---
        apiVersion: v1
        kind: Node
        metadata: {name: b, labels: {kubernetes.io/hostname: custom}}
        status: {capacity: {cpu: "4"}}
        """
    )
    a, b = only(trace, "Node")
    assert a == Node(
        "a",
        {"gpu": "a100", "kubernetes.io/hostname": "a"},
        {"cpu": 95_500, "memory": 900 * Gi, "nvidia.com/gpu": 8, "pods": 110},
        (Taint("gpu", "true", "NoSchedule"),),
        True,
        None,
        a.source,
    )
    assert b.allocatable == {"cpu": 4000, "pods": 110}
    assert b.labels == {"kubernetes.io/hostname": "custom"}


def test_node_pool_expansion_and_remove_at(load):
    trace = load(
        """
        apiVersion: gangsim.dev/v1alpha1
        kind: NodePool
        metadata:
          name: gpu
          annotations: {gangsim.dev/arrival: 1m, gangsim.dev/remove-at: 2h}
        spec:
          count: 3
          template:
            metadata: {labels: {pool: gpu}}
            spec: {taints: [{key: gpu, effect: NoSchedule}]}
            status: {allocatable: {cpu: "32", nvidia.com/gpu: "8"}}
        """
    )
    got = [(e.at_ms, e.op, e.name, e.order) for e in trace.events]
    assert got == [
        (60_000, Op.CREATE, "gpu-0", (0, 0, 0, 0)),
        (60_000, Op.CREATE, "gpu-1", (0, 0, 0, 1)),
        (60_000, Op.CREATE, "gpu-2", (0, 0, 0, 2)),
        (7_200_000, Op.DELETE, "gpu-0", (0, 0, 0, 2**31, 0)),
        (7_200_000, Op.DELETE, "gpu-1", (0, 0, 0, 2**31, 1)),
        (7_200_000, Op.DELETE, "gpu-2", (0, 0, 0, 2**31, 2)),
    ]
    node = trace.events[1].obj
    assert node.pool == "gpu"
    assert node.labels == {"pool": "gpu", "kubernetes.io/hostname": "gpu-1"}
    assert node.allocatable == {"cpu": 32_000, "nvidia.com/gpu": 8, "pods": 110}
    assert node.taints == (Taint("gpu", "", "NoSchedule"),)


def test_node_pool_of_zero_nodes(load):
    trace = load("apiVersion: gangsim.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\nspec: {count: 0, template: {status: {capacity: {cpu: 1}}}}\n")
    assert trace.events == []


# --- priorities ---------------------------------------------------------------------------------

CLASSES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 10
preemptionPolicy: Never
"""
DEFAULT_CLASS = """
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: normal}
value: 100
globalDefault: true
"""


@pytest.mark.parametrize(
    ("classes", "fields", "want"),
    [
        pytest.param(CLASSES, "priorityClassName: high", ("high", 1000, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="class-value"),
        pytest.param(CLASSES, "priorityClassName: high\npriority: 1000", ("high", 1000, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="class-and-equal-priority"),
        pytest.param(CLASSES, "priorityClassName: batch", ("batch", 10, PreemptionPolicy.NEVER), id="class-preemption-policy"),
        pytest.param(CLASSES, "priorityClassName: batch\npreemptionPolicy: PreemptLowerPriority", ("batch", 10, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="own-preemption-policy-wins"),
        pytest.param(CLASSES, "priority: 7", ("", 7, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="direct-priority"),
        pytest.param(CLASSES, "", ("", 0, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="none-is-zero"),
        pytest.param(CLASSES + DEFAULT_CLASS, "", ("normal", 100, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="global-default"),
        pytest.param(CLASSES + DEFAULT_CLASS, "priority: 5", ("", 5, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="direct-beats-default"),
        pytest.param(CLASSES + DEFAULT_CLASS, "priorityClassName: high", ("high", 1000, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="class-beats-default"),
        pytest.param("", "priorityClassName: system-node-critical", ("system-node-critical", 2_000_001_000, PreemptionPolicy.PREEMPT_LOWER_PRIORITY), id="system-class"),
    ],
)
def test_pod_priority_resolution(load, classes, fields, want):
    spec = (fields + "\n" if fields else "") + "containers: [{name: c}]"
    # the pod comes first: classes resolve across the whole trace, whatever their position
    text = pod_yaml(spec=spec) + ("---\n" + classes.strip() if classes else "")
    (pod,) = only(load(text), "Pod")
    assert (pod.spec.priority_class_name, pod.spec.priority, pod.spec.preemption_policy) == want


def test_class_created_later_still_resolves(load):
    text = pod_yaml(spec="priorityClassName: late\ncontainers: [{name: c}]") + (
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: late\n"
        "  annotations: {gangsim.dev/arrival: 1h}\nvalue: 42\n"
    )
    trace = load(text)
    (pod,) = only(trace, "Pod")
    assert pod.spec.priority == 42
    assert [e.kind for e in trace.events] == ["Pod", "PriorityClass"]


# --- PodGroup and Workload ----------------------------------------------------------------------

PG = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: pg, namespace: ml, annotations: {{gangsim.dev/rendezvous-timeout: 10m}}}}
spec:
{spec}
"""


@pytest.mark.parametrize(
    ("spec", "kind", "min_count", "mode", "priority", "topology"),
    [
        pytest.param("  schedulingPolicy: {gang: {minCount: 4}}", PolicyKind.GANG, 4, DisruptionMode.SINGLE, None, (), id="gang-default-single"),
        pytest.param("  schedulingPolicy: {basic: {}}", PolicyKind.BASIC, 1, DisruptionMode.SINGLE, None, (), id="basic"),
        pytest.param("  schedulingPolicy: {gang: {minCount: 2}}\n  disruptionMode: {all: {}}", PolicyKind.GANG, 2, DisruptionMode.ALL, None, (), id="all"),
        pytest.param("  schedulingPolicy: {basic: {}}\n  disruptionMode: {single: {}}", PolicyKind.BASIC, 1, DisruptionMode.SINGLE, None, (), id="basic-single"),
        pytest.param("  schedulingPolicy: {gang: {minCount: 2}}\n  priority: 5", PolicyKind.GANG, 2, DisruptionMode.SINGLE, 5, (), id="direct-priority"),
        pytest.param(
            "  schedulingPolicy: {gang: {minCount: 2}}\n  schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}]}",
            PolicyKind.GANG, 2, DisruptionMode.SINGLE, None, ("topology.kubernetes.io/zone",), id="topology",
        ),
    ],
)  # fmt: skip
def test_pod_group_policy(load, spec, kind, min_count, mode, priority, topology):
    (pg,) = only(load(PG.format(spec=spec)), "PodGroup")
    assert isinstance(pg, PodGroup)
    p = pg.policy
    assert (p.kind, p.min_count, p.disruption_mode, p.priority, p.topology_keys) == (kind, min_count, mode, priority, topology)
    assert pg.rendezvous_timeout_ms == 600_000


def test_pod_group_priority_from_global_default(load):
    text = PG.format(spec="  schedulingPolicy: {basic: {}}") + DEFAULT_CLASS
    (pg,) = only(load(text), "PodGroup")
    assert (pg.policy.priority_class_name, pg.policy.priority, pg.priority) == ("normal", 100, 100)


def test_workload(load):
    trace = load(
        """
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: Workload
        metadata: {name: bench, namespace: ml}
        spec:
          controllerRef: {apiGroup: batch, kind: Job, name: bench}
          podGroupTemplates:
          - {name: worker, schedulingPolicy: {gang: {minCount: 16}}, disruptionMode: {all: {}}}
          - {name: driver, schedulingPolicy: {basic: {}}, priority: 3}
        """
    )
    (w,) = only(trace, "Workload")
    assert isinstance(w, Workload)
    assert w.controller_ref == ("batch", "Job", "bench")
    assert [(t.name, t.policy.kind, t.policy.min_count, t.policy.disruption_mode, t.policy.priority) for t in w.templates] == [
        ("worker", PolicyKind.GANG, 16, DisruptionMode.ALL, None),
        ("driver", PolicyKind.BASIC, 1, DisruptionMode.SINGLE, 3),
    ]


# --- Job and PDB --------------------------------------------------------------------------------


def test_job_template_and_inherited_annotations(load):
    trace = load(
        """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
          namespace: ml
          annotations: {gangsim.dev/duration: 2h, gangsim.dev/rendezvous-timeout: 10m, gangsim.dev/arrival: 30s}
        spec:
          parallelism: 4
          completions: 8
          backoffLimit: 3
          template:
            metadata:
              labels: {app: train}
              annotations: {gangsim.dev/duration: 1h}
            spec:
              containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]
              restartPolicy: Never
        """
    )
    (job,) = only(trace, "Job")
    assert isinstance(job, Job)
    assert trace.events[0].at_ms == 30_000
    assert (job.parallelism, job.template.gpus, job.template.labels) == (4, 8, {"app": "train"})
    assert (job.template.duration_ms, job.template.rendezvous_timeout_ms) == (3_600_000, 600_000)
    assert (job.completions, job.indexed, job.backoff_limit, job.active_deadline_ms, job.waves) == (8, False, 3, None, True)
    assert trace.warnings == []


def test_job_parallelism_defaults_to_one(load):
    (job,) = only(load("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: c}]}}}\n"), "Job")
    assert job.parallelism == 1


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        pytest.param("minAvailable: 3", (3, None), id="min-int"),
        pytest.param("maxUnavailable: 25%", (None, "25%"), id="max-percent"),
    ],
)
def test_pdb(load, fields, want):
    text = f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b, namespace: ml}}\nspec:\n  selector: {{matchLabels: {{app: x}}}}\n  {fields}\n"
    (pdb,) = only(load(text), "PodDisruptionBudget")
    assert (pdb.min_available, pdb.max_unavailable) == want
    assert pdb.selector == LabelSelector((("app", "x"),))


def test_status_is_ignored_with_one_warning(load):
    pods = "---\n".join(pod_yaml(f"p{i}") + "status: {phase: Running}\n" for i in range(3))
    trace = load(pods + "---\n" + node_yaml())
    assert trace.warnings == ["ignored status of 3 Pods (e.g. Pod default/p0): gangsim replays objects, not their recorded state"]
