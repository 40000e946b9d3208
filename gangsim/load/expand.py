"""Defaulting and expansion: pod resource requests, NodePool → Nodes, Job annotation inheritance.

Pod requests follow ``k8s.io/component-helpers/resource.PodRequests``: the app containers add
up; restartable init containers (sidecars, ``restartPolicy: Always``) run beside them and are
added to that sum; an ordinary init container runs alone (beside the sidecars started before
it); the pod needs the larger of the two, per resource, plus ``spec.overhead``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from gangsim.api.devices import GPU_SHARE_ANNOTATION
from gangsim.api.objects import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Node, NodePool, Resources
from gangsim.api.quantity import CPU, MEMORY
from gangsim.load.meta import CHECKPOINT_INTERVAL, DURATION, RENDEZVOUS_TIMEOUT

HOSTNAME_LABEL = "kubernetes.io/hostname"
# Job annotations that a Job's pod template inherits unless it sets them itself.
INHERITED_ANNOTATIONS = (DURATION, CHECKPOINT_INTERVAL, RENDEZVOUS_TIMEOUT)


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, 0) + amount


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, 0):
            into[name] = amount


def pod_requests(app: Iterable[Mapping[str, int]], init: Iterable[tuple[Mapping[str, int], bool]], overhead: Mapping[str, int]) -> Resources:
    """Effective pod request per resource: max(Σ app + Σ sidecars, max init) + overhead.

    ``init`` items are (container request, is_sidecar) in spec order. Zero entries are dropped.
    """
    reqs: dict[str, int] = {}
    for c in app:
        _add(reqs, c)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c, sidecar in init:
        if sidecar:
            _add(reqs, c)
            _add(sidecars, c)
            running = dict(sidecars)
        else:
            running = dict(c)
            _add(running, sidecars)
        _max(init_peak, running)
    _max(reqs, init_peak)
    _add(reqs, overhead)
    return {name: amount for name, amount in reqs.items() if amount}


def nonzero(request: Mapping[str, int]) -> dict[str, int]:
    """A container's cpu/memory for scoring: a *missing* request counts as 100m / 200Mi."""
    return {
        CPU: request.get(CPU, DEFAULT_MILLI_CPU_REQUEST),
        MEMORY: request.get(MEMORY, DEFAULT_MEMORY_REQUEST),
    }


def pool_node(pool: NodePool, index: int) -> Node:
    """Node ``<pool>-<index>`` of a pool: the template with its own hostname label."""
    name = pool.node_name(index)
    labels = dict(pool.template.labels)
    labels.update(pool.domain_labels(index))
    labels[HOSTNAME_LABEL] = name
    return replace(pool.template, name=name, labels=labels, pool=pool.name, source=pool.source)


def pool_node_raw(pool_raw: Mapping, name: str, domains: Mapping[str, str] | None = None) -> dict:
    """The raw Node document a pool node stands for (what a later Node patch merges into)."""
    template = pool_raw.get("spec", {}).get("template") or {}
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    labels.update(domains or {})
    labels[HOSTNAME_LABEL] = name
    raw: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    pool_annotations = (pool_raw.get("metadata") or {}).get("annotations") or {}
    if GPU_SHARE_ANNOTATION in pool_annotations:  # the pool's share declaration is each node's
        raw["metadata"]["annotations"] = {GPU_SHARE_ANNOTATION: pool_annotations[GPU_SHARE_ANNOTATION]}
    for key in ("spec", "status"):
        if template.get(key) is not None:
            raw[key] = template[key]
    return raw


def inherit_times(job_times: Mapping[str, int], template_times: Mapping[str, int]) -> dict[str, int]:
    """Job-level duration / checkpoint / rendezvous annotations apply unless the template sets them."""
    out = {k: v for k, v in job_times.items() if k in INHERITED_ANNOTATIONS}
    out.update(template_times)
    return out
