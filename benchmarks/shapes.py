"""Benchmark trace shapes, built directly as ``api`` objects (loading is measured separately)."""

from __future__ import annotations

from dataclasses import replace

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import DEFAULT_MEMORY_REQUEST, Job, Node, Pod, PodGroup, PodGroupPolicy, PodSpec, PolicyKind, Source
from gangsim.api.trace import Op, Trace, TraceEvent

SRC = Source("benchmark")
GI = 2**30


def _node(name: str, cpu: int, memory_gi: int, gpus: int = 0) -> Node:
    alloc = {"cpu": cpu * 1000, "memory": memory_gi * GI, "pods": 110}
    if gpus:
        alloc["nvidia.com/gpu"] = gpus
    return Node(name, {"kubernetes.io/hostname": name}, alloc, source=SRC)


def _events(objs: list[tuple[int, str, object]]) -> list[TraceEvent]:
    out = []
    for i, (at, kind, obj) in enumerate(objs):
        out.append(TraceEvent(at, Op.CREATE, kind, getattr(obj, "namespace", ""), obj.name, obj, SRC, (0, i)))
    return out


def scheduling_basic(nodes: int = 5000, pods: int = 10_000) -> Trace:
    """scheduler_perf SchedulingBasic: small pods onto empty nodes, all arriving at once."""
    objs: list[tuple[int, str, object]] = [(0, "Node", _node(f"node-{i}", 4, 32)) for i in range(nodes)]
    spec = PodSpec(requests={"cpu": 100, "memory": 100 * 2**20}, nonzero_milli_cpu=100, nonzero_memory=100 * 2**20)
    objs += [(0, "Pod", Pod("default", f"pod-{i}", spec, source=SRC)) for i in range(pods)]
    t = Trace("scheduling-basic", _events(objs))
    return t


def gang_shape(nodes: int = 5000, gangs: int = 3000, size: int = 3, gpus_per_node: int = 0, gpus_per_pod: int = 0, blocks: int = 0) -> Trace:
    """scheduler_perf PodGroup shape: ``gangs`` gangs of ``size`` pods, one Job + PodGroup each.
    ``blocks``: the nodes are split into that many ``block`` domains (consecutive nodes), every
    PodGroup must fit in one block and the TopologyAwareWorkloadScheduling gate is on."""
    objs: list[tuple[int, str, object]] = [(0, "Node", _node(f"node-{i}", 96 if gpus_per_node else 4, 512 if gpus_per_node else 32, gpus_per_node)) for i in range(nodes)]
    if blocks:
        per_block = -(-nodes // blocks)
        objs = [(at, kind, replace(n, labels={**n.labels, "block": f"block-{i // per_block}"})) for i, (at, kind, n) in enumerate(objs)]
    req = {"cpu": 100, "memory": 100 * 2**20}
    if gpus_per_pod:
        req = {"cpu": 1000, "memory": 8 * GI, "nvidia.com/gpu": gpus_per_pod}
    for g in range(gangs):
        name = f"gang-{g}"
        spec = PodSpec(requests=dict(req), nonzero_milli_cpu=req["cpu"], nonzero_memory=req.get("memory", DEFAULT_MEMORY_REQUEST), scheduling_group=name)
        objs.append((0, "PodGroup", PodGroup("default", name, PodGroupPolicy(PolicyKind.GANG, size, topology_keys=("block",) if blocks else ()), source=SRC)))
        objs.append((0, "Job", Job("default", name, size, spec, source=SRC)))
    if blocks:
        return Trace(f"gangs-{gangs}x{size}-{blocks}-blocks", _events(objs), config=SchedulerConfig(topology_aware_workload_scheduling=True))
    return Trace(f"gangs-{gangs}x{size}", _events(objs))


def preemption_shape(nodes: int = 1000, low_gangs: int = 125, high_gangs: int = 50, size: int = 8, mode: str = "single") -> Trace:
    """scheduler_perf-style gang preemption: the cluster is full of low-priority gangs (one 8-GPU
    pod per node), high-priority gangs arrive one a minute and must preempt."""
    from gangsim.api.objects import DisruptionMode

    objs: list[tuple[int, str, object]] = [(0, "Node", _node(f"node-{i}", 96, 512, 8)) for i in range(nodes)]
    req = {"cpu": 8000, "memory": 64 * GI, "nvidia.com/gpu": 8}
    for g in range(low_gangs):
        name = f"low-{g}"
        spec = PodSpec(requests=dict(req), nonzero_milli_cpu=8000, nonzero_memory=64 * GI, scheduling_group=name, priority=100, termination_grace_ms=0)
        policy = PodGroupPolicy(PolicyKind.GANG, size, DisruptionMode(mode), priority=100)
        objs.append((0, "PodGroup", PodGroup("default", name, policy, source=SRC)))
        objs.append((0, "Job", Job("default", name, size, spec, source=SRC)))
    for g in range(high_gangs):
        name = f"high-{g}"
        at = 60_000 * (g + 1)
        spec = PodSpec(requests=dict(req), nonzero_milli_cpu=8000, nonzero_memory=64 * GI, scheduling_group=name, priority=1000, duration_ms=1_800_000)
        objs.append((at, "PodGroup", PodGroup("default", name, PodGroupPolicy(PolicyKind.GANG, size, priority=1000), source=SRC)))
        objs.append((at, "Job", Job("default", name, size, spec, source=SRC)))
    objs.sort(key=lambda o: o[0])
    return Trace(f"preemption-{mode}", _events(objs))


# ---- the same shapes as trace files, for the whole-process cases (``gangsim run FILE``) ----------
# Plain Kubernetes objects (the user contract of INTERFACE.md), so that every revision the
# harness compares (``--baseline``) reads the same bytes. Each yields one JSON document a line.

_NODE_ALLOCATABLE = {"cpu": "4", "memory": "32Gi", "pods": "110"}  # scheduler_perf node-default.yaml
_SMALL_REQUESTS = {"cpu": "100m", "memory": "100Mi"}  # as scheduling_basic above


def _node_docs(nodes: int):
    for i in range(nodes):
        name = f"node-{i}"
        yield {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
               "status": {"allocatable": _NODE_ALLOCATABLE}}  # fmt: skip


def _container() -> dict:
    return {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": dict(_SMALL_REQUESTS)}}


def scheduling_basic_docs(nodes: int = 5000, pods: int = 50_000):
    """scheduler_perf SchedulingBasic as a trace file: ``nodes`` Nodes, then ``pods`` Pods, all at t=0."""
    yield {"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": f"scheduling-basic-{nodes}x{pods}"}, "events": []}
    yield from _node_docs(nodes)
    for i in range(pods):
        yield {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": "default"}, "spec": {"containers": [_container()]}}


def gang_docs(nodes: int = 5000, gangs: int = 10_000, size: int = 3):
    """``gangs`` gangs of ``size`` small pods as a trace file: a PodGroup (minCount = size) and an
    Indexed Job of ``size`` pods each, all at t=0, on ``nodes`` Nodes (as gang_shape above)."""
    yield {"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": f"gangs-{nodes}x{gangs}x{size}"}, "events": []}
    yield from _node_docs(nodes)
    for g in range(gangs):
        name = f"gang-{g}"
        yield {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": "default"},
               "spec": {"schedulingPolicy": {"gang": {"minCount": size}}}}  # fmt: skip
        template = {"spec": {"restartPolicy": "Never", "containers": [_container()], "schedulingGroup": {"podGroupName": name}}}
        yield {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
               "spec": {"parallelism": size, "completions": size, "completionMode": "Indexed", "template": template}}  # fmt: skip
