"""Workload controllers (gangsim.load.controllers): each kind, written as its project documents
it (the YAML files next to this module), expands into the pods its controller creates and the
Workload + PodGroups gangsim's chosen grouping creates; replays under every policy with its gangs
in the ``gangs`` table; unmodelled fields are errors naming the field, ignored ones one warning
per kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangsim.api.objects import Job, OwnedPods, PodGroup, Workload
from gangsim.api.trace import Op
from gangsim.errors import InputError
from gangsim.load import load_trace
from gangsim.report import build_report
from gangsim.sim.replay import replay
from tests.cli_kit import invoke

HERE = Path(__file__).parent
POOL = HERE / "pool.yaml"
POLICIES = ("pod", "permit", "gang")


def load(name: str):
    return load_trace([POOL, HERE / name])


def pods_of(trace) -> list[tuple[str, str, str]]:
    """(pod, PodGroup, labels) of every pod the expanded Jobs create, in creation order."""
    out = []
    for ev in trace.events:
        if ev.op is Op.CREATE and isinstance(ev.obj, Job):
            job = ev.obj
            for i in range(job.parallelism):
                spec = job.pod_spec(i)
                out.append((f"{job.namespace}/{job.pod_name(i)}", spec.scheduling_group, spec.labels))
    return out


def groups_of(trace) -> dict[str, int]:
    return {ev.obj.key: ev.obj.policy.min_count for ev in trace.events if ev.op is Op.CREATE and isinstance(ev.obj, PodGroup)}


# (fixture, pod names in creation order, PodGroup → minCount, pods per gang)
CASES = {
    "jobset.yaml": (
        ["default/paralleljobs-leader-0-0"] + [f"default/paralleljobs-workers-{j}-{i}" for j in range(2) for i in range(3)],
        {"default/jobset-paralleljobs-0": 7},
        {"default/jobset-paralleljobs-0": 7},
    ),
    "lws.yaml": (
        [f"default/leaderworkerset-sample-{g}{'-' + str(w) if w else ''}" for g in range(3) for w in range(4)],
        {f"default/leaderworkerset-leaderworkerset-sample-{g}": 4 for g in range(3)},
        {f"default/leaderworkerset-leaderworkerset-sample-{g}": 4 for g in range(3)},
    ),
    "pytorchjob.yaml": (
        ["kubeflow/pytorch-simple-master-0"] + [f"kubeflow/pytorch-simple-worker-{i}" for i in range(3)],
        {"kubeflow/pytorchjob-pytorch-simple-0": 3},  # runPolicy.schedulingPolicy.minAvailable
        {"kubeflow/pytorchjob-pytorch-simple-0": 4},
    ),
    "raycluster.yaml": (
        ["default/raycluster-kuberay-head-0", "default/raycluster-kuberay-workergroup-worker-0", "default/raycluster-kuberay-workergroup-worker-1"],
        {"default/raycluster-raycluster-kuberay-0": 3},  # head + desired replicas (no autoscaling)
        {"default/raycluster-raycluster-kuberay-0": 3},
    ),
    "rayjob.yaml": (
        ["default/rayjob-sample-head-0"] + [f"default/rayjob-sample-small-group-worker-{i}" for i in range(6)],
        {"default/rayjob-rayjob-sample-0": 3},  # autoscaling: head + minReplicas x numOfHosts
        {"default/rayjob-rayjob-sample-0": 7},
    ),
    "trainjob.yaml": (
        [f"kubeflow/pytorch-mnist-node-0-{i}" for i in range(3)],  # spec.trainer.numNodes over mlPolicy.numNodes
        {"kubeflow/trainjob-pytorch-mnist-0": 3},
        {"kubeflow/trainjob-pytorch-mnist-0": 3},
    ),
    "volcano.yaml": (
        ["default/tensorflow-dist-mnist-ps-0", "default/tensorflow-dist-mnist-worker-0", "default/tensorflow-dist-mnist-worker-1"],
        {"default/volcanojob-tensorflow-dist-mnist-0": 3},
        {"default/volcanojob-tensorflow-dist-mnist-0": 3},
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_expands_into_the_controllers_pods_and_one_workload(name):
    trace = load(name)
    pods, groups, _ = CASES[name]
    assert [p for p, _, _ in pods_of(trace)] == pods
    assert groups_of(trace) == groups
    assert all(group for _, group, _ in pods_of(trace))  # every pod names its PodGroup
    workloads = [ev.obj for ev in trace.events if isinstance(ev.obj, Workload)]
    assert len(workloads) == 1
    # creation order: the Workload, its PodGroups, then what creates pods (no pod waits at PreEnqueue)
    kinds = [ev.kind for ev in trace.events if ev.kind in ("Workload", "PodGroup", "Job")]
    assert kinds == sorted(kinds, key=["Workload", "PodGroup", "Job"].index)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", CASES)
def test_replays_with_its_gangs_in_the_gangs_table(name, policy):
    report = build_report(replay(load(name), policy))
    gangs = report.tables["gangs"]
    _, groups, members = CASES[name]
    assert dict(zip(gangs["gang"], gangs["pods"])) == members
    assert dict(zip(gangs["gang"], gangs["min_count"])) == groups
    assert set(gangs["state"]) == {"Completed"}  # everything fits: every gang runs its duration


def test_jobset_labels_pods_as_the_jobset_controller_does():
    _, _, labels = pods_of(load("jobset.yaml"))[2]  # workers Job 0, pod 1
    assert {k: v for k, v in labels.items() if k != "jobset.sigs.k8s.io/job-key"} == {
        "jobset.sigs.k8s.io/jobset-name": "paralleljobs",
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "2",
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/job-global-index": "1",
        "jobset.sigs.k8s.io/global-replicas": "3",
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "3",
        "jobset.sigs.k8s.io/job-group-index": "1",
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }
    assert len(labels["jobset.sigs.k8s.io/job-key"]) == 64  # sha256 of namespace/job name


def test_lws_leader_and_workers_use_their_own_templates_and_labels():
    pods = pods_of(load("lws.yaml"))
    leader, worker = pods[4], pods[5]  # group 1
    assert leader[2] == {"role": "leader", "leaderworkerset.sigs.k8s.io/name": "leaderworkerset-sample", "leaderworkerset.sigs.k8s.io/group-index": "1", "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert worker[2]["leaderworkerset.sigs.k8s.io/worker-index"] == "1" and "role" not in worker[2]
    trace = load("lws.yaml")
    group1 = next(ev.obj for ev in trace.events if isinstance(ev.obj, OwnedPods) and ev.name == "leaderworkerset-sample-1")
    assert group1.pod_spec(0).gpus == 0 and group1.pod_spec(1).gpus == 2
    assert group1.owner == "LeaderWorkerSet default/leaderworkerset-sample"


def test_durations_come_from_the_object_annotation():
    trace = load("pytorchjob.yaml")
    job = next(ev.obj for ev in trace.events if isinstance(ev.obj, Job))
    assert {job.pod_spec(i).duration_ms for i in range(job.parallelism)} == {20 * 60_000}


def test_trainjob_resources_per_node_replace_the_node_containers():
    trace = load("trainjob.yaml")
    job = next(ev.obj for ev in trace.events if isinstance(ev.obj, Job))
    assert job.template.requests == {"cpu": 4000, "memory": 16 * 2**30, "nvidia.com/gpu": 2}
    assert job.template.labels["jobset.sigs.k8s.io/jobset-name"] == "pytorch-mnist"


def test_trainjob_needs_its_runtime_earlier_in_the_trace(load_error):
    runtime, trainjob = (HERE / "trainjob.yaml").read_text().split("---\n")
    message = load_error(trainjob + "---\n" + runtime)
    assert message == (
        't.yaml:10: TrainJob kubeflow/pytorch-mnist: spec.runtimeRef.name: Invalid value: "torch-distributed": '
        "no ClusterTrainingRuntime torch-distributed earlier in the trace (a TrainJob's runtime must come before it)"
    )
    namespaced = load_error(runtime + "---\n" + trainjob.replace("    name: torch-distributed\n", "    name: torch-distributed\n    kind: TrainingRuntime\n"))
    assert "no TrainingRuntime torch-distributed in namespace kubeflow earlier in the trace" in namespaced


def test_an_error_in_the_runtime_names_the_runtime(write):
    runtime, trainjob = (HERE / "trainjob.yaml").read_text().split("---\n")
    anchor = "      replicatedJobs:\n        - name: node\n"
    write("rt.yaml", runtime.replace(anchor, anchor + "          dependsOn: [{name: init, status: Complete}]\n"))
    with pytest.raises(InputError) as info:
        load_trace(["rt.yaml", write("tj.yaml", trainjob)])
    assert str(info.value).startswith(
        "rt.yaml:16: ClusterTrainingRuntime torch-distributed (for TrainJob kubeflow/pytorch-mnist): "
        "spec.template.spec.replicatedJobs[0].dependsOn: Unsupported field"
    )


def test_volcano_pods_run_under_kube_scheduler_and_the_warning_says_so():
    trace = load("volcano.yaml")
    job = next(ev.obj for ev in trace.events if isinstance(ev.obj, Job))
    assert {job.pod_spec(i).scheduler_name for i in range(job.parallelism)} == {"default-scheduler"}
    assert "VolcanoJob: replayed under kube-scheduler (the --policy) to compare with Volcano's gang scheduling: spec.schedulerName (default volcano) is ignored" in trace.warnings


def test_ignored_fields_are_one_warning_per_kind():
    trace = load_trace([POOL, HERE / "volcano.yaml", HERE / "jobset.yaml", HERE / "rayjob.yaml"])
    ignored = [w for w in trace.warnings if "ignored fields" in w]
    assert ignored == [
        "VolcanoJob: ignored fields that do not change scheduling: spec.plugins, spec.policies, spec.queue, spec.tasks[1].policies",
        "JobSet: ignored fields that do not change scheduling: spec.replicatedJobs[0].template.spec.backoffLimit, spec.replicatedJobs[1].template.spec.backoffLimit",
        "RayJob: ignored fields that do not change scheduling: spec.entrypoint, spec.shutdownAfterJobFinishes, spec.ttlSecondsAfterFinished, spec.rayClusterSpec.rayVersion, spec.rayClusterSpec.headGroupSpec.rayStartParams, spec.rayClusterSpec.workerGroupSpecs[0].rayStartParams",
    ]


def test_a_template_naming_its_own_podgroup_gets_none_created(load):
    trace = load(
        """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {name: js, namespace: ml}
        spec:
          replicatedJobs:
          - name: w
            replicas: 2
            template:
              spec:
                parallelism: 3
                template:
                  spec:
                    schedulingGroup: {podGroupName: mine}
                    containers: [{name: c}]
        """
    )
    assert [ev.kind for ev in trace.events] == ["Job", "Job"]
    assert {ev.obj.template.scheduling_group for ev in trace.events} == {"mine"}


def test_deleting_a_workload_deletes_what_it_created(load):
    trace = load(
        """
        apiVersion: gangsim.dev/v1alpha1
        kind: Trace
        events:
        - at: 0s
          create:
            apiVersion: leaderworkerset.x-k8s.io/v1
            kind: LeaderWorkerSet
            metadata: {name: lws}
            spec:
              replicas: 2
              leaderWorkerTemplate: {size: 2, workerTemplate: {spec: {containers: [{name: c}]}}}
        - at: 1h
          delete: {kind: LeaderWorkerSet, name: lws}
        """
    )
    refs = [(e.at_ms, e.op.value, e.ref) for e in trace.events]
    assert refs[-5:] == [
        (3_600_000, "delete", "Job default/lws-1"),
        (3_600_000, "delete", "Job default/lws-0"),
        (3_600_000, "delete", "PodGroup default/leaderworkerset-lws-1"),
        (3_600_000, "delete", "PodGroup default/leaderworkerset-lws-0"),
        (3_600_000, "delete", "Workload default/leaderworkerset-lws"),
    ]


def test_a_volcano_job_is_deleted_by_its_own_api_version(load):
    trace = load(VOLCANO + "---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\nevents:\n- at: 1m\n  delete: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: vc}\n")
    assert [e.ref for e in trace.events if e.op is Op.DELETE] == ["Job default/vc", "PodGroup default/volcanojob-vc-0", "Workload default/volcanojob-vc"]


LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lws
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate: {spec: {containers: [{name: c}]}}
"""
JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
spec:
  replicatedJobs:
  - name: w
    template: {spec: {template: {spec: {containers: [{name: c}]}}}}
"""
PYTORCH = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: c}]}}}
"""
VOLCANO = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vc}
spec:
  tasks:
  - name: t
    replicas: 2
    template: {spec: {containers: [{name: c}]}}
"""
RAY = """
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: c}]}}}
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (JOBSET + "  suspend: true\n", "t.yaml:9: JobSet default/js: spec.suspend: Unsupported field: gangsim does not model suspended JobSets"),
        (JOBSET + "    dependsOn: [{name: x, status: Ready}]\n", "t.yaml:9: JobSet default/js: spec.replicatedJobs[0].dependsOn: Unsupported field: gangsim does not model replicatedJobs[].dependsOn"),
        (JOBSET.replace("  name: js\n", "  name: js\n  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}\n"), "t.yaml:5: JobSet default/js: metadata.annotations[alpha.jobset.sigs.k8s.io/exclusive-topology]: Unsupported field: gangsim does not model JobSet exclusive placement"),
        (JOBSET.replace("  - name: w\n", "  - name: a-name-long-enough-to-make-the-child-job-name-too-long-for-labels\n"), "t.yaml:7: JobSet default/js: spec.replicatedJobs[0].name: Invalid value: \"a-name-long-enough-to-make-the-child-job-name-too-long-for-labels\": the child Job name 'js-a-name-long-enough-to-make-the-child-job-name-too-long-for-labels-0' must be a DNS subdomain of at most 63 characters"),
        (JOBSET.replace("  - name: w\n", "  - name: w\n    replicas: 100001\n"), "t.yaml:8: JobSet default/js: spec.replicatedJobs[0].replicas: Invalid value: 100001: must be an integer between 0 and 100000"),
        (LWS + "  startupPolicy: LeaderReady\n", "t.yaml:9: LeaderWorkerSet default/lws: spec.startupPolicy: Unsupported field: gangsim does not model LeaderReady"),
        (PYTORCH.replace("    Master", "    Chief"), "t.yaml:6: PyTorchJob default/pt: spec.pytorchReplicaSpecs.Chief: Unsupported value: \"Chief\": supported values: \"Master\", \"Worker\""),
        (PYTORCH + "  elasticPolicy: {minReplicas: 1, maxReplicas: 4}\n", "t.yaml:7: PyTorchJob default/pt: spec.elasticPolicy: Unsupported field: gangsim does not model elastic PyTorchJobs"),
        (PYTORCH + "  runPolicy: {schedulingPolicy: {minAvailable: 2}}\n", "t.yaml:7: PyTorchJob default/pt: spec.runPolicy.schedulingPolicy.minAvailable: Invalid value: 2: must be between 1 and the number of pods (1)"),
        (PYTORCH + "  runPolicy: {schedulingPolicy: {priorityClass: nope}}\n", "t.yaml:7: PyTorchJob default/pt: spec.runPolicy.schedulingPolicy.priorityClass: Invalid value: \"nope\": no PriorityClass with name nope was found"),
        (VOLCANO.replace("    replicas: 2\n", "    replicas: 2\n    minAvailable: 1\n"), "t.yaml:8: VolcanoJob default/vc: spec.tasks[0].minAvailable: Unsupported field: gangsim does not model a task's own minAvailable"),
        (VOLCANO + "  minAvailable: 3\n", "t.yaml:9: VolcanoJob default/vc: spec.minAvailable: Invalid value: 3: must be between 1 and the number of pods (2)"),
        (RAY + "  workerGroupSpecs: [{groupName: g, minReplicas: 3, maxReplicas: 2, template: {spec: {containers: [{name: c}]}}}]\n", "t.yaml:6: RayCluster default/rc: spec.workerGroupSpecs[0].minReplicas: Invalid value: 3: must be less than or equal to maxReplicas (2)"),
        ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  clusterSelector: {ray.io/cluster: x}\n", "t.yaml:5: RayJob default/rj: spec.clusterSelector: Unsupported field: gangsim does not model RayJobs that run on an existing RayCluster"),
    ],
)
def test_unmodelled_fields_are_errors_naming_file_line_object_and_field(load_error, text, expected):
    assert load_error(text).startswith(expected)


def test_a_pod_count_above_the_limit_is_refused_before_expansion(load_error):
    message = load_error(LWS.replace("    size: 2\n", "    size: 1000\n") + "  replicas: 1000\n")
    assert message == "t.yaml:9: LeaderWorkerSet default/lws: spec.replicas: Invalid value: 1000000: would create 1000000 pods: must be no more than 100000 per object"


def test_a_workload_and_what_it_creates_cannot_be_patched(load_error):
    message = load_error(LWS + "---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\nevents:\n- at: 1m\n  patch: {kind: Job, name: lws-0, spec: {parallelism: 3}}\n")
    assert message.startswith("t.yaml:14: Job default/lws-0: cannot be patched: created by LeaderWorkerSet default/lws;")


def test_an_expanded_name_taken_by_another_object_is_a_duplicate(load_error):
    job = "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: lws-0}\nspec: {template: {spec: {containers: [{name: c}]}}}\n"
    message = load_error(LWS + job)
    assert message.startswith("t.yaml:10: Job default/lws-0: metadata.name: Duplicate value: \"lws-0\": already exists (created at t.yaml:1)")


def test_bad_manifest_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(LWS.lstrip() + "  startupPolicy: LeaderReady\n")
    res = invoke("run", path)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"gangsim: error: {path}:9: LeaderWorkerSet default/lws: spec.startupPolicy: Unsupported field: gangsim does not model LeaderReady (workers created once the leader is ready): use LeaderCreated"]


BUSY = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: busy, annotations: {gangsim.dev/duration: 10m}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, annotations: {gangsim.dev/duration: 1h}}
spec:
  startupPolicy: {startupPolicyOrder: ORDER}
  replicatedJobs:
  - name: driver
    template: {spec: {template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}}}}
  - name: workers
    replicas: 2
    template: {spec: {parallelism: 2, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}}
"""


@pytest.mark.parametrize("policy", POLICIES)
def test_jobset_in_order_creates_a_replicated_job_once_the_previous_one_runs(load, policy):
    report = build_report(replay(load(BUSY.replace("ORDER", "InOrder")), policy))
    created = dict(zip(report.tables["pods"]["pod"], report.tables["pods"]["created_s"]))
    assert created["default/js-driver-0-0"] == 0.0
    assert {created[f"default/js-workers-{j}-{i}"] for j in range(2) for i in range(2)} == {600.0}  # the driver binds at 10m
    gangs = report.tables["gangs"]
    assert dict(zip(gangs["gang"], gangs["min_count"])) == {"default/jobset-js-0": 1, "default/jobset-js-1": 4}  # one PodGroup per replicatedJob


def test_jobset_any_order_creates_every_job_at_once(load):
    report = build_report(replay(load(BUSY.replace("ORDER", "AnyOrder")), "gang"))
    assert set(report.tables["pods"].filter(report.tables["pods"]["pod"] != "default/busy")["created_s"]) == {0.0}
    assert list(report.tables["gangs"]["min_count"]) == [5]


LWS_NODES = """
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata: {name: n, annotations: {}}
spec: {count: 2, template: {status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}}}
---
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata: {name: spare}
spec: {count: 1, template: {status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}}}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws, annotations: {gangsim.dev/duration: 1h}}
spec:
  leaderWorkerTemplate:
    size: 2
    restartPolicy: POLICY
    workerTemplate: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}}
---
apiVersion: gangsim.dev/v1alpha1
kind: Trace
events:
- at: 10m
  delete: {kind: Node, name: n-1}
"""


@pytest.mark.parametrize(("policy", "leader_attempts"), [("RecreateGroupOnPodRestart", [0, 1]), ("None", [0])])
def test_lws_restart_policy_recreates_the_group_or_the_pod(load, policy, leader_attempts):
    pods = build_report(replay(load(LWS_NODES.replace("POLICY", policy)), "gang")).tables["pods"]
    rows = {(p, a): (e, r) for p, a, e, r in zip(pods["pod"], pods["attempt"], pods["ended_s"], pods["end_reason"])}
    assert rows[("default/lws-0-1", 0)] == (600.0, "NodeFailed")  # the worker on n-1
    assert [a for p, a in rows if p == "default/lws-0"] == leader_attempts
    if policy == "RecreateGroupOnPodRestart":
        assert rows[("default/lws-0", 0)] == (600.0, "Deleted")  # the controller deleted the leader with it
