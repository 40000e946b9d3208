"""Builders for tests, after kube's ``testing/wrappers.go``: objects in a line, traces in a few."""

from __future__ import annotations

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import (
    CompositePodGroup,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Affinity,
    DisruptionMode,
    Job,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PodGroupPolicy,
    PodSpec,
    PolicyKind,
    PreemptionPolicy,
    Source,
    Taint,
    Toleration,
)
from gangsim.api.selectors import LabelSelector
from gangsim.api.trace import Op, Trace, TraceEvent

GI = 2**30
SRC = Source("test.yaml")


def make_node(name: str, *, cpu: float = 0, gpus: int = 0, memory_gi: int = 0, pods: int = 110, labels: dict | None = None,
              taints: tuple[Taint, ...] = (), unschedulable: bool = False) -> Node:
    alloc = {"cpu": int(cpu * 1000), "memory": memory_gi * GI, "pods": pods}
    if gpus:
        alloc["nvidia.com/gpu"] = gpus
    lab = {"kubernetes.io/hostname": name}
    lab.update(labels or {})
    return Node(name=name, labels=lab, allocatable=alloc, taints=taints, unschedulable=unschedulable, source=SRC)


def make_spec(*, cpu: float = 0, gpus: int = 0, memory_gi: float = 0, priority: int = 0, group: str = "",
              duration_s: float | None = None, checkpoint_s: float | None = None, rendezvous_s: float | None = None,
              labels: dict | None = None, node_selector: dict | None = None, affinity: Affinity | None = None,
              tolerations: tuple[Toleration, ...] = (), grace_s: float = 30, preemption_policy: str = "PreemptLowerPriority",
              node_name: str = "", scheduler_name: str = "default-scheduler", gates: tuple[str, ...] = ()) -> PodSpec:
    req = {}
    if cpu:
        req["cpu"] = int(round(cpu * 1000))
    if memory_gi:
        req["memory"] = int(memory_gi * GI)
    if gpus:
        req["nvidia.com/gpu"] = gpus
    return PodSpec(
        requests=req,
        nonzero_milli_cpu=req.get("cpu", DEFAULT_MILLI_CPU_REQUEST),
        nonzero_memory=req.get("memory", DEFAULT_MEMORY_REQUEST),
        labels=dict(labels or {}),
        node_selector=dict(node_selector or {}),
        affinity=affinity,
        tolerations=tolerations,
        priority=priority,
        preemption_policy=PreemptionPolicy(preemption_policy),
        scheduler_name=scheduler_name,
        node_name=node_name,
        scheduling_group=group,
        scheduling_gates=gates,
        termination_grace_ms=int(grace_s * 1000),
        duration_ms=None if duration_s is None else int(duration_s * 1000),
        checkpoint_interval_ms=None if checkpoint_s is None else int(checkpoint_s * 1000),
        rendezvous_timeout_ms=None if rendezvous_s is None else int(rendezvous_s * 1000),
    )


def make_pod(name: str, namespace: str = "default", **kw) -> Pod:
    return Pod(namespace=namespace, name=name, spec=make_spec(**kw), source=SRC)


def make_job(name: str, parallelism: int, namespace: str = "default", **kw) -> Job:
    return Job(namespace=namespace, name=name, parallelism=parallelism, template=make_spec(**kw), source=SRC)


def make_group(name: str, min_count: int = 1, namespace: str = "default", *, basic: bool = False, priority: int | None = None,
               mode: str = "single", preemption_policy: str | None = None, topology: tuple[str, ...] = (), parent: str | None = None) -> PodGroup:
    policy = PodGroupPolicy(
        kind=PolicyKind.BASIC if basic else PolicyKind.GANG,
        min_count=1 if basic else min_count,
        disruption_mode=DisruptionMode(mode),
        priority=priority,
        preemption_policy=PreemptionPolicy(preemption_policy) if preemption_policy else None,
        topology_keys=topology,
    )
    return PodGroup(namespace=namespace, name=name, policy=policy, source=SRC, parent=parent, workload_ref=("w", name) if parent else None)


def make_composite(name: str, min_group_count: int = 1, namespace: str = "default", *, basic: bool = False, priority: int | None = None,
                   topology: tuple[str, ...] = (), parent: str | None = None, mode: str = "single", preemption_policy: str | None = None) -> CompositePodGroup:
    policy = PodGroupPolicy(kind=PolicyKind.BASIC if basic else PolicyKind.GANG, min_count=1 if basic else min_group_count, priority=priority, topology_keys=topology,
                            disruption_mode=DisruptionMode(mode), preemption_policy=PreemptionPolicy(preemption_policy) if preemption_policy else None)
    return CompositePodGroup(namespace, name, policy, parent, ("w", name), SRC)


def make_pdb(name: str, match: dict, *, min_available=None, max_unavailable=None, namespace: str = "default") -> PodDisruptionBudget:
    return PodDisruptionBudget(namespace, name, LabelSelector(tuple(sorted(match.items()))), min_available, max_unavailable, source=SRC)


_KIND = {Node: "Node", Pod: "Pod", Job: "Job", PodGroup: "PodGroup", CompositePodGroup: "CompositePodGroup", PodDisruptionBudget: "PodDisruptionBudget"}


def create(obj, at_s: float = 0) -> TraceEvent:
    kind = _KIND[type(obj)]
    ns = getattr(obj, "namespace", "")
    return TraceEvent(int(round(at_s * 1000)), Op.CREATE, kind, ns, obj.name, obj, SRC)


def patch(obj, at_s: float) -> TraceEvent:
    kind = _KIND[type(obj)]
    return TraceEvent(int(round(at_s * 1000)), Op.PATCH, kind, getattr(obj, "namespace", ""), obj.name, obj, SRC)


def delete(kind: str, name: str, at_s: float, namespace: str = "") -> TraceEvent:
    if kind in ("Pod", "Job", "PodGroup", "PodDisruptionBudget") and not namespace:
        namespace = "default"
    return TraceEvent(int(round(at_s * 1000)), Op.DELETE, kind, namespace, name, None, SRC)


def make_trace(*events: TraceEvent, config: SchedulerConfig | None = None, horizon_s: float | None = None, name: str = "test") -> Trace:
    evs = [TraceEvent(e.at_ms, e.op, e.kind, e.namespace, e.name, e.obj, e.source, (0, i)) for i, e in enumerate(events)]
    t = Trace(name=name, events=evs, config=config or SchedulerConfig(), horizon_ms=None if horizon_s is None else int(horizon_s * 1000))
    t.sort()
    return t


NO_BACKOFF = SchedulerConfig(pod_initial_backoff_ms=0, pod_max_backoff_ms=0)


def run(trace: Trace, policy: str = "pod", **kw):
    from gangsim.sim.replay import replay

    return replay(trace, policy, check_invariants=True, **kw)


def placements(log, *, bound_only: bool = True) -> dict[str, str]:
    """pod name -> node of its latest bound incarnation."""
    out: dict[str, str] = {}
    for p in log.pods:
        if p.bound_ms is not None or not bound_only:
            out[p.pod.split("/", 1)[1]] = p.node
    return out


def pod_rows(log, name: str) -> list:
    return [p for p in log.pods if p.pod.split("/", 1)[1] == name]


def events_of(log, name: str, reason: str | None = None) -> list[tuple[int, str, str]]:
    out = []
    for i in range(len(log.ev_t_ms)):
        obj = log.ev_object[i]
        if obj.split("/", 1)[-1] == name and (reason is None or log.ev_reason[i] == reason):
            out.append((log.ev_t_ms[i], log.ev_reason[i], log.ev_message[i]))
    return out


def victims(log) -> list[str]:
    return sorted(v.victim_pod.split("/", 1)[1] for v in log.victims)


def load_generated(spec, path) -> Trace:
    """``gangsim generate``'s trace for ``spec`` (a ``GeneratorSpec``), written to ``path`` and loaded."""
    from gangsim.load import load_trace
    from gangsim.load.generate import generate, write_jsonl

    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    return load_trace([path])
