"""Benchmark trace shapes, built directly as ``api`` objects (loading is measured separately)."""

from __future__ import annotations

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


def gang_shape(nodes: int = 5000, gangs: int = 3000, size: int = 3, gpus_per_node: int = 0, gpus_per_pod: int = 0) -> Trace:
    """scheduler_perf PodGroup shape: ``gangs`` gangs of ``size`` pods, one Job + PodGroup each."""
    objs: list[tuple[int, str, object]] = [(0, "Node", _node(f"node-{i}", 96 if gpus_per_node else 4, 512 if gpus_per_node else 32, gpus_per_node)) for i in range(nodes)]
    req = {"cpu": 100, "memory": 100 * 2**20}
    if gpus_per_pod:
        req = {"cpu": 1000, "memory": 8 * GI, "nvidia.com/gpu": gpus_per_pod}
    for g in range(gangs):
        name = f"gang-{g}"
        spec = PodSpec(requests=dict(req), nonzero_milli_cpu=req["cpu"], nonzero_memory=req.get("memory", DEFAULT_MEMORY_REQUEST), scheduling_group=name)
        objs.append((0, "PodGroup", PodGroup("default", name, PodGroupPolicy(PolicyKind.GANG, size), source=SRC)))
        objs.append((0, "Job", Job("default", name, size, spec, source=SRC)))
    return Trace(f"gangs-{gangs}x{size}", _events(objs))
