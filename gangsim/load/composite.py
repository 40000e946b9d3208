"""CompositePodGroup (``scheduling.k8s.io/v1alpha3``, KEP-6012, SEMANTICS §9) and the Workload
that may hold ``compositePodGroupTemplates``, with upstream's validation:

- a Workload sets exactly one of ``podGroupTemplates`` and ``compositePodGroupTemplates``;
- template names are unique over the whole tree, a CompositePodGroupTemplate has at least one
  child, the tree is at most ``WorkloadMaxTemplateDepth`` (4) deep (a composite template may not
  sit at level 4), every template has the same priority (``ValidateWorkloadSpec`` in
  pkg/apis/scheduling/validation/validation.go);
- the runtime objects (PodGroups and CompositePodGroups naming a parent in
  ``parentCompositePodGroupName``) must form trees: the parent exists, no cycle, at most 4 levels.
  Upstream finds these at run time (``workloadForest.validateHierarchy`` in the scheduling queue)
  and leaves the hierarchy's pods unschedulable; a trace is complete up front, so gangsim refuses
  it at load time with upstream's diagnostics (test/integration/scheduler/podgroup
  ``TestHierarchyValidation``).
"""

from __future__ import annotations

from collections.abc import Iterable

from gangsim.api.objects import CompositePodGroup, CompositePodGroupTemplate, PodGroup, Source, Workload, object_ref
from gangsim.api.trace import Op, TraceEvent
from gangsim.errors import InputError, invalid, required
from gangsim.load.fields import Obj, Shown, check_name, duplicate, too_many
from gangsim.load.groups import MAX_TEMPLATES, decode_policy, decode_pod_group_templates, decode_workload_ref, path_segment
from gangsim.load.meta import Meta
from gangsim.load.priority import Priorities

MAX_TREE_DEPTH = 4  # schedulingv1alpha3.WorkloadMaxTreeDepth / scheduling.WorkloadMaxTemplateDepth
PARENT = "spec.parentCompositePodGroupName"
# validation.go, validateWorkloadTemplatesDepth / validateWorkloadPriority /
# validateCompositePodGroupTemplateHasAtLeastOneChild
MSG_TEMPLATE_DEPTH = "maximum template hierarchy depth is {}"
MSG_PRIORITIES = "all priority and priorityClassName values must be identical, detected multiple values"
MSG_NO_CHILD = "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"
# the scheduler's hierarchy diagnostics (TestHierarchyValidation's expected message parts)
MSG_NOT_FOUND = "{} not found in workload forest"
MSG_CYCLE = "cycle detected in hierarchy"
MSG_TREE_DEPTH = "hierarchy depth {} exceeds maximum allowed depth {}"
# ``disruptionMode`` and ``preemptionPolicy`` as on a PodGroup (newest upstream reads
# ``cpg.Spec.DisruptionMode`` in ``GenericPodGroup.HasDisruptionModeAll`` and
# ``cpg.Spec.PreemptionPolicy`` in ``GenericPodGroup.GetPreemptionPolicy``, kube-scheduler
# framework types.go)
_SPEC_KEYS = {"parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "priorityClassName", "priority", "schedulingConstraints", "disruptionMode", "preemptionPolicy"}


def decode_composite_pod_group(doc: Obj, meta: Meta, priorities: Priorities, source: Source) -> CompositePodGroup:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec.check_keys(_SPEC_KEYS)
    ref = decode_workload_ref(spec, req=True)  # +k8s:required
    parent = check_name(spec, "parentCompositePodGroupName", "subdomain", req=False) or None
    return CompositePodGroup(meta.namespace, meta.name, decode_policy(spec, priorities, count_key="minGroupCount"), parent, ref, source)


def decode_workload(doc: Obj, meta: Meta, priorities: Priorities, source: Source) -> Workload:
    """A Workload: ``podGroupTemplates`` or (v1alpha3) ``compositePodGroupTemplates``, exactly one."""
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec.check_keys({"controllerRef", "podGroupTemplates", "compositePodGroupTemplates"})
    controller = None
    c = spec.obj("controllerRef")
    if c is not None:
        c.check_keys({"apiGroup", "kind", "name"})
        group = check_name(c, "apiGroup", "subdomain", req=False)
        controller = (group, path_segment(c, "kind"), path_segment(c, "name"))
    n, nc = spec.length("podGroupTemplates"), spec.length("compositePodGroupTemplates")
    if n and nc:  # the WorkloadSpec union (+k8s:unionMember on both lists)
        chosen = Shown("{`podGroupTemplates`, `compositePodGroupTemplates`}")
        raise spec.error("compositePodGroupTemplates", invalid("spec", chosen, "exactly one of `podGroupTemplates`, `compositePodGroupTemplates` is required, but multiple fields are set"))
    if n == 0 and nc == 0:
        raise spec.error("podGroupTemplates", required(spec.fp("podGroupTemplates"), "must have at least one item"))
    if n:
        return Workload(meta.namespace, meta.name, decode_pod_group_templates(spec, priorities), controller, source)
    composites = _templates(spec, priorities)
    _check_tree(spec, composites)
    return Workload(meta.namespace, meta.name, (), controller, source, composite_templates=composites)


def _templates(o: Obj, priorities: Priorities) -> tuple[CompositePodGroupTemplate, ...]:
    key = "compositePodGroupTemplates"
    n = o.length(key)
    if n > MAX_TEMPLATES:
        raise o.error(key, too_many(o.fp(key), n, MAX_TEMPLATES))
    out: list[CompositePodGroupTemplate] = []
    for t in o.objs(key):
        t.check_keys({"name", "schedulingPolicy", "priorityClassName", "priority", "podGroupTemplates", "compositePodGroupTemplates", "schedulingConstraints"})
        name = check_name(t, "name", "label")
        if not t.length("podGroupTemplates") and not t.length(key):
            raise InputError(invalid(t.path, name, MSG_NO_CHILD), line=t.line)
        children = _templates(t, priorities) if t.length(key) else ()
        pgs = decode_pod_group_templates(t, priorities) if t.length("podGroupTemplates") else ()
        out.append(CompositePodGroupTemplate(name, decode_policy(t, priorities, count_key="minGroupCount"), pgs, children))
    return tuple(out)


def _check_tree(spec: Obj, composites: tuple[CompositePodGroupTemplate, ...]) -> None:
    """Names unique over the tree, depth, one priority (``ValidateWorkloadSpec``)."""
    names: set[str] = set()
    priorities: set[tuple[str, int | None]] = set()

    def walk(t: CompositePodGroupTemplate, path: str, depth: int, top: int) -> None:
        if depth == MAX_TREE_DEPTH:
            at = f"{spec.fp('compositePodGroupTemplates')}[{top}]"
            # upstream shows the top-level template's compositePodGroupTemplates (gangsim: their names)
            shown_value = Shown([c.name for c in composites[top].composite_templates])
            raise spec.error("compositePodGroupTemplates", invalid(at, shown_value, MSG_TEMPLATE_DEPTH.format(MAX_TREE_DEPTH)))
        for name, where in [(t.name, f"{path}.name")] + [(p.name, f"{path}.podGroupTemplates[{i}].name") for i, p in enumerate(t.pod_group_templates)]:
            if name in names:
                raise spec.error("compositePodGroupTemplates", duplicate(where, name))
            names.add(name)
        priorities.update((x.policy.priority_class_name, x.policy.priority) for x in (t, *t.pod_group_templates))
        for i, c in enumerate(t.composite_templates):
            walk(c, f"{path}.compositePodGroupTemplates[{i}]", depth + 1, top)

    for i, t in enumerate(composites):
        walk(t, f"{spec.fp('compositePodGroupTemplates')}[{i}]", 1, i)
    if len(priorities) > 1:
        raise spec.error("compositePodGroupTemplates", invalid("spec", None, MSG_PRIORITIES))


def check_hierarchies(events: Iterable[TraceEvent]) -> None:
    """Every PodGroup or CompositePodGroup the trace creates that names a parent: the parent is a
    CompositePodGroup of the trace (same namespace), the chain has no cycle and the tree is at
    most 4 levels deep. The first offender in event order is reported at its document."""
    composites: dict[str, CompositePodGroup] = {}
    groups: list[PodGroup | CompositePodGroup] = []
    for ev in events:
        if ev.op is Op.CREATE and isinstance(ev.obj, (PodGroup, CompositePodGroup)):
            groups.append(ev.obj)
            if isinstance(ev.obj, CompositePodGroup):
                composites.setdefault(ev.obj.key, ev.obj)
    for g in groups:
        seen = [g.key]
        node: PodGroup | CompositePodGroup = g
        while node.parent is not None:
            key = f"{node.namespace}/{node.parent}"
            parent = composites.get(key)
            if parent is None:
                _fail(node, invalid(PARENT, node.parent, MSG_NOT_FOUND.format(key)))
            if key in seen:
                _fail(g, invalid(PARENT, g.parent, MSG_CYCLE))
            seen.append(key)
            node = parent
        if len(seen) > MAX_TREE_DEPTH:
            _fail(g, invalid(PARENT, g.parent, MSG_TREE_DEPTH.format(len(seen), MAX_TREE_DEPTH)))


def _fail(obj: PodGroup | CompositePodGroup, error) -> None:  # type: ignore[no-untyped-def]
    kind = "CompositePodGroup" if isinstance(obj, CompositePodGroup) else "PodGroup"
    raise InputError(error, file=obj.source.file or None, line=obj.source.line, obj=object_ref(kind, obj.namespace, obj.name))


__all__ = ["MAX_TREE_DEPTH", "check_hierarchies", "decode_composite_pod_group", "decode_workload"]
