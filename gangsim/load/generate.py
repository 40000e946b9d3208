"""Seeded synthetic traces (``gangsim generate``): node pools, Poisson job arrivals, gang-size,
GPU and duration distributions, a priority mix and optional node failures.

The output is ordinary Kubernetes-style documents (PriorityClass, NodePool, PodGroup, Job, Pod),
so a generated trace is read by the same loader as a hand-written one. Deterministic: the same
spec and seed give the same bytes. Like ``importers/``, it produces trace records and imports only
``gangsim.api``, ``gangsim.errors``, ``gangsim.load`` and third-party libraries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

import numpy as np

from gangsim.api.duration import format_duration_ms


@dataclass(frozen=True, slots=True)
class PoolSpec:
    name: str
    count: int
    cpu: int = 96
    memory_gi: int = 1024
    gpus: int = 8
    labels: tuple[tuple[str, str], ...] = ()
    topology: tuple[tuple[str, int], ...] = ()  # NodePool spec.topology: (label key, nodes per domain), outermost first


@dataclass(frozen=True, slots=True)
class GeneratorSpec:
    name: str = "synthetic"
    seed: int = 0
    pools: tuple[PoolSpec, ...] = (PoolSpec("gpu", 40),)
    jobs: int = 100
    hours: float = 24.0  # arrivals spread over this window (Poisson process)
    # gang size (pods) -> weight; each pod asks for ``gpus_per_pod`` GPUs
    gang_sizes: tuple[tuple[int, float], ...] = ((1, 0.35), (2, 0.2), (4, 0.15), (8, 0.15), (16, 0.08), (32, 0.05), (64, 0.02))
    gpus_per_pod: tuple[tuple[int, float], ...] = ((1, 0.5), (2, 0.2), (4, 0.1), (8, 0.2))
    duration_median_s: float = 3600.0
    duration_sigma: float = 1.0  # lognormal sigma
    duration_max_s: float = 12 * 3600.0
    # (class name, value, weight)
    priorities: tuple[tuple[str, int, float], ...] = (("batch-low", 100, 0.5), ("research", 1000, 0.35), ("prod-high", 10000, 0.15))
    checkpoint_interval_s: float | None = 1800.0
    node_failures: int = 0
    gang_policy: bool = True  # multi-pod jobs get a PodGroup with gang.minCount = pods
    grace_s: int = 30
    namespace: str = "ml"
    # KEP-5732: multi-pod gangs get schedulingConstraints.topology [{key}] (needs the PodGroup)
    gang_topology_key: str = ""
    extra: dict = field(default_factory=dict)


def _choice(rng: np.random.Generator, table: tuple[tuple, ...], weight_index: int = -1):
    weights = np.array([row[weight_index] for row in table], dtype=float)
    i = int(rng.choice(len(table), p=weights / weights.sum()))
    return table[i]


def generate(spec: GeneratorSpec) -> Iterator[dict]:
    """Yield the trace's documents in creation order."""
    rng = np.random.default_rng(spec.seed)
    yield {"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": spec.name}, "events": []}
    for name, value, _ in spec.priorities:
        yield {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    for pool in spec.pools:
        alloc = {"cpu": str(pool.cpu), "memory": f"{pool.memory_gi}Gi", "pods": "110"}
        if pool.gpus:
            alloc["nvidia.com/gpu"] = str(pool.gpus)
        tmpl: dict = {"status": {"allocatable": alloc}}
        if pool.labels:
            tmpl["metadata"] = {"labels": dict(pool.labels)}
        pool_spec: dict = {"count": pool.count, "template": tmpl}
        if pool.topology:
            pool_spec["topology"] = [{"key": key, "nodes": n} for key, n in pool.topology]
        yield {"apiVersion": "gangsim.dev/v1alpha1", "kind": "NodePool", "metadata": {"name": pool.name}, "spec": pool_spec}
    horizon_ms = int(spec.hours * 3_600_000)
    # node failures: whole nodes of the first pool fail at uniform times (remove-at on a patch
    # would be immutable, so failures are Trace delete events)
    failures = []
    if spec.node_failures and spec.pools:
        pool = spec.pools[0]
        picks = rng.choice(pool.count, size=min(spec.node_failures, pool.count), replace=False)
        for idx in sorted(int(i) for i in picks):
            failures.append((int(rng.integers(horizon_ms // 10, horizon_ms)), f"{pool.name}-{idx}"))
    rate_per_ms = spec.jobs / max(horizon_ms, 1)
    t = 0.0
    pool_gpus = max((p.gpus for p in spec.pools), default=0)
    for j in range(spec.jobs):
        t += rng.exponential(1.0 / rate_per_ms) if rate_per_ms > 0 else 0.0
        at_ms = min(int(t) // 1000 * 1000, horizon_ms)
        size = int(_choice(rng, spec.gang_sizes)[0])
        gpus = int(_choice(rng, spec.gpus_per_pod)[0])
        if pool_gpus:
            gpus = min(gpus, pool_gpus)
        prio_name = _choice(rng, spec.priorities)[0]
        dur_s = min(spec.duration_max_s, max(60.0, math.exp(math.log(spec.duration_median_s) + spec.duration_sigma * rng.standard_normal())))
        dur_ms = int(dur_s) * 1000
        name = f"job-{j:05d}"
        annotations = {"gangsim.dev/arrival": format_duration_ms(at_ms), "gangsim.dev/duration": format_duration_ms(dur_ms)}
        if spec.checkpoint_interval_s:
            annotations["gangsim.dev/checkpoint-interval"] = format_duration_ms(int(spec.checkpoint_interval_s * 1000))
        pod_spec: dict = {
            "priorityClassName": prio_name,
            "terminationGracePeriodSeconds": spec.grace_s,
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "worker",
                    "image": "example/train:latest",
                    "resources": {
                        "requests": {"cpu": str(max(1, gpus * 8)), "memory": f"{max(8, gpus * 64)}Gi"},
                        "limits": {"nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
        }
        if spec.gang_policy and size > 1:
            pod_spec["schedulingGroup"] = {"podGroupName": name}
            group: dict = {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": spec.namespace, "annotations": {"gangsim.dev/arrival": format_duration_ms(at_ms)}},
                "spec": {"schedulingPolicy": {"gang": {"minCount": size}}, "priorityClassName": prio_name},
            }
            if spec.gang_topology_key:
                group["spec"]["schedulingConstraints"] = {"topology": [{"key": spec.gang_topology_key}]}
            yield group
        yield {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": spec.namespace, "annotations": annotations},
            "spec": {"parallelism": size, "completions": size, "completionMode": "Indexed", "template": {"spec": pod_spec}},
        }
    if failures:
        yield {
            "apiVersion": "gangsim.dev/v1alpha1",
            "kind": "Trace",
            "metadata": {"name": f"{spec.name}-node-failures"},
            "events": [{"at": format_duration_ms(at), "delete": {"kind": "Node", "name": node}} for at, node in sorted(failures)],
        }


def to_yaml(docs: Iterator[dict]) -> str:
    import yaml

    Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(list(docs), Dumper=Dumper, sort_keys=False, default_flow_style=False, explicit_start=True)


def to_jsonl(docs: Iterator[dict]) -> bytes:
    import orjson

    return b"".join(orjson.dumps(d) + b"\n" for d in docs)


def write_yaml(docs: Iterable[dict], out: IO[bytes]) -> int:
    """``to_yaml`` streamed one document at a time (same bytes); returns the document count."""
    import yaml

    Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    n = 0
    for doc in docs:
        out.write(yaml.dump(doc, Dumper=Dumper, sort_keys=False, default_flow_style=False, explicit_start=True).encode())
        n += 1
    return n


def write_jsonl(docs: Iterable[dict], out: IO[bytes]) -> int:
    """``to_jsonl`` streamed; returns the line count."""
    import orjson

    n = 0
    for doc in docs:
        out.write(orjson.dumps(doc) + b"\n")
        n += 1
    return n


# --- presets -----------------------------------------------------------------------------------

_A100 = PoolSpec("a100", 24, cpu=96, memory_gi=1024, gpus=8, labels=(("gpu", "a100"),))
_T4 = PoolSpec("t4", 16, cpu=32, memory_gi=256, gpus=4, labels=(("gpu", "t4"),))

PRESETS: dict[str, tuple[str, GeneratorSpec]] = {
    "mixed-day": (
        "traces/mixed-day.yaml: 220 jobs over 24 h on 24 x 8-GPU a100 + 16 x 4-GPU t4 nodes, 2 node failures (seed 7)",
        GeneratorSpec(name="mixed-day", seed=7, pools=(_A100, _T4), jobs=220, hours=24.0, node_failures=2),
    ),
    "small": (
        "a quick look: 40 jobs over 4 h on 8 x 8-GPU nodes (seed 0)",
        GeneratorSpec(name="small", seed=0, pools=(PoolSpec("gpu", 8),), jobs=40, hours=4.0, gang_sizes=((1, 0.5), (2, 0.25), (4, 0.15), (8, 0.1))),
    ),
    "benchmark-basic": (
        "scheduler throughput: 10,000 jobs over 24 h on 1,000 x 8-GPU nodes, default mixes (seed 1)",
        GeneratorSpec(name="benchmark-basic", seed=1, pools=(PoolSpec("gpu", 1000),), jobs=10_000, hours=24.0),
    ),
    "gang-heavy": (
        "large gangs (8-32 pods of 8 GPUs) on 128 x 8-GPU nodes, 100 jobs over 12 h, 2 node failures (seed 3)",
        GeneratorSpec(
            name="gang-heavy", seed=3, pools=(PoolSpec("gpu", 128),), jobs=100, hours=12.0,
            gang_sizes=((1, 0.2), (8, 0.4), (16, 0.25), (32, 0.15)), gpus_per_pod=((8, 1.0),), node_failures=2,
        ),
    ),
}


def preset(name: str) -> GeneratorSpec:
    try:
        return PRESETS[name][1]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}") from None
