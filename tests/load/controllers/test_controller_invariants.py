"""Property: manifests of every controller kind, generated, replay with the invariants of
tests/test_invariants.py — above all, under ``gang`` no gang a controller's PodGroup makes is ever
partially bound (whenever its pods bind, at least minCount of them run right after)."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim.api.objects import ControlledJob, Job
from gangsim.api.trace import Trace
from gangsim.load import load_trace
from gangsim.report import build_report
from gangsim.sim.replay import replay
from tests.test_invariants import check_all

GPUS = st.sampled_from((0, 1, 2, 4, 8))


def container(gpus: int) -> dict:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": limits}}


def template(gpus: int) -> dict:
    return {"spec": {"containers": [container(gpus)]}}


def meta(name: str, arrival_s: int, duration_m: int) -> dict:
    return {"name": name, "annotations": {"gangsim.dev/arrival": f"{arrival_s}s", "gangsim.dev/duration": f"{duration_m}m"}}


@st.composite
def jobset(draw, name, m):
    rjobs = [
        {"name": f"r{i}", "replicas": draw(st.integers(1, 3)), "template": {"spec": {"parallelism": draw(st.integers(1, 3)), "template": template(draw(GPUS))}}}
        for i in range(draw(st.integers(1, 2)))
    ]
    order = draw(st.sampled_from(("AnyOrder", "InOrder")))
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": m, "spec": {"startupPolicy": {"startupPolicyOrder": order}, "replicatedJobs": rjobs}}


@st.composite
def lws(draw, name, m):
    lwt = {"size": draw(st.integers(1, 4)), "workerTemplate": template(draw(GPUS))}
    if draw(st.booleans()):
        lwt["leaderTemplate"] = template(draw(GPUS))
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": m, "spec": {"replicas": draw(st.integers(1, 3)), "leaderWorkerTemplate": lwt}}


@st.composite
def pytorchjob(draw, name, m):
    workers = draw(st.integers(0, 5))
    specs = {"Master": {"replicas": 1, "template": template(draw(GPUS))}}
    if workers:
        specs["Worker"] = {"replicas": workers, "template": template(draw(GPUS))}
    spec = {"pytorchReplicaSpecs": specs}
    if draw(st.booleans()):
        spec["runPolicy"] = {"schedulingPolicy": {"minAvailable": draw(st.integers(1, workers + 1))}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": m, "spec": spec}


@st.composite
def raycluster(draw, name, m):
    groups = [
        {"groupName": f"g{i}", "replicas": draw(st.integers(0, 3)), "minReplicas": 0, "maxReplicas": 3, "numOfHosts": draw(st.integers(1, 2)), "template": template(draw(GPUS))}
        for i in range(draw(st.integers(0, 2)))
    ]
    spec = {"headGroupSpec": {"template": template(0)}, "workerGroupSpecs": groups, "enableInTreeAutoscaling": draw(st.booleans())}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": m, "spec": spec}


@st.composite
def volcano(draw, name, m):
    tasks = [{"name": f"t{i}", "replicas": draw(st.integers(1, 4)), "template": template(draw(GPUS))} for i in range(draw(st.integers(1, 2)))]
    spec = {"tasks": tasks}
    if draw(st.booleans()):
        spec["minAvailable"] = draw(st.integers(1, sum(t["replicas"] for t in tasks)))
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": m, "spec": spec}


@st.composite
def trainjob(draw, name, m):
    """A TrainingRuntime of the TrainJob's namespace (before it) and the TrainJob."""
    node = {"name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}, "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "x"}]}}}}}
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": f"rt-{name}"}, "spec": {"mlPolicy": {"numNodes": 1}, "template": {"spec": {"replicatedJobs": [node]}}}}
    trainer = {"numNodes": draw(st.integers(1, 6)), "resourcesPerNode": container(draw(GPUS))["resources"]}
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": m, "spec": {"runtimeRef": {"name": f"rt-{name}", "kind": "TrainingRuntime"}, "trainer": trainer}}
    return [runtime, job]


KINDS = (jobset, lws, pytorchjob, raycluster, volcano, trainjob)


@st.composite
def manifests(draw):
    nodes = draw(st.integers(1, 5))
    pool = {
        "apiVersion": "gangsim.dev/v1alpha1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {"count": nodes, "template": {"status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "8"}}}},
    }
    docs = [pool]
    for i in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(KINDS))
        name = f"w{i}"
        made = draw(kind(name, meta(name, draw(st.integers(0, 600)), draw(st.integers(1, 90)))))
        docs.extend(made if isinstance(made, list) else [made])
    return docs


@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(docs=manifests(), policy=st.sampled_from(("gang", "gang", "permit", "pod")))
def test_generated_controller_manifests_keep_the_invariants(tmp_path_factory, docs, policy):
    path = tmp_path_factory.mktemp("ctl") / "t.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    trace = load_trace([path])
    trace.horizon_ms = 4 * 3_600_000
    check_all(trace, policy)  # under gang: check_all_or_nothing over every controller PodGroup
    check_gang_members(trace, policy)


def check_gang_members(trace: Trace, policy: str) -> None:
    """Each PodGroup's row in the gangs table counts the pods its workload's controller made for
    it (an InOrder JobSet's later Jobs may still wait for the earlier ones: at most as many)."""
    expected: dict[str, int] = {}
    waits: set[str] = set()
    for ev in trace.events:
        if isinstance(ev.obj, Job):
            job = ev.obj
            for i in range(job.parallelism):
                key = f"{job.namespace}/{job.pod_spec(i).scheduling_group}"
                expected[key] = expected.get(key, 0) + 1
                if isinstance(job, ControlledJob) and job.start_after:
                    waits.add(key)
    gangs = build_report(replay(trace, policy)).tables["gangs"]
    got = dict(zip(gangs["gang"], gangs["pods"]))
    assert {k: v for k, v in got.items() if k not in waits} == {k: v for k, v in expected.items() if k not in waits}
    assert all(got.get(k, 0) <= expected[k] for k in waits)
