"""Workload and PodGroup (scheduling.k8s.io/v1beta1, also v1alpha2) → api objects (SEMANTICS §1.2–1.3).

Messages are apimachinery's (handwritten v1alpha2-era validation, same rules as the declarative
v1beta1 tags): unions report ``must specify one of: `basic`, `gang``` / ``exactly one of …``.
"""

from __future__ import annotations

from gangsim.api.objects import DisruptionMode, PodGroup, PodGroupPolicy, PodGroupTemplate, PolicyKind, Source
from gangsim.errors import invalid, required
from gangsim.load.fields import Obj, Shown, check_name, check_qualified, duplicate, too_many
from gangsim.load.meta import RENDEZVOUS_TIMEOUT, Meta
from gangsim.load.priority import INT32_MAX, Priorities

MAX_TEMPLATES = 8  # WorkloadMaxPodGroupTemplates
MAX_TOPOLOGY = 1
_POLICY_KEYS = {"schedulingPolicy", "schedulingConstraints", "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"}
_UNMODELLED = {"resourceClaims": "gangsim does not model dynamic resource allocation (resource claims)"}


def _union(o: Obj, key: str, members: tuple[str, str]) -> str | None:
    """The one member set in union ``key``; None when the field itself is absent."""
    u = o.obj(key)
    if u is None:
        return None
    u.check_keys(set(members))
    chosen = [m for m in members if m in u]
    names = ", ".join(f"`{m}`" for m in members)
    if not chosen:
        raise o.error(key, invalid(o.fp(key), "", f"must specify one of: {names}"))
    if len(chosen) > 1:
        raise o.error(key, invalid(o.fp(key), "{" + ", ".join(f"`{m}`" for m in chosen) + "}", f"exactly one of {names} is required, but multiple fields are set"))
    return chosen[0]


def decode_policy(o: Obj, priorities: Priorities, *, count_key: str = "minCount") -> PodGroupPolicy:
    """The fields a PodGroupTemplate and a PodGroup share (a CompositePodGroup and its template:
    ``count_key="minGroupCount"``, kept in ``min_count``)."""
    kind = _union(o, "schedulingPolicy", ("basic", "gang"))
    if kind is None:
        raise o.error("schedulingPolicy", invalid(o.fp("schedulingPolicy"), "", "must specify one of: `basic`, `gang`"))
    policy = o.obj("schedulingPolicy")
    min_count = 1
    if kind == "basic":
        policy.obj("basic").check_keys(set())
    else:
        gang = policy.obj("gang")
        gang.check_keys({count_key})
        min_count = gang.int(count_key, hi=INT32_MAX) or 0  # int32, as in the API
        if min_count == 0:
            raise gang.error(count_key, required(gang.fp(count_key)))
        if min_count < 0:
            raise gang.error(count_key, invalid(gang.fp(count_key), min_count, "must be greater than zero"))
    mode = _union(o, "disruptionMode", ("single", "all")) or "single"
    if mode == "all" and kind == "basic":
        dm = o.obj("disruptionMode")
        raise dm.error("all", invalid(dm.fp("all"), Shown({}), "the disruptionMode `all` is not supported with the Basic scheduling policy"))
    topology: list[str] = []
    constraints = o.obj("schedulingConstraints")
    if constraints is not None:
        constraints.check_keys({"topology"})
        n = constraints.length("topology")
        if n > MAX_TOPOLOGY:
            raise constraints.error("topology", too_many(constraints.fp("topology"), n, MAX_TOPOLOGY))
        for t in constraints.objs("topology"):
            t.check_keys({"key"})
            topology.append(check_qualified(t, "key"))
    class_name, priority, pc = priorities.resolve(o, what="PodGroup")
    return PodGroupPolicy(
        kind=PolicyKind(kind),
        min_count=min_count,
        disruption_mode=DisruptionMode(mode),
        priority_class_name=class_name,
        priority=priority,
        preemption_policy=priorities.preemption_policy(o, pc),
        topology_keys=tuple(topology),
    )


def decode_pod_group(doc: Obj, meta: Meta, priorities: Priorities, source: Source) -> PodGroup:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec.check_keys(_POLICY_KEYS | {"workloadRef", "parentCompositePodGroupName"}, _UNMODELLED)
    ref = decode_workload_ref(spec)
    parent = check_name(spec, "parentCompositePodGroupName", "subdomain", req=False) or None
    return PodGroup(
        meta.namespace,
        meta.name,
        decode_policy(spec, priorities),
        workload_ref=ref,
        rendezvous_timeout_ms=meta.times.get(RENDEZVOUS_TIMEOUT),
        source=source,
        parent=parent,
    )


def decode_workload_ref(spec: Obj, *, req: bool = False) -> tuple[str, str] | None:
    """``spec.workloadRef`` (PodGroup: optional; CompositePodGroup: required)."""
    w = spec.obj("workloadRef", req=req)
    if w is None:
        return None
    w.check_keys({"workloadName", "templateName"})
    return (check_name(w, "workloadName", "subdomain"), check_name(w, "templateName", "label"))


def decode_pod_group_templates(spec: Obj, priorities: Priorities, key: str = "podGroupTemplates") -> tuple[PodGroupTemplate, ...]:
    """A list of PodGroupTemplates (at most 8, names unique in the list)."""
    n = spec.length(key)
    if n > MAX_TEMPLATES:
        raise spec.error(key, too_many(spec.fp(key), n, MAX_TEMPLATES))
    templates: list[PodGroupTemplate] = []
    for t in spec.objs(key):
        t.check_keys(_POLICY_KEYS | {"name"}, _UNMODELLED)
        name = check_name(t, "name", "label")
        if any(x.name == name for x in templates):
            raise t.error("name", duplicate(t.fp("name"), name))
        templates.append(PodGroupTemplate(name, decode_policy(t, priorities)))
    return tuple(templates)


def path_segment(o: Obj, key: str) -> str:
    value = o.str(key, req=True)
    for bad in ("/", "%"):
        if bad in value:
            raise o.error(key, invalid(o.fp(key), value, f"must not contain '{bad}'"))
    if value in (".", ".."):
        raise o.error(key, invalid(o.fp(key), value, f"may not be '{value}'"))
    return value


__all__ = ["decode_policy", "decode_pod_group", "decode_pod_group_templates", "decode_workload_ref", "path_segment"]
