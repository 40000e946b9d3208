"""How many pods of one shape the cluster could hold if it were empty: the capacity checks of
``gangsim validate`` (a gang whose minCount pods never fit, a pod no node can hold, a trace
without nodes) and the "it can never start" verdict of ``gangsim explain``.

The nodes are every Node the trace ever creates (a NodePool is expanded by the loader), in their
last version, as if all existed at once and ran nothing: a gang that does not fit there fits
nowhere, whatever the timing. A node is ruled out by the static Filter rules (spec.nodeName,
unschedulable, untolerated NoSchedule/NoExecute taints, nodeSelector and required node affinity);
on the others a pod shape fits ``min(allocatable[r] // request[r])`` times over the resources it
requests, the ``pods`` slots included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gangsim.api.objects import Node, PodSpec, Taint
from gangsim.api.quantity import format_amount
from gangsim.api.selectors import node_selector_matches
from gangsim.api.trace import Op, Trace

if TYPE_CHECKING:
    from gangsim.validate.pitfalls import Pitfalls

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@dataclass(frozen=True, slots=True)
class Capacity:
    pods: int  # pods of the shape the empty cluster holds at most
    nodes: int  # nodes that hold at least one
    per_node_max: int  # the most one node holds
    limiting: str  # the resource that bounds most nodes' count ("" when no node qualifies)
    ruled_out: dict[str, int] = field(default_factory=dict)  # static rule -> nodes it rules out
    largest: dict[str, tuple[int, str]] = field(default_factory=dict)  # resource -> (most allocatable, node)


def trace_nodes(trace: Trace) -> list[Node]:
    """Every node the trace ever creates, in its last version, in creation order."""
    nodes: dict[str, Node] = {}
    for ev in trace.events:
        if ev.kind == "Node" and ev.op in (Op.CREATE, Op.PATCH) and isinstance(ev.obj, Node):
            nodes[ev.obj.name] = ev.obj
    return list(nodes.values())


def _static_rule(node: Node, spec: PodSpec) -> str:
    """The first static Filter rule that rules ``node`` out for ``spec`` ("" when none does)."""
    if spec.node_name and spec.node_name != node.name:
        return "spec.nodeName"
    tol = spec.tolerations
    if node.unschedulable and not any(t.tolerates(UNSCHEDULABLE_TAINT) for t in tol):
        return "unschedulable"
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in tol):
            return "taints"
    if any(node.labels.get(k) != v for k, v in spec.node_selector.items()):
        return "nodeSelector/affinity"
    aff = spec.affinity
    if aff is not None and aff.node_required is not None and not node_selector_matches(aff.node_required, node.labels, node.name):
        return "nodeSelector/affinity"
    return ""


def capacity(nodes: list[Node], spec: PodSpec) -> Capacity:
    """What the empty cluster of ``nodes`` holds of pods shaped like ``spec``."""
    requests = {r: v for r, v in spec.requests.items() if v > 0}
    requests.setdefault("pods", 1)
    ruled: dict[str, int] = {}
    largest: dict[str, tuple[int, str]] = {}
    total = holding = most = 0
    bounds: dict[str, int] = {}
    for node in nodes:
        for r in requests:
            have = node.allocatable.get(r, 0)
            if r not in largest or have > largest[r][0]:
                largest[r] = (have, node.name)
        rule = _static_rule(node, spec)
        if rule:
            ruled[rule] = ruled.get(rule, 0) + 1
            continue
        counts = {r: node.allocatable.get(r, 0) // v for r, v in requests.items() if not (r == "pods" and "pods" not in node.allocatable)}
        n = min(counts.values()) if counts else 0
        bound = min(counts, key=lambda r: (counts[r], r)) if counts else ""
        bounds[bound] = bounds.get(bound, 0) + 1
        total += n
        holding += n > 0
        most = max(most, n)
    limiting = min(bounds, key=lambda r: (-bounds[r], r)) if bounds else ""
    return Capacity(total, holding, most, limiting, dict(sorted(ruled.items())), largest)


def describe_requests(spec: PodSpec) -> str:
    """``8 nvidia.com/gpu, 1 cpu`` style, GPUs first, then by name."""
    items = sorted(((r, v) for r, v in spec.requests.items() if v > 0 and r != "pods"), key=lambda kv: (not kv[0].endswith("gpu"), kv[0]))
    return ", ".join(f"{format_amount(r, v)} {r}" for r, v in items) or "no requests"


def shortfall(cap: Capacity, needed: int) -> str:
    """Plain words for a shape that fits ``cap.pods`` times when ``needed`` are wanted."""
    out = f"even with the cluster empty at most {cap.pods} fit"
    if cap.pods:
        out += f" ({cap.nodes} node{'s' if cap.nodes != 1 else ''} hold{'s' if cap.nodes == 1 else ''} up to {cap.per_node_max} each, bounded by {cap.limiting})"
    if cap.ruled_out:
        out += "; ruled out: " + ", ".join(f"{n} node{'s' if n != 1 else ''} by {rule}" for rule, n in cap.ruled_out.items())
    return out + f"; {needed} needed"


def check(pitfalls: Pitfalls) -> None:
    """The capacity warnings of one trace (``no-nodes``, ``pod-fits-no-node``, ``gang-never-fits``);
    none for a trace with load errors (its nodes or pods may be the broken documents)."""
    nodes = trace_nodes(pitfalls.trace)
    if not pitfalls.members or pitfalls.findings.has_errors:
        return
    if not nodes:
        first = pitfalls.members[0]
        pitfalls.warn("no-nodes", first.source, first.ref, "the trace creates no Node or NodePool: no pod can ever be scheduled")
        return
    fits_none: set[int] = set()
    for i, m in enumerate(pitfalls.members):
        cap = capacity(nodes, m.spec)
        if cap.pods == 0:
            fits_none.add(i)
            lacking = [f"{format_amount(r, m.spec.requests[r])} {r} (the most any node has is {format_amount(r, have)}, {node})"
                       for r, (have, node) in cap.largest.items() if r in m.spec.requests and m.spec.requests[r] > have]  # fmt: skip
            if lacking:
                text = ("its pods request " if m.kind == "Job" else "requests ") + "; ".join(lacking)
            else:
                rules = ", ".join(f"{n} node{'s' if n != 1 else ''} by {rule}" for rule, n in cap.ruled_out.items())
                text = ("its pods are" if m.kind == "Job" else "is") + f" ruled out of every node ({rules})"
            pitfalls.warn("pod-fits-no-node", m.source, m.ref, f"{text}: no node can ever hold one")
    for key, g in pitfalls.groups.items():
        if not g.is_gang or not g.members or any(pitfalls.members.index(m) in fits_none for m in g.members):
            continue
        shapes = {describe_requests(m.spec) for m in g.members}
        if len(shapes) != 1:
            continue  # a mixed group: the heterogeneous-group warning covers it
        cap = capacity(nodes, g.members[0].spec)
        if cap.pods < g.min_count:
            pitfalls.warn(
                "gang-never-fits",
                g.pg.source,
                g.ref,
                f"needs minCount {g.min_count} pods of {shapes.pop()}; {shortfall(cap, g.min_count)}: the gang can never start",
            )
