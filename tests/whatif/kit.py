"""Shared bits of the what-if tests (plan, sweep): a small two-pool trace. The CLI runner and
the bundled traces' paths are in ``tests/cli_kit.py``."""

from __future__ import annotations

from pathlib import Path

# Two pools: `big` (3 nodes x 8 GPUs, all fail at 2h) and `small` (4 nodes x 2 GPUs); node big-1
# alone is patched unschedulable at 30m. A Job of three 8-GPU pods on big nodes (no gang policy:
# it needs all three) and a 4 x 2-GPU gang on small nodes: each pool is just big enough.
TWO_POOLS = """\
apiVersion: gangsim.dev/v1alpha1
kind: Trace
metadata: {name: two-pools}
horizon: 4h
events:
  - at: 30m
    patch: {kind: Node, name: big-1, spec: {unschedulable: true}}
---
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata:
  name: big
  annotations: {gangsim.dev/remove-at: 2h}
spec:
  count: 3
  template:
    metadata: {labels: {size: big}}
    status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8"}}
---
apiVersion: gangsim.dev/v1alpha1
kind: NodePool
metadata: {name: small}
spec:
  count: 4
  template:
    metadata: {labels: {size: small}}
    status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: solo, namespace: ml, annotations: {gangsim.dev/duration: 1h}}
spec:
  parallelism: 3
  template:
    spec:
      nodeSelector: {size: big}
      containers: [{name: w, resources: {limits: {nvidia.com/gpu: "8"}}}]
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: quad, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 4}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: quad, namespace: ml, annotations: {gangsim.dev/duration: 30m}}
spec:
  parallelism: 4
  template:
    spec:
      schedulingGroup: {podGroupName: quad}
      nodeSelector: {size: small}
      containers: [{name: w, resources: {limits: {nvidia.com/gpu: "2"}}}]
"""


def write_two_pools(tmp_path: Path) -> str:
    path = tmp_path / "two-pools.yaml"
    path.write_text(TWO_POOLS)
    return str(path)
