"""NodePool sizes of a loaded trace, and the same trace with a pool resized.

A ``NodePool`` reaches the simulator as Node CREATE events named ``<pool>-<i>`` whose
``Node.pool`` is the pool's name (``gangsim.load`` expands it). Resizing is a transformation of
the loaded :class:`~gangsim.api.trace.Trace`, never of the files:

- **shrink to N**: the nodes of index ≥ N disappear with every event about them (their
  patches, deletions and failures);
- **grow to N**: nodes ``<pool>-<size>`` … ``<pool>-<N-1>`` are added as clones of the pool's
  first node: its CREATE, plus each later event on it that happens to *every* node of the pool at
  the same instant (a pool-wide deletion, ``remove-at`` or template patch). An event on one node
  only (a single node failure) stays with that node; clones do not copy it.

The pool's *size* is the number of node indices it ever had (a pool scaled up by a later patch
counts its largest size). Clones sort right after the pool's own nodes (same event order with
their index as the last element), so the rest of the trace keeps its order.

Kept apart from ``plan.py`` so that both the sweep runner and the planner can use it without an
import cycle.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, replace

from gangsim.api.objects import Node
from gangsim.api.trace import Op, Trace, TraceEvent
from gangsim.errors import UsageError

__all__ = ["PoolInfo", "pool_info", "pools", "resize_pools"]

HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class PoolInfo:
    name: str
    size: int  # node indices 0 … size-1 ever created
    gpus_per_node: int  # of the first node
    nodes: dict[str, int]  # node name → index


def pools(trace: Trace) -> dict[str, PoolInfo]:
    """Every NodePool of the trace, by name, in the order its first node appears."""
    found: dict[str, dict[str, int]] = {}
    gpus: dict[str, int] = {}
    for ev in trace.events:
        obj = ev.obj
        if ev.op is Op.CREATE and isinstance(obj, Node) and obj.pool:
            prefix = f"{obj.pool}-"
            suffix = obj.name[len(prefix):] if obj.name.startswith(prefix) else ""
            if not suffix.isdigit():
                continue  # not a pool-expanded name; leave it alone
            nodes = found.setdefault(obj.pool, {})
            if not nodes:
                gpus[obj.pool] = int(obj.allocatable.get(GPU, 0))
            nodes[obj.name] = int(suffix)
    return {
        name: PoolInfo(name, max(nodes.values()) + 1, gpus[name], nodes)
        for name, nodes in found.items()
    }


def pool_info(trace: Trace, name: str, option: str = "--pool") -> PoolInfo:
    """The pool called ``name``; a :class:`UsageError` listing the trace's pools when there is none."""
    known = pools(trace)
    if name not in known:
        listed = ", ".join(f"{p.name} ({p.size} nodes)" for p in known.values()) or "none"
        raise UsageError(f"{option} {name!r}: the trace has no NodePool of that name (NodePools: {listed})")
    return known[name]


def _rename(ev: TraceEvent, name: str, index: int) -> TraceEvent:
    obj = ev.obj
    if isinstance(obj, Node):
        labels = dict(obj.labels)
        if HOSTNAME_LABEL in labels:
            labels[HOSTNAME_LABEL] = name
        obj = replace(obj, name=name, labels=labels)
    order = ev.order[:-1] + (index,) if ev.order else (index,)
    return replace(ev, name=name, obj=obj, order=order)


def _resize(trace: Trace, info: PoolInfo, size: int) -> list[TraceEvent]:
    names = info.nodes
    if size < info.size:
        dropped = {n for n, i in names.items() if i >= size}
        return [e for e in trace.events if not (e.kind == "Node" and e.name in dropped)]
    if size == info.size:
        return list(trace.events)
    template = min(names, key=names.__getitem__)
    on_node: dict[str, set[tuple[int, Op]]] = {n: set() for n in names}
    template_events: list[TraceEvent] = []
    for e in trace.events:
        if e.kind == "Node" and e.name in on_node:
            on_node[e.name].add((e.at_ms, e.op))
            if e.name == template:
                template_events.append(e)
    create, later = template_events[0], template_events[1:]
    pool_wide = [e for e in later if all((e.at_ms, e.op) in seen for seen in on_node.values())]
    existing = {e.name for e in trace.events if e.kind == "Node"}
    clones: list[TraceEvent] = []
    for index in range(info.size, size):
        name = f"{info.name}-{index}"
        if name in existing:
            raise UsageError(f"--pool {info.name}: cannot grow to {size}: a Node named {name!r} already exists in the trace")
        clones.append(_rename(create, name, index))
        clones.extend(_rename(e, name, index) for e in pool_wide)
    clones.sort(key=_key)
    # a merge, not a sort: the trace's own events keep exactly their order
    return list(heapq.merge(trace.events, clones, key=_key))


def _key(ev: TraceEvent) -> tuple[int, tuple[int, ...]]:
    return (ev.at_ms, ev.order)


def resize_pools(trace: Trace, sizes: Mapping[str, int]) -> Trace:
    """A copy of ``trace`` with each named pool at the given node count (see the module docstring)."""
    if not sizes:
        return trace
    known = pools(trace)
    out = trace
    for name, size in sizes.items():
        if size < 0:
            raise UsageError(f"--pool {name}: a pool size must not be negative (got {size})")
        info = known.get(name) or pool_info(trace, name)
        out = replace(out, events=_resize(out, info, size), warnings=list(out.warnings), notices=list(out.notices))
    return out
